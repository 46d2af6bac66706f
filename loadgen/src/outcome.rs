//! How a run ends: what a scenario expects of its holds ([`Expectation`]),
//! and the run's outcome ([`Outcome`]), one enum for the verdict line on
//! stderr, the report's `outcome` object ([`Ending`]) and the exit code.
//!
//! | exit | outcome | when |
//! |---|---|---|
//! | 0 | measured | the run measured (each phase's `verdict` says how well: measured, not judgeable) |
//! | 0 | interrupted | Ctrl-C, SIGTERM or an agent lost cut it short: the report says when and why |
//! | 1 | failed | it could not run or report: a URL that does not resolve, a shard with no WebTransport offer, a `--kill-pid` or `--drain-pid` with no mino-server behind it, a `--json` or `--plot` that cannot be written (said before the run), every agent lost (no report) |
//! | 2 | usage | the command line is wrong: a bad option value, options that do not go together (nothing ran); or a crowd `--point` outside the world the shard's Welcome gives (a probe joined, no bot) |
//! | 3 | nobody welcomed | no bot was ever welcomed: no shard at the URL, every join refused |
//! | 4 | no frames | bots were welcomed, but in a hold of a scenario that expects frames (see [`Expectation`]) no bot (or none of one transport's bots) received a single snapshot or view frame |
//! | 5 | nothing measured | bots were welcomed, but none was connected at a hold's end (their shard stopped or died during it, or closed them all), or a failover's signalled pid had none of them (no bot lost its connection) |

use crate::cli::Command;
use crate::profile::ProfileName;
use crate::report::{Joins, Measured, Verdict};
use crate::transport::{Transport, Transports};
use serde::{Deserialize, Serialize};

/// Whether a scenario's holds must bring its bots frames: what makes a
/// hold with none a run that measured nothing ([`Outcome::NoFrames`]) or
/// a valid one. A shard that takes deltas sends a player nothing while
/// nothing in its view moves (ARCHITECTURE.md, "Views").
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Expectation {
    /// Its bots walk: every hold brings frames, and one with none (a
    /// WebTransport bot whose datagrams never arrive, a shard whose tick
    /// stopped) measured nothing. Walk, steps and arrivals with the walker
    /// profile (the default).
    Frames,
    /// Its bots may all stand still for a whole hold, which then brings
    /// them nothing: idle (nothing moves), crowd (a gathered crowd stands;
    /// with --shuffle some of it steps, too few to count on), failover (no
    /// hold: it measures resumes), and any scenario with `--profile idle`.
    #[default]
    MaybeSilent,
}

impl Expectation {
    /// What `command`'s holds expect, its bots behaving as `profile`.
    pub fn of(command: &Command, profile: ProfileName) -> Expectation {
        match command {
            // Light, typical and heavy bots stand now and then (a lone light
            // bot about 30 % of the time, easily a whole short hold): only
            // walkers walk all the time.
            _ if profile != ProfileName::Walker => Expectation::MaybeSilent,
            Command::Walk(_) | Command::Steps(_) | Command::Arrivals(_) => Expectation::Frames,
            Command::Idle(_) | Command::Crowd(_) | Command::Failover(_) | Command::Agent(_) => Expectation::MaybeSilent,
        }
    }

    /// Whether the hold `m` brought what is expected: with
    /// [`Expectation::Frames`], a frame to at least one bot, and (a
    /// `--transport mix` hold) to at least one bot of each transport that
    /// had bots.
    pub fn met(self, m: &Measured) -> bool {
        match self {
            Expectation::MaybeSilent => true,
            Expectation::Frames => {
                m.snapshots > 0 && m.transports.iter().flatten().all(|t| t.bots == 0 || t.snapshots > 0)
            }
        }
    }
}

/// How a run ended: its verdict and its exit code (the table in this
/// module's documentation, and `mino-loadgen --help`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Outcome {
    /// The run measured: exit 0.
    #[serde(rename = "measured")]
    Measured,
    /// The run was cut short (the report's `interrupted`): exit 0, its
    /// report marked.
    #[serde(rename = "interrupted")]
    Interrupted,
    /// The run could not run or report (an error, no report): exit 1.
    #[serde(rename = "failed")]
    Failed,
    /// The command line is wrong (clap's usage error): exit 2.
    #[serde(rename = "usage")]
    Usage,
    /// No bot was ever welcomed: exit 3.
    #[serde(rename = "nobody welcomed")]
    NobodyWelcomed,
    /// Bots were welcomed but a hold that expects frames brought none: exit 4.
    #[serde(rename = "no frames")]
    NoFrames,
    /// Bots were welcomed but none was connected at a hold's end: exit 5.
    #[serde(rename = "nothing measured")]
    NothingMeasured,
}

impl Outcome {
    /// Every outcome, in exit-code order.
    pub const ALL: [Outcome; 7] = [
        Outcome::Measured,
        Outcome::Interrupted,
        Outcome::Failed,
        Outcome::Usage,
        Outcome::NobodyWelcomed,
        Outcome::NoFrames,
        Outcome::NothingMeasured,
    ];

