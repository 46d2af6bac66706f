//! WebTransport beside the websocket (`--webtransport-listen`), against the
//! real binary on a loopback UDP port: a session joins through the same
//! admission as a websocket, gets its Welcome on its stream, walks with
//! Inputs on it, and sees itself and a websocket player walk in view frames
//! sent as datagrams (each applied alone); the websocket player sees it
//! too. A malformed message closes the session with the websocket's close
//! code; a view frame over the datagram limit is cut, and a cell too big
//! for one goes on the stream, counted.

use mino_protocol::server::{self, ServerMsg};
use mino_protocol::view::ItemKind;
use mino_protocol::wire::CloseCode;
use mino_protocol::PlayerId;
use mino_testkit::{Frame, Player, Shard, TransportPlayer};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The server binary cargo built for these tests.
const SERVER: &str = env!("CARGO_BIN_EXE_mino-server");

/// Bound on the waits of these tests.
const WAIT: Duration = Duration::from_secs(10);

/// The series of `mino_sockets_closed_total` of `transport` and `reason`.
fn closed_series(transport: &str, reason: &str) -> String {
    format!("mino_sockets_closed_total{{transport=\"{transport}\",reason=\"{reason}\"}}")
}

/// A shard with WebTransport on a loopback UDP port, in a world of
/// `world` units, and `extra` flags.
fn shard_of(world: &str, extra: &[&str]) -> Shard {
    let mut args = vec!["--webtransport-listen", "127.0.0.1:0", "--speed", "100", "--world-size", world];
    args.extend_from_slice(extra);
    Shard::start(SERVER, &args)
}

fn shard(extra: &[&str]) -> Shard {
    shard_of("2000", extra)
}

/// Where `id` is in a whole-shard snapshot frame, if listed.
fn position(frame: &Frame, id: u32) -> Option<(f32, f32)> {
    match frame {
        Frame::Snapshot { players, .. } => players.iter().find(|p| p.0 == id).map(|p| (p.1, p.2)),
        _ => None,
    }
}

/// Reads datagrams until `id` has moved over 20 units from where the
/// first datagram listing it put it.
async fn sees_walk(wt: &mut TransportPlayer, id: u32) -> (f32, f32) {
    let deadline = Instant::now() + WAIT;
    let mut first = None;
    loop {
        assert!(Instant::now() < deadline, "player {id} not seen walking in datagrams");
        for frame in wt.datagram().await {
            let Some((x, y)) = position(&frame, id) else { continue };
            let (x0, y0) = *first.get_or_insert((x, y));
            if (x - x0).hypot(y - y0) > 20.0 {
                return (x, y);
            }
        }
    }
}

#[tokio::test]
async fn a_session_joins_walks_and_sees_itself_and_a_websocket_player_in_datagrams() {
    let server = shard(&[]);
    let mut wt = TransportPlayer::join(&server, "Quic").await;
    let welcome = wt.welcome.clone().expect("welcomed on the stream");
    assert!(welcome.player_id > 0);
    assert_eq!(welcome.cell_size, 0.0, "the whole shard is one cell");
    let mut ws = Player::join(&server, "Sock").await;
    server.wait_metric("mino_players", 2.0).await;
    assert_eq!(server.metric("mino_webtransport_sessions").await, 1.0);

    // The session walks with Inputs on its stream, and sees itself walk.
    let dir = if welcome.x < 1000.0 { 1.0 } else { -1.0 };
    wt.input(dir, 0.0).await;
    let me = wt.id();
    let (x, _) = sees_walk(&mut wt, me).await;
    assert!((x - welcome.x) * dir > 20.0, "walked along x: from {} to {x}", welcome.x);

    // The websocket player walks too: the session sees it in its datagrams.
    let (_, _, wx, _) = ws.own_position().await;
    ws.input(if wx < 1000.0 { 1.0 } else { -1.0 }, 0.0).await;
    sees_walk(&mut wt, ws.id()).await;

    // And the websocket player sees the session's player.
    ws.until(|f| position(f, me)).await;
    assert!(server.metric("mino_webtransport_datagrams_total").await > 0.0);
    assert_eq!(server.metric("mino_webtransport_unsent_total{reason=\"too_big\"}").await, 0.0);
}

#[tokio::test]
async fn a_sessions_bytes_are_counted_by_path_and_not_as_a_websockets() {
    let server = shard(&[]);
    let mut wt = TransportPlayer::join(&server, "Count").await;
    wt.send(&mino_protocol::client::encode_chat("counted")).await;
    while !matches!(wt.message().await, Frame::Chat { .. }) {}
    wt.input(1000.0, 0.0).await;
    let id = wt.id();
    sees_walk(&mut wt, id).await;
    let got = wt.received;
    assert!(got.datagrams > 0 && got.stream_messages >= 2, "{got:?}");
    // The shard counts what it handed QUIC, before the client reads it:
    // at least what the client received, path by path.
    let at_least = |series, n: u64| server.wait_metric_at_least(series, n as f64);
    at_least("mino_webtransport_sent_bytes_total{path=\"datagram\"}", got.datagram_bytes).await;
    at_least("mino_webtransport_datagrams_total", got.datagrams).await;
    at_least("mino_webtransport_sent_bytes_total{path=\"stream\"}", got.stream_bytes).await;
    at_least("mino_webtransport_stream_messages_total", got.stream_messages).await;
    // A stream's bytes are its messages and their length prefixes, no
    // more: its chat line came back last (the walk's frames are datagrams),
    // so the client has read every byte the shard wrote.
    let stream = server.metric("mino_webtransport_sent_bytes_total{path=\"stream\"}").await;
    assert_eq!(stream, got.stream_bytes as f64, "{got:?}");
    // The websocket's metrics count no session's bytes or frames.
    let m = server.metrics().await;
    for series in ["mino_sent_bytes_total", "mino_frames_sent_total", "mino_writes_total"] {
        assert_eq!(m.value_or_zero(series), 0.0, "{series}: no websocket here");
    }
}

#[tokio::test]
async fn a_session_is_served_full_forms_that_stand_alone() {
    // A Hello that asks for deltas but not for datagram deltas (a client
    // that does not check a delta's base) is not granted deltas: every
    // datagram carries full forms only, so each applies on its own.
    let server = shard(&[]);
    let mut wt = TransportPlayer::join(&server, "Alone").await;
    let mut ws = Player::join(&server, "Walker").await;
    ws.input(1.0, 1.0).await;
    wt.input(-1.0, 1.0).await;
    for _ in 0..20 {
        wt.datagram().await;
        let Ok(ServerMsg::View(frame)) = server::decode(&wt.last_datagram) else { panic!("a view frame") };
        let items = frame
            .sections()
            .flat_map(|s| s.cells().flat_map(|c| c.items().map(|i| i.kind).collect::<Vec<_>>()).collect::<Vec<_>>());
        for kind in items {
            assert!(matches!(kind, ItemKind::Full | ItemKind::Forget), "a {kind:?} item in a datagram");
        }
    }
    let held = wt.held().expect("held");
    assert!(held.cells().count() >= 1);
}

