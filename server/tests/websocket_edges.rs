//! The websocket layer as a hostile or unusual client meets it, against the
//! real binary, by the categories of a conformance suite: the opening
//! handshake, framing, fragmentation, control frames, close handling, UTF-8
//! and limits. Each fault closes only its own socket, with the code RFC 6455
//! (or mino's schema) gives it, and the connection then ends with a FIN, so
//! the peer can read why.

use mino_protocol::client;
use mino_testkit::raw::{close_payload, frame, masked, op, upgrade_request, Ending, RawSocket, KEY};
use mino_testkit::{Player, Shard};
use std::time::Duration;

/// The server binary cargo built for these tests.
const SERVER: &str = env!("CARGO_BIN_EXE_mino-server");

/// A joined raw socket sends `bytes`; how the server ends it.
async fn after_join(server: &Shard, bytes: &[u8]) -> Ending {
    let (mut s, _) = RawSocket::join(server.addr, "Edge").await;
    s.send_raw(bytes).await;
    s.ending().await
}

/// Polls `series` until it reaches `want` (it only grows).
async fn counted(server: &Shard, series: &str, want: f64) {
    server.wait_metric_at_least(series, want).await;
}

fn closed(reason: &str) -> String {
    format!("mino_sockets_closed_total{{transport=\"websocket\",reason=\"{reason}\"}}")
}

// ------------------------------------------------------------- handshake

#[tokio::test]
async fn the_key_must_be_the_base64_of_16_bytes_and_appear_once() {
    let server = Shard::start(SERVER, &[]);
    let common = ["Connection: Upgrade", "Upgrade: websocket", "Sec-WebSocket-Version: 13"];
    let key = |k: &str| format!("Sec-WebSocket-Key: {k}");
    let cases: Vec<Vec<String>> = vec![
        vec![key("x")],
        vec![key("")],
        vec![key("dGhlIHNhbXBsZSBub25jZQ")],
        vec![key("dGhlIHNhbXBsZSBub25jZR==")],
        vec![key("dGhlIHNhbXBsZSBub25jZXM=")],
        vec![key("!!!!!!!!!!!!!!!!!!!!!!==")],
        vec![key(KEY), key(KEY)],
        vec![],
    ];
    for (i, extra) in cases.iter().enumerate() {
        let headers: Vec<&str> = common.iter().copied().chain(extra.iter().map(String::as_str)).collect();
        let (_, status, head) = RawSocket::request(server.addr, &upgrade_request(&headers), &[]).await;
        assert_eq!(status, 400, "case {i} {extra:?}: {head}");
    }
    counted(&server, "mino_upgrades_refused_total{reason=\"key\"}", cases.len() as f64).await;
    assert_eq!(server.metric("mino_connections").await, 0.0, "no session was started");
    assert_eq!(server.metric("mino_players").await, 0.0);
    let (mut ok, status, _) =
        RawSocket::request(server.addr, &upgrade_request(&[&common[..], &[&key(KEY)[..]]].concat()), &[]).await;
    assert_eq!(status, 101);
    ok.send(op::BINARY, &client::encode_hello("Valid", None, None)).await;
    ok.welcome().await;
}

#[tokio::test]
async fn another_websocket_version_is_told_the_one_spoken() {
    let server = Shard::start(SERVER, &[]);
    let request = upgrade_request(&[
        "Connection: Upgrade",
        "Upgrade: websocket",
        "Sec-WebSocket-Version: 8",
        &format!("Sec-WebSocket-Key: {KEY}"),
    ]);
    let (_, status, head) = RawSocket::request(server.addr, &request, &[]).await;
    assert_eq!(status, 426, "{head}");
    assert!(head.to_ascii_lowercase().contains("sec-websocket-version: 13"), "{head}");
    counted(&server, "mino_upgrades_refused_total{reason=\"version\"}", 1.0).await;
}

#[tokio::test]
async fn frames_coalesced_with_the_upgrade_are_read() {
    let server = Shard::start(SERVER, &[]);
    let hello = masked(op::BINARY, &client::encode_hello("Eager", None, None));
    let mut s = RawSocket::open(server.addr, &hello).await;
    assert!(s.welcome().await.player_id > 0);
}

// --------------------------------------------------------------- framing

