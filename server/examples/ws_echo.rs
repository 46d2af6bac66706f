//! mino's websocket layer with an echo in place of the game, for the
//! Autobahn test suite's fuzzing client (`scripts/autobahn.sh` builds and runs
//! it; see `mino_server::echo` for what is the shard's code and what is not).
//!
//! ```sh
//! cargo run -p mino-server --example ws_echo -- 127.0.0.1:9001
//! ```
//!
//! Arguments: where to listen (`IP:PORT`, a bare port on loopback, or
//! `unix:PATH`; default `127.0.0.1:0`, a free port), then the longest message
//! in bytes (default 16 MiB). Prints `ws_echo listening on http://ADDR` once
//! it accepts; SIGINT or SIGTERM stops it. `MINO_LOG` filters its log
//! (default `warn`).

use clap::Parser;
use mino_server::address::ListenAddr;
use mino_server::{echo, Config, Listener};
use std::io::Write;
use tracing_subscriber::EnvFilter;

/// mino's websocket layer with an echo in place of the game (for the
/// Autobahn test suite).
#[derive(Parser, Debug)]
#[command(version)]
struct Args {
    /// Where to listen: IP:PORT, a bare port on loopback, or unix:PATH
    /// (127.0.0.1:0: a free port, printed).
    #[arg(default_value = "127.0.0.1:0")]
    listen: ListenAddr,
    /// The longest message, bytes (larger ones close with 1009).
    #[arg(default_value_t = echo::DEFAULT_MAX_MESSAGE)]
    max_message: usize,
}

fn main() -> anyhow::Result<()> {
    let Args { listen: at, max_message } = Args::parse();
    let filter = std::env::var("MINO_LOG").unwrap_or_else(|_| "warn".into());
    tracing_subscriber::fmt()
        .with_env_filter(EnvFilter::try_new(&filter).unwrap_or_else(|_| EnvFilter::new("warn")))
        .with_writer(std::io::stderr)
        .init();
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    runtime.block_on(async {
        // The signals are the echo's before it says it listens.
        let signals = mino_server::shutdown::Signals::install(Vec::new())?;
        let listener = Listener::bind(&at, 0o660).await?;
        let mut out = std::io::stdout();
        match listener.local_addr()? {
            ListenAddr::Tcp(a) => writeln!(out, "ws_echo listening on http://{a}")?,
            unix => writeln!(out, "ws_echo listening on {unix}")?,
        }
        out.flush()?;
        let life = mino_server::Lifecycle::default();
        tokio::spawn(signals.run(life.clone()));
        let stop = life.stop.clone();
        tokio::spawn(async move {
            // SIGTERM asks a shard to drain; the echo has nothing to drain.
            life.drain.cancelled().await;
            life.stop.cancel();
        });
        echo::run(listener, &Config::default(), max_message, stop).await?;
        Ok(())
    })
}
