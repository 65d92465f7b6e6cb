//! `dhumbal-run SCENARIO` (and `run`): plays a scenario's stages with progress and Ctrl-C
//! handled, trains first any checkpoint its agents need that is not there yet, and writes the
//! reports; `--shard` plays one share of a study split over machines.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Args;

use dhumbal_runner::folder::CommandLine;
use dhumbal_runner::run::{self as runner, Interrupted, RunOptions};
use dhumbal_runner::scenario::{Overrides, Scenario};

use super::interrupt::Interrupt;
use super::progress::Terminal;
use super::settings::{self, Threads, shell_word};
use super::train;
use super::tune;

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

/// `dhumbal-run SCENARIO`.
pub fn run(args: RunArgs) -> anyhow::Result<ExitCode> {
    // Before the scenario is read, so that the clock's rate is measured by the time play
    // needs it.
    dhumbal_runner::clock::calibrate_in_background();
    let path = args.scenario.clone().expect("checked by the caller");
    let overrides = Overrides {
        seed: args.seed,
        rounds: args.rounds,
        out: args.out.clone(),
        trace: args.trace.clone(),
    };
    let shard = match args.shard.as_deref().map(shard_of) {
        None => None,
        Some(Ok(shard)) => Some(shard),
        Some(Err(message)) => {
            eprintln!("error: --shard {message}");
            return Ok(ExitCode::from(2));
        }
    };
    let mut scenario = match settings::load(&path, &overrides) {
        Ok(s) => s,
        Err(code) => return Ok(code),
    };
    // The sections that produce an agent (`train:` writes checkpoints and policy tables,
    // `tune:` agent files) are one mechanism: what a section writes is made when it is
    // missing (all of it, for a file that only trains or tunes), trainings first (a tuning may
    // seat a trained agent), and the scenario is read again after each kind, so that the
    // seats find what was made.
    let only = scenario.stages.is_empty();
    let how = train::How {
        threads: args.threads,
        resume: args.resume || !only,
        force: args.force && only,
        overrides: &overrides,
    };
    if shard.is_none() || only {
        let missing: Vec<usize> = (0..scenario.trainings.len())
            .filter(|&i| only || !scenario.trainings[i].output().exists())
            .collect();
        if !missing.is_empty() {
            // A training into a missing checkpoint starts afresh (nothing to resume).
            let how = train::How {
                resume: args.resume && only,
                ..how
            };
            let code = train::trainings(&path, &scenario, &missing, &how)?;
            if code != ExitCode::SUCCESS {
                return Ok(code);
            }
            scenario = match settings::load(&path, &overrides) {
                Ok(s) => s,
                Err(code) => return Ok(code),
            };
        }
        // A tuning is missing when its agent file is, or when its search finished here but its
        // confirmation did not (stopped by Ctrl-C or a kill).
        let missing: Vec<usize> = (0..scenario.tunings.len())
            .filter(|&i| {
                let t = &scenario.tunings[i];
                let dir = t.dir(&scenario);
                only || !t.output.exists()
                    || (t.confirm.is_some()
                        && dir.join(dhumbal_runner::tune::LOG).exists()
                        && !dir.join("confirm/stats.json").exists())
            })
            .collect();
        if !missing.is_empty() {
            let code = tune::tunings(&path, &scenario, &missing, &how)?;
            if code != ExitCode::SUCCESS {
                return Ok(code);
            }
            scenario = match settings::load(&path, &overrides) {
                Ok(s) => s,
                Err(code) => return Ok(code),
            };
        }
        if only {
            return Ok(ExitCode::SUCCESS);
        }
    }
    let mut base = settings::command(&path, args.out.as_deref(), args.seed, args.rounds);
    if !args.trace.is_empty() {
        let deals: Vec<String> = args.trace.iter().map(u64::to_string).collect();
        base.push_str(&format!(" --trace {}", deals.join(",")));
    }
    // A shard's command for shard I of a stage (what its messages tell to run next).
    let shard_base = base.clone();
    // How to finish this run if it is interrupted: the same file and settings, --resume (a
    // shard: the same command again).
    let resume_command = match shard {
        None => format!("{base} --resume"),
        Some(s) => {
            let stages: String = args
                .stages
                .iter()
                .map(|n| format!(" --stage {}", shell_word(n)))
                .collect();
            format!("{base} --shard {s}{stages}")
        }
    };
    play(
        &scenario,
        RunSettings {
            threads: args.threads,
            resume: args.resume,
            force: args.force,
            report: !args.no_report && shard.is_none(),
            csv: args.csv,
            shard,
            stages: args.stages.clone(),
            command_line: CommandLine {
                seed: args.seed,
                rounds: args.rounds,
                trace: args.trace.clone(),
            },
            resume_command,
            shard_base: shard_base.clone(),
        },
    )
    .map(|_| ExitCode::SUCCESS)
    .or_else(interrupted)
    .or_else(|e| waiting(e, &scenario, &shard_base, shard))
}

