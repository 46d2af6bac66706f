//! Where the bots of a run walk and who observes: one probe Welcome for the
//! world's geometry (when `--density` or `crowd` needs it), the `--density`
//! region or the crowd's point, the observer sample, waiting until the bots
//! stand where they should before measuring, and how dense they stood.

use super::Context;
use crate::cli::Command;
use crate::client::{Client, JoinRequest};
use crate::observer::{ObserverShare, Observers};
use crate::outcome::{Ending, Outcome};
use crate::region::Region;
use crate::report::aoi::DensityFigures;
use crate::report::round2;
use crate::steer::{Gathering, Movement, RETURN_STEPS};
pub use crate::swarm::Converged;
use crate::swarm::Swarm;
use crate::world::World;
use std::time::Duration;
use tokio::time::Instant;

/// The probe's player name.
pub const PROBE_NAME: &str = "loadgen-probe";

/// How long a probe waits for the server's close after its own.
const PROBE_LINGER: Duration = Duration::from_millis(200);

/// A bot counts as inside its `--density` region within this many ticks of
/// walking of it: the most a steered bot overshoots (its position arrives,
/// its input goes out, the server applies it at its next tick).
pub const REGION_MARGIN_STEPS: f32 = 4.0;

/// A crowd bot counts as gathered within this many ticks of walking of the
/// point: where it walks back from, plus the overshoot.
pub const GATHER_STEPS: f32 = RETURN_STEPS + 2.0;

/// Added to the time a walk across the world's diagonal takes, to bound a
/// wait for the bots to reach their region or point.
const CONVERGE_SLACK: Duration = Duration::from_secs(5);

/// How often a convergence wait looks at the bots.
const POLL: Duration = Duration::from_millis(100);

/// Where the bots of a run walk, and who observes.
#[derive(Clone, Debug, Default)]
pub struct Plan {
    /// The world of the probe's Welcome (None: no probe was needed).
    pub world: Option<World>,
    /// Where the bots walk.
    pub movement: Movement,
    /// Who observes.
    pub observers: Observers,
    /// `--density`: the density asked for.
    pub density: Option<f64>,
}

impl Plan {
    /// The plan of `command` run with `ctx`'s options: probes the first
    /// target when `--density`, `crowd` or `--observers` (given, not 0)
    /// needs the world.
    ///
    /// Errors: the probe was not welcomed; `--density` or `--observers`
    /// against a server without area of interest.
    pub async fn make(ctx: &Context, command: &Command) -> anyhow::Result<Plan> {
        let bots = command.bots();
        // Nothing moves in an idle place: no observer unless asked for (each
        // observed bot would wake every tick to publish where it stands).
        let default = match command {
            Command::Idle(_) => ObserverShare::Count(0),
            _ => ObserverShare::default(),
        };
        let observers = Observers::of(ctx.common.observers.unwrap_or(default), bots);
        let crowd_point = match command {
            Command::Crowd(a) => Some((a.point, a.shuffle)),
            _ => None,
        };
        // Observers asked for time what area of interest shows them: a
        // server without sends every socket the whole place, and they
        // would measure nothing (the default share is left alone there).
        let observing = ctx.common.observers.is_some() && observers.count > 0;
        if ctx.common.density.is_none() && crowd_point.is_none() && !observing {
            return Ok(Plan { observers, ..Plan::default() });
        }
        let world = probe(ctx).await?;
        if observing && world.grid.is_none() {
            anyhow::bail!(no_view_to_observe(&ctx.targets[0].url));
        }
        let movement = match (crowd_point, ctx.common.density) {
            (Some((point, shuffle)), _) => {
                let point = point.unwrap_or_else(|| world.centre());
                // Outside the world no bot can reach it: a crowd that never
                // formed was reported measured (an outside trial).
                let inside =
                    (world.min_x..=world.max_x).contains(&point.0) && (world.min_y..=world.max_y).contains(&point.1);
                if !inside {
                    let why = format!(
                        "--point {},{} is outside the shard's world ({} to {} by {} to {}): no bot could reach it",
                        point.0, point.1, world.min_x, world.max_x, world.min_y, world.max_y
                    );
                    return Err(anyhow::Error::new(Ending::new(Outcome::Usage, why)));
                }
                Movement::Gather(Gathering { point, shuffle })
            }
            (None, Some(d)) => Movement::Within(Region::for_density(&world, bots, d, &ctx.targets[0].url)?),
            (None, None) => Movement::Wander,
        };
        Ok(Plan { world: Some(world), movement, observers, density: ctx.common.density })
    }

    /// True when bot position `p` is where the plan wants it (always, wandering).
    pub fn placed(&self, p: (f32, f32)) -> bool {
        let step = self.world.map_or(0.0, |w| w.step());
        match self.movement {
            Movement::Wander => true,
            Movement::Within(r) => r.contains(p, REGION_MARGIN_STEPS * step),
            Movement::Gather(g) => (p.0 - g.point.0).hypot(p.1 - g.point.1) <= self.gather_radius(),
        }
    }

    /// How near its point a crowd bot counts as gathered, world units.
    pub fn gather_radius(&self) -> f32 {
        GATHER_STEPS * self.world.map_or(0.0, |w| w.step())
    }

