//! `mino-server`: parse flags, start logging, check the configuration (and
//! the files it names), bind, run until SIGINT/SIGTERM.

use mino_server::address::ListenAddr;
use mino_server::{Cli, Config, Listener};
use std::io::{IsTerminal, Write};
use std::process::ExitCode;
use tracing_subscriber::EnvFilter;

/// The allocator: jemalloc keeps small objects in size-class slabs with no
/// per-allocation header, so an idle websocket's few small allocations (its
/// session, its view, its cell) cost their size and no more, and the
/// handshakes' short-lived buffers leave fewer holes between them. With
/// 15,000 idle websockets glibc's malloc held about a third more memory a
/// connection than jemalloc (benches/RESULTS.md section 4, "The allocator";
/// `benches/scale.sh --only idle` measures both).
#[cfg(feature = "jemalloc")]
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

/// jemalloc's options (its `malloc_conf`, under the prefix tikv-jemallocator
/// builds it with; `_RJEM_MALLOC_CONF` in the environment still overrides
/// them). `dirty_decay_ms:0`: pages left empty are given back at once. By
/// default jemalloc keeps them 10 s and gives them back only as it is called
/// again, which a shard of standing players hardly does: 15,000 idle
/// websockets held about 140 bytes each more (1,517-1,537 B against
/// 1,356-1,421 B of RSS growth a socket, `mino-loadgen idle`); 1,000
/// walkers' CPU a frame did not change measurably (benches/RESULTS.md
/// section 4, "The allocator").
///
/// Unsafe only in name: an exported symbol could clash with another of the
/// same name; jemalloc is the only one that defines or reads this one.
#[cfg(feature = "jemalloc")]
#[allow(unsafe_code)]
#[export_name = "_rjem_malloc_conf"]
static MALLOC_CONF: &[u8; 17] = b"dirty_decay_ms:0\0";

fn main() -> ExitCode {
    let matches = <Cli as clap::CommandFactory>::command().get_matches();
    let cli = <Cli as clap::FromArgMatches>::from_arg_matches(&matches).unwrap_or_else(|e| e.exit());
    let ignored = mino_server::config::ignored_view_flags(&matches);
    let config = match Config::from_cli(&cli) {
        Ok(config) => config,
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(2);
        }
    };
    let filter = match log_filter() {
        Ok(filter) => filter,
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(2);
        }
    };
    // Tests only (feature `failpoints`): fail points from FAILPOINTS.
    #[cfg(feature = "failpoints")]
    let _failpoints = fail::FailScenario::setup();
    let runtime = match usize::from(config.worker_threads) {
        1 => tokio::runtime::Builder::new_current_thread().enable_all().build(),
        n => tokio::runtime::Builder::new_multi_thread().worker_threads(n).enable_all().build(),
    };
    let ran = runtime.map_err(anyhow::Error::from).and_then(|runtime| runtime.block_on(serve(config, filter, ignored)));
    match ran {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            // The cause's chain on one line, no backtrace (RUST_BACKTRACE
            // is for bugs, not for a port in use).
            eprintln!("mino-server: {e:#}");
            ExitCode::FAILURE
        }
    }
}

/// How the ready lines name an address: `http://IP:PORT`, or `unix:PATH`.
fn announce(addr: &ListenAddr) -> String {
    match addr {
        ListenAddr::Tcp(a) => format!("http://{a}"),
        ListenAddr::Unix(_) => addr.to_string(),
    }
}

/// Prints a ready line on standard output. A closed standard output (its
/// reader gone) loses the line instead of panicking as `println!` would.
fn ready_line(line: &str) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{line}").and_then(|()| out.flush());
}

/// The log filter MINO_LOG gives (`info` when unset).
///
/// Errors: MINO_LOG is not a filter (`tracing_subscriber`'s directives:
/// `info`, `mino_server=debug,warn`, ...), said with the variable's value.
fn log_filter() -> Result<EnvFilter, String> {
    // The redis crate's own warnings (a cluster node connection lost, each
    // reconnection attempt) flood the log during a failover that the shard
    // reports itself; they show when MINO_LOG names `redis`.
    let given = std::env::var("MINO_LOG").unwrap_or_else(|_| "info".into());
    if let Some((word, level)) = misspelt_level(&given) {
        return Err(format!(
            "MINO_LOG={given:?}: {word:?} is not a level (it would be read as a target's name, \
             logging nothing else); did you mean {level:?}? Levels: off, error, warn, info, debug, trace"
        ));
    }
    let filter = if given.contains("redis") { given.clone() } else { format!("{given},redis=error") };
    EnvFilter::try_new(&filter)
        .map_err(|e| format!("MINO_LOG={given:?} is not a log filter ({e}); e.g. info, or mino_server=debug,warn"))
}

