//! A self-signed TLS certificate for one test run, made by the shipped
//! `deploy/self-signed-cert.sh` (openssl): an ECDSA P-256 key and a
//! certificate for `localhost` and `127.0.0.1`, valid for two days, marked as
//! a server (not CA) certificate so that clients that check (rustls, browsers)
//! accept it as its own trust anchor.

use crate::{deploy_dir, process, START_WAIT};
use std::path::{Path, PathBuf};
use std::process::Command;

/// A certificate and its key, PEM files.
#[derive(Clone, Debug)]
pub struct Cert {
    /// The certificate (also the CA file clients trust).
    pub cert: PathBuf,
    /// The private key.
    pub key: PathBuf,
}

impl Cert {
    /// Makes `cert.pem` and `key.pem` in `dir` with
    /// `deploy/self-signed-cert.sh DIR 2`.
    ///
    /// Panics: openssl is missing, fails, or takes over [`START_WAIT`].
    pub fn self_signed(dir: &Path) -> Cert {
        let (cert, key) = (dir.join("cert.pem"), dir.join("key.pem"));
        let mut cmd = Command::new("bash");
        cmd.arg(deploy_dir().join("self-signed-cert.sh")).arg(dir).arg("2");
        let out = process::run("self-signed-cert.sh", &mut cmd, START_WAIT);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "self-signed-cert.sh failed (openssl: scripts/setup.sh installs it): {err}");
        Cert { cert, key }
    }
}
