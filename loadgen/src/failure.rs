//! Why a bot's connection attempt or session failed, classified so that the
//! loadgen never blames the server for its own limits: local resource
//! exhaustion, server refusals, timeouts and lost connections are told apart.

use serde::Serialize;
use std::io;

/// Where a failure comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Origin {
    /// This machine's limits (file descriptors, source ports): not the server's fault.
    Local,
    /// The server refused or closed on purpose.
    Server,
    /// Nothing answered in time.
    Timeout,
    /// The connection broke (reset, EOF) or the bytes made no sense.
    Network,
}

/// One class of failure. Counted per run in [`crate::stats::Counters`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FailureKind {
    /// `EADDRNOTAVAIL`/`EADDRINUSE` on bind or connect: local source ports exhausted.
    LocalAddrUnavailable,
    /// `EMFILE`/`ENFILE`: the loadgen ran out of file descriptors.
    LocalFdLimit,
    /// `ECONNREFUSED`: nothing listens at the target (or its backlog overflowed).
    ConnectRefused,
    /// TCP connect or websocket handshake did not finish in time.
    ConnectTimeout,
    /// The HTTP upgrade was answered with something other than 101.
    Handshake,
    /// The TLS (or QUIC) handshake failed: a certificate this machine does
    /// not trust (`--ca-file`, `--insecure`), a WebTransport hash the shard
    /// no longer offers, or TLS to a plain port.
    Tls,
    /// No Welcome, Busy or Error within the join timeout after Hello.
    JoinTimeout,
    /// The server answered Hello with Error (and a close code), or closed without a word.
    Refused,
    /// A resume ticket was refused (expired, used, forged, live elsewhere).
    TicketRefused,
    /// The server closed an admitted session with a close frame.
    ServerClosed,
    /// The connection ended without a close frame (reset, EOF).
    ConnectionLost,
    /// A frame failed verification, was text, or was unexpected at that point.
    Protocol,
    /// Any other I/O error.
    Io,
}

impl FailureKind {
    /// Every kind, in a stable order (index = position).
    pub const ALL: [FailureKind; 13] = [
        FailureKind::LocalAddrUnavailable,
        FailureKind::LocalFdLimit,
        FailureKind::ConnectRefused,
        FailureKind::ConnectTimeout,
        FailureKind::Handshake,
        FailureKind::Tls,
        FailureKind::JoinTimeout,
        FailureKind::Refused,
        FailureKind::TicketRefused,
        FailureKind::ServerClosed,
        FailureKind::ConnectionLost,
        FailureKind::Protocol,
        FailureKind::Io,
    ];

    /// Position of `self` in [`FailureKind::ALL`].
    pub fn index(self) -> usize {
        self as usize
    }

    /// Where this kind of failure comes from.
    pub fn origin(self) -> Origin {
        use FailureKind as K;
        match self {
            K::LocalAddrUnavailable | K::LocalFdLimit => Origin::Local,
            K::ConnectRefused | K::Handshake | K::Tls | K::Refused | K::TicketRefused | K::ServerClosed => {
                Origin::Server
            }
            K::ConnectTimeout | K::JoinTimeout => Origin::Timeout,
            K::ConnectionLost | K::Protocol | K::Io => Origin::Network,
        }
    }

    /// snake_case name, as in the JSON report.
    pub fn name(self) -> &'static str {
        use FailureKind as K;
        match self {
            K::LocalAddrUnavailable => "local_addr_unavailable",
            K::LocalFdLimit => "local_fd_limit",
            K::ConnectRefused => "connect_refused",
            K::ConnectTimeout => "connect_timeout",
            K::Handshake => "handshake",
            K::Tls => "tls",
            K::JoinTimeout => "join_timeout",
            K::Refused => "refused",
            K::TicketRefused => "ticket_refused",
            K::ServerClosed => "server_closed",
            K::ConnectionLost => "connection_lost",
            K::Protocol => "protocol",
            K::Io => "io",
        }
    }

    /// Classifies an I/O error from socket creation, bind, connect or a read.
    pub fn of_io(err: &io::Error) -> FailureKind {
        use nix::errno::Errno;
        match err.raw_os_error().map(Errno::from_raw) {
            Some(Errno::EADDRNOTAVAIL | Errno::EADDRINUSE) => FailureKind::LocalAddrUnavailable,
            Some(Errno::EMFILE | Errno::ENFILE) => FailureKind::LocalFdLimit,
            Some(Errno::ECONNREFUSED) => FailureKind::ConnectRefused,
            Some(Errno::ETIMEDOUT) => FailureKind::ConnectTimeout,
            Some(Errno::ECONNRESET | Errno::EPIPE | Errno::ECONNABORTED) => FailureKind::ConnectionLost,
            _ => match err.kind() {
                io::ErrorKind::TimedOut => FailureKind::ConnectTimeout,
                io::ErrorKind::ConnectionRefused => FailureKind::ConnectRefused,
                io::ErrorKind::ConnectionReset | io::ErrorKind::UnexpectedEof | io::ErrorKind::BrokenPipe => {
                    FailureKind::ConnectionLost
                }
                _ => FailureKind::Io,
            },
        }
    }
}

impl std::fmt::Display for FailureKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn local_exhaustion_is_never_the_servers_fault() {
        let addr = io::Error::from_raw_os_error(nix::libc::EADDRNOTAVAIL);
        let fds = io::Error::from_raw_os_error(nix::libc::EMFILE);
        let nfile = io::Error::from_raw_os_error(nix::libc::ENFILE);
        for (err, kind) in [
            (addr, FailureKind::LocalAddrUnavailable),
            (fds, FailureKind::LocalFdLimit),
            (nfile, FailureKind::LocalFdLimit),
        ] {
            assert_eq!(FailureKind::of_io(&err), kind);
            assert_eq!(kind.origin(), Origin::Local);
        }
    }

    #[test]
    fn refusals_timeouts_and_resets_are_told_apart() {
        let refused = io::Error::from_raw_os_error(nix::libc::ECONNREFUSED);
        assert_eq!(FailureKind::of_io(&refused).origin(), Origin::Server);
        let timed_out = io::Error::new(io::ErrorKind::TimedOut, "t");
        assert_eq!(FailureKind::of_io(&timed_out).origin(), Origin::Timeout);
        let reset = io::Error::from_raw_os_error(nix::libc::ECONNRESET);
        assert_eq!(FailureKind::of_io(&reset), FailureKind::ConnectionLost);
    }

    #[test]
    fn index_matches_position_in_all() {
        for (i, k) in FailureKind::ALL.iter().enumerate() {
            assert_eq!(k.index(), i);
            assert_eq!(serde_json::to_value(k).ok(), Some(serde_json::Value::from(k.name())));
        }
    }
}
