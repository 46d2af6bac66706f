//! Shared delta frames against the real binary: a socket taking deltas
//! holds, at every tick, exactly what a socket taking full forms standing
//! beside it holds, with walkers crossing cells on two shards (relayed); and
//! every break of its chain (it joined late, its view took cells in, the
//! budget moved its tiers, its frames were dropped, it resumed on another
//! shard, bundles were lost on the way, the other shard restarted) ends in a
//! resync, never in a wrong position. A standing crowd costs nothing, and a
//! crowd that walked in from everywhere shares one view a shard; a player
//! back where another shard's player stood before is not shown it there, nor
//! is one that left while Redis was down; a Hello
//! with capabilities the server does not know is answered with those it
//! grants.

use futures_util::StreamExt;
use mino_loadgen::profile::ProfileName;
use mino_loadgen::Target;
use mino_protocol::client::{self, Capabilities};
use mino_protocol::PlayerId;
use mino_testkit::{Bots, Frame, Player, Redis, Shard, Signal};
use std::collections::{BTreeMap, HashMap};
use std::time::{Duration, Instant};
use tokio_tungstenite::tungstenite::Message;

/// The server binary cargo built for these tests.
const SERVER: &str = env!("CARGO_BIN_EXE_mino-server");

/// One test at a time: each runs Redis, shards and bots on the two cores.
static ONE_AT_A_TIME: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// Walkers a shard gets; `MINO_EXACT_WALKERS` raises it (the figure run:
/// 500 a shard, `MINO_EXACT_SECS=60`).
fn walkers() -> usize {
    std::env::var("MINO_EXACT_WALKERS").ok().and_then(|v| v.parse().ok()).unwrap_or(60)
}

/// Seconds the main comparison runs; `MINO_EXACT_SECS` raises it.
fn seconds() -> u64 {
    std::env::var("MINO_EXACT_SECS").ok().and_then(|v| v.parse().ok()).unwrap_or(6)
}

/// A 2,000-unit world of 125-unit cells, a view radius of two cells,
/// walkers at 300 units/s (they cross a cell in under half a second), plus
/// `extra` flags.
async fn shard(redis: &Redis, id: u32, extra: &[&str]) -> Shard {
    shard_sized(redis, id, "2000", extra).await
}

/// [`shard`] in a world of `size` units a side.
async fn shard_sized(redis: &Redis, id: u32, size: &str, extra: &[&str]) -> Shard {
    let (id, url) = (format!("{id:x}"), redis.url());
    let mut args = vec![
        "--redis-url",
        &url,
        "--shard-id",
        &id,
        "--world-size",
        size,
        "--cell-size",
        "125",
        "--view-radius",
        "250",
        "--speed",
        "300",
        "--view-hysteresis-ticks",
        "2",
        "--busy-lateness-ms",
        "0",
    ];
    args.extend_from_slice(extra);
    let server = Shard::start(SERVER, &args);
    server.wait_ready().await;
    server
}

async fn bots(shard: &Shard, n: usize) -> Bots {
    let target = Target::resolve(&shard.ws_url()).await.expect("target");
    let bots = Bots::start(target, n, ProfileName::Walker).await;
    assert!(bots.wait_connected(Duration::from_secs(60)).await, "{} of {n} bots connected", bots.connected());
    bots
}
/// Every update a player got of each (shard, cell): tick -> its players
/// (id, x, y), sorted by id, or `None` from where it was forgotten (or its
/// shard reset) on: the player held nothing of it then.
type Book = HashMap<(u32, u32), BTreeMap<u32, Option<Vec<(u32, f32, f32)>>>>;

/// The newest tick a book has of any cell.
fn newest(book: &Book) -> u32 {
    book.values().filter_map(|cell| cell.keys().next_back().copied()).max().unwrap_or(0)
}