#[tokio::test]
async fn a_standing_place_sends_a_session_nothing_but_its_refresh() {
    // A session is sent full forms of what changed (repeated a few due
    // steps) and its view whole once every 64 ticks: a standing place costs
    // it about one datagram a refresh, not one a tick.
    let server = shard(&["--tick-hz", "60"]);
    let mut wt = TransportPlayer::join(&server, "Still").await;
    let _ws = Player::join(&server, "Other").await;
    server.wait_metric("mino_players", 2.0).await;
    let deadline = Instant::now() + WAIT;
    loop {
        assert!(Instant::now() < deadline, "the session never held both players");
        wt.datagram().await;
        if wt.held().is_some_and(|h| h.cells().map(|(_, c)| c.entries.len()).sum::<usize>() == 2) {
            break;
        }
    }
    // Ticks and datagrams read from one scrape each time: a slow scrape
    // adds ticks, and their refreshes, to both.
    let read = |m: mino_testkit::Metrics| {
        let v = |s: &str| m.value(s).unwrap_or_else(|| panic!("{s} exported"));
        (v("mino_ticks_total"), v("mino_webtransport_datagrams_total"))
    };
    let (ticks, sent) = read(server.metrics().await);
    server.wait_metric_at_least("mino_ticks_total", ticks + 200.0).await;
    let (now, sent_now) = read(server.metrics().await);
    let (passed, more) = (now - ticks, sent_now - sent);
    // At most the repeats left of the joins (3), and a refresh every 64
    // ticks (the one shard-wide view's turn), each one datagram.
    let most = 3.0 + (passed / 64.0).ceil() + 1.0;
    assert!(more <= most, "{more} datagrams in {passed} ticks of a standing place (at most {most})");
    assert!(more >= 2.0, "{more} datagrams in {passed} ticks: no refresh");
}

#[tokio::test]
async fn a_malformed_message_on_the_stream_closes_with_the_websockets_code() {
    let server = shard(&[]);
    let garbage = vec![0xffu8; 12];

    let mut ws = Player::join(&server, "Sock").await;
    ws.send(garbage.clone()).await;
    let (ws_close, ws_error) = ws.closed().await;

    let mut wt = TransportPlayer::join(&server, "Quic").await;
    wt.send(&garbage).await;
    let (wt_close, wt_error) = wt.closed().await;

    let malformed = Some(CloseCode::MalformedMessage.0);
    assert_eq!(ws_close, malformed, "the websocket's close code");
    assert_eq!(wt_error, ws_error, "the same Error message before the close");
    assert_eq!(wt_close, malformed, "the session's close code is the websocket's");
    // Each counted once, under its own transport.
    server.wait_metric(&closed_series("websocket", "malformed"), 1.0).await;
    server.wait_metric(&closed_series("webtransport", "malformed"), 1.0).await;
    server.wait_metric("mino_players", 0.0).await;
}

#[tokio::test]
async fn a_first_message_that_is_not_a_hello_is_refused_as_on_the_websocket() {
    let server = shard(&[]);
    let mut wt = TransportPlayer::connect(&server).await;
    wt.send(&mino_protocol::client::encode_input(1, 1.0, 0.0)).await;
    let (close, error) = wt.closed().await;
    assert_eq!(close, Some(CloseCode::HelloExpected.0));
    assert_eq!(error, Some(CloseCode::HelloExpected.0));
    // Refused before its admission, by its own task: a session's close.
    server.wait_metric(&closed_series("webtransport", "hello_expected"), 1.0).await;
    assert_eq!(server.metric(&closed_series("websocket", "hello_expected")).await, 0.0);
}

#[tokio::test]
async fn a_length_over_the_message_limit_closes_as_too_big() {
    let server = shard(&[]);
    let mut wt = TransportPlayer::join(&server, "Big").await;
    wt.send_raw(&(1u32 << 20).to_le_bytes()).await;
    let (close, _) = wt.closed().await;
    assert_eq!(close, Some(CloseCode::MessageTooBig.0));
}

#[tokio::test]
async fn a_view_frame_over_the_datagram_limit_is_cut_between_cells() {
    // A world of 2 x 2 cells, each the others' neighbour, so every tick's
    // frame to a full-form session carries every cell (no tier spreads them
    // over ticks), with every player. Eighteen players' entries (7 bytes
    // at least each) and the 24-byte envelope are over the lowered limit
    // however they stand, so every frame comes cut between cells; a cell
    // fits alone unless 15 of the 18 spawned in it (126 bytes of room, 25
    // a section of one cell and 7 an entry at least: about 1 run in
    // 700,000 with the shortest ids).
    // With a 4 x 4 world the tiers spread the cells over two ticks, and
    // random spawns fitted each tick's share under the limit in 1 run of 40.
    let server =
        shard_of("300", &["--cell-size", "150", "--view-radius", "150", "--webtransport-datagram-bytes", "150"]);
    let mut crowd = Vec::new();
    for i in 0..17 {
        crowd.push(Player::join(&server, &format!("P{i}")).await);
    }
    let mut wt = TransportPlayer::join(&server, "Small").await;
    server.wait_metric("mino_players", 18.0).await;
    let deadline = Instant::now() + WAIT;
    let mut cells = std::collections::HashSet::new();
    // How many datagrams carried each tick's cells: over one, a frame was cut.
    let mut per_tick = std::collections::HashMap::<u32, u32>::new();
    let held = |wt: &TransportPlayer| wt.held().map_or(0, |h| h.cells().map(|(_, c)| c.entries.len()).sum::<usize>());
    while cells.len() < 2 || per_tick.values().all(|n| *n < 2) || held(&wt) < 18 {
        assert!(Instant::now() < deadline, "datagrams of several cells, a frame cut (seen {cells:?}, {per_tick:?})");
        let mut ticks = std::collections::HashSet::new();
        for f in wt.datagram().await {
            if let Frame::Cell(c) = f {
                cells.insert((c.shard_id.0, c.cell));
                ticks.insert(c.tick);
            }
        }
        for tick in ticks {
            *per_tick.entry(tick).or_default() += 1;
        }
        assert!(wt.last_datagram.len() <= 150, "a datagram of {} bytes", wt.last_datagram.len());
    }
    assert_eq!(held(&wt), 18, "every player held, from cut frames");
}

#[tokio::test]
async fn a_cell_over_the_datagram_limit_goes_on_the_stream_and_is_counted() {
    // A limit so low that the whole shard's one cell, with five players
    // (71 bytes at least: the envelope 24, the section 9, the cell 3 and
    // 7 a player), does not fit a datagram (as a place without area of
    // interest of some 150 players does not fit a real path's): no
    // datagram goes, each frame is counted, and the cell comes on the
    // stream, whole, so the session still sees every player (it saw none
    // before).
    let dir = mino_testkit::WorkDir::new("wt-too-big");
    let log = dir.join("shard.log");
    let server = Shard::build(SERVER)
        .args(&["--webtransport-listen", "127.0.0.1:0", "--speed", "100", "--world-size", "2000"])
        .flag("webtransport-datagram-bytes", 64)
        .log_to(&log, "info")
        .start();
    let mut others = Vec::new();
    for i in 0..4 {
        others.push(Player::join(&server, &format!("P{i}")).await);
    }
    let mut wt = TransportPlayer::join(&server, "Tiny").await;
    let me = wt.id();
    server.wait_metric_at_least("mino_webtransport_unsent_total{reason=\"too_big\"}", 5.0).await;
    assert_eq!(server.metric("mino_webtransport_datagrams_total").await, 0.0);
    // The operator is told once, when it happens (not at every start of a
    // small place without area of interest: that is an info line).
    let text = std::fs::read_to_string(&log).expect("the shard's log");
    let warned =
        text.lines().filter(|l| l.contains("WARN") && l.contains("over the datagram limit (64 bytes)")).count();
    assert_eq!(warned, 1, "{text}");
    assert!(!text.lines().any(|l| l.contains("WARN") && l.contains("webtransport without area of interest")), "{text}");
    let deadline = Instant::now() + WAIT;
    loop {
        assert!(Instant::now() < deadline, "the cell of all five players on the stream");
        if let Frame::Cell(c) = wt.message().await {
            let ids: Vec<u32> = c.entries.iter().map(|e| e.id.0).collect();
            if ids.len() == 5 && ids.contains(&me) {
                break;
            }
        }
    }
    wt.send(&mino_protocol::client::encode_ping(12.5)).await;
    loop {
        if let Frame::Pong(t) = wt.message().await {
            assert_eq!(t, 12.5);
            break;
        }
    }
}

