use super::*;
use mino_protocol::entry::PlayerEntry;

const ME: PlayerId = PlayerId(1);
const P: PlayerId = PlayerId(2);
const GRACE: Duration = Duration::from_millis(900);

/// A walking speed, world units a tick, at which anyone may be anywhere at
/// the next check: every bot is read at every check (these tests move P
/// by hundreds of units between checks).
const TELEPORT: f32 = 10_000.0;

fn grid() -> Grid {
    Grid { min_x: 0.0, min_y: 0.0, cell_size: 100.0, columns: 10, rows: 10, view_radius: 200.0, view_grace: GRACE }
}

fn bounds() -> Bounds {
    Bounds::new(0.0, 0.0, 1000.0, 1000.0)
}

/// An observer (bot 0, at (500, 500)) that is past its warm-up at `now`, and
/// the board it reads (bot 1 is P).
fn setup(now: Instant) -> (Observer, Arc<Positions>, Stats) {
    let board = Arc::new(Positions::new(2));
    let welcomed = now - GRACE - WARM_UP;
    let o = Observer::new(board.clone(), 0, ME, &grid(), bounds(), ms(50), TELEPORT, welcomed);
    (o, board, Stats::new())
}

fn put(board: &Positions, x: f32, time_ms: u32, at: Instant) {
    board.publish(1, &Report { player: P, x, y: 500.0, time_ms, at });
}

/// A cell at `time_ms` showing P at (x, 500).
fn show(o: &mut Observer, stats: &Stats, x: f32, time_ms: u32, at: Instant) {
    let p = PlayerEntry { id: P, x, y: 500.0, heading: 0, moving: true, input_seq: 0 };
    let held = [p.quantized(&bounds())];
    let c = CellFrame::held(1, 1, 1, u64::from(time_ms), &held);
    o.on_cell(&c, 50, 8, at, stats, 0);
}

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

#[test]
fn an_entry_is_timed_to_the_first_frame_showing_it() {
    let t0 = Instant::now();
    let (mut o, board, stats) = setup(t0);
    put(&board, 800.0, 1000, t0);
    o.check((500.0, 500.0), t0, &stats, 0);
    show(&mut o, &stats, 790.0, 1000, t0); // in the prefetch ring: fine
    put(&board, 650.0, 2000, t0 + ms(500));
    o.check((500.0, 500.0), t0 + ms(500), &stats, 0);
    show(&mut o, &stats, 650.0, 1950, t0 + ms(510)); // an older frame does not count
    show(&mut o, &stats, 650.0, 2100, t0 + ms(530));
    let w = stats.take_window();
    let (enter, ticks) = (w.latencies.summary(Metric::ViewEnter), w.latencies.summary(Metric::ViewEnterTicks));
    assert_eq!((enter.count, ticks.count), (1, 1));
    assert!((enter.max - 30.0).abs() < 0.1, "{enter:?}");
    assert!((ticks.max - 2.0).abs() < 0.01, "two ticks after the entry's frame: {ticks:?}");
    let c = &w.counters;
    assert_eq!((c.tally(Tally::ViewEnters), c.tally(Tally::ViewEntersUnseen), c.tally(Tally::PopIns)), (1, 0, 0));
}

#[test]
fn an_entry_already_shown_counts_as_zero() {
    let t0 = Instant::now();
    let (mut o, board, stats) = setup(t0);
    put(&board, 800.0, 1000, t0);
    o.check((500.0, 500.0), t0, &stats, 0);
    show(&mut o, &stats, 790.0, 1000, t0 + ms(10));
    show(&mut o, &stats, 690.0, 2000, t0 + ms(500));
    put(&board, 690.0, 2000, t0 + ms(505));
    o.check((500.0, 500.0), t0 + ms(510), &stats, 0);
    let w = stats.take_window();
    let s = w.latencies.summary(Metric::ViewEnter);
    assert_eq!(s.count, 1);
    assert!(s.max < 0.01, "{s:?}");
    assert_eq!(w.counters.tally(Tally::PopIns), 0, "first shown in the ring");
}

#[test]
fn a_player_first_shown_inside_pops_in() {
    let t0 = Instant::now();
    let (mut o, board, stats) = setup(t0);
    put(&board, 800.0, 1000, t0);
    o.check((500.0, 500.0), t0, &stats, 0);
    show(&mut o, &stats, 650.0, 1100, t0 + ms(100)); // never shown in the ring
    assert_eq!(stats.take_window().counters.tally(Tally::PopIns), 0, "counted at the next check's flush");
    o.check((500.0, 500.0), t0 + ms(150), &stats, 0);
    assert_eq!(stats.take_window().counters.tally(Tally::PopIns), 1);
}

#[test]
fn a_player_that_joins_inside_is_neither_an_entry_nor_a_pop_in() {
    let t0 = Instant::now();
    let (mut o, board, stats) = setup(t0);
    o.check((500.0, 500.0), t0, &stats, 0);
    put(&board, 600.0, 1000, t0 + ms(50));
    o.check((500.0, 500.0), t0 + ms(50), &stats, 0);
    show(&mut o, &stats, 600.0, 1000, t0 + ms(60));
    o.check((500.0, 500.0), t0 + ms(100), &stats, 0);
    let c = stats.take_window().counters;
    assert_eq!((c.tally(Tally::ViewEnters), c.tally(Tally::PopIns)), (0, 0));
}

