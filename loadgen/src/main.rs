//! `mino-loadgen`: parse the command line, start tracing (filtered by
//! `MINO_LOG`) and the runtime, run the scenario until it ends or
//! Ctrl-C/SIGTERM stops it early.

use mino_loadgen::cli::Cli;
use mino_loadgen::interrupt::Interruptions;
use mino_loadgen::outcome::Outcome;
use std::io::IsTerminal;
use tokio_util::sync::CancellationToken;

fn main() -> std::process::ExitCode {
    match run() {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            // The cause, not a backtrace (RUST_BACKTRACE would add one to
            // anyhow's report): a failed run is an answer, not a crash. A
            // run that measured nothing says its verdict and exits with its
            // code; any other error is Outcome::Failed.
            eprintln!("mino-loadgen: {e:#}");
            std::process::ExitCode::from(Outcome::of_error(&e).exit_code())
        }
    }
}

fn run() -> anyhow::Result<()> {
    let matches = mino_loadgen::cli::command().get_matches();
    let cli = <Cli as clap::FromArgMatches>::from_arg_matches(&matches).unwrap_or_else(|e| e.exit());
    if let Err(e) = cli.scenario().and_then(|_| mino_loadgen::cli::refuse_agent_ignored(&matches)) {
        e.exit();
    }
    // MINO_LOG, the log filter of every mino binary (default here: warn).
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("MINO_LOG")
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn")),
        )
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        // A log line that cannot be written is lost, not reported with a
        // panicking eprint! (as the server).
        .log_internal_errors(false)
        .init();
    // A report file that cannot be written is said now, not after the run
    // (whose report would be lost: an outside trial ran a whole run into
    // a --json that was a folder).
    for (flag, path) in [("--json", &cli.common.json), ("--plot", &cli.common.plot)] {
        if let Some(path) = path {
            writable(path).map_err(|e| anyhow::anyhow!("{flag} {}: {e}", path.display()))?;
        }
    }
    if let (Some(json), Some(plot)) = (&cli.common.json, &cli.common.plot) {
        anyhow::ensure!(
            !same_file(json, plot),
            "--json and --plot are both {}: the chart would overwrite the report",
            json.display()
        );
    }
    // The scenario's control runs here; the bots run on their own threads.
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    let interruptions = Interruptions::new();
    runtime.block_on(async {
        let stop = CancellationToken::new();
        let signals = tokio::spawn(stop_on_signal(stop.clone(), interruptions.clone()));
        let result = mino_loadgen::scenario::run(cli, stop, interruptions).await;
        signals.abort();
        result
    })
}

/// Whether a report can be written at `path`: its folder is there, it is
/// not a folder itself, and a regular file there (or a new one) opens for
/// writing. An existing file is left as it is; a new one is made and removed
/// (nothing is left before there is something to write); anything else (a
/// FIFO, a device, a symbolic link) is not opened now: opening a FIFO would
/// end its reader, and a link's target is not ours to make.
///
/// Errors: what is wrong, in words.
fn writable(path: &std::path::Path) -> Result<(), String> {
    let folder = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(".".as_ref());
    if !folder.is_dir() {
        return Err(format!("no folder {}", folder.display()));
    }
    if path.is_dir() {
        return Err("a folder, not a file".into());
    }
    let cannot = |e: std::io::Error| format!("cannot be written: {e}");
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_file() => {
            std::fs::OpenOptions::new().append(true).open(path).map_err(cannot)?;
        }
        Ok(_) => {}
        Err(_) => {
            std::fs::OpenOptions::new().write(true).create_new(true).open(path).map_err(cannot)?;
            let _ = std::fs::remove_file(path);
        }
    }
    Ok(())
}

/// The same file: the same path, the same file when both resolve, or the
/// same name in the same folder (as it resolves).
fn same_file(a: &std::path::Path, b: &std::path::Path) -> bool {
    let resolved = |p: &std::path::Path| {
        let folder = p.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(".".as_ref());
        (std::fs::canonicalize(folder).ok(), p.file_name().map(std::ffi::OsStr::to_owned))
    };
    let both = |p: &std::path::Path| std::fs::canonicalize(p).ok();
    let (x, y) = (resolved(a), resolved(b));
    a == b || both(a).is_some_and(|f| both(b) == Some(f)) || (x.0.is_some() && x == y)
}

/// Cancels `stop` on the first Ctrl-C or SIGTERM, marking the run
/// interrupted by it (the report says so).
async fn stop_on_signal(stop: CancellationToken, interruptions: Interruptions) {
    const SIGINT: &str = "SIGINT (Ctrl-C)";
    let mut term = match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
        Ok(s) => s,
        Err(e) => {
            tracing::warn!("no SIGTERM handler: {e}");
            let _ = tokio::signal::ctrl_c().await;
            interruptions.mark(SIGINT);
            stop.cancel();
            return;
        }
    };
    let signal = tokio::select! {
        _ = tokio::signal::ctrl_c() => SIGINT,
        _ = term.recv() => "SIGTERM",
    };
    // Always said, as the report will: the figures are a partial run's
    // (unless measuring was over, the bots already closing).
    if interruptions.mark(signal) {
        eprintln!("mino-loadgen: {signal}: stopping early; the report is marked interrupted");
    } else {
        eprintln!("mino-loadgen: {signal}: stopping; measuring was over, the report is whole");
    }
    stop.cancel();
}
