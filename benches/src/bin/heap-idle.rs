//! `heap-idle`: a heap profile of idle websockets (`mino_benches::heap`).
//! Prints the live heap a connection and its biggest allocation sites.

use clap::Parser;
use mino_benches::heap::{self, Options};
use mino_benches::runner::{heap_target, set_by_cargo_run, target_root, workspace_root, RELEASE_BUILD};
use mino_benches::sections::idle::IDLE_FLAGS;
use std::path::PathBuf;
use std::process::{Command, ExitCode};

/// A heap profile of N idle websockets: mino-server under heaptrack with
/// N idle bots (mino-loadgen idle), killed during the hold; prints the live
/// heap per connection and its biggest allocation sites. Needs heaptrack
/// (apt install heaptrack). Loopback only; stops by itself.
#[derive(Debug, Parser)]
#[command(name = "heap-idle")]
struct Cli {
    /// Idle websockets.
    #[arg(default_value_t = 10_000)]
    connections: u32,
    /// Where mino-server (built with --no-default-features) and mino-loadgen
    /// are; default: built into `heap/release` and `release` of the target
    /// folder this program was built in (CARGO_TARGET_DIR, else target/).
    bin_dir: Option<PathBuf>,
    /// Flags added to the server's (default: the idle section's,
    /// `mino_benches::sections::idle::IDLE_FLAGS`).
    #[arg(last = true)]
    flags: Vec<String>,
}

fn cargo(args: &[&str]) -> bool {
    let mut cmd = Command::new("cargo");
    // The target folder this program is in: the builds go where it reads.
    cmd.args(args).current_dir(workspace_root()).env("CARGO_TARGET_DIR", target_root());
    for (key, _) in std::env::vars_os() {
        if key.to_str().is_some_and(set_by_cargo_run) {
            cmd.env_remove(key);
        }
    }
    cmd.status().is_ok_and(|s| s.success())
}

#[tokio::main]
async fn main() -> ExitCode {
    let cli = Cli::parse();
    let (server, loadgen) = match &cli.bin_dir {
        Some(dir) => (dir.join("mino-server"), dir.join("mino-loadgen")),
        None => {
            let heap_dir = heap_target().to_string_lossy().into_owned();
            let heap = ["build", "--release", "--quiet", "--target-dir", &heap_dir, "-p", "mino-server"];
            if !cargo(&[&heap[..], &["--no-default-features"]].concat())
                || !cargo(&[&RELEASE_BUILD[..], &["--quiet"]].concat())
            {
                eprintln!("heap-idle: the build failed");
                return ExitCode::FAILURE;
            }
            (heap_target().join("release/mino-server"), target_root().join("release/mino-loadgen"))
        }
    };
    let flags =
        if cli.flags.is_empty() { IDLE_FLAGS.iter().map(|s| s.to_string()).collect() } else { cli.flags.clone() };
    let options = Options { connections: cli.connections, server, loadgen, flags: flags.clone() };
    match heap::profile(&options).await {
        Ok(p) => {
            println!("heap-idle: {} idle websockets open, server flags: {}", p.connected, flags.join(" "));
            println!("total {:.0} B/conn", p.bytes_per_connection);
            for (site, bytes) in &p.sites {
                println!("{bytes:8.0} B/conn  {site}");
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("heap-idle: {e:#}");
            ExitCode::FAILURE
        }
    }
}