#[test]
fn nothing_counts_during_the_warm_up() {
    let t0 = Instant::now();
    let board = Arc::new(Positions::new(2));
    let stats = Stats::new();
    let mut o = Observer::new(board.clone(), 0, ME, &grid(), bounds(), ms(50), TELEPORT, t0);
    put(&board, 800.0, 1000, t0);
    o.check((500.0, 500.0), t0, &stats, 0);
    put(&board, 650.0, 1100, t0 + ms(100));
    o.check((500.0, 500.0), t0 + ms(100), &stats, 0);
    show(&mut o, &stats, 650.0, 1100, t0 + ms(110));
    o.check((500.0, 500.0), t0 + ms(150), &stats, 0);
    let c = stats.take_window().counters;
    assert_eq!((c.tally(Tally::ViewEnters), c.tally(Tally::PopIns)), (0, 0));
}

#[test]
fn a_player_inside_and_unshown_for_the_grace_blinks_once() {
    let t0 = Instant::now();
    let (mut o, board, stats) = setup(t0);
    put(&board, 600.0, 1000, t0);
    o.check((500.0, 500.0), t0, &stats, 0);
    show(&mut o, &stats, 600.0, 1000, t0 + ms(10));
    for n in 1..=30 {
        let at = t0 + ms(50 * n);
        put(&board, 600.0, 1000 + 50 * n as u32, at);
        o.check((500.0, 500.0), at, &stats, 0);
    }
    assert_eq!(stats.take_window().counters.tally(Tally::Blinks), 1, "once an episode");
    show(&mut o, &stats, 600.0, 2600, t0 + ms(1510));
    for n in 31..=60 {
        let at = t0 + ms(50 * n);
        put(&board, 600.0, 1000 + 50 * n as u32, at);
        o.check((500.0, 500.0), at, &stats, 0);
    }
    assert_eq!(stats.take_window().counters.tally(Tally::Blinks), 1, "a second episode");
}

#[test]
fn a_player_shown_often_enough_never_blinks_and_one_that_left_neither() {
    let t0 = Instant::now();
    let (mut o, board, stats) = setup(t0);
    for n in 0..40u32 {
        let at = t0 + ms(50 * u64::from(n));
        let x = if n < 20 { 600.0 } else { 900.0 };
        put(&board, x, 1000 + 50 * n, at);
        o.check((500.0, 500.0), at, &stats, 0);
        if n % 2 == 0 && n < 20 {
            show(&mut o, &stats, x, 1000 + 50 * n, at + ms(1));
        }
    }
    let c = stats.take_window().counters;
    assert_eq!(c.tally(Tally::Blinks), 0);
    assert_eq!(c.tally(Tally::ObservedTicks), 40);
}

#[test]
fn an_entry_never_shown_is_unseen() {
    let t0 = Instant::now();
    let (mut o, board, stats) = setup(t0);
    put(&board, 800.0, 1000, t0);
    o.check((500.0, 500.0), t0, &stats, 0);
    put(&board, 650.0, 1050, t0 + ms(50));
    o.check((500.0, 500.0), t0 + ms(50), &stats, 0);
    put(&board, 800.0, 1100, t0 + ms(100));
    o.check((500.0, 500.0), t0 + ms(100), &stats, 0);
    put(&board, 650.0, 1150, t0 + ms(150));
    o.check((500.0, 500.0), t0 + ms(150), &stats, 0);
    let later = t0 + ms(150) + PENDING_LIMIT;
    put(&board, 650.0, 9000, later);
    o.check((500.0, 500.0), later, &stats, 0);
    let c = stats.take_window().counters;
    assert_eq!((c.tally(Tally::ViewEnters), c.tally(Tally::ViewEntersUnseen)), (2, 2), "left, then timed out");
}

#[test]
fn an_entry_held_where_it_was_reported_was_shown_already() {
    // A walker shown (at 1000) in a cell the observer sees every other
    // tick, stopping just inside the radius: its own frame (at 1050) is
    // later than the observer's last frame of its cell, which then never
    // changes and is never sent again. Held at the reported position, it is
    // shown: latency 0, not unseen 5 s on.
    let t0 = Instant::now();
    let (mut o, board, stats) = setup(t0);
    put(&board, 800.0, 900, t0);
    o.check((500.0, 500.0), t0, &stats, 0);
    show(&mut o, &stats, 650.0, 1000, t0 + ms(40));
    put(&board, 650.0, 1050, t0 + ms(50));
    o.check((500.0, 500.0), t0 + ms(50), &stats, 0);
    let elsewhere = PlayerEntry { id: P, x: 640.0, y: 500.0, heading: 0, moving: false, input_seq: 0 };
    o.still_held([elsewhere.quantized(&bounds())].iter(), t0 + ms(100), &stats, 0);
    assert_eq!(stats.take_window().latencies.summary(Metric::ViewEnter).count, 0, "held elsewhere: not shown");
    let there = PlayerEntry { x: 650.0, ..elsewhere };
    o.still_held([there.quantized(&bounds())].iter(), t0 + ms(150), &stats, 0);
    let later = t0 + ms(150) + PENDING_LIMIT;
    o.check((500.0, 500.0), later, &stats, 0);
    let w = stats.take_window();
    assert_eq!(w.latencies.summary(Metric::ViewEnter).count, 1, "shown, at 0");
    assert_eq!(w.latencies.summary(Metric::ViewEnter).max, 0.0);
    assert_eq!(w.counters.tally(Tally::ViewEntersUnseen), 0, "not unseen");
}

