//! The players' listener: where it listens, what it serves besides the
//! websocket, how many connections it holds and how long a handshake may take.

use super::parse::parse_mode;
use crate::address::{parse_listen, ListenAddr};
use clap::builder::RangedU64ValueParser;
use clap::Args;
use std::path::PathBuf;
use std::time::Duration;

/// The players' listener's flags.
#[derive(Args, Debug, Clone)]
#[command(next_help_heading = "Listening")]
pub struct ListenArgs {
    /// Where to listen (HTTP and websocket): IP:PORT, a bare PORT (on
    /// 127.0.0.1), or unix:PATH, a Unix socket for nginx on the same machine
    /// (a stale socket left by a dead process is replaced, a live one
    /// refused; removed at exit). Port 0 picks a free port. Printed on
    /// stdout as "mino-server listening on http://ADDR" (or "on unix:PATH").
    #[arg(long, env = "MINO_LISTEN", default_value = "127.0.0.1:8080", value_parser = parse_listen)]
    pub listen: ListenAddr,

    /// Permissions of the Unix sockets this process listens on, octal (0660:
    /// its user and group may connect; put nginx's user in that group).
    #[arg(long, env = "MINO_LISTEN_MODE", default_value = "0660", value_parser = parse_mode)]
    pub listen_mode: u32,

    /// Folder with the built browser client (client-web/dist), served at /.
    #[arg(long, env = "MINO_STATIC_DIR")]
    pub static_dir: Option<PathBuf>,

    /// Time allowed for the HTTP upgrade and then for the first Hello, ms each
    /// (WebTransport: for the QUIC and HTTP/3 handshake, then for the stream
    /// and its Hello). 100 to 600,000.
    #[arg(long, env = "MINO_HANDSHAKE_TIMEOUT_MS", default_value_t = 10000, value_parser = clap::value_parser!(u64).range(100..=600_000))]
    pub handshake_timeout_ms: u64,

    /// Most open connections (websockets plus plain HTTP) at once; one past
    /// it is answered 503 and closed (mino_connections_over_cap_total). With
    /// --webtransport-listen, WebTransport sessions have a cap of their own
    /// of the same number (one past it is refused at its QUIC handshake,
    /// counted alike). 1 to 10,000,000.
    #[arg(long, env = "MINO_MAX_CONNECTIONS", default_value_t = 20_000, value_parser = RangedU64ValueParser::<usize>::new().range(1..=10_000_000))]
    pub max_connections: usize,

    /// Kernel send buffer of each accepted socket, bytes (SO_SNDBUF). 0 keeps the
    /// kernel's autotuning. A fixed size bounds kernel memory per socket and how
    /// much a peer that stops reading can hold before it is closed as too slow.
    /// 0 to 1 GiB.
    #[arg(long, env = "MINO_SEND_BUFFER_BYTES", default_value_t = 0, value_parser = RangedU64ValueParser::<usize>::new().range(0..=1 << 30))]
    pub send_buffer_bytes: usize,
}

/// The players' listener (see [`ListenArgs`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ListenConfig {
    /// Where it listens.
    pub addr: ListenAddr,
    /// Permissions of the Unix sockets this process listens on (the admin
    /// listener's too), e.g. `0o660`.
    pub mode: u32,
    /// The built browser client, served at /; `None`: / is not served.
    pub static_dir: Option<PathBuf>,
    /// Time allowed for the HTTP upgrade, and then for the first Hello.
    pub handshake_timeout: Duration,
    /// Open connection cap.
    pub max_connections: usize,
    /// Fixed SO_SNDBUF, bytes; `None`: the kernel's autotuning.
    pub send_buffer: Option<usize>,
}

impl ListenArgs {
    /// The typed settings (every value was range-checked by clap).
    pub fn config(&self) -> ListenConfig {
        ListenConfig {
            addr: self.listen.clone(),
            mode: self.listen_mode,
            static_dir: self.static_dir.clone(),
            handshake_timeout: Duration::from_millis(self.handshake_timeout_ms),
            max_connections: self.max_connections,
            send_buffer: (self.send_buffer_bytes > 0).then_some(self.send_buffer_bytes),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::parse;

    #[test]
    fn listen_takes_addresses_ports_and_unix_sockets_with_a_mode() {
        let cli = parse(&["--listen", "unix:/run/mino/shard-1.sock", "--listen-mode", "0600"]).expect("flags");
        assert_eq!(cli.listen.listen.to_string(), "unix:/run/mino/shard-1.sock");
        assert_eq!(cli.listen.listen_mode, 0o600);
        assert_eq!(parse(&[]).expect("defaults").listen.listen_mode, 0o660);
        assert!(parse(&["--listen-mode", "0999"]).is_err());
        assert!(parse(&["--listen", "unix:"]).is_err());
    }

    #[test]
    fn a_send_buffer_of_zero_keeps_the_kernels_autotuning() {
        let listen = |args: &[&str]| parse(args).expect("flags").listen.config();
        assert_eq!(listen(&[]).send_buffer, None);
        assert_eq!(listen(&["--send-buffer-bytes", "65536"]).send_buffer, Some(65536));
        assert_eq!(listen(&["--handshake-timeout-ms", "250"]).handshake_timeout.as_millis(), 250);
    }
}
