//! What one place-wide chat line costs the server per socket: the `idle`
//! scenario's "one message to all of them" (issue 17's goal: at most 5 µs of
//! server CPU a socket).
//!
//! Two windows of the same length with every idle socket open: a quiet one,
//! then one in which [`SPEAKERS`] extra players take turns saying a line every
//! tick (each within the server's default chat rate of 1 line/s). The
//! server's extra CPU in the second window, divided by the chat lines the
//! idle bots received there, is the cost of delivering one line to one
//! socket. Measured from outside (`/proc` of `--server-pid`), so it counts the
//! kernel's share of every write too.

use super::crew::Crew;
use super::Context;
use crate::client::{Client, Incoming, JoinRequest};
use crate::meter::Meter;
use crate::report::ChatCost;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// Players that take turns saying the lines: one line a tick at 20 Hz keeps
/// each at 1 line/s, the server's default sustained chat rate.
pub const SPEAKERS: usize = 20;

/// Length of each window.
pub const WINDOW: Duration = Duration::from_secs(4);

/// Measures the cost of chat lines to every bot of `crew` (which stays
/// connected; `tick_hz` its Welcomes' tick rate); `None` without a readable
/// server process or when the speakers cannot join.
pub async fn measure(ctx: &Context, crew: &Crew<'_>, tick_hz: u16) -> Option<ChatCost> {
    let pids = &ctx.common.server_pids;
    let target = ctx.targets.first()?.clone();
    let mut speakers = Vec::with_capacity(SPEAKERS);
    for i in 0..SPEAKERS {
        let name = format!("Speaker{i}");
        let req = JoinRequest { name: &name, ..JoinRequest::default() };
        match Client::join(&target, None, req, ctx.common.join_timeout).await {
            Ok((client, _)) => speakers.push(client),
            Err(e) => {
                tracing::warn!("chat cost: speaker {i} could not join: {e}");
                return None;
            }
        }
    }
    let stop = CancellationToken::new();
    // The speakers read what they get (and drop it) until the end.
    let mut feeds = Vec::with_capacity(SPEAKERS);
    let mut tasks = Vec::with_capacity(SPEAKERS);
    for mut client in speakers {
        let (tx, mut rx) = tokio::sync::mpsc::channel::<String>(4);
        feeds.push(tx);
        let stop = stop.clone();
        tasks.push(tokio::spawn(async move {
            loop {
                tokio::select! {
                    () = stop.cancelled() => break,
                    line = rx.recv() => match line {
                        Some(line) => if client.send_chat(&line).await.is_err() { break },
                        None => break,
                    },
                    incoming = client.recv() => if !matches!(incoming, Incoming::Frame(_)) { break },
                }
            }
            client.close(Duration::from_millis(200)).await;
        }));
    }

    let meter = Meter::start(pids);
    tokio::time::sleep(WINDOW).await;
    let quiet = meter.finish();
    crew.take_window(ctx).await;

    let meter = Meter::start(pids);
    let tick = Duration::from_millis(1000 / u64::from(tick_hz.max(1)));
    let mut every = tokio::time::interval(tick);
    // A late tick of ours must not send a burst of lines that would share
    // one server write (and make a line look cheaper than it is).
    every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let end = tokio::time::Instant::now() + WINDOW;
    let mut lines = 0u64;
    while tokio::time::Instant::now() < end {
        every.tick().await;
        let speaker = &feeds[lines as usize % feeds.len()];
        if speaker.try_send(format!("line {lines} to all")).is_ok() {
            lines += 1;
        }
    }
    // Lines still on their way when the window closes are left out of both
    // the CPU and the count alike: the window ends when the last is sent.
    let chat = meter.finish();
    let deliveries = crew.take_window(ctx).await.counters.chat_received;
    stop.cancel();
    for t in tasks {
        let _ = t.await;
    }
    let (q, c) = (quiet.server_cpu()?, chat.server_cpu()?);
    let scaled_quiet = q.total_s() * chat.wall_s / quiet.wall_s.max(1e-9);
    let extra = (c.total_s() - scaled_quiet).max(0.0);
    Some(ChatCost {
        lines,
        deliveries,
        quiet_cpu_s: q.total_s(),
        chat_cpu_s: c.total_s(),
        cpu_per_socket_us: (deliveries > 0).then(|| crate::report::round3(extra * 1e6 / deliveries as f64)),
    })
}
