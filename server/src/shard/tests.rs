//! The core's rules, tick by tick, with no sockets and no sleeps.

use super::*;
use crate::resume::{AccountGate, Claimed};
use mino_protocol::entry::Entry;
use mino_protocol::held::{Held, Update};
use mino_protocol::server::{decode, ServerMsg};
use rand::SeedableRng;

/// The message a websocket frame of a tick carries.
fn msg(frame: &[u8]) -> ServerMsg<'_> {
    decode(ws_frame::payload(frame)).expect("a server message")
}

const T0: u64 = 1_700_000_000_000;

fn config(max: u32) -> Config {
    Config {
        max_players: max,
        shard_id: ShardId(7),
        busy_lateness: Some(Duration::from_millis(10)),
        ..Config::default()
    }
}

fn clustered(max: u32) -> Config {
    Config { redis: Some(crate::backplane::RedisTarget::Node("redis://127.0.0.1:1".into())), ..config(max) }
}

fn shard(config: &Config) -> Shard {
    Shard::new(config, StdRng::seed_from_u64(7), 0).expect("a shard")
}

/// A shard ticking on time from `start`, 20 Hz.
struct Ticker {
    start: Instant,
    n: u64,
}

impl Ticker {
    fn new() -> Ticker {
        Ticker { start: Instant::now(), n: 0 }
    }

    fn at(&mut self, skip: u64, lateness_ms: u64, redis_up: bool) -> TickAt {
        self.n += 1 + skip;
        TickAt {
            tick: Tick(self.n),
            lateness: Duration::from_millis(lateness_ms),
            now: self.start + Duration::from_millis(50 * self.n + lateness_ms),
            wall_ms: T0 + 50 * self.n,
            redis_up,
        }
    }

    fn tick(&mut self, s: &mut Shard) -> TickOutput {
        s.tick(self.at(0, 0, true))
    }
}

fn effects(s: &mut Shard) -> Vec<Effect> {
    s.effects().collect()
}

fn join(s: &mut Shard, name: &str) -> Admitted {
    s.join(name, None, T0, Capabilities::DELTAS, Carrier::Stream).expect("admitted")
}

/// What a socket holds after `out`'s frames of its view, applied to `held`:
/// each (shard, cell, tick) changed.
fn apply(held: &mut Held, s: &Shard, out: &TickOutput, link: LinkId) -> Vec<(u32, u32, u32)> {
    let Some(view) = out.frame.views.get(s.view_of(link)) else { return Vec::new() };
    let mut changed = Vec::new();
    for f in &view.frames {
        let ServerMsg::View(v) = msg(f) else { panic!("a view frame") };
        for u in held.apply(&v).expect("applies") {
            if let Update::Cell { shard, cell, tick } = u {
                changed.push((shard, cell, tick));
            }
        }
    }
    changed
}

/// A holder of a shard's frames.
fn holder(s: &Shard) -> Held {
    Held::new(s.world().motion().clone(), usize::MAX)
}

/// Every player a holder holds.
fn held_players(held: &Held) -> Vec<Entry> {
    let mut all: Vec<Entry> = held.cells().flat_map(|(_, c)| c.entries.iter().copied()).collect();
    all.sort_unstable_by_key(|e| e.id);
    all
}

fn position(s: &Shard, p: PlayerId) -> (f32, f32) {
    s.world().player(p).map(|p| s.world().position(p)).expect("present")
}

#[test]
fn join_welcomes_with_id_ticket_and_position() {
    let mut s = shard(&config(10));
    let a = join(&mut s, "Ada");
    let Ok(ServerMsg::Welcome(w)) = decode(&a.welcome) else { panic!("welcome") };
    assert_eq!((w.player_id(), w.shard_id(), w.tick_hz()), (a.player.0, 7, 20));
    assert_eq!((w.x(), w.y()), position(&s, a.player));
    assert_eq!(w.resume_ticket().map(|t| t.bytes().to_vec()), Some(a.ticket.as_bytes().to_vec()));
    assert!(!w.resumed());
}

#[test]
fn tick_frame_has_snapshot_presence_and_roster_once() {
    let mut s = shard(&config(10));
    let mut t = Ticker::new();
    let a = join(&mut s, "Ada");
    let out = t.tick(&mut s);
    assert_eq!(out.frame.views[s.view_of(a.link)].frames.len(), 1, "one view frame: the new player's cell");
    let f = out.frame;
    assert_eq!(f.tick, Tick(1));
    assert!(f.roster.is_some());
    assert_eq!(f.events.len(), 1, "one presence for the join");
    let ServerMsg::Presence(p) = msg(&f.events[0]) else { panic!("presence") };
    assert_eq!(p.joined().map(|j| j.get(0).id()), Some(a.player.0));
    let f = t.tick(&mut s).frame;
    assert!(f.roster.is_none() && f.events.is_empty());
}

#[test]
fn every_tick_moves_one_fixed_step_however_late_it_starts() {
    let mut s = shard(&config(10));
    let mut t = Ticker::new();
    let a = join(&mut s, "Ada");
    let (x0, y0) = position(&s, a.player);
    let (dx, dy) = if x0 < 500.0 { (1.0, 0.0) } else { (-1.0, 0.0) };
    s.input(a.player, Direction::new(dx, dy).expect("dir"), 0);
    for lateness in [0, 7, 49, 3] {
        let before = position(&s, a.player);
        s.tick(t.at(0, lateness, true));
        let after = position(&s, a.player);
        let step = (after.0 - before.0).abs();
        assert!((step - 120.0 / 20.0).abs() < 0.02, "one step of speed / tick rate: {step}");
        assert_eq!(after.1, y0);
    }
    let _ = x0;
}

