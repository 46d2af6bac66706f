//! Whether a run was cut short, why and when: a Ctrl-C or SIGTERM, or
//! (coordinating agents) an agent lost mid-run. Reports carry the first
//! such event (`interrupted`) so that a partial run's figures are not taken
//! for a full run's.

use serde::{Deserialize, Serialize};
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// Why and when a run was cut short (the report's `interrupted` object).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Interrupted {
    /// What cut it short, e.g. "SIGINT (Ctrl-C)" or "agent b lost during
    /// walk: died (...)".
    pub reason: String,
    /// When, seconds since the run started.
    pub at_s: f64,
}

/// The run's interruptions, shared by whoever may cut it short (the signal
/// handler, the coordinator's fleet) and the reports. Keeps the first.
#[derive(Clone, Debug)]
pub struct Interruptions {
    started: Instant,
    first: Arc<Mutex<Option<Interrupted>>>,
    /// Set once the run's bots are closing ([`Interruptions::seal`]): a
    /// signal then costs no figure and is not recorded.
    sealed: Arc<std::sync::atomic::AtomicBool>,
}

impl Default for Interruptions {
    fn default() -> Self {
        Interruptions::new()
    }
}

impl Interruptions {
    /// None yet; the run's clock starts now.
    pub fn new() -> Interruptions {
        Interruptions { started: Instant::now(), first: Arc::new(Mutex::new(None)), sealed: Arc::default() }
    }

    /// Measuring is over (the bots are closing): later interruptions are
    /// not recorded, since they cut nothing a report holds.
    pub fn seal(&self) {
        self.sealed.store(true, std::sync::atomic::Ordering::Release);
    }

    /// Records that the run was cut short now, for `reason`, unless it
    /// already was (the first cause is the one that matters); false once
    /// sealed (nothing recorded).
    pub fn mark(&self, reason: impl Into<String>) -> bool {
        if self.sealed.load(std::sync::atomic::Ordering::Acquire) {
            return false;
        }
        let at_s = (self.started.elapsed().as_secs_f64() * 1000.0).round() / 1000.0;
        let mut first = self.first.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if first.is_none() {
            *first = Some(Interrupted { reason: reason.into(), at_s });
        }
        true
    }

    /// The first interruption, if the run was cut short.
    pub fn first(&self) -> Option<Interrupted> {
        self.first.lock().unwrap_or_else(std::sync::PoisonError::into_inner).clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_cause_is_kept() {
        let i = Interruptions::new();
        assert_eq!(i.first(), None);
        i.mark("SIGINT (Ctrl-C)");
        i.clone().mark("agent a lost");
        let first = i.first().expect("marked");
        assert_eq!(first.reason, "SIGINT (Ctrl-C)");
        assert!(first.at_s >= 0.0);
    }

    #[test]
    fn nothing_is_recorded_once_sealed() {
        let i = Interruptions::new();
        i.clone().seal();
        i.mark("SIGINT (Ctrl-C)");
        assert_eq!(i.first(), None, "a Ctrl-C while the bots close cuts no figure");
    }
}
