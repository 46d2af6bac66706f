//! Free loopback ports for processes that cannot report the port they bound
//! (nginx, redis-server), and for tests that need an address nobody listens on.

use std::net::TcpListener;
use std::time::{SystemTime, UNIX_EPOCH};

/// A port on 127.0.0.1 that is free now, drawn from 20000..32000: outside
/// the kernel's ephemeral range (where the shards' port-0 listeners and every
/// outgoing connection take theirs), so parallel tests rarely race for it.
/// Callers retry with another port when the process then fails to bind.
pub fn free_port() -> u16 {
    loop {
        let port = 20_000 + (noise() % 12_000) as u16;
        if TcpListener::bind(("127.0.0.1", port)).is_ok() {
            return port;
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
}
