//! The shared fixture of the movement rule: for a few worlds, speeds and tick
//! rates, every heading's step and some walks, as `mino_protocol::motion`
//! computes them, in `schema/fixtures/motion.json`. The browser client's
//! unit tests (client-web/src/net/motion.test.ts) compute the same with its
//! own `net/motion.ts` and must agree bit for bit: the delta frames predict
//! walkers with this rule on both sides.
//!
//! `MINO_UPDATE_FIXTURES=1 cargo test -p mino-protocol --test motion`
//! rewrites the file; otherwise the test fails unless it matches.

mod fixture_file;

use mino_protocol::motion::Motion;
use mino_protocol::wire::Bounds;
use std::fmt::Write as _;

const FIXTURE: &str = "fixtures/motion.json";

/// The worlds: bounds, speed (world units/s), tick rate (Hz). Floats are
/// f32 as the Welcome carries them, written exactly (as f64).
const WORLDS: [([f32; 4], f32, u16); 6] = [
    ([0.0, 0.0, 1000.0, 1000.0], 120.0, 20),
    ([0.0, 0.0, 1600.0, 1600.0], 120.0, 20),
    ([0.0, 0.0, 4000.0, 4000.0], 120.0, 20),
    ([-50.0, 10.0, 1234.5, 777.25], 333.3, 30),
    ([0.0, 0.0, 100.0, 50.0], 10.0, 10),
    ([0.0, 0.0, 1_000_000.0, 1_000_000.0], 10_000.0, 1),
];

fn num(v: f32) -> String {
    format!("{}", f64::from(v))
}

fn fixture() -> String {
    let mut out = String::from("{\n  \"about\": \"schema/tests/motion.rs: mino_protocol::motion, every heading's step and some walks\",\n  \"worlds\": [\n");
    for (i, (b, speed, hz)) in WORLDS.iter().enumerate() {
        let bounds = Bounds::new(b[0], b[1], b[2], b[3]);
        let m = Motion::new(&bounds, *speed, *hz);
        let steps: Vec<String> = (0..=255u8).map(|h| format!("[{}, {}]", m.step(h).0, m.step(h).1)).collect();
        let mut walks = Vec::new();
        for (k, (h, moving, ticks)) in
            [(0u8, true, 1u32), (37, true, 7), (100, true, 1000), (200, false, 5), (255, true, 64)]
                .into_iter()
                .enumerate()
        {
            let from = ((k as u32 * 12_345 % 65_535) as u16, (k as u32 * 54_321 % 65_535) as u16);
            let to = m.advance(from, h, moving, ticks);
            walks.push(format!(
                "{{\"from\": [{}, {}], \"heading\": {h}, \"moving\": {moving}, \"ticks\": {ticks}, \"to\": [{}, {}]}}",
                from.0, from.1, to.0, to.1
            ));
        }
        let _ = write!(
            out,
            "    {{\"bounds\": {{\"min_x\": {}, \"min_y\": {}, \"max_x\": {}, \"max_y\": {}}}, \"speed\": {}, \"tick_hz\": {hz},\n      \"steps\": [{}],\n      \"walks\": [{}]}}{}\n",
            num(b[0]),
            num(b[1]),
            num(b[2]),
            num(b[3]),
            num(*speed),
            steps.join(", "),
            walks.join(", "),
            if i + 1 < WORLDS.len() { "," } else { "" }
        );
    }
    out.push_str("  ]\n}\n");
    out
}

#[test]
fn the_motion_fixture_matches_the_rule() {
    fixture_file::matches_or_update(FIXTURE, &fixture());
}
