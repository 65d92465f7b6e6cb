//! `dhumbal-run train FILE`, the trainings a run needs first, and the trainer executable's
//! own command line.
//!
//! Networks train on libtorch, which only `dhumbal-train` links (crates/trainer). A process
//! without the training backend (this program, the Python package) runs the trainer as a
//! child with the same scenario, entries and settings: it inherits the terminal (the same
//! progress bar and lines), gets the same Ctrl-C (its checkpoint is written, it exits 130),
//! and its exit code is this command's. Tabular policies learn here, in any process.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Args, Parser};

use dhumbal_runner::folder::Refusal;
use dhumbal_runner::scenario::{Overrides, Scenario};
use dhumbal_runner::train::TrainOptions;

use super::interrupt::Interrupt;
use super::progress::TrainTerminal;
use super::settings::{self, Threads};

/// `dhumbal-run train`.
#[derive(Args, Debug, Clone)]
pub struct TrainArgs {
    /// The scenario file whose `train:` section to train.
    pub scenario: PathBuf,
    /// Only these entries (by id; repeat the flag for several). Default: all.
    #[arg(long = "id", value_name = "ID")]
    pub ids: Vec<String>,
    /// Worker threads playing episodes (default: all cores). Results do not depend on it.
    #[command(flatten)]
    pub threads: Threads,
    /// Continue from the checkpoints (after Ctrl-C, a kill, or to train further).
    #[arg(long)]
    pub resume: bool,
    /// Train afresh, replacing existing checkpoints.
    #[arg(long)]
    pub force: bool,
    /// Where the training records go (default: the scenario's output folder).
    #[arg(long)]
    pub out: Option<PathBuf>,
}

/// `dhumbal-train`: the `train` command with libtorch linked, as `dhumbal-run` starts it.
#[derive(Parser, Debug)]
#[command(
    name = "dhumbal-train",
    version,
    about = "Trains the networks a dhumbal-run scenario declares (`train:`) on libtorch",
    long_about = "Trains the networks a dhumbal-run scenario declares (`train:`) on libtorch: \
        `dhumbal-run train FILE` and a run that needs a checkpoint not trained yet start this \
        program with the same arguments, so you rarely call it yourself; it is the only \
        program of dhumbal-run that loads libtorch (and CUDA, when a GPU is there). Same \
        arguments, exit codes and Ctrl-C as `dhumbal-run train` (docs/learning.md).",
    after_help = hyper_help()
)]
pub struct TrainerCli {
    #[command(flatten)]
    pub train: TrainArgs,
    /// Replace the scenario's seed (as the run that trains first was given).
    #[arg(long)]
    pub seed: Option<u64>,
    /// Replace every stage's sample size (as the run that trains first was given; trainings
    /// do not depend on it, the scenario's checks do).
    #[arg(long)]
    pub rounds: Option<u64>,
}

/// The hyperparameters, for `train --help`.
pub fn hyper_help() -> String {
    let mut text = String::from(
        "Hyperparameters (`hyper:` of a train entry; presets `default` and `paper`):\n",
    );
    for (name, who, doc) in dhumbal_learn::hyper::PARAMS {
        text.push_str(&format!("  {name:<24} [{who}] {doc}\n"));
    }
    text
}

/// How trainings and tunings run: the settings of the command that asked for them.
#[derive(Clone, Copy)]
pub struct How<'a> {
    pub threads: Threads,
    pub resume: bool,
    pub force: bool,
    /// The scenario's overrides (a trainer run as a child gets them again).
    pub overrides: &'a Overrides,
}

/// `dhumbal-run train`.
pub fn train(args: TrainArgs) -> anyhow::Result<ExitCode> {
    train_with(args, Overrides::default())
}

/// The trainer executable's `main` (after its backend is installed).
pub fn trainer_main<I, T>(args: I) -> ExitCode
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    let cli = match TrainerCli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(e) => return settings::clap_exit(&e),
    };
    let overrides = Overrides {
        seed: cli.seed,
        rounds: cli.rounds,
        out: None,
        trace: Vec::new(),
    };
    super::exit_code(train_with(cli.train, overrides))
}