#[test]
fn a_skipped_tick_is_skipped_not_replayed_and_tick_numbers_count_scheduled_ticks() {
    let mut s = shard(&config(10));
    let mut t = Ticker::new();
    let a = join(&mut s, "Ada");
    s.input(a.player, Direction::new(if position(&s, a.player).0 < 500.0 { 1.0 } else { -1.0 }, 0.0).expect("dir"), 0);
    t.tick(&mut s);
    let before = position(&s, a.player);
    // A 2 s stall: 39 scheduled ticks never ran.
    let out = s.tick(t.at(39, 0, true));
    assert_eq!((out.frame.tick, out.skipped), (Tick(41), 39));
    let ServerMsg::View(v) = msg(&out.frame.views[s.view_of(a.link)].frames[0]) else { panic!("a view frame") };
    assert_eq!(v.sections().next().map(|s| s.tick), Some(41), "the client sees the gap");
    let step = (position(&s, a.player).0 - before.0).abs();
    assert!((step - 6.0).abs() < 0.02, "one step, not forty: {step}");
}

#[test]
fn snapshot_carries_the_moved_position() {
    let mut s = shard(&config(10));
    let mut t = Ticker::new();
    let a = s
        .join("Ada", Some(claimed(PlayerId(42), Some((100.0, 100.0)))), T0, Capabilities::DELTAS, Carrier::Stream)
        .expect("resumed");
    s.input(a.player, Direction::new(1.0, 0.0).expect("dir"), 0);
    let out = t.tick(&mut s);
    let mut held = holder(&s);
    apply(&mut held, &s, &out, a.link);
    let players = held_players(&held);
    assert_eq!(players.iter().map(|e| e.id).collect::<Vec<_>>(), [a.player]);
    let (x, _) = players[0].position(s.world().bounds());
    assert!((x - 106.0).abs() < 0.05, "x = {x}");
}

#[test]
fn leave_stages_presence_left_and_join_then_leave_is_silent() {
    let mut s = shard(&config(10));
    let mut t = Ticker::new();
    let a = join(&mut s, "Ada");
    t.tick(&mut s);
    s.leave(a.player, a.link, T0);
    let f = t.tick(&mut s).frame;
    let ServerMsg::Presence(p) = msg(&f.events[0]) else { panic!("presence") };
    assert_eq!(p.left().map(|l| l.get(0)), Some(a.player.0));
    let b = join(&mut s, "Bob");
    s.leave(b.player, b.link, T0);
    assert!(t.tick(&mut s).frame.events.is_empty(), "join+leave in one tick emits nothing");
}

#[test]
fn cap_refuses_and_lateness_makes_busy() {
    let mut s = shard(&config(1));
    join(&mut s, "a");
    let busy = s.join("b", None, T0, Capabilities::DELTAS, Carrier::Stream).expect_err("full");
    assert_eq!(busy.refusal, Refusal::Full);
    assert!((2000..=3000).contains(&busy.retry_after_ms), "{busy:?}");
    let mut s = shard(&config(100));
    let mut t = Ticker::new();
    for _ in 0..crate::admission::WINDOW_TICKS {
        s.tick(t.at(0, 40, true));
    }
    assert_eq!(
        s.join("c", None, T0, Capabilities::DELTAS, Carrier::Stream).map(|a| a.player).map_err(|b| b.refusal),
        Err(Refusal::Overloaded)
    );
}

fn claimed(player: PlayerId, position: Option<(f32, f32)>) -> Claimed {
    Claimed {
        player,
        name: "Ada".into(),
        position,
        generation: 1,
        previous_owner: None,
        ticket: Ticket::issue(T0, &mut StdRng::seed_from_u64(1)),
        account: None,
        fresh: false,
    }
}

/// A clustered shard (7) with area of interest, ids from 1000, in a place
/// with shard 8.
fn clustered_aoi() -> Shard {
    let mut s = shard(&Config { redis: clustered(10).redis, ..aoi_config() });
    s.cluster_event(ClusterEvent::Ids { start: 1000, len: 10 });
    s.cluster_event(ClusterEvent::Live(vec![ShardId(7), ShardId(8)]));
    s
}

/// A player of another shard, standing (its position is not read).
fn theirs(id: u32) -> Entry {
    Entry { id: PlayerId(id), x: 100, y: 200, heading: 3, flags: 1 }
}

/// The full form item of `players`.
fn full_item(players: &[Entry]) -> Vec<u8> {
    let (mut body, mut full) = (Vec::new(), Vec::new());
    mino_protocol::delta::encode_full(players, &mut body);
    mino_protocol::view::write_item(&mut full, mino_protocol::view::ItemKind::Full, &body);
    full
}

/// A bundle's items: each (cell, players)'s full form.
fn full_cells(cells: &[(u32, &[Entry])]) -> Vec<u8> {
    let mut items = Vec::new();
    for &(cell, players) in cells {
        mino_protocol::view::write_bundle_cell(&mut items, 0, cell, &full_item(players), &[]);
    }
    items
}

