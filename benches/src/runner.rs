//! One scale run's context: where its results go (`raw/`, RESULTS.md, the
//! charts), the binaries it measures (copied once built, so that a rebuild
//! by someone else cannot change them half-way), the commands each section
//! runs (recorded for RESULTS.md as they are run), its temporary folder, and
//! its progress on the terminal (indicatif).

use crate::machine;
use crate::plan::Plan;
use crate::raw::RunLog;
use crate::section::Section;
use indicatif::{ProgressBar, ProgressStyle};
use mino_testkit::WorkDir;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

/// Where a run writes.
#[derive(Clone, Debug)]
pub struct Paths {
    /// The workspace.
    pub root: PathBuf,
    /// RESULTS.md.
    pub markdown: PathBuf,
    /// The charts (`results/`).
    pub out: PathBuf,
    /// The raw results (`results/raw/`).
    pub raw: PathBuf,
}

impl Paths {
    /// `benches/RESULTS.md` and `benches/results/` of `root`, or RESULTS.md,
    /// the charts and `raw/` under `results` (smoke runs that must not
    /// replace the committed results).
    pub fn new(root: &Path, results: Option<&Path>) -> Paths {
        match results {
            Some(dir) => Paths {
                root: root.to_owned(),
                markdown: dir.join("RESULTS.md"),
                out: dir.to_owned(),
                raw: dir.join("raw"),
            },
            None => Paths {
                root: root.to_owned(),
                markdown: root.join("benches/RESULTS.md"),
                out: root.join("benches/results"),
                raw: root.join("benches/results/raw"),
            },
        }
    }

    /// The original's figures.
    pub fn original(&self) -> PathBuf {
        self.root.join("benches/original.json")
    }

    /// `run.tsv`.
    pub fn run_log(&self) -> PathBuf {
        self.raw.join("run.tsv")
    }
}

/// A scale run in progress.
pub struct Run {
    /// What it measures.
    pub plan: Plan,
    /// Where it writes.
    pub paths: Paths,
    /// Its temporary folder (shard logs, sockets, certificates).
    pub tmp: WorkDir,
    /// The binaries measured (copies).
    pub bin: PathBuf,
    /// Whether this run is a partial rerun (`--only`).
    pub rerun: bool,
    /// Use the binaries already built (`--skip-build`).
    pub skip_build: bool,
    commands: PathBuf,
    bar: ProgressBar,
    started: Instant,
}

/// The workspace root: two levels above this crate's manifest.
pub fn workspace_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..").canonicalize().unwrap_or_else(|_| ".".into())
}

/// The cargo target folder of this run: the one holding the running
/// program's `debug/` or `release/` ([`mino_testkit::shard::bin_dir`]), so
/// wherever `CARGO_TARGET_DIR` (or a cargo config) put the `cargo run` that
/// started it. The runner's own builds go there too ([`Run::command`] names
/// it to them), and its release binaries are taken from its `release/`.
pub fn target_root() -> PathBuf {
    let bin = mino_testkit::shard::bin_dir();
    bin.parent().map(Path::to_owned).unwrap_or(bin)
}

impl Run {
    /// A run of `plan` writing to `paths`.
    ///
    /// Errors: the folders cannot be created.
    pub fn new(plan: Plan, paths: Paths, rerun: bool, skip_build: bool) -> anyhow::Result<Run> {
        std::fs::create_dir_all(paths.raw.join("logs"))?;
        let tmp = WorkDir::new("scale");
        let bin = tmp.mkdir("bin");
        let bar = ProgressBar::new_spinner();
        bar.set_style(
            ProgressStyle::with_template("{spinner} [{elapsed:>4}] {msg}").unwrap_or(ProgressStyle::default_spinner()),
        );
        bar.enable_steady_tick(Duration::from_millis(200));
        // The builds' commands, kept apart from the sections' (RESULTS.md
        // lists the sections' only).
        let commands = paths.raw.join("commands-build.txt");
        std::fs::write(&commands, "")?;
        Ok(Run { plan, paths, tmp, bin, rerun, skip_build, commands, bar, started: Instant::now() })
    }