#[test]
fn the_ideal_counts_ten_bytes_a_player_inside_and_the_frames_are_split() {
    let t0 = Instant::now();
    let (mut o, board, stats) = setup(t0);
    put(&board, 650.0, 1000, t0);
    o.on_message(100);
    show(&mut o, &stats, 650.0, 1000, t0);
    o.check((500.0, 500.0), t0, &stats, 0);
    put(&board, 750.0, 1050, t0 + ms(50));
    o.check((500.0, 500.0), t0 + ms(50), &stats, 0);
    let c = stats.take_window().counters;
    assert_eq!(c.tally(Tally::IdealBytes), 10 + 10 + 10, "both ticks itself, the first P too");
    assert_eq!(c.tally(Tally::ObservedEntryBytes), 8, "the cell's item body");
    assert_eq!(c.tally(Tally::ObservedHeaderBytes), 50 - 8, "the rest of its share of the frame");
    assert_eq!((c.tally(Tally::ObservedBytes), c.tally(Tally::ObservedTicks)), (100, 2));
}

#[test]
fn observers_are_a_share_of_the_bots_spread_evenly() {
    let picked = |o: Observers| (0..o.bots + 5).filter(|i| o.includes(*i)).collect::<Vec<_>>();
    let d = Observers::of(ObserverShare::Default, 1000);
    assert_eq!(d.count, 50, "5 %");
    assert_eq!(picked(d).len(), 50);
    assert_eq!(picked(d)[..3], [0, 20, 40]);
    assert_eq!(Observers::of(ObserverShare::Default, 100).count, 20, "at least 20");
    assert_eq!(Observers::of(ObserverShare::Default, 7).count, 7, "never more than the bots");
    assert_eq!(picked(Observers::of(ObserverShare::Count(3), 10)), [0, 3, 6]);
    assert_eq!(picked(Observers::of(ObserverShare::Count(0), 10)), Vec::<usize>::new());
    assert_eq!(picked(Observers::of(ObserverShare::Percent(100.0), 4)), [0, 1, 2, 3]);
    assert_eq!(Observers::of(ObserverShare::Percent(2.5), 1000).count, 25);
}

#[test]
fn observer_shares_parse_as_counts_or_percentages() {
    assert_eq!("50".parse(), Ok(ObserverShare::Count(50)));
    assert_eq!(" 5% ".parse(), Ok(ObserverShare::Percent(5.0)));
    assert_eq!("0".parse(), Ok(ObserverShare::Count(0)));
    for bad in ["", "-1", "101%", "x%", "5 bots"] {
        assert!(bad.parse::<ObserverShare>().is_err(), "{bad}");
    }
}

#[test]
fn far_bots_are_read_seldom_and_an_approaching_one_is_still_caught_entering() {
    let t0 = Instant::now();
    let n = 1001;
    let board = Arc::new(Positions::new(n));
    let stats = Stats::new();
    let welcomed = t0 - GRACE - WARM_UP;
    let mut o = Observer::new(board.clone(), 0, ME, &grid(), bounds(), ms(50), 6.0, welcomed);
    // 999 bots standing 450 to 940 units away, and P (bot 1) walking in at 6 units a tick.
    let far = |i: usize| 950.0 + (i % 50) as f32 * 10.0;
    for i in 2..n {
        board.publish(i, &Report { player: PlayerId(i as u32 + 10), x: far(i), y: 500.0, time_ms: 0, at: t0 });
    }
    let mut entered_at = None;
    for tick in 0..60u32 {
        let at = t0 + ms(50 * u64::from(tick));
        let x = 800.0 - 6.0 * tick as f32;
        put(&board, x, 1000 + 50 * tick, at);
        for i in 2..n {
            board.publish(i, &Report { player: PlayerId(i as u32 + 10), x: far(i), y: 500.0, time_ms: tick, at });
        }
        o.check((500.0, 500.0), at, &stats, 0);
        if entered_at.is_none() && stats.take_window().counters.tally(Tally::ViewEnters) == 1 {
            entered_at = Some(x);
        }
        if tick >= 2 {
            let due = o.wheel[o.cursor].len();
            assert!(due < 200, "tick {tick}: {due} bots due at the next check");
        }
    }
    let x = entered_at.expect("the entry was seen");
    assert!(x <= 700.0 && x > 694.0, "caught at the first check inside the radius, at x = {x}");
}
