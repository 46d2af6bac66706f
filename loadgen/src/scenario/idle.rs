//! `idle`: N websockets that say Hello and then nothing (the websocket layer
//! answers the server's pings). Measured from outside the server: its RSS per
//! connection (with `--server-pid`), the kernel's TCP memory per connection,
//! how long after its tick each snapshot reaches the sockets, the server
//! CPU a tick costs, and what one chat line to all of them costs each socket
//! ([`chat_cost`](super::chat_cost)).

use super::{chat_cost, Context, Held};
use crate::cli::IdleArgs;
use crate::profile::{Profile, ProfileName};
use crate::report::{round3, table, IdleReport, Scenario};
use crate::sysinfo::{kernel_tcp_memory, Proc};

/// Runs the idle scenario and reports.
///
/// Errors: writing the report or plot failed.
pub async fn run(ctx: &Context, args: &IdleArgs) -> anyhow::Result<()> {
    let report = measure(ctx, args).await;
    ctx.finish(&report, table::idle(&report))?;
    ctx.plot(&[(report.measured.connected, &report.measured)])
}

fn server_rss(pids: &[u32]) -> Option<u64> {
    let v: Vec<u64> = pids.iter().filter_map(|&p| Proc::Pid(p).memory().ok()).map(|m| m.rss).collect();
    (!v.is_empty()).then(|| v.iter().sum())
}

fn per_connection(before: Option<u64>, after: Option<u64>, n: usize) -> Option<u64> {
    let (b, a) = (before?, after?);
    // A reading that went down (the allocator gave memory back meanwhile)
    // measures nothing: not "0 bytes a connection".
    (n > 0 && a >= b).then(|| (a - b) / n as u64)
}

/// Runs the idle connections and returns the report (no output).
pub async fn measure(ctx: &Context, args: &IdleArgs) -> IdleReport {
    ctx.check_capacity(args.bots);
    let pids = &ctx.common.server_pids;
    let rss_before = server_rss(pids);
    let tcp_before = kernel_tcp_memory().ok();
    let mut crew = ctx.crew(Profile::of(ProfileName::Idle), ctx.policy()).await;
    crew.ramp_to(ctx, args.bots, args.ramp).await;
    crew.settle(ctx).await;
    tokio::select! {
        _ = ctx.stop.cancelled() => {}
        _ = tokio::time::sleep(args.stand) => {}
    }
    let Held { measured, hold, usage, census, .. } = crew.measure_hold(ctx, args.hold, "idle".into()).await;
    let rss_after = server_rss(pids);
    let tcp_after = kernel_tcp_memory().ok();
    // Ticks by the clock: an idle socket is sent nothing while its view stands still.
    let tick_hz = crew.shards(ctx).await.1;
    let ticks = hold.elapsed.as_secs_f64() * f64::from(tick_hz);
    let per_tick = usage.server_cpu().filter(|_| ticks >= 1.0).map(|c| round3(c.total_s() * 1000.0 / ticks));
    let chat = if args.no_chat_cost { None } else { chat_cost::measure(ctx, &crew, tick_hz).await };
    crew.shutdown(ctx).await;
    IdleReport {
        scenario: Scenario::Idle,
        bots: args.bots,
        admitted: census.admitted,
        server_bytes_per_connection: per_connection(rss_before, rss_after, census.connected),
        kernel_tcp_bytes_per_connection: per_connection(tcp_before, tcp_after, census.connected),
        server_rss_before_bytes: rss_before,
        server_rss_after_bytes: rss_after,
        stand_ms: u64::try_from(args.stand.as_millis()).unwrap_or(u64::MAX),
        server_cpu_per_tick_ms: per_tick,
        chat_cost: chat,
        measured,
        info: ctx.info(ProfileName::Idle),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn per_connection_needs_both_readings_and_connections() {
        assert_eq!(per_connection(Some(1000), Some(3000), 2), Some(1000));
        assert_eq!(per_connection(Some(3000), Some(1000), 2), None, "a reading that went down");
        assert_eq!(per_connection(None, Some(1000), 2), None);
        assert_eq!(per_connection(Some(1), Some(2), 0), None);
    }
}