/// Records what `p` gets until `until`.
async fn record(p: &mut Player, book: &mut Book, until: Instant) {
    while let Some(left) = until.checked_duration_since(Instant::now()) {
        match p.next_within(left).await {
            Some(Frame::Cell(c)) => {
                let players = p.players_of(&c);
                book.entry((c.shard_id.0, c.cell)).or_default().insert(c.tick, Some(players));
            }
            // Not held from this tick on, until told again.
            Some(Frame::Forgot { shard, cell, tick }) => {
                book.entry((shard, cell)).or_default().insert(tick, None);
            }
            Some(Frame::Reset { shard, tick }) => {
                for (_, cell) in book.iter_mut().filter(|(k, _)| k.0 == shard) {
                    cell.insert(tick, None);
                }
            }
            Some(Frame::Closed(_)) | None => return,
            Some(_) => {}
        }
    }
}

/// Records two players side by side for `span`.
async fn record_both(d: &mut Player, f: &mut Player, span: Duration) -> (Book, Book) {
    let until = Instant::now() + span;
    let (mut db, mut fb) = (Book::new(), Book::new());
    tokio::join!(record(d, &mut db, until), record(f, &mut fb, until));
    (db, fb)
}

/// Compares the deltas' book against the full forms' truth: every update
/// both got at one tick must be equal. With `beside` (the two in one view,
/// on shard `beside`) also the deltas' state as of each tick the full forms
/// were sent one of that shard's cells on two ticks running: its steps come
/// one a tick, so both are sent the same steps (a relayed stream's newest
/// step may run ahead of the step its deltas are aligned on when bundles
/// arrive bunched, and full forms are of the newest). Only cells the full
/// socket is sent every tick are judged so: its view takes slower tiers'
/// cells at phases spread over their period, the deltas' view at one phase,
/// so a mid cell's full form may come between two of the deltas' due
/// steps; a cell due every tick is due every tick for both (the deltas'
/// view weighs its cells less against the same budget, so its periods are
/// never longer). Up to a tick before the newest both read: the last tick's
/// frames may have reached one reader and not yet the other when recording
/// stopped. Returns (same-tick, as-of) comparisons made.
fn compare(deltas: &Book, full: &Book, beside: Option<u32>) -> (usize, usize) {
    let (mut exact, mut as_of) = (0, 0);
    let horizon = newest(deltas).min(newest(full)).saturating_sub(1);
    for (key, truth) in full {
        let Some(held) = deltas.get(key) else { continue };
        for (tick, players) in truth.range(..=horizon) {
            let Some(players) = players else { continue };
            if let Some(got) = held.get(tick) {
                assert_eq!(
                    got.as_ref(),
                    Some(players),
                    "cell {key:?} at tick {tick}: the deltas' socket holds another state"
                );
                exact += 1;
            } else if beside == Some(key.0) && truth.contains_key(&tick.wrapping_sub(1)) {
                if let Some((at, Some(got))) = held.range(..*tick).next_back() {
                    let near: Vec<u32> = truth.range(at.saturating_sub(3)..=*tick).map(|(t, _)| *t).collect();
                    let mine: Vec<u32> = held.range(at.saturating_sub(3)..=*tick).map(|(t, _)| *t).collect();
                    assert_eq!(
                        got, players,
                        "cell {key:?} at tick {tick}: still as of tick {at}, but it changed (full forms at {near:?}, deltas at {mine:?})"
                    );
                    as_of += 1;
                }
            }
        }
    }
    (exact, as_of)
}

/// The middle of a cell near the world's middle: two players walked to
/// within 20 units of it stand in one cell, so their views are the same.
const MIDDLE: (f32, f32) = (1062.5, 1062.5);

/// The shards' cell size, world units.
const CELL: f32 = 125.0;

