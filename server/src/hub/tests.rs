//! The hub in process, on real loopback sockets, with tokio's clock paused:
//! the deadlines it keeps (a held welcome's backstop, the linger after a
//! close, the close frames' write timeout) and the spreading of ticket
//! refreshes over its sweeps, checked to the millisecond without waiting for
//! them. The peer is a plain blocking socket read with a real timeout.

use super::*;
use crate::config::{SocketConfig, Writes};
use crate::hub::conn::control_budget;
use crate::hub::rate_limit::TokenBucket;
use crate::websocket::reader::FrameReader;
use crate::websocket::Opcode;
use mino_protocol::limits::MAX_CLIENT_MESSAGE_BYTES;
use prometheus_client::registry::Registry;
use socket2::Socket;
use std::io::{ErrorKind, Read};
use std::net::{TcpListener, TcpStream};

/// Longest a test waits on the peer's socket, real time.
const PEER_WAIT: Duration = Duration::from_secs(5);

/// A loopback connection: the server's end as the hub takes it
/// (non-blocking), and the peer's (blocking, reads bounded by
/// [`PEER_WAIT`]).
pub(crate) fn loopback() -> (Socket, TcpStream) {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let peer = TcpStream::connect(listener.local_addr().expect("address")).expect("connect");
    let (server, _) = listener.accept().expect("accept");
    server.set_nonblocking(true).expect("non-blocking");
    peer.set_read_timeout(Some(PEER_WAIT)).expect("read timeout");
    (Socket::from(server), peer)
}

/// `socket` as a handshake task hands it over: nothing read past the Hello.
pub(crate) fn handover(socket: Socket, config: &SocketConfig) -> Handover {
    Handover {
        socket,
        reader: FrameReader::new(MAX_CLIENT_MESSAGE_BYTES),
        controls: TokenBucket::full(&control_budget(config), clock::now()),
        end: ReadEnd::Open,
        writes: Writes::Batched,
        slot: None,
    }
}

/// Player `n`, filed under link `n`.
pub(crate) fn joined(n: u32) -> Joined {
    let ticket = Ticket::issue(clock::wall_ms(), &mut rand::rng());
    Joined { player: PlayerId(n), link: LinkId(u64::from(n)), ticket, position: (0.0, 0.0) }
}

/// The next server frame on `peer` (unmasked): its opcode and payload;
/// `None` at the end of the stream.
///
/// Panics: nothing comes within [`PEER_WAIT`], or the bytes are not a frame.
pub(crate) fn next_frame(peer: &mut TcpStream) -> Option<(Opcode, Vec<u8>)> {
    let mut head = [0u8; 2];
    match peer.read_exact(&mut head) {
        Ok(()) => {}
        Err(e) if e.kind() == ErrorKind::UnexpectedEof => return None,
        Err(e) => panic!("no frame within {PEER_WAIT:?}: {e}"),
    }
    let len = match head[1] & 0x7f {
        126 => {
            let mut n = [0u8; 2];
            peer.read_exact(&mut n).expect("length");
            usize::from(u16::from_be_bytes(n))
        }
        127 => {
            let mut n = [0u8; 8];
            peer.read_exact(&mut n).expect("length");
            usize::try_from(u64::from_be_bytes(n)).expect("a length that fits")
        }
        n => usize::from(n),
    };
    let mut payload = vec![0; len];
    peer.read_exact(&mut payload).expect("payload");
    Some((Opcode::from_bits(head[0] & 0x0f).expect("an opcode"), payload))
}

/// A hub's settings for these tests: a peer is never timed out (the peers
/// here never answer pings), tickets live `ticket_ttl`.
fn config(ticket_ttl: Duration) -> Config {
    let mut config = Config { ticket_ttl, ..Config::default() };
    config.socket.peer_timeout = Duration::from_secs(3600);
    config
}

fn hub(config: &Config, tickets: Tickets) -> Hub {
    Hub::new(config, Metrics::register(&mut Registry::default()), tickets).expect("a hub")
}

/// The sweep's period for `config` (see [`Hub::new`]).
fn sweep_period(config: &Config) -> Duration {
    config.socket.sweep_period()
}

