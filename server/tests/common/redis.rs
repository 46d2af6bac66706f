//! A real `redis-server` per test, on a free loopback port, killed on drop.

use std::net::TcpListener;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A running redis-server.
pub struct Redis {
    child: Option<Child>,
    pub port: u16,
}

fn free_port() -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").expect("bind");
    l.local_addr().expect("addr").port()
}

impl Redis {
    /// Starts redis-server on a free port.
    pub fn start() -> Redis {
        let mut r = Redis { child: None, port: free_port() };
        r.spawn();
        r
    }

    /// A port on which nothing listens yet (start Redis there later with [`Redis::start_on`]).
    pub fn reserve() -> u16 {
        free_port()
    }

    /// Starts redis-server on `port`.
    pub fn start_on(port: u16) -> Redis {
        let mut r = Redis { child: None, port };
        r.spawn();
        r
    }

    fn spawn(&mut self) {
        let child = Command::new("redis-server")
            .args(["--port", &self.port.to_string(), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"])
            .args(["--loglevel", "warning", "--protected-mode", "no"])
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("redis-server is installed (scripts/setup.sh)");
        self.child = Some(child);
        let deadline = Instant::now() + Duration::from_secs(10);
        while self.cli(&["PING"]).trim() != "PONG" {
            assert!(Instant::now() < deadline, "redis-server did not start on {}", self.port);
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}", self.port)
    }

    /// Kills the server at once (SIGKILL) and waits for it.
    pub fn kill(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    /// Starts the server again on the same port.
    pub fn restart(&mut self) {
        self.kill();
        self.spawn();
    }

    /// Runs redis-cli against this server; returns its stdout.
    pub fn cli(&self, args: &[&str]) -> String {
        let out = Command::new("redis-cli")
            .args(["-h", "127.0.0.1", "-p", &self.port.to_string()])
            .args(args)
            .output()
            .expect("redis-cli");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Every key of the server.
    pub fn keys(&self) -> Vec<String> {
        self.cli(&["--scan"]).lines().map(str::to_owned).filter(|l| !l.is_empty()).collect()
    }
}

impl Drop for Redis {
    fn drop(&mut self) {
        self.kill();
    }
}
