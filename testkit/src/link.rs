//! A network link with loss, delay and jitter on this machine, for TCP and
//! UDP alike, on loopback addresses only: what `tc netem` would give, on a
//! kernel that has no netem (this machine's has none, nor nftables).
//!
//! How: a process isolates itself in a network namespace of its own
//! ([`isolate`], in a child's `pre_exec` or before any thread starts), and
//! [`Link::start`] then adds a TUN device, `mino0`, holding [`NEAR`]
//! (127.0.1.1), with [`FAR`] (127.0.1.2) routed through it. A thread reads
//! every packet sent to `FAR`, swaps its source and destination addresses
//! and writes it back after the link's delay, unless the link drops it:
//! a client dialling `FAR:port` reaches a server listening on `NEAR:port`
//! (or on every address), and the server's answers come back the same way,
//! each packet through the link once. Swapping the two addresses leaves the
//! IPv4 header's checksum and the TCP and UDP pseudo-header sums as they
//! were, so packets are not otherwise touched. This is the "tunnel
//! reflection" of user-space network emulators (slirp-style).
//!
//! Everything else in the namespace keeps working on 127.0.0.1 (lo), and
//! nothing in it can reach the machine's own network or further: the
//! namespace has no other device. 127.0.0.0/8 is no longer local there but
//! for 127.0.0.1 and [`NEAR`] (`route_localnet` lets loopback addresses use
//! the TUN device).
//!
//! The model: each packet, either way, is dropped with probability `loss`
//! (independently, Bernoulli); a packet kept is released `delay` plus a
//! uniform jitter in `[-jitter, +jitter]` after it was read, never before
//! the one ahead of it (a FIFO, as netem with a rate: jitter bunches
//! packets, it does not reorder them). Timers have 1 ms resolution.
//!
//! Needs root (or `CAP_SYS_ADMIN` and `CAP_NET_ADMIN`), `/dev/net/tun` and
//! `ip` (iproute2): [`isolate`] and [`Link::start`] fail with what is
//! missing.

use nix::libc;
use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use std::collections::VecDeque;
use std::fs::{File, OpenOptions};
use std::io::{self, Read, Write};
use std::net::Ipv4Addr;
use std::os::fd::AsFd;
use std::os::unix::fs::OpenOptionsExt;
use std::os::unix::io::AsRawFd;
use std::process::Command;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// The address servers listen on, and clients send from, in a namespace
/// with a [`Link`].
pub const NEAR: Ipv4Addr = Ipv4Addr::new(127, 0, 1, 1);

/// The address to dial: `FAR:port` is `NEAR:port` through the link.
pub const FAR: Ipv4Addr = Ipv4Addr::new(127, 0, 1, 2);

/// The TUN device's name.
const DEVICE: &str = "mino0";

/// Longest a wait for packets lasts, so a stop is seen within it.
const IDLE_POLL: Duration = Duration::from_millis(50);

/// What the link does to each packet.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Impairment {
    /// Probability that a packet is dropped, 0 to 1, each way.
    pub loss: f64,
    /// Delay one way (the round trip is twice this).
    pub delay: Duration,
    /// The most a packet's delay differs from `delay`, either side
    /// (uniform; at most `delay`).
    pub jitter: Duration,
    /// Seed of the loss and jitter draws (the same seed, the same draws).
    pub seed: u64,
}

impl Impairment {
    /// A link that loses `loss` of the packets each way, with a round
    /// trip of `rtt` and no jitter.
    pub fn lossy(loss: f64, rtt: Duration) -> Impairment {
        Impairment { loss, delay: rtt / 2, jitter: Duration::ZERO, seed: 1 }
    }
}

/// A link's settings as command-line flags (`mino-link`, the `lossy`
/// bench): `--loss-pct`, `--rtt-ms`, `--jitter-ms`, `--seed`.
#[derive(clap::Args, Clone, Debug, PartialEq)]
pub struct LinkArgs {
    /// Packets lost each way, percent (0 to 100).
    #[arg(long, default_value_t = 2.0, value_parser = parse_pct)]
    pub loss_pct: f64,
    /// Round trip, ms (half each way).
    #[arg(long, default_value_t = 40)]
    pub rtt_ms: u64,
    /// Jitter each way, ms (uniform; at most half the round trip).
    #[arg(long, default_value_t = 0)]
    pub jitter_ms: u64,
    /// Seed of the loss and jitter draws.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
}

