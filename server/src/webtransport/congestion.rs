//! The sessions' congestion controller: quinn's CUBIC or BBR, with a floor
//! under its window.
//!
//! **Why a floor.** A session's datagrams are bounded by the tick: at most
//! one view frame a tick, itself within `--view-budget-bytes`. Such a flow
//! is *application-limited*: it never fills a window, and quinn's CUBIC (as
//! RFC 9438 §4.8 asks) does not grow its window while the sender is
//! application-limited (`quinn-proto` 0.11, `Cubic::on_ack` returns early
//! when `app_limited`). Every loss still cuts it by 30 %. So on a path with
//! random loss (wifi, mobile: 0.5-2 %), the window of a game session only
//! shrinks, to CUBIC's minimum of two packets, and stays there; a frame sent
//! after a loss then waits for acknowledgements before it may leave, which
//! is the lost tick plus a stall. Behind a link losing 2 % each way with a
//! 40 ms round trip, that stall put the longest freeze p99 of 200 walkers
//! at 176 ms, against 150 ms for two lost ticks in a row (benches/RESULTS.md,
//! section 16). The floor keeps the window at a few ticks of frames, so
//! what the tick sends leaves when it is sent; above the floor the
//! controller rules as before, so a session that sends more than the floor
//! a round trip (a crowded view on a slow path) is still held to the path.

use quinn_proto::RttEstimator;
use std::any::Any;
use std::sync::Arc;
use std::time::Instant;
use wtransport::quinn::congestion::{Controller, ControllerFactory, ControllerMetrics};

/// Builds `inner`'s controllers with a window of at least `floor` bytes.
#[derive(Debug)]
pub struct FlooredFactory<F> {
    /// The controller underneath (quinn's `CubicConfig` or `BbrConfig`).
    pub inner: Arc<F>,
    /// The least window, bytes (0: none).
    pub floor: u64,
}

impl<F: ControllerFactory + Send + Sync + 'static> ControllerFactory for FlooredFactory<F> {
    fn build(self: Arc<Self>, now: Instant, current_mtu: u16) -> Box<dyn Controller> {
        Box::new(Floored { inner: self.inner.clone().build(now, current_mtu), floor: self.floor })
    }
}

/// A controller whose window (and so its pacing, which quinn derives from
/// the window) never falls below `floor` bytes; everything else is the
/// inner controller's.
struct Floored {
    inner: Box<dyn Controller>,
    floor: u64,
}

impl Controller for Floored {
    fn on_sent(&mut self, now: Instant, bytes: u64, last_packet_number: u64) {
        self.inner.on_sent(now, bytes, last_packet_number);
    }

    fn on_ack(&mut self, now: Instant, sent: Instant, bytes: u64, app_limited: bool, rtt: &RttEstimator) {
        self.inner.on_ack(now, sent, bytes, app_limited, rtt);
    }

    fn on_end_acks(&mut self, now: Instant, in_flight: u64, app_limited: bool, largest_packet_num_acked: Option<u64>) {
        self.inner.on_end_acks(now, in_flight, app_limited, largest_packet_num_acked);
    }

    fn on_congestion_event(&mut self, now: Instant, sent: Instant, is_persistent_congestion: bool, lost_bytes: u64) {
        self.inner.on_congestion_event(now, sent, is_persistent_congestion, lost_bytes);
    }

    fn on_mtu_update(&mut self, new_mtu: u16) {
        self.inner.on_mtu_update(new_mtu);
    }

    fn window(&self) -> u64 {
        self.inner.window().max(self.floor)
    }

    fn metrics(&self) -> ControllerMetrics {
        let mut metrics = self.inner.metrics();
        metrics.congestion_window = self.window();
        metrics
    }

    fn clone_box(&self) -> Box<dyn Controller> {
        Box::new(Floored { inner: self.inner.clone_box(), floor: self.floor })
    }

    fn initial_window(&self) -> u64 {
        self.inner.initial_window().max(self.floor)
    }

    fn into_any(self: Box<Self>) -> Box<dyn Any> {
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use wtransport::quinn::congestion::CubicConfig;

    const MTU: u16 = 1_200;

    fn cubic(floor: u64) -> Box<dyn Controller> {
        Arc::new(FlooredFactory { inner: Arc::new(CubicConfig::default()), floor }).build(Instant::now(), MTU)
    }

    /// Random loss on an application-limited flow: a loss every 100 ms
    /// (more than a round trip apart, so each is a congestion event of
    /// its own), the batches of acknowledgements in between saying the
    /// sender was application-limited. (CUBIC's per-packet `on_ack`
    /// returns at once when application-limited; quinn does not let a
    /// test make the `RttEstimator` it takes.)
    fn lossy_app_limited(c: &mut dyn Controller, losses: u32) {
        let start = Instant::now();
        for i in 0..losses {
            let now = start + std::time::Duration::from_millis(100 * u64::from(i + 1));
            let sent = now - std::time::Duration::from_millis(40);
            c.on_sent(sent, 900, u64::from(i) * 4);
            c.on_congestion_event(now, sent, false, 900);
            for k in 0..3 {
                c.on_end_acks(now, 900, true, Some(u64::from(i) * 4 + k));
            }
        }
    }

    #[test]
    fn cubic_alone_falls_to_two_packets_under_random_loss_and_the_floor_holds() {
        let mut bare = cubic(0);
        let initial = bare.window();
        lossy_app_limited(bare.as_mut(), 20);
        assert_eq!(bare.window(), 2 * u64::from(MTU), "CUBIC's minimum, from {initial}");

        let mut floored = cubic(16_384);
        lossy_app_limited(floored.as_mut(), 20);
        assert_eq!(floored.window(), 16_384);
        assert_eq!(floored.metrics().congestion_window, 16_384);
    }

    #[test]
    fn above_the_floor_the_controller_rules() {
        let floored = cubic(1_000);
        let bare = cubic(0);
        assert_eq!(floored.window(), bare.window());
        assert_eq!(floored.initial_window(), bare.initial_window());
        assert!(floored.window() > 1_000);
    }
}
