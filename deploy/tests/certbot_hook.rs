//! The shipped certbot deploy hook (`deploy/certbot/mino-webtransport.sh`),
//! run as certbot runs it, with `systemctl` and `curl` stood in for on the
//! PATH (each logs what it was asked): it ignores other certificates'
//! renewals, switches the shards' copy in one rename, keeps the copy before,
//! restarts the running shards one at a time, each once the one before is
//! ready, and stops at a shard that does not get ready; a copy left half
//! made is removed, folders it did not make are left alone, and its settings
//! file is read.

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
        self.run(lineage, not_ready)
    }

    /// The hook, as certbot runs it after renewing `lineage`.
    fn run(&self, lineage: &Path, not_ready: &str) -> Output {
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
            .env("MINO_HOOK_SETTINGS", self.dir.join("settings.env"))
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

    /// The copies kept (folders of DEST but `lost+found`, not the link),
    /// by name.
    fn copies(&self) -> Vec<String> {
        let mut copies: Vec<String> = std::fs::read_dir(self.dir.join("copy"))
            .expect("DEST")
            .filter_map(Result::ok)
            .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|name| name != "lost+found")
            .collect();
        copies.sort();
        copies
    }

    /// The copy `current` names.
    fn current_copy(&self) -> String {
        let link = std::fs::read_link(self.dir.join("copy/current")).expect("current is a link");
        assert!(link.is_relative(), "{link:?}");
        link.to_string_lossy().into_owned()
    }
}

fn chmod_x(path: &Path) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
}

/// The restarts of a renewal: the running shards (1 and 2; 3 is stopped)
/// one at a time, each ready before the next.
const RESTARTS: [&str; 7] = [
    "systemctl is-active --quiet mino-server@1",
    "systemctl restart mino-server@1",
    "curl http://127.0.0.1:9101/readyz",
    "systemctl is-active --quiet mino-server@2",
    "systemctl restart mino-server@2",
    "curl http://127.0.0.1:9102/readyz",
    "systemctl is-active --quiet mino-server@3",
];

#[test]
fn renewals_switch_the_copy_at_once_and_restart_the_running_shards_in_turn() {
    let hook = Hook::new();
    let live = hook.dir.join("live");

    // Another certificate of the machine was renewed: nothing is done.
    let out = hook.renew("cert 0", &hook.dir.join("elsewhere"), "");
    assert!(out.status.success(), "{out:?}");
    assert!(!hook.dir.join("copy").exists() && hook.log().is_empty());

    // The game's: the copy, then the restarts. The copy before is kept and
    // older ones removed; a folder the hook did not make stays.
    let mut previous: Option<String> = None;
    for cert in ["cert 1", "cert 2", "cert 3"] {
        let out = hook.renew(cert, &live, "");
        assert!(out.status.success(), "{out:?}");
        let pair = (hook.current("fullchain.pem"), hook.current("privkey.pem"));
        assert_eq!(pair, (cert.into(), format!("key of {cert}")));
        let now = hook.current_copy();
        let mut kept: Vec<String> = previous.iter().cloned().chain([now.clone()]).collect();
        kept.sort();
        assert_eq!(hook.copies(), kept);
        assert_eq!(hook.log(), RESTARTS);
        previous = Some(now);
        hook.dir.mkdir("copy/lost+found");
    }
    assert!(hook.dir.join("copy/lost+found").is_dir());

    // A renewal whose key cannot be copied: the hook fails before the
    // switch, the shards keep their copy, nothing half made stays, nothing
    // restarts; the next renewal keeps that copy as the one before.
    let before = hook.current_copy();
    let copies = hook.copies();
    hook.dir.write("live/fullchain.pem", "cert 4");
    std::fs::remove_file(hook.dir.join("live/privkey.pem")).expect("the key");
    let out = hook.run(&live, "");
    assert!(!out.status.success(), "{out:?}");
    assert_eq!((hook.current_copy(), hook.current("fullchain.pem")), (before.clone(), "cert 3".into()));
    assert_eq!(hook.copies(), copies);
    assert!(hook.log().is_empty());
    let out = hook.renew("cert 5", &live, "");
    assert!(out.status.success(), "{out:?}");
    assert!(hook.copies().contains(&before), "{:?}", hook.copies());
    hook.log();

    // The settings file (this machine's shards), read over the defaults; a
    // file of the layout before the link is said to be no longer renewed.
    hook.dir.write("settings.env", "SHARDS=\"2=127.0.0.1:9102\"\n");
    hook.dir.write("copy/fullchain.pem", "an old copy");
    let out = hook.renew("cert 6", &live, "");
    assert!(out.status.success(), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("are no longer renewed"), "{out:?}");
    assert_eq!(hook.log(), &RESTARTS[3..6]);
    std::fs::remove_file(hook.dir.join("settings.env")).expect("the settings");

    // Shard 1 never gets ready: the hook fails there (certbot logs it) and
    // leaves shard 2 as it is; the copy is switched all the same.
    let out = hook.renew("cert 7", &live, "127.0.0.1:9101");
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("mino-server@1 not ready after 2 s"), "{out:?}");
    assert_eq!(hook.current("fullchain.pem"), "cert 7");
    let log = hook.log();
    assert!(!log.iter().any(|l| l.contains("mino-server@2")), "{log:?}");
}
