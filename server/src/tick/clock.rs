//! The tick clock: wakes the tick loop every period, on time.
//!
//! tokio's timers have a resolution of 1 ms, and a runtime woken by socket
//! work just before a tick re-arms its wait rounded up to the next whole
//! millisecond, so its ticks start 0 to 1.6 ms late, differently each time.
//! Every player sees that jitter in the gap between two snapshots. On Linux
//! the clock is a periodic `timerfd` instead (nanosecond resolution, no drift:
//! the kernel schedules each expiry from the previous one), read through the
//! runtime's reactor like a socket. Elsewhere, or if the timerfd cannot be
//! made, it is a tokio interval.
//!
//! **Phase.** Ticks fall on the wall clock's grid: the first is due when the
//! time since the Unix epoch is next a whole number of periods, and the rest
//! follow on the monotonic clock. So every shard of a place (one machine, or
//! machines kept in step by NTP) ticks at the same instants, and a frame
//! another shard published at its tick reaches this one well before its next
//! tick, every tick alike. With each process on a phase of its own, a relayed
//! frame arriving about when this shard ticks missed the tick one time in two
//! under load, and its players' gap was then two ticks (relayed gap p95 100 ms
//! at 2,500 players on two shards, benches/RESULTS.md section 9).

use crate::clock::Instant;
use mino_protocol::Tick;
use std::time::Duration;
use tokio::time::{Interval, MissedTickBehavior};

/// A periodic clock. Missed ticks (after a stall) are skipped, never replayed.
///
/// **Overdue.** The timer is read through the runtime's reactor, which is
/// polled only when the tick loop yields. A loop kept busy by sockets that
/// are always ready (a peer flooding frames) would never see it fire, and
/// every tick would wait for the flood to end: so the loop also asks
/// [`TickClock::overdue`], by the monotonic clock, between its other work.
/// Each due instant is served once, by whichever way notices it first.
pub struct TickClock {
    inner: Inner,
    period: Duration,
    /// The next due instant not yet served.
    next: Instant,
    /// When the first tick was due.
    first: Instant,
    /// The first tick's number: whole periods from the Unix epoch to it.
    origin: u64,
}

enum Inner {
    #[cfg(target_os = "linux")]
    Timerfd(timerfd::Periodic),
    Tokio(Interval),
}

impl TickClock {
    /// A clock whose first tick is due at the wall clock's next whole
    /// `period` (within one period from now; see the module docs).
    pub fn new(period: Duration) -> TickClock {
        let since = crate::clock::since_epoch();
        let wait = until_wall_grid(period, since);
        let origin = u64::try_from((since + wait).as_nanos() / period.as_nanos().max(1)).unwrap_or(u64::MAX / 2);
        let first = Instant::now() + wait;
        #[cfg(target_os = "linux")]
        match timerfd::Periodic::new(wait, period) {
            Ok(t) => return TickClock { inner: Inner::Timerfd(t), period, next: first, first, origin },
            Err(e) => tracing::warn!(error = %e, "no timerfd; ticks use tokio's 1 ms timer"),
        }
        let mut interval = tokio::time::interval_at(first, period);
        interval.set_missed_tick_behavior(MissedTickBehavior::Skip);
        TickClock { inner: Inner::Tokio(interval), period, next: first, first, origin }
    }

    /// Waits for the next tick; returns its number (whole periods since the
    /// Unix epoch: the shards of a place number their ticks alike, a tick's
    /// wall time is its number times the period, and missed ones leave a
    /// gap) and the instant it was due
    /// (the latest due instant, when ticks were missed). Cancel-safe.
    pub async fn tick(&mut self) -> (Tick, Instant) {
        loop {
            let due = self.due().await;
            // Already served by [`TickClock::overdue`]: wait for the next.
            if due >= self.next {
                self.next = due + self.period;
                return (self.number(due), due);
            }
        }
    }

