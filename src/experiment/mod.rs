//! The experiment engine: one entry point, [`run`], that every front end calls (the
//! `dhumbal-run` command line, the Python package's `dhumbal.run`, tests), as ripgrep's binary
//! is a thin layer over its library crates.
//!
//! Given a scenario file and [`Options`], it does the whole job in one order:
//!
//! 1. the `train:` entries whose checkpoint or table is missing ([`produce::trainings`]:
//!    networks in the trainer executable, tabular policies here);
//! 2. the `tune:` entries whose agent file or confirmation is missing
//!    ([`produce::tunings`]);
//! 3. the `exploit:` entries whose measurement is missing ([`produce::exploits`]: the
//!    target's self-play and each responder at its table, then the gain from their records);
//! 4. the stages ([`stages::play`]), seating what 1 and 2 made.
//!
//! The scenario is read again after each kind of section that produces an agent, so that the
//! seats find what was made. A new section that produces an agent is one more step here and
//! one module beside these (its "is it done?" check beside the runner code that writes it, as
//! [`dhumbal_runner::tune::needs_work`] and [`dhumbal_runner::scenario::Training::output`]).
//!
//! What the engine shows and how it is stopped go through [`Hooks`], which the terminal
//! ([`crate::cli::console::Console`]), Python and tests implement; what it ends with is an
//! [`Outcome`] or an [`Error`] whose [`Error::exit_code`] is the one place a result becomes
//! a documented exit code.

pub mod produce;
pub mod stages;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use dhumbal_runner::folder::CommandLine;
use dhumbal_runner::run::{Reporter, RunReport, Shard, Waiting};
use dhumbal_runner::scenario::{self, Overrides, Scenario};
use dhumbal_runner::train::TrainReporter;
use dhumbal_runner::tune::TuneReporter;

/// What to do with what an earlier run left in the output folder.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Mode {
    /// Start afresh; a folder holding another run's results is refused.
    #[default]
    Fresh,
    /// Finish an interrupted run (stages, searches, trainings) to exactly what an
    /// uninterrupted one gives.
    Resume,
    /// Replace an earlier run's results (only files a run writes are removed).
    Force,
}

impl Mode {
    /// From the command line's `--resume` and `--force` (which clap keeps apart).
    pub fn from_flags(resume: bool, force: bool) -> Mode {
        match (resume, force) {
            (true, _) => Mode::Resume,
            (false, true) => Mode::Force,
            (false, false) => Mode::Fresh,
        }
    }

    pub fn resume(self) -> bool {
        self == Mode::Resume
    }

    pub fn force(self) -> bool {
        self == Mode::Force
    }
}

/// How to run an experiment.
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// Worker threads (`None`: every core). Results do not depend on it.
    pub threads: Option<usize>,
    pub mode: Mode,
    /// The command line's `--seed`, `--rounds`, `--out` and `--trace`.
    pub overrides: Overrides,
    /// Write each stage's statistics report (report.md, stats.json, tables, figures).
    pub report: bool,
    /// Also write each stage's records as rounds.csv.
    pub csv: bool,
    /// Play one shard of the study (its share of every stage); `merge` completes it.
    pub shard: Option<Shard>,
    /// With a shard: only these stages.
    pub stages: Vec<String>,
}