/// Shard `shard`'s bundle of its region 1 at step `step`, stamped at
/// `server_time_ms`, of `items` ([`full_cells`]), as its subscriber hands
/// it on.
fn bundle_from(shard: u32, step: u64, server_time_ms: u64, items: &[u8]) -> ClusterEvent {
    let stamp = mino_protocol::view::FrameStamp { shard: ShardId(shard), tick: Tick(step), server_time_ms };
    let encoded = mino_protocol::view::encode_bundle(&stamp, step, 1, items);
    let Ok(ServerMsg::CellBundle(b)) = decode(&encoded) else { panic!("a bundle") };
    ClusterEvent::Bundle(Relayed { stamp, step, items: Bytes::copy_from_slice(b.items()), cells: b.into_cells() })
}

#[test]
fn relayed_frames_reach_sockets_unchanged_but_are_not_republished() {
    let mut s = shard(&clustered(10));
    let mut t = Ticker::new();
    assert_eq!(
        s.join("a", None, T0, Capabilities::DELTAS, Carrier::Stream).map(|_| ()).map_err(|b| b.refusal),
        Err(Refusal::Unavailable),
        "no ids yet"
    );
    s.cluster_event(ClusterEvent::Ids { start: 1000, len: 10 });
    let a = join(&mut s, "Ada");
    assert_eq!(a.player, PlayerId(1000));
    s.cluster_event(ClusterEvent::Live(vec![ShardId(7), ShardId(8)]));
    // A tick places Ada's view: the region it needs is heard from then on.
    t.tick(&mut s);
    effects(&mut s);
    // Shard 8's bundle of the whole world (one cell): one player's full form.
    let full = full_item(&[theirs(5000)]);
    let items = full_cells(&[(1, &[theirs(5000)])]);
    let bundle = |shard: u32, step: u64| bundle_from(shard, step, T0, &items);
    s.cluster_event(bundle(8, 3));
    s.cluster_event(bundle(9, 3));
    assert_eq!(effects(&mut s), [Effect::Dropped(DropKind::RelaySnapshot, 1)], "unknown shard dropped");
    // A cell first heard is sent at its next step (nobody here has its
    // earlier steps): whole, as published.
    t.tick(&mut s);
    effects(&mut s);
    s.cluster_event(bundle(8, 4));
    let chat = Bytes::from_static(b"chat from 8");
    s.cluster_event(ClusterEvent::Chat { bytes: chat.clone() });
    let out = t.tick(&mut s);
    let frames = &out.frame.views[s.view_of(a.link)].frames;
    assert_eq!(frames.len(), 1, "one view frame a tick");
    let ServerMsg::View(v) = msg(&frames[0]) else { panic!("a view frame") };
    let relayed: Vec<&[u8]> = v
        .sections()
        .filter(|s| s.shard == 8)
        .flat_map(|s| s.cells().flat_map(|c| c.items().map(|i| i.bytes).collect::<Vec<_>>()).collect::<Vec<_>>())
        .collect();
    assert_eq!(relayed, [&full[..]], "shard 8's item, as published");
    assert!(out.frame.events.iter().any(|e| ws_frame::payload(e) == &chat[..]), "relayed unchanged");
    assert!(out.publish_snapshot.is_some());
    let published: Vec<Effect> = effects(&mut s);
    assert!(
        !published.iter().any(|e| matches!(e, Effect::Publish(Outgoing::Chat(b)) if b == &chat)),
        "relayed frames are not published again"
    );
    assert_eq!(out.relay_lag_ms, [150], "stamped at T0, taken at the third tick (50 ms each)");
}

#[test]
fn roster_covers_players_of_other_shards() {
    let mut s = shard(&config(10));
    let mut t = Ticker::new();
    s.cluster_event(ClusterEvent::Live(vec![ShardId(8)]));
    s.cluster_event(ClusterEvent::Roster {
        shard: ShardId(8),
        epoch: 1,
        seq: 1,
        players: vec![(PlayerId(500), "Far".into())],
    });
    join(&mut s, "Ada");
    let f = t.tick(&mut s).frame;
    let ServerMsg::Roster(r) = msg(f.roster.as_ref().expect("roster")) else { panic!() };
    let mut names: Vec<_> =
        r.players().expect("players").iter().map(|p| (p.name().unwrap_or("").to_owned(), p.shard_id())).collect();
    names.sort();
    assert_eq!(names, [("Ada".to_owned(), Some(7)), ("Far".to_owned(), Some(8))], "each on its shard");
}

#[test]
fn roster_lists_a_player_that_moved_here_once_on_this_shard() {
    let mut s = shard(&config(10));
    let mut t = Ticker::new();
    s.cluster_event(ClusterEvent::Live(vec![ShardId(8)]));
    let ada = join(&mut s, "Ada");
    // Shard 8 still lists Ada (she resumed here; its "left" or death is not known yet).
    s.cluster_event(ClusterEvent::Roster {
        shard: ShardId(8),
        epoch: 1,
        seq: 1,
        players: vec![(ada.player, "Ada".into()), (PlayerId(500), "Far".into())],
    });
    let f = t.tick(&mut s).frame;
    let ServerMsg::Roster(r) = msg(f.roster.as_ref().expect("roster")) else { panic!() };
    let mut listed: Vec<_> = r.players().expect("players").iter().map(|p| (p.id(), p.shard_id())).collect();
    listed.sort();
    assert_eq!(listed, [(ada.player.0, Some(7)), (500, Some(8))]);
}