    /// A line above the progress spinner: `[scale   12s] message`.
    pub fn log(&self, message: &str) {
        let line = format!("[scale {:4}s] {message}", self.started.elapsed().as_secs());
        // Without a terminal the spinner is hidden, and prints nothing.
        if self.bar.is_hidden() {
            eprintln!("{line}");
        } else {
            self.bar.println(line);
        }
    }

    /// What the spinner says is going on.
    pub fn status(&self, message: &str) {
        self.bar.set_message(message.to_owned());
    }

    /// Clears the spinner.
    pub fn finish(&self) {
        self.bar.finish_and_clear();
    }

    /// Seconds since the run started.
    pub fn seconds(&self) -> u64 {
        self.started.elapsed().as_secs()
    }

    /// Starts `section`: removes the raw files it wrote before and empties
    /// its commands file.
    ///
    /// Errors: a file cannot be removed or written.
    pub fn begin(&mut self, section: Section) -> anyhow::Result<()> {
        for dir in [self.paths.raw.clone(), self.paths.raw.join("logs")] {
            for entry in std::fs::read_dir(&dir)?.flatten() {
                let name = entry.file_name().to_string_lossy().into_owned();
                let rel = if dir.ends_with("logs") { format!("logs/{name}") } else { name };
                let p = entry.path();
                if p.is_dir() {
                    if section.owns_folder(&rel) {
                        std::fs::remove_dir_all(&p)?;
                    }
                } else if section.owns(&rel) {
                    std::fs::remove_file(&p)?;
                }
            }
        }
        self.commands = self.paths.raw.join(format!("commands-{}.txt", section.label()));
        std::fs::write(&self.commands, "")?;
        Ok(())
    }

    /// A command line as RESULTS.md shows it: the run's copies named by
    /// their source, paths inside the workspace relative to it.
    pub fn shown<S: AsRef<OsStr>>(&self, program: impl AsRef<OsStr>, args: impl IntoIterator<Item = S>) -> String {
        let mut words = vec![program.as_ref().to_string_lossy().into_owned()];
        words.extend(args.into_iter().map(|a| a.as_ref().to_string_lossy().into_owned()));
        let line = words.join(" ").replace(&*self.bin.to_string_lossy(), "target/release");
        line.replace(&format!("{}/", self.paths.root.display()), "")
    }

    /// Records `line` under `label` in the section's commands file.
    pub fn record(&self, label: &str, line: &str) {
        let _ = RunLog::append(&self.commands, label, line);
    }

    /// A binary of the run (a copy in its bin folder).
    pub fn binary(&self, name: &str) -> PathBuf {
        self.bin.join(name)
    }

    /// Runs `program args` to its end in the workspace (without the
    /// variables `cargo run` gave this process, see [`set_by_cargo_run`], and
    /// with `CARGO_TARGET_DIR` naming [`target_root`]: a cargo it runs builds
    /// where the runner reads), recorded under `label`, its output to `log`
    /// (or the terminal). Returns whether it succeeded.
    ///
    /// Errors: it cannot be started.
    pub async fn command(
        &self,
        label: &str,
        program: impl AsRef<OsStr>,
        args: &[String],
        log: Option<&Path>,
    ) -> anyhow::Result<bool> {
        self.record(label, &self.shown(&program, args));
        let mut cmd = tokio::process::Command::new(program.as_ref());
        cmd.args(args).current_dir(&self.paths.root).stdin(Stdio::null()).kill_on_drop(true);
        cmd.env("CARGO_TARGET_DIR", target_root());
        for (key, _) in std::env::vars_os() {
            if key.to_str().is_some_and(set_by_cargo_run) {
                cmd.env_remove(key);
            }
        }
        if let Some(log) = log {
            let file = std::fs::File::create(log)?;
            cmd.stdout(file.try_clone()?).stderr(file);
        }
        let status = cmd.status().await.map_err(|e| anyhow::anyhow!("cannot start {label}: {e}"))?;
        Ok(status.success())
    }

