//! SIGINT: every socket gets "going away" (1001), the process joins its tasks
//! and exits 0. SIGTERM standalone (no Redis: there is no other shard to move
//! anyone to): every socket is closed at once with 1012 "service restart"
//! after an Error saying so, the log says plainly how many were disconnected
//! (never that they moved), and the process exits 0. SIGTERM clustered drains
//! with Move (tests/failover.rs).

use mino_protocol::wire::CloseCode;
use mino_testkit::{close_code, Player, Shard, Signal, WorkDir};
use std::time::{Duration, Instant};

/// The server binary cargo built for these tests.
const SERVER: &str = env!("CARGO_BIN_EXE_mino-server");

#[tokio::test]
async fn sigterm_standalone_closes_every_socket_with_service_restart_and_exits_zero() {
    let dir = WorkDir::new("shutdown");
    let log = dir.path().join("server.log");
    let mut server = Shard::start_logging_to(SERVER, &[], &log, "info");
    let mut a = Player::join(&server, "Ada").await;
    let mut b = Player::join(&server, "Bob").await;
    a.own_position().await;
    let sent = Instant::now();
    server.signal(Signal::SIGTERM);
    let restart = close_code(CloseCode::ServiceRestart);
    for c in [&mut a, &mut b] {
        assert_eq!(c.closed().await, (restart, restart), "1012 after an Error saying so");
    }
    assert!(sent.elapsed() < Duration::from_secs(2), "closed at once, not paced: {:?}", sent.elapsed());
    let status = server.wait_exit(Duration::from_secs(10)).expect("exited in time");
    assert!(status.success(), "exit status {status:?}");
    let text = std::fs::read_to_string(&log).expect("the log");
    assert!(text.contains("disconnected=2"), "the log counts who was disconnected:\n{text}");
    assert!(text.contains("every player disconnected"), "{text}");
    assert!(!text.contains("moved"), "nobody moved anywhere:\n{text}");
}

#[tokio::test]
async fn sigint_closes_sockets_with_going_away_and_exits_zero() {
    let mut server = Shard::start(SERVER, &[]);
    let mut a = Player::join(&server, "Ada").await;
    let mut b = Player::join(&server, "Bob").await;
    a.own_position().await;
    server.signal(Signal::SIGINT);
    assert_eq!(a.closed().await.0, close_code(CloseCode::GoingAway));
    assert_eq!(b.closed().await.0, close_code(CloseCode::GoingAway));
    let status = server.wait_exit(Duration::from_secs(10)).expect("exited in time");
    assert!(status.success(), "exit status {status:?}");
}

#[tokio::test]
async fn sighup_with_nothing_to_reload_is_said_and_the_shard_plays_on() {
    // SIGHUP is `systemctl reload`: a shard with no file to read again
    // said nothing and died of it (the signal's default), which systemd
    // takes for a clean exit and does not restart.
    let dir = WorkDir::new("sighup");
    let log = dir.join("shard.log");
    let server = Shard::build(SERVER).log_to(&log, "info").ready().await;
    let mut a = Player::join(&server, "Ada").await;
    a.own_position().await;
    server.signal(Signal::SIGHUP);
    assert!(server.logged("SIGHUP: nothing to reload").await, "{:?}", std::fs::read_to_string(&log));
    let mut b = Player::join(&server, "Bob").await;
    b.own_position().await;
    a.own_position().await;
    assert_eq!(server.players().await, 2, "both play on");
}

/// A shard whose log pipe's reader is gone (a log shipper, a `| head`, a
/// `| tee` that exited) still stops on a signal, with its usual exit: a log
/// line it cannot write is lost. (The log subscriber reported such a line
/// with a panicking `eprint!`, in the signal handler's task: the process then
/// ignored SIGTERM and SIGINT, and only SIGKILL ended it.)
#[test]
fn a_shard_whose_log_pipe_is_closed_still_stops_on_a_signal() {
    use mino_testkit::process::Process;
    use std::io::{BufRead, BufReader};
    use std::process::{Command, Stdio};
    for signal in [Signal::SIGTERM, Signal::SIGINT] {
        let port = mino_testkit::port::free_port();
        let mut cmd = Command::new(SERVER);
        cmd.args(["--listen", &format!("127.0.0.1:{port}")])
            .env("MINO_LOG", "info")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        // Killed on drop, whatever happens here.
        let mut server = Process::spawn("mino-server", &mut cmd);
        let stdout = server.child_mut().stdout.take().expect("piped");
        let (tx, ready) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut line = String::new();
            let _ = BufReader::new(stdout).read_line(&mut line);
            let _ = tx.send(line);
        });
        // The reader ends with its one line: both readers are gone, and every
        // later write to stdout or stderr fails (EPIPE).
        let line = ready.recv_timeout(Duration::from_secs(20)).expect("a ready line within 20 s");
        assert!(line.contains("listening on"), "{line}");
        drop(server.child_mut().stderr.take());
        assert!(server.signal(signal), "{signal:?} sent");
        let exit = server.wait_exit(Duration::from_secs(10));
        let exit =
            exit.unwrap_or_else(|| panic!("{signal:?}: the shard did not stop within 10 s with its log pipe closed"));
        assert!(exit.success(), "{signal:?}: exit status {exit:?}");
    }
}
