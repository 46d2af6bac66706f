//! The shipped nginx configuration (`deploy/nginx/mino.conf.template`),
//! rendered by the shipped `deploy/nginx/render.sh` with a test's ports and
//! paths, and run as a real nginx: a non-daemon child with its own prefix, pid
//! file and logs in the test's folder, on loopback ports, never the system's
//! service. (The browser tests' `client-web/e2e/harness/nginx.ts` renders it
//! the same way.)

use crate::cert::Cert;
use crate::port::free_port;
use crate::process::{self, children_of, Process};
use crate::workdir::WorkDir;
use crate::{deploy_dir, START_WAIT};
use nix::sys::signal::Signal;
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// The nginx binary: `$MINO_NGINX_BIN`, else `nginx` on the PATH, else
/// Debian's `/usr/sbin/nginx`.
pub fn nginx_bin() -> PathBuf {
    if let Some(p) = std::env::var_os("MINO_NGINX_BIN") {
        return PathBuf::from(p);
    }
    let on_path = std::env::var_os("PATH")
        .and_then(|paths| std::env::split_paths(&paths).map(|d| d.join("nginx")).find(|p| p.is_file()));
    on_path.unwrap_or_else(|| PathBuf::from("/usr/sbin/nginx"))
}

/// One shard of the upstream: a TCP address or a Unix socket on this machine.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Upstream {
    /// `HOST:PORT`.
    Tcp(SocketAddr),
    /// `unix:PATH`.
    Unix(PathBuf),
}

impl std::fmt::Display for Upstream {
    /// As `MINO_SHARDS` takes it.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Upstream::Tcp(addr) => write!(f, "{addr}"),
            Upstream::Unix(path) => write!(f, "unix:{}", path.display()),
        }
    }
}

impl From<SocketAddr> for Upstream {
    fn from(addr: SocketAddr) -> Upstream {
        Upstream::Tcp(addr)
    }
}

impl From<&crate::shard::Shard> for Upstream {
    /// Where players reach the shard: its Unix socket, or its address.
    fn from(shard: &crate::shard::Shard) -> Upstream {
        match &shard.socket {
            Some(path) => Upstream::Unix(path.clone()),
            None => Upstream::Tcp(shard.addr),
        }
    }
}

/// What a test sets in the rendered configuration (everything else keeps
/// render.sh's defaults).
#[derive(Clone, Debug)]
pub struct NginxSettings {
    /// The shards: the upstream.
    pub shards: Vec<Upstream>,
    /// Served at `/` (the browser client's files).
    pub static_root: PathBuf,
    /// Certificate and key.
    pub cert: Cert,
    /// `MINO_PROXY_TIMEOUT`: proxy_read_timeout, proxy_send_timeout and
    /// send_timeout of `/ws`, in nginx syntax ("20s", "2s").
    pub proxy_timeout: String,
    /// `MINO_NGINX_SHUTDOWN_TIMEOUT`: worker_shutdown_timeout ("60s").
    pub shutdown_timeout: String,
    /// `MINO_NGINX_WORKERS`: worker processes ("2", "auto").
    pub workers: String,
    /// `MINO_NGINX_CONNECTIONS`: worker_connections per worker.
    pub connections: u32,
    /// `MINO_NGINX_NOFILE`: worker_rlimit_nofile.
    pub nofile: u32,
}

impl NginxSettings {
    /// Settings with render.sh's timeouts, two workers and small limits.
    pub fn new<U: Into<Upstream>>(
        shards: impl IntoIterator<Item = U>,
        static_root: PathBuf,
        cert: Cert,
    ) -> NginxSettings {
        NginxSettings {
            shards: shards.into_iter().map(Into::into).collect(),
            static_root,
            cert,
            proxy_timeout: "20s".into(),
            shutdown_timeout: "60s".into(),
            workers: "2".into(),
            connections: 1024,
            nofile: 2048,
        }
    }
}