    /// Builds the release binaries ([`RELEASE_BUILD`], unless `skip`), the server without
    /// jemalloc when the idle section runs, and copies them into the run's
    /// bin folder; records each in `run.tsv`.
    ///
    /// Errors: a build failed or a binary is missing.
    pub async fn build(&self) -> anyhow::Result<()> {
        let cargo = |args: &[&str]| args.iter().map(|a| a.to_string()).collect::<Vec<_>>();
        if !self.skip_build {
            self.status("building release binaries");
            let ok = self.command("build", "cargo", &cargo(&RELEASE_BUILD), None).await?;
            anyhow::ensure!(ok, "cargo build --release failed");
            if self.plan.runs(Section::Idle) {
                // The idle section's allocator comparison: the same server
                // with glibc's malloc, in a target folder of its own.
                self.status("building mino-server without jemalloc (the target folder's heap/)");
                let heap = heap_target().to_string_lossy().into_owned();
                let args =
                    cargo(&["build", "--release", "-p", "mino-server", "--no-default-features", "--target-dir", &heap]);
                anyhow::ensure!(self.command("build", "cargo", &args, None).await?, "the glibc build failed");
            }
        }
        let release = target_root().join("release");
        let mut copies =
            vec![(release.join("mino-server"), "mino-server"), (release.join("mino-loadgen"), "mino-loadgen")];
        if self.plan.runs(Section::Deltas) {
            copies.push((release.join("delta_trace"), "delta_trace"));
            copies.push((release.join("delta_cost"), "delta_cost"));
        }
        let glibc = heap_target().join("release/mino-server");
        if glibc.exists() && self.plan.runs(Section::Idle) {
            copies.push((glibc, "mino-server-glibc"));
        }
        let prefix = if self.rerun { "rerun " } else { "" };
        for (from, name) in copies {
            let to = self.binary(name);
            std::fs::copy(&from, &to)
                .map_err(|e| anyhow::anyhow!("{}: {e} (build it, or drop --skip-build)", from.display()))?;
            let built = machine::binary(&from);
            let hash = machine::binary(&to);
            let hash = hash.split(' ').next().unwrap_or("unknown");
            let when = built.split_once(" built ").map_or("unknown", |(_, w)| w);
            RunLog::append(&self.paths.run_log(), &format!("{prefix}binary {name}"), &format!("{hash} built {when}"))?;
        }
        Ok(())
    }
}

/// The target folder of the server built without jemalloc (glibc's
/// malloc, for the idle section and `heap-idle`): `heap/` in
/// [`target_root`], apart so that the two builds do not undo each other.
pub fn heap_target() -> PathBuf {
    target_root().join("heap")
}

/// Whether `cargo run` sets the environment variable `key` for the program
/// it runs (`CARGO_PKG_NAME`, `CARGO_MANIFEST_DIR`, ...). A `cargo build`
/// started with them rebuilds every crate whose build script watches one
/// (ring's watches `CARGO_PKG_NAME`: cargo compares the value in its own
/// environment), and the next `cargo run` rebuilds them back: minutes on two
/// cores each run. The runner's commands go without them.
pub fn set_by_cargo_run(key: &str) -> bool {
    ["CARGO_PKG_", "CARGO_MANIFEST_", "CARGO_BIN_", "CARGO_CRATE_"].iter().any(|p| key.starts_with(p))
        || key == "CARGO_PRIMARY_PACKAGE"
}

/// The runner's release build: the server and the loadgen, with the runner's
/// own package so that cargo resolves the same features as for the `cargo
/// run -p mino-benches` that started it (the test kit turns on features of
/// tokio-rustls; without it every run rebuilt tokio-rustls, redis, the server
/// and the loadgen, and the next `cargo run` rebuilt them back).
pub const RELEASE_BUILD: [&str; 8] =
    ["build", "--release", "-p", "mino-server", "-p", "mino-loadgen", "-p", "mino-benches"];
