//! Bad input closes only the offending socket, with its own close code, and is
//! counted; other players are unaffected and nothing panics.

use mino_protocol::client;
use mino_protocol::wire::CloseCode;
use mino_testkit::{close_code, Frame, Player, Shard};
use tokio_tungstenite::tungstenite::Message;

/// The server binary cargo built for these tests.
const SERVER: &str = env!("CARGO_BIN_EXE_mino-server");

/// Joins a bystander, runs `attack` on a fresh socket, and checks the attack's
/// close code, the metric label, and that the bystander still gets snapshots.
async fn assert_closes(server: &Shard, attack: Vec<Message>, hello_first: bool, want: CloseCode, label: &str) {
    let mut bystander = Player::join(server, "Bystander").await;
    let mut c = if hello_first { Player::join(server, "Attacker").await } else { Player::connect(server).await };
    for m in attack {
        if !c.try_send(m).await {
            break;
        }
    }
    let (close, error) = c.closed().await;
    assert_eq!(close, close_code(want), "close code for {label}");
    if want != CloseCode::MessageTooBig {
        assert_eq!(error, close_code(want), "error message for {label}");
    }
    let before = bystander.own_position().await.0;
    let after = bystander.own_position().await.0;
    assert!(after > before, "bystander still ticking");
    let series = format!("mino_sockets_closed_total{{transport=\"websocket\",reason=\"{label}\"}}");
    let counted = server.wait_metric_at_least(&series, 1.0).await;
    assert!(counted >= 1.0, "{series} counted");
}

fn bin(b: Vec<u8>) -> Message {
    Message::Binary(b.into())
}

#[tokio::test]
async fn malformed_flatbuffer_closes_with_malformed() {
    let server = Shard::start(SERVER, &[]);
    assert_closes(
        &server,
        vec![bin(vec![0xde, 0xad, 0xbe, 0xef, 1, 2, 3])],
        false,
        CloseCode::MalformedMessage,
        "malformed",
    )
    .await;
    assert_closes(&server, vec![bin(vec![0xff; 64])], true, CloseCode::MalformedMessage, "malformed").await;
}

#[tokio::test]
async fn oversized_frame_closes_with_too_big() {
    let server = Shard::start(SERVER, &[]);
    assert_closes(&server, vec![bin(vec![0; 64 * 1024])], true, CloseCode::MessageTooBig, "too_big").await;
}

#[tokio::test]
async fn unknown_message_type_closes_with_unknown() {
    let server = Shard::start(SERVER, &[]);
    // A ClientMessage whose union tag (42) no server knows.
    let mut fbb = flatbuffers::FlatBufferBuilder::new();
    let ping = mino_protocol::wire::Ping::create(&mut fbb, &mino_protocol::wire::PingArgs { client_time_ms: 1.0 });
    let root = mino_protocol::wire::ClientMessage::create(
        &mut fbb,
        &mino_protocol::wire::ClientMessageArgs {
            body_type: mino_protocol::wire::ClientBody(42),
            body: Some(ping.as_union_value()),
        },
    );
    fbb.finish(root, None);
    assert_closes(&server, vec![bin(fbb.finished_data().to_vec())], true, CloseCode::UnknownMessage, "unknown_message")
        .await;
}

#[tokio::test]
async fn text_frame_closes_with_text_frame() {
    let server = Shard::start(SERVER, &[]);
    assert_closes(&server, vec![Message::Text("hi".into())], true, CloseCode::TextFrame, "text_frame").await;
}

#[tokio::test]
async fn first_message_must_be_hello() {
    let server = Shard::start(SERVER, &[]);
    assert_closes(
        &server,
        vec![bin(client::encode_input(1, 1.0, 0.0))],
        false,
        CloseCode::HelloExpected,
        "hello_expected",
    )
    .await;
}

#[tokio::test]
async fn wrong_protocol_version_and_bad_names_are_refused() {
    let server = Shard::start(SERVER, &[]);
    let old = client::encode_hello_version(999, "Ada", None, None);
    assert_closes(&server, vec![bin(old)], false, CloseCode::ProtocolVersion, "protocol_version").await;
    let long = client::encode_hello(&"x".repeat(100), None, None);
    assert_closes(&server, vec![bin(long)], false, CloseCode::NameInvalid, "name_invalid").await;
    let blank = client::encode_hello("   ", None, None);
    assert_closes(&server, vec![bin(blank)], false, CloseCode::NameInvalid, "name_invalid").await;
    // Text-direction overrides (they reorder what is drawn after the name)
    // and names of invisible characters only.
    for name in ["\u{202E}evil", "\u{200B}"] {
        let hello = client::encode_hello(name, None, None);
        assert_closes(&server, vec![bin(hello)], false, CloseCode::NameInvalid, "name_invalid").await;
    }
}

#[tokio::test]
async fn long_chat_is_refused() {
    let server = Shard::start(SERVER, &[]);
    let chat = client::encode_chat(&"y".repeat(500));
    assert_closes(&server, vec![bin(chat)], true, CloseCode::ChatTooLong, "chat_too_long").await;
}

#[tokio::test]
async fn input_flood_closes_with_input_flood() {
    let server = Shard::start(SERVER, &["--input-rate", "30"]);
    let flood = (0..200).map(|i| bin(client::encode_input(i, 1.0, 0.0))).collect();
    assert_closes(&server, flood, true, CloseCode::InputFlood, "input_flood").await;
}

#[tokio::test]
async fn chat_flood_closes_with_chat_flood() {
    let server = Shard::start(SERVER, &[]);
    let flood = (0..20).map(|i| bin(client::encode_chat(&format!("spam {i}")))).collect();
    assert_closes(&server, flood, true, CloseCode::ChatFlood, "chat_flood").await;
}

#[tokio::test]
async fn second_hello_is_malformed() {
    let server = Shard::start(SERVER, &[]);
    assert_closes(
        &server,
        vec![bin(client::encode_hello("again", None, None))],
        true,
        CloseCode::MalformedMessage,
        "malformed",
    )
    .await;
}

#[tokio::test]
async fn no_hello_in_time_closes_with_hello_timeout() {
    let server = Shard::start(SERVER, &["--handshake-timeout-ms", "300"]);
    let mut c = Player::connect(&server).await;
    let (close, _) = c.closed().await;
    assert_eq!(close, close_code(CloseCode::HelloTimeout));
}

#[tokio::test]
async fn ping_is_answered_with_pong() {
    let server = Shard::start(SERVER, &[]);
    let mut c = Player::join(&server, "Pinger").await;
    c.send(client::encode_ping(1234.5)).await;
    let t = c.until(|f| if let Frame::Pong(t) = f { Some(*t) } else { None }).await;
    assert_eq!(t, 1234.5);
}