    /// The tick due by now and not yet served, if any (its number and due
    /// instant, as [`TickClock::tick`] gives them), read from the monotonic
    /// clock rather than the timer: see the type's docs. Cheap (a clock
    /// read) when none is due.
    pub fn overdue(&mut self) -> Option<(Tick, Instant)> {
        let now = Instant::now();
        if now < self.next {
            return None;
        }
        let due = self.latest_due(now);
        self.next = due + self.period;
        #[cfg(target_os = "linux")]
        if let Inner::Timerfd(t) = &self.inner {
            t.take_expirations();
        }
        Some((self.number(due), due))
    }

    /// The number of the tick due at `due` (on the grid).
    fn number(&self, due: Instant) -> Tick {
        let period = self.period.as_nanos().max(1);
        let k = due.saturating_duration_since(self.first).as_nanos() / period;
        Tick(self.origin.saturating_add(u64::try_from(k).unwrap_or(u64::MAX / 2)))
    }

    async fn due(&mut self) -> Instant {
        loop {
            match &mut self.inner {
                #[cfg(target_os = "linux")]
                Inner::Timerfd(t) => match t.expired().await {
                    Ok(()) => return self.latest_due(Instant::now()),
                    Err(e) => {
                        // Not expected of a timerfd; keep ticking on the same grid.
                        tracing::warn!(error = %e, "tick timer failed; ticks use tokio's 1 ms timer from now on");
                        let next = self.latest_due(Instant::now()) + self.period;
                        let mut interval = tokio::time::interval_at(next, self.period);
                        interval.set_missed_tick_behavior(MissedTickBehavior::Skip);
                        self.inner = Inner::Tokio(interval);
                    }
                },
                Inner::Tokio(interval) => return interval.tick().await,
            }
        }
    }

    /// The latest instant on the tick grid at or before `now`.
    fn latest_due(&self, now: Instant) -> Instant {
        let period = self.period.as_nanos().max(1);
        let k = now.saturating_duration_since(self.first).as_nanos() / period;
        self.first + Duration::from_nanos(u64::try_from(k * period).unwrap_or(u64::MAX))
    }
}

/// From `since_epoch` (now on the wall clock) to the next instant at which
/// the time since the Unix epoch is a whole number of `period`s: more than 0,
/// at most one period.
fn until_wall_grid(period: Duration, since_epoch: Duration) -> Duration {
    let period = period.as_nanos().max(1);
    Duration::from_nanos(u64::try_from(period - since_epoch.as_nanos() % period).unwrap_or(u64::MAX))
}

#[cfg(target_os = "linux")]
mod timerfd {
    use nix::sys::time::TimeSpec;
    use nix::sys::timerfd::{ClockId, Expiration, TimerFd, TimerFlags, TimerSetTimeFlags};
    use std::os::fd::OwnedFd;
    use std::time::Duration;
    use tokio::io::unix::AsyncFd;

    /// A periodic CLOCK_MONOTONIC timerfd in the runtime's reactor.
    pub struct Periodic(AsyncFd<OwnedFd>);

    impl Periodic {
        /// Expires first after `first`, then every `period`.
        pub fn new(first: Duration, period: Duration) -> std::io::Result<Periodic> {
            let fd = TimerFd::new(ClockId::CLOCK_MONOTONIC, TimerFlags::TFD_NONBLOCK | TimerFlags::TFD_CLOEXEC)?;
            let expiration =
                Expiration::IntervalDelayed(TimeSpec::from_duration(first), TimeSpec::from_duration(period));
            fd.set(expiration, TimerSetTimeFlags::empty())?;
            let fd = OwnedFd::from(fd);
            // SAFETY: the AsyncFd owns the descriptor (an OwnedFd), so it stays
            // open for as long as it is registered with the reactor.
            #[allow(unsafe_code)]
            let registered = unsafe { AsyncFd::register(fd) };
            Ok(Periodic(registered.map_err(std::io::Error::from)?))
        }

