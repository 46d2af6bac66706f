//! Section 8, criterion's micro-benchmarks of the hot paths.

use super::fmt::{ns, table};
use super::Report;

impl Report {
    pub(super) fn criterion_section(&self) -> Vec<String> {
        let mut out = vec!["## 8. Micro-benchmarks (criterion)".to_owned(), String::new()];
        let benches = self.raw.criterion.as_ref().map(|c| c.benchmarks.as_slice()).unwrap_or_default();
        if benches.is_empty() {
            out.extend(["Not run (or `--skip-criterion`).".to_owned(), String::new()]);
            return out;
        }
        let rows: Vec<Vec<String>> = benches
            .iter()
            .map(|b| {
                let per =
                    b.elements.filter(|e| *e > 0).map_or("–".into(), |e| format!("{:.2} ns", b.median_ns / e as f64));
                let [lo, hi] = b.mean_ci_ns;
                vec![
                    format!("`{}`", b.id),
                    ns(b.median_ns),
                    format!("{} ({} to {})", ns(b.mean_ns), ns(lo), ns(hi)),
                    per,
                ]
            })
            .collect();
        out.extend([
            "`cargo bench -p mino-benches`: snapshot encode at 100, 1,000 and 5,000 players; client message decode \
             with verification; snapshot header verify of a 1,000-player frame; one shard tick (move everyone, \
             encode, stage presence); with area of interest, every cell's entries of a shard encoded and one shard \
             tick at 1,000, 5,000 and 10,000 players at 4 a cell (flat per player: linear). Times per iteration; the \
             original published none."
                .to_owned(),
            String::new(),
        ]);
        out.extend(table(&["benchmark", "median", "mean (95 % CI)", "per player"], &rows));
        out.push(String::new());
        out
    }
}