#[tokio::test]
async fn the_operators_certificate_is_served_and_offers_no_hash() {
    let dir = mino_testkit::WorkDir::new("wt-cert");
    let cert = mino_testkit::Cert::self_signed(dir.path());
    let (c, k) = (cert.cert.to_string_lossy().into_owned(), cert.key.to_string_lossy().into_owned());
    let server = shard(&["--webtransport-cert", &c, "--webtransport-key", &k]);
    let offer = server.get("/webtransport").await;
    let json: serde_json::Value = serde_json::from_slice(&offer.body).expect("JSON");
    assert_eq!(json["port"].as_u64(), server.webtransport.map(|a| u64::from(a.port())));
    assert_eq!(json["certificateHashes"].as_array().map(Vec::len), Some(0), "browsers verify it as usual");
    let chain = wtransport::tls::CertificateChain::load_pemfile(&cert.cert).await.expect("the PEM");
    let hash = chain.as_slice()[0].hash();
    let wt = TransportPlayer::connect_trusting(&server, vec![hash]).await.say_hello("Op").await;
    assert!(wt.id() > 0, "welcomed with the operator's certificate");
}

#[tokio::test]
async fn an_advertised_address_is_offered_instead_of_the_listen_address() {
    // A shard behind a port forward, or on another machine than the page's
    // nginx: pages are told where players reach it, with its hash.
    let server = shard(&["--webtransport-advertise", "shard-7.play.example.com:4433"]);
    let offer = server.get("/webtransport").await;
    let json: serde_json::Value = serde_json::from_slice(&offer.body).expect("JSON");
    assert_eq!(json["addr"], "shard-7.play.example.com:4433");
    assert_eq!(json["port"], 4433);
    assert_eq!(json["certificateHashes"].as_array().map(Vec::len), Some(1));
    // Sessions are still taken on the listen address.
    let wt = TransportPlayer::join(&server, "Far").await;
    assert!(wt.id() > 0);
}

#[tokio::test]
async fn webtransport_is_off_unless_asked() {
    let server = Shard::start(SERVER, &[]);
    assert_eq!(server.webtransport, None);
    // No offer, and no error either (a 404 is logged in the browser's console).
    let answer = server.get("/webtransport").await;
    assert_eq!((answer.status, answer.body.len(), answer.header("cache-control")), (204, 0, Some("no-store")));
}

#[tokio::test]
async fn a_session_its_client_closes_leaves_within_a_round_trip_not_the_idle_timeout() {
    // The idle timeout is the peer timeout (60 s here): the player must
    // leave long before it, on the client's close.
    let server = shard(&["--peer-timeout-ms", "60000"]);
    let wt = TransportPlayer::join(&server, "Bye").await;
    server.wait_metric("mino_players", 1.0).await;
    wt.conn.close(wtransport::VarInt::from_u32(0), b"bye");
    let closed = Instant::now();
    server.wait_metric("mino_players", 0.0).await;
    assert!(closed.elapsed() < Duration::from_secs(2), "left after {:?}", closed.elapsed());
    server.wait_metric("mino_webtransport_sessions", 0.0).await;
    assert_eq!(server.metric(&closed_series("webtransport", "client_closed")).await, 1.0);
    assert_eq!(server.metric(&closed_series("websocket", "client_closed")).await, 0.0, "no websocket closed");
}

/// A UDP relay on a loopback port in front of a shard's WebTransport
/// address, for one client, until it is silenced: from then on nothing
/// passes either way, as when a peer's network goes away.
struct Relay {
    addr: SocketAddr,
    silent: Arc<AtomicBool>,
    /// Nothing passes from the shard to the client.
    deaf: Arc<AtomicBool>,
    task: tokio::task::JoinHandle<()>,
}

impl Relay {
    async fn to(target: SocketAddr) -> Relay {
        let outside = tokio::net::UdpSocket::bind("127.0.0.1:0").await.expect("bind");
        let inside = tokio::net::UdpSocket::bind("127.0.0.1:0").await.expect("bind");
        inside.connect(target).await.expect("connect");
        let addr = outside.local_addr().expect("address");
        let (silent, deaf) = (Arc::new(AtomicBool::new(false)), Arc::new(AtomicBool::new(false)));
        let (quiet, unheard) = (silent.clone(), deaf.clone());
        let task = tokio::spawn(async move {
            let (mut up, mut down) = (vec![0u8; 65_536], vec![0u8; 65_536]);
            let mut client = None;
            loop {
                let passes = !quiet.load(Ordering::Relaxed);
                tokio::select! {
                    Ok((n, from)) = outside.recv_from(&mut up) => {
                        client = Some(from);
                        if passes {
                            let _ = inside.send(&up[..n]).await;
                        }
                    }
                    Ok(n) = inside.recv(&mut down) => {
                        let passes = passes && !unheard.load(Ordering::Relaxed);
                        if let (true, Some(client)) = (passes, client) {
                            let _ = outside.send_to(&down[..n], client).await;
                        }
                    }
                }
            }
        });
        Relay { addr, silent, deaf, task }
    }

    fn silence(&self) {
        self.silent.store(true, Ordering::Relaxed);
    }

    /// From now on the client hears nothing (so acknowledges nothing) and
    /// the shard still hears the client.
    fn deafen(&self) {
        self.deaf.store(true, Ordering::Relaxed);
    }
}

impl Drop for Relay {
    fn drop(&mut self) {
        self.task.abort();
    }
}

#[tokio::test]
async fn a_session_gone_silent_is_closed_at_the_peer_timeout_as_a_silent_websocket() {
    // The peer timeout is the session's QUIC idle timeout: a client whose
    // packets stop (its network gone) is closed as peer_timeout, as a
    // silent websocket is, not as client_closed.
    let server = shard(&["--ping-interval-ms", "200", "--peer-timeout-ms", "1000"]);
    let relay = Relay::to(server.webtransport.expect("webtransport")).await;
    let wt = TransportPlayer::connect_via(&server, relay.addr).await.say_hello("Gone").await;
    server.wait_metric("mino_players", 1.0).await;
    relay.silence();
    server.wait_metric(&closed_series("webtransport", "peer_timeout"), 1.0).await;
    server.wait_metric("mino_players", 0.0).await;
    assert_eq!(server.metric(&closed_series("webtransport", "client_closed")).await, 0.0);
    drop(wt);
}

#[tokio::test]
async fn a_session_gone_silent_in_the_middle_of_its_hello_is_closed_as_peer_timeout() {
    // Two bytes of the Hello's length prefix, then the client's packets
    // stop: the Hello is cut short by QUIC's idle timeout, a peer timeout
    // (it was counted as client_closed).
    let server = shard(&["--ping-interval-ms", "200", "--peer-timeout-ms", "1000"]);
    let relay = Relay::to(server.webtransport.expect("webtransport")).await;
    let mut wt = TransportPlayer::connect_via(&server, relay.addr).await;
    wt.send_raw(&[40, 0]).await;
    server.wait_metric("mino_webtransport_sessions", 1.0).await;
    relay.silence();
    server.wait_metric(&closed_series("webtransport", "peer_timeout"), 1.0).await;
    assert_eq!(server.metric(&closed_series("webtransport", "client_closed")).await, 0.0);
    assert_eq!(server.metric(&closed_series("webtransport", "hello_timeout")).await, 0.0);
}

