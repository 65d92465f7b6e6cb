//! `dhumbal-run train FILE` and the trainer executable's own command line, over the
//! experiment engine's trainings ([`crate::experiment::produce::trainings`]).
//!
//! Networks train on libtorch, which only `dhumbal-train` links (crates/trainer). A process
//! without the training backend (this program, the Python package) runs the trainer as a
//! child with the same scenario, entries and settings: it inherits the terminal (the same
//! progress bar and lines), gets the same Ctrl-C (its checkpoint is written, it exits 130),
//! and its exit code means the same here. Tabular policies learn here, in any process.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser};

use dhumbal_runner::scenario::Overrides;

use super::settings::{self, Threads};
use crate::experiment::{self, produce::How};

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
    let how = How::from_flags(args.threads.threads, args.resume, args.force, &overrides);
    super::with_console(|console| {
        experiment::produce::trainings(&path, &scenario, &which, &how, console)
    })
}
