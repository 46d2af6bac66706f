//! RESULTS.md and its comparison charts, written from the raw results of a
//! run alone (nothing of the machine writing it is read): our figures
//! beside the original's published ones (`benches/original.json`), each
//! with its verdict, a ratio table first, observations found in the data,
//! and the exact commands. One file a section of RESULTS.md; [`load`] reads
//! the raw files strictly, [`fmt`] writes numbers, [`verdict`] judges,
//! [`chart`] draws.

pub mod chart;
pub mod fmt;
pub mod load;
pub mod verdict;

mod agents;
mod aoi;
mod arrivals;
mod client;
mod control;
mod cpu;
mod criterion;
mod deltas;
mod failover;
mod gap;
mod idle;
mod lossy;
mod nginx;
mod peer;
mod redis;
mod ticks;
mod webtransport;

use fmt::table;
use load::Raw;
use std::path::{Path, PathBuf};

/// Where a report is written.
#[derive(Clone, Debug)]
pub struct Output {
    /// RESULTS.md.
    pub markdown: PathBuf,
    /// The folder of the comparison charts (`results/`).
    pub svg_dir: PathBuf,
}

/// One row of the ratio table: figure, original, ours, ours ÷ original,
/// verdict.
pub type SummaryRow = [String; 5];

/// The report being written: the raw results, and the ratio table's rows
/// the sections add as they go.
pub struct Report {
    raw: Raw,
    /// Cores of the machine measured (from `run.tsv`).
    cores: f64,
    summary: Vec<SummaryRow>,
}

/// Why a report could not be written.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    /// A raw file is unreadable or not what its name says.
    #[error(transparent)]
    Raw(#[from] load::LoadError),
    /// `run.tsv` does not say what the report needs.
    #[error("run.tsv in {dir}: {what}")]
    RunLog {
        /// The raw folder.
        dir: PathBuf,
        /// What is missing.
        what: String,
    },
    /// A raw file lacks what a section needs.
    #[error("{0}")]
    Incomplete(String),
    /// Writing RESULTS.md or a chart failed.
    #[error("writing {path}: {detail}")]
    Write {
        /// The file.
        path: PathBuf,
        /// Why.
        detail: String,
    },
}

/// Writes RESULTS.md and the comparison charts from the raw results in
/// `raw_dir`, the original's figures in `original`.
///
/// Errors: [`ReportError`]; nothing is written then.
pub fn write(raw_dir: &Path, original: &Path, out: &Output) -> Result<(), ReportError> {
    let raw = Raw::load(raw_dir, original)?;
    let cores = machine_cores(&raw)?;
    let mut report = Report { raw, cores, summary: Vec::new() };
    let doc = report.document()?;
    report.charts(&out.svg_dir)?;
    std::fs::write(&out.markdown, doc)
        .map_err(|e| ReportError::Write { path: out.markdown.clone(), detail: e.to_string() })
}

/// The cores of the machine `run.tsv` names ("2 cores (`nproc`), ...").
fn machine_cores(raw: &Raw) -> Result<f64, ReportError> {
    let machine = raw.run.get("machine").ok_or_else(|| ReportError::RunLog {
        dir: raw.dir.clone(),
        what: "no machine line (the scale runner writes one at the start of a run)".into(),
    })?;
    machine.split(' ').next().and_then(|n| n.parse().ok()).ok_or_else(|| ReportError::RunLog {
        dir: raw.dir.clone(),
        what: format!("machine line {machine:?} does not start with its cores"),
    })
}

impl Report {
    /// The whole of RESULTS.md.
    fn document(&mut self) -> Result<String, ReportError> {
        let mut body = Vec::new();
        body.extend(self.gap_section());
        body.extend(self.cpu_section());
        body.extend(self.ticks_section());
        body.extend(self.idle_section());
        body.extend(self.arrivals_section());
        body.extend(self.failover_section());
        body.extend(self.control_section());
        body.extend(self.criterion_section());
        body.extend(self.aoi_section());
        body.extend(self.client_section());
        body.extend(self.redis_section());
        body.extend(self.nginx_section()?);
        body.extend(self.agents_section());
        body.extend(self.peer_section());
        body.extend(self.deltas_section());
        body.extend(self.webtransport_section());
        let mut doc = self.header()?;
        doc.extend(self.ratios());
        doc.extend(self.observations());
        doc.extend(body);
        doc.extend(self.commands());
        Ok(format!("{}\n", doc.join("\n").trim_end()))
    }

    /// A row of the ratio table.
    fn summarize(&mut self, figure: String, original: String, ours: String, ratio: String, verdict: String) {
        self.summary.push([figure, original, ours, ratio, verdict]);
    }

