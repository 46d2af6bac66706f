//! Section 4, memory and CPU per idle websocket: the runs at each size, the
//! heap profile, the allocator and the kernel's own cost.

use super::fmt::{count, f2, kb, median, ratio, table, DASH};
use super::verdict;
use super::Report;
use mino_loadgen::report::IdleReport;
use std::collections::BTreeMap;

impl Report {
    pub(super) fn idle_section(&mut self) -> Vec<String> {
        let mut out = vec!["## 4. Memory and CPU per idle websocket".to_owned(), String::new()];
        if self.raw.idle.is_empty() {
            out.extend(["Not run.".to_owned(), String::new()]);
            return out;
        }
        let oi = &self.raw.original.idle;
        let mut sizes: BTreeMap<u64, Vec<&IdleReport>> = BTreeMap::new();
        for (r, _) in &self.raw.idle {
            sizes.entry(r.bots as u64).or_default().push(r);
        }
        let o_lo = oi.broadcast_core_s_low.f() / oi.connections as f64 * 1e6;
        let o_hi = oi.broadcast_core_s_high.f() / oi.connections as f64 * 1e6;
        let (mut rows, mut kern_all, mut best) = (Vec::new(), Vec::new(), None);
        for (bots, runs) in &sizes {
            let med = |f: fn(&IdleReport) -> Option<f64>| median(runs.iter().map(|r| f(r)));
            let n = med(|r| Some(r.measured.connected as f64));
            let proc = med(|r| r.server_bytes_per_connection.map(|v| v as f64));
            let kern = med(|r| r.kernel_tcp_bytes_per_connection.map(|v| v as f64));
            kern_all.extend(runs.iter().filter_map(|r| r.kernel_tcp_bytes_per_connection));
            let tick = med(|r| r.server_cpu_per_tick_ms);
            let chat = med(|r| r.chat_cost.as_ref().and_then(|c| c.cpu_per_socket_us));
            let v = verdict::of_runs(runs.iter().map(|r| &r.measured));
            rows.push(vec![
                count(*bots as f64),
                n.map_or(DASH.into(), count),
                kb(proc),
                ratio(proc, Some(oi.process_bytes_per_conn)),
                format!("{} per end", kb(kern.map(|k| k / 2.0))),
                format!("{} ms", f2(tick)),
                format!("{} µs", f2(chat)),
                format!("{} to {}", ratio(chat, Some(o_hi)), ratio(chat, Some(o_lo))),
                v.clone(),
            ]);
            best = Some((*bots, proc, chat, v));
        }
        let repeats = sizes.values().map(Vec::len).max().unwrap_or(0);
        // The runner passed `--keyframe-ticks 20` before protocol 4 (shared
        // delta frames); the commands of the runs say which these are.
        let keyframes = if self.raw.commands.iter().any(|(_, c)| c.contains("--keyframe-ticks")) {
            "These runs were taken before protocol 4, with keyframes every 20 ticks (`--keyframe-ticks 20`, \
             in the commands below: a standing player's socket was written about once a second, not every tick); \
             the runner no longer passes it (protocol 4 writes a standing player's socket nothing while its view \
             does not change, and has no such flag)."
        } else {
            "No other flag: since protocol 4 (shared delta frames) a standing player's socket is written nothing \
             while its view does not change."
        };
        let stand = match self.raw.idle.iter().map(|(r, _)| r.stand_ms).max().unwrap_or(0) {
            0 => "The hold starts at the last join (these runs were taken before `--stand`): its server CPU \
                  includes the views the last joins woke, looked at for the slowest tier (64 ticks)."
                .to_owned(),
            ms => format!(
                "The hold starts once the place has stood {} s since the last join (`--stand`): a join wakes the \
                 views of its region for the slowest tier (64 ticks, 3.2 s), a cost of joining, not of standing.",
                f2(Some(ms as f64 / 1000.0))
            ),
        };
        out.extend([
            format!(
                "`mino-loadgen idle`: websockets that say Hello and then only answer pings, on a fresh shard each \
                 run (median of {repeats} run(s) a size). Every mino connection is a player standing still: a world \
                 of about one player per 125-unit cell (area of interest), the busy rule off. {keyframes} {stand} \
                 \"One chat line to all\" is the server's extra CPU while 20 speakers take turns \
                 saying a line every tick, divided by the lines the idle sockets received (`chat_cost` in the JSON). \
                 The original: {} idle websockets on one process and one core, {} each, one message to all {} to {} \
                 s of a core ({o_lo:.1} to {o_hi:.1} µs a socket).",
                count(oi.connections as f64),
                kb(Some(oi.process_bytes_per_conn)),
                oi.broadcast_core_s_low,
                oi.broadcast_core_s_high,
            ),
            String::new(),
        ]);
        out.extend(table(
            &[
                "idle websockets",
                "connected",
                "server memory per websocket (RSS growth ÷ connections)",
                "÷ original 1.3 KB",
                "kernel TCP memory",
                "server CPU per tick",
                "one chat line to all, CPU per socket",
                "÷ original",
                "verdict",
            ],
            &rows,
        ));
        if !kern_all.is_empty() {
            let each: Vec<String> = kern_all.iter().map(|k| kb(Some(*k as f64))).collect();
            out.extend([
                String::new(),
                format!(
                    "The kernel figure is the growth of the TCP memory in `/proc/net/sockstat` (both ends are on \
                     this kernel, halved here): buffers holding data in flight at that instant, not the sockets' \
                     fixed structures, so it swings between runs ({} both ends here). The original's 2.7 to 4 KB \
                     likely counts those structures too.",
                    each.join(", ")
                ),
            ]);
        }
        out.extend(self.heap_part());
        out.extend(self.allocator_part(&sizes));
        if let Some(slab) = &self.raw.slab {
            out.extend([
                String::new(),
                format!(
                    "**The kernel's own cost per connection**, apart: the kernel's slab memory grew by {} a \
                     connection with {} idle websockets open, {} per socket end (both ends are on this kernel: \
                     socket, TCP state, file, epoll entry); the original reports 2.7 to 4 KB in the kernel. ({}.)",
                    kb(Some(slab.bytes_per_connection_both_ends)),
                    count(slab.connections as f64),
                    kb(Some(slab.bytes_per_end)),
                    slab.command
                ),
            ]);
        }
        if let Some((bots, proc, chat, v)) = best {
            self.summarize(
                format!("server memory per idle websocket ({})", count(bots as f64)),
                "1.3 KB".into(),
                kb(proc),
                ratio(proc, Some(1300.0)),
                v.clone(),
            );
            self.summarize(
                format!("CPU of one chat line to all, per socket ({})", count(bots as f64)),
                format!("{o_lo:.1}–{o_hi:.1} µs"),
                format!("{} µs", f2(chat)),
                format!("{}–{}", ratio(chat, Some(o_hi)), ratio(chat, Some(o_lo))),
                v,
            );
        }
        out.push(String::new());
        out
    }