/// A player taking deltas and one taking full forms, both walked to `spot`
/// and standing there (their views settled: the same cells).
async fn pair_at(shard: &Shard, spot: (f32, f32)) -> (Player, Player) {
    let mut d = Player::join_deltas(shard, "deltas").await;
    let mut f = Player::join(shard, "full").await;
    tokio::join!(d.walk_to(spot, 20.0), f.walk_to(spot, 20.0));
    // The hysteresis (2 ticks) passes; read what came meanwhile.
    record_both(&mut d, &mut f, Duration::from_millis(300)).await;
    (d, f)
}

#[tokio::test]
async fn a_delta_socket_holds_exactly_what_a_full_socket_beside_it_holds() {
    let _one = ONE_AT_A_TIME.lock().await;
    let redis = Redis::start();
    let (a, b) = (shard(&redis, 1, &[]).await, shard(&redis, 2, &[]).await);
    let (_wa, _wb) = (bots(&a, walkers()).await, bots(&b, walkers()).await);
    let (mut d, mut f) = pair_at(&a, MIDDLE).await;
    // A visitor waits in the cell above theirs, then steps into their cell
    // and stands: their cell changes, then stands still while the full
    // socket is still sent it every tick, so the as-of comparison always
    // has ticks to judge (walkers passing through it are left to chance).
    let mut visitor = Player::join(&a, "visitor").await;
    visitor.walk_to((MIDDLE.0, MIDDLE.1 + CELL), 20.0).await;
    let skipped = a.metric("mino_ticks_skipped_total").await;
    let until = Instant::now() + Duration::from_secs(seconds());
    let ((db, fb), ()) = tokio::join!(record_both(&mut d, &mut f, Duration::from_secs(seconds())), async {
        visitor.walk_to((MIDDLE.0, MIDDLE.1 + CELL / 4.0), 20.0).await;
        record(&mut visitor, &mut Book::new(), until).await;
    });
    // The as-of comparison assumes a step a tick: a stall that skipped ticks
    // (a loaded machine) shifts the tiers' due ticks against the steps, and
    // only the same-tick comparisons are judged then.
    let stalled = a.metric("mino_ticks_skipped_total").await > skipped;
    let (exact, as_of) = compare(&db, &fb, (!stalled).then_some(1));
    assert!(exact > 100 && (as_of > 0 || stalled), "compared {exact} updates at one tick and {as_of} as of a tick");
    assert!(
        fb.keys().any(|k| k.0 == 2) && db.keys().any(|k| k.0 == 2),
        "the other shard's cells, relayed, compared too"
    );
    let deltas: usize = db.values().map(BTreeMap::len).sum();
    let fulls: usize = fb.values().map(BTreeMap::len).sum();
    assert!(deltas < fulls, "standing cells are not sent again: {deltas} updates against {fulls}");
}

#[tokio::test]
async fn a_late_joiner_and_a_view_that_takes_cells_in_hold_exactly_what_they_are_told() {
    let _one = ONE_AT_A_TIME.lock().await;
    let redis = Redis::start();
    let (a, b) = (shard(&redis, 1, &[]).await, shard(&redis, 2, &[]).await);
    let (_wa, _wb) = (bots(&a, walkers()).await, bots(&b, walkers()).await);
    let mut f = Player::join(&a, "full").await;
    f.walk_to((700.0, 700.0), 20.0).await;
    // Joined while everyone walks: its first frames are full forms.
    let mut d = Player::join_deltas(&a, "late").await;
    d.walk_to((1500.0, 1500.0), 20.0).await;
    // It walks over to the full one: cells come into its view on the way;
    // both record until 3 s after it arrived (however long a loaded machine
    // makes the walk).
    let (mut db, mut fb) = (Book::new(), Book::new());
    let (arrived, mut end) = tokio::sync::watch::channel(None::<Instant>);
    tokio::join!(
        async {
            d.walk_to((700.0, 700.0), 20.0).await;
            let until = Instant::now() + Duration::from_secs(3);
            let _ = arrived.send(Some(until));
            record(&mut d, &mut db, until).await;
        },
        async {
            loop {
                record(&mut f, &mut fb, Instant::now() + Duration::from_millis(200)).await;
                if end.borrow_and_update().is_some_and(|u| Instant::now() >= u) {
                    break;
                }
            }
        }
    );
    let (exact, _) = compare(&db, &fb, None);
    let sizes = |b: &Book| (b.len(), b.values().map(BTreeMap::len).sum::<usize>(), newest(b));
    assert!(exact > 50, "compared {exact} updates at one tick; deltas' book {:?}, full {:?}", sizes(&db), sizes(&fb));
}

