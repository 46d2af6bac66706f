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
//!
//! **What it gives up.** Below the floor, random loss and congestion look
//! alike to the controller, and the floor ignores both: a session keeps
//! sending up to the floor a round trip on a path that is really full
//! (RFC 9221 asks datagrams to be congestion-controlled). Two signals that
//! are not random loss lift it for [`PAUSE`]: persistent congestion (RFC
//! 9002 §7.6: everything lost for several round trips) and an ECN
//! congestion mark. It also raises the first window to the floor (quinn's
//! own: 12,000 bytes at its first MTU).

use quinn_proto::RttEstimator;
use std::any::Any;
use std::sync::Arc;
use std::time::{Duration, Instant};
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
        Box::new(Floored { inner: self.inner.clone().build(now, current_mtu), floor: self.floor, paused_until: None })
    }
}

/// How long persistent congestion or an ECN mark lifts the floor.
pub const PAUSE: Duration = Duration::from_secs(2);

/// A controller whose window (and so its pacing, which quinn derives from
/// the window) never falls below `floor` bytes; everything else is the
/// inner controller's.
struct Floored {
    inner: Box<dyn Controller>,
    floor: u64,
    /// Until when the floor is lifted (the path said it is congested).
    paused_until: Option<Instant>,
}

impl Floored {
    /// Ends a pause that is over.
    fn resume(&mut self, now: Instant) {
        if self.paused_until.is_some_and(|until| now >= until) {
            self.paused_until = None;
        }
    }
}

impl Controller for Floored {
    fn on_sent(&mut self, now: Instant, bytes: u64, last_packet_number: u64) {
        self.resume(now);
        self.inner.on_sent(now, bytes, last_packet_number);
    }

    fn on_ack(&mut self, now: Instant, sent: Instant, bytes: u64, app_limited: bool, rtt: &RttEstimator) {
        self.inner.on_ack(now, sent, bytes, app_limited, rtt);
    }

    fn on_end_acks(&mut self, now: Instant, in_flight: u64, app_limited: bool, largest_packet_num_acked: Option<u64>) {
        self.inner.on_end_acks(now, in_flight, app_limited, largest_packet_num_acked);
    }

    fn on_congestion_event(&mut self, now: Instant, sent: Instant, is_persistent_congestion: bool, lost_bytes: u64) {
        // Persistent congestion, or an ECN mark (no bytes lost): the path
        // says it is full, which random loss does not.
        if is_persistent_congestion || lost_bytes == 0 {
            self.paused_until = Some(now + PAUSE);
        }
        self.inner.on_congestion_event(now, sent, is_persistent_congestion, lost_bytes);
    }

    fn on_mtu_update(&mut self, new_mtu: u16) {
        self.inner.on_mtu_update(new_mtu);
    }

    fn window(&self) -> u64 {
        match self.paused_until {
            Some(_) => self.inner.window(),
            None => self.inner.window().max(self.floor),
        }
    }

    fn metrics(&self) -> ControllerMetrics {
        let mut metrics = self.inner.metrics();
        metrics.congestion_window = self.window();
        metrics
    }

    fn clone_box(&self) -> Box<dyn Controller> {
        Box::new(Floored { inner: self.inner.clone_box(), floor: self.floor, paused_until: self.paused_until })
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

    /// Random loss: a loss every 100 ms (more than a round trip apart, so
    /// each is a congestion event of its own). Nothing regrows the window
    /// in between: on an application-limited flow CUBIC's per-packet
    /// `on_ack` returns at once, and quinn does not let a test make the
    /// `RttEstimator` that call takes, so the test leaves it out.
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

    #[test]
    fn persistent_congestion_or_an_ecn_mark_lifts_the_floor_for_a_while() {
        let start = Instant::now();
        for persistent in [true, false] {
            let mut c = cubic(16_384);
            let now = start + Duration::from_secs(1);
            // Persistent congestion, or an ECN mark (no bytes lost).
            let lost = if persistent { 10_000 } else { 0 };
            c.on_congestion_event(now, now - Duration::from_millis(500), persistent, lost);
            assert!(c.window() < 16_384, "held to the path: {}", c.window());
            c.on_sent(now + PAUSE / 2, 900, 1);
            assert!(c.window() < 16_384, "still within the pause");
            c.on_sent(now + PAUSE, 900, 2);
            assert_eq!(c.window(), 16_384, "the floor again after the pause");
        }
    }
}
