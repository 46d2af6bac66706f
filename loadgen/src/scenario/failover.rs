//! `failover`: bots spread over several shards; after a warm-up one shard is
//! killed (SIGKILL) or drained (SIGTERM), and every affected bot is timed from
//! its socket close to the Welcome that resumed it and to its first snapshot
//! back in place. Bots lost = connected before, not connected as the same
//! player at the end.

use super::{Context, SHUTDOWN_TIMEOUT};
use crate::cli::FailoverArgs;
use crate::profile::Profile;
use crate::report::{round2, table, FailoverAction, FailoverReport, Scenario};
use crate::stats::Metric;
use crate::status::BotShared;
use crate::swarm::Swarm;
use crate::sysinfo::Proc;
use mino_protocol::PlayerId;
use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How often the observation loop looks at the bots.
const POLL: Duration = Duration::from_millis(20);

/// Runs the failover scenario and reports.
///
/// Errors: no live process at the pid, the signal could not be sent, or
/// writing the report failed.
pub async fn run(ctx: &Context, args: &FailoverArgs) -> anyhow::Result<()> {
    let (pid, signal, action) = match (args.kill_pid, args.drain_pid) {
        (Some(pid), None) => (pid, Signal::SIGKILL, FailoverAction::Kill),
        (None, Some(pid)) => (pid, Signal::SIGTERM, FailoverAction::Drain),
        _ => anyhow::bail!("give exactly one of --kill-pid and --drain-pid"),
    };
    anyhow::ensure!(Proc::Pid(pid).alive(), "no live process with pid {pid}");
    let raw = i32::try_from(pid).map_err(|_| anyhow::anyhow!("pid {pid} out of range"))?;
    let report =
        measure(ctx, args, action, || kill(Pid::from_raw(raw), signal).map_err(anyhow::Error::from), pid).await?;
    ctx.finish(&report, table::failover(&report))
}

/// Bots connected now, with their player ids.
fn connected(swarm: &Swarm) -> Vec<(usize, PlayerId)> {
    swarm
        .bots()
        .iter()
        .enumerate()
        .filter(|(_, b)| b.is_connected())
        .filter_map(|(i, b)| b.player_id().map(|p| (i, p)))
        .collect()
}

fn lost(swarm: &Swarm, before: &[(usize, PlayerId)]) -> usize {
    let bots = swarm.bots();
    before.iter().filter(|(i, id)| !(bots[*i].is_connected() && bots[*i].player_id() == Some(*id))).count()
}

/// Warms up, calls `signal`, observes, and returns the report (no output).
///
/// Errors: `signal` failed.
pub async fn measure(
    ctx: &Context,
    args: &FailoverArgs,
    action: FailoverAction,
    signal: impl FnOnce() -> anyhow::Result<()>,
    pid: u32,
) -> anyhow::Result<FailoverReport> {
    ctx.check_capacity(args.bots);
    let profile = Profile::of(ctx.common.profile);
    let mut swarm = ctx.swarm(profile, ctx.policy());
    swarm.ramp_to(args.bots, args.ramp, &ctx.progress, &ctx.stop).await;
    ctx.settle(&swarm).await;
    ctx.converge(&swarm).await;
    ctx.progress.hold(args.warmup, "warm-up".into(), &ctx.stop, String::new).await;
    let before = connected(&swarm);
    let _warmup = swarm.stats().take_window();
    let t0 = Instant::now();
    if let Err(e) = signal() {
        swarm.shutdown(SHUTDOWN_TIMEOUT).await;
        return Err(e.context(format!("signalling pid {pid}")));
    }
    let exit = observe(ctx, &swarm, &before, pid, t0, args.observe).await;
    let w = swarm.stats().take_window();
    let census = swarm.census();
    let lost = lost(&swarm, &before);
    let stats = swarm.stats().clone();
    swarm.shutdown(SHUTDOWN_TIMEOUT).await;
    let since = |t: Instant| round2(t.saturating_duration_since(t0).as_secs_f64() * 1000.0);
    Ok(FailoverReport {
        scenario: Scenario::Failover,
        action,
        pid,
        bots: census.bots,
        connected_before: before.len(),
        affected: w.counters.disconnects,
        lost,
        resumed: w.counters.resumed,
        fresh_rejoins: w.counters.fresh_rejoins,
        misplaced: w.counters.misplaced,
        max_resume_jump: round2(stats.max_resume_jump()),
        resume_welcome_ms: w.latencies.summary(Metric::ResumeWelcome),
        back_in_place_ms: w.latencies.summary(Metric::BackInPlace),
        time_to_empty_ms: stats.last_disconnect().filter(|t| *t > t0).map(since),
        process_exit_ms: exit.map(since),
        connected_after: census.connected,
        errors: w.counters.error_total(),
        error_kinds: w.counters.error_kinds(),
        info: ctx.info(profile.name),
    })
}

/// How long after the process exits a bot's received bytes are taken as the
/// baseline that says it is on a live shard again: frames the dead process
/// sent before it died, still in a bot's socket buffer, are read by then.
const DEAD_FRAMES_READ: Duration = Duration::from_millis(500);

