//! The loadgen's own limits, checked before a run: the open-file limit (raised
//! from soft to hard) and the ephemeral port range, so it can say up front how
//! many connections this machine allows it and never blames the server for
//! its own ceiling.

use nix::sys::resource::{getrlimit, setrlimit, Resource};
use serde::{Deserialize, Serialize};

/// File descriptors kept free for everything but bot sockets.
pub const RESERVED_FDS: u64 = 16;

/// What this machine allows the loadgen.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LocalLimits {
    /// Soft `RLIMIT_NOFILE` in force for the run.
    pub nofile: u64,
    /// Hard `RLIMIT_NOFILE`.
    pub nofile_hard: u64,
    /// The soft limit before the loadgen raised it, if it did.
    pub nofile_raised_from: Option<u64>,
    /// `net.ipv4.ip_local_port_range`, inclusive.
    pub port_range: Option<(u16, u16)>,
    /// Local source addresses connections are spread over (at least 1).
    pub source_addrs: usize,
    /// Most concurrent connections these limits allow to one target.
    pub max_connections: u64,
}

/// Parses `/proc/sys/net/ipv4/ip_local_port_range` ("32768\t60999").
pub fn parse_port_range(text: &str) -> Option<(u16, u16)> {
    let mut it = text.split_whitespace().map(str::parse::<u16>);
    let lo = it.next()?.ok()?;
    let hi = it.next()?.ok()?;
    (lo <= hi).then_some((lo, hi))
}

/// Connections allowed by `nofile` descriptors and `ports` × `addrs` source ports.
pub fn capacity(nofile: u64, port_range: Option<(u16, u16)>, addrs: usize) -> u64 {
    let fds = nofile.saturating_sub(RESERVED_FDS);
    match port_range {
        Some((lo, hi)) => fds.min((hi as u64 - lo as u64 + 1) * addrs.max(1) as u64),
        None => fds,
    }
}

impl LocalLimits {
    /// Raises the soft file limit to the hard one and reads the port range.
    /// `source_addrs` is the number of local addresses in use (0 counts as 1).
    pub fn check_and_raise(source_addrs: usize) -> LocalLimits {
        let (soft, hard) = getrlimit(Resource::RLIMIT_NOFILE).unwrap_or((1024, 1024));
        let raised = soft < hard && setrlimit(Resource::RLIMIT_NOFILE, hard, hard).is_ok();
        let nofile = if raised { hard } else { soft };
        let port_range =
            std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range").ok().and_then(|t| parse_port_range(&t));
        let source_addrs = source_addrs.max(1);
        LocalLimits {
            nofile,
            nofile_hard: hard,
            nofile_raised_from: raised.then_some(soft),
            port_range,
            source_addrs,
            max_connections: capacity(nofile, port_range, source_addrs),
        }
    }

    /// One line saying what the limits allow.
    pub fn describe(&self) -> String {
        let ports = match self.port_range {
            Some((lo, hi)) => format!("ports {lo}-{hi} x {} source address(es)", self.source_addrs),
            None => "port range unknown".into(),
        };
        let raised = self.nofile_raised_from.map(|f| format!(" (raised from {f})")).unwrap_or_default();
        format!(
            "local limits: open files {}{raised}, {ports}: up to {} connections per target",
            self.nofile, self.max_connections
        )
    }

    /// A warning when `bots` connections will not fit.
    pub fn warning_for(&self, bots: u64) -> Option<String> {
        (bots > self.max_connections).then(|| {
            format!(
                "{bots} bots exceed the {} connections the local limits allow; failures past that \
                 are local (EMFILE/EADDRNOTAVAIL), not the server's",
                self.max_connections
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn port_range_parses() {
        assert_eq!(parse_port_range("32768\t60999\n"), Some((32768, 60999)));
        assert_eq!(parse_port_range("9 1"), None);
        assert_eq!(parse_port_range("x"), None);
    }

    #[test]
    fn capacity_is_the_tighter_of_fds_and_ports() {
        assert_eq!(capacity(1024, Some((32768, 60999)), 1), 1024 - RESERVED_FDS);
        assert_eq!(capacity(1_000_000, Some((32768, 60999)), 1), 28_232);
        assert_eq!(capacity(1_000_000, Some((32768, 60999)), 4), 4 * 28_232);
        assert_eq!(capacity(10, None, 1), 0);
    }

    #[test]
    fn raises_soft_to_hard_and_warns_past_capacity() {
        let l = LocalLimits::check_and_raise(2);
        assert_eq!(l.nofile, l.nofile_hard);
        assert!(l.describe().contains("open files"));
        assert!(l.warning_for(l.max_connections + 1).is_some());
        assert!(l.warning_for(1).is_none() || l.max_connections == 0);
    }
}
