//! A self-signed TLS certificate made by `openssl` for one test run: an
//! ECDSA P-256 key and a certificate for `localhost` and `127.0.0.1`, valid
//! for two days, marked as a server (not CA) certificate so that clients that
//! check (rustls, browsers) accept it as its own trust anchor.

use crate::{process, START_WAIT};
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
    /// `openssl req -x509 -newkey ec ...`.
    ///
    /// Panics: openssl is missing, fails, or takes over [`START_WAIT`].
    pub fn self_signed(dir: &Path) -> Cert {
        let (cert, key) = (dir.join("cert.pem"), dir.join("key.pem"));
        let mut cmd = Command::new("openssl");
        cmd.args(["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"])
            .arg("-keyout")
            .arg(&key)
            .arg("-out")
            .arg(&cert)
            .args(["-days", "2", "-subj", "/CN=localhost"])
            .args(["-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1"])
            .args(["-addext", "basicConstraints=critical,CA:FALSE"])
            .args(["-addext", "keyUsage=critical,digitalSignature"])
            .args(["-addext", "extendedKeyUsage=serverAuth"]);
        let out = process::run("openssl (scripts/setup.sh installs it)", &mut cmd, START_WAIT);
        assert!(out.status.success(), "openssl req failed: {}", String::from_utf8_lossy(&out.stderr));
        Cert { cert, key }
    }
}