#[tokio::test]
async fn a_session_resumes_with_its_ticket_in_place_as_a_websocket_does() {
    let server = shard(&[]);
    let first = TransportPlayer::join(&server, "Again").await;
    let (id, ticket) = (first.id(), first.ticket());
    first.conn.close(wtransport::VarInt::from_u32(0), b"reconnecting");
    server.wait_metric("mino_players", 0.0).await;
    let again = TransportPlayer::connect(&server).await.hello_with("Again", Some(&ticket)).await;
    let again = again.unwrap_or_else(|(f, code)| panic!("not resumed: {f:?} {code:?}"));
    let welcome = again.welcome.clone().expect("welcomed");
    assert!(welcome.resumed, "the Welcome says resumed");
    assert_eq!(welcome.player_id, id, "the same player");
    // The ticket was spent: a websocket presenting it again is refused.
    let refused = Player::hello(&server, "Again", Some(&ticket)).await;
    assert!(refused.is_err(), "a spent ticket is refused");
}

#[tokio::test]
async fn a_full_shard_refuses_a_session_with_busy_and_the_websockets_code() {
    let server = shard(&["--max-players", "1"]);
    let _ws = Player::join(&server, "First").await;
    let mut wt = TransportPlayer::connect(&server).await;
    let hello = mino_protocol::client::encode_hello_with(
        mino_protocol::PROTOCOL_VERSION,
        "Second",
        None,
        None,
        mino_protocol::client::Capabilities::DELTAS,
    );
    wt.send(&hello).await;
    let Frame::Busy { reason, .. } = wt.message().await else { panic!("not refused with Busy") };
    assert_eq!(reason, "full");
    // The code reaches a page as the Error before the close too (browsers
    // do not show the connection's close code).
    let (close, error) = wt.closed().await;
    assert_eq!(close, Some(CloseCode::ServerBusy.0));
    assert_eq!(error, Some(CloseCode::ServerBusy.0), "an Error with the code before the close");
    server.wait_metric("mino_busy_refusals_total{reason=\"full\"}", 1.0).await;
    // Refused by the hub on the tick's thread: a session's close too.
    server.wait_metric(&closed_series("webtransport", "busy"), 1.0).await;
    assert_eq!(server.metric(&closed_series("websocket", "busy")).await, 0.0);
}

#[tokio::test]
async fn clustered_a_session_is_welcomed_once_stored_and_seen_by_the_other_shards_players() {
    // Clustered, the welcome waits until the session is stored in Redis
    // (held in the hub meanwhile); the session's player is then relayed to
    // the other shard's players like any other.
    let redis = mino_testkit::Redis::start();
    let start = |id: u32| {
        Shard::build(SERVER).redis(&redis).id(id).world_size(2000.0).flag("webtransport-listen", "127.0.0.1:0").start()
    };
    let (a, b) = (start(1), start(2));
    a.wait_ready().await;
    b.wait_ready().await;
    let mut wt = TransportPlayer::join(&a, "Relayed").await;
    assert_eq!(wt.welcome.as_ref().map(|w| w.shard_id), Some(1));
    let mut other = Player::join(&b, "Other").await;
    let me = wt.id();
    other.until(|f| position(f, me)).await;
    let them = other.id();
    let deadline = Instant::now() + WAIT;
    'seen: loop {
        assert!(Instant::now() < deadline, "the other shard's player in the session's datagrams");
        for f in wt.datagram().await {
            if position(&f, them).is_some() {
                break 'seen;
            }
        }
    }
}

#[tokio::test]
async fn clustered_a_session_gets_no_view_before_its_welcome_and_holds_a_standing_place() {
    // A browser drops the view frames that come before its Welcome. Here the
    // session's store in Redis is held up (DEBUG SLEEP), so the welcome waits
    // in the hub over several ticks that gather views; those must not go out
    // with the welcome (which goes by the session's task and stream: the
    // datagrams overtook it), or the standing place's cells, sent whole once,
    // are missing until the view's refresh.
    let redis = mino_testkit::Redis::start_with(None, &["--protected-mode", "no", "--enable-debug-command", "yes"]);
    let shard = Shard::build(SERVER)
        .redis(&redis)
        .id(1)
        .world_size(500.0)
        .flag("webtransport-listen", "127.0.0.1:0")
        .flag("cell-size", "100")
        .flag("view-radius", "400")
        .start();
    shard.wait_ready().await;
    let mut standing = Vec::new();
    for k in 0..4 {
        standing.push(Player::join(&shard, &format!("Still{k}")).await);
    }
    shard.wait_metric("mino_players", 4.0).await;
    let ids: Vec<u32> = standing.iter().map(Player::id).collect();
    let port = redis.port;
    let pause = std::thread::spawn(move || {
        let mut cli = std::process::Command::new("redis-cli");
        cli.args(["-p", &port.to_string(), "DEBUG", "SLEEP", "0.4"]).output().expect("redis-cli runs")
    });
    // Redis is paused once a PING goes unanswered for 50 ms.
    let started = Instant::now();
    while mino_testkit::redis::ping_within(port, Duration::from_millis(50)).is_some() {
        assert!(started.elapsed() < WAIT, "DEBUG SLEEP never paused Redis");
    }
    let mut wt = TransportPlayer::join(&shard, "Late").await;
    let early = wt.drop_arrived_datagrams().await;
    assert!(pause.join().expect("the pause ends").status.success(), "DEBUG SLEEP ran");
    assert_eq!(early, 0, "no view frame came before the Welcome");
    let deadline = Instant::now() + WAIT;
    loop {
        let held: Vec<u32> = wt
            .held()
            .map(|h| h.cells().flat_map(|(_, c)| c.entries.iter().map(|e| e.id.0)).collect())
            .unwrap_or_default();
        if ids.iter().all(|id| held.contains(id)) {
            break;
        }
        assert!(Instant::now() < deadline, "the standing players {ids:?} held by the session: {held:?}");
        wt.datagram().await;
    }
}

#[tokio::test]
async fn clustered_a_session_is_not_shown_another_shards_player_where_it_stood_before_the_shard_looked_away() {
    // Shard one hears of shard two's player standing at a spot, then looks
    // away (its last player leaves: it stops hearing the region). The
    // player walks to another cell, and shard two stops publishing the one
    // it emptied. A session that joins shard one, in a world every view
    // sees whole, is shown the player in one cell only: shard one's view
    // refresh sent the emptied cell as shard one last heard of it.
    let redis = mino_testkit::Redis::start();
    let start = |id: u32| {
        let shard = Shard::build(SERVER).redis(&redis).id(id).world_size(250.0).flag("cell-size", "125");
        let shard = shard.flag("view-radius", "250").flag("busy-lateness-ms", "0");
        if id == 1 {
            shard.flag("webtransport-listen", "127.0.0.1:0").start()
        } else {
            shard.start()
        }
    };
    let (one, two) = (start(1), start(2));
    one.wait_ready().await;
    two.wait_ready().await;
    let mut stander = Player::join(&two, "Stander").await;
    stander.walk_to((62.0, 62.0), 20.0).await;
    let id = stander.id();
    let holds = |p: &Player| p.held().is_some_and(|h| h.cells_holding(PlayerId(id)).next().is_some());
    let mut watcher = Player::join_deltas(&one, "Watcher").await;
    let deadline = Instant::now() + WAIT;
    while !holds(&watcher) {
        assert!(Instant::now() < deadline, "shard one's player was never sent shard two's");
        watcher.next().await;
    }
    watcher.ws.close(None).await.ok();
    one.wait_metric("mino_players", 0.0).await;
    // 40 ticks on, shard one no longer hears the region; shard two drops a
    // cell once it has been empty for 64 ticks.
    one.wait_ticks(60).await;
    stander.walk_to((187.0, 187.0), 20.0).await;
    two.wait_ticks(100).await;
    let mut wt = TransportPlayer::join(&one, "Back").await;
    // (The stander reads nothing: it speaks, or it would be dropped as
    // silent at the peer timeout.)
    stander.input(0.0, 0.0).await;
    // Past the view's refresh (every 64 ticks) and each cell's.
    let until = one.metric("mino_ticks_total").await + 140.0;
    let mut cells = std::collections::BTreeSet::new();
    while one.metric("mino_ticks_total").await < until {
        wt.datagram().await;
        let held = wt.held().expect("welcomed");
        cells.extend(held.cells_holding(PlayerId(id)));
    }
    assert_eq!(cells.len(), 1, "the session was shown shard two's player in the cells {cells:?}");
}

