//! `failover`: bots spread over several shards; after a warm-up one shard is
//! killed (SIGKILL) or drained (SIGTERM), and every affected bot is timed from
//! its socket close to the Welcome that resumed it and to its first snapshot
//! back in place. Bots lost = connected before and not back at the end
//! (see [`Returns`]: connected as the same player, and welcomed again if they
//! were on the shard that died).

use super::{Context, SHUTDOWN_TIMEOUT};
use crate::cli::FailoverArgs;
use crate::profile::Profile;
use crate::report::{round2, table, FailoverAction, FailoverReport, Scenario};
use crate::stats::Metric;
use crate::status::BotShared;
use crate::swarm::Swarm;
use crate::sysinfo::Proc;
use mino_protocol::{PlayerId, ShardId};
use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;
use std::collections::{BTreeMap, BTreeSet};
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
    // A mistyped pid would signal whatever runs under it (Redis, a shell).
    let name = Proc::Pid(pid).name().unwrap_or_default();
    anyhow::ensure!(
        name == "mino-server",
        "pid {pid} is {name:?}, not a mino-server: refusing to signal it (give a shard's pid)"
    );
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
    let mut returns = Returns::new(swarm.bots(), &before, args.shard_id);
    if let Some(id) = args.shard_id.filter(|_| returns.on_dead() == 0) {
        tracing::warn!("--shard-id {id}: none of the {} connected bots is on that shard", before.len());
    }
    let _warmup = swarm.stats().take_window();
    let t0 = Instant::now();
    if let Err(e) = signal() {
        swarm.shutdown(SHUTDOWN_TIMEOUT).await;
        return Err(e.context(format!("signalling pid {pid}")));
    }
    let exit = observe(ctx, &swarm, &mut returns, pid, t0, args.observe).await;
    let w = swarm.stats().take_window();
    let census = swarm.census();
    returns.poll();
    let lost = returns.lost();
    let (dead_shards, dead_shard_given) = (returns.dead.shown(), matches!(returns.dead, Dead::Given(_)));
    let dead_shard_bots = returns.on_dead();
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
        dead_shards,
        dead_shard_given,
        dead_shard_bots,
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

/// The shard the signal stopped, as far as the run knows it.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Dead {
    /// Given with `--shard-id`: exact.
    Given(ShardId),
    /// Worked out from the bots: the shards that most bots have left since
    /// the signal, several while they are tied (empty until a bot left).
    Inferred(Vec<u32>),
}

impl Dead {
    fn holds(&self, shard: u32) -> bool {
        match self {
            Dead::Given(id) => id.0 == shard,
            Dead::Inferred(shards) => shards.contains(&shard),
        }
    }

    /// The shards, as the report shows them (8 hex digits each).
    fn shown(&self) -> Vec<String> {
        match self {
            Dead::Given(id) => vec![id.to_string()],
            Dead::Inferred(shards) => shards.iter().map(|s| ShardId(*s).to_string()).collect(),
        }
    }
}

/// Which of the bots connected before the signal are back: connected as the
/// same player, and welcomed again if they were on the shard that died.
///
/// "Connected" alone does not say a bot is back: a bot on the killed shard
/// counts as connected until it notices, which over WebTransport takes its
/// silence (UDP has no reset: `crate::silence`), and such bots notice one by one (a CI run
/// ended the observation when one of two had resumed and the other had not
/// noticed yet, and counted it lost). So every bot that was on the shard
/// that died must be welcomed again; a bot on another shard is back while it
/// stays connected as itself, whether or not it is sent anything (a standing
/// bot may be sent nothing), and a bot of a live shard that lost its
/// connection meanwhile is back once welcomed again.
///
/// Which shard died is exact with `--shard-id` ([`Dead::Given`]). Without it,
/// it is worked out from the bots ([`Dead::Inferred`]): one signal stops one
/// shard, and it is the shard that most bots have left since (a bot left its
/// shard once it was welcomed again or was seen not connected), leaving out
/// any shard that welcomed one of its own bots again (it is alive); while
/// shards are tied, the bots of each of them must be welcomed again. That
/// can still err when more bots of live shards broke on their own and came
/// back elsewhere than the dead shard's bots noticed.
struct Returns<'a> {
    bots: &'a [Arc<BotShared>],
    before: &'a [(usize, PlayerId)],
    /// Each `before` bot's welcomes and shard at the signal, and whether it
    /// left that shard since.
    at_signal: Vec<(u32, u32, bool)>,
    dead: Dead,
}