#[tokio::test]
async fn a_budget_that_moves_the_tiers_never_leaves_a_wrong_position() {
    let _one = ONE_AT_A_TIME.lock().await;
    let redis = Redis::start();
    // A budget so small that the walkers around make every view slow its
    // outer tiers, and let them speed up again as the walkers pass.
    let a = shard(&redis, 1, &["--view-budget-bytes", "512"]).await;
    let _w = bots(&a, 2 * walkers()).await;
    let (mut d, mut f) = pair_at(&a, MIDDLE).await;
    let (db, fb) = record_both(&mut d, &mut f, Duration::from_secs(seconds())).await;
    // Same-tick comparisons only: full forms weigh more than deltas, so the
    // two views may stand on different rungs of the ladder.
    let (exact, as_of) = compare(&db, &fb, None);
    assert!(exact > 50, "compared {exact} updates at one tick, {as_of} as of one");
}

#[tokio::test]
async fn a_socket_whose_frames_were_dropped_is_resynced_exactly() {
    let _one = ONE_AT_A_TIME.lock().await;
    let redis = Redis::start();
    // A small world crowded with walkers (every cell in view, many crossings
    // a tick) fills the stalled socket's buffers in a few seconds; the write
    // timeout and the tick limit are long enough that it is resynced, not
    // closed.
    let flags = ["--send-buffer-bytes", "4096", "--write-timeout-ms", "30000", "--outbound-ticks", "1000"];
    let a = shard_sized(&redis, 1, "750", &flags).await;
    let _w = bots(&a, 3 * walkers()).await;
    let spot = (437.5, 437.5);
    let mut d = Player::join_small(&a, "stalls", Capabilities::DELTAS, 4096).await;
    let mut f = Player::join(&a, "full").await;
    tokio::join!(d.walk_to(spot, 20.0), f.walk_to(spot, 20.0));
    // The deltas' socket stops reading until more than 64 frames wait for
    // it: they are dropped and the socket resynced.
    let mut fb = Book::new();
    let deadline = Instant::now() + Duration::from_secs(30);
    while a.metric("mino_view_resyncs_total").await < 1.0 {
        assert!(Instant::now() < deadline, "the stalled socket was never resynced");
        record(&mut f, &mut fb, Instant::now() + Duration::from_millis(200)).await;
    }
    let mut db = Book::new();
    let until = Instant::now() + Duration::from_secs(4);
    tokio::join!(record(&mut d, &mut db, until), record(&mut f, &mut fb, until));
    let (exact, _) = compare(&db, &fb, None);
    let sizes = |b: &Book| (b.len(), b.values().map(BTreeMap::len).sum::<usize>(), newest(b));
    assert!(exact > 50, "compared {exact} updates at one tick; deltas' book {:?}, full {:?}", sizes(&db), sizes(&fb));
}

