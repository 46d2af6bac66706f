//! A shard's own figures over the last [`WINDOW_S`] seconds, as the admin
//! console shows them and the shard's heartbeat carries them to the rest of
//! its place: ticks a second, tick lateness p99, relay lag p99, and what the
//! shard is (version, uptime, drain progress, admin address).
//!
//! Lateness and relay lag go into fixed buckets, one set a second, so a
//! sample costs an increment and a p99 a walk over 84 buckets (`BUCKETS`).
//! Pure: the caller passes the time.

use crate::clock::Instant;
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;
use std::time::Duration;

/// The window the figures cover, seconds.
pub const WINDOW_S: usize = 10;

/// Bucket bounds: bucket `i` holds samples up to `BASE_MS × 2^(i / 4)` ms (4
/// buckets an octave, about 19 % apart), from 0.05 ms to about 90 s.
const BASE_MS: f64 = 0.05;
const BUCKETS: usize = 84;

/// What a shard tells its place about itself, in its heartbeat (JSON, next
/// to the heartbeat's own fields). Every field has a default, so a shard of
/// an older version (without them) still reads.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ShardFigures {
    /// Configured tick rate, Hz.
    pub tick_hz: u16,
    /// Ticks run a second over the window (the tick rate when healthy).
    pub ticks_per_s: f32,
    /// 99th percentile of how late ticks started over the window, ms.
    pub lateness_p99_ms: f32,
    /// 99th percentile of the age of relayed frames when handed to sockets
    /// over the window, ms; `None` when nothing was relayed.
    pub relay_lag_p99_ms: Option<f32>,
    /// `--max-players`.
    pub max_players: u32,
    /// Draining: the players it had when the drain began (it exits once
    /// they are all gone); `None` when not draining.
    pub drain_from: Option<u32>,
    /// True while it holds back publishing after a stall or a Redis outage.
    pub fenced: bool,
    /// The server's version (`mino-server --version`).
    pub version: String,
    /// Time since the process started, ms.
    pub uptime_ms: u64,
    /// Its admin listener (`IP:PORT` or `unix:PATH`), if it has one.
    pub admin: Option<String>,
}

/// Counts of samples by bucket.
#[derive(Clone, Debug)]
struct Buckets([u32; BUCKETS]);

impl Default for Buckets {
    fn default() -> Self {
        Buckets([0; BUCKETS])
    }
}

impl Buckets {
    fn add(&mut self, ms: f64) {
        let i = if ms <= BASE_MS { 0 } else { ((ms / BASE_MS).log2() * 4.0).ceil() as usize };
        self.0[i.min(BUCKETS - 1)] += 1;
    }
}

/// The upper bound of bucket `i`, ms.
fn bound_ms(i: usize) -> f64 {
    BASE_MS * 2f64.powf(i as f64 / 4.0)
}

/// The 99th percentile of `sets` merged, ms (the upper bound of its bucket);
/// `None` without samples.
fn p99(sets: impl Iterator<Item = Buckets>) -> Option<f32> {
    let mut all = [0u64; BUCKETS];
    for set in sets {
        for (a, n) in all.iter_mut().zip(set.0) {
            *a += u64::from(n);
        }
    }
    let total: u64 = all.iter().sum();
    if total == 0 {
        return None;
    }
    let rank = total - total / 100;
    let mut seen = 0;
    all.iter()
        .position(|n| {
            seen += n;
            seen >= rank
        })
        .map(|i| bound_ms(i) as f32)
}

/// One second of samples.
#[derive(Clone, Debug, Default)]
struct Second {
    ticks: u32,
    lateness: Buckets,
    relay_lag: Buckets,
}

/// The last [`WINDOW_S`] seconds of a shard's ticks.
#[derive(Debug)]
pub struct FigureWindow {
    started: Instant,
    /// Full seconds, oldest first, and the current one last.
    seconds: VecDeque<Second>,
    /// Start of the current second.
    second_at: Instant,
}

impl FigureWindow {
    /// An empty window starting at `now`.
    pub fn new(now: Instant) -> FigureWindow {
        FigureWindow { started: now, seconds: VecDeque::from([Second::default()]), second_at: now }
    }

