//! The threads bots run on: one single-threaded tokio runtime per thread, each
//! bot pinned to one of them (bot `i` on thread `i mod n`).
//!
//! Why not one work-stealing runtime: a bot measures the gap between the
//! snapshots it receives, so the time from a frame's arrival to its bot's
//! timestamp must not vary from tick to tick. With work stealing, a bot's task
//! lands at a different place in a different worker's queue each tick, and
//! that queueing shows up as snapshot-gap jitter that is the load generator's,
//! not the server's. Pinned, each thread handles its sockets in the order the
//! kernel reports them ready, which is the order the server wrote them.
//! (`mino-loadgen walk --bots 1000 --ramp 250 --duration 30s` against one
//! shard, three runs each: p95 gap 55.0 to 55.4 ms with one work-stealing
//! runtime, 54.3 to 54.7 ms pinned, and the bots' CPU a little lower.)

use std::future::Future;
use std::thread::JoinHandle as ThreadHandle;
use tokio::runtime::{Builder, Handle};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

/// Threads running bots. Dropping it stops them (tasks still on them are
/// dropped); [`BotThreads::join`] also waits for the threads to end.
#[derive(Debug)]
pub struct BotThreads {
    handles: Vec<Handle>,
    threads: Vec<ThreadHandle<()>>,
    stop: CancellationToken,
}

impl BotThreads {
    /// Starts `n` threads (at least one), named `bots-<k>`.
    ///
    /// Errors: a runtime or thread that could not be created.
    pub fn start(n: usize) -> std::io::Result<BotThreads> {
        let stop = CancellationToken::new();
        let mut handles = Vec::with_capacity(n.max(1));
        let mut threads = Vec::with_capacity(n.max(1));
        for k in 0..n.max(1) {
            let runtime = Builder::new_current_thread().enable_all().build()?;
            handles.push(runtime.handle().clone());
            let stop = stop.clone();
            let thread = std::thread::Builder::new()
                .name(format!("bots-{k}"))
                .spawn(move || runtime.block_on(stop.cancelled_owned()))?;
            threads.push(thread);
        }
        Ok(BotThreads { handles, threads, stop })
    }

    /// Runs bot number `index`'s future on its thread.
    pub fn spawn<F>(&self, index: usize, future: F) -> JoinHandle<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        self.handles[index % self.handles.len()].spawn(future)
    }

    /// Stops the threads and waits for them to end (off the async threads).
    pub async fn join(mut self) {
        self.stop.cancel();
        let threads = std::mem::take(&mut self.threads);
        let _ = tokio::task::spawn_blocking(move || {
            for t in threads {
                let _ = t.join();
            }
        })
        .await;
    }
}

impl Drop for BotThreads {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn bots_run_on_their_own_thread_by_index() {
        let threads = BotThreads::start(2).expect("threads");
        let name = || std::thread::current().name().map(str::to_owned);
        let a = threads.spawn(0, async move { name() }).await.expect("bot 0");
        let b = threads.spawn(1, async move { name() }).await.expect("bot 1");
        let c = threads.spawn(2, async move { name() }).await.expect("bot 2");
        assert_eq!(a.as_deref(), Some("bots-0"));
        assert_eq!(b.as_deref(), Some("bots-1"));
        assert_eq!(c, a, "bot 2 shares thread 0");
        threads.join().await;
    }

    #[tokio::test]
    async fn joined_threads_drop_unfinished_bots() {
        let threads = BotThreads::start(1).expect("threads");
        let pending = threads.spawn(0, std::future::pending::<()>());
        threads.join().await;
        assert!(pending.await.is_err_and(|e| e.is_cancelled()));
    }
}
