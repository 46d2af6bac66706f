//! A real `redis-server` per test on a free loopback port, without
//! persistence, killed on drop; faults made for real (killed, restarted on
//! its port) and its keys read with `redis-cli`.

use crate::port::free_port;
use crate::process::{self, Process};
use crate::workdir::WorkDir;
use crate::{START_WAIT, WAIT};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// A redis-server on 127.0.0.1.
#[derive(Debug)]
pub struct Redis {
    /// The running server; None after [`Redis::kill`].
    process: Option<Process>,
    /// Its configuration file and extra arguments, for restarts.
    conf: Option<PathBuf>,
    args: Vec<String>,
    /// Its working folder (`--dir`): where a replica writes the RDB it
    /// receives, never the checkout the tests run from.
    dir: WorkDir,
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
            let mut redis = Redis::stopped(free_port(), conf, args);
            if redis.spawn() {
                return redis;
            }
        }
        panic!("redis-server did not start (is it installed? scripts/setup.sh)");
    }

    /// A port on which nothing listens yet: start Redis there later with
    /// [`Redis::start_on`] (a shard first started without its Redis).
    pub fn reserve() -> u16 {
        free_port()
    }

    /// Starts redis-server on `port`, as [`Redis::start`] does.
    ///
    /// Panics: the port is taken, or redis-server never answers.
    pub fn start_on(port: u16) -> Redis {
        let mut redis = Redis::stopped(port, None, &["--protected-mode", "no"]);
        assert!(redis.spawn(), "redis-server could not take port {port}");
        redis
    }

    fn stopped(port: u16, conf: Option<&Path>, args: &[&str]) -> Redis {
        let args = args.iter().map(|a| a.to_string()).collect();
        let dir = WorkDir::new(&format!("redis-{port}"));
        Redis { process: None, conf: conf.map(Path::to_owned), args, dir, port }
    }

    /// Starts the server on `self.port` and waits until it answers; false if
    /// it exited first (the port was taken) or the answer came from another
    /// server.
    fn spawn(&mut self) -> bool {
        let mut cmd = Command::new("redis-server");
        if let Some(conf) = &self.conf {
            cmd.arg(conf);
        }
        cmd.args(["--port", &self.port.to_string(), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"])
            .args(["--loglevel", "warning", "--dir"])
            .arg(self.dir.path())
            .args(&self.args)
            .stdout(Stdio::null())
            .stderr(Stdio::inherit());
        let mut process = Process::spawn("redis-server", &mut cmd);
        let end = Instant::now() + START_WAIT;
        while process.is_running() && Instant::now() < end {
            match ping(self.port) {
                Some(a) if a.starts_with("+PONG") => {
                    let ours = self.server_pid() == Some(process.pid());
                    self.process = ours.then_some(process);
                    return ours;
                }
                Some(a) if a.starts_with("-NOAUTH") => {
                    self.process = Some(process);
                    return true;
                }
                _ => std::thread::sleep(Duration::from_millis(20)),
            }
        }
        false
    }

    /// The pid the server on our port reports (`INFO server`), when it
    /// answers without a password.
    fn server_pid(&self) -> Option<u32> {
        let info = self.cli(&["INFO", "server"]);
        info.lines().find_map(|l| l.strip_prefix("process_id:")).and_then(|p| p.trim().parse().ok())
    }

    /// The URL shards are given.
    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}", self.port)
    }

    /// The process id.
    ///
    /// Panics: the server was killed.
    pub fn pid(&self) -> u32 {
        self.process.as_ref().expect("redis-server is running").pid()
    }

    /// Kills the server at once (SIGKILL) and waits for it.
    pub fn kill(&mut self) {
        if let Some(mut p) = self.process.take() {
            p.kill9();
        }
    }

    /// Kills the server and starts it again, empty, on the same port.
    ///
    /// Panics: it does not come back.
    pub fn restart(&mut self) {
        self.kill();
        assert!(self.spawn(), "redis-server could not take port {} again", self.port);
    }

    /// Runs `redis-cli` against this server; returns its stdout.
    ///
    /// Panics: redis-cli is missing or gets no answer within [`WAIT`].
    pub fn cli(&self, args: &[&str]) -> String {
        let mut cmd = Command::new("redis-cli");
        cmd.args(["-h", "127.0.0.1", "-p", &self.port.to_string()]).args(args);
        let out = process::run("redis-cli (scripts/setup.sh installs it)", &mut cmd, WAIT);
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// `INFO sections...` of this server (see [`info`]).
    ///
    /// Panics: it does not answer.
    pub fn info(&self, sections: &[&str]) -> Info {
        info(self.port, sections).unwrap_or_else(|| panic!("redis-server :{} did not answer INFO", self.port))
    }

    /// Every key of the server.
    pub fn keys(&self) -> Vec<String> {
        self.cli(&["--scan"]).lines().map(str::to_owned).filter(|l| !l.is_empty()).collect()
    }
}