        /// Takes the expirations counted so far, if any, without waiting (a
        /// tick served by [`super::TickClock::overdue`]).
        pub fn take_expirations(&self) {
            let mut count = [0u8; 8];
            // Nothing to take (EAGAIN) is as good as taking it.
            let _ = nix::unistd::read(self.0.get_ref(), &mut count);
        }

        /// Waits until the timer expired at least once since the last call.
        ///
        /// Errors: the reactor is gone, or reading the timer failed.
        pub async fn expired(&self) -> std::io::Result<()> {
            let mut count = [0u8; 8];
            loop {
                let mut guard = self.0.readable().await?;
                match guard.try_io(|fd| nix::unistd::read(fd.get_ref(), &mut count).map_err(std::io::Error::from)) {
                    Ok(result) => return result.map(drop),
                    Err(_would_block) => {}
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_tick_waits_for_the_wall_clocks_next_whole_period() {
        let period = Duration::from_millis(50);
        let at = Duration::from_millis;
        assert_eq!(until_wall_grid(period, at(1_764_450_000_010)), Duration::from_millis(40));
        assert_eq!(until_wall_grid(period, at(1_764_450_000_049)), Duration::from_millis(1));
        assert_eq!(until_wall_grid(period, at(1_764_450_000_050)), period, "on the grid: the next one");
        let wait = until_wall_grid(period, crate::clock::since_epoch());
        assert!(wait > Duration::ZERO && wait <= period);
    }

    #[tokio::test]
    async fn ticks_fall_on_the_period_grid_and_missed_ones_are_skipped() {
        let period = Duration::from_millis(20);
        let mut clock = TickClock::new(period);
        let (n, first) = clock.tick().await;
        assert_eq!((n, first), (Tick(clock.origin), clock.first));
        let wall = crate::clock::since_epoch().as_nanos() / period.as_nanos();
        assert!(u128::from(n.0).abs_diff(wall) <= 1, "numbered in periods since the epoch: {} vs {wall}", n.0);
        // Block the runtime across three due ticks, as a stalled process would.
        std::thread::sleep(Duration::from_millis(70));
        let (late_n, late) = clock.tick().await;
        let skipped = late - first;
        assert!(skipped >= period * 3, "the latest due tick, not the next missed one: {skipped:?}");
        assert_eq!(skipped.as_nanos() % period.as_nanos(), 0, "on the grid: {skipped:?}");
        assert_eq!(late_n.0 - n.0, (skipped.as_nanos() / period.as_nanos()) as u64, "numbers count scheduled ticks");
        let (next_n, next) = clock.tick().await;
        assert_eq!((next - late, next_n.0), (period, late_n.0 + 1), "missed ticks are not replayed");
    }

    #[tokio::test]
    async fn a_loop_that_never_yields_still_finds_its_tick_overdue_and_each_is_served_once() {
        let period = Duration::from_millis(20);
        let mut clock = TickClock::new(period);
        let (n, _) = clock.tick().await;
        assert_eq!(clock.overdue(), None, "just served");
        // Busy without yielding (the reactor never polled) past the next due
        // instant: the timer cannot tell, the clock can.
        let busy = std::time::Instant::now();
        while busy.elapsed() < period + Duration::from_millis(5) {
            std::hint::spin_loop();
        }
        let (m, due) = clock.overdue().expect("a tick overdue by the clock");
        // The next, or a later one when this machine was slower still.
        assert!(m.0 > n.0, "{m:?} after {n:?}");
        assert_eq!(clock.overdue(), None, "served once");
        // The timer's expiry for that instant does not serve it again.
        let (k, next) = clock.tick().await;
        assert!(k.0 > m.0 && next > due, "{k:?} at {next:?} after {m:?} at {due:?}");
        assert_eq!((next - due).as_nanos() % period.as_nanos(), 0, "on the grid");
    }
}