#[test]
fn chat_is_staged_in_order_with_sender_name() {
    let mut s = shard(&config(10));
    let mut t = Ticker::new();
    let a = join(&mut s, "Ada");
    t.tick(&mut s);
    s.chat(a.player, "one", T0);
    s.chat(a.player, "two", T0);
    s.chat(PlayerId(999), "ghost", T0);
    let texts: Vec<String> = t
        .tick(&mut s)
        .frame
        .events
        .iter()
        .filter_map(|b| match msg(b) {
            ServerMsg::Chat(c) => Some(format!("{}:{}", c.name().unwrap_or(""), c.text().unwrap_or(""))),
            _ => None,
        })
        .collect();
    assert_eq!(texts, ["Ada:one", "Ada:two"]);
    assert!(effects(&mut s).is_empty(), "standalone publishes nothing");
}

#[test]
fn resume_keeps_id_and_position_and_reservations_count_against_the_cap() {
    let mut s = shard(&config(2));
    let mut t = Ticker::new();
    let a = join(&mut s, "Ada");
    let at = position(&s, a.player);
    s.reserve().expect("room for one more");
    assert_eq!(
        s.join("Bob", None, T0, Capabilities::DELTAS, Carrier::Stream).map(|_| ()).map_err(|b| b.refusal),
        Err(Refusal::Full),
        "reserved"
    );
    t.tick(&mut s);
    s.leave(a.player, a.link, T0);
    let back = s
        .join("ignored", Some(claimed(a.player, Some(at))), T0, Capabilities::DELTAS, Carrier::Stream)
        .expect("resumed");
    assert_eq!(back.player, a.player);
    let Ok(ServerMsg::Welcome(w)) = decode(&back.welcome) else { panic!("welcome") };
    assert!(w.resumed());
    assert_eq!(w.name(), Some("Ada"), "a resumed session keeps its own name");
    assert_eq!((w.x(), w.y()), at);
    assert!(t.tick(&mut s).frame.events.is_empty(), "left and back within one tick: no presence");
}

#[test]
fn a_second_socket_takes_the_session_over_and_the_first_is_told_to_close() {
    let mut s = shard(&config(10));
    let a = join(&mut s, "Ada");
    let at = position(&s, a.player);
    s.reserve().expect("room");
    let again =
        s.join("Ada", Some(claimed(a.player, None)), T0, Capabilities::DELTAS, Carrier::Stream).expect("resumed");
    assert_ne!(again.link, a.link);
    assert_eq!(position(&s, a.player), at, "still here: the entity is kept");
    assert_eq!(effects(&mut s), [Effect::Tell { link: a.link, control: Control::Close(CloseReason::SessionReplaced) }]);
    s.leave(a.player, a.link, T0);
    assert_eq!(s.players(), 1, "the replaced socket's goodbye changes nothing");
    s.leave(a.player, again.link, T0);
    assert_eq!(s.players(), 0);
}

#[test]
fn a_session_taken_over_while_walking_starts_standing_still_with_no_input_applied() {
    let mut s = shard(&config(10));
    let mut t = Ticker::new();
    let a = join(&mut s, "Ada");
    s.input(a.player, Direction::new(1.0, 0.0).expect("dir"), 5);
    t.tick(&mut s);
    let own = |s: &Shard| s.world().player(a.player).map(|p| (p.entry().moving(), p.input_seq));
    assert_eq!(own(&s), Some((true, 5)));
    // A ticket's takeover, and an account's second sign-in, alike.
    s.reserve().expect("room");
    let again =
        s.join("Ada", Some(claimed(a.player, None)), T0, Capabilities::DELTAS, Carrier::Stream).expect("resumed");
    assert_eq!(own(&s), Some((false, 0)), "stopped, and the echo says no input of the new socket yet");
    let at = position(&s, a.player);
    t.tick(&mut s);
    assert_eq!(position(&s, a.player), at, "standing");
    s.reserve().expect("room");
    let first = s.login_local("acct-1", "Bo", T0).expect("signed in");
    let b = s.join("Bo", Some(first), T0, Capabilities::DELTAS, Carrier::Stream).expect("joined");
    s.input(b.player, Direction::new(0.0, 1.0).expect("dir"), 9);
    t.tick(&mut s);
    s.reserve().expect("room");
    let second = s.login_local("acct-1", "Bo", T0 + 5).expect("signed in again");
    s.join("Bo", Some(second), T0 + 5, Capabilities::DELTAS, Carrier::Stream).expect("joined again");
    assert_eq!(s.world().player(b.player).map(|p| (p.entry().moving(), p.input_seq)), Some((false, 0)));
    drop(again);
}