impl<'a> Returns<'a> {
    /// Taken just before the signal; `given` is `--shard-id`.
    fn new(bots: &'a [Arc<BotShared>], before: &'a [(usize, PlayerId)], given: Option<ShardId>) -> Returns<'a> {
        let at_signal = before
            .iter()
            .map(|(i, _)| {
                let (welcomes, shard) = bots[*i].welcome();
                (welcomes, shard, false)
            })
            .collect();
        let dead = given.map_or(Dead::Inferred(Vec::new()), Dead::Given);
        Returns { bots, before, at_signal, dead }
    }

    /// Notes the bots that left their shards and, unless given, which shards
    /// most left.
    fn poll(&mut self) {
        for ((i, _), (welcomes, _, left)) in self.before.iter().zip(&mut self.at_signal) {
            let bot = &self.bots[*i];
            *left |= bot.welcomes() > *welcomes || !bot.is_connected();
        }
        if let Dead::Inferred(shards) = &mut self.dead {
            // A shard that welcomed one of its own bots again since the
            // signal is alive, however many left it.
            let alive: BTreeSet<u32> = self
                .before
                .iter()
                .zip(&self.at_signal)
                .filter_map(|((i, _), (welcomes, shard, _))| {
                    let (now, on) = self.bots[*i].welcome();
                    (now > *welcomes && on == *shard).then_some(on)
                })
                .collect();
            let mut leavers: BTreeMap<u32, usize> = BTreeMap::new();
            for (_, shard, _) in self.at_signal.iter().filter(|a| a.2 && !alive.contains(&a.1)) {
                *leavers.entry(*shard).or_default() += 1;
            }
            let most = leavers.values().copied().max().unwrap_or(0);
            *shards = leavers.into_iter().filter(|(_, n)| *n == most).map(|(s, _)| s).collect();
        }
    }

    /// How many of the bots connected before were on the shard that died
    /// (as far as known) at the signal.
    fn on_dead(&self) -> usize {
        self.at_signal.iter().filter(|(_, shard, _)| self.dead.holds(*shard)).count()
    }

    /// True once some bot left its shard.
    fn any_left(&self) -> bool {
        self.at_signal.iter().any(|a| a.2)
    }

    /// Whether `before[k]` is back.
    fn is_back(&self, k: usize) -> bool {
        let ((i, id), (welcomes, shard, _)) = (self.before[k], self.at_signal[k]);
        let bot = &self.bots[i];
        bot.is_connected() && bot.player_id() == Some(id) && (bot.welcomes() > welcomes || !self.dead.holds(shard))
    }

    /// Bots connected before that are not back.
    fn lost(&self) -> usize {
        (0..self.before.len()).filter(|k| !self.is_back(*k)).count()
    }
}

