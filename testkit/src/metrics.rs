//! A scrape of Prometheus text (a shard's `/metrics`) parsed into values:
//! each sample by its series as printed (name and labels, e.g.
//! `mino_sockets_closed_total{transport="websocket",reason="too_slow"}`), and the metric families
//! the text declares.

use mino_loadgen::scrape::sample;
use std::collections::BTreeSet;

/// One parsed scrape.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Metrics {
    /// (series as printed, value), in the order of the text.
    samples: Vec<(String, f64)>,
    /// Family names of the `# TYPE` lines, in order.
    families: Vec<String>,
}

impl Metrics {
    /// Parses the text exposition format (each sample line by loadgen's
    /// `scrape::sample`, the workspace's one parser of it). Lines that are
    /// neither a sample, a comment nor blank are skipped (a test then finds
    /// no value).
    pub fn parse(text: &str) -> Metrics {
        let mut m = Metrics::default();
        for line in text.lines().map(str::trim) {
            if let Some(decl) = line.strip_prefix("# TYPE ") {
                m.families.extend(decl.split_whitespace().next().map(String::from));
            } else if let Some((series, value)) = sample(line) {
                m.samples.push((series.to_owned(), value));
            }
        }
        m
    }

    /// The value of `series` (exact name with labels as printed, e.g.
    /// `mino_players`), None when the scrape has no such sample.
    pub fn value(&self, series: &str) -> Option<f64> {
        self.samples.iter().find(|(s, _)| s == series).map(|(_, v)| *v)
    }

    /// The value of `series`, 0 when absent (a labelled counter of an open
    /// set of labels appears once its label value first occurs).
    pub fn value_or_zero(&self, series: &str) -> f64 {
        self.value(series).unwrap_or(0.0)
    }

    /// Every sample: (series as printed, value), in the order of the text.
    pub fn samples(&self) -> impl Iterator<Item = (&str, f64)> {
        self.samples.iter().map(|(s, v)| (s.as_str(), *v))
    }

    /// The family names the scrape declares (`# TYPE` lines).
    pub fn families(&self) -> BTreeSet<&str> {
        self.families.iter().map(String::as_str).collect()
    }

    /// The names of the samples, labels dropped (`mino_tick_seconds_bucket`).
    pub fn sample_names(&self) -> BTreeSet<&str> {
        self.samples.iter().map(|(s, _)| s.split('{').next().unwrap_or(s)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SCRAPE: &str = "# HELP mino_players Players.\n# TYPE mino_players gauge\nmino_players 3\n\
        # TYPE mino_sockets_closed counter\n\
        mino_sockets_closed_total{reason=\"too_slow\"} 2\n\
        mino_sockets_closed_total{reason=\"a} \\\"b\"} 1 1700000000\n\
        # TYPE mino_tick_seconds histogram\nmino_tick_seconds_bucket{le=\"+Inf\"} 40\nmino_tick_seconds_sum 0.5\n\
        # EOF\n";

    #[test]
    fn samples_are_found_by_their_series_as_printed() {
        let m = Metrics::parse(SCRAPE);
        assert_eq!(m.value("mino_players"), Some(3.0));
        assert_eq!(m.value("mino_sockets_closed_total{reason=\"too_slow\"}"), Some(2.0));
        assert_eq!(m.value("mino_sockets_closed_total{reason=\"a} \\\"b\"}"), Some(1.0));
        assert_eq!(m.value("mino_tick_seconds_bucket{le=\"+Inf\"}"), Some(40.0));
        assert_eq!(m.value("mino_play"), None, "no prefix matches");
        assert_eq!(m.value_or_zero("mino_sockets_closed_total{reason=\"malformed\"}"), 0.0);
    }

    #[test]
    fn families_and_sample_names() {
        let m = Metrics::parse(SCRAPE);
        assert_eq!(
            m.families().into_iter().collect::<Vec<_>>(),
            ["mino_players", "mino_sockets_closed", "mino_tick_seconds"]
        );
        assert!(m.sample_names().contains("mino_sockets_closed_total"));
        assert!(m.sample_names().contains("mino_tick_seconds_sum"));
    }

    #[test]
    fn broken_lines_are_skipped() {
        let m = Metrics::parse("mino_a\nmino_b{x=\"1\" 2\nmino_c nan_or_not\nmino_d 4\n");
        assert_eq!(m.samples, [("mino_d".to_owned(), 4.0)]);
    }
}