#[test]
fn standalone_tickets_resume_once() {
    let mut s = shard(&config(10));
    let a = join(&mut s, "Ada");
    s.leave(a.player, a.link, T0);
    let c = s.claim_local(a.ticket.as_bytes(), T0 + 10, AccountGate::default()).expect("claimed");
    assert_eq!((c.player, c.name.as_str()), (a.player, "Ada"));
    assert_eq!(s.claim_local(a.ticket.as_bytes(), T0 + 20, AccountGate::default()), Err(ResumeError::Used));
    assert_eq!(
        shard(&clustered(1)).claim_local(a.ticket.as_bytes(), T0, AccountGate::default()),
        Err(ResumeError::Unavailable)
    );
}

#[test]
fn a_stall_fences_holds_publishing_and_the_check_drops_the_lost_and_releases_the_rest() {
    let mut s = shard(&clustered(10));
    let mut t = Ticker::new();
    s.cluster_event(ClusterEvent::Ids { start: 1, len: 1000 });
    let a = join(&mut s, "Ada");
    let b = join(&mut s, "Bob");
    t.tick(&mut s);
    effects(&mut s);
    // 2 s without a tick: more than half the 3 s shard TTL.
    let out = s.tick(t.at(40, 0, true));
    assert!(out.publish_snapshot.is_none(), "a fenced shard publishes no snapshot");
    let fx = effects(&mut s);
    let Some(Effect::Fence { players }) = fx.first() else { panic!("fenced first: {fx:?}") };
    let mut players = players.clone();
    players.sort();
    assert_eq!(players, [(a.player, 0), (b.player, 0)]);
    s.chat(b.player, "held", T0);
    s.leave(b.player, b.link, T0);
    t.tick(&mut s);
    assert!(effects(&mut s).is_empty(), "chat, park and presence are held");
    s.cluster_event(ClusterEvent::Verified { lost: vec![a.player] });
    let fx = effects(&mut s);
    assert_eq!(fx[0], Effect::Tell { link: a.link, control: Control::Close(CloseReason::SessionReplaced) });
    assert_eq!(fx[1], Effect::Unfence);
    let kinds: Vec<&str> = fx[2..]
        .iter()
        .map(|e| match e {
            Effect::Publish(Outgoing::Chat(_)) => "chat",
            Effect::Publish(Outgoing::Park { .. }) => "park",
            Effect::Publish(Outgoing::Presence { .. }) => "presence",
            _ => "other",
        })
        .collect();
    assert_eq!(kinds, ["park", "chat", "presence"], "held frames go out in order");
    assert_eq!(s.players(), 0);
    assert!(t.tick(&mut s).publish_snapshot.is_some(), "publishing again");
}

#[test]
fn a_fenced_shard_drops_and_counts_what_overflows_the_held_queue() {
    let mut s = shard(&clustered(10));
    let mut t = Ticker::new();
    s.cluster_event(ClusterEvent::Ids { start: 1, len: 1000 });
    let a = join(&mut s, "Ada");
    t.tick(&mut s);
    s.tick(t.at(40, 0, true));
    effects(&mut s);
    for _ in 0..HELD_MAX + 5 {
        s.chat(a.player, "x", T0);
    }
    t.tick(&mut s);
    let dropped: u64 = effects(&mut s)
        .iter()
        .map(|e| match e {
            Effect::Dropped(DropKind::PublishEvent, n) => *n,
            _ => 0,
        })
        .sum();
    assert_eq!(dropped, 5);
}

#[test]
fn redis_out_of_reach_long_enough_fences_when_it_returns() {
    let mut s = shard(&clustered(10));
    let mut t = Ticker::new();
    t.tick(&mut s);
    for _ in 0..40 {
        s.tick(t.at(0, 0, false));
    }
    assert!(!effects(&mut s).iter().any(|e| matches!(e, Effect::Fence { .. })));
    s.tick(t.at(0, 0, true));
    assert!(effects(&mut s).iter().any(|e| matches!(e, Effect::Fence { .. })));
}

#[test]
fn drain_moves_a_ticks_share_each_once_with_fresh_tickets_then_reports_empty() {
    let mut cfg = clustered(100);
    cfg.drain_rate = 40; // two a tick at 20 Hz
    let mut s = shard(&cfg);
    s.cluster_event(ClusterEvent::Ids { start: 1, len: 100 });
    let mut t = Ticker::new();
    let players: Vec<Admitted> = (0..5).map(|i| join(&mut s, &format!("p{i}"))).collect();
    effects(&mut s);
    assert_eq!(s.start_drain(), 0, "clustered, nobody is told to close");
    assert_eq!(
        s.join("late", None, T0, Capabilities::DELTAS, Carrier::Stream).map(|_| ()).map_err(|b| b.refusal),
        Err(Refusal::Draining)
    );
    let mut told = Vec::new();
    for expected in [2, 2, 1, 0] {
        t.tick(&mut s);
        let moves: Vec<(LinkId, Ticket)> = effects(&mut s)
            .into_iter()
            .filter_map(|e| match e {
                Effect::Tell { link, control: Control::Move(ticket) } => Some((link, ticket)),
                Effect::Tell { control: Control::Close(reason), .. } => panic!("closed with {reason:?}"),
                _ => None,
            })
            .collect();
        assert_eq!(moves.len(), expected);
        told.extend(moves);
    }
    let mut links: Vec<LinkId> = told.iter().map(|(l, _)| *l).collect();
    links.sort();
    assert_eq!(links, players.iter().map(|a| a.link).collect::<Vec<_>>(), "each player told once");
    for (_, ticket) in &told {
        assert!(players.iter().all(|a| a.ticket != *ticket), "a fresh ticket");
    }
    for a in &players {
        s.leave(a.player, a.link, T0);
    }
    t.tick(&mut s);
    assert_eq!(effects(&mut s).iter().filter(|e| **e == Effect::Drained).count(), 1);
    t.tick(&mut s);
    assert!(!effects(&mut s).contains(&Effect::Drained), "reported once");
}