#[tokio::test]
async fn a_player_resumed_on_another_shard_holds_exactly_what_it_is_told() {
    let _one = ONE_AT_A_TIME.lock().await;
    let redis = Redis::start();
    let mut a = shard(&redis, 1, &[]).await;
    let b = shard(&redis, 2, &[]).await;
    let _wb = bots(&b, walkers()).await;
    let d = Player::join_deltas(&a, "mover").await;
    let ticket = d.ticket();
    let mut f = Player::join(&b, "full").await;
    a.signal(Signal::SIGKILL);
    a.wait_exit(Duration::from_secs(5)).expect("killed");
    drop(d);
    let version = mino_protocol::PROTOCOL_VERSION;
    let mut d =
        Player::hello_with(&b, "ignored", Some(&ticket), Capabilities::DELTAS).await.expect("resumed on the other");
    assert!(d.welcome.as_ref().is_some_and(|w| w.resumed && w.shard_id == 2), "resumed: {version}");
    // Both walk to one cell, so that they see the same cells.
    tokio::join!(d.walk_to(MIDDLE, 20.0), f.walk_to(MIDDLE, 20.0));
    let (db, fb) = record_both(&mut d, &mut f, Duration::from_secs(4)).await;
    let (exact, _) = compare(&db, &fb, None);
    assert!(exact > 20, "compared {exact} updates at one tick");
}

#[tokio::test]
async fn lost_bundles_and_a_restarted_shard_resync_exactly() {
    let _one = ONE_AT_A_TIME.lock().await;
    let redis = Redis::start();
    let a = shard(&redis, 1, &[]).await;
    let mut b = shard(&redis, 2, &[]).await;
    let wb = bots(&b, walkers()).await;
    let (mut d, mut f) = pair_at(&a, MIDDLE).await;
    let (mut db, mut fb) = record_both(&mut d, &mut f, Duration::from_secs(2)).await;
    // Shard 1's subscription is cut: bundles are lost until it resubscribes.
    redis.cli(&["CLIENT", "KILL", "TYPE", "pubsub"]);
    let until = Instant::now() + Duration::from_secs(3);
    tokio::join!(record(&mut d, &mut db, until), record(&mut f, &mut fb, until));
    // Shard 2 restarts with its id: its steps count from 1 again.
    drop(wb);
    b.signal(Signal::SIGKILL);
    b.wait_exit(Duration::from_secs(5)).expect("killed");
    let b = shard(&redis, 2, &[]).await;
    let _wb = bots(&b, walkers()).await;
    let until = Instant::now() + Duration::from_secs(5);
    tokio::join!(record(&mut d, &mut db, until), record(&mut f, &mut fb, until));
    let (exact, as_of) = compare(&db, &fb, Some(1));
    assert!(exact > 100, "compared {exact} updates at one tick, {as_of} as of one");
    assert!(fb.keys().any(|k| k.0 == 2), "the restarted shard's cells were seen");
}

#[tokio::test]
async fn a_standing_crowd_costs_nothing_and_unknown_capabilities_are_not_granted() {
    let _one = ONE_AT_A_TIME.lock().await;
    let redis = Redis::start();
    let a = shard(&redis, 1, &[]).await;
    let mut d = Player::join_deltas(&a, "still").await;
    let _others = [Player::join_deltas(&a, "s1").await, Player::join_deltas(&a, "s2").await];
    // Everyone stands: after the joins' frames, nothing is new.
    let mut book = Book::new();
    record(&mut d, &mut book, Instant::now() + Duration::from_millis(500)).await;
    // A view is looked at until the slowest tier has passed since its
    // cells last changed (64 ticks after the joins); then not at all.
    a.wait_ticks(64).await;
    let mut quiet = Book::new();
    let (assembled, ticks) = (a.metric("mino_views_assembled_total").await, a.metric("mino_ticks_total").await);
    record(&mut d, &mut quiet, Instant::now() + Duration::from_secs(2)).await;
    assert!(quiet.is_empty(), "no frame while nobody moves: {quiet:?}");
    assert!(a.metric("mino_ticks_total").await >= ticks + 10.0, "the shard ticked meanwhile");
    assert_eq!(a.metric("mino_views_assembled_total").await, assembled, "no view assembled while nobody moves");
    // A Hello asking for bits this server does not know gets a Welcome
    // granting only those it does, and on a websocket not DatagramDeltas
    // (its frames are not lost).
    let mut p = Player::connect(&a).await;
    p.send(client::encode_hello_with(mino_protocol::PROTOCOL_VERSION, "curious", None, None, Capabilities(u32::MAX)))
        .await;
    let Some(Ok(Message::Binary(b))) = p.ws.next().await else { panic!("an answer") };
    let Ok(mino_protocol::server::ServerMsg::Welcome(w)) = mino_protocol::server::decode(&b) else {
        panic!("a welcome")
    };
    assert_eq!(w.capabilities(), Capabilities::DELTAS.0, "only the known ones a websocket takes granted");
    p.ws.close(None).await.ok();
}