    /// Moves the current second up to `now`, dropping seconds past the window.
    fn advance(&mut self, now: Instant) {
        while now.saturating_duration_since(self.second_at) >= Duration::from_secs(1) {
            self.second_at += Duration::from_secs(1);
            self.seconds.push_back(Second::default());
            if self.seconds.len() > WINDOW_S + 1 {
                self.seconds.pop_front();
            }
        }
    }

    /// A tick ran at `now`, `lateness` after its scheduled instant.
    pub fn tick(&mut self, now: Instant, lateness: Duration) {
        self.advance(now);
        if let Some(s) = self.seconds.back_mut() {
            s.ticks += 1;
            s.lateness.add(lateness.as_secs_f64() * 1000.0);
        }
    }

    /// A relayed frame was handed to sockets `lag_ms` after its tick.
    pub fn relayed(&mut self, now: Instant, lag_ms: u64) {
        self.advance(now);
        if let Some(s) = self.seconds.back_mut() {
            s.relay_lag.add(lag_ms as f64);
        }
    }

    /// The full seconds of the window (the current one left out).
    fn full(&self) -> impl Iterator<Item = &Second> {
        self.seconds.iter().take(self.seconds.len().saturating_sub(1))
    }

    /// Ticks a second over the full seconds (0 before the first one ends).
    pub fn ticks_per_s(&mut self, now: Instant) -> f32 {
        self.advance(now);
        let n = self.full().count();
        if n == 0 {
            return 0.0;
        }
        self.full().map(|s| s.ticks).sum::<u32>() as f32 / n as f32
    }

    /// Tick lateness p99 over the window, ms (0 without ticks).
    pub fn lateness_p99_ms(&mut self, now: Instant) -> f32 {
        self.advance(now);
        p99(self.seconds.iter().map(|s| s.lateness.clone())).unwrap_or(0.0)
    }

    /// Relay lag p99 over the window, ms; `None` without relayed frames.
    pub fn relay_lag_p99_ms(&mut self, now: Instant) -> Option<f32> {
        self.advance(now);
        p99(self.seconds.iter().map(|s| s.relay_lag.clone()))
    }

    /// Time since the window was made (the process's start), ms.
    pub fn uptime_ms(&self, now: Instant) -> u64 {
        now.saturating_duration_since(self.started).as_millis() as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Duration = Duration::from_millis(1);

    #[test]
    fn twenty_ticks_a_second_with_a_late_one_in_a_hundred() {
        let t0 = Instant::now();
        let mut w = FigureWindow::new(t0);
        for i in 0..200u32 {
            let late = if i % 100 == 99 { 40 * MS } else { MS };
            w.tick(t0 + 50 * MS * i, late);
        }
        let now = t0 + Duration::from_secs(10);
        assert_eq!(w.ticks_per_s(now), 20.0);
        let p99 = w.lateness_p99_ms(now);
        assert!((1.0..1.2).contains(&p99), "2 late ticks in 200 are the last 1 %: {p99}");
        for i in 0..10u32 {
            w.tick(now + 100 * MS * i, 40 * MS);
        }
        let p99 = w.lateness_p99_ms(now + Duration::from_secs(1));
        assert!((40.0..48.0).contains(&p99), "{p99}");
    }

    #[test]
    fn old_seconds_leave_the_window_and_relays_are_optional() {
        let t0 = Instant::now();
        let mut w = FigureWindow::new(t0);
        assert_eq!(w.relay_lag_p99_ms(t0), None);
        w.relayed(t0, 80);
        assert!(w.relay_lag_p99_ms(t0).is_some_and(|p| (80.0..96.0).contains(&p)));
        for s in 0..5u64 {
            w.tick(t0 + Duration::from_secs(s), Duration::ZERO);
        }
        let later = t0 + Duration::from_secs(30);
        assert_eq!(w.relay_lag_p99_ms(later), None, "gone after the window");
        assert_eq!(w.ticks_per_s(later), 0.0, "a stalled shard runs no ticks");
        assert_eq!(w.uptime_ms(later), 30_000);
    }

    #[test]
    fn buckets_are_ordered_and_cover_50_seconds() {
        assert!((1..BUCKETS).all(|i| bound_ms(i) > bound_ms(i - 1)));
        assert!(bound_ms(BUCKETS - 1) > 50_000.0);
        let mut b = Buckets::default();
        b.add(0.0);
        b.add(1e9);
        assert_eq!((b.0[0], b.0[BUCKETS - 1]), (1, 1));
    }
}
