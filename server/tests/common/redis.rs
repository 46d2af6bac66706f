//! A real `redis-server` per test, on a free loopback port, killed on drop.

use std::net::TcpListener;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A running redis-server.
pub struct Redis {
    child: Option<Child>,
    pub port: u16,
}

/// A port that is free now, outside the kernel's ephemeral range (which the
/// servers under test draw from), so parallel tests rarely race for it.
fn free_port() -> u16 {
    loop {
        let port = 20_000 + (rand_u16() % 12_000);
        if TcpListener::bind(("127.0.0.1", port)).is_ok() {
            return port;
        }
    }
}

fn rand_u16() -> u16 {
    let t = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    let x = t.subsec_nanos() ^ (std::process::id() << 7) ^ (t.as_secs() as u32);
    (x ^ (x >> 16)).wrapping_mul(0x9e37) as u16
}

impl Redis {
    /// Starts redis-server on a free port (another if a parallel test took it).
    pub fn start() -> Redis {
        for _ in 0..20 {
            let mut r = Redis { child: None, port: free_port() };
            if r.try_spawn() {
                return r;
            }
        }
        panic!("could not start redis-server");
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
        assert!(self.try_spawn(), "redis-server could not take port {}", self.port);
    }

    /// Starts the server; false if the port turned out to be taken (the server
    /// answering there is not ours).
    fn try_spawn(&mut self) -> bool {
        let child = Command::new("redis-server")
            .args(["--port", &self.port.to_string(), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"])
            .args(["--loglevel", "warning", "--protected-mode", "no"])
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("redis-server is installed (scripts/setup.sh)");
        let pid = child.id();
        self.child = Some(child);
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            assert!(Instant::now() < deadline, "redis-server did not start on {}", self.port);
            if let Some(Ok(Some(_))) = self.child.as_mut().map(Child::try_wait) {
                self.child = None;
                return false;
            }
            let info = self.cli(&["INFO", "server"]);
            if let Some(p) = info.lines().find_map(|l| l.strip_prefix("process_id:")) {
                if p.trim() == pid.to_string() {
                    return true;
                }
                self.kill();
                return false;
            }
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
