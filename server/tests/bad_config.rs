//! A bad configuration, the files it names included (admin tokens, identity
//! keys), and a Redis URL that is not one, end the process before it binds
//! anything: it exits 2 with a message naming what is wrong, and never says
//! it listens (neither "listening on" nor "admin on"), even with an admin
//! listener beyond loopback asked for.

use mino_testkit::process;
use mino_testkit::WorkDir;
use std::process::Command;
use std::time::Duration;

/// The server binary cargo built for these tests.
const SERVER: &str = env!("CARGO_BIN_EXE_mino-server");

/// Runs the server with `args` (on 127.0.0.1 port 0, logging at debug)
/// expecting it to refuse to start: its exit code, stdout and stderr.
fn refused(args: &[&str]) -> (Option<i32>, String, String) {
    refused_with(args, "debug")
}

/// [`refused`] with MINO_LOG set to `log`.
fn refused_with(args: &[&str], log: &str) -> (Option<i32>, String, String) {
    let mut cmd = Command::new(SERVER);
    cmd.args(["--listen", "127.0.0.1:0"]).args(args).env("MINO_LOG", log);
    let out = process::run("mino-server", &mut cmd, Duration::from_secs(20));
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    (out.status.code(), text(&out.stdout), text(&out.stderr))
}

#[test]
fn a_bad_configuration_ends_the_process_before_it_binds_anything() {
    let dir = WorkDir::new("bad-config");
    let bad_tokens = dir.write("tokens", "alice short\n").display().to_string();
    let short_secret = dir.write("secret", "too short\n").display().to_string();
    let oct = dir.write(
        "jwks.json",
        r#"{"keys":[{"kty":"oct","kid":"k","k":"c2VjcmV0LXNlY3JldC1zZWNyZXQtc2VjcmV0LXNlY3JldA"}]}"#,
    );
    let oct = oct.display().to_string();
    let missing = dir.join("nothing-here").display().to_string();
    let cases: [(&[&str], &str); 18] = [
        (&["--admin-listen", "0.0.0.0:0", "--admin-token-file", &bad_tokens], "line 1"),
        (&["--admin-listen", "127.0.0.1:0", "--admin-token-file", &missing], "nothing-here"),
        (&["--admin-listen", "127.0.0.1:0", "--auth-hs256-secret-file", &short_secret], "at least 32"),
        (&["--auth-jwks-file", &oct], "--auth-hs256-secret-file"),
        (&["--auth-public-key-file", &missing], "nothing-here"),
        (&["--admin-listen", "127.0.0.1:0", "--redis-url", "not a redis url"], "redis"),
        (&["--redis-cluster", "redis://127.0.0.1:1,not a url"], "redis"),
        // A peer timeout that would drop idle players who answer every ping.
        (&["--ping-interval-ms", "5000", "--peer-timeout-ms", "1000"], "--peer-timeout-ms 1000 drops an idle player"),
        (&["--ping-interval-ms", "1000", "--peer-timeout-ms", "1466"], "give at least 1467"),
        // Empty where empty means nothing: a standalone shard behind nginx
        // would split the place.
        (&["--redis-url", ""], "--redis-url is empty"),
        (&["--redis-cluster", " , "], "--redis-cluster is empty"),
        (&["--redis-sentinel", "", "--redis-master", "mino"], "--redis-sentinel is empty"),
        (&["--redis-master", "mino"], "--redis-sentinel"),
        // Identity flags with no key to verify a token: every signed-in
        // player refused.
        (&["--guests", "deny"], "--guests deny needs a key"),
        (&["--auth-issuer", "https://id.example"], "--auth-issuer needs a key"),
        (&["--auth-audience", "mino"], "--auth-audience needs a key"),
        // Folders that are not there: the page would be a blank 404.
        (&["--static-dir", &missing], "not a folder"),
        (&["--admin-listen", "127.0.0.1:0", "--admin-console-dir", &missing], "not a folder"),
    ];
    for (args, says) in cases {
        let (code, stdout, stderr) = refused(args);
        for said in [&stdout, &stderr] {
            assert!(!said.contains("listening on") && !said.contains("admin on"), "{args:?} bound first: {said}");
            assert!(!said.contains("admin listener"), "{args:?} started its admin listener: {said}");
        }
        assert_eq!(code, Some(2), "{args:?}: exit code; stderr: {stderr}");
        assert!(
            stderr.contains("error: ") && stderr.to_lowercase().contains(&says.to_lowercase()),
            "{args:?}: {stderr}"
        );
    }
}

