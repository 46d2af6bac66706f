//! The admin console's API and access, against real shards (two of them
//! clustered over a real Redis where the place matters): the place with every
//! shard's figures, players found by name or id across shards, a kick
//! (4040 with the operator's reason, the session ended) and a drain of
//! another shard through Redis, logged with who asked; bearer tokens (401 and
//! nothing else without), loopback by default, no cross-origin POSTs; the
//! console's files served without a token; the same orders and searches on
//! a Redis Cluster (sharded pub/sub).

use mino_protocol::wire::CloseCode;
use mino_testkit::{
    close_code, http, wait, Frame, Player, Redis, RedisCluster, Response, Shard, ShardBuilder, WorkDir, WAIT,
};
use serde_json::{json, Value};
use std::net::SocketAddr;
use std::process::Command;
use std::time::Duration;

/// The server binary cargo built for these tests.
const SERVER: &str = env!("CARGO_BIN_EXE_mino-server");

const ALICE: &str = "alice-token-0123456789";
const BOB: &str = "bob-token-9876543210x";

/// A token file with two operators.
fn tokens(dir: &WorkDir) -> String {
    dir.write("tokens", format!("# operators\nalice {ALICE}\nbob {BOB}\n")).to_string_lossy().into_owned()
}

/// An admin API client of one shard, as one operator.
struct Admin {
    addr: SocketAddr,
    token: Option<&'static str>,
}

impl Admin {
    fn of(shard: &Shard, token: Option<&'static str>) -> Admin {
        Admin { addr: shard.admin.expect("an admin listener"), token }
    }

    fn headers(&self) -> Vec<(&'static str, String)> {
        self.token.map(|t| ("Authorization", format!("Bearer {t}"))).into_iter().collect()
    }

    async fn get(&self, path: &str) -> Response {
        let h = self.headers();
        let headers: Vec<(&str, &str)> = h.iter().map(|(n, v)| (*n, v.as_str())).collect();
        http::send(self.addr, "GET", path, &headers, b"").await
    }

    async fn post(&self, path: &str, body: Option<Value>) -> Response {
        let mut h = self.headers();
        if body.is_some() {
            h.push(("Content-Type", "application/json".into()));
        }
        let headers: Vec<(&str, &str)> = h.iter().map(|(n, v)| (*n, v.as_str())).collect();
        let body = body.map(|b| b.to_string()).unwrap_or_default();
        http::send(self.addr, "POST", path, &headers, body.as_bytes()).await
    }

    async fn place(&self) -> Value {
        let r = self.get("/admin/api/place").await;
        assert_eq!(r.status, 200, "{}", r.text());
        r.json()
    }

    /// Polls the place until `check` holds.
    async fn place_until(&self, what: &str, check: impl Fn(&Value) -> bool) -> Value {
        wait::until(what, WAIT, || async {
            let place = self.place().await;
            check(&place).then_some(place)
        })
        .await
    }
}

/// A shard of the place on `redis`, with an admin listener and a fast
/// heartbeat, to start.
fn shard(redis: &Redis, id: u32) -> ShardBuilder {
    Shard::build(SERVER).redis(redis).id(id).admin().heartbeat(Duration::from_millis(200))
}

fn shard_ids(place: &Value) -> Vec<u64> {
    place["shards"].as_array().map(|a| a.iter().filter_map(|s| s["id"].as_u64()).collect()).unwrap_or_default()
}

fn row(place: &Value, id: u64) -> Value {
    place["shards"].as_array().and_then(|a| a.iter().find(|s| s["id"] == id).cloned()).unwrap_or(Value::Null)
}

#[tokio::test]
async fn an_admin_listener_beyond_loopback_needs_a_token_file() {
    let out = Command::new(SERVER).args(["--admin-listen", "0.0.0.0:0"]).output().expect("run mino-server");
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("--admin-token-file"), "{stderr}");

    let dir = WorkDir::new("admin-bad-tokens");
    let bad = dir.write("tokens", "alice short\n");
    let out = Command::new(SERVER)
        .args(["--admin-listen", "127.0.0.1:0", "--admin-token-file"])
        .arg(&bad)
        .output()
        .expect("run mino-server");
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("admin tokens") && stderr.contains("line 1"), "{stderr}");
}