#[tokio::test(start_paused = true)]
async fn a_held_welcome_goes_out_when_released() {
    let config = config(Duration::from_secs(600));
    let mut hub = hub(&config, Tickets::Local);
    let (socket, mut peer) = loopback();
    hub.join(handover(socket, &config.socket), &joined(1), None, b"welcome", Welcome::Held);
    assert_eq!(hub.held.len(), 1, "held, not written");
    hub.welcome(LinkId(1));
    assert!(hub.held.is_empty());
    assert_eq!(next_frame(&mut peer), Some((Opcode::Binary, b"welcome".to_vec())));
}

#[tokio::test(start_paused = true)]
async fn a_held_welcome_nobody_releases_goes_out_at_its_backstop() {
    let config = config(Duration::from_secs(600));
    let mut hub = hub(&config, Tickets::Local);
    let (socket, mut peer) = loopback();
    let start = clock::now();
    hub.join(handover(socket, &config.socket), &joined(1), None, b"welcome", Welcome::Held);
    // The tick sweeps every 50 ms; the welcome waits until HELD_MAX.
    let step = Duration::from_millis(50);
    while !hub.held.is_empty() {
        assert!(clock::now() - start < HELD_MAX + sweep_period(&config), "held past its backstop");
        tokio::time::advance(step).await;
        hub.sweep(clock::now());
    }
    let waited = clock::now() - start;
    assert!(waited >= HELD_MAX, "released at {waited:?}, before the backstop");
    assert_eq!(next_frame(&mut peer), Some((Opcode::Binary, b"welcome".to_vec())));
}

#[tokio::test(start_paused = true)]
async fn ticket_refreshes_are_spread_over_the_sweeps_each_a_third_of_the_ttl() {
    // Tickets of 30 s: each refreshed every 10 s, i.e. every 10 sweeps of 1 s.
    let config = config(Duration::from_secs(30));
    let period = sweep_period(&config);
    assert_eq!(period, Duration::from_secs(1));
    let mut hub = hub(&config, Tickets::Redis);
    let mut peers = Vec::new();
    for n in 1..=20 {
        let (socket, peer) = loopback();
        hub.join(handover(socket, &config.socket), &joined(n), None, b"welcome", Welcome::Now);
        peers.push(peer);
    }
    let mut last: HashMap<PlayerId, u32> = HashMap::new();
    let mut per_sweep = Vec::new();
    for sweep in 1..=30 {
        tokio::time::advance(period).await;
        let refreshed = hub.sweep(clock::now());
        per_sweep.push(refreshed.len());
        for r in refreshed {
            if let Some(before) = last.insert(r.player, sweep) {
                assert_eq!(sweep - before, 10, "{} refreshed every 10 sweeps", r.player);
            }
        }
    }
    assert_eq!(last.len(), 20, "every player refreshed");
    assert_eq!(per_sweep.iter().sum::<usize>(), 60, "each three times in 30 sweeps");
    assert!(per_sweep.iter().all(|n| *n <= 3), "spread, not all at once: {per_sweep:?}");
    assert!(hub.sweep(clock::now()).is_empty(), "no sweep before its period");
}

#[tokio::test(start_paused = true)]
async fn standalone_tickets_are_never_refreshed() {
    let config = config(Duration::from_secs(3));
    let mut hub = hub(&config, Tickets::Local);
    let (socket, _peer) = loopback();
    hub.join(handover(socket, &config.socket), &joined(1), None, b"welcome", Welcome::Now);
    for _ in 0..10 {
        tokio::time::advance(sweep_period(&config)).await;
        assert!(hub.sweep(clock::now()).is_empty());
    }
}

