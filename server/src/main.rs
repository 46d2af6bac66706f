//! `mino-server`: parse flags, start logging, bind, run until SIGINT/SIGTERM.

use clap::Parser;
use mino_server::{Cli, Config};
use std::io::IsTerminal;
use tracing_subscriber::EnvFilter;

fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    let runtime = match usize::from(cli.worker_threads) {
        1 => tokio::runtime::Builder::new_current_thread().enable_all().build()?,
        n => tokio::runtime::Builder::new_multi_thread().worker_threads(n).enable_all().build()?,
    };
    runtime.block_on(serve(cli))
}

async fn serve(cli: Cli) -> anyhow::Result<()> {
    // The redis crate's own warnings (a cluster node connection lost, each
    // reconnection attempt) flood the log during a failover that the shard
    // reports itself; they show when MINO_LOG names `redis`.
    let filter = std::env::var("MINO_LOG").unwrap_or_else(|_| "info".into());
    let filter = if filter.contains("redis") { filter } else { format!("{filter},redis=error") };
    tracing_subscriber::fmt()
        .with_env_filter(EnvFilter::try_new(&filter).unwrap_or_else(|_| EnvFilter::new("info,redis=error")))
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .init();
    let config = match Config::from_cli(&cli) {
        Ok(config) => config,
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(2);
        }
    };
    let listener = tokio::net::TcpListener::bind(cli.listen)
        .await
        .map_err(|e| anyhow::anyhow!("cannot listen on {}: {e}", cli.listen))?;
    let addr = listener.local_addr()?;
    println!("mino-server listening on http://{addr}");
    let admin = match cli.admin_listen {
        Some(at) => {
            let admin = tokio::net::TcpListener::bind(at)
                .await
                .map_err(|e| anyhow::anyhow!("cannot listen on {at} (admin): {e}"))?;
            println!("mino-server admin on http://{}", admin.local_addr()?);
            Some(admin)
        }
        None => None,
    };
    let life = mino_server::Lifecycle::default();
    tokio::spawn(mino_server::shutdown::on_signal(life.clone()));
    Ok(mino_server::run(listener, admin, config, life).await?)
}
