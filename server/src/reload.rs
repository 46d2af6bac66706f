//! Files a shard reads again while it runs (identity keys, admin tokens):
//! on SIGHUP, and when the file changes (looked at once a second), so
//! operators rotate them without a restart. A file that fails to load is
//! logged and what was loaded before stays in force.

use std::path::Path;
use std::time::{Duration, SystemTime};
use tokio_util::sync::CancellationToken;

/// How often the file's time and length are looked at.
pub const LOOK_INTERVAL: Duration = Duration::from_secs(1);

/// What tells a changed file: its modification time and its length (a
/// rewrite within the file system's time resolution usually changes the
/// length). `None` from [`FileStamp::of`]: the file cannot be looked at.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FileStamp {
    modified: SystemTime,
    len: u64,
}

impl FileStamp {
    /// The stamp of the file at `path` now.
    pub fn of(path: &Path) -> Option<FileStamp> {
        let meta = std::fs::metadata(path).ok()?;
        Some(FileStamp { modified: meta.modified().ok()?, len: meta.len() })
    }
}

/// Something loaded from a file and replaced in place.
pub trait Reloadable {
    /// Why a reload failed.
    type Error: std::fmt::Display;
    /// True when the file changed since it was last read.
    fn changed(&self) -> bool;
    /// Reads the file again: the number of entries now in force.
    ///
    /// Errors: the file could not be read or parsed; the entries before stay.
    fn reload(&self) -> Result<usize, Self::Error>;
}

/// Reloads `what` (read from `file`, logged as `name`: "identity keys",
/// "admin tokens") on SIGHUP and when the file changes, until `stop`. Each
/// reload is logged with its count, never the contents.
pub async fn watch(what: &impl Reloadable, name: &'static str, file: &Path, stop: CancellationToken) {
    let mut hangup = match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::hangup()) {
        Ok(s) => Some(s),
        Err(e) => {
            tracing::warn!(error = %e, name, "no SIGHUP handler; reloaded only when the file changes");
            None
        }
    };
    let mut look = tokio::time::interval(LOOK_INTERVAL);
    look.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        let why = tokio::select! {
            () = stop.cancelled() => return,
            Some(()) = async {
                match hangup.as_mut() {
                    Some(h) => h.recv().await,
                    None => std::future::pending().await,
                }
            } => "SIGHUP",
            _ = look.tick() => {
                if !what.changed() {
                    continue;
                }
                "the file changed"
            }
        };
        match what.reload() {
            Ok(n) => tracing::info!(count = n, file = %file.display(), why, "{name} reloaded"),
            Err(e) => tracing::warn!(error = %e, why, "{name} not reloaded; the ones before stay"),
        }
    }
}