/// The name of the user running the tests (nginx's `user`: its workers must
/// read the test's files).
fn current_user() -> String {
    let out = process::run("id", Command::new("id").arg("-un"), START_WAIT);
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

/// Renders the template with `settings`, listening on 127.0.0.1 at
/// `https_port` (TLS) and `http_port` (redirect), logs, pid and temp files
/// under `dir`; returns the configuration file's path (`dir/nginx.conf`).
///
/// Panics: render.sh fails.
pub fn render(settings: &NginxSettings, dir: &WorkDir, https_port: u16, http_port: u16) -> PathBuf {
    let shards: Vec<String> = settings.shards.iter().map(Upstream::to_string).collect();
    let path = |p: PathBuf| p.to_string_lossy().into_owned();
    let vars: Vec<(&str, String)> = vec![
        ("MINO_SHARDS", shards.join(" ")),
        ("MINO_SERVER_NAME", "localhost".into()),
        ("MINO_HTTPS_LISTEN", format!("127.0.0.1:{https_port}")),
        ("MINO_HTTP_LISTEN", format!("127.0.0.1:{http_port}")),
        ("MINO_TLS_CERT", path(settings.cert.cert.clone())),
        ("MINO_TLS_KEY", path(settings.cert.key.clone())),
        ("MINO_STATIC_ROOT", path(settings.static_root.clone())),
        ("MINO_PROXY_TIMEOUT", settings.proxy_timeout.clone()),
        ("MINO_NGINX_USER", current_user()),
        ("MINO_NGINX_WORKERS", settings.workers.clone()),
        ("MINO_NGINX_CONNECTIONS", settings.connections.to_string()),
        ("MINO_NGINX_NOFILE", settings.nofile.to_string()),
        ("MINO_NGINX_SHUTDOWN_TIMEOUT", settings.shutdown_timeout.clone()),
        ("MINO_NGINX_PID", path(dir.join("nginx.pid"))),
        ("MINO_NGINX_ERROR_LOG", path(dir.mkdir("logs").join("error.log"))),
        ("MINO_NGINX_ACCESS_LOG", path(dir.join("logs/access.log"))),
        ("MINO_NGINX_TEMP", path(dir.mkdir("temp"))),
    ];
    let out = render_with(&vars);
    assert!(out.status.success(), "render.sh failed: {}", String::from_utf8_lossy(&out.stderr));
    dir.write("nginx.conf", &out.stdout)
}

/// Runs `deploy/nginx/render.sh` with exactly `vars` set (and PATH), so that
/// nothing of the caller's environment leaks in; returns its output (the
/// configuration on stdout when it succeeds).
pub fn render_with(vars: &[(&str, String)]) -> Output {
    let mut cmd = Command::new("bash");
    cmd.arg(deploy_dir().join("nginx/render.sh")).env_clear();
    if let Some(p) = std::env::var_os("PATH") {
        cmd.env("PATH", p);
    }
    cmd.envs(vars.iter().map(|(k, v)| (*k, v.as_str())));
    process::run("render.sh", &mut cmd, START_WAIT)
}

/// `nginx -t` on `conf` with prefix `prefix`: the configuration check.
pub fn check(conf: &Path, prefix: &Path) -> Output {
    let mut cmd = Command::new(nginx_bin());
    cmd.arg("-t").arg("-p").arg(prefix).arg("-c").arg(conf);
    process::run("nginx (scripts/setup.sh installs it)", &mut cmd, START_WAIT)
}

/// A running nginx (master and workers).
#[derive(Debug)]
pub struct Nginx {
    process: Process,
    /// The rendered configuration.
    pub conf: PathBuf,
    /// The folder with its logs and temp files.
    pub prefix: PathBuf,
    /// TLS port on 127.0.0.1.
    pub https_port: u16,
    /// Plain HTTP (redirect) port on 127.0.0.1.
    pub http_port: u16,
}

impl Nginx {
    /// Renders the configuration into `dir` and starts nginx in the
    /// foreground on free ports (others if a parallel test took them), then
    /// waits until both ports accept connections and nginx wrote its pid
    /// file, which it does once every listener is bound (a port another
    /// process holds, or listens on, makes nginx retry it for a few seconds
    /// and exit, its other port accepting meanwhile).
    ///
    /// Panics: nginx is missing, refuses the configuration, or never listens.
    pub fn start(settings: &NginxSettings, dir: &WorkDir) -> Nginx {
        for _ in 0..5 {
            let (https_port, http_port) = (free_port(), free_port());
            let conf = render(settings, dir, https_port, http_port);
            let pid_file = dir.join("nginx.pid");
            let _ = std::fs::remove_file(&pid_file);
            let mut process = Process::spawn(
                "nginx",
                Command::new(nginx_bin())
                    .arg("-p")
                    .arg(dir.path())
                    .arg("-c")
                    .arg(&conf)
                    .args(["-g", "daemon off;"])
                    .stdout(Stdio::null())
                    .stderr(Stdio::inherit()),
            );
            let end = Instant::now() + START_WAIT;
            while process.is_running() && Instant::now() < end {
                let bound = std::fs::metadata(&pid_file).is_ok_and(|m| m.len() > 0);
                if bound && listening(https_port) && listening(http_port) {
                    return Nginx { process, conf, prefix: dir.path().to_owned(), https_port, http_port };
                }
                std::thread::sleep(Duration::from_millis(20));
            }
            process.kill9();
        }
        let log = std::fs::read_to_string(dir.join("logs/error.log")).unwrap_or_default();
        panic!("nginx did not start; error log:\n{log}");
    }

    /// The master's pid.
    pub fn pid(&self) -> u32 {
        self.process.pid()
    }

    /// The worker processes now (children of the master).
    pub fn workers(&self) -> Vec<u32> {
        children_of(self.pid())
    }

    /// `nginx -s reload`: SIGHUP to the master, which starts new workers with
    /// the (re-read) configuration and lets the old ones finish.
    pub fn reload(&self) {
        assert!(self.process.signal(Signal::SIGHUP), "nginx is not running");
    }

    /// The TLS address.
    pub fn https_addr(&self) -> SocketAddr {
        SocketAddr::from(([127, 0, 0, 1], self.https_port))
    }

    /// The plain HTTP address.
    pub fn http_addr(&self) -> SocketAddr {
        SocketAddr::from(([127, 0, 0, 1], self.http_port))
    }

    /// The game's websocket URL through nginx.
    pub fn wss_url(&self) -> String {
        format!("wss://127.0.0.1:{}/ws", self.https_port)
    }

    /// The error log so far.
    pub fn error_log(&self) -> String {
        std::fs::read_to_string(self.prefix.join("logs/error.log")).unwrap_or_default()
    }
}

impl Drop for Nginx {
    /// Fast shutdown (SIGTERM: the master stops its workers), then SIGKILL
    /// for whatever is left.
    fn drop(&mut self) {
        let workers = self.workers();
        if self.process.stop(Duration::from_secs(3)).is_none() {
            for w in workers {
                crate::process::send(w, Signal::SIGKILL);
            }
        }
    }
}

fn listening(port: u16) -> bool {
    TcpStream::connect_timeout(&SocketAddr::from(([127, 0, 0, 1], port)), Duration::from_millis(200)).is_ok()
}
