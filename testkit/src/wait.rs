//! Waits on what a test watches, in place of fixed sleeps: a condition polled
//! until it holds, a log file until it holds a line. Every wait is bounded
//! ([`crate::WAIT`] unless told) and says what it waited for when it gives up.

use crate::WAIT;
use std::future::Future;
use std::path::Path;
use std::time::{Duration, Instant};

/// How often a condition is polled.
pub const POLL: Duration = Duration::from_millis(20);

/// Polls `check` every [`POLL`] until it gives `Some`; that value.
///
/// Panics: still `None` after `limit` (the message names `what`).
pub async fn until<T, F, Fut>(what: &str, limit: Duration, mut check: F) -> T
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Option<T>>,
{
    let end = Instant::now() + limit;
    loop {
        if let Some(found) = check().await {
            return found;
        }
        assert!(Instant::now() < end, "not within {limit:?}: {what}");
        tokio::time::sleep(POLL).await;
    }
}

/// Polls `check` every [`POLL`] until it is true.
///
/// Panics: still false after [`WAIT`] (the message names `what`).
pub async fn until_true<F, Fut>(what: &str, mut check: F)
where
    F: FnMut() -> Fut,
    Fut: Future<Output = bool>,
{
    until(what, WAIT, || {
        let holds = check();
        async move { holds.await.then_some(()) }
    })
    .await
}

/// True once the file at `path` holds `text`; false if it does not within
/// [`WAIT`] (a missing file holds nothing yet).
pub async fn file_holds(path: &Path, text: &str) -> bool {
    let end = Instant::now() + WAIT;
    loop {
        if std::fs::read_to_string(path).is_ok_and(|t| t.contains(text)) {
            return true;
        }
        if Instant::now() >= end {
            return false;
        }
        tokio::time::sleep(POLL).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_condition_is_polled_until_it_holds() {
        let mut n = 0;
        let got = until("three polls", WAIT, || {
            n += 1;
            let now = n;
            async move { (now == 3).then_some(now) }
        })
        .await;
        assert_eq!(got, 3);
    }

    #[tokio::test]
    #[should_panic(expected = "never")]
    async fn a_condition_that_never_holds_fails_naming_it() {
        until("never", Duration::from_millis(50), || async { None::<()> }).await;
    }

    #[tokio::test]
    async fn a_file_is_read_until_it_holds_the_text() {
        let dir = crate::WorkDir::new("wait-file");
        let log = dir.join("log");
        std::fs::write(&log, "a line\n").expect("write");
        assert!(file_holds(&log, "a line").await);
    }
}