fn train_with(args: TrainArgs, overrides: Overrides) -> anyhow::Result<ExitCode> {
    let overrides = Overrides {
        out: args.out.clone(),
        ..overrides
    };
    let path = args.scenario;
    let scenario = match settings::load(&path, &overrides) {
        Ok(s) => s,
        Err(code) => return Ok(code),
    };
    if scenario.trainings.is_empty() {
        eprintln!(
            "error: {} has no `train:` section: nothing to train (docs/learning.md)",
            path.display()
        );
        return Ok(ExitCode::from(2));
    }
    let names: Vec<&str> = scenario.trainings.iter().map(|t| t.id()).collect();
    let which = match settings::chosen(&path, "training", &names, &args.ids) {
        Ok(w) => w,
        Err(code) => return Ok(code),
    };
    trainings(
        &path,
        &scenario,
        &which,
        &How {
            threads: args.threads,
            resume: args.resume,
            force: args.force,
            overrides: &overrides,
        },
    )
}

/// Trains `which` of the scenario read from `path`: here when this process can (tabular
/// policies always; networks in the trainer), else in the trainer executable.
pub fn trainings(
    path: &Path,
    scenario: &Scenario,
    which: &[usize],
    how: &How<'_>,
) -> anyhow::Result<ExitCode> {
    let neural = which
        .iter()
        .any(|&i| scenario.trainings[i].neural().is_some());
    if neural && !dhumbal_learn::can_train() {
        return in_trainer(path, scenario, which, how);
    }
    here(scenario, which, how)
}

/// Runs the trainer executable on these trainings and waits for it.
fn in_trainer(
    path: &Path,
    scenario: &Scenario,
    which: &[usize],
    how: &How<'_>,
) -> anyhow::Result<ExitCode> {
    let Some(exe) = dhumbal_runner::trainer::locate() else {
        let set = std::env::var_os("DHUMBAL_TRAIN")
            .filter(|p| !p.is_empty())
            .map(|p| format!(" (DHUMBAL_TRAIN={} is not a file)", p.to_string_lossy()))
            .unwrap_or_default();
        return Err(Refusal(format!("{}{set}", dhumbal_learn::TrainError::NoTorch)).into());
    };
    let mut command = std::process::Command::new(&exe);
    command.arg(path);
    for &i in which {
        command.arg("--id").arg(scenario.trainings[i].id());
    }
    if let Some(n) = how.threads.threads {
        command.arg("--threads").arg(n.to_string());
    }
    if how.resume {
        command.arg("--resume");
    }
    if how.force {
        command.arg("--force");
    }
    if let Some(out) = &how.overrides.out {
        command.arg("--out").arg(out);
    }
    if let Some(seed) = how.overrides.seed {
        command.arg("--seed").arg(seed.to_string());
    }
    if let Some(rounds) = how.overrides.rounds {
        command.arg("--rounds").arg(rounds.to_string());
    }
    // Ctrl-C reaches the trainer too (the terminal signals the whole foreground group): it
    // saves its checkpoint and exits 130. Until then this process must not die of the first
    // one; a second quits both at once.
    let interrupt = Interrupt::install()?;
    let status = command
        .status()
        .map_err(|e| anyhow::anyhow!("cannot start the trainer {}: {e}", exe.display()))?;
    drop(interrupt);
    Ok(match status.code() {
        Some(code) => ExitCode::from(u8::try_from(code).unwrap_or(1)),
        // Killed by a signal: 128 + its number, as a shell reports it.
        None => {
            use std::os::unix::process::ExitStatusExt;
            let signal = status.signal().unwrap_or(0);
            eprintln!(
                "error: the trainer {} was killed (signal {signal})",
                exe.display()
            );
            ExitCode::from(u8::try_from(128 + signal).unwrap_or(1))
        }
    })
}

/// Trains `which` in this process, with a progress bar and the figures; Ctrl-C stops with the
/// checkpoint saved.
fn here(scenario: &Scenario, which: &[usize], how: &How<'_>) -> anyhow::Result<ExitCode> {
    let interrupt = Interrupt::install()?;
    let reporter = TrainTerminal::default();
    let results = dhumbal_runner::train::train(
        scenario,
        which,
        &TrainOptions {
            threads: how.threads.count(),
            resume: how.resume,
            force: how.force,
            stop: interrupt.flag(),
        },
        &reporter,
    )?;
    for r in &results {
        if let Err(e) = dhumbal_report::training::figures(&r.dir, &r.dir.join("figures"), false) {
            eprintln!("warning: training `{}`: figures not written: {e:#}", r.id);
        }
    }
    if results.iter().any(|r| r.stopped) {
        eprintln!(
            "stopped: the checkpoint holds every finished episode; run the same command with --resume to finish"
        );
        return Ok(ExitCode::from(130));
    }
    Ok(ExitCode::SUCCESS)
}