#[tokio::test(start_paused = true)]
async fn a_closed_socket_lingers_until_the_peer_answers_or_the_linger_ends() {
    let config = config(Duration::from_secs(600));
    let mut hub = hub(&config, Tickets::Local);
    let (socket, mut peer) = loopback();
    hub.join(handover(socket, &config.socket), &joined(1), None, b"welcome", Welcome::Now);
    hub.close_link(LinkId(1), CloseReason::Shutdown, None);
    // The welcome and the Error message, then the close frame with its code.
    let close = loop {
        match next_frame(&mut peer) {
            Some((Opcode::Close, payload)) => break payload,
            Some(_) => {}
            None => panic!("closed before the close frame"),
        }
    };
    assert_eq!(close[..2], CloseReason::Shutdown.code().0.to_be_bytes());
    // The peer says nothing: the socket stays (half-closed, reading) for
    // LINGER, then goes.
    tokio::time::advance(LINGER - Duration::from_millis(1)).await;
    hub.expire(clock::now());
    assert_eq!(hub.len(), 1, "still lingering");
    tokio::time::advance(Duration::from_millis(1)).await;
    hub.expire(clock::now());
    assert_eq!(hub.len(), 0, "dropped at the end of the linger");
    assert_eq!(next_frame(&mut peer), None, "closed");
}

#[tokio::test(start_paused = true)]
async fn close_frames_a_peer_never_reads_are_given_up_after_the_write_timeout() {
    let config = config(Duration::from_secs(600));
    let mut hub = hub(&config, Tickets::Local);
    let (socket, _peer) = loopback();
    socket.set_send_buffer_size(4096).expect("SO_SNDBUF");
    hub.join(handover(socket, &config.socket), &joined(1), None, b"welcome", Welcome::Now);
    // The peer reads nothing: 4 MiB fill both kernel buffers and stay queued.
    hub.send(LinkId(1), ws_frame::binary(&vec![7; 4 << 20]));
    hub.close_link(LinkId(1), CloseReason::Shutdown, None);
    tokio::time::advance(CLOSE_WRITE_TIMEOUT - Duration::from_millis(1)).await;
    hub.expire(clock::now());
    assert_eq!(hub.len(), 1, "still trying to write its close frames");
    tokio::time::advance(Duration::from_millis(1)).await;
    hub.expire(clock::now());
    assert_eq!(hub.len(), 0, "given up at the write timeout");
}

#[tokio::test(start_paused = true)]
async fn a_quiet_tick_visits_only_its_recipients_yet_every_due_ping_goes_out() {
    use crate::shard::{Recipients, TickFrame, ViewFrames};
    let config = config(Duration::from_secs(600));
    let mut hub = hub(&config, Tickets::Local);
    let mut peers = Vec::new();
    for n in 1..=3 {
        let (socket, mut peer) = loopback();
        hub.join(handover(socket, &config.socket), &joined(n), None, b"welcome", Welcome::Now);
        assert_eq!(next_frame(&mut peer), Some((Opcode::Binary, b"welcome".to_vec())));
        peer.set_read_timeout(Some(Duration::from_millis(200))).expect("read timeout");
        peers.push(peer);
    }
    let quiet = |tick: u64, to: Option<u64>| TickFrame {
        tick: mino_protocol::Tick(tick),
        views: vec![ViewFrames { frames: vec![ws_frame::binary(b"view")] }],
        recipients: Recipients::new(to.map(|l| (LinkId(l), 0)).into_iter().collect()),
        ..TickFrame::default()
    };
    let mut resync = Vec::new();
    hub.deliver(&quiet(1, Some(2)), &mut resync);
    assert!(hub.attention.is_empty(), "nothing pending anywhere: the next quiet tick visits only its recipients");
    assert_eq!(next_frame(&mut peers[1]), Some((Opcode::Binary, b"view".to_vec())));
    let mut nothing = [0u8; 1];
    for i in [0, 2] {
        assert!(peers[i].read(&mut nothing).is_err(), "socket {} is not a recipient: written nothing", i + 1);
    }
    // A ping falls due on a tick that brings nobody anything: it goes out.
    tokio::time::advance(config.socket.ping_interval + sweep_period(&config)).await;
    hub.sweep(clock::now());
    hub.deliver(&quiet(2, None), &mut resync);
    for peer in &mut peers {
        assert_eq!(next_frame(peer).map(|(op, _)| op), Some(Opcode::Ping));
    }
    assert!(hub.attention.is_empty());
}
