//! Section 10, the browser client: measured by its end-to-end tests and
//! `npm run figure`, not by the scale runner; their raw files are kept here.

use super::fmt::{count, pct, table};
use super::Report;

impl Report {
    pub(super) fn client_section(&self) -> Vec<String> {
        let mut out = vec!["## 10. Browser client".to_owned(), String::new()];
        let c = self.raw.client.clone().unwrap_or_default();
        let any_behind = !self.raw.behind_before.is_empty() || !self.raw.behind_after.is_empty();
        if self.raw.client.is_none() && !any_behind {
            out.extend(["Not measured in this run (see client-web/e2e/README.md).".to_owned(), String::new()]);
            return out;
        }
        out.extend([
            "Real Chromium (SwiftShader WebGPU) against the real server on loopback, measured by the client's \
             end-to-end tests with `MINO_CLIENT_FIGURES=benches/results/raw/client.json` (`cd client-web && npm run \
             e2e`). Keydown → own label moving: the time from a key's `keydown` event to the frame that moves the \
             own player's name label (a MutationObserver), 11 presses; before prediction it was 97 ms median on \
             loopback (issue 18), plus the round trip over a real network. The 100 ms round trip is a loopback proxy \
             holding every websocket message 50 ms ±10 % each way (`e2e/harness/delay-proxy.ts`). Prediction error: \
             how far each authoritative sample moved the predicted position while walking about for 12 s (world \
             units; one step is 6 at 120 units/s and 20 Hz)."
                .to_owned(),
            String::new(),
        ]);
        let mut rows = Vec::new();
        for (k, label) in [
            (&c.keydown_loopback, "keydown → own player moving, loopback"),
            (&c.keydown_rtt100, "keydown → own player moving, 100 ms RTT ±10 %"),
        ] {
            if let Some(v) = k {
                let each: Vec<String> = v.samples_ms.iter().map(|x| format!("{x:.0}")).collect();
                rows.push(vec![
                    label.to_owned(),
                    format!("{:.1} ms median", v.median_ms),
                    format!("{} presses: {} ms", v.samples_ms.len(), each.join(", ")),
                    "≤ 50 ms".into(),
                ]);
            }
        }
        if let Some(e) = &c.prediction_error_rtt100 {
            let spread = e.up_spread_ms.map_or(String::new(), |s| format!("; uplink delay spread {s:.1} ms"));
            rows.push(vec![
                "prediction error, 100 ms RTT ±10 %".into(),
                format!("p50 {:.3}, p95 {:.2}, max {:.2} world units", e.p50, e.p95, e.max),
                format!("{} samples, {} snaps{spread}", e.samples, e.snaps),
                match e.bound {
                    Some(b) => format!("p95 ≤ {b:.2}: a step plus the walk over the uplink's spread"),
                    None => format!("p95 ≤ one step ({})", e.step_units),
                },
            ]);
        }
        if let Some(ms) = c.restart_back_ms {
            rows.push(vec![
                "standalone restart (SIGTERM, 1012): live again after the server is back".into(),
                format!("{ms:.0} ms"),
                "as a new player, same name".into(),
                "≤ 3 s".into(),
            ]);
        }
        if let Some(sp) = &c.slow_page {
            rows.push(vec![
                format!("page too slow for its frames ({} ms of work a frame)", sp.burn_ms_per_frame),
                format!(
                    "{} snapshots skipped in 2 s; drawn {:.0} ms from the newest snapshot (negative: up to a tick past \
                     it), ping {:.0} ms",
                    sp.skipped, sp.render_lag_ms, sp.ping_ms
                ),
                format!("current again {:.0} ms after", sp.current_again_ms),
                "< 1 s".into(),
            ]);
        }
        out.extend(table(&["figure", "ours", "detail", "bound"], &rows));
        out.push(String::new());
        if any_behind {
            out.extend([
                "**Falling behind.** `npm run figure -- --bots N --seconds S --cpu-throttle T --json ...`: N walking \
                 bots (`mino-loadgen walk`) on one release shard, the page's main thread slowed T times by Chromium, \
                 sampled once a second; *before* is main's client (served with `MINO_E2E_DIST`), *after* this one. \
                 Ping is the page's own (its pongs wait behind every frame it handles); \"drawn behind\" is the \
                 newest snapshot's server time minus the time drawn. The machine was shared and saturated by other \
                 work (load average on 2 cores), so these are indicative; the slow-page row above is the controlled \
                 figure."
                    .to_owned(),
                String::new(),
            ]);
            let (b, a) = (&self.raw.behind_before, &self.raw.behind_after);
            let mut rows = Vec::new();
            for i in 0..b.len().max(a.len()) {
                for (when, runs) in [("before", b), ("after", a)] {
                    let Some(Some(r)) = runs.get(i) else { continue };
                    rows.push(vec![
                        format!("{when} (run {})", i + 1),
                        count(r.bots as f64),
                        format!("{}×", r.cpu_throttle),
                        format!("{:.0} / {:.0} ms", r.ping_ms_median, r.ping_ms_max),
                        format!("{:.0} / {:.0} ms", r.render_lag_ms_median, r.render_lag_ms_p95),
                        format!("{:.0} ms", r.interp_delay_ms_median),
                        format!("{:.1}", r.fps_median),
                        r.frames_skipped.map_or("–".into(), count),
                        r.hud_catching_up_share.map_or("–".into(), |s| pct(Some(s))),
                        r.load_average.map_or("–".into(), |l| format!("{l:.1}")),
                    ]);
                }
            }
            out.extend(table(
                &[
                    "client",
                    "bots",
                    "CPU throttle",
                    "ping median / max",
                    "drawn behind median / p95",
                    "HUD delay",
                    "fps",
                    "snapshots skipped",
                    "HUD said catching up",
                    "load average",
                ],
                &rows,
            ));
            out.push(String::new());
        }
        out
    }
}
