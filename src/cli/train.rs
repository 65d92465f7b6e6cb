//! `dhumbal-run train FILE` and the trainer executable's own command line, over the
//! experiment engine's trainings ([`crate::experiment::produce::trainings`]).
//!
//! Networks train on libtorch, which only `dhumbal-train` links (crates/trainer). A process
//! without the training backend (this program, the Python package) runs the trainer as a
//! child with the same scenario, entries and settings: it inherits the terminal (the same
//! progress bar and lines), gets the same Ctrl-C (its checkpoint is written, it exits 130),
//! and its exit code means the same here. Tabular policies learn here, in any process.

use std::process::ExitCode;

use clap::{Args, Parser};

use dhumbal_runner::scenario::Overrides;

use super::settings::{self, Entries};
use crate::experiment;

/// `dhumbal-run train`.
#[derive(Args, Debug, Clone)]
#[command(
    mut_arg("scenario", |a| a.help("The scenario file whose `train:` section to train")),
    mut_arg("resume", |a| a.help(
        "Continue from the checkpoints (after Ctrl-C, a kill, or to train further)"
    )),
    mut_arg("force", |a| a.help("Train afresh, replacing existing checkpoints")),
    mut_arg("out", |a| a.help(
        "Where the training records go (default: the scenario's output folder)"
    )),
)]
pub struct TrainArgs {
    #[command(flatten)]
    pub entries: Entries,
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
        ..Overrides::default()
    };
    super::exit_code(train_with(cli.train, overrides))
}

fn train_with(args: TrainArgs, overrides: Overrides) -> anyhow::Result<ExitCode> {
    args.entries.produce(
        overrides,
        "training",
        "has no `train:` section: nothing to train (docs/learning.md)",
        |s| s.trainings.iter().map(|t| t.id()).collect(),
        experiment::produce::trainings,
    )
}