#[tokio::test]
async fn a_wrong_or_missing_token_gets_401_and_nothing_else() {
    let dir = WorkDir::new("admin-tokens");
    let file = tokens(&dir);
    let console = dir.mkdir("console");
    dir.write("console/index.html", "<!doctype html><title>mino admin</title>\n");
    let console = console.to_string_lossy().into_owned();
    let server = Shard::start(
        SERVER,
        &["--admin-listen", "127.0.0.1:0", "--admin-token-file", &file, "--admin-console-dir", &console],
    );
    let mut player = Player::join(&server, "Ada").await;
    let id = player.id().to_string();
    let gets = ["/metrics", "/admin/api/place", "/admin/api/history", "/admin/api/players?q=a"];
    let kick = format!("/admin/api/players/{id}/kick");
    let posts = ["/admin/drain", "/admin/api/shards/1/drain", kick.as_str()];
    for token in [None, Some("wrong-token-0123456789")] {
        let admin = Admin { addr: server.admin.expect("admin"), token };
        for path in gets {
            let r = admin.get(path).await;
            assert_eq!(r.status, 401, "GET {path} with {token:?}");
            assert!(r.body.is_empty(), "nothing else: {}", r.text());
            assert_eq!(r.header("www-authenticate"), Some("Bearer realm=\"mino admin\""));
        }
        for path in posts {
            let r = admin.post(path, Some(json!({ "reason": "no" }))).await;
            assert_eq!((r.status, r.body.len()), (401, 0), "POST {path} with {token:?}");
        }
    }
    // Nothing happened: the player plays, the shard is not draining.
    let snapshot = player.until(|f| matches!(f, Frame::Snapshot { .. }).then_some(())).await;
    assert_eq!(snapshot, ());
    for token in [ALICE, BOB] {
        let admin = Admin::of(&server, Some(token));
        for path in gets {
            assert_eq!(admin.get(path).await.status, 200, "GET {path}");
        }
    }
    // The probes need no token (a load balancer's health check may send no header; they hold no data):
    // with none or a wrong one they answer as with a good one.
    for token in [None, Some("wrong-token-0123456789")] {
        let admin = Admin { addr: server.admin.expect("admin"), token };
        assert_eq!(
            (admin.get("/healthz").await.status, admin.get("/readyz").await.text()),
            (200, "ready\n".to_owned())
        );
    }
    // The console's files need no token (they hold no data).
    let page = http::get(server.admin.expect("admin"), "/admin/").await;
    assert_eq!(page.status, 200);
    assert!(page.text().contains("mino admin"));
}

#[tokio::test]
async fn tokens_are_added_and_revoked_by_changing_the_file() {
    let dir = WorkDir::new("admin-token-reload");
    let file = tokens(&dir);
    let log = dir.join("shard.log");
    let server = Shard::build(SERVER).admin().flag("admin-token-file", &file).log_to(&log, "info").start();
    let (alice, carol) = (Admin::of(&server, Some(ALICE)), Admin::of(&server, Some("carol-token-5555555555")));
    assert_eq!((alice.get("/admin/api/place").await.status, carol.get("/admin/api/place").await.status), (200, 401));
    dir.write("tokens", "carol carol-token-5555555555\n");
    wait::until_true("the new token works", || async { carol.get("/admin/api/place").await.status == 200 }).await;
    assert_eq!(alice.get("/admin/api/place").await.status, 401, "alice's token is revoked");
    dir.write("tokens", "not a token file at all\n");
    assert!(server.logged("admin tokens not reloaded").await, "the broken file was read and refused");
    assert_eq!(carol.get("/admin/api/place").await.status, 200, "a broken file keeps the tokens before");
    // Emptied, or deleted: every token is revoked (an operator locking
    // everyone out is obeyed, where the tokens before stayed in force).
    dir.write("tokens", "# nobody\n");
    wait::until_true("the emptied file revokes", || async { carol.get("/admin/api/place").await.status == 401 }).await;
    dir.write("tokens", "carol carol-token-5555555555\n");
    wait::until_true("carol back", || async { carol.get("/admin/api/place").await.status == 200 }).await;
    std::fs::remove_file(&file).expect("delete the token file");
    wait::until_true("the deleted file revokes", || async { carol.get("/admin/api/place").await.status == 401 }).await;
    assert!(server.logged("every token revoked").await);
}