    /// Connected bots and those placed, now.
    pub fn count_placed(&self, swarm: &Swarm) -> Converged {
        let mut c = Converged::default();
        for b in swarm.bots().iter().filter(|b| b.is_connected()) {
            c.connected += 1;
            c.inside += usize::from(b.position().is_some_and(|p| self.placed(p)));
        }
        c
    }

    /// Waits until every connected bot is placed, at most `limit` (default:
    /// the time to walk the world's diagonal plus [`CONVERGE_SLACK`]);
    /// nothing to wait for when wandering.
    pub async fn converge(&self, ctx: &Context, swarm: &Swarm, label: &str, limit: Option<Duration>) -> Converged {
        if self.world.is_none() || self.movement == Movement::Wander {
            return self.count_placed(swarm);
        }
        let limit = self.converge_bound(limit);
        let started = Instant::now();
        let bar = ctx.progress.counter(swarm.len() as u64, label.to_owned());
        let result = loop {
            let c = self.count_placed(swarm);
            bar.set_position(c.inside as u64);
            if (c.inside == c.connected && c.connected > 0) || started.elapsed() >= limit || ctx.stop.is_cancelled() {
                break c;
            }
            tokio::time::sleep(POLL).await;
        };
        bar.finish_and_clear();
        if result.inside < result.connected {
            tracing::warn!("{label}: {} of {} bots placed after {limit:?}", result.inside, result.connected);
        }
        Converged { seconds: round2(started.elapsed().as_secs_f64()), ..result }
    }

    /// How long [`Plan::converge`] waits at most: `limit`, or the time to
    /// walk the world's diagonal plus [`CONVERGE_SLACK`] (none without a
    /// probed world).
    pub fn converge_bound(&self, limit: Option<Duration>) -> Duration {
        let walk = self.world.map_or(Duration::ZERO, |w| Duration::from_secs_f32(w.diagonal() / w.speed.max(1.0)));
        limit.unwrap_or(walk + CONVERGE_SLACK)
    }

    /// How dense the bots stand (None without `--density`), `placed` of
    /// them where they should.
    pub fn density_figures(&self, placed: Converged) -> Option<DensityFigures> {
        let (Some(d), Movement::Within(region), Some(grid)) =
            (self.density, self.movement, self.world.and_then(|w| w.grid))
        else {
            return None;
        };
        let r = |v: f32| (v * 100.0).round() / 100.0;
        Some(DensityFigures {
            players_per_cell: d,
            region: Region {
                min_x: r(region.min_x),
                min_y: r(region.min_y),
                max_x: r(region.max_x),
                max_y: r(region.max_y),
            },
            region_cells: round2(region.cells(grid.cell_size)),
            inside: placed.inside,
            connected: placed.connected,
            achieved_per_cell: round2(region.density(placed.inside, grid.cell_size)),
        })
    }
}

/// Why `--observers` is refused against the shard at `url`: its Welcome has
/// no cell size, so every socket sees the whole place and no player enters
/// or leaves an observer's view.
pub fn no_view_to_observe(url: &str) -> String {
    format!(
        "--observers needs area of interest, but {url} sends whole-shard snapshots (its Welcome has no cell size): \
         every socket sees the whole place, so no player enters or leaves a view; start mino-server with \
         --cell-size, or leave --observers out"
    )
}

/// What to look at when the probe was not welcomed, by how it failed (as
/// a run's verdict says it, `crate::report::nobody_welcomed`).
fn hint(e: &crate::client::JoinError) -> String {
    use crate::failure::FailureKind as K;
    use crate::report::{WHY_NOT_WEBSOCKET, WHY_REFUSED, WHY_TLS};
    match e.failure() {
        None => "the shard is busy (full, or its ticks late): try again, or another shard".into(),
        Some(K::Refused | K::TicketRefused) => format!("the shard refused the Hello ({WHY_REFUSED})"),
        Some(K::Tls) => format!("the TLS handshake failed: {WHY_TLS}"),
        Some(K::Handshake) => format!("something answered, but not with a websocket ({WHY_NOT_WEBSOCKET})"),
        Some(_) => "is a shard listening there?".into(),
    }
}

/// Joins the first target once as [`PROBE_NAME`], reads its Welcome, and
/// leaves.
///
/// Errors: no Welcome (refused, busy, unreachable): the run's
/// [`Ending`] as nobody welcomed (exit 3, as a run whose bots were never
/// welcomed: where no shard answers, every scenario says so alike).
pub async fn probe(ctx: &Context) -> anyhow::Result<World> {
    let target = &ctx.targets[0];
    let req = JoinRequest { name: PROBE_NAME, ..Default::default() };
    let (client, welcome) =
        Client::join(target, ctx.sources.pick(0), req, ctx.common.join_timeout).await.map_err(|e| {
            let why = format!("probing {} for the world's size and grid, no welcome ({e}): {}", target.url, hint(&e));
            let ending = Ending::new(Outcome::NobodyWelcomed, why);
            // Exit 3 writes a report: this one has no figures, only how it
            // ended (a script reads the outcome of every run that reports).
            if let Some(path) = &ctx.common.json {
                let value = serde_json::json!({ "verdict": ending.verdict.label(), "outcome": &ending });
                if let Err(e) = crate::report::write_json(path, &value) {
                    tracing::warn!("{e:#}");
                }
            }
            anyhow::Error::new(ending)
        })?;
    client.close(PROBE_LINGER).await;
    Ok(World::of(&welcome))
}
