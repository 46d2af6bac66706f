//! Idle sockets in the hub (issue 17): a socket past its handshake has no
//! task and no read buffer of its own, so these tests hold the hub to what a
//! task per socket gave for free: many idle sockets that answer pings stay
//! open and all hear a place-wide chat line; bytes that arrive with the
//! upgrade, or a frame cut across writes (even across the handover from the
//! handshake task to the hub), are read whole.

use mino_protocol::client;
use mino_testkit::frame::Frame;
use mino_testkit::raw::{masked, op, RawReader, RawSocket};
use mino_testkit::Shard;

/// The server binary cargo built for these tests.
const SERVER: &str = env!("CARGO_BIN_EXE_mino-server");

/// Idle sockets in the first test: enough that the hub's readiness loop, not
/// one task each, must carry them; few enough for a test on 2 cores.
const IDLE: usize = 150;

/// Reads `reader` until a chat line with `text`, answering every ping with
/// its pong (through `pongs`); true when the line came before the end.
async fn hear(reader: &mut RawReader, text: &str, pongs: &tokio::sync::mpsc::UnboundedSender<Vec<u8>>) -> bool {
    while let Some(f) = reader.next().await {
        match f.opcode {
            op::PING => {
                let _ = pongs.send(masked(op::PONG, &f.payload));
            }
            op::BINARY => {
                if let Frame::Chat { text: t, .. } = Frame::decode(&f.payload) {
                    if t == text {
                        return true;
                    }
                }
            }
            op::CLOSE => return false,
            _ => {}
        }
    }
    false
}

#[tokio::test]
async fn idle_sockets_that_answer_pings_stay_open_and_all_hear_one_chat_line() {
    // Pings every 200 ms, silence closes after 2 s (room for a loaded
    // machine's late pong task): 4 s idle is twenty pings each, so a hub that
    // missed pongs (or pings) would close someone.
    let server = Shard::start(
        SERVER,
        &["--ping-interval-ms", "200", "--peer-timeout-ms", "2000", "--world-size", "4000", "--cell-size", "125"],
    );
    // Each socket answers pings from its join on, and ignores the rest until
    // the line; it is kept open (its reader, and its writer in the pong
    // task) until the counts below are read.
    let mut listeners = Vec::with_capacity(IDLE);
    for i in 0..IDLE {
        let (socket, _) = RawSocket::join(server.addr, &format!("Idle{i}")).await;
        let (mut reader, mut writer) = socket.split();
        let (pongs, mut outgoing) = tokio::sync::mpsc::unbounded_channel::<Vec<u8>>();
        tokio::spawn(async move {
            while let Some(pong) = outgoing.recv().await {
                if !writer.send_raw(&pong).await {
                    break;
                }
            }
        });
        listeners.push(tokio::spawn(async move {
            let heard = hear(&mut reader, "to all", &pongs).await;
            (heard, reader, pongs)
        }));
    }
    server.wait_metric("mino_players", IDLE as f64).await;
    assert_eq!(server.players().await, IDLE as u32);
    // Idle for 4 s of the shard's ticks: no socket ends (none hears the
    // line, which is not said yet).
    server.wait_ticks(80).await;
    let ended = listeners.iter().filter(|l| l.is_finished()).count();
    assert_eq!(ended, 0, "the socket ended (or heard the line) while idle");
    let (mut speaker, _) = RawSocket::join(server.addr, "Speaker").await;
    assert!(speaker.send(op::BINARY, &client::encode_chat("to all")).await);
    let mut heard = 0;
    let mut kept = Vec::with_capacity(IDLE);
    for l in listeners {
        let (got, reader, pongs) = l.await.expect("listener");
        heard += usize::from(got);
        kept.push((reader, pongs));
    }
    assert_eq!(heard, IDLE, "every idle socket hears the place-wide line");
    assert_eq!(server.metric("mino_sockets_closed_total{transport=\"websocket\",reason=\"peer_timeout\"}").await, 0.0);
    assert_eq!(server.players().await, IDLE as u32 + 1, "nobody was closed");
}

/// Reads `socket` until a chat line; its text.
async fn next_chat(socket: &mut RawSocket) -> String {
    loop {
        let f = socket.next().await.expect("a chat line before the end");
        if f.opcode == op::BINARY {
            if let Frame::Chat { text, .. } = Frame::decode(&f.payload) {
                return text;
            }
        }
        assert_ne!(f.opcode, op::CLOSE, "closed ({:?}) before the chat line", f.close_code());
    }
}

#[tokio::test]
async fn a_hello_and_a_chat_line_sent_with_the_upgrade_are_both_read() {
    let server = Shard::start(SERVER, &[]);
    // The request, the Hello and a chat line in one write: the chat line is
    // already read when the handshake task hands the socket to the hub.
    let early = [
        masked(op::BINARY, &client::encode_hello("Early", None, None)),
        masked(op::BINARY, &client::encode_chat("early")),
    ]
    .concat();
    let mut s = RawSocket::open(server.addr, &early).await;
    s.welcome().await;
    assert_eq!(next_chat(&mut s).await, "early");
}

#[tokio::test]
async fn a_frame_cut_across_writes_is_read_whole() {
    let server = Shard::start(SERVER, &[]);
    // Cut in the hub: half a chat frame, six ticks apart.
    let (mut s, _) = RawSocket::join(server.addr, "Cut").await;
    let chat = masked(op::BINARY, &client::encode_chat("cut in two"));
    let (head, tail) = chat.split_at(chat.len() / 2);
    assert!(s.send_raw(head).await);
    server.wait_ticks(6).await;
    assert!(s.send_raw(tail).await);
    assert_eq!(next_chat(&mut s).await, "cut in two");

    // Cut across the handover: the Hello whole and the head of a chat frame
    // with the upgrade, the tail once the hub owns the socket.
    let chat = masked(op::BINARY, &client::encode_chat("across the handover"));
    let (head, tail) = chat.split_at(3);
    let early = [masked(op::BINARY, &client::encode_hello("Across", None, None)), head.to_vec()].concat();
    let mut s = RawSocket::open(server.addr, &early).await;
    s.welcome().await;
    server.wait_ticks(6).await;
    assert!(s.send_raw(tail).await);
    assert_eq!(next_chat(&mut s).await, "across the handover");
}