/// Levels a log directive may name.
const LEVELS: [&str; 6] = ["off", "error", "warn", "info", "debug", "trace"];

/// The first bare word of `filter` (a directive without `=`, `[` or `::`)
/// that is not a level but one letter from one (one added, dropped, changed
/// or two swapped), or `warning`, with the level meant. `tracing_subscriber`
/// takes such a word as a target's name (a prefix: `mino` is every mino
/// crate) at every level and everything else off: `MINO_LOG=inf` silenced
/// the shard. Real targets (`mino`, `mino_server`, `tokio`, `h3`) are
/// further from every level than that.
fn misspelt_level(filter: &str) -> Option<(&str, &'static str)> {
    filter.split(',').map(str::trim).filter(|w| !w.is_empty() && !w.contains(['=', '[', ':'])).find_map(|word| {
        let lower = word.to_ascii_lowercase();
        if LEVELS.contains(&lower.as_str()) {
            return None;
        }
        if lower == "warning" {
            return Some((word, "warn"));
        }
        let (distance, level) = LEVELS.iter().map(|l| (strsim::damerau_levenshtein(&lower, l), *l)).min()?;
        (distance == 1 && lower.len() >= 2).then_some((word, level))
    })
}

async fn serve(config: Config, filter: EnvFilter, ignored: Vec<&'static str>) -> anyhow::Result<()> {
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        // A log line that cannot be written (the pipe's reader gone) is lost;
        // by default the subscriber would report it with eprint!, which
        // panics on that same closed stderr, in whichever task logged: the
        // tick driver, the signal handler (the process then ignored SIGTERM
        // and SIGINT).
        .log_internal_errors(false)
        .init();
    // Every configuration error, the files it names included, ends the
    // process here, before anything binds.
    let (listen, admin_listen) = (config.listen.clone(), config.admin.listen.clone());
    let (webtransport, peer_timeout) = (config.webtransport.clone(), config.socket.peer_timeout);
    if webtransport.is_some() && config.aoi.is_none() {
        tracing::info!(
            "webtransport without area of interest (--cell-size): the place is one cell, whose view frame \
             outgrows a datagram past about 150 players; sessions then get it on their stream, where a lost \
             packet delays it as on a websocket (a warning says so if it happens)"
        );
    }
    if !ignored.is_empty() {
        tracing::warn!(
            flags = ignored.join(", "),
            "area of interest is off (no --cell-size): {} do nothing; the place is one cell every socket sees",
            ignored.join(", ")
        );
    }
    let reloads = config.reloaded_files();
    let mut prepared = match mino_server::prepare(config) {
        Ok(prepared) => prepared,
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(2);
        }
    };
    // Both listeners are bound before either is announced: one that cannot
    // be bound ends the process before it says it listens anywhere.
    // The signals are the shard's before it says it listens: a SIGTERM sent
    // as soon as it does is a drain, not the default's instant death.
    let signals = mino_server::shutdown::Signals::install(reloads)?;
    let listener = Listener::bind(&listen.addr, listen.mode).await?;
    let admin = match &admin_listen {
        Some(at) => Some(Listener::bind(at, listen.mode).await.map_err(|e| anyhow::Error::new(e).context("admin"))?),
        None => None,
    };
    if let Some(wt) = &webtransport {
        let bound = mino_server::webtransport::bind(wt, peer_timeout)
            .await
            .map_err(|e| anyhow::anyhow!("webtransport: {e}"))?;
        ready_line(&format!("mino-server webtransport on https://{}", bound.local_addr()));
        prepared = prepared.with_webtransport(bound);
    }
    ready_line(&format!("mino-server listening on {}", announce(&listener.local_addr()?)));
    if let Some(admin) = &admin {
        ready_line(&format!("mino-server admin on {}", announce(&admin.local_addr()?)));
    }
    let life = mino_server::Lifecycle::default();
    tokio::spawn(signals.run(life.clone()));
    Ok(prepared.run(listener, admin, life).await?)
}

#[cfg(test)]
mod tests {
    use super::misspelt_level;

    #[test]
    fn a_word_one_slip_from_a_level_is_caught_and_targets_are_not() {
        for (filter, level) in
            [("inf", "info"), ("warning", "warn"), ("mino_server=debug,eror", "error"), ("DEBG", "debug")]
        {
            assert_eq!(misspelt_level(filter).map(|(_, l)| l), Some(level), "{filter}");
        }
        // Targets match by prefix: `mino` is every mino crate, two letters from "info".
        for filter in [
            "info",
            "WARN",
            "mino",
            "mino_server",
            "tokio",
            "h3",
            "quinn",
            "redis",
            "mino_server=debug,warn",
            "off",
            "",
        ] {
            assert_eq!(misspelt_level(filter), None, "{filter}");
        }
    }
}
