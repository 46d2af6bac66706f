//! Free loopback ports for processes that cannot report the port they bound
//! (nginx, redis-server), and for tests that need an address nobody listens on.

use std::collections::BTreeSet;
use std::net::TcpListener;
use std::sync::Mutex;
use std::time::{SystemTime, UNIX_EPOCH};

/// Ports handed out in this process: never handed out twice, so tests of one
/// binary running in parallel do not race for a port between the check and
/// the bind (two tests' nginx once took the same one).
static GIVEN: Mutex<BTreeSet<u16>> = Mutex::new(BTreeSet::new());

/// A port on 127.0.0.1 that is free now, drawn from 20000..32000: outside
/// the kernel's ephemeral range (where the shards' port-0 listeners and every
/// outgoing connection take theirs), so parallel tests rarely race for it,
/// and never one this process handed out before. Callers retry with another
/// port when the process then fails to bind (another test binary took it).
pub fn free_port() -> u16 {
    free_run(0)
}

/// The first of `n + 1` consecutive ports that are free now, handed out
/// together as [`free_port`] hands out one (for a process that takes a port
/// and the next ones, as each shard of the local cluster's admin listener).
pub fn free_run(n: u16) -> u16 {
    let mut given = GIVEN.lock().unwrap_or_else(|e| e.into_inner());
    loop {
        let first = 20_000 + (noise() % 12_000) as u16;
        let run = first..=first + n;
        if run.clone().all(|p| !given.contains(&p) && TcpListener::bind(("127.0.0.1", p)).is_ok()) {
            given.extend(run);
            return first;
        }
    }
}

/// Cheap per-call randomness (no need for a crate): time, pid and a counter.
fn noise() -> u32 {
    use std::sync::atomic::{AtomicU32, Ordering};
    static COUNTER: AtomicU32 = AtomicU32::new(0);
    let t = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default();
    let mut x =
        t.subsec_nanos() ^ std::process::id().rotate_left(11) ^ COUNTER.fetch_add(0x9e37_79b9, Ordering::Relaxed);
    x ^= x >> 16;
    x = x.wrapping_mul(0x7feb_352d);
    x ^ (x >> 15)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ports_are_in_range_and_vary() {
        let ports: std::collections::BTreeSet<u16> = (0..20).map(|_| free_port()).collect();
        assert!(ports.iter().all(|p| (20_000..32_000).contains(p)), "{ports:?}");
        assert!(ports.len() > 10, "successive calls spread over the range: {ports:?}");
    }

    #[test]
    fn no_port_is_handed_out_twice() {
        let mut seen = BTreeSet::new();
        for _ in 0..200 {
            let first = free_run(2);
            for p in first..=first + 2 {
                assert!(seen.insert(p), "port {p} handed out twice");
            }
            assert!(seen.insert(free_port()), "a single port handed out twice");
        }
    }
}
