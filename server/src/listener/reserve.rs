//! A descriptor held in reserve for the admin listener. When every
//! descriptor of the process is in use, `accept` fails (EMFILE) on every
//! listener, and probes and scrapes could not reach a shard exactly when an
//! operator needs them most. The admin listener then closes its reserve,
//! accepts the waiting connection into the freed slot, answers it, and takes
//! the reserve back once that connection is closed.
//!
//! On a one-thread runtime nothing else runs between the release and the
//! accept; with more threads another one may take the freed slot first (the
//! admin accept then fails as before and tries again later).

use std::fs::File;

/// The file held open to keep one descriptor free for later.
const RESERVE_PATH: &str = "/dev/null";

/// One descriptor kept in reserve.
#[derive(Debug)]
pub struct Reserve {
    held: Option<File>,
}

impl Reserve {
    /// Takes a descriptor into reserve (none if it cannot: see
    /// [`Reserve::restore`]).
    pub fn hold() -> Reserve {
        let mut reserve = Reserve { held: None };
        reserve.restore();
        reserve
    }

    /// True while a descriptor is held.
    pub fn is_held(&self) -> bool {
        self.held.is_some()
    }

    /// Closes the reserved descriptor so the next call that needs one gets
    /// it. False when none was held.
    pub fn release(&mut self) -> bool {
        self.held.take().is_some()
    }

    /// Takes a descriptor into reserve again if none is held; false when it
    /// cannot (every descriptor still in use: try again later).
    pub fn restore(&mut self) -> bool {
        if self.held.is_none() {
            self.held = File::open(RESERVE_PATH).ok();
        }
        self.held.is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_reserve_is_released_and_restored() {
        let mut r = Reserve::hold();
        assert!(r.is_held());
        assert!(r.release());
        assert!(!r.release(), "released once");
        assert!(r.restore() && r.is_held());
    }
}
