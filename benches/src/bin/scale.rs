//! `scale`: mino's scale runner (see `mino_benches::cli`). Parses the
//! command line, starts logging, runs until done or interrupted by SIGINT
//! or SIGTERM (every process it started is stopped either way).

use clap::Parser;
use mino_benches::cli::{self, Cli};
use tracing_subscriber::EnvFilter;

#[tokio::main]
async fn main() -> std::process::ExitCode {
    let cli = Cli::parse();
    tracing_subscriber::fmt()
        .with_env_filter(EnvFilter::try_from_env("MINO_LOG").unwrap_or_else(|_| EnvFilter::new("warn")))
        .with_writer(std::io::stderr)
        .log_internal_errors(false)
        .init();
    tokio::select! {
        r = cli::main(cli) => match r {
            Ok(()) => std::process::ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("scale: {e:#}");
                std::process::ExitCode::FAILURE
            }
        },
        _ = interrupted() => {
            eprintln!("scale: interrupted; stopping what it started");
            std::process::ExitCode::from(130)
        }
    }
}

/// SIGINT or SIGTERM: the run is dropped, and with it every process it
/// started (each is killed on drop).
async fn interrupted() {
    use tokio::signal::unix::{signal, SignalKind};
    match signal(SignalKind::terminate()) {
        Ok(mut term) => {
            tokio::select! {
                _ = tokio::signal::ctrl_c() => {}
                _ = term.recv() => {}
            }
        }
        Err(_) => {
            let _ = tokio::signal::ctrl_c().await;
        }
    }
}