/// Exit code 3 and what to do for a shard whose stage waits for an earlier one (what it
/// played is printed by [`play`]); other errors go on to `main`.
fn waiting(
    e: anyhow::Error,
    scenario: &Scenario,
    base: &str,
    shard: Option<runner::Shard>,
) -> anyhow::Result<ExitCode> {
    let (Some(w), Some(shard)) = (e.downcast_ref::<runner::Waiting>(), shard) else {
        return Err(e);
    };
    let owing = w
        .shard_stages
        .iter()
        .find(|s| s.name == w.waits_for)
        .map(|s| s.shards_missing.clone())
        .unwrap_or_default();
    eprintln!(
        "not yet: stage `{}` seats the winner of stage `{}`, whose records are not complete{}. \
         What this shard played is kept, and this same command succeeds once `{}` is complete.",
        w.stage,
        w.waits_for,
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
    Ok(ExitCode::from(3))
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
        return runner::Shard::parse(value);
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

/// How a scenario is to be played.
pub struct RunSettings {
    pub threads: Threads,
    pub resume: bool,
    pub force: bool,
    pub report: bool,
    pub csv: bool,
    pub shard: Option<runner::Shard>,
    pub stages: Vec<String>,
    pub command_line: CommandLine,
    /// The command that finishes the run after an interruption.
    pub resume_command: String,
    /// A shard's command without `--shard` and `--stage` (the scenario and settings), which
    /// its messages complete to say what to run next.
    pub shard_base: String,
}

/// Plays a loaded scenario with progress on the terminal and Ctrl-C handled: the first stops
/// the run cleanly (finished records saved), a second quits at once.
pub fn play(scenario: &Scenario, settings: RunSettings) -> anyhow::Result<runner::RunReport> {
    let threads = settings.threads.count();
    settings::describe(scenario);
    println!(
        "  {threads} threads{}",
        match (&settings.shard, settings.resume) {
            (Some(s), _) => format!(", shard {s}"),
            (None, true) => ", resuming".to_string(),
            (None, false) => String::new(),
        }
    );
    let interrupt = Interrupt::install()?;
    let reporter = Terminal::new(
        settings.report,
        interrupt.flag(),
        settings.resume_command.clone(),
    );
    let result = runner::run(
        scenario,
        &RunOptions {
            threads,
            resume: settings.resume,
            force: settings.force,
            shard: settings.shard,
            stages: settings.stages.clone(),
            csv: settings.csv,
            command_line: settings.command_line,
            stop: interrupt.flag(),
        },
        &reporter,
    );
    reporter.end_stage();
    if let (Some(shard), Err(e)) = (settings.shard, &result)
        && let Some(w) = e.downcast_ref::<runner::Waiting>()
    {
        // What the shard played before it had to stop: the caller says why and what next.
        let waits = Some((w.stage.as_str(), w.waits_for.as_str()));
        shard_played(
            scenario,
            shard,
            w.rounds_now,
            w.seconds,
            &w.shard_stages,
            waits,
        );
    }
    let report = result.map_err(|e| match e.downcast::<Interrupted>() {
        Ok(i) => anyhow::Error::new(ResumeWith(i, settings.resume_command.clone())),
        Err(e) => e,
    })?;
    for warning in &report.warnings {
        eprintln!("warning: {warning}");
    }
    if let Some(shard) = settings.shard {
        shard_played(
            scenario,
            shard,
            report.rounds_now,
            report.seconds,
            &report.shard_stages,
            None,
        );
        print!(
            "{}",
            next_steps(scenario, &settings.shard_base, shard, &report.shard_stages)
        );
        return Ok(report);
    }
    let earlier = report.rounds.saturating_sub(report.rounds_now);
    println!(
        "{} rounds in {:.2} s ({:.0} rounds/s){}; records, summary and manifest in {}",
        report.rounds_now,
        report.seconds,
        report.rounds_now as f64 / report.seconds.max(1e-9),
        if earlier > 0 {
            format!(", after {earlier} rounds played before the interruption")
        } else {
            String::new()
        },
        scenario.output.dir.display()
    );
    if !scenario.output.trace.is_empty() {
        // Where the traces are and how to look at them: a stage's, or once for all the
        // points of a sweep (each point's folder has its own).
        let mut sweeps_told: Vec<&str> = Vec::new();
        for (i, stage) in scenario.stages.iter().enumerate() {
            let traces = scenario
                .stage_dir(i)
                .join(dhumbal_runner::trace::TRACES_DIR);
            if let Some(sweep) = stage.spec["sweep"]["name"].as_str() {
                if traces.is_dir() && !sweeps_told.contains(&sweep) {
                    sweeps_told.push(sweep);
                    let points = scenario
                        .stages
                        .iter()
                        .filter(|s| s.spec["sweep"]["name"].as_str() == Some(sweep))
                        .count();
                    println!(
                        "traces of the {points} points of sweep `{sweep}` in {}/<point>/{} (open \
                         a point's replay.html in a browser, or `dhumbal-run show {} --stage \
                         {} --deal N`)",
                        scenario.output.dir.join(sweep).display(),
                        dhumbal_runner::trace::TRACES_DIR,
                        shell_word(&scenario.output.dir.display().to_string()),
                        shell_word(&stage.name),
                    );
                }
                continue;
            }
            if traces.is_dir() {
                let stage_flag = if scenario.staged {
                    format!(" --stage {}", shell_word(&stage.name))
                } else {
                    String::new()
                };
                println!(
                    "traces of stage `{}` in {} (open replay.html in a browser, or `dhumbal-run \
                     show {}{stage_flag} --deal N`)",
                    stage.name,
                    traces.display(),
                    shell_word(&scenario.output.dir.display().to_string()),
                );
            }
        }
    }
    if settings.report {
        overview(
            &scenario.output.dir,
            &scenario.output.dir,
            &Default::default(),
        );
    }
    Ok(report)
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
            _ => format!(
                "played {} rounds, this shard's share (units {}..{} of {})",
                stage.rounds_now, stage.share.start, stage.share.end, stage.units
            ),
        };
        let state = if stage.complete {
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

/// Writes the overview page of a run of several stages (`report.md` at its root), or says why
/// it could not (the stages' reports stand either way).
pub fn overview(run: &Path, reports: &Path, ratings: &dhumbal_report::ratings::RatingSettings) {
    match dhumbal_report::write_overview(run, reports, ratings) {
        Ok(Some(path)) => println!("overview of the stages in {}", path.display()),
        Ok(None) => {}
        Err(e) => eprintln!(
            "warning: the overview page could not be written ({e:#}); the stages' reports \
             stand, and `dhumbal-run report {}` can retry",
            shell_word(&run.display().to_string())
        ),
    }
}

/// An interruption, with the command that finishes the run.
#[derive(Debug)]
struct ResumeWith(Interrupted, String);

impl std::fmt::Display for ResumeWith {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}\nTo finish the run: {}", self.0, self.1)
    }
}

impl std::error::Error for ResumeWith {}

/// Exit code 130 (the shell's code for Ctrl-C) and the message for an interruption; other
/// errors go on to `main`.
pub fn interrupted(e: anyhow::Error) -> anyhow::Result<ExitCode> {
    match e.downcast_ref::<ResumeWith>() {
        Some(r) => {
            eprintln!("\n{r}");
            Ok(ExitCode::from(130))
        }
        None => Err(e),
    }
}
