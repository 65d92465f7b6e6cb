//! `dhumbal-run SCENARIO` (and `run`): the experiment engine ([`crate::experiment`]) with
//! the terminal as its front end (progress, Ctrl-C); `--shard` plays one share of a study
//! split over machines, and says what it played and what is left.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

use dhumbal_runner::run as runner;
use dhumbal_runner::scenario::{Overrides, Scenario};

use super::console::Console;
use super::settings::{Threads, shell_word};
use crate::experiment::{self, Mode, Options};

#[derive(Args, Debug, Clone)]
pub struct RunArgs {
    /// The scenario file to run.
    pub scenario: Option<PathBuf>,
    /// Output folder (default: the scenario's `output.dir`, else reports/<name>).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Replace the scenario's seed.
    #[arg(long)]
    pub seed: Option<u64>,
    /// Replace every stage's sample size: deals (coin scoring) or games (point scoring).
    #[arg(long)]
    pub rounds: Option<u64>,
    /// Also trace these deals (games, for point scoring), comma-separated: every event of
    /// each, under every seating arrangement, to <stage>/traces/ (as `output: {trace:
    /// {deals: [...]}}` does; see docs/traces.md and `dhumbal-run show`).
    #[arg(long, value_name = "DEALS", value_delimiter = ',')]
    pub trace: Vec<u64>,
    #[command(flatten)]
    pub threads: Threads,
    /// Finish an interrupted run in the output folder, to exactly the records an uninterrupted
    /// run gives (the same scenario, scripts, --seed and --rounds are needed).
    #[arg(long, conflicts_with = "force")]
    pub resume: bool,
    /// Replace the results of an earlier run in the output folder (without it, a folder that
    /// holds another run's results is refused). Only files a run writes are removed.
    #[arg(long)]
    pub force: bool,
    /// Do not write the statistics report (report.md, stats.json, tables/, figures/) after
    /// each stage; `dhumbal-run report DIR` can write it later.
    #[arg(long)]
    pub no_report: bool,
    /// Also write each stage's records as rounds.csv (as `output: {csv: true}` does); the
    /// Parquet dataset rounds/ is always written.
    #[arg(long)]
    pub csv: bool,
    /// Play one shard of a study split over machines: I/N plays the I-th (from 0) of N
    /// contiguous shares of every stage. Without a value, the share is the Slurm array task's
    /// (SLURM_ARRAY_TASK_ID and SLURM_ARRAY_TASK_COUNT). Shards share the output folder and
    /// play only units no part holds yet (a failed shard is run again as it was); `dhumbal-run
    /// merge DIR` then checks and finishes the study. See docs/cluster.md.
    #[arg(long, value_name = "I/N", num_args = 0..=1, default_missing_value = "slurm",
          conflicts_with_all = ["resume", "force"])]
    pub shard: Option<String>,
    /// With --shard: play only this stage (repeatable). The stages it seats winners of must
    /// be complete on disk first (on Slurm, a job dependency waits for them).
    #[arg(long = "stage", value_name = "NAME", requires = "shard")]
    pub stages: Vec<String>,
}

/// `dhumbal-run SCENARIO`: the experiment engine with the terminal as its front end; a
/// shard's run also says what it played and what is left.
pub fn run(args: RunArgs) -> anyhow::Result<ExitCode> {
    let path = args.scenario.clone().expect("checked by the caller");
    let shard = match args.shard.as_deref().map(shard_of) {
        None => None,
        Some(Ok(shard)) => Some(shard),
        Some(Err(message)) => {
            eprintln!("error: --shard {message}");
            return Ok(ExitCode::from(2));
        }
    };
    let options = Options {
        threads: args.threads.threads,
        mode: Mode::from_flags(args.resume, args.force),
        overrides: Overrides {
            seed: args.seed,
            rounds: args.rounds,
            out: args.out.clone(),
            trace: args.trace.clone(),
        },
        report: !args.no_report,
        csv: args.csv,
        shard,
        stages: args.stages.clone(),
    };
    let console = Console::new()?;
    let result = experiment::run(&path, &options, &console);
    drop(console);
    // A shard's command without `--shard` and `--stage` (what its messages complete).
    let base = experiment::command(&path, &options.overrides);
    match result {
        Ok(outcome) => {
            if let (Some(shard), Some(report)) = (shard, &outcome.played) {
                // Loaded once more for the stage list (the experiment has read it already,
                // so it reads).
                let scenario = experiment::load(&path, &options.overrides)?;
                shard_played(
                    &scenario,
                    shard,
                    report.rounds_now,
                    report.seconds,
                    &report.shard_stages,
                    None,
                );
                print!(
                    "{}",
                    next_steps(&scenario, &base, shard, &report.shard_stages)
                );
            }
            Ok(ExitCode::SUCCESS)
        }
        Err(experiment::Error::NotYet {
            waiting,
            shard: Some(shard),
        }) => {
            let scenario = experiment::load(&path, &options.overrides)?;
            // What the shard played before it had to stop, then why and what next.
            let waits = Some((waiting.stage.as_str(), waiting.waits_for.as_str()));
            shard_played(
                &scenario,
                shard,
                waiting.rounds_now,
                waiting.seconds,
                &waiting.shard_stages,
                waits,
            );
            waiting_message(&waiting, &scenario, &base, shard);
            Ok(ExitCode::from(3))
        }
        Err(e) => Ok(super::exit_with(e)),
    }
}