#[tokio::test]
async fn the_console_is_served_with_its_policy_and_says_when_it_is_not_installed() {
    let dir = WorkDir::new("admin-console");
    dir.mkdir("console/assets");
    dir.write("console/index.html", "<!doctype html><title>mino admin</title>\n");
    dir.write("console/assets/admin-1a2b.js", "export {};\n");
    let console = dir.join("console").to_string_lossy().into_owned();
    let server = Shard::start(SERVER, &["--admin-listen", "127.0.0.1:0", "--admin-console-dir", &console]);
    let admin = server.admin.expect("admin");
    let redirect = http::get(admin, "/admin").await;
    assert_eq!((redirect.status, redirect.header("location")), (308, Some("/admin/")));
    let page = http::get(admin, "/admin/").await;
    assert_eq!(page.status, 200);
    let csp = page.header("content-security-policy").expect("a policy");
    assert!(csp.contains("default-src 'self'") && csp.contains("frame-ancestors 'none'"), "{csp}");
    assert_eq!(page.header("cache-control"), Some("no-cache"));
    let asset = http::get(admin, "/admin/assets/admin-1a2b.js").await;
    assert_eq!(asset.status, 200);
    assert_eq!(asset.header("cache-control"), Some("public, max-age=31536000, immutable"));
    assert_eq!(http::get(admin, "/admin/api/nothing").await.status, 404);
    assert_eq!(http::get(admin, "/admin/../../etc/passwd").await.status, 404);
    assert_eq!(http::get(server.addr, "/admin/").await.status, 404, "not on the players' listener");

    let bare = Shard::start(SERVER, &["--admin-listen", "127.0.0.1:0"]);
    let missing = http::get(bare.admin.expect("admin"), "/admin/").await;
    assert_eq!(missing.status, 404);
    assert!(missing.text().contains("--admin-console-dir"), "{}", missing.text());
}

#[tokio::test]
async fn the_place_lists_every_shard_with_its_figures_and_keeps_a_history() {
    let redis = Redis::start();
    let one = shard(&redis, 1).ready().await;
    let two = shard(&redis, 2).flag("max-players", 300).ready().await;
    let _p = Player::join(&two, "Bo").await;
    // A shard relays to its own players' views: one here, so shard 2's
    // cells are heard.
    let _q = Player::join(&one, "Al").await;
    let admin = Admin::of(&one, None);
    let place = admin
        .place_until("both shards with a player each, their figures settled", |p| {
            shard_ids(p) == [1, 2]
                && row(p, 2)["players"] == 1
                && row(p, 2)["ticks_per_s"].as_f64() > Some(15.0)
                && row(p, 1)["relay_lag_p99_ms"].as_f64().is_some()
        })
        .await;
    assert_eq!((place["place"].as_str(), place["served_by"].as_u64()), (Some("main"), Some(1)));
    assert_eq!((place["clustered"].as_bool(), place["players"].as_u64()), (Some(true), Some(2)));
    let (here, there) = (row(&place, 1), row(&place, 2));
    assert_eq!((here["here"].as_bool(), there["here"].as_bool()), (Some(true), Some(false)));
    for r in [&here, &there] {
        assert_eq!(r["tick_hz"], 20, "{r}");
        assert_eq!((r["redis"].as_str(), r["state"].as_str()), (Some("up"), Some("ready")), "{r}");
        assert_eq!(r["version"].as_str(), Some(env!("CARGO_PKG_VERSION")));
        assert!(r["uptime_ms"].as_u64() > Some(0) && r["lateness_p99_ms"].as_f64().is_some(), "{r}");
        assert!(r["admin"].as_str().is_some_and(|a| a.starts_with("127.0.0.1:")), "{r}");
        assert!(r["drain"].is_null());
    }
    assert_eq!(there["max_players"], 300);
    assert!(here["relay_lag_p99_ms"].as_f64().is_some_and(|l| l < 1000.0), "shard 1 relays shard 2: {here}");
    let history = wait::until("two samples of the history, the last with both shards", WAIT, || async {
        let history = admin.get("/admin/api/history").await.json();
        let samples = history["samples"].as_array().map_or(0, Vec::len);
        let both = history["samples"].as_array().and_then(|s| s.last()).is_some_and(|last| {
            last["shards"]
                .as_array()
                .is_some_and(|s| s.len() == 2 && s.iter().any(|x| x["id"] == 2 && x["players"] == 1))
        });
        (samples >= 2 && both).then_some(history)
    })
    .await;
    assert_eq!(history["interval_ms"], 1000);
    let samples = history["samples"].as_array().expect("samples");
    assert!(samples.len() >= 2, "{history}");
    let last = samples.last().expect("a sample");
    assert!(
        last["shards"].as_array().is_some_and(|s| s.len() == 2 && s.iter().any(|x| x["id"] == 2 && x["players"] == 1)),
        "{last}"
    );
}