    fn header(&self) -> Result<Vec<String>, ReportError> {
        let run = &self.raw.run;
        let need = |key: &str| {
            run.get(key)
                .map(str::to_owned)
                .ok_or_else(|| ReportError::RunLog { dir: self.raw.dir.clone(), what: format!("no {key} line") })
        };
        let mode = need("mode")?;
        let duration = match run.get("seconds").and_then(|s| s.parse::<u64>().ok()) {
            Some(s) => format!(" in {} min {} s", s / 60, s % 60),
            None => String::new(),
        };
        let binaries: Vec<String> =
            run.lines.iter().filter_map(|(k, v)| Some(format!("{} {v}", k.strip_prefix("binary ")?))).collect();
        let reruns = run.lines.iter().filter(|(k, _)| k.starts_with("rerun")).map(|(k, v)| match k.as_str() {
            "rerun" => format!("| partial rerun | {v} |"),
            _ => format!("| rerun's {} | {v} |", &k[6..]),
        });
        let mut out = vec![
            "# mino scale results".to_owned(),
            String::new(),
            format!(
                "Generated by `benches/scale.sh{}` ({mode} mode){duration}. Do not edit by hand: rerun the script. \
                 How to run and read it: [README.md](README.md).",
                if mode == "quick" { " --quick" } else { "" }
            ),
            String::new(),
            "| | |".into(),
            "|---|---|".into(),
            format!("| date (UTC) | {} |", need("started")?),
            format!("| commit | `{}` |", need("commit")?),
            format!("| machine | {} |", need("machine")?),
            format!("| tools | {} |", need("tools")?),
            format!(
                "| binaries (sha256 prefix, build time) | {} |",
                if binaries.is_empty() { fmt::DASH.to_owned() } else { binaries.join("; ") }
            ),
            format!(
                "| load average before / after | {} / {} |",
                self.load("load-before.txt"),
                self.load("load-after.txt")
            ),
        ];
        out.extend(reruns);
        out.extend([
            String::new(),
            format!(
                "**Read this first.** Everything runs on this one shared 2-core machine: Redis, every shard \
                 process and the loadgen, over loopback without TLS, while other sessions use the same cores. The \
                 original ran on separate AWS machines (server, nginx with TLS, load generator apart) and on a \
                 desktop with pinned cores, so ratios against it are indicative, not a contest. Each figure carries \
                 a verdict as the original's did: **measured**; **not judgeable** when the loadgen's own CPU passed \
                 70 % of the cores during that step (it then measures itself more than the server); **nothing \
                 measured** when no bot was connected at its end; **not measured** with the reason. Where the loadgen stayed under its limit but the whole machine was at \
                 least {} % busy, the verdict reads **measured (machine saturated)**: the shards then competed for \
                 the cores. \"Other load\" is the cores busy with none of our processes during a hold (other \
                 sessions' builds and tests); \"run-queue wait\" is the share of a core a shard's threads spent \
                 runnable but waiting for a CPU (`/proc/PID/task/*/schedstat`): what that noise cost the shard. \
                 Repeated rows (control, idle) are medians.",
                verdict::SATURATED_PCT
            ),
            String::new(),
        ]);
        Ok(out)
    }

    /// The load averages `uptime` printed into `name`, or "–".
    fn load(&self, name: &str) -> String {
        let text = self.raw.text(name);
        match text.split_once("load average:") {
            Some((_, rest)) => rest.trim().to_owned(),
            None => fmt::DASH.into(),
        }
    }

    fn ratios(&self) -> Vec<String> {
        let mut out = vec![
            "## Ratios against the original's published figures".to_owned(),
            String::new(),
            "Ours ÷ original; below 1× is better for times and costs, and for ticks per second 1× is 20 a second."
                .into(),
            String::new(),
        ];
        out.extend(table(&["figure", "original", "ours", "ours ÷ original", "verdict"], &self.summary));
        out.push(String::new());
        out
    }

    fn commands(&self) -> Vec<String> {
        let mut out = vec![
            "## Exact commands".to_owned(),
            String::new(),
            "As run (ports and pids are those of this run; every shard listens on 127.0.0.1 port 0 and prints its \
             address). Redis: `redis-server --port P --bind 127.0.0.1 --save '' --appendonly no`. Server-side \
             counters come from sampling each shard's `/metrics` and `/proc/PID/stat` every 0.5 s (the \
             runner's sampler, `benches/src/sampler.rs`), matched to the loadgen's holds (`benches/src/analysis.rs`). \
             Raw JSON of every run is in [results/raw/](results/raw/); RESULTS.md is written from it alone \
             (`benches/scale.sh --report-only`)."
                .into(),
            String::new(),
            "```".into(),
        ];
        out.extend(self.raw.commands.iter().map(|(label, cmd)| format!("# {label}\n{cmd}")));
        out.extend(["```".to_owned(), String::new()]);
        out
    }
}
