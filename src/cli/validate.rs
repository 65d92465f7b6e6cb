//! `dhumbal-run validate FILE`: every problem of a scenario file with its line, and what it
//! would run.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

use dhumbal_runner::scenario::Overrides;

use super::settings;

/// `dhumbal-run validate`.
#[derive(Args, Debug)]
pub struct ValidateArgs {
    /// The scenario file to check.
    pub scenario: PathBuf,
    /// Replace the scenario's seed, as for a run.
    #[arg(long)]
    pub seed: Option<u64>,
    /// Replace every stage's sample size, as for a run.
    #[arg(long)]
    pub rounds: Option<u64>,
    /// The output folder, as for a run: what is already done there (a tuning's search and
    /// confirmation) is marked so (the Slurm driver of a tuning reads it).
    #[arg(long)]
    pub out: Option<PathBuf>,
}

/// `dhumbal-run validate`.
pub fn validate(args: ValidateArgs) -> anyhow::Result<ExitCode> {
    let path = args.scenario;
    let overrides = Overrides {
        seed: args.seed,
        rounds: args.rounds,
        out: args.out,
        ..Overrides::default()
    };
    let scenario = match settings::load(&path, &overrides) {
        Ok(s) => s,
        Err(code) => return Ok(code),
    };
    for line in crate::experiment::stages::describe(&scenario) {
        println!("{line}");
    }
    println!("{} is valid", path.display());
    Ok(ExitCode::SUCCESS)
}