#[tokio::test]
async fn players_are_found_by_name_or_id_across_the_place() {
    let redis = Redis::start();
    let one = shard(&redis, 1).ready().await;
    let two = shard(&redis, 2).ready().await;
    let ada = Player::join(&one, "Ada").await;
    let bob = Player::join(&two, "Bobby").await;
    let admin = Admin::of(&one, None);
    // Bobby's shard writes its players and its snapshot to Redis within a heartbeat.
    let found = wait::until("Bobby found with a position", WAIT, || async {
        let r = admin.get("/admin/api/players?q=BOB").await;
        assert_eq!(r.status, 200, "{}", r.text());
        let v = r.json();
        v["players"].as_array().is_some_and(|p| p.len() == 1 && p[0]["x"].is_number()).then_some(v)
    })
    .await;
    let p = &found["players"][0];
    assert_eq!((p["id"].as_u64(), p["name"].as_str()), (Some(u64::from(bob.id())), Some("Bobby")));
    assert_eq!((p["shard"].as_u64(), p["here"].as_bool()), (Some(2), Some(false)));
    let (x, y) = (p["x"].as_f64().expect("x"), p["y"].as_f64().expect("y"));
    let w = bob.welcome.as_ref().expect("welcome");
    assert!((x - f64::from(w.x)).abs() < 130.0 && (y - f64::from(w.y)).abs() < 130.0, "where Bobby stands: {p}");

    let by_id = admin.get(&format!("/admin/api/players?q={}", ada.id())).await.json();
    let first = &by_id["players"][0];
    assert_eq!(
        (first["name"].as_str(), first["here"].as_bool(), first["shard"].as_u64()),
        (Some("Ada"), Some(true), Some(1))
    );
    assert_eq!(by_id["partial"], false);
    let none = admin.get("/admin/api/players?q=nobody").await.json();
    assert_eq!(none["players"].as_array().map(Vec::len), Some(0));
    assert_eq!(admin.get("/admin/api/players?q=").await.status, 400);
    assert_eq!(admin.get("/admin/api/players").await.status, 400);
}

#[tokio::test]
async fn a_kick_closes_the_player_with_4040_and_the_reason_and_ends_its_session() {
    let redis = Redis::start();
    let dir = WorkDir::new("admin-kick");
    let file = tokens(&dir);
    let log = dir.join("shard-2.log");
    let log_one = dir.join("shard-1.log");
    let one =
        shard(&redis, 1).flag("admin-token-file", &file).operator_token(ALICE).log_to(&log_one, "info").ready().await;
    let two = shard(&redis, 2).log_to(&log, "info").ready().await;
    let admin = Admin::of(&one, Some(ALICE));

    // A player of the other shard, kicked through Redis.
    let mut bob = Player::join(&two, "Bob").await;
    let ticket = bob.ticket();
    wait::until_true("Bob listed", || async {
        let found = admin.get(&format!("/admin/api/players?q={}", bob.id())).await.json();
        found["players"].as_array().is_some_and(|p| !p.is_empty())
    })
    .await;
    let r = admin
        .post(&format!("/admin/api/players/{}/kick", bob.id()), Some(json!({ "reason": "spamming the chat" })))
        .await;
    assert_eq!(r.status, 202, "{}", r.text());
    let answer = r.json();
    assert_eq!((answer["shard"].as_u64(), answer["via"].as_str()), (Some(2), Some("redis")));
    let said = bob.until(|f| if let Frame::Error(code, text) = f { Some((*code, text.clone())) } else { None }).await;
    assert_eq!(said, (4040, "removed by an operator: spamming the chat".to_owned()));
    assert_eq!(bob.closed().await.0, close_code(CloseCode::Kicked));
    assert!(wait::file_holds(&log, "kicked by alice: spamming the chat").await, "the kicking shard logs who asked");
    // Its session is over: the ticket no longer resumes it, on either shard.
    let (frame, code) = Player::hello(&one, "Bob", Some(&ticket)).await.err().expect("not resumed");
    assert_eq!(code, close_code(CloseCode::TicketInvalid), "{frame:?}");

    // A player of this shard, kicked here.
    let mut ada = Player::join(&one, "Ada").await;
    let r = admin.post(&format!("/admin/api/players/{}/kick", ada.id()), Some(json!({ "reason": "afk" }))).await;
    assert_eq!(r.status, 202, "{}", r.text());
    assert_eq!((r.json()["via"].as_str(), r.json()["name"].as_str()), (Some("here"), Some("Ada")));
    assert_eq!(ada.closed().await, (close_code(CloseCode::Kicked), close_code(CloseCode::Kicked)));
    one.wait_metric("mino_sockets_closed_total{transport=\"websocket\",reason=\"kicked\"}", 1.0).await;

    // Nobody, a bad reason, a body that is not JSON.
    let r = admin.post("/admin/api/players/999999/kick", Some(json!({ "reason": "x" }))).await;
    assert_eq!((r.status, r.json()["kind"].as_str()), (404, Some("not_found")));
    // The kicks done are logged where they were asked; a kick of nobody is
    // not an action (it was logged at info as one).
    assert!(wait::file_holds(&log_one, &format!("admin: kick of player {} asked by alice", ada.id())).await);
    let said = std::fs::read_to_string(&log_one).unwrap_or_default();
    assert!(!said.contains("kick of player 999999"), "{said}");
    let r = admin.post("/admin/api/players/1/kick", Some(json!({ "reason": "two\nlines" }))).await;
    assert_eq!(r.status, 400, "{}", r.text());
    assert_eq!(admin.post("/admin/api/players/1/kick", None).await.status, 400);
}