/// True when `p` holds player `id` in any cell.
fn holds(p: &Player, id: u32) -> bool {
    p.held().is_some_and(|h| h.cells_holding(PlayerId(id)).next().is_some())
}

/// Reads `watcher`'s frames until it holds every player of `ids`.
///
/// Panics: not within 3 s.
async fn until_held(watcher: &mut Player, ids: &[u32]) {
    let deadline = Instant::now() + Duration::from_secs(3);
    while !ids.iter().all(|&id| holds(watcher, id)) {
        assert!(Instant::now() < deadline, "the watcher was never sent the players {ids:?} beside it");
        watcher.next().await;
    }
}

#[tokio::test]
async fn a_player_back_where_another_shards_player_stood_is_not_shown_it_there() {
    let _one = ONE_AT_A_TIME.lock().await;
    let redis = Redis::start();
    let one = shard(&redis, 1, &[]).await;
    let two = shard(&redis, 2, &[]).await;
    // Shard two's player stands at a spot in region 1 (the world's first
    // 8 x 8 cells); shard one's watcher beside it is sent it.
    let mut stander = Player::join(&two, "StandsOnTwo").await;
    stander.walk_to((562.0, 562.0), 20.0).await;
    let mut watcher = Player::join_deltas(&one, "WatchesOnOne").await;
    watcher.walk_to((687.0, 562.0), 20.0).await;
    let id = stander.id();
    until_held(&mut watcher, &[id]).await;
    // The watcher goes to the far corner: shard one stops hearing region 1
    // (40 ticks after its last view left it). Then the stander leaves the
    // spot for another region, and shard two drops the emptied cell (64
    // still ticks after), so shard one hears nothing of it any more.
    watcher.walk_to((1812.0, 1812.0), 20.0).await;
    one.wait_ticks(60).await;
    stander.walk_to((562.0, 1812.0), 20.0).await;
    two.wait_ticks(100).await;
    // Back at the spot, the watcher is not shown the stander where it stood
    // (its view's cells hold nobody there now; the stander is out of view).
    watcher.walk_to((687.0, 562.0), 20.0).await;
    one.wait_ticks(20).await;
    let deadline = Instant::now() + Duration::from_secs(1);
    while Instant::now() < deadline {
        assert!(!holds(&watcher, id), "the watcher is shown the other shard's player where it stood before");
        watcher.next_within(Duration::from_millis(100)).await;
    }
}