/// Which of the bots connected before the signal are back: connected as the
/// same player and heard from a live shard since.
///
/// "Connected" alone does not say a bot is back: a bot on the killed shard
/// counts as connected until it notices, which over WebTransport is its idle
/// timeout (UDP has no reset), and such bots notice one by one (a CI run
/// ended the observation when one of two had resumed and the other had not
/// noticed yet, and counted it lost). So a bot counts once it was welcomed
/// again since the signal, or received bytes after the dead process's last
/// frames were read ([`Returns::dead_frames_read`]).
struct Returns<'a> {
    bots: &'a [Arc<BotShared>],
    before: &'a [(usize, PlayerId)],
    /// Each `before` bot's welcomes at the signal.
    welcomes: Vec<u32>,
    /// Each `before` bot's received bytes once the dead process's frames
    /// were read; None until then.
    bytes: Option<Vec<u64>>,
}

impl<'a> Returns<'a> {
    /// Taken at the signal.
    fn new(bots: &'a [Arc<BotShared>], before: &'a [(usize, PlayerId)]) -> Returns<'a> {
        let welcomes = before.iter().map(|(i, _)| bots[*i].welcomes()).collect();
        Returns { bots, before, welcomes, bytes: None }
    }

    /// Takes the bytes baseline (the first call counts).
    fn dead_frames_read(&mut self) {
        if self.bytes.is_none() {
            self.bytes = Some(self.before.iter().map(|(i, _)| self.bots[*i].bytes()).collect());
        }
    }

    /// True when every bot is back; false before the baseline is taken.
    fn all_back(&self) -> bool {
        let Some(bytes) = &self.bytes else { return false };
        self.before.iter().zip(bytes).zip(&self.welcomes).all(|(((i, id), b), w)| {
            let bot = &self.bots[*i];
            bot.is_connected() && bot.player_id() == Some(*id) && (bot.welcomes() > *w || bot.bytes() > *b)
        })
    }
}

/// Waits until the process is gone and every bot connected before is back
/// ([`Returns`]), or `limit` passes. Returns when the process exited.
async fn observe(
    ctx: &Context,
    swarm: &Swarm,
    before: &[(usize, PlayerId)],
    pid: u32,
    t0: Instant,
    limit: Duration,
) -> Option<Instant> {
    let bar = ctx.progress.counter(before.len() as u64, "back in place".into());
    let mut returns = Returns::new(swarm.bots(), before);
    let mut exited = None;
    while t0.elapsed() < limit && !ctx.stop.is_cancelled() {
        if exited.is_none() && !Proc::Pid(pid).alive() {
            exited = Some(Instant::now());
        }
        if exited.is_some_and(|t: Instant| t.elapsed() >= DEAD_FRAMES_READ) {
            returns.dead_frames_read();
        }
        bar.set_position((before.len() - lost(swarm, before)) as u64);
        let someone_left = swarm.stats().last_disconnect().is_some_and(|t| t > t0);
        // Every resumed bot must also have seen itself in a snapshot again, or
        // back-in-place (and misplacement) would be measured on a part only.
        let totals = swarm.stats().totals();
        let placed = totals.back_in_place >= totals.resumed;
        if returns.all_back() && someone_left && placed {
            break;
        }
        tokio::time::sleep(POLL).await;
    }
    bar.finish_and_clear();
    exited
}

#[cfg(test)]
mod tests {
    use super::*;

    fn welcome(bot: &BotShared, id: u32) {
        bot.welcomed(&crate::event::Welcomed { player_id: PlayerId(id), ..crate::world::tests::welcomed(0.0) });
    }

    #[test]
    fn a_bot_that_has_not_noticed_the_kill_is_not_back() {
        let bots: Vec<Arc<BotShared>> = (0..3).map(|_| Arc::default()).collect();
        for (i, bot) in bots.iter().enumerate() {
            welcome(bot, i as u32 + 1);
            bot.received(100);
        }
        let before = connected_of(&bots);
        let mut returns = Returns::new(&bots, &before);
        // Bot 0 is on the live shard, bot 1 resumed at once, bot 2 was on
        // the killed shard and has not noticed: still "connected".
        assert!(!returns.all_back(), "nothing is back before the dead frames are read");
        welcome(&bots[1], 2);
        returns.dead_frames_read();
        bots[0].received(10);
        assert!(!returns.all_back(), "bot 2 has heard nothing since the kill");
        bots[2].received(10);
        assert!(returns.all_back());
        returns.dead_frames_read();
        assert!(returns.all_back(), "the first baseline counts");
        bots[2].set_state(crate::status::BotState::Retrying);
        assert!(!returns.all_back(), "a bot reconnecting is not back");
        welcome(&bots[2], 9);
        assert!(!returns.all_back(), "a bot back as another player is not back");
    }

    fn connected_of(bots: &[Arc<BotShared>]) -> Vec<(usize, PlayerId)> {
        bots.iter().enumerate().filter_map(|(i, b)| b.player_id().map(|p| (i, p))).collect()
    }
}
