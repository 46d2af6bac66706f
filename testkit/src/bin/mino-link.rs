//! `mino-link`: runs a command behind the test kit's lossy link
//! ([`mino_testkit::link`]): this process moves into a network namespace of
//! its own, starts the link, and runs the command there, so it and what it
//! starts (a shard, Chromium, bots) reach `127.0.1.2` through the link and
//! everything else on loopback as usual. The command is told the addresses
//! in `MINO_LINK_NEAR` (listen here) and `MINO_LINK_FAR` (dial this), and
//! the link's settings in `MINO_LINK`. Exits with the command's code, or 2
//! when the namespace or the link cannot be made (run as root) or the
//! command cannot be started.
//!
//! ```text
//! mino-link --loss-pct 2 --rtt-ms 40 -- npx vitest run --config vitest.e2e.config.ts
//! ```

use clap::Parser;
use mino_testkit::link::{self, Link, LinkArgs, FAR, NEAR};
use std::process::Command;

/// Flags.
#[derive(Parser, Debug)]
#[command(about = "Runs a command behind a link with loss, delay and jitter (needs root)")]
struct Args {
    #[command(flatten)]
    link: LinkArgs,
    /// The command and its arguments.
    #[arg(required = true, last = true)]
    command: Vec<String>,
}

fn main() {
    let args = Args::parse();
    if let Err(e) = link::isolate() {
        eprintln!("mino-link: a private network namespace is needed (run as root): {e}");
        std::process::exit(2);
    }
    let impairment = args.link.impairment();
    let link = match Link::start(impairment) {
        Ok(l) => l,
        Err(e) => {
            eprintln!("mino-link: the link: {e}");
            std::process::exit(2);
        }
    };
    let (program, rest) = args.command.split_first().expect("clap requires a command");
    let status = Command::new(program)
        .args(rest)
        .env("MINO_LINK_NEAR", NEAR.to_string())
        .env("MINO_LINK_FAR", FAR.to_string())
        .env("MINO_LINK", args.link.describe())
        .status();
    let counts = link.counts();
    drop(link);
    eprintln!("mino-link: {} packets passed, {} dropped", counts.passed, counts.dropped);
    match status {
        Ok(s) => std::process::exit(s.code().unwrap_or(1)),
        Err(e) => {
            eprintln!("mino-link: {program}: {e}");
            std::process::exit(2);
        }
    }
}