/// Waits until the process is gone and every bot connected before is back
/// ([`Returns`]), or `limit` passes. Returns when the process exited.
async fn observe(
    ctx: &Context,
    swarm: &Swarm,
    returns: &mut Returns<'_>,
    pid: u32,
    t0: Instant,
    limit: Duration,
) -> Option<Instant> {
    let total = returns.before.len();
    let bar = ctx.progress.counter(total as u64, "back in place".into());
    let mut exited = None;
    while t0.elapsed() < limit && !ctx.stop.is_cancelled() {
        if exited.is_none() && !Proc::Pid(pid).alive() {
            exited = Some(Instant::now());
        }
        returns.poll();
        let missing = returns.lost();
        bar.set_position((total - missing) as u64);
        let someone_left = swarm.stats().last_disconnect().is_some_and(|t| t > t0) && returns.any_left();
        // Every resumed bot must also have seen itself in a snapshot again, or
        // back-in-place (and misplacement) would be measured on a part only.
        let totals = swarm.stats().totals();
        let placed = totals.back_in_place >= totals.resumed;
        if exited.is_some() && missing == 0 && someone_left && placed {
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

    fn welcome(bot: &BotShared, id: u32, shard: u32) {
        let w = crate::world::tests::welcomed(0.0);
        bot.welcomed(&crate::event::Welcomed { player_id: PlayerId(id), shard_id: mino_protocol::ShardId(shard), ..w });
    }

    #[test]
    fn a_bot_that_has_not_noticed_the_kill_is_not_back() {
        // Bot 0 on shard 1, which lives; bots 1 and 2 on shard 2, killed.
        let bots = welcomed_on(&[1, 2, 2]);
        let before = connected_of(&bots);
        let mut returns = Returns::new(&bots, &before, None);
        returns.poll();
        assert!(!returns.any_left(), "nobody noticed yet");
        // Bot 1 noticed and resumed on shard 1 at once; bot 2 has not
        // noticed (over WebTransport, until its silence tells): it is still
        // connected as itself, and still not back.
        welcome(&bots[1], 2, 1);
        returns.poll();
        assert!(returns.any_left());
        assert_eq!(returns.lost(), 1, "bot 2 is on the shard bot 1 left");
        assert!(returns.is_back(0), "bot 0 stayed on a live shard, sent something or not");
        breaks(&bots[2], &mut returns);
        assert_eq!(returns.lost(), 1, "a bot reconnecting is not back");
        welcome(&bots[2], 9, 1);
        assert_eq!(returns.lost(), 1, "a bot back as another player is not back");
        welcome(&bots[2], 3, 1);
        assert_eq!(returns.lost(), 0);
    }

    #[test]
    fn a_live_shard_bot_that_reconnects_does_not_make_its_shard_dead() {
        // Bots 0 and 1 on shard 1, which lives; bots 2, 3 and 4 on shard 2,
        // killed, noticed one by one (WebTransport).
        let bots = welcomed_on(&[1, 1, 2, 2, 2]);
        let before = connected_of(&bots);
        let mut returns = Returns::new(&bots, &before, None);
        // Bot 0's connection breaks first, for reasons of its own: shard 1 is
        // taken for dead for now, and no bot counts as back that was not
        // welcomed again on it.
        breaks(&bots[0], &mut returns);
        assert_eq!(returns.lost(), 2, "bots 0 and 1: {:?}", returns.dead);
        welcome(&bots[0], 1, 1);
        // Bots 2 and 3 notice and resume: shard 2 has more leavers.
        welcome(&bots[2], 3, 1);
        welcome(&bots[3], 4, 1);
        returns.poll();
        assert_eq!(returns.dead, Dead::Inferred(vec![2]));
        assert!(returns.is_back(1), "bot 1 stayed on shard 1");
        assert_eq!(returns.lost(), 1, "bot 4 has not noticed yet");
        welcome(&bots[4], 5, 1);
        returns.poll();
        assert_eq!(returns.lost(), 0);
    }

    #[test]
    fn while_shards_are_tied_every_one_of_them_counts_as_dead() {
        // Bot 0 on shard 1 and bot 3 on shard 3, which live; bots 1 and 2 on
        // shard 2, killed.
        let bots = welcomed_on(&[1, 2, 2, 3]);
        let before = connected_of(&bots);
        let mut returns = Returns::new(&bots, &before, None);
        // Bot 0 breaks on its own and comes back on shard 3; bot 1 notices
        // the kill and resumes: one leaver each. Bot 2 has not noticed: not
        // back.
        breaks(&bots[0], &mut returns);
        welcome(&bots[0], 1, 3);
        welcome(&bots[1], 2, 1);
        returns.poll();
        assert_eq!(returns.dead, Dead::Inferred(vec![1, 2]));
        assert_eq!(returns.lost(), 1, "bot 2, on a shard tied for most leavers");
        assert!(!returns.is_back(2));
        welcome(&bots[2], 3, 1);
        returns.poll();
        assert_eq!((returns.dead.clone(), returns.lost()), (Dead::Inferred(vec![2]), 0));
    }

    #[test]
    fn a_shard_that_welcomes_its_own_bot_again_is_alive() {
        // Bots 0 and 1 on shard 1, which lives; bot 2 alone on shard 2,
        // killed. Bot 0 breaks on its own and comes back to shard 1; bot 2
        // resumes on shard 1: one leaver each, but shard 1 is alive, so
        // bot 1, which stayed, is back (tied, it would count as lost until
        // the run's end).
        let bots = welcomed_on(&[1, 1, 2]);
        let before = connected_of(&bots);
        let mut returns = Returns::new(&bots, &before, None);
        breaks(&bots[0], &mut returns);
        welcome(&bots[0], 1, 1);
        welcome(&bots[2], 3, 1);
        returns.poll();
        assert_eq!((returns.dead.clone(), returns.lost()), (Dead::Inferred(vec![2]), 0));
    }

    #[test]
    fn a_given_shard_is_the_dead_one_whoever_leaves() {
        // Bots 0, 1 and 2 on shard 1, which lives; bot 3 on shard 2, killed
        // and given. Two of shard 1's bots break on their own first.
        let bots = welcomed_on(&[1, 1, 1, 2]);
        let before = connected_of(&bots);
        let mut returns = Returns::new(&bots, &before, Some(ShardId(2)));
        assert!(!returns.any_left());
        for i in [0, 1] {
            breaks(&bots[i], &mut returns);
            welcome(&bots[i], i as u32 + 1, 1);
        }
        returns.poll();
        assert!(returns.any_left());
        assert_eq!((returns.dead.shown(), returns.on_dead()), (vec!["00000002".to_owned()], 1));
        assert_eq!(returns.lost(), 1, "bot 3 has not noticed: inferred, shard 1 would be taken for dead");
        welcome(&bots[3], 4, 1);
        returns.poll();
        assert_eq!(returns.lost(), 0);
    }

    #[test]
    fn a_welcome_is_read_whole() {
        let bot = BotShared::default();
        assert_eq!(bot.welcome(), (0, 0));
        welcome(&bot, 7, 0xdead_beef);
        welcome(&bot, 7, 3);
        assert_eq!(bot.welcome(), (2, 3));
    }

    /// `bot`'s connection breaks, and the next poll sees it.
    fn breaks(bot: &BotShared, returns: &mut Returns<'_>) {
        bot.set_state(crate::status::BotState::Retrying);
        returns.poll();
    }

    /// Bots welcomed on these shards, bot `i` as player `i + 1`.
    fn welcomed_on(shards: &[u32]) -> Vec<Arc<BotShared>> {
        let bots: Vec<Arc<BotShared>> = shards.iter().map(|_| Arc::default()).collect();
        for (i, shard) in shards.iter().enumerate() {
            welcome(&bots[i], i as u32 + 1, *shard);
        }
        bots
    }

    fn connected_of(bots: &[Arc<BotShared>]) -> Vec<(usize, PlayerId)> {
        bots.iter().enumerate().filter_map(|(i, b)| b.player_id().map(|p| (i, p))).collect()
    }
}
