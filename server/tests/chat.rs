//! Chat from one player reaches every player, in order, with the sender's
//! name; a line is relayed as the chat line rule makes it (trimmed, control
//! characters made spaces, bidirectional overrides dropped, stacked marks
//! cut), and one with nothing visible is refused as an empty one is.

use mino_protocol::client;
use mino_protocol::wire::CloseCode;
use mino_testkit::{close_code, Frame, Player, Shard};

/// The server binary cargo built for these tests.
const SERVER: &str = env!("CARGO_BIN_EXE_mino-server");

#[tokio::test]
async fn chat_reaches_every_player_in_order() {
    let server = Shard::start(SERVER, &[]);
    let mut a = Player::join(&server, "Ada").await;
    let mut b = Player::join(&server, "Bob").await;
    let mut c = Player::join(&server, "Cy").await;
    a.send(client::encode_chat("hello all")).await;
    a.send(client::encode_chat("second")).await;
    for who in [&mut a, &mut b, &mut c] {
        let mut got = Vec::new();
        while got.len() < 2 {
            got.push(
                who.until(|f| match f {
                    Frame::Chat { name, text, .. } => Some(format!("{name}: {text}")),
                    _ => None,
                })
                .await,
            );
        }
        assert_eq!(got, ["Ada: hello all", "Ada: second"]);
    }
}

#[tokio::test]
async fn chat_text_is_trimmed_and_control_characters_replaced() {
    let server = Shard::start(SERVER, &[]);
    let mut a = Player::join(&server, "Ada").await;
    a.send(client::encode_chat("  a\u{7}b  ")).await;
    let text = a
        .until(|f| match f {
            Frame::Chat { text, .. } => Some(text.clone()),
            _ => None,
        })
        .await;
    assert_eq!(text, "a b");
}

#[tokio::test]
async fn overrides_are_dropped_stacked_marks_cut_and_an_invisible_line_refused() {
    let server = Shard::start(SERVER, &[]);
    let mut a = Player::join(&server, "Ada").await;
    let zalgo = format!("z{}", "\u{301}".repeat(190));
    a.send(client::encode_chat(&format!("\u{202E}evil {zalgo}"))).await;
    let text = a
        .until(|f| match f {
            Frame::Chat { text, .. } => Some(text.clone()),
            _ => None,
        })
        .await;
    assert_eq!(text, format!("evil z{}", "\u{301}".repeat(4)));
    a.send(client::encode_chat("\u{200B}\u{200B}\u{2800}")).await;
    assert_eq!(a.closed().await.0, close_code(CloseCode::ChatTooLong));
}