/// The thread count to run with: the one asked for, or every core.
pub fn thread_count(threads: Option<usize>) -> usize {
    threads.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

/// What a front end provides: how progress is shown and how the experiment is stopped.
/// The terminal draws bars and prints lines; Python prints to its stderr; a test records.
pub trait Hooks: Sync {
    /// The flag that stops the experiment: checked between rounds, evaluations and
    /// episodes; what is finished is kept, and the experiment ends with
    /// [`Error::Interrupted`].
    fn stop(&self) -> Arc<AtomicBool>;
    /// A line of what the experiment does (a stage starting, where results went).
    fn say(&self, line: &str);
    /// Something the user should know that does not stop the experiment.
    fn warn(&self, line: &str);
    /// What shows the stages' progress (and, with `report`, attaches each finished stage's
    /// statistics report); `resume` is the command that finishes the run if it stops.
    fn stages(&self, report: bool, resume: &str) -> Box<dyn StageHooks + '_>;
    /// What shows a tuning's search.
    fn tunings(&self) -> &dyn TuneReporter;
    /// What shows a training in this process (tabular policies; networks in the trainer).
    fn trainings(&self) -> &dyn TrainReporter;
}

/// A [`Reporter`] of the stages that is told when play ends (to clear a progress bar).
pub trait StageHooks: Reporter {
    fn end(&self) {}
}

/// Stages that show nothing and attach no report (a test's, a library caller's).
impl StageHooks for dhumbal_runner::run::Quiet {}

/// Why an experiment did not finish. Each variant is one of the documented exit codes
/// ([`Error::exit_code`]), so that every front end means the same by them.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Bad input: a scenario file's problems (each with file, line and field), arguments, or
    /// a folder holding something else. Exit code 2.
    #[error("{0}")]
    BadInput(String),
    /// Not yet: a shard's stage waits for an earlier stage that other shards are still
    /// playing. What the shard played is kept. Exit code 3.
    #[error("not yet: {waiting}")]
    NotYet {
        waiting: Waiting,
        /// The shard that had to stop (what it played is in `waiting`).
        shard: Option<Shard>,
    },
    /// Not yet: a shard played its share of a tuning's evaluation (or of its confirmation's
    /// look), and the other shards' shares are not all on disk; the next wave of shards goes
    /// on from there. Exit code 3.
    #[error("not yet: {0}")]
    Pending(String),
    /// Stopped on request (Ctrl-C): everything finished is kept; `resume` finishes it.
    /// Exit code 130.
    #[error("{message}\nTo finish the run: {resume}")]
    Interrupted { message: String, resume: String },
    /// A failure while running. Exit code 1.
    #[error(transparent)]
    Failed(Failure),
}

/// What failed while running (the experiment's [`Error::Failed`]): the runner's or the
/// report's own error, kept as its type, or a child process or front end that failed.
#[derive(Debug, thiserror::Error)]
pub enum Failure {
    #[error(transparent)]
    Runner(Box<dhumbal_runner::Error>),
    #[error(transparent)]
    Report(Box<dhumbal_report::Error>),
    /// The trainer executable could not be started, failed, or was killed.
    #[error("{0}")]
    Trainer(String),
    /// A front end's own failure (the command line's: a terminal that cannot be written to),
    /// as it said it.
    #[error("{0}")]
    Other(String),
}

/// The runner's error sorted into the experiment's kinds by its variant: a refusal (or a merge
/// of a study with units missing) is bad input, a stage that must wait is "not yet", a stop is
/// an interruption (whose command to resume the caller knows better: [`stages::play`] says
/// it), anything else a failure.
impl From<dhumbal_runner::Error> for Error {
    fn from(e: dhumbal_runner::Error) -> Error {
        use dhumbal_runner::Error as E;
        match e {
            E::Refused(r) => Error::BadInput(r.0),
            E::Incomplete(i) => Error::BadInput(i.to_string()),
            E::Waiting(waiting) => Error::NotYet {
                waiting: *waiting,
                shard: None,
            },
            E::Interrupted(i) => Error::Interrupted {
                message: i.to_string(),
                resume: "the same command with --resume".into(),
            },
            e => Error::Failed(Failure::Runner(Box::new(e))),
        }
    }
}

/// The report's error sorted the same way: bad input (records that make no sense, a refusal)
/// or a failure.
impl From<dhumbal_report::Error> for Error {
    fn from(e: dhumbal_report::Error) -> Error {
        match e {
            dhumbal_report::Error::Runner(e) => e.into(),
            e if e.is_bad_input() => Error::BadInput(e.to_string()),
            e => Error::Failed(Failure::Report(Box::new(e))),
        }
    }
}

impl Error {
    /// The process exit code this error means: 2 bad input, 3 not yet, 130 interrupted, 1 a
    /// failure.
    pub fn exit_code(&self) -> u8 {
        match self {
            Error::BadInput(_) => 2,
            Error::NotYet { .. } | Error::Pending(_) => 3,
            Error::Interrupted { .. } => 130,
            Error::Failed(_) => 1,
        }
    }