/// A Redis `INFO` answer: its `key:value` lines, and the calls of each
/// command from the `cmdstat_NAME:calls=N,...` lines of `commandstats`. The
/// one reader of `INFO` in the workspace (the benches sample Redis with it).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Info {
    fields: std::collections::HashMap<String, String>,
}

impl Info {
    /// Parses the text of an `INFO` answer (sections, comments and blank
    /// lines skipped).
    pub fn parse(text: &str) -> Info {
        let fields = text
            .lines()
            .filter(|l| !l.starts_with('#'))
            .filter_map(|l| l.trim().split_once(':'))
            .map(|(k, v)| (k.to_owned(), v.to_owned()))
            .collect();
        Info { fields }
    }

    /// The number of field `key` (e.g. `total_commands_processed`,
    /// `used_cpu_sys`); None when absent or not a number.
    pub fn value(&self, key: &str) -> Option<f64> {
        self.fields.get(key)?.trim().parse().ok()
    }

    /// Calls of `command` (lower case, e.g. `publish`) from `commandstats`;
    /// None when it was never called.
    pub fn calls(&self, command: &str) -> Option<f64> {
        let stats = self.fields.get(&format!("cmdstat_{command}"))?;
        stats.split(',').find_map(|kv| kv.strip_prefix("calls="))?.parse().ok()
    }
}

/// `INFO sections...` of the Redis on 127.0.0.1:`port`, over one connection
/// (no password), bounded by a second; None when it does not answer.
pub fn info(port: u16, sections: &[&str]) -> Option<Info> {
    let mut s = TcpStream::connect(("127.0.0.1", port)).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(1))).ok()?;
    s.write_all(format!("INFO {}\r\n", sections.join(" ")).as_bytes()).ok()?;
    let mut raw = Vec::new();
    let mut buf = [0u8; 16 * 1024];
    loop {
        let n = s.read(&mut buf).ok()?;
        if n == 0 {
            return None;
        }
        raw.extend_from_slice(&buf[..n]);
        // A bulk string: `$LEN\r\n`, LEN bytes, `\r\n`.
        let head_end = raw.windows(2).position(|w| w == b"\r\n")?;
        let len: usize = std::str::from_utf8(raw.get(1..head_end)?).ok()?.parse().ok()?;
        if raw.first() == Some(&b'$') && raw.len() >= head_end + 2 + len {
            return Some(Info::parse(&String::from_utf8_lossy(&raw[head_end + 2..head_end + 2 + len])));
        }
    }
}

/// The raw answer of a Redis on `port` to an unauthenticated PING, None when
/// nothing answers within a second.
pub fn ping(port: u16) -> Option<String> {
    ping_within(port, Duration::from_secs(1))
}

/// [`ping`], None when nothing answers within `wait` (a Redis paused by
/// `DEBUG SLEEP` or `CLIENT PAUSE` answers nothing).
pub fn ping_within(port: u16, wait: Duration) -> Option<String> {
    let mut s = TcpStream::connect(("127.0.0.1", port)).ok()?;
    s.set_read_timeout(Some(wait)).ok()?;
    s.write_all(b"PING\r\n").ok()?;
    let mut buf = [0u8; 256];
    let n = s.read(&mut buf).ok()?;
    Some(String::from_utf8_lossy(&buf[..n]).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn info_fields_and_command_calls() {
        let text = "# Stats\r\ntotal_commands_processed:42\r\nused_cpu_sys:1.25\r\n\r\n# Commandstats\r\n\
            cmdstat_publish:calls=7,usec=30,usec_per_call=4.29\r\n";
        let i = Info::parse(text);
        assert_eq!((i.value("total_commands_processed"), i.value("used_cpu_sys")), (Some(42.0), Some(1.25)));
        assert_eq!((i.calls("publish"), i.calls("spublish")), (Some(7.0), None));
        assert_eq!(i.value("# Stats"), None);
    }

    #[test]
    fn a_real_redis_answers_info() {
        let redis = Redis::start();
        let before = redis.info(&["stats"]).value("total_commands_processed").expect("a count");
        redis.cli(&["PUBLISH", "x", "y"]);
        let after = redis.info(&["stats", "commandstats"]);
        assert!(after.value("total_commands_processed").is_some_and(|n| n > before));
        assert_eq!(after.calls("publish"), Some(1.0));
    }
}
