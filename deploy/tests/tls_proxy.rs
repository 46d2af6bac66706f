//! Through nginx with TLS in front of two clustered shards: players join over
//! wss, are spread over both shards, see each other move and chat across
//! shards; the browser client's files are served with caching headers; the
//! shards' own endpoints are not public; plain http redirects to https on
//! its own port.

use mino_loadgen::failure::FailureKind;
use mino_loadgen::profile::ProfileName;
use mino_protocol::client;
use mino_testkit::cluster::{ASSET, INDEX_HTML};
use mino_testkit::http::{get, get_https};
use mino_testkit::{Bots, Cluster, ClusterOptions, Frame, Player};
use std::time::Duration;

const LIMIT: Duration = Duration::from_secs(10);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn players_on_both_shards_see_each_other_move_and_chat_through_nginx() {
    let cluster = Cluster::start(ClusterOptions::default()).await;
    let target = cluster.target().await;
    let mut alice = Player::join(&target, "alice").await;
    let mut bob = Player::join(&target, "bob").await;
    let (a, b) = (alice.welcome.clone().expect("welcome"), bob.welcome.clone().expect("welcome"));
    assert_ne!(a.shard_id, b.shard_id, "least_conn puts the second player on the other shard");

    // Alice walks towards the middle; Bob sees it in the snapshots relayed
    // from Alice's shard.
    let start_x = a.x;
    let east = if start_x < 500.0 { 1.0 } else { -1.0 };
    alice.send(client::encode_input(1, east, 0.0)).await;
    let seen_x = bob
        .until(|f| match f {
            Frame::Snapshot { shard, players, .. } if *shard == a.shard_id => {
                players.iter().find(|p| p.0 == a.player_id).map(|p| p.1).filter(|x| (x - start_x).abs() > 20.0)
            }
            _ => None,
        })
        .await;
    assert!((seen_x - start_x) * east > 20.0, "alice walked the way she asked: {start_x} -> {seen_x}");

    alice.send(client::encode_chat("hello from alice")).await;
    let line = bob
        .until(|f| match f {
            Frame::Chat { from, text, shard, .. } if *from == a.player_id => Some((text.clone(), *shard)),
            _ => None,
        })
        .await;
    assert_eq!(line, ("hello from alice".to_owned(), a.shard_id));
    bob.send(client::encode_chat("hi alice")).await;
    let from_bob = alice
        .until(|f| match f {
            Frame::Chat { from, text, .. } if *from == b.player_id => Some(text.clone()),
            _ => None,
        })
        .await;
    assert_eq!(from_bob, "hi alice");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chatting_bots_play_over_wss_spread_over_both_shards() {
    let cluster = Cluster::start(ClusterOptions::default()).await;
    let bots = Bots::start(cluster.target().await, 10, ProfileName::Heavy).await;
    assert!(bots.wait_connected(LIMIT).await, "{} of 10 bots connected", bots.connected());
    let per_shard = cluster.wait_players(10, LIMIT).await;
    assert!(per_shard.iter().all(|n| *n >= 3), "least_conn spreads the bots: {per_shard:?}");

    let snapshots = bots.own_snapshots_during(Duration::from_secs(3)).await;
    assert!(snapshots >= 10 * 3 * 10, "each bot gets its shard's snapshots (20 Hz): {snapshots} in 3 s");
    let t = bots.totals();
    assert!(t.relayed_snapshots > 0, "snapshots of the other shard are relayed: {t:?}");
    assert!(t.chat_received > 0, "the bots' chat lines arrive: {t:?}");
    let mut shards = bots.shards_seen();
    shards.sort_unstable();
    assert_eq!(shards, [1, 2]);
    assert_eq!(t.error_total(), 0, "no failures: {:?}", t.error_kinds());
    assert_eq!(t.errors_of(FailureKind::Handshake), 0);
    assert_eq!(bots.welcomes(), vec![1; 10], "nobody reconnected");
    bots.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn static_client_is_served_over_tls_with_caching_headers() {
    let cluster = Cluster::start(ClusterOptions::default()).await;
    let (addr, ca) = (cluster.nginx.https_addr(), &cluster.cert.cert);

    let index = get_https(addr, "localhost", "/", ca, &[]).await;
    assert_eq!(index.status, 200);
    assert_eq!(index.text(), INDEX_HTML);
    assert!(index.header("content-type").is_some_and(|v| v.starts_with("text/html")), "{index:?}");
    assert_eq!(index.header("cache-control"), Some("no-cache"), "index.html is revalidated");
    assert!(index.header("etag").is_some() && index.header("last-modified").is_some(), "{index:?}");

    let asset = get_https(addr, "127.0.0.1", &format!("/{}", ASSET.0), ca, &[]).await;
    assert_eq!(asset.status, 200);
    assert_eq!(asset.text(), ASSET.1);
    assert!(asset.header("content-type").is_some_and(|v| v.starts_with("application/javascript")), "{asset:?}");
    assert_eq!(asset.header("cache-control"), Some("public, max-age=31536000, immutable"));
    assert_eq!(asset.header("x-content-type-options"), Some("nosniff"));

    assert_eq!(get_https(addr, "localhost", "/assets/missing.js", ca, &[]).await.status, 404);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shard_endpoints_are_not_public_and_http_redirects_to_https() {
    let cluster = Cluster::start(ClusterOptions::default()).await;
    let (addr, ca) = (cluster.nginx.https_addr(), &cluster.cert.cert);
    let private = cluster.shards[0].operator_get("/metrics").await;
    assert!(private.status == 200 && private.text().contains("mino_players"), "the shard serves its metrics");

    let metrics = get_https(addr, "localhost", "/metrics", ca, &[]).await;
    assert_eq!(metrics.status, 403);
    assert!(!metrics.text().contains("mino_"), "{}", metrics.text());
    assert_eq!(get_https(addr, "localhost", "/readyz", ca, &[]).await.status, 403);
    let health = get_https(addr, "localhost", "/healthz", ca, &[]).await;
    assert_eq!((health.status, health.text().as_str()), (200, "ok\n"), "nginx answers its own liveness");

    // The redirect keeps the https port (not 443 here).
    let redirect = get(cluster.nginx.http_addr(), "/play?x=1").await;
    assert_eq!(redirect.status, 301);
    let location = format!("https://127.0.0.1:{}/play?x=1", cluster.nginx.https_port);
    assert_eq!(redirect.header("location"), Some(location.as_str()));
    let followed = get_https(addr, "127.0.0.1", "/", ca, &[]).await;
    assert_eq!(followed.status, 200, "the redirect's target serves the page");
}
