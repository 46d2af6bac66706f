//! The driver's bookkeeping of the shard's own figures: every tick's lateness
//! and relayed frames go into a [`FigureWindow`]; once a second the figures
//! the admin console shows are made anew and handed on (to the admin
//! listener and, clustered, to the heartbeat).

use crate::clock::Instant;
use crate::figures::{FigureWindow, ShardFigures};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::watch;

/// How often the figures are made anew.
pub const REFRESH: Duration = Duration::from_secs(1);

/// What changes besides the window: the core's state at a tick.
#[derive(Clone, Copy, Debug, Default)]
pub struct CoreState {
    /// Draining: the players there were when the drain began.
    pub drain_from: Option<usize>,
    /// Publishing held back.
    pub fenced: bool,
}

/// The window and the newest figures.
#[derive(Debug)]
pub struct Vitals {
    window: FigureWindow,
    /// What does not change: tick rate, max players, version, admin address.
    base: ShardFigures,
    made_at: Option<Instant>,
    tx: watch::Sender<Arc<ShardFigures>>,
}

impl Vitals {
    /// Vitals of a shard started at `now` with the unchanging figures `base`,
    /// and the receiving end of its figures.
    pub fn new(base: ShardFigures, now: Instant) -> (Vitals, watch::Receiver<Arc<ShardFigures>>) {
        let (tx, rx) = watch::channel(Arc::new(base.clone()));
        (Vitals { window: FigureWindow::new(now), base, made_at: None, tx }, rx)
    }

    /// A tick ran at `now`, `lateness` late, handing relayed frames of the
    /// ages `relay_lag_ms` to sockets. Returns the figures when they were
    /// made anew (at most once per [`REFRESH`], or at once when the core's
    /// state changed).
    pub fn tick(
        &mut self,
        now: Instant,
        lateness: Duration,
        relay_lag_ms: &[u64],
        core: CoreState,
    ) -> Option<Arc<ShardFigures>> {
        self.window.tick(now, lateness);
        for lag in relay_lag_ms {
            self.window.relayed(now, *lag);
        }
        let old = self.tx.borrow().clone();
        let changed = old.drain_from != core.drain_from.map(|n| n as u32) || old.fenced != core.fenced;
        let due = self.made_at.is_none_or(|t| now.saturating_duration_since(t) >= REFRESH);
        if !changed && !due {
            return None;
        }
        self.made_at = Some(now);
        let figures = Arc::new(ShardFigures {
            ticks_per_s: self.window.ticks_per_s(now),
            lateness_p99_ms: self.window.lateness_p99_ms(now),
            relay_lag_p99_ms: self.window.relay_lag_p99_ms(now),
            drain_from: core.drain_from.map(|n| n as u32),
            fenced: core.fenced,
            uptime_ms: self.window.uptime_ms(now),
            ..self.base.clone()
        });
        self.tx.send_replace(figures.clone());
        Some(figures)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn figures_are_made_once_a_second_or_when_the_core_changes() {
        let t0 = Instant::now();
        let base = ShardFigures { tick_hz: 20, version: "1.2.3".into(), ..ShardFigures::default() };
        let (mut v, rx) = Vitals::new(base, t0);
        let ms = Duration::from_millis;
        assert!(v.tick(t0, ms(1), &[], CoreState::default()).is_some(), "the first tick makes them");
        assert!(v.tick(t0 + ms(50), ms(1), &[30], CoreState::default()).is_none());
        let draining = CoreState { drain_from: Some(12), fenced: false };
        let f = v.tick(t0 + ms(100), ms(1), &[], draining).expect("the drain shows at once");
        assert_eq!((f.drain_from, f.tick_hz, f.version.as_str()), (Some(12), 20, "1.2.3"));
        assert_eq!(rx.borrow().drain_from, Some(12));
        assert!(v.tick(t0 + ms(1100), ms(1), &[], draining).is_some_and(|f| f.relay_lag_p99_ms.is_some()));
    }
}