#[tokio::test]
async fn a_drain_asked_of_one_shard_moves_every_player_of_the_other() {
    let redis = Redis::start();
    let dir = WorkDir::new("admin-drain");
    let file = tokens(&dir);
    let log = dir.join("shard-2.log");
    let log_one = dir.join("shard-1.log");
    let one =
        shard(&redis, 1).flag("admin-token-file", &file).operator_token(ALICE).log_to(&log_one, "info").ready().await;
    let mut two = shard(&redis, 2).log_to(&log, "info").flag("drain-rate", 1000).ready().await;
    let admin = Admin::of(&one, Some(BOB));
    let mut players = Vec::new();
    for i in 0..3 {
        players.push(Player::join(&two, &format!("p{i}")).await);
    }
    admin.place_until("shard 2 with its 3 players", |p| row(p, 2)["players"] == 3).await;

    let r = admin.post("/admin/api/shards/2/drain", None).await;
    assert_eq!(r.status, 202, "{}", r.text());
    assert_eq!((r.json()["via"].as_str(), r.json()["players"].as_u64()), (Some("redis"), Some(3)));
    // Asked again before its heartbeat can show the drain: refused, not
    // ordered twice (both were 202: an outside trial).
    let again = admin.post("/admin/api/shards/2/drain", None).await;
    let error = again.json()["error"].as_str().unwrap_or_default().to_owned();
    assert_eq!(again.status, 409, "{error}");
    assert!(error.starts_with("shard 00000002 is draining already (ordered "), "{error}");
    let mut resumed = Vec::new();
    for p in &mut players {
        let ticket = p.until(|f| if let Frame::Move(t) = f { Some(t.clone()) } else { None }).await;
        assert_eq!(p.closed().await.0, close_code(CloseCode::Moved));
        let back = Player::hello(&one, "ignored", Some(&ticket)).await.expect("resumed on shard 1");
        assert_eq!(back.id(), p.id());
        resumed.push(back);
    }
    let status = two.wait_exit(Duration::from_secs(15)).expect("shard 2 exits once drained");
    assert!(status.success());
    assert!(wait::file_holds(&log, "drain ordered by bob").await, "the drained shard logs who asked");
    let place = admin.place_until("shard 2 gone", |p| shard_ids(p) == [1]).await;
    assert_eq!(row(&place, 1)["players"], 3);

    // This shard itself, and the answers when it cannot be done. Shard ids
    // in the path are hex, as shards are shown; anything else is a 400 in
    // the API's JSON, as a bad player id or query is.
    assert_eq!(admin.post("/admin/api/shards/7/drain", None).await.status, 404);
    assert_eq!(
        admin.post("/admin/api/shards/0000000f/drain", None).await.json()["error"],
        "no live shard 0000000f in the place"
    );
    for bad in ["/admin/api/shards/xyz/drain", "/admin/api/shards/123456789/drain", "/admin/api/players/abc/kick"] {
        let r = admin.post(bad, Some(serde_json::json!({"reason": "x"}))).await;
        assert_eq!((r.status, r.json()["kind"].as_str()), (400, Some("bad_request")), "{bad}");
    }
    // The JSON's decimal id, given back: the error names it in hex.
    let r = admin.post("/admin/api/shards/123456789/drain", None).await;
    assert!(r.json()["error"].as_str().is_some_and(|e| e.contains("is shard 075bcd15 in hex")), "{}", r.text());
    let r = admin.get("/admin/api/players?q=a&limit=-1").await;
    assert_eq!((r.status, r.json()["kind"].as_str()), (400, Some("bad_request")));
    let r = admin.post("/admin/api/shards/1/drain", None).await;
    assert_eq!((r.status, r.json()["via"].as_str()), (202, Some("here")));
    assert_eq!(admin.post("/admin/api/shards/1/drain", None).await.status, 409);
}