#[test]
fn standalone_drain_closes_every_socket_with_restart_at_once_and_moves_nobody() {
    let mut s = shard(&config(100));
    let mut t = Ticker::new();
    let players: Vec<Admitted> = (0..5).map(|i| join(&mut s, &format!("p{i}"))).collect();
    effects(&mut s);
    assert_eq!(s.start_drain(), 5);
    let mut closed: Vec<LinkId> = effects(&mut s)
        .into_iter()
        .map(|e| match e {
            Effect::Tell { link, control: Control::Close(CloseReason::Restart) } => link,
            other => panic!("unexpected {other:?}"),
        })
        .collect();
    closed.sort();
    assert_eq!(closed, players.iter().map(|a| a.link).collect::<Vec<_>>(), "every socket, at once");
    assert_eq!(s.start_drain(), 0, "told once");
    assert_eq!(
        s.join("late", None, T0, Capabilities::DELTAS, Carrier::Stream).map(|_| ()).map_err(|b| b.refusal),
        Err(Refusal::Draining)
    );
    t.tick(&mut s);
    assert!(effects(&mut s).is_empty(), "nobody is told to move: there is nowhere to go");
    for a in &players {
        s.leave(a.player, a.link, T0);
    }
    t.tick(&mut s);
    assert_eq!(effects(&mut s), [Effect::Drained]);
}

#[test]
fn takeover_by_a_newer_generation_drops_the_player_here() {
    let mut s = shard(&clustered(10));
    s.cluster_event(ClusterEvent::Ids { start: 1, len: 1000 });
    let a = join(&mut s, "Ada");
    s.cluster_event(ClusterEvent::Takeover { player: a.player, generation: 0 });
    assert!(effects(&mut s).is_empty(), "not newer than ours");
    s.cluster_event(ClusterEvent::Takeover { player: a.player, generation: 1 });
    assert_eq!(effects(&mut s), [Effect::Tell { link: a.link, control: Control::Close(CloseReason::SessionReplaced) }]);
    assert_eq!(s.players(), 0);
}

#[test]
fn a_player_dropped_for_a_newer_session_leaves_no_viewer_behind() {
    let mut s = shard(&Config { aoi: aoi_config().aoi, ..clustered(10) });
    s.cluster_event(ClusterEvent::Ids { start: 1, len: 1000 });
    let a = join(&mut s, "Ada");
    let viewers = |s: &Shard| Some(s.area.viewers_len());
    assert_eq!(viewers(&s), Some(1));
    s.cluster_event(ClusterEvent::Takeover { player: a.player, generation: 1 });
    assert_eq!(effects(&mut s), [Effect::Tell { link: a.link, control: Control::Close(CloseReason::SessionReplaced) }]);
    s.leave(a.player, a.link, T0);
    assert_eq!(viewers(&s), Some(0), "no view is worked out for a socket that is gone");
}

#[test]
fn ids_are_requested_when_low_at_most_once_a_second() {
    let mut s = shard(&clustered(10));
    let mut t = Ticker::new();
    let needs = |s: &mut Shard| effects(s).iter().filter(|e| **e == Effect::NeedIds).count();
    t.tick(&mut s);
    assert_eq!(needs(&mut s), 1);
    for _ in 0..19 {
        t.tick(&mut s);
    }
    assert_eq!(needs(&mut s), 0, "within the second");
    t.tick(&mut s);
    assert_eq!(needs(&mut s), 1);
    s.cluster_event(ClusterEvent::Ids { start: 1, len: ID_FETCH });
    t.tick(&mut s);
    assert_eq!(needs(&mut s), 0, "enough now");
}

fn aoi_config() -> Config {
    Config {
        world_size: 3200.0,
        aoi: Some(crate::config::AoiConfig {
            cell_size: 100.0,
            view_radius: 200.0,
            hysteresis_ticks: 10,
            budget_bytes: 64 * 1024,
        }),
        ..config(100)
    }
}

/// A player joined and moved to `(x, y)` (a resume into place).
fn place(s: &mut Shard, id: u32, x: f32, y: f32) -> Admitted {
    s.reserve().expect("room");
    let resume = Claimed { player: PlayerId(id), position: Some((x, y)), ..claimed(PlayerId(id), None) };
    s.join("p", Some(resume), T0, Capabilities::DELTAS, Carrier::Stream).expect("placed")
}

/// The players a socket holds after one tick's view frames (its first).
fn seen(s: &Shard, out: &TickOutput, link: LinkId) -> Vec<u32> {
    let mut held = holder(s);
    apply(&mut held, s, out, link);
    held_players(&held).iter().map(|e| e.id.0).collect()
}