#[tokio::test]
async fn a_drained_session_is_told_moved_by_an_error_and_resumes_on_another_shard_in_place() {
    // A drain closes a websocket with Move then the close code Moved; a
    // page cannot read a QUIC close code, so a session gets the Move, then
    // an Error of code Moved on its stream before the close, and resumes on
    // the other shard over WebTransport with the same id.
    let redis = mino_testkit::Redis::start();
    let start = |id: u32| {
        let shard = Shard::build(SERVER).redis(&redis).id(id).world_size(2000.0);
        shard.flag("webtransport-listen", "127.0.0.1:0").flag("drain-rate", 100)
    };
    let a = start(1).ready().await;
    let b = start(2).ready().await;
    let mut wt = TransportPlayer::join(&a, "Mover").await;
    let id = wt.id();
    a.signal(mino_testkit::Signal::SIGTERM);
    let ticket = loop {
        match wt.message().await {
            Frame::Move(ticket) => break ticket,
            Frame::Closed(code) => panic!("closed ({code:?}) without a Move"),
            _ => {}
        }
    };
    // Draining, the shard offers no WebTransport: 503, as /ws answers, so
    // nginx asks the other shard (a page sent here would be refused as busy).
    let offer = a.get("/webtransport").await;
    assert_eq!(offer.status, 503, "a draining shard's offer: {:?}", String::from_utf8_lossy(&offer.body));
    assert_eq!(String::from_utf8_lossy(&offer.body), "draining\n");
    assert_eq!(b.get("/webtransport").await.status, 200, "the other shard's");
    assert!(a.metric("mino_unready_refusals_total{reason=\"draining\"}").await >= 1.0, "counted");
    let (close, error) = wt.closed().await;
    assert_eq!(error, Some(CloseCode::Moved.0), "an Error of code Moved before the close");
    assert_eq!(close, Some(CloseCode::Moved.0), "the session's close code");
    let moved = TransportPlayer::connect(&b).await.hello_with("Mover", Some(&ticket)).await;
    let moved = moved.unwrap_or_else(|(f, code)| panic!("not resumed on B: {f:?} {code:?}"));
    let welcome = moved.welcome.as_ref().expect("welcomed");
    assert!(welcome.resumed, "resumed");
    assert_eq!((welcome.player_id, welcome.shard_id), (id, 2), "the same player, on shard 2");
}

/// A session of a shard started with `flags` walks along x and sees itself
/// move in its datagrams.
async fn walks_and_sees_itself(flags: &[&str], name: &str) {
    let server = shard(flags);
    let mut wt = TransportPlayer::join(&server, name).await;
    let welcome = wt.welcome.clone().expect("welcomed on the stream");
    let dir = if welcome.x < 1000.0 { 1.0 } else { -1.0 };
    wt.input(dir, 0.0).await;
    let me = wt.id();
    let (x, _) = sees_walk(&mut wt, me).await;
    assert!((x - welcome.x) * dir > 20.0, "walked along x: from {} to {x}", welcome.x);
    assert!(server.metric("mino_webtransport_datagrams_total").await > 0.0);
}

#[tokio::test]
async fn a_session_under_the_bbr_congestion_controller_walks_and_sees_itself() {
    // --webtransport-congestion bbr changes only how each connection paces
    // and backs off (RESULTS.md section 16 measures it behind loss).
    walks_and_sees_itself(&["--webtransport-congestion", "bbr"], "Bbr").await;
}

#[tokio::test]
async fn a_session_without_the_window_floor_walks_and_sees_itself() {
    // --webtransport-window-floor-bytes 0 leaves quinn's CUBIC as it is
    // (the floor's control in RESULTS.md section 16).
    walks_and_sees_itself(&["--webtransport-window-floor-bytes", "0"], "Bare").await;
}

#[test]
fn a_window_floor_past_a_mebibyte_is_refused() {
    let out = std::process::Command::new(SERVER)
        .args(["--webtransport-listen", "127.0.0.1:0", "--webtransport-window-floor-bytes", "2000000"])
        .output()
        .expect("the server runs");
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--webtransport-window-floor-bytes") && err.contains("1048576"), "{err}");
}

#[test]
fn an_unknown_congestion_controller_is_refused_naming_the_choices() {
    let out = std::process::Command::new(SERVER)
        .args(["--webtransport-listen", "127.0.0.1:0", "--webtransport-congestion", "reno2"])
        .output()
        .expect("the server runs");
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("cubic") && err.contains("bbr"), "{err}");
}

/// The certificate hash a shard offers at `/webtransport` now.
async fn offered_hash(server: &Shard) -> String {
    let offer = server.get("/webtransport").await;
    let json: serde_json::Value = serde_json::from_slice(&offer.body).expect("/webtransport is JSON");
    json["certificateHashes"][0]["value"].as_str().expect("a hash").to_owned()
}

#[tokio::test]
async fn the_self_signed_certificate_is_renewed_without_dropping_an_open_session() {
    // Every 3 s: each join below (the hash read, then the handshake) comes
    // well inside one certificate's time, the first right after the start
    // and the second right after a renewal.
    let server = shard(&["--webtransport-cert-renew-s", "3"]);
    let first = offered_hash(&server).await;
    let mut old = TransportPlayer::join(&server, "Old").await;
    // A new certificate, and its hash offered.
    mino_testkit::wait::until_true("/webtransport offering a new certificate", || async {
        offered_hash(&server).await != first
    })
    .await;
    // A new session joins by the new hash; the old one goes on, both ways.
    let mut new = TransportPlayer::join(&server, "New").await;
    server.wait_metric("mino_players", 2.0).await;
    for wt in [&mut old, &mut new] {
        wt.send(&mino_protocol::client::encode_ping(7.0)).await;
        loop {
            if let Frame::Pong(t) = wt.message().await {
                assert_eq!(t, 7.0);
                break;
            }
        }
        assert!(!wt.datagram().await.is_empty(), "datagrams still come");
    }
    assert_eq!(server.metric("mino_webtransport_sessions").await, 2.0);
}

#[tokio::test]
async fn streams_the_shard_never_reads_hold_at_most_its_receive_window() {
    // A client that opens streams past its one and fills them: the shard
    // never reads them, and with quinn's windows (1.25 MB a stream, no
    // limit a session) an outside trial made it hold 250 MB a session.
    // Now each takes 16 KiB and all of them 64 KiB, then the client's writes
    // wait (its own included: it spent its window); the shard still writes
    // to it.
    let server = shard(&[]);
    let mut wt = TransportPlayer::join(&server, "Filler").await;
    let chunk = vec![7u8; 4096];
    // A write that has not gone within this is held by flow control.
    let held_back = Duration::from_millis(700);
    let mut written = 0usize;
    for _ in 0..6 {
        let opened = tokio::time::timeout(held_back, async {
            match wt.conn.open_bi().await {
                Ok(opening) => opening.await.ok(),
                Err(_) => None,
            }
        })
        .await;
        let Ok(Some((mut send, _recv))) = opened else { break };
        // At most 256 KiB a stream: quinn's defaults took it all at once.
        let mut this = 0;
        for _ in 0..64 {
            match tokio::time::timeout(held_back, send.write_all(&chunk)).await {
                Ok(Ok(())) => this += chunk.len(),
                _ => break,
            }
        }
        let stream_window = mino_server::webtransport::STREAM_RECEIVE_WINDOW_BYTES as usize;
        assert!(this <= stream_window, "{this} bytes on one stream never read (at most {stream_window})");
        written += this;
    }
    let window = mino_server::webtransport::RECEIVE_WINDOW_BYTES as usize;
    assert!(written >= 16 * 1024, "the first extra stream took its window ({written} bytes)");
    assert!(written <= window, "{written} bytes held for streams never read (at most {window})");
    // The client spent its own window: what it sends now waits, but the
    // shard still writes to it, and to everyone else.
    let _later = Player::join(&server, "Later").await;
    loop {
        if let Frame::Presence { joined, .. } = wt.message().await {
            if joined.iter().any(|(_, name)| name == "Later") {
                break;
            }
        }
    }
}