/// Why a shard's stage waits for an earlier one, and what to do (what it played is printed
/// by [`shard_played`]).
fn waiting_message(w: &runner::Waiting, scenario: &Scenario, base: &str, shard: runner::Shard) {
    let owing = w
        .shard_stages
        .iter()
        .find(|s| s.name == w.waits_for)
        .map(|s| s.shards_missing.clone())
        .unwrap_or_default();
    eprintln!(
        "not yet: stage `{}` {}, whose records are not complete{}. \
         What this shard played is kept, and this same command succeeds once `{}` is complete.",
        w.stage,
        w.relation(),
        if owing.is_empty() {
            String::new()
        } else {
            format!(
                ": {} {} share of it",
                shard_list(&owing, shard.count),
                if owing.len() == 1 {
                    "has not finished its"
                } else {
                    "have not finished their"
                }
            )
        },
        w.waits_for
    );
    eprint!("{}", next_steps(scenario, base, shard, &w.shard_stages));
    eprintln!(
        "On Slurm, scripts/slurm/submit.sh submits each stage's shards as an array that waits \
         for the one before (afterok), so no task starts too early."
    );
}

/// Where a sequential test played one look per wave of shards stands.
fn looks_state(looks: &runner::Looks) -> String {
    if looks.decided {
        return format!(
            "complete: the test ended after {} matches (of at most {})",
            looks.matches_done, looks.max
        );
    }
    let next = (looks.matches_done / looks.every.max(1)) * looks.every;
    format!(
        "the test has not decided: {} of at most {} matches on disk; its next look plays \
         matches {}..{} (every shard plays its share of each look, one wave per look)",
        looks.matches_done,
        looks.max,
        next,
        (next + looks.every).min(looks.max)
    )
}

/// `shards 1/3, 2/3` (`shard 1/3` for one; the first eight and a count for more).
fn shard_list(shards: &[u64], count: u64) -> String {
    let mut names: Vec<String> = shards
        .iter()
        .take(8)
        .map(|i| format!("{i}/{count}"))
        .collect();
    if shards.len() > 8 {
        names.push(format!("... ({} shards)", shards.len()));
    }
    format!(
        "{} {}",
        if shards.len() == 1 { "shard" } else { "shards" },
        names.join(", ")
    )
}

/// What a shard's study still needs, stage by stage, with the commands, then the merge.
fn next_steps(
    scenario: &Scenario,
    base: &str,
    shard: runner::Shard,
    stages: &[runner::ShardStage],
) -> String {
    let dir = shell_word(&scenario.output.dir.display().to_string());
    if stages.iter().all(|s| s.complete) {
        return format!(
            "Every unit of every stage is on disk: `dhumbal-run merge {dir}` checks them and \
             writes the summaries, the manifest and the reports.\n"
        );
    }
    let mut text = "Next (merge writes the reports once every stage is complete, so each stage's \
         shards come first):\n"
        .to_string();
    for stage in stages.iter().filter(|s| !s.complete) {
        let flag = if scenario.staged {
            format!(" --stage {}", shell_word(&stage.name))
        } else {
            String::new()
        };
        let missing = &stage.shards_missing;
        if stage.looks.is_some() {
            text.push_str(&format!(
                "  stage `{}`: a sequential test, one look per wave: {base} --shard I/{n}{flag}, \
                 for each I from 0 to {}, again after each wave until it decides \
                 (scripts/slurm/drive.sbatch does this on Slurm)\n",
                stage.name,
                shard.count - 1,
                n = shard.count
            ));
            continue;
        }
        let run = match missing.as_slice() {
            [] => format!("{base} --shard I/{}{flag}", shard.count),
            [one] => format!("{base} --shard {one}/{}{flag}", shard.count),
            _ if missing.len() as u64 == shard.count => format!(
                "{base} --shard I/{n}{flag}, for each I from 0 to {}",
                shard.count - 1,
                n = shard.count
            ),
            _ => {
                let list: Vec<String> = missing.iter().take(8).map(u64::to_string).collect();
                format!(
                    "{base} --shard I/{n}{flag}, for I = {}{}",
                    list.join(", "),
                    if missing.len() > 8 { ", ..." } else { "" },
                    n = shard.count
                )
            }
        };
        let who = if missing.len() as u64 == shard.count {
            "every shard (its wave)".to_string()
        } else {
            format!("{} to finish", shard_list(missing, shard.count))
        };
        text.push_str(&format!("  stage `{}`: {who}: {run}\n", stage.name));
    }
    text.push_str(&format!(
        "  then: dhumbal-run merge {dir} (checks every stage, writes the summaries, the manifest \
         and the reports)\n"
    ));
    text
}