#[test]
fn with_area_of_interest_a_socket_gets_only_the_cells_near_its_player() {
    let mut s = shard(&aoi_config());
    let mut t = Ticker::new();
    let a = place(&mut s, 1, 1000.0, 1000.0);
    place(&mut s, 2, 1120.0, 1000.0);
    let far = place(&mut s, 3, 3000.0, 3000.0);
    let Ok(ServerMsg::Welcome(w)) = decode(&a.welcome) else { panic!("welcome") };
    assert_eq!((w.cell_size(), w.grid_columns(), w.view_radius()), (100.0, 32, 200.0));
    assert_eq!(w.view_grace_ms(), 0, "cells are held until forgotten");
    assert_eq!(w.cell_expiry_ms(), 0, "a websocket's cells never expire: its forgets all arrive");
    let out = t.tick(&mut s);
    assert_eq!(seen(&s, &out, a.link), [1, 2], "itself and its neighbour");
    assert_eq!(seen(&s, &out, far.link), [3], "alone out there");
    assert!(out.frame.roster.is_none(), "no place-wide roster");
    assert!(out.frame.events.iter().all(|e| !matches!(msg(e), ServerMsg::Presence(_))), "no place-wide presence");
}

#[test]
fn with_area_of_interest_names_are_asked_for_and_the_place_is_counted_when_it_changes() {
    let mut s = shard(&aoi_config());
    let mut t = Ticker::new();
    let a = place(&mut s, 1, 1000.0, 1000.0);
    place(&mut s, 2, 1120.0, 1000.0);
    let names = s.names(&[2, 99]);
    let Ok(ServerMsg::Names(n)) = decode(&names) else { panic!("names") };
    let got: Vec<(u32, &str)> =
        n.players().expect("players").iter().map(|p| (p.id(), p.name().unwrap_or(""))).collect();
    assert_eq!(got, [(2, "Ada")], "unknown ids left out");
    let mut statuses = |s: &mut Shard, ticks: usize| -> Vec<(u32, u32)> {
        (0..ticks)
            .flat_map(|_| t.tick(s).frame.events)
            .filter_map(|e| match msg(&e) {
                ServerMsg::PlaceStatus(p) => Some((p.players(), p.shards())),
                _ => None,
            })
            .collect()
    };
    assert_eq!(statuses(&mut s, 20), [(2, 1)], "the place once, within a second of the joins");
    assert_eq!(statuses(&mut s, 60), [], "nothing while nothing changes: standing sockets are written nothing");
    s.leave(a.player, a.link, T0);
    place(&mut s, 3, 500.0, 500.0);
    assert_eq!(statuses(&mut s, 20), [(2, 1)], "same count, but the newcomer is told the place");
    s.leave(PlayerId(3), s.link_of(PlayerId(3)).expect("linked"), T0);
    assert_eq!(statuses(&mut s, 20), [(1, 1)], "a leave changes the count");
}

#[test]
fn the_own_entry_echoes_the_last_input_applied() {
    let mut s = shard(&config(10));
    let mut t = Ticker::new();
    let a = join(&mut s, "Ada");
    s.input(a.player, Direction::new(0.0, 1.0).expect("dir"), 130);
    let out = t.tick(&mut s);
    let mut held = holder(&s);
    apply(&mut held, &s, &out, a.link);
    assert_eq!(held_players(&held)[0].input_seq(), 130 & 0x7f);
}

#[test]
fn an_account_signs_in_once_and_a_second_sign_in_takes_its_session_over() {
    let mut s = shard(&config(10));
    s.reserve().expect("room");
    let first = s.login_local("acct-1", "Ada", T0).expect("signed in");
    assert!(first.fresh, "a new player for a new account");
    let a = s.join("Ada", Some(first), T0, Capabilities::DELTAS, Carrier::Stream).expect("joined");
    let Ok(ServerMsg::Welcome(w)) = decode(&a.welcome) else { panic!("welcome") };
    assert!(!w.resumed(), "a fresh account is welcomed as new");
    s.reserve().expect("room");
    let again = s.login_local("acct-1", "Ada2", T0 + 5).expect("signed in again");
    assert_eq!((again.player, again.fresh, again.generation), (a.player, false, 1));
    let b = s.join("Ada2", Some(again), T0 + 5, Capabilities::DELTAS, Carrier::Stream).expect("joined");
    assert_eq!(b.player, a.player, "one player for one account");
    assert_eq!(effects(&mut s), [Effect::Tell { link: a.link, control: Control::Close(CloseReason::SessionReplaced) }]);
    assert_eq!(s.players(), 1);
    // A ticket of this account's session cannot be claimed for another account.
    let other = AccountGate { account: Some("acct-2"), require: false };
    assert_eq!(s.claim_local(b.ticket.as_bytes(), T0 + 6, other), Err(ResumeError::OtherAccount));
    let same = AccountGate { account: Some("acct-1"), require: true };
    assert_eq!(s.claim_local(b.ticket.as_bytes(), T0 + 7, same).map(|c| c.player), Ok(a.player));
}

#[test]
fn with_guests_refused_a_guest_ticket_does_not_resume() {
    let mut s = shard(&config(10));
    let a = join(&mut s, "Guest");
    let gate = AccountGate { account: None, require: true };
    assert_eq!(s.claim_local(a.ticket.as_bytes(), T0 + 1, gate), Err(ResumeError::GuestSession));
    assert!(s.claim_local(a.ticket.as_bytes(), T0 + 2, AccountGate::default()).is_ok(), "nothing was spent");
}