    /// The verdict as the report and the verdict line write it.
    pub fn label(self) -> &'static str {
        match self {
            Outcome::Measured => "measured",
            Outcome::Interrupted => "interrupted",
            Outcome::Failed => "failed",
            Outcome::Usage => "usage",
            Outcome::NobodyWelcomed => "nobody welcomed",
            Outcome::NoFrames => "no frames",
            Outcome::NothingMeasured => "nothing measured",
        }
    }

    /// Whether a run that exits with `code` wrote its report (measured,
    /// interrupted, or measured nothing: nobody welcomed, no frames, none
    /// connected at a hold's end): a caller reads the report's verdict
    /// rather than take the run for broken.
    pub fn reported(code: Option<i32>) -> bool {
        [Outcome::Measured, Outcome::Interrupted, Outcome::NobodyWelcomed, Outcome::NoFrames, Outcome::NothingMeasured]
            .into_iter()
            .any(|o| code == Some(i32::from(o.exit_code())))
    }

    /// The process's exit code.
    pub fn exit_code(self) -> u8 {
        match self {
            Outcome::Measured | Outcome::Interrupted => 0,
            Outcome::Failed => 1,
            Outcome::Usage => 2,
            Outcome::NobodyWelcomed => 3,
            Outcome::NoFrames => 4,
            Outcome::NothingMeasured => 5,
        }
    }

    /// The outcome of an error `run` returned: the [`Ending`] it carries,
    /// or else [`Outcome::Failed`].
    pub fn of_error(e: &anyhow::Error) -> Outcome {
        e.downcast_ref::<Ending>().map_or(Outcome::Failed, |end| end.verdict)
    }
}

/// The report's `outcome` object: how the run ended and why. A run that
/// measured nothing returns it as its error, printed as the verdict line
/// (`verdict: no frames (exit 4): ...`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, thiserror::Error)]
#[error("verdict: {} (exit {exit_code}): {reason}", verdict.label())]
pub struct Ending {
    /// The outcome.
    pub verdict: Outcome,
    /// The exit code it gives the process.
    pub exit_code: u8,
    /// Why, in a sentence (empty when measured).
    pub reason: String,
}

impl Ending {
    /// `verdict` for `reason`, with its exit code.
    pub fn new(verdict: Outcome, reason: impl Into<String>) -> Ending {
        Ending { verdict, exit_code: verdict.exit_code(), reason: reason.into() }
    }

    /// Whether the run counts as a success (exit 0).
    pub fn succeeded(&self) -> bool {
        self.exit_code == 0
    }

    /// [`Outcome::NoFrames`] when a phase of `report` has that verdict (a
    /// hold that did not meet its scenario's [`Expectation`]), saying which
    /// holds and which transports' bots got
    /// nothing, and where to look (the run's bots over `transports`).
    pub fn no_frames(report: &impl Joins, transports: Transports) -> Option<Ending> {
        let phases = report.phases();
        // The phases whose verdict says so: one rule, the phase's.
        let silent: Vec<&Measured> = phases.iter().copied().filter(|m| m.verdict == Verdict::NoFrames).collect();
        let first = silent.first()?;
        // Which bots: the parts of a mix that got nothing, or all of them.
        let quiet: Vec<Transport> = match &first.transports {
            Some(parts) => parts.iter().filter(|t| t.bots > 0 && t.snapshots == 0).map(|t| t.transport).collect(),
            None => Transport::ALL.into_iter().filter(|t| transports.uses(*t)).collect(),
        };
        let whose = match quiet.as_slice() {
            [t] if transports.is_mix() => format!("no {} bot", t.label()),
            _ => "no bot".to_owned(),
        };
        let (holds, welcomed) = (holds(silent.len(), phases.len()), welcomed(report.welcomed()));
        let mut reason =
            format!("{welcomed} welcomed, but {whose} received a single snapshot or view frame in {holds}");
        if quiet.contains(&Transport::WebTransport) {
            reason.push_str(
                "; WebTransport bots get their frames as datagrams: do datagrams from the UDP port the \
                 shard's /webtransport offers reach this machine?",
            );
        }
        if quiet.contains(&Transport::WebSocket) {
            reason.push_str("; is the shard's tick running (its mino_ticks_total)?");
        }
        Some(Ending::new(Outcome::NoFrames, reason))
    }

    /// [`Outcome::NothingMeasured`] when a phase of `report` has that
    /// verdict (no bot connected at its end, bots welcomed in the run),
    /// saying which holds and what closed the bots.
    pub fn nothing_measured(report: &impl Joins) -> Option<Ending> {
        let phases = report.phases();
        let empty: Vec<&Measured> = phases.iter().copied().filter(|m| m.verdict == Verdict::NothingMeasured).collect();
        let first = empty.first()?;
        let (holds, welcomed) = (holds(empty.len(), phases.len()), welcomed(report.welcomed()));
        let errors: Vec<String> = first.error_kinds.iter().map(|(kind, n)| format!("{kind} {n}")).collect();
        let errors = if errors.is_empty() { String::new() } else { format!(" (errors: {})", errors.join(", ")) };
        let reason = format!(
            "{welcomed} welcomed, but no bot was connected at the end of {holds}{errors}: did the shard stop or \
             die during it?"
        );
        Some(Ending::new(Outcome::NothingMeasured, reason))
    }
}