#[tokio::test]
async fn a_player_that_left_while_redis_was_down_is_not_shown_where_it_stood() {
    let _one = ONE_AT_A_TIME.lock().await;
    let mut redis = Redis::start();
    let one = shard(&redis, 1, &[]).await;
    let two = shard(&redis, 2, &[]).await;
    // Two of shard two's players stand beside shard one's watcher.
    let mut goes = Player::join(&two, "GoesAway").await;
    goes.walk_to((562.0, 562.0), 20.0).await;
    let mut stays = Player::join(&two, "StaysThere").await;
    stays.walk_to((687.0, 687.0), 20.0).await;
    let mut watcher = Player::join_deltas(&one, "WatchesOnOne").await;
    watcher.walk_to((625.0, 500.0), 20.0).await;
    let (gone, there) = (goes.id(), stays.id());
    until_held(&mut watcher, &[gone, there]).await;
    // Redis goes down; one player leaves meanwhile. Shard two publishes its
    // emptied cell for 64 ticks, all lost, then no more.
    // (The player there reads nothing: it speaks now and then, or it would
    // be dropped as silent at the peer timeout.)
    stays.input(0.0, 0.0).await;
    redis.kill();
    goes.ws.close(None).await.ok();
    two.wait_ticks(100).await;
    redis.restart();
    stays.input(0.0, 0.0).await;
    // The watcher is not shown the player gone where it stood, and is shown
    // the one still there once shard two is heard again.
    let deadline = Instant::now() + Duration::from_secs(10);
    while holds(&watcher, gone) || !holds(&watcher, there) {
        assert!(
            Instant::now() < deadline,
            "the watcher holds the player gone: {}, the player there: {}; it holds {:?}",
            holds(&watcher, gone),
            holds(&watcher, there),
            watcher.held().map(|h| h.cells().map(|(k, c)| (*k, c.tick, c.entries.len())).collect::<Vec<_>>())
        );
        watcher.next_within(Duration::from_millis(200)).await;
    }
    // Counted as repaired: the player gone's cell (and the one still there
    // while unheard).
    assert!(one.metric("mino_anti_entropy_repairs_total{kind=\"relayed_cell\"}").await >= 1.0);
    let until = one.metric("mino_ticks_total").await + 40.0;
    while one.metric("mino_ticks_total").await < until {
        assert!(!holds(&watcher, gone), "the watcher is shown the player gone again");
        assert!(holds(&watcher, there), "the watcher lost the player there");
        watcher.next_within(Duration::from_millis(200)).await;
    }
}

#[tokio::test]
async fn a_crowd_that_walked_in_from_everywhere_shares_one_view_a_shard() {
    let _one = ONE_AT_A_TIME.lock().await;
    let redis = Redis::start();
    let shards = [shard(&redis, 1, &[]).await, shard(&redis, 2, &[]).await];
    // Twelve players a shard walk from where they spawned to one spot, past
    // cells of the other shard's players on the way.
    let mut crowd = Vec::new();
    for i in 0..24 {
        crowd.push(Player::join_deltas(&shards[i % 2], &format!("crowd{i}")).await);
    }
    let stood = futures_util::future::join_all(crowd.iter_mut().map(|p| p.walk_to((562.0, 562.0), 30.0))).await;
    // The cells they stand in, a shard (the keys of their views): one, or
    // a few when a stop landed past a border.
    let cells = |i: usize| {
        let mut c: Vec<(i32, i32)> =
            stood.iter().skip(i).step_by(2).map(|p| ((p.0 / 125.0) as i32, (p.1 / 125.0) as i32)).collect();
        c.sort_unstable();
        c.dedup();
        c.len() as f64
    };
    // Past the slowest tier every view holds its cells as its key's does.
    shards[0].wait_ticks(80).await;
    // One of them steps to and fro, so the crowd's cell changes: each view
    // that sees it is assembled at every change.
    let before: Vec<(f64, f64)> = futures_util::future::join_all(
        shards
            .iter()
            .map(|s| async { (s.metric("mino_views_assembled_total").await, s.metric("mino_ticks_total").await) }),
    )
    .await;
    for k in 0..10 {
        crowd[0].input(if k % 2 == 0 { 1.0 } else { -1.0 }, 0.0).await;
        shards[0].wait_ticks(2).await;
    }
    crowd[0].input(0.0, 0.0).await;
    for (i, (s, (views, ticks))) in shards.iter().zip(before).enumerate() {
        let views = s.metric("mino_views_assembled_total").await - views;
        let ticks = s.metric("mino_ticks_total").await - ticks;
        assert!(ticks >= 20.0, "the shard ticked meanwhile");
        // A view a cell the crowd stands in, and the stepping player's own
        // when it steps past a border.
        let most = (cells(i) + 1.0) * ticks;
        assert!(
            views <= most,
            "{views} views assembled in {ticks} ticks (at most {most}): the crowd's sockets did not share a view"
        );
    }
}