    /// The error a child process's exit code means (the trainer's).
    pub fn of_exit_code(code: i32, what: &str, resume: &str) -> Error {
        match code {
            2 => Error::BadInput(format!("{what}: bad input (its messages are above)")),
            130 => Error::Interrupted {
                message: format!("{what}: stopped, with every finished episode saved"),
                resume: resume.to_string(),
            },
            _ => Error::Failed(Failure::Trainer(format!(
                "{what} failed (exit code {code})"
            ))),
        }
    }
}

/// What an experiment did.
#[derive(Clone)]
pub struct Outcome {
    /// The scenario's name and output folder.
    pub name: String,
    pub dir: PathBuf,
    /// The `train:` entries trained by this call.
    pub trained: Vec<String>,
    /// The `tune:` entries searched or confirmed by this call.
    pub tuned: Vec<produce::Tuned>,
    /// The `exploit:` entries measured by this call.
    pub exploited: Vec<produce::Exploited>,
    /// The stages played (`None` for a file that only trains or tunes).
    pub played: Option<RunReport>,
}

/// Runs the scenario file at `path`: its trainings and tunings that are missing, then its
/// stages.
pub fn run(path: &Path, options: &Options, hooks: &dyn Hooks) -> Result<Outcome, Error> {
    // Before the scenario is read, so that the clock's rate is measured by the time play
    // needs it.
    dhumbal_runner::clock::calibrate_in_background();
    let mut scenario = load(path, &options.overrides)?;
    let only = scenario.stages.is_empty();
    if only
        && scenario.study.is_some()
        && scenario.trainings.is_empty()
        && scenario.tunings.is_empty()
        && scenario.exploits.is_empty()
    {
        // A study is played by people: nothing here to run.
        hooks.warn(&format!(
            "{} has a `study:` section and nothing to play here: people play it through \
             `dhumbal-run serve {}` (docs/studies.md)",
            path.display(),
            path.display()
        ));
    }
    let mut outcome = Outcome {
        name: scenario.name.clone(),
        dir: scenario.output.dir.clone(),
        trained: Vec::new(),
        tuned: Vec::new(),
        exploited: Vec::new(),
        played: None,
    };
    // What a section writes is made when it is missing (all of it, for a file that only
    // trains or tunes), trainings first (a tuning may seat a trained agent). In a file that
    // also plays stages, what exists is kept (continued where it stopped).
    let how = produce::How {
        threads: options.threads,
        mode: if only { options.mode } else { Mode::Resume },
        overrides: &options.overrides,
        shard: None,
    };
    if let Some(shard) = options.shard {
        refuse_shard(path, &scenario, shard, only)?;
        // A tuning's search and confirmation, this shard's share of their next step.
        let missing: Vec<usize> = (0..scenario.tunings.len())
            .filter(|&i| dhumbal_runner::tune::needs_work(&scenario, i))
            .collect();
        if !missing.is_empty() {
            let sharded = produce::How {
                shard: Some(shard),
                mode: Mode::Fresh,
                ..how
            };
            outcome.tuned.extend(produce::tunings(
                path, &scenario, &missing, &sharded, hooks,
            )?);
            scenario = load(path, &options.overrides)?;
        }
        // An exploitability entry's stages, this shard's share of them (of a gain test:
        // of its next look), entry after entry.
        let missing = produce::unmeasured(&scenario);
        if !missing.is_empty() {
            let sharded = produce::How {
                shard: Some(shard),
                mode: Mode::Fresh,
                ..how
            };
            outcome.exploited.extend(produce::exploits(
                path, &scenario, &missing, &sharded, hooks,
            )?);
        }
        if only {
            return Ok(outcome);
        }
    }
    if options.shard.is_none() {
        let missing: Vec<usize> = (0..scenario.trainings.len())
            .filter(|&i| only || !scenario.trainings[i].output().exists())
            .collect();
        if !missing.is_empty() {
            // A training into a missing checkpoint starts afresh (nothing to resume).
            let fresh = produce::How {
                mode: if only { options.mode } else { Mode::Fresh },
                ..how
            };
            produce::trainings(path, &scenario, &missing, &fresh, hooks)?;
            outcome.trained.extend(
                missing
                    .iter()
                    .map(|&i| scenario.trainings[i].id().to_string()),
            );
            scenario = load(path, &options.overrides)?;
        }
        let missing: Vec<usize> = (0..scenario.tunings.len())
            .filter(|&i| only || dhumbal_runner::tune::needs_work(&scenario, i))
            .collect();
        if !missing.is_empty() {
            outcome
                .tuned
                .extend(produce::tunings(path, &scenario, &missing, &how, hooks)?);
            scenario = load(path, &options.overrides)?;
        }
        let missing = if only {
            (0..scenario.exploits.len()).collect()
        } else {
            produce::unmeasured(&scenario)
        };
        if !missing.is_empty() {
            outcome
                .exploited
                .extend(produce::exploits(path, &scenario, &missing, &how, hooks)?);
        }
        if only {
            return Ok(outcome);
        }
    }
    let settings = stages::Settings::of(path, options);
    outcome.played = Some(stages::play(&scenario, &settings, hooks)?);
    Ok(outcome)
}