#[tokio::test]
async fn handshakes_from_addresses_never_checked_get_a_retry_and_take_no_session_slot() {
    // One client's first handshake packet, caught, then sent again from 30
    // other UDP ports: each looks like a client whose address nobody
    // checked (a forged source). Each took a --max-connections slot for
    // the handshake's timeout, and an outside trial locked every player out
    // with 60 such packets. Now, once half the cap of 10 are under way,
    // each is answered with a Retry (RFC 9000 section 8.1) and holds
    // nothing, and a real player, whose client answers the Retry, still
    // gets in.
    let server = shard(&["--max-connections", "10"]);
    let addr = server.webtransport.expect("the shard takes webtransport");
    // Thirty clients' first packets, each a handshake of its own (its own
    // connection id), caught on a port that never answers.
    let trap = tokio::net::UdpSocket::bind("127.0.0.1:0").await.expect("a UDP port");
    let trap_addr = trap.local_addr().expect("its address");
    let mut initials: Vec<Vec<u8>> = Vec::new();
    let mut ids = std::collections::HashSet::new();
    while initials.len() < 30 {
        let config = wtransport::ClientConfig::builder().with_bind_default().with_server_certificate_hashes([]).build();
        let endpoint = wtransport::Endpoint::client(config).expect("a client endpoint");
        let dialing = tokio::spawn(async move {
            let _ = endpoint.connect(format!("https://{trap_addr}/")).await;
        });
        let mut packet = vec![0u8; 2048];
        let (n, _) = tokio::time::timeout(WAIT, trap.recv_from(&mut packet)).await.expect("in time").expect("read");
        dialing.abort();
        packet.truncate(n);
        // The destination connection id: after the first byte, the version
        // (4 bytes) and its length (1 byte); a resent packet repeats it.
        let id_len = usize::from(packet[5]);
        if ids.insert(packet[6..6 + id_len].to_vec()) {
            initials.push(packet);
        }
    }
    let mut answer = vec![0u8; 2048];
    let mut retried = Vec::new();
    for initial in &initials {
        let forger = tokio::net::UdpSocket::bind("127.0.0.1:0").await.expect("a UDP port");
        forger.send_to(initial, addr).await.expect("sent");
        tokio::time::timeout(WAIT, forger.recv_from(&mut answer)).await.expect("an answer").expect("read");
        // A long header (0x80), fixed bit (0x40), type Retry (0x30): the
        // type bits are never masked.
        retried.push(answer[0] & 0xf0 == 0xf0);
    }
    let begun = retried.iter().take_while(|r| !**r).count();
    assert_eq!(begun, 5, "handshakes begun before the Retries: half the cap ({retried:?})");
    assert!(retried[begun..].iter().all(|r| *r), "a Retry for every one after ({retried:?})");
    let mut player = TransportPlayer::join(&server, "Real").await;
    player.send(&mino_protocol::client::encode_ping(3.5)).await;
    loop {
        if let Frame::Pong(t) = player.message().await {
            assert_eq!(t, 3.5);
            break;
        }
    }
    assert_eq!(server.metric("mino_connections_over_cap_total").await, 0.0, "no session refused");
}

#[tokio::test]
async fn a_session_that_stops_reading_is_closed_soon_after_it_is_found_too_slow() {
    // A client that lets the shard have 1 KiB unread on its stream and
    // reads nothing, while others chat: the shard's writes wait, one times
    // out (1 s) and the player is dropped as too slow. Its session then
    // lingered on, each message queued meanwhile (a tick's chat each)
    // waiting out the write timeout again before the close (an outside
    // trial: 60 s, its slot held); now the session ends at once.
    let server = shard(&["--write-timeout-ms", "1000", "--chat-rate", "50"]);
    let mut deaf = TransportPlayer::connect_with_window(&server, 1024).await;
    deaf = deaf.say_hello("Deaf").await;
    let mut chatters = chatters(&server, 4).await;
    chat_until_a_session_is_too_slow(&server, &mut chatters, WAIT).await;
    let found = Instant::now();
    tokio::time::timeout(WAIT, deaf.conn.closed()).await.expect("the session closed");
    assert!(found.elapsed() < Duration::from_secs(2), "closed {:?} after it was found too slow", found.elapsed());
    server.wait_metric("mino_webtransport_sessions", 0.0).await;
}

#[tokio::test]
async fn a_session_that_stops_acknowledging_holds_at_most_the_send_window_and_is_too_slow() {
    // A client whose network stops carrying the shard's packets (or that
    // stops acknowledging on purpose), with room for 64 MB on its stream:
    // quinn held up to its default send window, 10 MB, of the session's
    // unacknowledged stream before a write waited, so the session was not
    // found too slow for minutes. With the window at 256 KiB, a write waits
    // within seconds and the write timeout closes it as a websocket's.
    let server = shard(&["--write-timeout-ms", "1000", "--chat-rate", "50", "--peer-timeout-ms", "60000"]);
    let relay = Relay::to(server.webtransport.expect("webtransport")).await;
    let deaf = TransportPlayer::connect_via_with_window(&server, relay.addr, 64 << 20).await.say_hello("Deaf").await;
    let mut chatters = chatters(&server, 8).await;
    server.wait_metric("mino_players", 9.0).await;
    relay.deafen();
    // 8 chatters: about 30 KB a second for the deaf session's stream,
    // 256 KiB in about 9 s, 10 MB in over five minutes.
    chat_until_a_session_is_too_slow(&server, &mut chatters, Duration::from_secs(40)).await;
    drop(deaf);
}

/// `n` websocket players of `server`, to chat.
async fn chatters(server: &Shard, n: usize) -> Vec<Player> {
    let mut chatters = Vec::with_capacity(n);
    for i in 0..n {
        chatters.push(Player::join(server, &format!("C{i}")).await);
    }
    chatters
}

/// Has each of `chatters` say a 150-character line a tick (within
/// --chat-rate 50, so nobody is closed for flooding, and every tick queues
/// each session a message) until a WebTransport session is closed as too
/// slow.
///
/// Panics: none is within `limit`.
async fn chat_until_a_session_is_too_slow(server: &Shard, chatters: &mut [Player], limit: Duration) {
    let line = "x".repeat(150);
    let too_slow = &closed_series("webtransport", "too_slow");
    let deadline = Instant::now() + limit;
    let mut said = 0;
    let mut pace = tokio::time::interval(Duration::from_millis(50));
    while server.metric(too_slow).await < 1.0 {
        assert!(Instant::now() < deadline, "a session found too slow within {limit:?} ({said} lines said)");
        pace.tick().await;
        for c in chatters.iter_mut() {
            c.send(mino_protocol::client::encode_chat(&line)).await;
            said += 1;
        }
    }
}

