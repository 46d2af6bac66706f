//! A measurement [`Window`] encoded for another process (an agent's answer
//! to its coordinator): the counters as they are, each metric's histogram in
//! HdrHistogram's V2 encoding (base64, the format HdrHistogram's own tools
//! read), so that windows of several processes merge exactly, bucket for
//! bucket, as the stripes of one process do.

use super::{histogram, CounterValues, Latencies, Metric, Window, MAX_RECORDED_US, SIGFIGS};
use base64::engine::general_purpose::STANDARD as BASE64;
use base64::Engine as _;
use hdrhistogram::serialization::{Deserializer, Serializer as _, V2Serializer};
use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::time::Duration;

/// A [`Window`] as sent: what [`Window::encode`] makes and
/// [`EncodedWindow::decode`] reads back.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct EncodedWindow {
    /// Wall time the window covered, µs.
    pub elapsed_us: u64,
    /// Counter increments during the window.
    pub counters: CounterValues,
    /// Each metric with samples, by [`Metric::label`]: its µs histogram in
    /// V2 encoding, base64 (standard alphabet, padded). Metrics without
    /// samples are left out.
    pub histograms: BTreeMap<String, String>,
}

/// Why an [`EncodedWindow`] could not be read.
#[derive(Debug, thiserror::Error)]
pub enum DecodeError {
    /// A histogram under a name no [`Metric`] has.
    #[error("unknown metric {0:?}")]
    UnknownMetric(String),
    /// Not base64.
    #[error("histogram of {metric}: not base64: {detail}")]
    Base64 {
        /// The metric's label.
        metric: &'static str,
        /// The decoder's message.
        detail: String,
    },
    /// Not a V2 histogram.
    #[error("histogram of {metric}: {detail}")]
    Histogram {
        /// The metric's label.
        metric: &'static str,
        /// The deserializer's message.
        detail: String,
    },
    /// A histogram with other bounds or precision than this process's, which
    /// would not merge bucket for bucket.
    #[error("histogram of {metric}: bounds {low}..{high} at {sigfig} digits, not 1..{MAX_RECORDED_US} at {SIGFIGS}")]
    Bounds {
        /// The metric's label.
        metric: &'static str,
        /// Its lowest discernible value.
        low: u64,
        /// Its highest trackable value.
        high: u64,
        /// Its significant digits.
        sigfig: u8,
    },
}

impl Window {
    /// This window, encoded for another process.
    pub fn encode(&self) -> EncodedWindow {
        let mut histograms = BTreeMap::new();
        for metric in Metric::ALL {
            let h = self.latencies.histogram(metric);
            if h.is_empty() {
                continue;
            }
            let mut bytes = Vec::new();
            // Writing to a Vec fails only for a histogram the V2 format cannot
            // hold (more than i32::MAX buckets), which these bounds rule out.
            if let Err(e) = V2Serializer::new().serialize(h, &mut bytes) {
                tracing::warn!("histogram of {} not encoded: {e:?}", metric.label());
                continue;
            }
            histograms.insert(metric.label().to_owned(), BASE64.encode(bytes));
        }
        EncodedWindow {
            elapsed_us: u64::try_from(self.elapsed.as_micros()).unwrap_or(u64::MAX),
            counters: self.counters.clone(),
            histograms,
        }
    }

    /// Two windows of the same stretch of time measured side by side (by two
    /// processes): histograms and counters added, the longer wall time kept.
    /// ([`Window::merge`] joins consecutive windows of one process instead.)
    pub fn alongside(&self, other: &Window) -> Window {
        let mut latencies = self.latencies.clone();
        latencies.add(&other.latencies);
        Window { latencies, counters: self.counters.plus(&other.counters), elapsed: self.elapsed.max(other.elapsed) }
    }

    /// An empty window of no time.
    pub fn empty() -> Window {
        Window { latencies: Latencies::new(), counters: CounterValues::default(), elapsed: Duration::ZERO }
    }
}