#[tokio::test]
async fn framing_faults_close_with_a_protocol_error() {
    let server = Shard::start(SERVER, &[]);
    let input = client::encode_input(1, 1.0, 0.0);
    let faults: [(&str, Vec<u8>); 9] = [
        ("rsv1", frame(true, 4, op::BINARY, true, &input)),
        ("rsv3", frame(true, 1, op::PING, true, b"")),
        ("reserved data opcode", frame(true, 0, 0x3, true, &input)),
        ("reserved control opcode", frame(true, 0, 0xB, true, b"")),
        ("unmasked", frame(true, 0, op::BINARY, false, &input)),
        ("fragmented ping", frame(false, 0, op::PING, true, b"half")),
        ("ping over 125 bytes", frame(true, 0, op::PING, true, &[7; 126])),
        ("stray continuation", frame(true, 0, op::CONTINUATION, true, &input)),
        (
            "data inside a fragmented message",
            [frame(false, 0, op::BINARY, true, &input[..4]), masked(op::BINARY, &input)].concat(),
        ),
    ];
    for (i, (what, bytes)) in faults.iter().enumerate() {
        let end = after_join(&server, bytes).await;
        assert_eq!(end.code, Some(1002), "{what}: {end:?}");
        assert!(end.clean, "{what}: the connection ends with a FIN");
        assert_eq!(end.error, None, "{what}: a broken websocket gets the close frame only");
        counted(&server, &closed("protocol_error"), (i + 1) as f64).await;
    }
    assert_eq!(server.metric(&closed("malformed")).await, 0.0);
}

#[tokio::test]
async fn a_fragmented_hello_is_reassembled_around_a_ping() {
    let server = Shard::start(SERVER, &[]);
    let hello = client::encode_hello("Pieces", None, None);
    let (a, rest) = hello.split_at(5);
    let (b, c) = rest.split_at(rest.len() / 2);
    let bytes = [
        frame(false, 0, op::BINARY, true, a),
        masked(op::PING, b"between"),
        frame(false, 0, op::CONTINUATION, true, b),
        frame(true, 0, op::CONTINUATION, true, c),
    ]
    .concat();
    let mut s = RawSocket::open(server.addr, &[]).await;
    s.send_raw(&bytes).await;
    let pong = s.next().await.expect("the pong");
    assert_eq!((pong.opcode, pong.payload.as_slice()), (op::PONG, &b"between"[..]));
    assert!(s.welcome().await.player_id > 0);
}

// ----------------------------------------------------------------- UTF-8

#[tokio::test]
async fn text_is_refused_and_text_that_is_not_utf8_is_an_invalid_payload() {
    let server = Shard::start(SERVER, &[]);
    let text = after_join(&server, &masked(op::TEXT, "héllo".as_bytes())).await;
    assert_eq!((text.code, text.error), (Some(4012), Some(4012)), "{text:?}");
    let bad = after_join(&server, &masked(op::TEXT, &[0x68, 0xc3, 0x28])).await;
    assert_eq!((bad.code, bad.error, bad.clean), (Some(1007), None, true), "{bad:?}");
    let reason = after_join(&server, &masked(op::CLOSE, &close_payload(1000, &[0xff, 0xfe]))).await;
    assert_eq!(reason.code, Some(1007), "a close reason that is not UTF-8: {reason:?}");
    counted(&server, &closed("invalid_utf8"), 2.0).await;
}

// ---------------------------------------------------------------- limits

#[tokio::test]
async fn frames_and_messages_over_the_limit_are_too_big() {
    let server = Shard::start(SERVER, &[]);
    let big = after_join(&server, &masked(op::BINARY, &[0; 5000])).await;
    assert_eq!((big.code, big.clean), (Some(1009), true), "one frame: {big:?}");
    let pieces = [
        frame(false, 0, op::BINARY, true, &[0; 2000]),
        frame(false, 0, op::CONTINUATION, true, &[0; 2000]),
        frame(true, 0, op::CONTINUATION, true, &[0; 2000]),
    ]
    .concat();
    let split = after_join(&server, &pieces).await;
    assert_eq!(split.code, Some(1009), "fragments adding up past the limit: {split:?}");
    // A 64-bit length with the top bit set, and no payload to follow.
    let huge = [0x82, 0xff, 0x80, 0, 0, 0, 0, 0, 0, 1, 1, 2, 3, 4];
    let end = after_join(&server, &huge).await;
    assert!(matches!(end.code, Some(1002 | 1009)), "{end:?}");
    counted(&server, &closed("too_big"), 2.0).await;
}

// ---------------------------------------------------------- close handling