impl LinkArgs {
    /// What the link does to each packet.
    pub fn impairment(&self) -> Impairment {
        Impairment {
            loss: self.loss_pct / 100.0,
            delay: Duration::from_millis(self.rtt_ms) / 2,
            jitter: Duration::from_millis(self.jitter_ms),
            seed: self.seed,
        }
    }

    /// "loss 2 % each way, rtt 40 ms, jitter 0 ms".
    pub fn describe(&self) -> String {
        format!("loss {} % each way, rtt {} ms, jitter {} ms", self.loss_pct, self.rtt_ms, self.jitter_ms)
    }
}

/// A percentage, 0 to 100.
fn parse_pct(s: &str) -> Result<f64, String> {
    let v: f64 = s.parse().map_err(|_| format!("{s:?} is not a number"))?;
    if (0.0..=100.0).contains(&v) {
        Ok(v)
    } else {
        Err(format!("{v} is not 0 to 100"))
    }
}

/// Packets the link has seen (both ways together).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LinkCounts {
    /// Packets passed on.
    pub passed: u64,
    /// Packets dropped by the loss draw.
    pub dropped: u64,
}

#[derive(Debug, Default)]
struct Counts {
    passed: AtomicU64,
    dropped: AtomicU64,
}

/// Puts the calling thread (and what it starts from now on) in a network
/// namespace of its own, with `lo` up. Call it first thing in `main`,
/// before any thread starts; for a child, see [`isolated`].
///
/// # Errors
/// The `unshare(2)` error (EPERM without `CAP_SYS_ADMIN`), or `ip`'s.
pub fn isolate() -> io::Result<()> {
    nix::sched::unshare(nix::sched::CloneFlags::CLONE_NEWNET).map_err(io::Error::from)?;
    ISOLATED.store(true, Ordering::Relaxed);
    ip(&["link", "set", "lo", "up"])
}

/// Set by [`isolate`] in this process.
static ISOLATED: AtomicBool = AtomicBool::new(false);

/// Set by [`isolated`] in the child's environment.
const ISOLATED_ENV: &str = "MINO_LINK_ISOLATED";

/// Makes `command` start in a network namespace of its own; it and its
/// children share that namespace, whose `lo` is down until [`Link::start`]
/// (or `ip link set lo up`) brings it up.
pub fn isolated(command: &mut Command) -> &mut Command {
    use std::os::unix::process::CommandExt;
    command.env(ISOLATED_ENV, "1");
    // SAFETY: runs in the forked child before exec, where only this thread
    // exists; unshare(2) is a plain system call, allowed there.
    #[allow(unsafe_code)]
    unsafe {
        command.pre_exec(|| {
            nix::sched::unshare(nix::sched::CloneFlags::CLONE_NEWNET).map_err(io::Error::from)?;
            Ok(())
        })
    }
}

/// Set in the child that runs a test's body (see [`test_in_namespace`]).
const TEST_CHILD: &str = "MINO_LINK_TEST_CHILD";

/// Runs the test `name` of the running test binary again in a child
/// process in a private network namespace, where `body` runs; the test in
/// the parent fails with the child's output when the child fails. (A test
/// process runs many threads; only a fresh child can be put wholly in a
/// namespace.)
///
/// Panics: the child could not start, failed, or did not run the test.
pub fn test_in_namespace(name: &str, body: impl FnOnce()) {
    if std::env::var_os(TEST_CHILD).is_some() {
        return body();
    }
    let exe = std::env::current_exe().expect("the test binary");
    let mut child = Command::new(exe);
    child.args([name, "--exact", "--nocapture", "--test-threads=1"]).env(TEST_CHILD, "1");
    let out = isolated(&mut child).output().expect("the test binary runs again");
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "in a private network namespace:\n{stdout}\n{stderr}");
    assert!(stdout.contains("1 passed"), "the child ran the test:\n{stdout}");
}

