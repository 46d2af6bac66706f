//! The admin listener: where it listens, the bearer tokens that guard it, the
//! console it serves.

use super::ConfigError;
use crate::address::{parse_listen, ListenAddr};
use clap::Args;
use std::path::PathBuf;

/// The admin listener's flags.
#[derive(Args, Debug, Clone)]
#[command(next_help_heading = "Admin")]
pub struct AdminArgs {
    /// Optional admin listener: /healthz, /readyz, /metrics, the admin console
    /// (/admin/) and its API, on a listener of their own, reachable however
    /// many sockets players hold; the players' listener then serves none of
    /// them (without it, it serves /healthz, /readyz and /metrics itself).
    /// IP:PORT, a bare PORT (127.0.0.1: loopback
    /// by default), or unix:PATH. Listening beyond loopback needs
    /// --admin-token-file. Printed on stdout as "mino-server admin on
    /// http://ADDR".
    #[arg(long, env = "MINO_ADMIN_LISTEN", value_parser = parse_listen)]
    pub admin_listen: Option<ListenAddr>,

    /// A file of admin bearer tokens, one a line: `NAME TOKEN` (NAME, the
    /// operator logged with each action: 1 to 32 of A-Z a-z 0-9 _ . @ -) or
    /// just `TOKEN` (logged as "admin"); tokens are 16 to 256 printable
    /// characters; blank lines and lines starting with # are skipped. With it,
    /// every admin route but the probes (/healthz, /readyz) and the console's
    /// own files needs `Authorization: Bearer TOKEN` (401 otherwise). Read again when it changes and on
    /// SIGHUP.
    #[arg(long, env = "MINO_ADMIN_TOKEN_FILE")]
    pub admin_token_file: Option<PathBuf>,

    /// Folder with the built admin console (client-web/dist-admin), served at
    /// /admin/ on the admin listener.
    #[arg(long, env = "MINO_ADMIN_CONSOLE_DIR")]
    pub admin_console_dir: Option<PathBuf>,
}

/// The admin listener and console (see [`AdminArgs`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AdminConfig {
    /// Where it listens; `None`: no admin listener.
    pub listen: Option<ListenAddr>,
    /// The bearer tokens' file; `None`: no token asked (loopback only).
    pub token_file: Option<PathBuf>,
    /// The built console; `None`: /admin/ says it is not installed.
    pub console_dir: Option<PathBuf>,
}

impl AdminArgs {
    /// The typed settings.
    ///
    /// Errors: [`ConfigError::AdminUnguarded`] for a listener other machines
    /// can reach with no token file.
    pub fn config(&self) -> Result<AdminConfig, ConfigError> {
        if let Some(at) = self.admin_listen.as_ref().filter(|a| !a.is_local() && self.admin_token_file.is_none()) {
            return Err(ConfigError::AdminUnguarded(at.clone()));
        }
        Ok(AdminConfig {
            listen: self.admin_listen.clone(),
            token_file: self.admin_token_file.clone(),
            console_dir: self.admin_console_dir.clone(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::parse;
    use super::*;

    #[test]
    fn an_admin_listener_beyond_loopback_needs_a_token_file() {
        let admin = |args: &[&str]| parse(args).expect("flags").admin.config();
        let e = admin(&["--admin-listen", "0.0.0.0:9100"]).expect_err("unguarded");
        assert!(matches!(&e, ConfigError::AdminUnguarded(_)) && e.to_string().contains("--admin-token-file"), "{e}");
        assert!(admin(&["--admin-listen", "0.0.0.0:9100", "--admin-token-file", "/etc/mino/admin-tokens"]).is_ok());
        let bare = admin(&["--admin-listen", "9100"]).expect("loopback");
        assert_eq!(bare.listen.map(|a| a.to_string()).as_deref(), Some("127.0.0.1:9100"));
        assert!(admin(&["--admin-listen", "unix:/run/mino/admin.sock"]).is_ok(), "a unix socket is local");
    }
}