#[tokio::test]
async fn a_post_from_another_origin_is_refused() {
    let server = Shard::start(SERVER, &["--admin-listen", "127.0.0.1:0", "--shard-id", "1"]);
    let admin = server.admin.expect("admin");
    let evil = [("Origin", "http://evil.example")];
    let r = http::send(admin, "POST", "/admin/api/shards/1/drain", &evil, b"").await;
    assert_eq!((r.status, r.json()["kind"].as_str()), (403, Some("forbidden")));
    assert_eq!(http::send(admin, "POST", "/admin/drain", &evil, b"").await.status, 403);
    assert_eq!(http::get(admin, "/readyz").await.status, 200, "not draining");
    // A page whose name was pointed at 127.0.0.1 (DNS rebinding) names its own host.
    let rebound = [("Host", "evil.example"), ("Origin", "http://evil.example")];
    assert_eq!(http::send(admin, "GET", "/admin/api/players?q=a", &rebound[..1], b"").await.status, 403);
    assert_eq!(http::send(admin, "POST", "/admin/api/shards/1/drain", &rebound, b"").await.status, 403);
    assert_eq!(http::get(admin, "/readyz").await.status, 200, "still not draining");
    let same = format!("http://{admin}");
    let r = http::send(admin, "POST", "/admin/api/shards/1/drain", &[("Origin", same.as_str())], b"").await;
    assert_eq!(r.status, 202, "{}", r.text());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_a_redis_cluster_players_are_found_kicked_and_drained_across_shards() {
    // Orders go over sharded pub/sub (SPUBLISH) and the players hashes and
    // snapshots are read from the nodes that own their slots.
    let cluster = RedisCluster::start(Duration::from_millis(1500));
    let seeds = cluster.seeds();
    let start = |id: &'static str, extra: &'static [&'static str]| {
        let mut args = vec!["--redis-cluster", &seeds, "--shard-id", id, "--admin-listen", "127.0.0.1:0"];
        args.extend_from_slice(&["--heartbeat-ms", "200"]);
        args.extend_from_slice(extra);
        Shard::start(SERVER, &args)
    };
    let (one, mut two) = (start("1", &[]), start("2", &["--drain-rate", "1000"]));
    one.wait_ready().await;
    two.wait_ready().await;
    let admin = Admin::of(&one, None);
    let mut kicked = Player::join(&two, "Kim").await;
    let mut mover = Player::join(&two, "Moe").await;
    admin.place_until("both shards, shard 2 with its 2 players", |p| row(p, 2)["players"] == 2).await;

    let found = wait::until("Kim found with a position", WAIT, || async {
        let v = admin.get("/admin/api/players?q=kim").await.json();
        v["players"].as_array().is_some_and(|p| p.len() == 1 && p[0]["x"].is_number()).then_some(v)
    })
    .await;
    assert_eq!(found["players"][0]["shard"].as_u64(), Some(2));
    let r =
        admin.post(&format!("/admin/api/players/{}/kick", kicked.id()), Some(json!({ "reason": "cheating" }))).await;
    assert_eq!((r.status, r.json()["via"].as_str()), (202, Some("redis")), "{}", r.text());
    let said =
        kicked.until(|f| if let Frame::Error(code, text) = f { Some((*code, text.clone())) } else { None }).await;
    assert_eq!(said, (4040, "removed by an operator: cheating".to_owned()));
    assert_eq!(kicked.closed().await.0, close_code(CloseCode::Kicked));

    let r = admin.post("/admin/api/shards/2/drain", None).await;
    assert_eq!((r.status, r.json()["via"].as_str()), (202, Some("redis")), "{}", r.text());
    let ticket = mover.until(|f| if let Frame::Move(t) = f { Some(t.clone()) } else { None }).await;
    let back = Player::hello(&one, "ignored", Some(&ticket)).await.expect("resumed on shard 1");
    assert_eq!(back.id(), mover.id());
    assert!(two.wait_exit(Duration::from_secs(15)).expect("shard 2 exits once drained").success());
}