/// A shard plays stages, and its share of each tuning's next step and of each
/// exploitability entry's stages; a file's trainings run on one machine (each is a loop of
/// steps that depend on the ones before; several shards running one would write the same
/// files at once). Refused (bad input) when the file has nothing to split, or when a training
/// has work left, saying what to run first.
fn refuse_shard(path: &Path, scenario: &Scenario, shard: Shard, only: bool) -> Result<(), Error> {
    let pending: Vec<String> = scenario
        .trainings
        .iter()
        .filter(|t| only || !t.output().exists())
        .map(|t| format!("`train:` entry `{}`", t.id()))
        .collect();
    let splits = !scenario.tunings.is_empty() || !scenario.exploits.is_empty();
    if pending.is_empty() && (!only || splits) {
        return Ok(());
    }
    let file = shell_word(&path.display().to_string());
    Err(Error::BadInput(if pending.is_empty() {
        format!("--shard {shard}: {file} has no stages to split into shards")
    } else {
        format!(
            "--shard {shard}: {} cannot be split into shards: a training is a loop whose every \
             step depends on the ones before, and runs on one machine (a tuning and an \
             exploitability entry split: their evaluations and stages are shared out). Run \
             `dhumbal-run {file}` without --shard first (on a cluster: as one job){}; nothing \
             was played",
            pending.join(", "),
            if only {
                String::new()
            } else {
                "; its stages then split into shards".to_string()
            }
        )
    }))
}

/// The scenario at `path` with the overrides, or every problem as bad input.
pub fn load(path: &Path, overrides: &Overrides) -> Result<Scenario, Error> {
    scenario::load(path, overrides).map_err(|e| Error::BadInput(e.to_string()))
}

/// The command line that runs `scenario` with these settings (for messages).
pub fn command(scenario: &Path, overrides: &Overrides) -> String {
    let mut line = format!(
        "dhumbal-run {}",
        shell_word(&scenario.display().to_string())
    );
    if let Some(out) = &overrides.out {
        line.push_str(&format!(
            " --out {}",
            shell_word(&out.display().to_string())
        ));
    }
    if let Some(seed) = overrides.seed {
        line.push_str(&format!(" --seed {seed}"));
    }
    if let Some(rounds) = overrides.rounds {
        line.push_str(&format!(" --rounds {rounds}"));
    }
    if !overrides.trace.is_empty() {
        let deals: Vec<String> = overrides.trace.iter().map(u64::to_string).collect();
        line.push_str(&format!(" --trace {}", deals.join(",")));
    }
    line
}

/// `word` quoted for a POSIX shell when it needs it.
pub fn shell_word(word: &str) -> String {
    if !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:@+,".contains(c))
    {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', "'\\''"))
    }
}

/// The command line's `--seed`, `--rounds` and `--trace`, as `source/run.json` keeps them.
fn command_line(overrides: &Overrides) -> CommandLine {
    CommandLine {
        seed: overrides.seed,
        rounds: overrides.rounds,
        trace: overrides.trace.clone(),
    }
}
