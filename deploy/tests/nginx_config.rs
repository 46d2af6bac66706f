//! The shipped nginx configuration: it is exactly the template rendered with
//! render.sh's documented defaults, a rendered copy passes `nginx -t`, and
//! the renderer refuses what would make a broken upstream.

use mino_testkit::nginx::{check, render, render_with, NginxSettings};
use mino_testkit::{deploy_dir, Cert, WorkDir};

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
    ] {
        assert!(shipped.contains(documented), "mino.conf lacks {documented:?}");
    }
    assert!(!shipped.contains("${"), "a placeholder was left unrendered");
}

#[test]
fn rendered_config_passes_nginx_t() {
    let dir = WorkDir::new("nginx-t");
    let cert = Cert::self_signed(dir.path());
    let shards = vec!["127.0.0.1:18081".parse().expect("addr"), "127.0.0.1:18082".parse().expect("addr")];
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
    let settings = NginxSettings::new(vec!["127.0.0.1:18081".parse().expect("addr")], dir.mkdir("client"), missing);
    let conf = render(&settings, &dir, 18443, 18080);
    let out = check(&conf, dir.path());
    assert!(!out.status.success(), "the check must catch a missing certificate");
}

#[test]
fn renderer_refuses_malformed_or_missing_shards() {
    for bad in ["   ", "localhost", "10.0.0.1:80;evil", "10.0.0.1:8080 nope"] {
        let out = render_with(&[("MINO_SHARDS", bad.into())]);
        assert!(!out.status.success(), "MINO_SHARDS={bad:?} was accepted");
    }
    let out = render_with(&[("MINO_SHARDS", "10.0.0.11:8080 shard-b.internal:8080 [fd00::1]:8080".into())]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8_lossy(&out.stdout);
    for s in ["10.0.0.11:8080", "shard-b.internal:8080", "[fd00::1]:8080"] {
        assert!(text.contains(&format!("server {s} max_fails=1 fail_timeout=5s;")), "{s} as primary");
        assert!(text.contains(&format!("server {s} backup max_fails=0;")), "{s} as backup");
    }
}
