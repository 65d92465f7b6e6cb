//! `dhumbal-run merge DIR...`: checks and finishes a study played as shards.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use clap::Args;

use dhumbal_runner::folder;
use dhumbal_runner::run as runner;
use dhumbal_runner::scenario::Overrides;

use super::progress::Terminal;
use super::run;
use super::settings;

/// `dhumbal-run merge`.
#[derive(Args, Debug)]
pub struct MergeArgs {
    /// The shards' folder(s).
    #[arg(required = true, num_args = 1..)]
    pub dirs: Vec<PathBuf>,
    /// Where the merged study goes (needed with several DIRs; default: DIR itself).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Replace another run's results in the --out folder.
    #[arg(long)]
    pub force: bool,
    /// Also write each stage's records as rounds.csv.
    #[arg(long)]
    pub csv: bool,
    /// Do not write the statistics reports.
    #[arg(long)]
    pub no_report: bool,
}

/// `dhumbal-run merge`.
pub fn merge(args: MergeArgs) -> anyhow::Result<ExitCode> {
    let MergeArgs {
        dirs,
        out,
        force,
        csv,
        no_report,
    } = args;
    let target = match (&out, dirs.as_slice()) {
        (Some(out), _) => out.clone(),
        (None, [one]) => one.clone(),
        (None, _) => {
            eprintln!("error: merging several folders needs --out (where the merged study goes)");
            return Ok(ExitCode::from(2));
        }
    };
    let saved = folder::saved_run(&dirs[0])?;
    let overrides = Overrides {
        seed: saved.command_line.seed,
        rounds: saved.command_line.rounds,
        trace: saved.command_line.trace.clone(),
        out: Some(target.clone()),
    };
    let scenario = match settings::load(&saved.scenario, &overrides) {
        Ok(s) => s,
        Err(code) => return Ok(code),
    };
    let reporter = Terminal::new(!no_report, Arc::new(AtomicBool::new(false)), String::new());
    let report = runner::merge(
        &scenario,
        &runner::MergeOptions { dirs, force, csv },
        &reporter,
    )?;
    println!(
        "merged {} rounds of {} stage(s) into {}",
        report.rounds,
        report.stages.len(),
        target.display()
    );
    if !no_report {
        run::overview(&target, &target);
    }
    Ok(ExitCode::SUCCESS)
}
