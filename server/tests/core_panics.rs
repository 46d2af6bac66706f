//! A panic in the shard core while it handles one connection's request or
//! message ends that connection only: 1011 where the peer can still be told,
//! counted in `mino_core_panics_total{kind}`, and the shard goes on serving
//! everyone else and admitting newcomers.
//!
//! The panics are injected with fail points (the `fail` crate; this file
//! needs the `failpoints` feature: `cargo test -p mino-server --features
//! failpoints --test core_panics`, which scripts/test.sh runs). The binary
//! without the feature has no fail point code at all.

use mino_protocol::client;
use mino_protocol::wire::CloseCode;
use mino_testkit::{close_code, Frame, Player, Shard};

/// The server binary cargo built for these tests.
const SERVER: &str = env!("CARGO_BIN_EXE_mino-server");

fn shard_with(failpoints: &str) -> Shard {
    Shard::start_with_env(SERVER, &[], &[("FAILPOINTS".to_owned(), failpoints.to_owned())])
}

/// Waits until `who` gets a snapshot that lists `id` (the shard ticks on).
async fn sees(who: &mut Player, id: u32) {
    who.until(|f| match f {
        Frame::Snapshot { players, .. } if players.iter().any(|p| p.0 == id) => Some(()),
        _ => None,
    })
    .await;
}

#[tokio::test]
async fn a_panic_on_a_players_message_closes_that_socket_only() {
    // The first message a player sends makes the core panic; later ones do not.
    let server = shard_with("core-event=1*panic->off");
    server.wait_ready().await;
    let mut ada = Player::join(&server, "Ada").await;
    let mut bob = Player::join(&server, "Bob").await;
    ada.send(client::encode_input(1, 1.0, 0.0)).await;
    let (code, error) = ada.closed().await;
    assert_eq!(code, close_code(CloseCode::InternalError), "the sender hears 1011");
    assert_eq!(error, close_code(CloseCode::InternalError));
    assert_eq!(server.metric("mino_core_panics_total{kind=\"event\"}").await, 1.0);
    // Everyone else goes on: Bob still gets ticks, walks, and a newcomer joins.
    let bob_id = bob.id();
    sees(&mut bob, bob_id).await;
    bob.send(client::encode_input(1, 0.0, 1.0)).await;
    let mut cleo = Player::join(&server, "Cleo").await;
    sees(&mut cleo, bob_id).await;
    assert_eq!(server.metric("mino_core_panics_total{kind=\"event\"}").await, 1.0, "one panic, once");
    // Ada's leave came back through the hub: she leaves the place (`until`
    // fails the test if no snapshot without her comes).
    let ada_id = ada.id();
    cleo.until(|f| match f {
        Frame::Snapshot { players, .. } if !players.iter().any(|p| p.0 == ada_id) => Some(()),
        _ => None,
    })
    .await;
}

#[tokio::test]
async fn a_panic_on_a_handshake_request_ends_that_connection_only() {
    // Ada's join is the first request; the second (Ada's resume holding a
    // place) panics; the rest do not.
    let server = shard_with("core-command=1*off->1*panic->off");
    server.wait_ready().await;
    let ada = Player::join(&server, "Ada").await;
    let ticket = ada.ticket();
    drop(ada);
    let (_, code) = Player::hello(&server, "Ada", Some(&ticket)).await.err().expect("refused");
    assert_eq!(code, close_code(CloseCode::InternalError), "the resuming peer hears 1011");
    assert_eq!(server.metric("mino_core_panics_total{kind=\"command\"}").await, 1.0);
    // The shard goes on: the same ticket resumes now, and a newcomer joins.
    let back = Player::hello(&server, "Ada", Some(&ticket)).await.expect("the ticket still resumes");
    assert!(back.welcome.as_ref().is_some_and(|w| w.resumed));
    let mut bob = Player::join(&server, "Bob").await;
    let bob_id = bob.id();
    sees(&mut bob, bob_id).await;
}

#[tokio::test]
async fn a_panic_on_a_join_tells_the_joiner_and_admits_the_next() {
    // The first request is Ada's join.
    let server = shard_with("core-command=1*panic->off");
    server.wait_ready().await;
    let (_, code) = Player::hello(&server, "Ada", None).await.err().expect("refused");
    assert_eq!(code, close_code(CloseCode::InternalError), "the joiner hears 1011, not a dropped socket");
    assert_eq!(server.metric("mino_core_panics_total{kind=\"command\"}").await, 1.0);
    let mut bob = Player::join(&server, "Bob").await;
    let bob_id = bob.id();
    sees(&mut bob, bob_id).await;
}

#[tokio::test]
async fn a_panic_that_ends_the_tick_stops_the_process_with_an_error() {
    // Outside the core's guards (one request, one message): the tick driver
    // itself. The shard must not go on listening with nothing ticking.
    let mut server = shard_with("tick=1*panic->off");
    let status = server.wait_exit(std::time::Duration::from_secs(10)).expect("the process stopped");
    assert_eq!(status.code(), Some(1), "an error exit: {status:?}");
}