#[tokio::test]
async fn the_stream_and_the_hello_share_one_handshake_window_as_on_the_websocket() {
    // The websocket gives its upgrade one window and its Hello another;
    // a session had one for its QUIC and HTTP/3 handshake, one for its
    // stream and one more for its Hello (a slow client held a slot 3 windows
    // long, an outside trial). Stream at 0.6 of a window, Hello at 1.2: late.
    let server = shard(&["--handshake-timeout-ms", "1000"]);
    let addr = server.webtransport.expect("the shard takes webtransport");
    let hashes = mino_testkit::transport::offered_hashes(&server).await;
    let config = wtransport::ClientConfig::builder().with_bind_default().with_server_certificate_hashes(hashes).build();
    let endpoint = wtransport::Endpoint::client(config).expect("a client endpoint");
    let conn = tokio::time::timeout(WAIT, endpoint.connect(format!("https://{addr}/"))).await.expect("in time");
    let conn = conn.expect("a session");
    let started = Instant::now();
    tokio::time::sleep_until((started + Duration::from_millis(600)).into()).await;
    let (mut send, _recv) = conn.open_bi().await.expect("open").await.expect("a stream");
    tokio::time::sleep_until((started + Duration::from_millis(1_200)).into()).await;
    let hello = mino_protocol::client::encode_hello("Late", None, None);
    let mut framed = (hello.len() as u32).to_le_bytes().to_vec();
    framed.extend_from_slice(&hello);
    let _ = send.write_all(&framed).await;
    let closed = tokio::time::timeout(WAIT, conn.closed()).await.expect("closed in time");
    let code = match closed {
        wtransport::error::ConnectionError::ApplicationClosed(close) => close.code().into_inner(),
        other => panic!("closed by the shard with a code, not {other:?}"),
    };
    assert_eq!(code, u64::from(CloseCode::HelloTimeout.0), "the Hello came after the window");
    // Stream and Hello well within the window: welcomed.
    let on_time = TransportPlayer::connect(&server).await.say_hello("OnTime").await;
    assert!(on_time.welcome.is_some());
}

#[tokio::test]
async fn a_datagram_flood_is_dropped_unread_and_holds_no_memory() {
    // Clients send no datagrams and the shard reads none. Four sessions
    // each send 3 MB of them anyway: each stays served, a websocket player
    // beside them sees every tick, and the shard holds at most a couple of
    // KB of them a session (quinn's default would hold 1.25 MB a session:
    // 5 MB here).
    let server = shard(&[]);
    let mut ws = Player::join(&server, "Beside").await;
    let mut floods = Vec::new();
    for i in 0..4 {
        floods.push(TransportPlayer::join(&server, &format!("Flood{i}")).await);
    }
    server.wait_metric("mino_players", 5.0).await;
    // Warmed up: every session has had datagrams.
    for wt in &mut floods {
        wt.datagram().await;
    }
    let before = mino_testkit::process::rss_bytes(server.pid()).expect("the shard's RSS");
    let sent: Vec<usize> =
        futures_util::future::join_all(floods.iter().map(|wt| wt.flood_datagrams(3_000, 1_000))).await;
    assert!(sent.iter().all(|&n| n == 3_000), "every datagram of the flood went: {sent:?}");
    let grown = mino_testkit::process::rss_bytes(server.pid()).expect("the shard's RSS").saturating_sub(before);
    assert!(grown < 2 << 20, "the shard grew by {} KB under the flood", grown >> 10);
    // Still open and served after it: the websocket player sees ten more
    // ticks from its newest, and, as it walks (a standing place sends the
    // sessions nothing new), the shard sends the sessions ten ticks' datagrams.
    assert_eq!(server.metric("mino_webtransport_sessions").await, 4.0);
    ws.input(1.0, 1.0).await;
    let sent_before = server.metric("mino_webtransport_datagrams_total").await;
    let (first, ..) = ws.newest_own_position().await;
    ws.until(|f| match f {
        Frame::Snapshot { tick, .. } if *tick >= first + 10 => Some(()),
        _ => None,
    })
    .await;
    server.wait_metric_at_least("mino_webtransport_datagrams_total", sent_before + 40.0).await;
}

#[tokio::test]
async fn a_datagram_that_is_not_the_sessions_closes_it_with_http3s_datagram_error() {
    // A QUIC datagram that names no WebTransport session (its first bytes
    // are not a quarter stream id): HTTP/3's H3_DATAGRAM_ERROR (0x33,
    // RFC 9297) closes the session, and the shard serves the others.
    let server = shard(&[]);
    let mut bad = TransportPlayer::join(&server, "Garbled").await;
    let mut good = TransportPlayer::join(&server, "Fine").await;
    server.wait_metric("mino_webtransport_sessions", 2.0).await;
    bad.send_quic_datagrams(1, vec![0xEE; 16].into()).await;
    let (code, _) = bad.closed().await;
    assert_eq!(code, Some(0x33), "closed by the HTTP/3 layer with H3_DATAGRAM_ERROR");
    server.wait_metric("mino_webtransport_sessions", 1.0).await;
    good.datagram().await;
}

#[test]
fn a_send_queue_outside_its_range_is_refused_naming_it() {
    for bad in ["16383", "1048577", "lots"] {
        let out = std::process::Command::new(SERVER)
            .args(["--webtransport-listen", "127.0.0.1:0", "--webtransport-send-queue-bytes", bad])
            .output()
            .expect("the server runs");
        assert!(!out.status.success(), "{bad} taken");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("--webtransport-send-queue-bytes"), "{bad}: {err}");
    }
    // Under two ticks of a view's frames: a frame would push out its own datagrams.
    let out = std::process::Command::new(SERVER)
        .args(["--webtransport-listen", "127.0.0.1:0", "--view-budget-bytes", "20000"])
        .args(["--webtransport-send-queue-bytes", "32768"])
        .output()
        .expect("the server runs");
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("twice --view-budget-bytes"), "{err}");
}

#[tokio::test]
async fn a_peer_advertising_a_datagram_frame_under_the_header_is_counted_and_the_tick_goes_on() {
    // A datagram frame size of 9 bytes: quinn's limit is then under
    // WebTransport's own header (wtransport's max_datagram_size underflows,
    // a panic in a debug build). The hub sends datagrams on the tick's
    // thread: the session's view frames must be counted as not sent as
    // datagrams and come on the stream instead (it played blind before),
    // and the shard must keep ticking.
    let server = shard(&[]);
    let tiny = TransportPlayer::connect_advertising(&server, 9).await;
    let mut tiny = tiny.say_hello("Tiny").await;
    assert!(tiny.welcome.is_some(), "welcomed on the stream");
    let me = tiny.id();
    server.wait_metric_at_least("mino_webtransport_unsent_total{reason=\"no_datagrams\"}", 1.0).await;
    let deadline = Instant::now() + WAIT;
    loop {
        assert!(Instant::now() < deadline, "its own cell on the stream");
        if let Frame::Cell(c) = tiny.message().await {
            if c.entries.iter().any(|e| e.id.0 == me) {
                break;
            }
        }
    }
    server.wait_ticks(20).await;
    assert_eq!(server.metric("mino_webtransport_sessions").await, 1.0, "the session stays");
    // 200 bytes, over the header but under what any QUIC path carries: the
    // peer's own choice, served as no datagrams (its views whole on the
    // stream), not cut on the tick's thread into datagrams most cells do
    // not fit, counted as too big.
    drop(tiny);
    server.wait_metric("mino_webtransport_sessions", 0.0).await;
    let mut small = TransportPlayer::connect_advertising(&server, 200).await.say_hello("Small").await;
    // Towards the middle of the 2,000-unit world: at least 10 s of walking,
    // a frame each tick (walking towards the nearer wall, it stopped there
    // within a second now and then, and its frames with it).
    let x = small.welcome.as_ref().map_or(0.0, |w| w.x);
    small.input(if x < 1000.0 { 1.0 } else { -1.0 }, 0.0).await;
    let before = server.metric("mino_webtransport_unsent_total{reason=\"no_datagrams\"}").await;
    server.wait_metric_at_least("mino_webtransport_unsent_total{reason=\"no_datagrams\"}", before + 20.0).await;
    assert_eq!(server.metric("mino_webtransport_unsent_total{reason=\"too_big\"}").await, 0.0);
    drop(small);
}