#[tokio::test]
async fn close_codes_that_may_be_sent_close_normally() {
    let server = Shard::start(SERVER, &[]);
    // (1014, registered later, reaches the session as 1002: tungstenite does not
    // know it.)
    for code in [1000, 1001, 1003, 1007, 1008, 1011, 1012, 1013, 3000, 3999, 4000, 4999] {
        let end = after_join(&server, &masked(op::CLOSE, &close_payload(code, b"done"))).await;
        assert_eq!((end.code, end.reason.as_str(), end.clean), (Some(1000), "bye", true), "{code}");
    }
    let empty = after_join(&server, &masked(op::CLOSE, b"")).await;
    assert_eq!((empty.code, empty.clean), (Some(1000), true), "a close without a code");
    assert_eq!(server.metric(&closed("protocol_error")).await, 0.0);
}

#[tokio::test]
async fn close_codes_that_must_never_be_sent_are_protocol_errors() {
    let server = Shard::start(SERVER, &[]);
    let codes = [0, 999, 1004, 1005, 1006, 1015, 1016, 2000, 2999, 5000, 65535];
    for code in codes {
        let end = after_join(&server, &masked(op::CLOSE, &close_payload(code, b""))).await;
        assert_eq!((end.code, end.clean), (Some(1002), true), "{code}: {end:?}");
    }
    let one_byte = after_join(&server, &masked(op::CLOSE, &[3])).await;
    assert_eq!(one_byte.code, Some(1002), "a one-byte close payload");
    counted(&server, &closed("protocol_error"), (codes.len() + 1) as f64).await;
    assert_eq!(server.metric(&closed("client_closed")).await, 0.0);
}

#[tokio::test]
async fn a_fin_without_a_close_frame_is_a_plain_disconnect() {
    let server = Shard::start(SERVER, &[]);
    for _ in 0..3 {
        let (mut s, _) = RawSocket::join(server.addr, "Leaver").await;
        s.fin().await;
        let end = s.ending().await;
        assert_eq!(end.error, None, "no Error for a peer that left: {end:?}");
    }
    counted(&server, &closed("client_closed"), 3.0).await;
    assert_eq!(server.metric(&closed("malformed")).await, 0.0);
    assert_eq!(server.metric(&closed("protocol_error")).await, 0.0);
    server.wait_metric("mino_players", 0.0).await;
}

#[tokio::test]
async fn a_flood_sent_at_once_still_reads_its_reason() {
    use futures_util::SinkExt;
    use tokio_tungstenite::tungstenite::Message;
    let server = Shard::start(SERVER, &["--input-rate", "30"]);
    // A browser-like client: 10,000 inputs written at once, then read.
    let mut p = Player::join(&server, "Flooder").await;
    for i in 0..10_000 {
        p.ws.feed(Message::Binary(client::encode_input(i, 1.0, 0.0).into())).await.expect("queued");
    }
    let _ = p.ws.flush().await;
    let (close, error) = p.closed().await;
    assert_eq!((close, error), (Some(4007), Some(4007)), "the reason arrives, not a reset (1006)");
    // The same at the byte level: the reason, then a FIN.
    let burst: Vec<u8> = (0..10_000).flat_map(|i| masked(op::BINARY, &client::encode_input(i, 0.0, 1.0))).collect();
    let end = after_join(&server, &burst).await;
    assert_eq!(
        (end.code, end.error, end.reason.as_str(), end.clean),
        (Some(4007), Some(4007), "too many inputs", true)
    );
}

#[tokio::test]
async fn a_closing_server_reads_on_until_the_peers_close_frame() {
    let server = Shard::start(SERVER, &["--input-rate", "30"]);
    let (mut s, _) = RawSocket::join(server.addr, "Polite").await;
    let burst: Vec<u8> = (0..200).flat_map(|i| masked(op::BINARY, &client::encode_input(i, 0.0, 1.0))).collect();
    s.send_raw(&burst).await;
    let close = loop {
        let f = s.next().await.expect("the close frame");
        if f.opcode == op::CLOSE {
            break f;
        }
    };
    assert_eq!(close.close_code(), Some(4007));
    // The server half-closed and waits: our close frame ends it at once.
    let started = std::time::Instant::now();
    assert!(s.send(op::CLOSE, &close_payload(4007, b"")).await);
    assert!(s.next().await.is_none(), "then the end");
    assert!(started.elapsed() < Duration::from_secs(1), "ended by our close, not the linger's timeout");
}