/// Whether this process's network namespace is a private one: this
/// process made it ([`isolate`]) or was started in one ([`isolated`]), and
/// it has no device but `lo` and the link's own (a fresh namespace's; the
/// machine's has its network devices). Reading init's namespace
/// (`/proc/1/ns/net`) to compare is denied in sandboxes.
fn in_private_namespace() -> io::Result<bool> {
    if !ISOLATED.load(Ordering::Relaxed) && std::env::var_os(ISOLATED_ENV).is_none() {
        return Ok(false);
    }
    let devices = std::fs::read_to_string("/proc/self/net/dev")?;
    Ok(devices.lines().skip(2).filter_map(|l| l.split(':').next()).all(|d| matches!(d.trim(), "lo" | DEVICE)))
}

/// Runs `ip args`, failing with its stderr.
fn ip(args: &[&str]) -> io::Result<()> {
    let out =
        Command::new("ip").args(args).output().map_err(|e| io::Error::new(e.kind(), format!("ip (iproute2): {e}")))?;
    if out.status.success() {
        return Ok(());
    }
    Err(io::Error::other(format!("ip {}: {}", args.join(" "), String::from_utf8_lossy(&out.stderr).trim())))
}

/// Writes a sysctl of this namespace's IPv4 configuration.
fn sysctl(path: &str, value: &str) -> io::Result<()> {
    let path = format!("/proc/sys/net/ipv4/{path}");
    std::fs::write(&path, value).map_err(|e| io::Error::new(e.kind(), format!("{path}: {e}")))
}

/// A running link; stops (its thread joined, the device gone with its
/// descriptor) when dropped.
#[derive(Debug)]
pub struct Link {
    stop: Arc<AtomicBool>,
    counts: Arc<Counts>,
    thread: Option<JoinHandle<()>>,
}

impl Link {
    /// Starts the link in this process's network namespace, which must be
    /// a private one ([`isolate`]): it changes the namespace's routes.
    ///
    /// # Errors
    /// Not in a private namespace, no `/dev/net/tun` or no right to it,
    /// or an `ip` command that failed; each says which.
    pub fn start(impairment: Impairment) -> io::Result<Link> {
        if !in_private_namespace()? {
            return Err(io::Error::other(
                "Link::start changes routes: run it in a private network namespace (link::isolate)",
            ));
        }
        if !(0.0..=1.0).contains(&impairment.loss) {
            return Err(io::Error::other(format!("loss {} is not 0 to 1", impairment.loss)));
        }
        let tun = open_tun()?;
        ip(&["link", "set", "lo", "up"])?;
        // 127.0.0.0/8 stops being local, so FAR can be routed; 127.0.0.1
        // stays on lo. (One link a namespace: a second fails at TUNSETIFF.)
        ip(&["route", "replace", "local", "127.0.0.1", "dev", "lo", "table", "local"])?;
        let _ = ip(&["route", "del", "127.0.0.0/8", "dev", "lo", "table", "local"]);
        for conf in ["all", DEVICE] {
            sysctl(&format!("conf/{conf}/route_localnet"), "1")?;
            sysctl(&format!("conf/{conf}/rp_filter"), "0")?;
            sysctl(&format!("conf/{conf}/accept_local"), "1")?;
        }
        ip(&["addr", "add", &format!("{NEAR}/32"), "dev", DEVICE])?;
        ip(&["link", "set", DEVICE, "up"])?;
        ip(&["route", "add", &format!("{FAR}/32"), "dev", DEVICE])?;
        let stop = Arc::new(AtomicBool::new(false));
        let counts = Arc::new(Counts::default());
        let thread = {
            let (stop, counts) = (stop.clone(), counts.clone());
            std::thread::Builder::new()
                .name("mino-link".into())
                .spawn(move || Emulator::new(tun, impairment, counts).run(&stop))?
        };
        Ok(Link { stop, counts, thread: Some(thread) })
    }

    /// Packets seen so far.
    pub fn counts(&self) -> LinkCounts {
        LinkCounts {
            passed: self.counts.passed.load(Ordering::Relaxed),
            dropped: self.counts.dropped.load(Ordering::Relaxed),
        }
    }
}