/// A shard with WebTransport, cells of 100 units in a world of `world`
/// whose views reach 2 cells each way (a radius of 100 and the prefetch
/// ring), walkers at `speed` units a second, 60 ticks a second (a cell
/// expiry of 4,266 ms).
fn cells_of_100_at_60_hz(world: &str, speed: &str) -> Shard {
    let args = ["--webtransport-listen", "127.0.0.1:0", "--world-size", world, "--speed", speed];
    let cells = ["--cell-size", "100", "--view-radius", "100", "--tick-hz", "60"];
    Shard::start(SERVER, &[&args[..], &cells[..]].concat())
}

/// Where `id` is held by `wt`: its (shard, cell) and position, world units.
fn held_at(wt: &TransportPlayer, id: u32) -> Option<((u32, u32), (f32, f32))> {
    let bounds = wt.welcome.as_ref().expect("welcomed").bounds;
    let held = wt.held()?;
    held.cells().find_map(|(&key, c)| {
        let e = c.entries.iter().find(|e| e.id.0 == id)?;
        Some((key, mino_protocol::quantize::world_position(&bounds, e.x, e.y)))
    })
}

#[tokio::test]
async fn a_cell_whose_forgets_were_all_lost_is_dropped_at_the_welcomes_expiry() {
    // A session walks up to a standing player, then away until that
    // player's cell leaves its view; every datagram with a forget of that
    // cell is lost on the way. The session still holds the cell (its player
    // a ghost), but is sent nothing more of it, so it drops it once the
    // Welcome's cell expiry passed (4 refreshes of 64 ticks: 4,266 ms at 60
    // Hz). A 1000-unit world of 100-unit cells: the view (own and near
    // cells, and a prefetch ring) reaches 2 cells each way, and walking to
    // the corner away from the player puts 5 cells between them.
    let server = cells_of_100_at_60_hz("1000", "500");
    let still = Player::join(&server, "Still").await;
    let mut wt = TransportPlayer::join(&server, "Away").await;
    let expiry = wt.welcome.as_ref().map(|w| w.cell_expiry_ms);
    assert_eq!(expiry, Some(4 * 64 * 1000 / 60), "the Welcome gives a datagram session its cell expiry");
    assert_eq!(still.welcome.as_ref().map(|w| w.cell_expiry_ms), Some(0), "a websocket's cells never expire");
    let target = still.welcome.as_ref().map(|w| (w.x, w.y)).expect("welcomed");
    let deadline = Instant::now() + WAIT;
    // Up to the standing player, until its cell is held (steering a few
    // times a second, well within the input budget).
    let mut steered = Instant::now() - WAIT;
    let cell = loop {
        assert!(Instant::now() < deadline, "the session never held the standing player");
        if let Some((cell, _)) = held_at(&wt, still.id()) {
            break cell;
        }
        if let Some((_, (x, y))) = held_at(&wt, wt.id()).filter(|_| steered.elapsed() > Duration::from_millis(200)) {
            wt.input(target.0 - x, target.1 - y).await;
            steered = Instant::now();
        }
        wt.datagram().await;
    };
    // Away to the far corner, losing the cell's forgets.
    let b = wt.welcome.as_ref().expect("welcomed").bounds;
    let away = |v: f32, lo: f32, hi: f32| if v < (lo + hi) / 2.0 { 1.0 } else { -1.0 };
    wt.input(away(target.0, b.min_x(), b.max_x()), away(target.1, b.min_y(), b.max_y())).await;
    let forgets = |f: &mino_protocol::view::ViewFrame<'_>| {
        f.sections()
            .filter(|s| s.shard == cell.0)
            .any(|s| s.cells().any(|c| c.cell == cell.1 && c.items().any(|i| i.kind == ItemKind::Forget)))
    };
    let lost_at = loop {
        assert!(Instant::now() < deadline, "the cell never left the session's view");
        if wt.datagram_unless(forgets).await.is_none() {
            break Instant::now();
        }
    };
    assert!(wt.held().is_some_and(|h| h.cell(cell.0, cell.1).is_some()), "the lost forget left the cell held");
    // Nothing more of it comes: it is dropped by the expiry alone.
    let deadline = lost_at + Duration::from_millis(4_266) + WAIT;
    let (mut lost, mut dropped) = (1, None);
    while dropped.is_none() {
        assert!(Instant::now() < deadline, "the ghost cell was never dropped");
        match wt.datagram_unless(forgets).await {
            None => lost += 1,
            Some(frames) => {
                let forgot = |f: &Frame| matches!(*f, Frame::Forgot { shard, cell: c, .. } if (shard, c) == cell);
                if frames.iter().any(forgot) {
                    dropped = Some(lost_at.elapsed());
                }
            }
        }
    }
    let after = dropped.expect("dropped");
    assert!(wt.held().is_some_and(|h| h.cell(cell.0, cell.1).is_none()), "the cell is no longer held");
    // The cell was last sent something at most one refresh (64 ticks, 1.07
    // s) before it left the view; it is scanned for at most every second.
    assert!(after >= Duration::from_millis(4_266 - 1_100), "dropped {after:?} after its forget: before the expiry");
    assert!(after <= Duration::from_millis(4_266 + 2_500), "dropped {after:?} after its forget: long past the expiry");
    assert!(lost <= 3, "{lost} datagrams with its forget: a forget is repeated in 3 frames");
}

#[tokio::test]
async fn a_still_place_in_view_is_kept_past_the_cell_expiry() {
    // A standing place sends a session only its refreshes (every 64 ticks,
    // 1.07 s at 60 Hz), each the whole view: no cell in view goes unsent
    // for the expiry (4,266 ms), so none is dropped. A world of 3 x 3
    // cells of 100 is all in every view (the view reaches 2 cells each way).
    let server = cells_of_100_at_60_hz("300", "100");
    let still = Player::join(&server, "Still").await;
    let mut wt = TransportPlayer::join(&server, "Watcher").await;
    let deadline = Instant::now() + WAIT;
    while held_at(&wt, still.id()).is_none() {
        assert!(Instant::now() < deadline, "the session never held the standing player");
        wt.datagram().await;
    }
    // The players' cells (the refreshes also forget the empty cells, which
    // hold nothing).
    let cells = [held_at(&wt, still.id()), held_at(&wt, wt.id())].map(|at| at.map(|(cell, _)| cell));
    let from = Instant::now();
    let (mut datagrams, mut dropped) = (0, Vec::new());
    while from.elapsed() < Duration::from_millis(2 * 4_266) {
        for f in wt.datagram().await {
            let gone = match f {
                Frame::Forgot { shard, cell, .. } => cells.contains(&Some((shard, cell))),
                Frame::Reset { .. } => true,
                _ => false,
            };
            if gone {
                dropped.push(f);
            }
        }
        datagrams += 1;
    }
    assert!(cells.iter().all(Option::is_some), "both players held: {cells:?}");
    assert!(dropped.is_empty(), "the players' cells dropped in a still place: {dropped:?}");
    assert!(held_at(&wt, still.id()).is_some(), "the standing player is still held after twice the expiry");
    assert!((4..=40).contains(&datagrams), "{datagrams} datagrams in {:?}: refreshes only", from.elapsed());
}
