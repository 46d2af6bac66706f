//! `deploy/local-cluster.sh` run for real (debug binaries, free ports): it
//! is there to show failover, so a shard killed with SIGKILL must leave the
//! rest serving, the script must say which shard died, where its log is and
//! how to restart it, restart it when asked (or by itself with --restart),
//! keep the logs when it stops, and its http port must redirect to its https
//! port.

use mino_loadgen::{Target, Tls, TlsOptions};
use mino_testkit::port::{free_port, free_run};
use mino_testkit::script::Script;
use mino_testkit::{http, server_bin, Frame, Player, WorkDir};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

/// Bound on the script's start (certificate, Redis, shards, nginx).
const START: Duration = Duration::from_secs(60);
/// Bound on any later line the script prints.
const LINE: Duration = Duration::from_secs(20);

/// The script running in its own process group, and the ports it was given.
struct Cluster {
    script: Script,
    work: PathBuf,
    https: u16,
    http: u16,
    admin: u16,
}

impl std::ops::Deref for Cluster {
    type Target = Script;
    fn deref(&self) -> &Script {
        &self.script
    }
}

impl std::ops::DerefMut for Cluster {
    fn deref_mut(&mut self) -> &mut Script {
        &mut self.script
    }
}

impl Cluster {
    /// Starts the script with `args` on free ports and waits until it says
    /// everything is up.
    fn start(dir: &WorkDir, args: &[&str]) -> Cluster {
        Cluster::start_with(dir, args, &[])
    }

    /// [`Cluster::start`] with more settings (environment) for the script.
    fn start_with(dir: &WorkDir, args: &[&str], settings: &[(&str, String)]) -> Cluster {
        let mut cluster = Cluster::spawn(dir, args, free_port(), settings);
        cluster.until("Ctrl-C stops everything.", START);
        cluster
    }

    /// Starts the script with `args` and `settings`, nginx's plain-http port
    /// on `http` (the others free), without waiting.
    fn spawn(dir: &WorkDir, args: &[&str], http: u16, settings: &[(&str, String)]) -> Cluster {
        let bin_dir = server_bin().parent().expect("target folder").to_owned();
        let static_dir = dir.mkdir("client");
        dir.write("client/index.html", "<!doctype html><title>local cluster test</title>\n");
        let console_dir = dir.mkdir("console");
        dir.write("console/index.html", "<!doctype html><title>local cluster console</title>\n");
        let work = dir.join("work");
        let (https, redis, admin) = (free_port(), free_port(), free_run(2));
        let mut cmd = Script::bash(&mino_testkit::deploy_dir().join("local-cluster.sh"), args);
        // BIN_DIR given: no build.
        cmd.env_remove("CARGO_TARGET_DIR")
            .env("PROFILE", "debug")
            .env("BIN_DIR", &bin_dir)
            .env("STATIC_DIR", &static_dir)
            .env("CONSOLE_DIR", &console_dir)
            .env("WORK", &work)
            .env("HTTPS_PORT", https.to_string())
            .env("HTTP_PORT", http.to_string())
            .env("REDIS_PORT", redis.to_string())
            .env("ADMIN_PORT", admin.to_string())
            .env("MINO_LOG", "info")
            .envs(settings.iter().map(|(k, v)| (k, v)))
            .stderr(Stdio::inherit());
        Cluster { script: Script::spawn(cmd), work, https, http, admin }
    }

    /// The pid of shard `id`, from the table printed at the start.
    fn shard_pid(&self, id: u32) -> u32 {
        let prefix = format!("shard {id}  pid ");
        self.seen
            .iter()
            .find_map(|l| l.trim_start().strip_prefix(&prefix))
            .and_then(|rest| rest.split_whitespace().next())
            .and_then(|pid| pid.parse().ok())
            .unwrap_or_else(|| panic!("no pid of shard {id} in:\n{}", self.seen.join("\n")))
    }

    fn admin(&self, id: u16) -> std::net::SocketAddr {
        std::net::SocketAddr::from(([127, 0, 0, 1], self.admin + id))
    }

    async fn target(&self) -> Target {
        let tls =
            Tls::new(&TlsOptions { ca_files: vec![self.work.join("tls/cert.pem")], insecure: false }).expect("tls");
        Target::resolve_with(&format!("wss://127.0.0.1:{}/ws", self.https), Some(&tls)).await.expect("target")
    }
}

fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/status")).is_ok_and(|s| !s.contains("State:\tZ"))
}

fn log_has(path: &Path, text: &str, limit: Duration) -> bool {
    let end = Instant::now() + limit;
    while Instant::now() < end {
        if std::fs::read_to_string(path).is_ok_and(|t| t.contains(text)) {
            return true;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    false
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_shard_leaves_the_rest_serving_and_the_script_says_how_to_restart_it() {
    let dir = WorkDir::new("local-cluster");
    let mut script = Cluster::start(&dir, &[]);
    let target = script.target().await;
    let mut alice = Player::join(&target, "alice").await;
    let bob = Player::join(&target, "bob").await;
    let (a, b) = (alice.welcome.clone().expect("welcome"), bob.welcome.clone().expect("welcome"));
    assert_ne!(a.shard_id, b.shard_id, "one player on each shard");

    // Every shard's admin listener serves the console; the script says where.
    let console = script.seen.iter().find(|l| l.trim_start().starts_with("admin ")).cloned().unwrap_or_default();
    assert!(console.contains(&format!("http://127.0.0.1:{}/admin/", script.admin + 1)), "{console}");
    let page = http::get(script.admin(1), "/admin/").await;
    assert!(page.status == 200 && page.text().contains("local cluster console"), "{}", page.text());

    // Each shard takes WebTransport on a loopback UDP port (the script
    // prints it); nginx passes a shard's offer at /webtransport, which a
    // page asks before it connects.
    let https = std::net::SocketAddr::from(([127, 0, 0, 1], script.https));
    let offer = http::get_https(https, "localhost", "/webtransport", &script.work.join("tls/cert.pem"), &[]).await;
    assert_eq!(offer.status, 200, "{}", offer.text());
    let offer = offer.json();
    let addr = offer["addr"].as_str().unwrap_or_default().to_owned();
    assert!(
        script.seen.iter().any(|l| l.ends_with(&format!("webtransport udp {addr}"))),
        "the offered {addr} is a shard's printed address:\n{}",
        script.seen.join("\n")
    );
    assert_eq!(offer["certificateHashes"].as_array().map(Vec::len), Some(1), "{offer}");

    // WebTransport bots need each shard's own ws:// address, which Unix
    // sockets do not give: the script says how to get one.
    assert!(
        script.seen.iter().any(|l| l.contains("WebTransport bots") && l.contains("start with UPSTREAM=tcp")),
        "{}",
        script.seen.join("\n")
    );

    // The plain-http port sends browsers to the https port, not to 443.
    let redirect = http::get(std::net::SocketAddr::from(([127, 0, 0, 1], script.http)), "/play").await;
    assert_eq!(redirect.status, 301);
    assert_eq!(redirect.header("location"), Some(format!("https://127.0.0.1:{}/play", script.https).as_str()));

    // Bob's shard dies.
    let doomed = b.shard_id;
    let pid = script.shard_pid(doomed);
    Script::signal("-KILL", pid);
    let said = script.until(&format!("shard-{doomed} (pid {pid}) was killed by SIGKILL."), LINE);
    assert!(said.contains("local-cluster.sh"), "{said}");
    script.until("other shards keep running", LINE);
    let log = script.until("log ", LINE);
    assert!(log.contains(&format!("shard-{doomed}.log")), "{log}");
    let how = script.until("restart ", LINE);
    assert!(how.contains(&format!("kill -USR1 {}", script.pid())), "{how}");

    // The rest keeps serving: Bob resumes on the other shard through nginx,
    // as himself, and Alice keeps playing.
    drop(bob);
    let back = Player::hello(&target, "ignored", Some(&b.ticket)).await.expect("bob resumed");
    let again = back.welcome.clone().expect("welcome");
    assert_eq!((again.player_id, again.shard_id), (b.player_id, a.shard_id), "same player, surviving shard");
    let snapshot = alice.until(|f| matches!(f, Frame::Snapshot { .. }).then_some(())).await;
    assert_eq!(snapshot, ());
    let survivor_log = script.work.join(format!("shard-{}.log", a.shard_id));
    assert!(
        log_has(&survivor_log, &format!("shard {doomed:08x} left this place's view"), Duration::from_secs(10)),
        "the survivor logs the failover"
    );

    // Asked to, the script restarts it on its socket.
    Script::signal("-USR1", script.pid());
    let restarted = script.until(&format!("shard-{doomed} restarted (pid "), Duration::from_secs(30));
    assert!(!restarted.contains(&format!("pid {pid})")), "a new process: {restarted}");
    assert_eq!(http::get(script.admin(doomed as u16), "/readyz").await.status, 200);

    // Ctrl-C stops everything and keeps the logs.
    let pids = [script.shard_pid(1), script.shard_pid(2)];
    let (_, last) = script.interrupt(Duration::from_secs(20));
    assert!(last.iter().any(|l| l.contains(&format!("logs kept in {}", script.work.display()))), "{last:?}");
    for name in ["shard-1.log", "shard-2.log", "redis.log", "logs/error.log"] {
        assert!(script.work.join(name).exists(), "{name} kept");
    }
    assert!(pids.iter().all(|p| !alive(*p)), "no shard left running");
    drop(back);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_port_taken_while_nginx_starts_stops_the_script_saying_so() {
    // The script checks its ports are free before it starts anything; one
    // taken after that check (another program's socket, here bound but not
    // listening, so the check passes) makes nginx retry it for a few
    // seconds, its https port already accepting, then exit. The script must
    // not say everything is up then: it stops (saying on stderr that nginx
    // exited), and nginx's log says why.
    let taken = tokio::net::TcpSocket::new_v4().expect("socket");
    let http = free_port();
    taken.bind(std::net::SocketAddr::from(([127, 0, 0, 1], http))).expect("bind the http port");
    let dir = WorkDir::new("local-cluster-taken");
    let mut script = Cluster::spawn(&dir, &[], http, &[]);
    let (status, said) = script.exit(START);
    assert!(!status.success(), "the script failed: {status:?}");
    let said = said.join("\n");
    assert!(!said.contains("Ctrl-C stops everything."), "it never said it was up:\n{said}");
    assert!(said.contains("stopping; logs kept in"), "it stopped:\n{said}");
    let log = std::fs::read_to_string(script.work.join("logs/error.log")).unwrap_or_default();
    assert!(log.contains(&format!("bind() to 127.0.0.1:{http} failed")), "nginx's log says why:\n{log}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_restart_a_killed_shard_comes_back_by_itself() {
    let dir = WorkDir::new("local-cluster-restart");
    let mut script = Cluster::start(&dir, &["--restart"]);
    let pid = script.shard_pid(1);
    Script::signal("-KILL", pid);
    script.until(&format!("shard-1 (pid {pid}) was killed by SIGKILL."), LINE);
    script.until("restart  in 1 s (--restart)", LINE);
    script.until("shard-1 restarted (pid ", Duration::from_secs(30));
    assert_eq!(http::get(script.admin(1), "/readyz").await.status, 200);
    let target = script.target().await;
    let mut player = Player::join(&target, "after").await;
    let snapshot = player.until(|f| matches!(f, Frame::Snapshot { .. }).then_some(())).await;
    assert_eq!(snapshot, (), "a player plays after the restart");
    script.interrupt(Duration::from_secs(20));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn over_tcp_the_printed_webtransport_bots_command_runs() {
    let dir = WorkDir::new("local-cluster-tcp");
    let shard_port = free_run(3);
    let mut script =
        Cluster::start_with(&dir, &[], &[("UPSTREAM", "tcp".into()), ("SHARD_PORT", shard_port.to_string())]);
    // The line the script prints, run as printed (fewer bots, a short run).
    let line = script
        .seen
        .iter()
        .find(|l| l.contains("--transport webtransport"))
        .cloned()
        .unwrap_or_else(|| panic!("no WebTransport bots line:\n{}", script.seen.join("\n")));
    let command = line.split("   #").next().unwrap_or_default().replace("--bots 20", "--bots 4");
    let mut words = command.split_whitespace();
    let bin = words.next().expect("a command");
    let mut args: Vec<&str> = words.collect();
    for id in 1..=2 {
        let url = format!("ws://127.0.0.1:{}/ws", shard_port + id);
        assert!(args.contains(&url.as_str()), "shard {id}'s own URL in {command}");
    }
    args.extend(["--duration", "1s", "--quiet"]);
    let run = mino_testkit::loadgen::run(bin, &args);
    assert_eq!(mino_testkit::loadgen::num(&run.json, "connected"), 4.0, "{:#}", run.json);
    assert_eq!(mino_testkit::loadgen::num(&run.json, "shards_seen"), 2.0, "{:#}", run.json);
    script.interrupt(Duration::from_secs(20));
}