    fn heap_part(&self) -> Vec<String> {
        let Some(heap) = &self.raw.heap else { return Vec::new() };
        let (b, a) = (&heap.runs.before, &heap.runs.after);
        let sites: Vec<String> = a.top.iter().take(8).map(|(site, n)| format!("{site} {n} B")).collect();
        let task: u64 =
            b.top.iter().filter(|(site, _)| site.contains("task") || site.contains("try_with")).map(|(_, n)| n).sum();
        vec![
            String::new(),
            format!(
                "**Heap profile** (heaptrack, {} idle websockets, `{}`): live heap {} a connection before ({}), {} \
                 after ({}). Biggest sites after: {}. Before, the session task and its tracker alone held {} B a \
                 connection. The RSS above adds what the allocator keeps beyond the live heap: with jemalloc (the \
                 server's allocator since issue 17) size-class rounding and partly used slabs; glibc's malloc adds a \
                 header per allocation and the holes the handshakes' transient buffers leave (see the allocator \
                 comparison below). The profile is of a server built without jemalloc, as heaptrack sees malloc's \
                 callers only.",
                count(heap.connections as f64),
                heap.command,
                kb(Some(b.live_heap_bytes_per_connection)),
                b.what,
                kb(Some(a.live_heap_bytes_per_connection)),
                a.what,
                sites.join(", "),
                count(task as f64),
            ),
        ]
        .into_iter()
        .chain(heap.later.as_ref().map(|l| {
            let sites: Vec<String> = l.run.top.iter().take(8).map(|(site, n)| format!("{site} {n} B")).collect();
            format!(
                "Later ({}; `{}`, {} idle websockets): live heap {} a connection ({} B). Biggest sites: {}.",
                l.run.what,
                l.command,
                count(l.connections as f64),
                kb(Some(l.run.live_heap_bytes_per_connection)),
                count(l.run.live_heap_bytes_per_connection),
                sites.join(", "),
            )
        }))
        .collect()
    }

    fn allocator_part(&self, sizes: &BTreeMap<u64, Vec<&IdleReport>>) -> Vec<String> {
        let glibc: Vec<&IdleReport> = self.raw.idle_glibc.iter().map(|(r, _)| r).collect();
        let Some(first) = glibc.first() else { return Vec::new() };
        let n = first.bots as u64;
        let jem = sizes.get(&n).cloned().unwrap_or_default();
        let bytes = |runs: &[&IdleReport]| -> Vec<Option<f64>> {
            runs.iter().map(|r| r.server_bytes_per_connection.map(|v| v as f64)).collect()
        };
        let (g, j) = (bytes(&glibc), bytes(&jem));
        let list = |v: &[Option<f64>]| v.iter().map(|x| x.map_or(DASH.into(), count)).collect::<Vec<_>>().join(", ");
        let (mg, mj) = (median(g.clone()), median(j.clone()));
        vec![
            String::new(),
            format!(
                "**The allocator** (`mino-server` built with `--no-default-features`, glibc's malloc, against the \
                 default jemalloc build of the same commit; {} idle websockets, the runs `malloc-glibc-*` and \
                 `idle-{n}-*`): server memory per websocket {} with glibc ({} B) against {} with jemalloc ({} B), {}. \
                 jemalloc runs with `dirty_decay_ms:0` (`server/src/main.rs`): pages left empty go back to the \
                 system at once. With its default (kept 10 s, given back only as it is called again, which a shard \
                 of standing players hardly does) the same 15,000 held 1,517 to 1,537 B a socket against 1,356 to \
                 1,421 B with the setting alone (one build, `_RJEM_MALLOC_CONF` set apart), and 1,000 walkers' \
                 server CPU a frame did not move beyond the machine's noise (one shard, `--cell-size 100 \
                 --view-radius 400`, `mino-loadgen walk --bots 1000 --density 4`, alternating runs: 9.6 and 11.1 \
                 µs with the default, 8.4 to 10.5 µs with the setting).",
                count(n as f64),
                kb(mg),
                list(&g),
                if j.is_empty() { DASH.into() } else { kb(mj) },
                list(&j),
                if j.is_empty() { DASH.into() } else { ratio(mj, mg) },
            ),
        ]
    }
}