impl EncodedWindow {
    /// The window this encodes.
    ///
    /// Errors: an unknown metric, bad base64, a malformed histogram, or one
    /// with other bounds than [`MAX_RECORDED_US`] at [`SIGFIGS`] digits.
    pub fn decode(&self) -> Result<Window, DecodeError> {
        let mut latencies = Latencies::new();
        for (name, text) in &self.histograms {
            let metric = Metric::of_label(name).ok_or_else(|| DecodeError::UnknownMetric(name.clone()))?;
            let metric_label = metric.label();
            let bytes =
                BASE64.decode(text).map_err(|e| DecodeError::Base64 { metric: metric_label, detail: e.to_string() })?;
            let h: Histogram<u32> = Deserializer::new()
                .deserialize(&mut bytes.as_slice())
                .map_err(|e| DecodeError::Histogram { metric: metric_label, detail: format!("{e:?}") })?;
            let ours = histogram();
            if (h.low(), h.high(), h.sigfig()) != (ours.low(), ours.high(), ours.sigfig()) {
                return Err(DecodeError::Bounds {
                    metric: metric_label,
                    low: h.low(),
                    high: h.high(),
                    sigfig: h.sigfig(),
                });
            }
            latencies.0[metric.index()] = h;
        }
        Ok(Window { latencies, counters: self.counters.clone(), elapsed: Duration::from_micros(self.elapsed_us) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::{Stats, Tally};

    fn window(samples_ms: &[u64], frames: u64) -> Window {
        let stats = Stats::new();
        for (i, ms) in samples_ms.iter().enumerate() {
            stats.record(i, Metric::SnapshotGap, Duration::from_millis(*ms));
            stats.record(i, Metric::Welcome, Duration::from_micros(*ms * 7 + 3));
        }
        for _ in 0..frames {
            stats.frame(10);
        }
        stats.add(Tally::CellFrames, frames);
        stats.failure(crate::failure::FailureKind::JoinTimeout);
        stats.take_window()
    }

    #[test]
    fn a_window_survives_encoding_exactly() {
        let w = window(&[50, 51, 49, 120, 50, 3000], 7);
        let text = serde_json::to_string(&w.encode()).expect("json");
        let back = serde_json::from_str::<EncodedWindow>(&text).expect("parses").decode().expect("decodes");
        for m in Metric::ALL {
            assert_eq!(back.latencies.histogram(m), w.latencies.histogram(m), "{}", m.label());
        }
        assert_eq!(back.counters, w.counters);
        assert_eq!(back.counters.tally(Tally::CellFrames), 7);
        assert_eq!(back.elapsed.as_micros(), w.elapsed.as_micros());
    }

    #[test]
    fn windows_side_by_side_merge_as_one_process_would() {
        let (a, b) = ([50, 52, 48, 49, 250], [51, 50, 900, 47]);
        let both: Vec<u64> = a.iter().chain(b.iter()).copied().collect();
        let (wa, wb, whole) = (window(&a, 3), window(&b, 4), window(&both, 7));
        let decoded = |w: &Window| w.encode().decode().expect("decodes");
        let merged = decoded(&wa).alongside(&decoded(&wb));
        assert_eq!(merged.latencies.histogram(Metric::SnapshotGap), whole.latencies.histogram(Metric::SnapshotGap));
        assert_eq!(merged.latencies.summary(Metric::SnapshotGap), whole.latencies.summary(Metric::SnapshotGap));
        assert_eq!((merged.counters.frames, merged.counters.error_total()), (7, 2));
    }

    #[test]
    fn bad_histograms_are_refused_not_trusted() {
        let mut e = window(&[50], 1).encode();
        e.histograms.insert("nonsense".into(), String::new());
        assert!(matches!(e.decode(), Err(DecodeError::UnknownMetric(_))));
        let mut e = window(&[50], 1).encode();
        e.histograms.insert("snapshot_gap".into(), "!!".into());
        assert!(matches!(e.decode(), Err(DecodeError::Base64 { .. })));
        let mut e = window(&[50], 1).encode();
        e.histograms.insert("snapshot_gap".into(), BASE64.encode([1, 2, 3]));
        assert!(matches!(e.decode(), Err(DecodeError::Histogram { .. })));
        let mut other = Histogram::<u32>::new_with_bounds(1, 1000, 2).expect("bounds");
        other.record(5).expect("in range");
        let mut bytes = Vec::new();
        V2Serializer::new().serialize(&other, &mut bytes).expect("encodes");
        let mut e = window(&[50], 1).encode();
        e.histograms.insert("snapshot_gap".into(), BASE64.encode(bytes));
        assert!(matches!(e.decode(), Err(DecodeError::Bounds { .. })));
    }
}
