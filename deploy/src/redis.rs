//! A real `redis-server` per test on a free loopback port, without
//! persistence, killed on drop.

use crate::port::free_port;
use crate::process::Process;
use crate::WAIT;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// A running redis-server.
#[derive(Debug)]
pub struct Redis {
    process: Process,
    /// Its port on 127.0.0.1.
    pub port: u16,
}

impl Redis {
    /// Starts redis-server on a free port (another one if a parallel test
    /// took it first), without persistence, and waits until it answers.
    ///
    /// Panics: redis-server is missing or never answers.
    pub fn start() -> Redis {
        Redis::start_with(None, &["--protected-mode", "no"])
    }

    /// Starts redis-server with the configuration file `conf` (if any), then
    /// `args` (which override the file), bound to 127.0.0.1 on a free port,
    /// without persistence, and waits until it answers (a NOAUTH error
    /// counts: the server is up and wants a password).
    ///
    /// Panics: redis-server is missing or never answers.
    pub fn start_with(conf: Option<&Path>, args: &[&str]) -> Redis {
        for _ in 0..10 {
            let port = free_port();
            let mut cmd = Command::new("redis-server");
            if let Some(conf) = conf {
                cmd.arg(conf);
            }
            cmd.args(["--port", &port.to_string(), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"])
                .args(["--loglevel", "warning"])
                .args(args)
                .stdout(Stdio::null())
                .stderr(Stdio::inherit());
            let mut process = Process::spawn("redis-server", &mut cmd);
            let end = Instant::now() + WAIT;
            while process.is_running() && Instant::now() < end {
                if answers(port) {
                    return Redis { process, port };
                }
                std::thread::sleep(Duration::from_millis(20));
            }
            // It exited (port taken) or never answered: try another port.
        }
        panic!("redis-server did not start (is it installed? scripts/setup.sh)");
    }

    /// The URL shards are given.
    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}", self.port)
    }

    /// The process id.
    pub fn pid(&self) -> u32 {
        self.process.pid()
    }
}

/// True when a Redis on `port` answers PING (with PONG, or with an error
/// asking for authentication).
fn answers(port: u16) -> bool {
    ping(port).is_some_and(|a| a.starts_with("+PONG") || a.starts_with("-NOAUTH"))
}

/// The raw answer of a Redis on `port` to an unauthenticated PING, None when
/// nothing answers.
pub fn ping(port: u16) -> Option<String> {
    let mut s = TcpStream::connect(("127.0.0.1", port)).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(1))).ok()?;
    s.write_all(b"PING\r\n").ok()?;
    let mut buf = [0u8; 256];
    let n = s.read(&mut buf).ok()?;
    Some(String::from_utf8_lossy(&buf[..n]).into_owned())
}
