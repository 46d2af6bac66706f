//! The shipped nginx configuration: it is exactly the template rendered with
//! render.sh's documented defaults, a rendered copy passes `nginx -t`, and
//! the renderer refuses what would make a broken upstream.

use mino_testkit::nginx::{check, render, render_with, NginxSettings};
use mino_testkit::{deploy_dir, Cert, Upstream, WorkDir};
use std::net::SocketAddr;
use std::path::PathBuf;

#[test]
fn shipped_config_is_the_template_rendered_with_the_documented_defaults() {
    let out = render_with(&[]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let shipped = std::fs::read_to_string(deploy_dir().join("nginx/mino.conf")).expect("mino.conf");
    assert!(
        String::from_utf8_lossy(&out.stdout) == shipped,
        "deploy/nginx/mino.conf is stale: run `deploy/nginx/render.sh > deploy/nginx/mino.conf`"
    );
    for documented in [
        "ssl_certificate /etc/mino/tls/fullchain.pem;",
        "ssl_certificate_key /etc/mino/tls/privkey.pem;",
        "root /usr/share/mino/client;",
        "server 127.0.0.1:8081 max_fails=1 fail_timeout=5s;",
        "server 127.0.0.1:8081 backup max_fails=0;",
        "proxy_read_timeout 20s;",
        "return 301 https://$host$request_uri;",
    ] {
        assert!(shipped.contains(documented), "mino.conf lacks {documented:?}");
    }
    assert!(!shipped.contains("${"), "a placeholder was left unrendered");
}

#[test]
fn rendered_config_passes_nginx_t() {
    let dir = WorkDir::new("nginx-t");
    let cert = Cert::self_signed(dir.path());
    let shards = vec![
        Upstream::Tcp("127.0.0.1:18081".parse().expect("addr")),
        Upstream::Unix(PathBuf::from("/run/mino/shard-2.sock")),
    ];
    let settings = NginxSettings::new(shards, dir.mkdir("client"), cert);
    let conf = render(&settings, &dir, 18443, 18080);
    let out = check(&conf, dir.path());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "nginx -t failed:\n{stderr}");
    assert!(stderr.contains("syntax is ok") && stderr.contains("test is successful"), "{stderr}");
    assert!(!stderr.contains("[warn]"), "nginx -t warns:\n{stderr}");
}

#[test]
fn nginx_t_fails_when_the_certificate_is_missing() {
    let dir = WorkDir::new("nginx-t-bad");
    let missing = Cert { cert: dir.join("none.pem"), key: dir.join("none.key") };
    let shard: SocketAddr = "127.0.0.1:18081".parse().expect("addr");
    let settings = NginxSettings::new([shard], dir.mkdir("client"), missing);
    let conf = render(&settings, &dir, 18443, 18080);
    let out = check(&conf, dir.path());
    assert!(!out.status.success(), "the check must catch a missing certificate");
}

#[test]
fn renderer_refuses_malformed_or_missing_shards() {
    let bad_ones =
        ["", "   ", "localhost", "10.0.0.1:80;evil", "10.0.0.1:8080 nope", "unix:", "unix:rel.sock", "unix:/x;evil"];
    for bad in bad_ones.into_iter().chain(["127.0.0.1:99999", "127.0.0.1:0", "[::1]:70000"]) {
        let out = render_with(&[("MINO_SHARDS", bad.into())]);
        assert!(!out.status.success(), "MINO_SHARDS={bad:?} was accepted");
    }
    let shards = "10.0.0.11:8080 shard-b.internal:8080 [fd00::1]:8080 unix:/run/mino/shard-1.sock";
    let out = render_with(&[("MINO_SHARDS", shards.into())]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8_lossy(&out.stdout);
    for s in ["10.0.0.11:8080", "shard-b.internal:8080", "[fd00::1]:8080", "unix:/run/mino/shard-1.sock"] {
        assert!(text.contains(&format!("server {s} max_fails=1 fail_timeout=5s;")), "{s} as primary");
        assert!(text.contains(&format!("server {s} backup max_fails=0;")), "{s} as backup");
    }
}

#[test]
fn the_http_redirect_names_the_https_port_unless_it_is_443() {
    for (listen, public, location) in [
        ("443", "", "https://$host$request_uri;"),
        ("[::]:443", "", "https://$host$request_uri;"),
        ("127.0.0.1:8443", "", "https://$host:8443$request_uri;"),
        ("127.0.0.1:8443", "443", "https://$host$request_uri;"),
        ("8443", "9443", "https://$host:9443$request_uri;"),
    ] {
        let out = render_with(&[("MINO_HTTPS_LISTEN", listen.into()), ("MINO_HTTPS_PUBLIC_PORT", public.into())]);
        assert!(out.status.success(), "{listen}: {}", String::from_utf8_lossy(&out.stderr));
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(text.contains(&format!("return 301 {location}")), "{listen} / {public:?}: no {location}");
    }
    let out = render_with(&[("MINO_HTTPS_LISTEN", "127.0.0.1:8443".into()), ("MINO_HTTPS_PUBLIC_PORT", "x".into())]);
    assert!(!out.status.success(), "a public port that is not a number is refused");
}