/// `k` holds of a run of `n`, as a verdict says them: "the hold" when the
/// run has one.
fn holds(k: usize, n: usize) -> String {
    match (k, n) {
        (_, 1) => "the hold".to_owned(),
        (k, n) => format!("{k} of {n} holds"),
    }
}

/// "N bots were" (welcomed), as a verdict says it.
fn welcomed(n: usize) -> String {
    match n {
        1 => "1 bot was".to_owned(),
        n => format!("{n} bots were"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::transport::TransportFigures;
    use crate::transport::Transport;

    #[test]
    fn every_outcome_has_its_own_label_and_only_a_run_that_measured_exits_0() {
        let codes: Vec<u8> = Outcome::ALL.iter().map(|o| o.exit_code()).collect();
        assert_eq!(codes, [0, 0, 1, 2, 3, 4, 5], "in exit-code order");
        let mut labels: Vec<&str> = Outcome::ALL.iter().map(|o| o.label()).collect();
        labels.dedup();
        assert_eq!(labels.len(), Outcome::ALL.len());
        for o in Outcome::ALL {
            let json = serde_json::to_value(o).expect("serializes");
            assert_eq!(json, o.label(), "the JSON writes the label");
        }
        // Which codes leave a report to read: all but a failure and a usage error.
        let reported: Vec<bool> = [0, 1, 2, 3, 4, 5, 101].into_iter().map(|c| Outcome::reported(Some(c))).collect();
        assert_eq!(reported, [true, false, false, true, true, true, false]);
        assert!(!Outcome::reported(None), "killed by a signal");
    }

    #[test]
    fn usage_is_claps_own_code() {
        use clap::CommandFactory;
        let e = crate::cli::Cli::command().error(clap::error::ErrorKind::UnknownArgument, "x");
        assert_eq!(e.exit_code(), i32::from(Outcome::Usage.exit_code()));
    }

    #[test]
    fn an_error_that_is_no_ending_failed() {
        assert_eq!(Outcome::of_error(&anyhow::anyhow!("writing x: denied")), Outcome::Failed);
        let e = anyhow::Error::new(Ending::new(Outcome::NoFrames, "none"));
        assert_eq!(Outcome::of_error(&e), Outcome::NoFrames);
        assert_eq!(e.to_string(), "verdict: no frames (exit 4): none");
    }

    fn part(transport: Transport, bots: usize, snapshots: u64) -> TransportFigures {
        let mut t = TransportFigures::of(&crate::report::transport::TransportPhase {
            transport,
            whole: &crate::stats::Stats::new().take_window(),
            hold: &crate::stats::Stats::new().take_window(),
            census: crate::swarm::Census { bots, ..Default::default() },
        });
        t.snapshots = snapshots;
        t
    }

    #[test]
    fn a_walking_hold_needs_a_frame_and_each_transport_one() {
        let hold = |snapshots, parts: Option<Vec<TransportFigures>>| Measured {
            snapshots,
            transports: parts,
            ..Measured::default()
        };
        let frames = Expectation::Frames;
        assert!(frames.met(&hold(1, None)));
        assert!(!frames.met(&hold(0, None)));
        let mix = |wt| Some(vec![part(Transport::WebSocket, 1, 40), part(Transport::WebTransport, 1, wt)]);
        assert!(frames.met(&hold(80, mix(40))));
        assert!(!frames.met(&hold(40, mix(0))), "the WebTransport bots got nothing");
        assert!(Expectation::MaybeSilent.met(&hold(0, mix(0))));
    }

    #[test]
    fn scenarios_whose_bots_may_stand_expect_no_frames() {
        use crate::cli::Cli;
        use clap::Parser;
        let of = |args: &[&str]| {
            let cli = Cli::try_parse_from(std::iter::once("mino-loadgen").chain(args.iter().copied())).expect("parses");
            Expectation::of(&cli.scenario().expect("a scenario"), cli.common.profile)
        };
        assert_eq!(of(&[]), Expectation::Frames, "walk");
        assert_eq!(of(&["steps", "--steps", "1,2"]), Expectation::Frames);
        assert_eq!(of(&["arrivals"]), Expectation::Frames);
        assert_eq!(of(&["idle"]), Expectation::MaybeSilent);
        assert_eq!(of(&["crowd", "--shuffle", "0.1"]), Expectation::MaybeSilent);
        assert_eq!(of(&["failover", "--kill-pid", "1"]), Expectation::MaybeSilent);
        assert_eq!(of(&["--profile", "idle"]), Expectation::MaybeSilent, "walkers that never walk");
        for profile in ["light", "typical", "heavy"] {
            assert_eq!(of(&["--profile", profile]), Expectation::MaybeSilent, "{profile} bots stand now and then");
        }
    }
}
