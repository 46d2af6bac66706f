//! The shipped certbot deploy hook (`deploy/certbot/mino-webtransport.sh`),
//! run as certbot runs it, with `systemctl` and `curl` stood in for on the
//! PATH (each logs what it was asked): it ignores other certificates'
//! renewals, switches the shards' copy in one rename, keeps the copy before,
//! restarts the running shards one at a time, each once the one before is
//! ready, and stops at a shard that does not get ready.

use mino_testkit::{deploy_dir, WorkDir};
use std::path::Path;
use std::process::{Command, Output};

/// A stand-in `systemctl`: logs its arguments; `is-active` says shard 3 is
/// stopped and every other one running.
const SYSTEMCTL: &str = r#"#!/bin/sh
echo "systemctl $*" >>"$STUB_LOG"
[ "$1 $3" != "is-active mino-server@3" ]
"#;

/// A stand-in `curl`: logs its URL (the last argument); the listener named
/// in `$NOT_READY` never answers.
const CURL: &str = r#"#!/bin/sh
for url; do :; done
echo "curl $url" >>"$STUB_LOG"
[ "$url" != "http://$NOT_READY/readyz" ]
"#;

struct Hook {
    dir: WorkDir,
}

impl Hook {
    fn new() -> Hook {
        let dir = WorkDir::new("certbot-hook");
        dir.mkdir("bin");
        for (name, body) in [("systemctl", SYSTEMCTL), ("curl", CURL)] {
            dir.write(format!("bin/{name}"), body);
            chmod_x(&dir.join(format!("bin/{name}")));
        }
        dir.mkdir("live");
        Hook { dir }
    }

    /// Certbot's renewal of the game's certificate: new files in its live/
    /// folder, then the hook with `lineage` as the renewed one.
    fn renew(&self, cert: &str, lineage: &Path, not_ready: &str) -> Output {
        self.dir.write("live/fullchain.pem", cert);
        self.dir.write("live/privkey.pem", format!("key of {cert}"));
        let id = |flag: &str| {
            let out = Command::new("id").arg(flag).output().expect("id runs");
            String::from_utf8_lossy(&out.stdout).trim().to_owned()
        };
        let path = format!("{}:{}", self.dir.join("bin").display(), std::env::var("PATH").unwrap_or_default());
        Command::new(deploy_dir().join("certbot/mino-webtransport.sh"))
            .env("PATH", path)
            .env("RENEWED_LINEAGE", lineage)
            .env("MINO_LINEAGE", self.dir.join("live"))
            .env("MINO_SHARDS", "1=127.0.0.1:9101 2=127.0.0.1:9102 3=127.0.0.1:9103")
            .env("MINO_CERT_DEST", self.dir.join("copy"))
            .env("MINO_CERT_OWNER", id("-un"))
            .env("MINO_CERT_GROUP", id("-gn"))
            .env("MINO_READY_TIMEOUT_S", "2")
            .env("STUB_LOG", self.dir.join("log"))
            .env("NOT_READY", not_ready)
            .output()
            .expect("the hook runs")
    }

    fn log(&self) -> Vec<String> {
        let log = std::fs::read_to_string(self.dir.join("log")).unwrap_or_default();
        std::fs::remove_file(self.dir.join("log")).ok();
        log.lines().map(str::to_owned).collect()
    }

    fn current(&self, file: &str) -> String {
        std::fs::read_to_string(self.dir.join("copy/current").join(file)).expect("the copy")
    }

    /// The copies kept (folders of DEST, not the link).
    fn copies(&self) -> usize {
        std::fs::read_dir(self.dir.join("copy"))
            .expect("DEST")
            .filter_map(Result::ok)
            .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
            .count()
    }
}

fn chmod_x(path: &Path) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
}

#[test]
fn renewals_switch_the_copy_at_once_and_restart_the_running_shards_in_turn() {
    let hook = Hook::new();
    let live = hook.dir.join("live");

    // Another certificate of the machine was renewed: nothing is done.
    let out = hook.renew("cert 0", &hook.dir.join("elsewhere"), "");
    assert!(out.status.success(), "{out:?}");
    assert!(!hook.dir.join("copy").exists() && hook.log().is_empty());

    // The game's: the copy, then shard 1 restarted and ready before shard
    // 2; shard 3 is stopped (it reads the files when started).
    for (n, cert) in ["cert 1", "cert 2", "cert 3"].into_iter().enumerate() {
        let out = hook.renew(cert, &live, "");
        assert!(out.status.success(), "{out:?}");
        assert_eq!(
            (hook.current("fullchain.pem"), hook.current("privkey.pem")),
            (cert.into(), format!("key of {cert}"))
        );
        let link = std::fs::read_link(hook.dir.join("copy/current")).expect("current is a link");
        assert!(link.is_relative(), "{link:?}");
        assert_eq!(hook.copies(), (n + 1).min(2), "the copy before is kept, older ones removed");
        assert_eq!(
            hook.log(),
            [
                "systemctl is-active --quiet mino-server@1",
                "systemctl restart mino-server@1",
                "curl http://127.0.0.1:9101/readyz",
                "systemctl is-active --quiet mino-server@2",
                "systemctl restart mino-server@2",
                "curl http://127.0.0.1:9102/readyz",
                "systemctl is-active --quiet mino-server@3",
            ]
        );
    }

    // Shard 1 never gets ready: the hook fails there (certbot logs it) and
    // leaves shard 2 as it is; the copy is switched all the same.
    let out = hook.renew("cert 4", &live, "127.0.0.1:9101");
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("mino-server@1 not ready after 2 s"), "{out:?}");
    assert_eq!(hook.current("fullchain.pem"), "cert 4");
    let log = hook.log();
    assert!(!log.iter().any(|l| l.contains("mino-server@2")), "{log:?}");
}