impl Drop for Link {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// `TUNSETIFF`: _IOW('T', 202, int).
const TUNSETIFF: libc::c_ulong = 0x4004_54ca;

nix::ioctl_write_ptr_bad!(
    /// Names a descriptor of `/dev/net/tun` and sets its flags (`TUNSETIFF`).
    tun_set_iff,
    TUNSETIFF,
    libc::ifreq
);

/// Opens `/dev/net/tun` as the IPv4 TUN device [`DEVICE`] (no packet
/// information header), non-blocking.
fn open_tun() -> io::Result<File> {
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .custom_flags(libc::O_NONBLOCK)
        .open("/dev/net/tun")
        .map_err(|e| io::Error::new(e.kind(), format!("/dev/net/tun: {e}")))?;
    // SAFETY: `ifreq` is plain data, zero is a valid value of every field.
    #[allow(unsafe_code)]
    let mut req: libc::ifreq = unsafe { std::mem::zeroed() };
    for (dst, src) in req.ifr_name.iter_mut().zip(DEVICE.bytes()) {
        *dst = src as libc::c_char;
    }
    req.ifr_ifru.ifru_flags = (libc::IFF_TUN | libc::IFF_NO_PI) as libc::c_short;
    // SAFETY: TUNSETIFF reads one `ifreq`, which lives across the call.
    #[allow(unsafe_code)]
    unsafe { tun_set_iff(file.as_raw_fd(), &req) }.map_err(|e| io::Error::other(format!("TUNSETIFF {DEVICE}: {e}")))?;
    Ok(file)
}

/// The link's thread: reads packets, draws their fate, releases them.
struct Emulator {
    tun: File,
    impairment: Impairment,
    rng: SmallRng,
    /// Packets kept, with when each goes back in; release times never
    /// decrease.
    queue: VecDeque<(Instant, Vec<u8>)>,
    counts: Arc<Counts>,
}

impl Emulator {
    fn new(tun: File, impairment: Impairment, counts: Arc<Counts>) -> Emulator {
        let rng = SmallRng::seed_from_u64(impairment.seed);
        Emulator { tun, impairment, rng, queue: VecDeque::new(), counts }
    }

    fn run(mut self, stop: &AtomicBool) {
        let mut buf = vec![0u8; 65_536];
        while !stop.load(Ordering::Relaxed) {
            self.release();
            let wait = match self.queue.front() {
                Some((at, _)) => at.saturating_duration_since(Instant::now()).min(IDLE_POLL),
                None => IDLE_POLL,
            };
            // Round up: waking early would spin until the release.
            let ms = u16::try_from(wait.as_micros().div_ceil(1000)).unwrap_or(u16::MAX);
            let mut fds = [PollFd::new(self.tun.as_fd(), PollFlags::POLLIN)];
            match poll(&mut fds, PollTimeout::from(ms)) {
                Ok(0) => continue,
                Ok(_) => {}
                Err(nix::errno::Errno::EINTR) => continue,
                Err(_) => return,
            }
            loop {
                match self.tun.read(&mut buf) {
                    Ok(n) => self.take(&buf[..n]),
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    Err(_) => return,
                }
            }
        }
    }

    /// One packet read: reflected and queued, or dropped.
    fn take(&mut self, packet: &[u8]) {
        // IPv4 only (the namespace routes nothing else here), whole header.
        if packet.len() < 20 || packet[0] >> 4 != 4 {
            return;
        }
        if self.rng.random_bool(self.impairment.loss) {
            self.counts.dropped.fetch_add(1, Ordering::Relaxed);
            return;
        }
        let mut p = packet.to_vec();
        // Source and destination swapped: sums unchanged (see the module docs).
        let (src, dst) = p[12..20].split_at_mut(4);
        src.swap_with_slice(dst);
        let now = Instant::now();
        let jitter = self.impairment.jitter.min(self.impairment.delay);
        let offset = if jitter.is_zero() { 0.0 } else { self.rng.random_range(-1.0..=1.0) * jitter.as_secs_f64() };
        let at = now + Duration::from_secs_f64((self.impairment.delay.as_secs_f64() + offset).max(0.0));
        let at = self.queue.back().map_or(at, |(last, _)| at.max(*last));
        self.queue.push_back((at, p));
    }

    /// Writes back every packet whose time has come.
    fn release(&mut self) {
        let now = Instant::now();
        while self.queue.front().is_some_and(|(at, _)| *at <= now) {
            if let Some((_, p)) = self.queue.pop_front() {
                // A full device queue drops the packet, as a full link would.
                if self.tun.write(&p).is_ok() {
                    self.counts.passed.fetch_add(1, Ordering::Relaxed);
                }
            }
        }
    }
}
