//! A shard listens on a Unix socket (`--listen unix:PATH`, for nginx on the
//! same machine): players play over it, the file gets its mode, a stale
//! socket left by a killed shard is replaced, a live one or another file is
//! never touched, and the file is gone after a clean exit.

use futures_util::{SinkExt, StreamExt};
use mino_protocol::{client, PROTOCOL_VERSION};
use mino_testkit::{http, Frame, Shard, Signal, WorkDir, WAIT};

use std::os::unix::fs::{FileTypeExt, PermissionsExt};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;
use tokio::net::UnixStream;
use tokio_tungstenite::tungstenite::Message;

/// The server binary cargo built for these tests.
const SERVER: &str = env!("CARGO_BIN_EXE_mino-server");

/// Opens a websocket over the Unix socket at `path`, says hello as `name`,
/// and returns the socket and the first frame it got back.
async fn hello_over(path: &Path, name: &str) -> (tokio_tungstenite::WebSocketStream<UnixStream>, Frame) {
    let stream = UnixStream::connect(path).await.expect("connect to the unix socket");
    let (mut ws, _) = tokio::time::timeout(WAIT, tokio_tungstenite::client_async("ws://localhost/ws", stream))
        .await
        .expect("upgrade in time")
        .expect("upgrade");
    // Full forms: every cell each tick, so frames keep coming while it stands.
    let hello = client::encode_hello_with(PROTOCOL_VERSION, name, None, None, client::Capabilities::NONE);
    ws.send(Message::Binary(hello.into())).await.expect("send hello");
    let first = loop {
        match tokio::time::timeout(WAIT, ws.next()).await.expect("a frame in time") {
            Some(Ok(Message::Binary(b))) => break Frame::decode(&b),
            Some(Ok(_)) => continue,
            other => panic!("closed before the welcome: {other:?}"),
        }
    };
    (ws, first)
}

fn mode_of(path: &Path) -> u32 {
    std::fs::metadata(path).expect("socket file").permissions().mode() & 0o777
}

#[tokio::test]
async fn a_player_plays_over_a_unix_socket() {
    let dir = WorkDir::new("unix-play");
    let path = dir.join("shard.sock");
    let shard = Shard::start_unix(SERVER, &path, &[]);
    assert_eq!(shard.socket.as_deref(), Some(path.as_path()));
    assert!(std::fs::symlink_metadata(&path).expect("socket file").file_type().is_socket());
    assert_eq!(mode_of(&path), 0o660, "owner and group may connect, nobody else");

    let (mut ws, first) = hello_over(&path, "Ada").await;
    let Frame::Welcome(welcome) = first else { panic!("not a welcome: {first:?}") };
    // View frames keep coming over the socket, the player in them.
    let mut frames = 0;
    while frames < 5 {
        if let Some(Ok(Message::Binary(b))) = tokio::time::timeout(WAIT, ws.next()).await.expect("a frame in time") {
            if let Frame::Cell(c) = Frame::decode(&b) {
                let ids: Vec<u32> = c.entries.iter().map(|e| e.id.0).collect();
                assert!(ids.contains(&welcome.player_id), "own player in the frame: {ids:?}");
                frames += 1;
            }
        }
    }
    shard.wait_metric("mino_players", 1.0).await;
    // Plain HTTP over the socket too; the probes are the admin listener's
    // (a shard with one serves no operator route to players).
    assert_eq!(http::request_unix(&path, "GET", "/healthz").await.status, 404, "not on the players' socket");
    assert_eq!(shard.operator_get("/healthz").await.status, 200, "on the admin listener");
}

#[tokio::test]
async fn the_socket_file_takes_the_configured_mode() {
    let dir = WorkDir::new("unix-mode");
    let path = dir.join("shard.sock");
    let _shard = Shard::start_unix(SERVER, &path, &["--listen-mode", "0600"]);
    assert_eq!(mode_of(&path), 0o600);
}

#[tokio::test]
async fn a_killed_shards_stale_socket_is_replaced_by_the_next_one() {
    let dir = WorkDir::new("unix-stale");
    let path = dir.join("shard.sock");
    let mut first = Shard::start_unix(SERVER, &path, &[]);
    first.process().kill9();
    assert!(path.exists(), "SIGKILL leaves the socket file behind");
    let second = Shard::start_unix(SERVER, &path, &[]);
    let (_ws, frame) = hello_over(&path, "Bo").await;
    assert!(matches!(frame, Frame::Welcome(_)), "{frame:?}");
    second.wait_metric("mino_players", 1.0).await;
}

/// Runs the server on `path` expecting it to refuse to start; returns its
/// exit code and what it printed on stderr.
fn refused_start(path: &Path) -> (Option<i32>, String) {
    let out = Command::new(SERVER)
        .arg("--listen")
        .arg(format!("unix:{}", path.display()))
        .stdin(Stdio::null())
        .output()
        .expect("run mino-server");
    (out.status.code(), String::from_utf8_lossy(&out.stderr).into_owned())
}

#[tokio::test]
async fn a_live_socket_and_other_files_are_never_taken_over() {
    let dir = WorkDir::new("unix-taken");
    let path = dir.join("shard.sock");
    let live = Shard::start_unix(SERVER, &path, &[]);
    let (code, stderr) = refused_start(&path);
    assert_ne!(code, Some(0));
    assert!(stderr.contains("in use"), "{stderr}");
    live.wait_ready().await;
    let (_ws, frame) = hello_over(&path, "Cy").await;
    assert!(matches!(frame, Frame::Welcome(_)), "the first shard keeps its socket: {frame:?}");

    let file = dir.write("not-a-socket", "keep me");
    let (code, stderr) = refused_start(&file);
    assert_ne!(code, Some(0));
    assert!(stderr.contains("not a socket"), "{stderr}");
    assert_eq!(std::fs::read_to_string(&file).expect("still there"), "keep me");

    let (code, stderr) = refused_start(&dir.join("no-such-folder/shard.sock"));
    assert_eq!(code, Some(1));
    // Said once, on one line, with no backtrace (it printed the cause twice,
    // then a backtrace when RUST_BACKTRACE was set).
    assert_eq!(stderr.matches("folder does not exist").count(), 1, "{stderr}");
    assert!(!stderr.to_lowercase().contains("backtrace"), "{stderr}");
    assert!(stderr.starts_with("mino-server: cannot listen on a unix socket: "), "{stderr}");
}

#[tokio::test]
async fn the_socket_file_is_removed_after_a_clean_exit() {
    let dir = WorkDir::new("unix-exit");
    for signal in [Signal::SIGINT, Signal::SIGTERM] {
        let path = dir.join(format!("{signal}.sock"));
        let mut shard = Shard::start_unix(SERVER, &path, &[]);
        shard.wait_ready().await;
        shard.signal(signal);
        let status = shard.wait_exit(Duration::from_secs(15)).expect("exited");
        assert!(status.success(), "{signal}: {status:?}");
        assert!(!path.exists(), "{signal}: the socket file is removed");
    }
}
