//! Chat from one player reaches every player, in order, with the sender's name.

use mino_protocol::client;
use mino_testkit::{Frame, Player, Shard};

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