#[test]
fn the_admin_listener_on_the_players_address_is_a_configuration_error() {
    // It was found only when the second listener failed to bind (exit 1).
    for players in ["127.0.0.1:20999", "0.0.0.0:20999"] {
        let mut cmd = Command::new(SERVER);
        cmd.args(["--listen", players, "--admin-listen", "127.0.0.1:20999"]);
        let out = process::run("mino-server", &mut cmd, Duration::from_secs(20));
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{players}: {stderr}");
        assert!(stderr.contains("is --listen's address too"), "{players}: {stderr}");
    }
}

/// A listener that cannot be bound (the admin port taken) ends the process
/// before it announces either listener.
#[test]
fn a_listener_that_cannot_be_bound_ends_the_process_before_either_is_announced() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").expect("a port");
    let at = taken.local_addr().expect("addr").to_string();
    let (code, stdout, stderr) = refused(&["--admin-listen", &at]);
    assert!(code.is_some_and(|c| c != 0), "exit code {code:?}: {stderr}");
    assert!(!stdout.contains("listening on") && !stdout.contains("admin on"), "announced first: {stdout}");
    assert!(stderr.contains("admin"), "{stderr}");
}

#[test]
fn a_log_filter_that_is_not_one_is_a_configuration_error() {
    let (code, _, stderr) = refused_with(&[], "inf");
    assert_eq!(code, Some(2), "a level misspelt silenced every log: {stderr}");
    assert!(stderr.contains("did you mean \"info\""), "{stderr}");
    let (code, stdout, stderr) = refused_with(&[], "garbage===");
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("MINO_LOG=\"garbage===\" is not a log filter"), "{stderr}");
    assert!(!stdout.contains("listening on"), "{stdout}");
}

#[test]
fn webtransport_settings_without_its_listener_are_refused_not_ignored() {
    // A certificate given in the environment (a shared shard.env, say) to a
    // shard that takes no WebTransport: told, where it was silently unused.
    let mut cmd = Command::new(SERVER);
    cmd.args(["--listen", "127.0.0.1:0"])
        .env("MINO_WEBTRANSPORT_CERT", "/etc/mino/tls/webtransport/fullchain.pem")
        .env("MINO_WEBTRANSPORT_KEY", "/etc/mino/tls/webtransport/privkey.pem");
    let out = process::run("mino-server", &mut cmd, Duration::from_secs(20));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("--webtransport-listen"), "{stderr}");
    for flag in [["--webtransport-congestion", "bbr"], ["--webtransport-datagram-bytes", "1200"]] {
        let (code, _, stderr) = refused(&flag);
        assert_eq!(code, Some(2), "{flag:?}: {stderr}");
        assert!(stderr.contains("--webtransport-listen"), "{flag:?}: {stderr}");
    }
}

#[test]
fn a_webtransport_certificate_with_a_key_not_its_own_is_refused_without_a_panic() {
    // The endpoint's TLS configuration is built with `expect`: a pair that
    // does not match (one renewal's chain and another's key) panicked with a
    // backtrace and exit 101, a crash loop under systemd.
    let dir = WorkDir::new("wt-pair");
    let (a, b) = (dir.join("a"), dir.join("b"));
    for d in [&a, &b] {
        std::fs::create_dir_all(d).expect("a folder");
    }
    let (one, two) = (mino_testkit::Cert::self_signed(&a), mino_testkit::Cert::self_signed(&b));
    let (cert, key) = (one.cert.display().to_string(), two.key.display().to_string());
    let (code, stdout, stderr) =
        refused(&["--webtransport-listen", "127.0.0.1:0", "--webtransport-cert", &cert, "--webtransport-key", &key]);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(stderr.contains(&format!("{cert} with {key}")) && stderr.contains("KeyMismatch"), "{stderr}");
    assert!(!stdout.contains("listening on"), "{stdout}");
    // Its own key: it starts (the check refuses only a pair that differs).
    let own = one.key.display().to_string();
    let server = mino_testkit::Shard::start(
        SERVER,
        &["--webtransport-listen", "127.0.0.1:0", "--webtransport-cert", &cert, "--webtransport-key", &own],
    );
    assert!(server.webtransport.is_some(), "started with its own key");
}
