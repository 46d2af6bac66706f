//! Progress bars during ramps and holds (indicatif, on stderr), hidden in
//! quiet mode so `--json`-only runs print nothing.

use indicatif::{ProgressBar, ProgressStyle};
use std::time::Duration;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

/// How often a hold bar refreshes its message.
const REFRESH: Duration = Duration::from_millis(250);

/// Makes progress bars, or hidden ones when quiet.
#[derive(Clone, Copy, Debug)]
pub struct Progress {
    quiet: bool,
}

impl Progress {
    /// Visible bars unless `quiet`.
    pub fn new(quiet: bool) -> Progress {
        Progress { quiet }
    }

    /// True when nothing is drawn.
    pub fn is_quiet(&self) -> bool {
        self.quiet
    }

    /// A bar counting `len` items (bots), labelled `msg`.
    pub fn counter(&self, len: u64, msg: String) -> ProgressBar {
        self.bar(len, msg, "{msg:>14} [{bar:40}] {pos}/{len} bots {elapsed} {prefix}")
    }

    fn bar(&self, len: u64, msg: String, template: &str) -> ProgressBar {
        if self.quiet {
            return ProgressBar::hidden();
        }
        let bar = ProgressBar::new(len).with_message(msg);
        if let Ok(style) = ProgressStyle::with_template(template) {
            bar.set_style(style.progress_chars("=> "));
        }
        bar
    }

    /// Waits `d` while a bar fills; `status` is shown beside it and refreshed.
    /// Returns false if `stop` fired first.
    pub async fn hold(&self, d: Duration, msg: String, stop: &CancellationToken, status: impl Fn() -> String) -> bool {
        let bar = self.bar(d.as_millis() as u64, msg, "{msg:>14} [{bar:40}] {elapsed}/{duration} {prefix}");
        let start = Instant::now();
        let end = start + d;
        let done = loop {
            bar.set_position(start.elapsed().as_millis() as u64);
            bar.set_prefix(status());
            let now = Instant::now();
            if now >= end {
                break true;
            }
            tokio::select! {
                _ = stop.cancelled() => break false,
                _ = tokio::time::sleep_until((now + REFRESH).min(end)) => {}
            }
        };
        bar.finish_and_clear();
        done
    }
}