/// The shard `--shard` names: `I/N`, or (`slurm`, the flag without a value) the Slurm array
/// task's: its index from the array's first (SLURM_ARRAY_TASK_ID - SLURM_ARRAY_TASK_MIN) of
/// SLURM_ARRAY_TASK_COUNT tasks (or MAX - MIN + 1 where the count is not set).
pub fn shard_of(value: &str) -> Result<runner::Shard, String> {
    if value != "slurm" {
        return runner::Shard::parse(value).map_err(|e| e.to_string());
    }
    let var = |name: &str| -> Result<Option<u64>, String> {
        match std::env::var(name) {
            Ok(v) => v
                .trim()
                .parse()
                .map(Some)
                .map_err(|_| format!("(from Slurm): {name}={v} is not a number")),
            Err(_) => Ok(None),
        }
    };
    let Some(id) = var("SLURM_ARRAY_TASK_ID")? else {
        return Err("without I/N reads the shard from a Slurm array job, and \
                    SLURM_ARRAY_TASK_ID is not set: give the shard as I/N (say 0/4), or run \
                    it as a task of `sbatch --array` (scripts/slurm/)"
            .into());
    };
    // The study's number of shards, when given (scripts/slurm/ sets it): the task id is then
    // the shard itself, so that failed tasks can be resubmitted alone (`--array=5,9`).
    if let Some(count) = var("DHUMBAL_SHARDS")? {
        return runner::Shard::parse(&format!("{id}/{count}"))
            .map_err(|e| format!("(from SLURM_ARRAY_TASK_ID and DHUMBAL_SHARDS): {e}"));
    }
    if var("SLURM_ARRAY_TASK_STEP")?.is_some_and(|step| step != 1) {
        return Err(
            "(from Slurm): the array has a step other than 1; submit it as \
                    --array=0-N (scripts/slurm/submit.sh does), or set DHUMBAL_SHARDS to the \
                    study's number of shards"
                .into(),
        );
    }
    let min = var("SLURM_ARRAY_TASK_MIN")?.unwrap_or(0);
    let max = var("SLURM_ARRAY_TASK_MAX")?;
    let count = match (var("SLURM_ARRAY_TASK_COUNT")?, max) {
        (Some(n), Some(max)) if n != max.saturating_sub(min) + 1 => {
            return Err(format!(
                "(from Slurm): the array's {n} tasks are not a range ({min}-{max}), so the \
                 shards cannot be told from it: set DHUMBAL_SHARDS to the study's number of \
                 shards (say, resubmitting tasks 5 and 9 of 16: DHUMBAL_SHARDS=16 sbatch \
                 --array=5,9 ...)"
            ));
        }
        (Some(n), _) => n,
        (None, Some(max)) => max.saturating_sub(min) + 1,
        (None, None) => {
            return Err("(from Slurm): neither SLURM_ARRAY_TASK_COUNT nor \
                        SLURM_ARRAY_TASK_MAX is set"
                .into());
        }
    };
    runner::Shard::parse(&format!("{}/{count}", id.saturating_sub(min)))
        .map_err(|e| format!("(from Slurm): {e}"))
}

/// What a shard played, stage by stage, and where each stage stands; `waits`: the stage it
/// stopped at, and the stage that one waits for.
fn shard_played(
    scenario: &Scenario,
    shard: runner::Shard,
    rounds: u64,
    seconds: f64,
    stages: &[runner::ShardStage],
    waits: Option<(&str, &str)>,
) {
    println!(
        "shard {shard}: {rounds} rounds in {seconds:.2} s ({:.0} rounds/s), in {}",
        rounds as f64 / seconds.max(1e-9),
        scenario.output.dir.display()
    );
    for stage in stages {
        let played = match waits {
            Some((at, of)) if at == stage.name => {
                format!("not played: it waits for `{of}` (below)")
            }
            _ if !stage.played => "not played by this command".to_string(),
            _ if stage.rounds_now == 0 => format!(
                "this shard's share (units {}..{} of {}) was on disk already: nothing to play",
                stage.share.start, stage.share.end, stage.units
            ),
            _ if stage.looks.is_some() => format!(
                "played {} rounds, this shard's share of the test's look",
                stage.rounds_now
            ),
            _ => format!(
                "played {} rounds, this shard's share (units {}..{} of {})",
                stage.rounds_now, stage.share.start, stage.share.end, stage.units
            ),
        };
        let state = if let Some(looks) = stage.looks {
            looks_state(&looks)
        } else if stage.complete {
            "complete: every unit is on disk".to_string()
        } else if stage.shards_missing.len() as u64 == shard.count {
            "not started: no shard's share is on disk yet".to_string()
        } else {
            let mine = stage.shards_missing.contains(&shard.index);
            format!(
                "not complete: {} {} share{}",
                shard_list(&stage.shards_missing, shard.count),
                if stage.shards_missing.len() == 1 {
                    "has not finished its"
                } else {
                    "have not finished their"
                },
                if mine || !stage.played {
                    ""
                } else {
                    " (this shard's is on disk)"
                }
            )
        };
        println!("  stage `{}`: {played}; {state}", stage.name);
    }
}
