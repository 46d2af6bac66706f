//! `crowd`: every bot walks to one point (the world's centre by default) and
//! stays. Once the crowd has gathered, a hold measures what it costs: the
//! shards' late ticks (`mino_ticks_late_total` over `mino_ticks_total`, from
//! their `/metrics`), sockets closed as too slow (seen by the bots and
//! counted by the shards), and the view-frame bytes each socket gets a tick
//! against the view budget, beside every figure a walk reports.

use super::plan::Converged;
use super::{Context, Held};
use crate::cli::CrowdArgs;
use crate::profile::Profile;
use crate::report::crowd::{Budget, CrowdReport, LateTicks, ShardScrapes, TooSlow};
use crate::report::{table, Scenario};
use crate::scrape::{metrics_url_of, scrape, Scrape};
use crate::stats::Tally;
use crate::steer::Movement;

/// Runs the crowd scenario and reports.
///
/// Errors: writing the report or plot failed.
pub async fn run(ctx: &Context, args: &CrowdArgs) -> anyhow::Result<()> {
    let report = measure(ctx, args).await;
    ctx.finish(&report, table::crowd(&report))?;
    ctx.plot(&[(report.measured.connected, &report.measured)])
}

/// The shards' metrics URLs: `--metrics-url`, or those of the ws:// targets.
pub fn metrics_urls(ctx: &Context) -> Vec<String> {
    if !ctx.common.metrics_urls.is_empty() {
        return ctx.common.metrics_urls.clone();
    }
    ctx.common.urls.iter().filter_map(|u| metrics_url_of(u)).collect()
}

async fn scrape_all(urls: &[String]) -> Vec<Result<Scrape, String>> {
    let mut out = Vec::with_capacity(urls.len());
    for url in urls {
        out.push(scrape(url).await.map_err(|e| e.to_string()));
    }
    out
}

/// The shards read both times, and the errors of the others.
fn pair(
    urls: &[String],
    before: Vec<Result<Scrape, String>>,
    after: Vec<Result<Scrape, String>>,
) -> (Vec<ShardScrapes>, Vec<String>) {
    let (mut shards, mut errors) = (Vec::new(), Vec::new());
    for ((url, b), a) in urls.iter().zip(before).zip(after) {
        match (b, a) {
            (Ok(before), Ok(after)) => shards.push(ShardScrapes { url: url.clone(), before, after }),
            (Err(e), _) | (_, Err(e)) => errors.push(e),
        }
    }
    (shards, errors)
}

/// Gathers the crowd, measures the hold, and returns the report (no output).
pub async fn measure(ctx: &Context, args: &CrowdArgs) -> CrowdReport {
    ctx.check_capacity(args.bots);
    let profile = Profile::of(ctx.common.profile);
    let mut crew = ctx.crew(profile, ctx.policy()).await;
    crew.ramp_to(ctx, args.bots, args.ramp).await;
    crew.settle(ctx).await;
    let gathered: Converged = crew.converge_to(ctx, "gathering", args.gather_timeout).await;
    let urls = metrics_urls(ctx);
    let before = scrape_all(&urls).await;
    let Held { measured, whole, hold, census, per_bot, .. } = crew.measure_hold(ctx, args.hold, "crowd".into()).await;
    let after = scrape_all(&urls).await;
    let gathered_at_end = crew.count_placed(ctx).await.inside;
    crew.shutdown(ctx).await;
    let (shards, scrape_errors) = pair(&urls, before, after);
    let ticks = hold.elapsed.as_secs_f64() * f64::from(swarm_tick_hz(ctx, &measured));
    let budget = measured.aoi.as_ref().map(|_| Budget::of(args.budget_bytes, &per_bot, ticks, &shards));
    let (point, shuffle) = match ctx.plan.movement {
        Movement::Gather(g) => ([g.point.0, g.point.1], g.shuffle),
        _ => ([f32::NAN, f32::NAN], 0.0),
    };
    CrowdReport {
        scenario: Scenario::Crowd,
        bots: census.bots,
        admitted: census.admitted,
        point,
        gather_radius: ctx.plan.gather_radius(),
        shuffle,
        gathered: gathered.inside,
        gathered_at_end,
        gather_s: gathered.seconds,
        late_ticks: LateTicks::of(&shards, scrape_errors.is_empty()),
        too_slow: TooSlow::of(whole.counters.tally(Tally::TooSlowCloses), &shards),
        budget,
        scrape_errors,
        measured,
        info: ctx.info(profile.name),
    }
}

/// The tick rate: the probe's (a crowd always probes), else the bots' view.
fn swarm_tick_hz(ctx: &Context, measured: &crate::report::Measured) -> u16 {
    ctx.plan.world.map_or_else(|| measured.ticks_per_s.round().max(1.0) as u16, |w| w.tick_hz)
}