#[test]
fn a_standing_crowds_tick_has_no_recipients_and_a_walkers_viewers_are_its_recipients() {
    let mut s = shard(&aoi_config());
    let mut t = Ticker::new();
    let far = place(&mut s, 1, 300.0, 300.0);
    let a = place(&mut s, 2, 1500.0, 1500.0);
    let b = place(&mut s, 3, 1520.0, 1500.0);
    // The joins' full forms go out over the ladder's slowest period.
    for _ in 0..2 * interest::SLOWEST_PERIOD {
        t.tick(&mut s);
    }
    let out = t.tick(&mut s);
    assert!(out.frame.recipients.is_empty() && out.frame.is_quiet(), "nobody moves: nothing for anyone");
    s.input(a.player, Direction::new(1.0, 0.0).expect("dir"), 1);
    let out = t.tick(&mut s);
    let got: Vec<LinkId> = out.frame.recipients.iter().map(|(link, _)| link).collect();
    assert_eq!(got, [a.link, b.link], "the walker and its neighbour, not the far player");
    assert!(!out.frame.view_frames(a.link).is_empty() && out.frame.view_frames(far.link).is_empty());
    assert_eq!(out.frame.recipients.view_of(b.link), Some(s.view_of(b.link)));
}

#[test]
fn a_standing_place_one_player_a_cell_assembles_no_view() {
    for config in [aoi_config(), Config { aoi: aoi_config().aoi, ..clustered(100) }] {
        standing_place_assembles_no_view(config);
    }
}

fn standing_place_assembles_no_view(config: Config) {
    let mut s = shard(&config);
    let mut t = Ticker::new();
    let mut id = 1;
    for row in 0..8 {
        for column in 0..8 {
            place(&mut s, id, 1000.0 + 100.0 * column as f32 + 50.0, 1000.0 + 100.0 * row as f32 + 50.0);
            id += 1;
        }
    }
    for _ in 0..4 * interest::SLOWEST_PERIOD {
        t.tick(&mut s);
    }
    for _ in 0..interest::SLOWEST_PERIOD {
        let out = t.tick(&mut s);
        assert_eq!(out.views_assembled, 0, "64 players standing one a cell: every view idle");
    }
}

#[test]
fn a_shard_taken_a_tick_late_counts_the_tick_in_its_relay_lag() {
    let mut s = clustered_aoi();
    let mut t = Ticker::new();
    place(&mut s, 1000, 150.0, 150.0);
    // Shard 8's bundle of its step `step` (stamped 50 ms a step): one
    // player in cell 1.
    let items = full_cells(&[(1, &[theirs(5000)])]);
    let bundle = |step: u64| bundle_from(8, step, T0 + 50 * step, &items);
    t.tick(&mut s);
    // Its steps run even with ours (its step 2 heard before our step 2):
    // from then on each of its bundles is taken a tick after it came, and
    // its relay lag counts that tick.
    let mut lags = Vec::new();
    for step in 2..=5 {
        s.cluster_event(bundle(step));
        let out = t.tick(&mut s);
        assert!(effects(&mut s).iter().all(|e| !matches!(e, Effect::Dropped(..))), "none dropped");
        lags.push(out.relay_lag_ms);
    }
    // Step 2 was taken as it came (nothing was known of shard 8 yet), step
    // 3 waited for the tick after the one it came before, and so on.
    assert_eq!(lags, [vec![0], vec![], vec![50], vec![50]]);
}

#[test]
fn a_socket_that_joins_beside_cells_the_other_shard_emptied_and_stopped_sending_shares_its_keys_view() {
    let mut s = clustered_aoi();
    let mut t = Ticker::new();
    let first = place(&mut s, 1000, 150.0, 150.0);
    // Shard 8 has a player in cell 1 (beside the sockets' cell 33) and one
    // in cell 36 (in its prefetch ring: due every 4th step), who leave at
    // step 5; its bundles say so until step 7, then stop (the cells
    // emptied: a shard stops sending such a cell after a while). The
    // streams stop at a step (7) past their rule's for the prefetch ring (4).
    let there = full_cells(&[(1, &[theirs(5000)]), (36, &[theirs(5001)])]);
    let gone = full_cells(&[(1, &[]), (36, &[])]);
    t.tick(&mut s);
    for step in 2..=7 {
        s.cluster_event(bundle_from(8, step, T0 + 50 * step, if step < 5 { &there } else { &gone }));
        t.tick(&mut s);
    }
    for _ in 0..40 {
        t.tick(&mut s);
    }
    // A second socket in the same cell: its view is owed the whole view,
    // shard 8's emptied cells too, whose streams never come due again.
    let second = place(&mut s, 1001, 160.0, 160.0);
    let mut held = holder(&s);
    for _ in 0..20 {
        let out = t.tick(&mut s);
        apply(&mut held, &s, &out, second.link);
    }
    let ids: Vec<PlayerId> = held_players(&held).iter().map(|e| e.id).collect();
    assert!(!ids.contains(&PlayerId(5000)) && !ids.contains(&PlayerId(5001)), "shard 8's players left: {ids:?}");
    assert_eq!(s.view_of(second.link), s.view_of(first.link), "the second socket rejoined its key's view");
}
