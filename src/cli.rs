//! The `dhumbal-run` command line: argument parsing, progress and terminal output, over the
//! library. Exit codes: 0 success, 1 a failure while running, 2 bad input (arguments, a
//! scenario file, or records given to `report` that cannot be read or make no sense), 3 not
//! yet (a shard's stage waits for an earlier stage), 130 interrupted.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::Context as _;
use clap::{Args, CommandFactory, Parser, Subcommand, ValueEnum};
use indicatif::{ProgressBar, ProgressStyle};

use dhumbal_agents::registry;
use dhumbal_runner::bench::{self, BenchConfig, Generator};
use dhumbal_runner::folder::{self, CommandLine, Refusal};
use dhumbal_runner::run::{self as runner, Interrupted, Reporter, RunOptions, StageResult};
use dhumbal_runner::scenario::{self, AgentDef, Overrides, Scenario, Stage};
use dhumbal_runner::tournament::Pulse;

#[derive(Parser, Debug)]
#[command(
    name = "dhumbal-run",
    version,
    about = "Seeded, parallel experiments on the card game Dhumbal (Jhyap, Yaniv)",
    long_about = "Seeded, parallel experiments on the card game Dhumbal (Jhyap, Yaniv).\n\n\
        `dhumbal-run SCENARIO.yaml` plays the tournaments a scenario file describes and writes, \
        per stage, rounds/ (the records, one row per round and seat, as a Parquet dataset; \
        rounds.csv too with --csv), summary.csv (one row per agent), manifest.json (what ran, how fast) and a statistics report (report.md, \
        stats.json, tables/, figures/; see `dhumbal-run report`) to reports/<name>/, with a copy \
        of the scenario and its scripts in source/ (`dhumbal-run rerun DIR` plays them again). \
        The same scenario gives the same records whatever the thread count.\n\n\
        A folder holding another run's results is never overwritten unless --force is given. \
        Ctrl-C stops a run with the finished records saved; --resume finishes it. A study too \
        big for one machine runs as shards (--shard I/N, or a Slurm array job) that `dhumbal-run \
        merge` puts together; see docs/cluster.md.\n\n\
        Exit codes: 0 success, 1 a failure while running, 2 bad input (arguments, scenario \
        file, a folder holding something else), 3 not yet (a shard's stage waits for an \
        earlier stage that other shards are still playing), 130 interrupted (Ctrl-C).",
    args_conflicts_with_subcommands = true,
    after_help = "Examples:\n  dhumbal-run scenarios/paper/table1.yaml\n  dhumbal-run validate scenarios/championship.yaml\n  \
        dhumbal-run scenarios/championship.yaml --threads 8 --out /tmp/champ\n  dhumbal-run scenarios/big.yaml --resume\n  \
        dhumbal-run rerun /tmp/champ --out /tmp/champ-again\n  \
        dhumbal-run scenarios/big.yaml --out /shared/big --shard 0/4   (then 1/4, 2/4, 3/4)\n  \
        dhumbal-run merge /shared/big\n  \
        dhumbal-run report /tmp/champ --definitions paper --out /tmp/champ-paper\n  dhumbal-run plan scenarios/championship.yaml --delta 0.05"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,
    #[command(flatten)]
    pub run: RunArgs,
}

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
    /// Worker threads (default: all cores). Results do not depend on it.
    #[arg(long)]
    pub threads: Option<usize>,
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

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Run a scenario (the same as `dhumbal-run SCENARIO`).
    Run(RunArgs),
    /// Play a results folder's scenario again from the folder alone (its copy of the
    /// scenario, scripts and command-line settings in source/) and check that the records are
    /// the same, bit for bit (decision times aside).
    Rerun {
        /// A run's output folder.
        dir: PathBuf,
        /// Where the new run goes (default: DIR-rerun).
        #[arg(long)]
        out: Option<PathBuf>,
        /// Worker threads (default: all cores). Results do not depend on it.
        #[arg(long)]
        threads: Option<usize>,
        /// Replace an earlier rerun in the --out folder.
        #[arg(long)]
        force: bool,
        /// Do not write statistics reports for the new run.
        #[arg(long)]
        no_report: bool,
    },
    /// Finish a study played as shards (`--shard`): check that every stage's parts hold each
    /// unit exactly once (one scenario, one program version, no gap, no overlap), then write
    /// the summaries, the manifest and the statistics reports, as a single run would. DIR is
    /// the folder the shards shared (finished in place); several DIRs (shards run with their
    /// own --out) are gathered into --out. The merged records equal a single run's.
    Merge {
        /// The shards' folder(s).
        #[arg(required = true, num_args = 1..)]
        dirs: Vec<PathBuf>,
        /// Where the merged study goes (needed with several DIRs; default: DIR itself).
        #[arg(long)]
        out: Option<PathBuf>,
        /// Replace another run's results in the --out folder.
        #[arg(long)]
        force: bool,
        /// Also write each stage's records as rounds.csv.
        #[arg(long)]
        csv: bool,
        /// Do not write the statistics reports.
        #[arg(long)]
        no_report: bool,
    },
    /// Train the learning agents a scenario declares (`train:`, docs/learning.md): DQN, Double
    /// DQN or PPO, against the opponents listed, with evaluation on fixed deals. Writes the
    /// checkpoint each entry names and <output>/train/<id>/ (episodes.parquet,
    /// evaluations.parquet, manifest.json, figures/). An existing checkpoint is continued only
    /// with --resume and replaced only with --force. Same seed, same threads: the same
    /// checkpoint, bit for bit. Networks need a build with the `torch` feature
    /// (scripts/run.sh); seed 001's tabular policies (`algorithm: q-learning` or
    /// `value-iteration`, docs/tabular.md) learn in any build, into a .csv table, afresh each
    /// time.
    #[command(after_help = train_help())]
    Train {
        scenario: PathBuf,
        /// Only these entries (by id; repeat the flag for several). Default: all.
        #[arg(long = "id", value_name = "ID")]
        ids: Vec<String>,
        /// Worker threads playing episodes (default: all cores). Results do not depend on it.
        #[arg(long)]
        threads: Option<usize>,
        /// Continue from the checkpoints (after Ctrl-C, a kill, or to train further).
        #[arg(long)]
        resume: bool,
        /// Train afresh, replacing existing checkpoints.
        #[arg(long)]
        force: bool,
        /// Where the training records go (default: the scenario's output folder).
        #[arg(long)]
        out: Option<PathBuf>,
    },
    /// Check a scenario file and print what it would run, without running it: every problem
    /// with its line, and one short deal played by each script agent to catch runtime errors.
    Validate {
        scenario: PathBuf,
        #[arg(long)]
        seed: Option<u64>,
        #[arg(long)]
        rounds: Option<u64>,
    },
    /// List the built-in agent kinds and their parameters with defaults.
    Agents,
    /// Print the JSON Schema of scenario files.
    Schema,
    /// Write the statistics of a finished run from its records alone: per stage report.md,
    /// stats.json, tables/ (CSV and LaTeX) and figures/ (SVG, PNG, PDF), beside the records or
    /// under --out; an existing report is replaced only with --force. See docs/analysis.md.
    /// Given a training's folder (`train/<id>/`), draws its four figures again (docs/learning.md).
    Report(ReportArgs),
    /// Sample size before a run: per stage, the deals (games under point scoring) needed to
    /// detect a difference DELTA in the headline outcome (win rate; games won under point
    /// scoring) at the Bonferroni level over the stage's pairs, and the power and minimum
    /// detectable difference of the scenario as written. With --pilot, from a pilot run's
    /// measured variances (the design as it is: paired deals, clustered games); without,
    /// only the paper's eq. 5 with every round counted as independent. See docs/analysis.md.
    Plan {
        scenario: PathBuf,
        /// The difference to detect in the win rate (games won under point scoring): 0.05 =
        /// 5 percentage points.
        #[arg(long, default_value_t = 0.05)]
        delta: f64,
        /// Two-sided significance level (before the Bonferroni correction).
        #[arg(long, default_value_t = 0.05)]
        alpha: f64,
        /// Target power.
        #[arg(long, default_value_t = 0.8)]
        power: f64,
        /// Replace every stage's sample size, as for a run.
        #[arg(long)]
        rounds: Option<u64>,
        /// A finished run (or stage folder) of the same design to plan from: each pair's
        /// measured SD of the deal (game) differences carries the design effect. Stages are
        /// matched by name (a one-stage scenario takes a one-stage pilot whatever its name).
        #[arg(long, value_name = "DIR")]
        pilot: Option<PathBuf>,
    },
    /// Measure engine throughput: rounds per second of the paper's Table I matchup
    /// (Aggressive, Conservative, Balanced, Opportunistic under the `paper` preset), on one
    /// thread and on all threads, with each random generator.
    Bench {
        /// Rounds per measurement.
        #[arg(long, default_value_t = 1_000_000)]
        rounds: u64,
        /// Thread counts to measure; default: 1 and all cores.
        #[arg(long, value_delimiter = ',')]
        threads: Vec<usize>,
        /// Generators to measure: chacha (per-deal ChaCha8 streams, the default for
        /// experiments), python (CPython's MT19937, for reproducing the paper); default: both.
        #[arg(long, value_delimiter = ',', value_parser = parse_generator)]
        generator: Vec<Generator>,
        /// Rounds per session (coins carry over within a session, as in the paper).
        #[arg(long, default_value_t = 1024)]
        session: u32,
        #[arg(long, default_value_t = 42)]
        seed: u64,
    },
}

/// `dhumbal-run report`.
#[derive(Args, Debug)]
pub struct ReportArgs {
    /// A run's output folder (with manifest.json), one stage's folder, or a training's
    /// folder (`train/<id>/`: its four figures are drawn again from its records).
    pub dir: PathBuf,
    /// Write the report here (one subfolder per stage for a staged run) instead of beside
    /// the records.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Replace an existing report at the destination (refused otherwise).
    #[arg(long)]
    pub force: bool,
    /// Whose metric definitions: ours, or the paper's (population SD in Cohen's d, the
    /// normal win interval, stars on Bonferroni-adjusted Welch p-values) to reproduce its
    /// numbers.
    #[arg(long, value_enum, default_value_t = DefinitionsArg::Ours)]
    pub definitions: DefinitionsArg,
    /// Family-wise significance level of the pairwise tests.
    #[arg(long, default_value_t = 0.05)]
    pub alpha: f64,
    /// Target power for minimum detectable effects and sample sizes.
    #[arg(long, default_value_t = 0.8)]
    pub power: f64,
    /// The win-rate difference of interest (0.05 = 5 percentage points).
    #[arg(long, default_value_t = 0.05)]
    pub delta: f64,
    /// Statistics and tables only, no figures.
    #[arg(long)]
    pub no_figures: bool,
    /// Draw each figure's title inside the image. Off by default: a paper puts the title in
    /// the caption, and report.md's captions carry it.
    #[arg(long)]
    pub titles: bool,
}

/// `report` of a training's folder (`<output>/train/<id>/`): its figures drawn again from its
/// records, into `figures/` beside them or under `--out`.
fn training_report(
    dir: &Path,
    out: Option<&Path>,
    force: bool,
    titles: bool,
) -> anyhow::Result<ExitCode> {
    let target = out.map_or_else(|| dir.join("figures"), Path::to_path_buf);
    let existing = std::fs::read_dir(&target).is_ok_and(|mut d| d.next().is_some());
    if existing && !force {
        eprintln!(
            "error: {} already holds figures; --force replaces them, --out writes elsewhere",
            target.display()
        );
        return Ok(ExitCode::from(2));
    }
    std::fs::create_dir_all(&target)
        .with_context(|| format!("cannot create {}", target.display()))?;
    match dhumbal_report::training::figures(dir, &target, titles) {
        Ok(files) => {
            println!(
                "training figures of {}: {} files in {}",
                dir.display(),
                files.len(),
                target.display()
            );
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => {
            eprintln!("error: {e:#}");
            Ok(ExitCode::from(2))
        }
    }
}

/// `--definitions` of `report`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum DefinitionsArg {
    /// Ours (docs/analysis.md).
    Ours,
    /// The paper's public code's, to reproduce its numbers.
    Paper,
}

/// `--generator`: the names a scenario's `generator:` takes.
fn parse_generator(s: &str) -> Result<Generator, String> {
    match s {
        "chacha" => Ok(Generator::Chacha),
        "python" => Ok(Generator::Python),
        _ => Err("expected chacha or python".into()),
    }
}

/// Runs the CLI; returns the process exit code.
pub fn main() -> ExitCode {
    main_from(std::env::args_os())
}

/// Runs the CLI on these arguments (the first is the program's name), as `dhumbal-run` would:
/// how the Python package's `dhumbal.run` runs a scenario in its own process.
pub fn main_from<I, T>(args: I) -> ExitCode
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            return if e.use_stderr() {
                ExitCode::from(2)
            } else {
                ExitCode::SUCCESS
            };
        }
    };
    let result = match cli.command {
        Some(Command::Run(args)) => run(args),
        None => match &cli.run.scenario {
            Some(path) => match unknown_command(path) {
                Some(message) => {
                    eprintln!("{message}");
                    return ExitCode::from(2);
                }
                None => run(cli.run),
            },
            None => {
                eprintln!(
                    "error: no scenario given\n\nUsage: dhumbal-run SCENARIO.yaml [OPTIONS], or see `dhumbal-run --help`"
                );
                return ExitCode::from(2);
            }
        },
        Some(Command::Rerun {
            dir,
            out,
            threads,
            force,
            no_report,
        }) => rerun(dir, out, threads, force, no_report),
        Some(Command::Merge {
            dirs,
            out,
            force,
            csv,
            no_report,
        }) => merge(dirs, out, force, csv, no_report),
        Some(Command::Validate {
            scenario,
            seed,
            rounds,
        }) => validate(scenario, seed, rounds),
        Some(Command::Train {
            scenario,
            ids,
            threads,
            resume,
            force,
            out,
        }) => train_command(scenario, ids, threads, resume, force, out),
        Some(Command::Agents) => {
            print_agents();
            Ok(ExitCode::SUCCESS)
        }
        Some(Command::Schema) => {
            println!(
                "{}",
                serde_json::to_string_pretty(&scenario::json_schema()).expect("JSON")
            );
            Ok(ExitCode::SUCCESS)
        }
        Some(Command::Bench {
            rounds,
            threads,
            generator,
            session,
            seed,
        }) => run_bench(rounds, threads, generator, session, seed),
        Some(Command::Report(args)) => report(args),
        Some(Command::Plan {
            scenario,
            delta,
            alpha,
            power,
            rounds,
            pilot,
        }) => plan(scenario, delta, alpha, power, rounds, pilot),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            if let Some(r) = e.downcast_ref::<Refusal>() {
                eprintln!("error: {r}");
                return ExitCode::from(2);
            }
            if let Some(w) = e.downcast_ref::<runner::Waiting>() {
                eprintln!("not yet: {w}");
                return ExitCode::from(3);
            }
            eprintln!("error: {e:#}");
            ExitCode::from(1)
        }
    }
}

/// A bare word that is neither a file nor a command (`dhumbal-run play`): the message that
/// says so, with the nearest command, instead of "cannot read the file".
fn unknown_command(path: &Path) -> Option<String> {
    let word = path.to_str()?;
    if path.exists() || path.extension().is_some() || word.contains(['/', '\\']) {
        return None;
    }
    let cli = Cli::command();
    let names: Vec<&str> = cli
        .get_subcommands()
        .map(|c| c.get_name())
        .filter(|n| *n != "help")
        .collect();
    let hint = dhumbal_agents::nearest(word, &names)
        .map(|n| format!(" Did you mean `dhumbal-run {n}`?"))
        .unwrap_or_default();
    Some(format!(
        "error: `{word}` is neither a command nor a scenario file.{hint}\n\n\
         Commands: {}; a scenario is a .yaml file (`dhumbal-run SCENARIO.yaml`). \
         See `dhumbal-run --help`.",
        names.join(", ")
    ))
}

fn load(path: &Path, overrides: &Overrides) -> Result<Scenario, ExitCode> {
    scenario::load(path, overrides).map_err(|e| {
        eprint!("error: {e}");
        ExitCode::from(2)
    })
}

fn describe(scenario: &Scenario) {
    println!(
        "scenario `{}` (seed {}), output {}",
        scenario.name,
        scenario.seed,
        scenario.output.dir.display()
    );
    for stage in &scenario.stages {
        let agents: Vec<String> = stage
            .seats
            .iter()
            .map(|s| match s {
                scenario::SeatEntry::Agent(d) => d.id.clone(),
                scenario::SeatEntry::WinnerOf(i) => {
                    format!("winner of `{}`", scenario.stages[*i].name)
                }
            })
            .collect();
        println!("  stage `{}`: {}", stage.name, stage.describe_sample());
        println!(
            "    {} players, agents: {}",
            stage.players(),
            agents.join(", ")
        );
    }
}

fn validate(path: PathBuf, seed: Option<u64>, rounds: Option<u64>) -> anyhow::Result<ExitCode> {
    let overrides = Overrides {
        seed,
        rounds,
        out: None,
    };
    let scenario = match load(&path, &overrides) {
        Ok(s) => s,
        Err(code) => return Ok(code),
    };
    describe(&scenario);
    println!("{} is valid", path.display());
    Ok(ExitCode::SUCCESS)
}

fn run(args: RunArgs) -> anyhow::Result<ExitCode> {
    let path = args.scenario.clone().expect("checked by the caller");
    if args.threads == Some(0) {
        eprintln!("error: --threads must be at least 1");
        return Ok(ExitCode::from(2));
    }
    let overrides = Overrides {
        seed: args.seed,
        rounds: args.rounds,
        out: args.out.clone(),
    };
    let shard = match args.shard.as_deref().map(shard_of) {
        None => None,
        Some(Ok(shard)) => Some(shard),
        Some(Err(message)) => {
            eprintln!("error: --shard {message}");
            return Ok(ExitCode::from(2));
        }
    };
    let mut scenario = match load(&path, &overrides) {
        Ok(s) => s,
        Err(code) => return Ok(code),
    };
    if scenario.stages.is_empty() && !scenario.trainings.is_empty() {
        // A file that only trains.
        let all: Vec<usize> = (0..scenario.trainings.len()).collect();
        return run_trainings(&scenario, &all, args.threads, args.resume, args.force);
    }
    // Checkpoints the tournament seats that a `train:` entry writes and that are not there
    // yet: trained first, then the scenario is read again with them.
    let missing: Vec<usize> = (0..scenario.trainings.len())
        .filter(|&i| !scenario.trainings[i].output().exists())
        .collect();
    if !missing.is_empty() && shard.is_none() {
        let code = run_trainings(&scenario, &missing, args.threads, false, false)?;
        if code != ExitCode::SUCCESS {
            return Ok(code);
        }
        scenario = match load(&path, &overrides) {
            Ok(s) => s,
            Err(code) => return Ok(code),
        };
    }
    let base = command(&path, args.out.as_deref(), args.seed, args.rounds);
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
            },
            resume_command,
        },
    )
    .map(|_| ExitCode::SUCCESS)
    .or_else(interrupted)
}

/// The shard `--shard` names: `I/N`, or (`slurm`, the flag without a value) the Slurm array
/// task's: its index from the array's first (SLURM_ARRAY_TASK_ID - SLURM_ARRAY_TASK_MIN) of
/// SLURM_ARRAY_TASK_COUNT tasks (or MAX - MIN + 1 where the count is not set).
fn shard_of(value: &str) -> Result<runner::Shard, String> {
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
struct RunSettings {
    threads: Option<usize>,
    resume: bool,
    force: bool,
    report: bool,
    csv: bool,
    shard: Option<runner::Shard>,
    stages: Vec<String>,
    command_line: CommandLine,
    /// The command that finishes the run after an interruption.
    resume_command: String,
}

/// Plays a loaded scenario with progress on the terminal and Ctrl-C handled: the first stops
/// the run cleanly (finished records saved), a second quits at once.
fn play(scenario: &Scenario, settings: RunSettings) -> anyhow::Result<runner::RunReport> {
    let threads = settings
        .threads
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    describe(scenario);
    println!(
        "  {threads} threads{}",
        match (&settings.shard, settings.resume) {
            (Some(s), _) => format!(", shard {s}"),
            (None, true) => ", resuming".to_string(),
            (None, false) => String::new(),
        }
    );
    let stop = Arc::new(AtomicBool::new(false));
    // The second Ctrl-C (the flag already set) exits at once with 130; the first sets it.
    signal_hook::flag::register_conditional_shutdown(
        signal_hook::consts::SIGINT,
        130,
        Arc::clone(&stop),
    )?;
    signal_hook::flag::register(signal_hook::consts::SIGINT, Arc::clone(&stop))?;
    let reporter = Terminal {
        report: settings.report,
        stage: Mutex::new(None),
        stop: Arc::clone(&stop),
        resume_command: settings.resume_command.clone(),
    };
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
            stop,
        },
        &reporter,
    );
    reporter.end_stage();
    let report = result.map_err(|e| match e.downcast::<Interrupted>() {
        Ok(i) => anyhow::Error::new(ResumeWith(i, settings.resume_command.clone())),
        Err(e) => e,
    })?;
    for warning in &report.warnings {
        eprintln!("warning: {warning}");
    }
    if let Some(shard) = settings.shard {
        println!(
            "shard {shard}: {} rounds in {:.2} s ({:.0} rounds/s), in {}",
            report.rounds_now,
            report.seconds,
            report.rounds_now as f64 / report.seconds.max(1e-9),
            scenario.output.dir.display()
        );
        for (stage, complete) in &report.shard_stages {
            println!(
                "  stage `{stage}`: {}",
                if *complete {
                    "every unit is on disk"
                } else {
                    "this shard's share is on disk; other shards' are not all there yet"
                }
            );
        }
        let dir = shell_word(&scenario.output.dir.display().to_string());
        if report.shard_stages.iter().all(|(_, complete)| *complete) {
            println!(
                "every unit of these stages is on disk: `dhumbal-run merge {dir}` finishes the study"
            );
        } else {
            println!("when every shard is done: dhumbal-run merge {dir}");
        }
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
    if settings.report {
        overview(&scenario.output.dir, &scenario.output.dir);
    }
    Ok(report)
}

/// Writes the overview page of a run of several stages (`report.md` at its root), or says why
/// it could not (the stages' reports stand either way).
fn overview(run: &Path, reports: &Path) {
    match dhumbal_report::write_overview(run, reports) {
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
fn interrupted(e: anyhow::Error) -> anyhow::Result<ExitCode> {
    match e.downcast_ref::<ResumeWith>() {
        Some(r) => {
            eprintln!("\n{r}");
            Ok(ExitCode::from(130))
        }
        None => Err(e),
    }
}

/// The command line that runs `scenario` with these settings (for messages).
fn command(scenario: &Path, out: Option<&Path>, seed: Option<u64>, rounds: Option<u64>) -> String {
    let mut line = format!(
        "dhumbal-run {}",
        shell_word(&scenario.display().to_string())
    );
    if let Some(out) = out {
        line.push_str(&format!(
            " --out {}",
            shell_word(&out.display().to_string())
        ));
    }
    if let Some(seed) = seed {
        line.push_str(&format!(" --seed {seed}"));
    }
    if let Some(rounds) = rounds {
        line.push_str(&format!(" --rounds {rounds}"));
    }
    line
}

/// `word` quoted for a POSIX shell when it needs it.
fn shell_word(word: &str) -> String {
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

/// `dhumbal-run merge`.
fn merge(
    dirs: Vec<PathBuf>,
    out: Option<PathBuf>,
    force: bool,
    csv: bool,
    no_report: bool,
) -> anyhow::Result<ExitCode> {
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
        out: Some(target.clone()),
    };
    let scenario = match load(&saved.scenario, &overrides) {
        Ok(s) => s,
        Err(code) => return Ok(code),
    };
    let reporter = Terminal {
        report: !no_report,
        stage: Mutex::new(None),
        stop: Arc::new(AtomicBool::new(false)),
        resume_command: String::new(),
    };
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
        overview(&target, &target);
    }
    Ok(ExitCode::SUCCESS)
}

fn rerun(
    dir: PathBuf,
    out: Option<PathBuf>,
    threads: Option<usize>,
    force: bool,
    no_report: bool,
) -> anyhow::Result<ExitCode> {
    if threads == Some(0) {
        eprintln!("error: --threads must be at least 1");
        return Ok(ExitCode::from(2));
    }
    let saved = folder::saved_run(&dir)?;
    let out = out.unwrap_or_else(|| {
        let mut name = dir
            .file_name()
            .map_or_else(|| "run".into(), |n| n.to_os_string());
        name.push("-rerun");
        dir.with_file_name(name)
    });
    let overrides = Overrides {
        seed: saved.command_line.seed,
        rounds: saved.command_line.rounds,
        out: Some(out.clone()),
    };
    let scenario = match load(&saved.scenario, &overrides) {
        Ok(s) => s,
        Err(code) => return Ok(code),
    };
    let report = match play(
        &scenario,
        RunSettings {
            threads,
            resume: false,
            force,
            report: !no_report,
            csv: false,
            shard: None,
            stages: Vec::new(),
            command_line: saved.command_line.clone(),
            // A rerun is a check from scratch: interrupted, it starts again.
            resume_command: format!(
                "dhumbal-run rerun {} --out {} --force",
                shell_word(&dir.display().to_string()),
                shell_word(&out.display().to_string())
            ),
        },
    ) {
        Ok(r) => r,
        Err(e) => return interrupted(e),
    };
    let mut differ = 0;
    for (i, stage) in report.stages.iter().enumerate() {
        let original = if scenario.staged {
            dir.join(&stage.name)
        } else {
            dir.clone()
        };
        match folder::same_records(&original, &scenario.stage_dir(i))? {
            Ok(rows) => println!(
                "stage `{}`: {rows} rows identical to {} (decision times aside)",
                stage.name,
                original.display()
            ),
            Err(why) => {
                differ += 1;
                println!(
                    "stage `{}`: records DIFFER from {}: {why}",
                    stage.name,
                    original.display()
                );
            }
        }
    }
    Ok(if differ == 0 {
        println!("rerun reproduces {}", dir.display());
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// Progress bar on a terminal, nothing otherwise; summaries on stdout.
struct Terminal {
    /// Write each stage's statistics report once its records are safe.
    report: bool,
    /// The stage in play: its bar, and the flag that ends its ticker.
    stage: Mutex<Option<(Option<ProgressBar>, Arc<AtomicBool>)>>,
    /// Set by Ctrl-C.
    stop: Arc<AtomicBool>,
    resume_command: String,
}

impl Terminal {
    /// Clears the bar and stops the ticker of the stage in play, if any.
    fn end_stage(&self) {
        if let Some((bar, over)) = self.stage.lock().expect("lock").take() {
            over.store(true, Ordering::Relaxed);
            if let Some(bar) = bar {
                bar.finish_and_clear();
            }
        }
    }
}

impl Reporter for Terminal {
    fn stage_start(
        &self,
        stage: &Stage,
        _lineup: &[AgentDef],
        units: u64,
        done: u64,
        pulse: &Arc<Pulse>,
    ) {
        self.end_stage();
        let per_unit = stage.session.map(u64::from);
        let bar = std::io::stderr().is_terminal().then(|| {
            let (len, unit) = match per_unit {
                Some(n) => (units * n, "rounds"),
                None => (units, "games"),
            };
            let bar = ProgressBar::new(len);
            bar.set_style(
                ProgressStyle::with_template(&format!(
                    "{{prefix}} [{{bar:40}}] {{human_pos}}/{{human_len}} {unit}{{msg}}, {{rate}}, ETA {{eta}}"
                ))
                .expect("template")
                .with_key("rate", |state: &indicatif::ProgressState, w: &mut dyn std::fmt::Write| {
                    let _ = write!(w, "{:.1}/s", state.per_sec());
                })
                .progress_chars("=> "),
            );
            bar.set_prefix(stage.name.clone());
            bar.set_position(done * per_unit.unwrap_or(1));
            bar.reset_eta();
            bar
        });
        let over = Arc::new(AtomicBool::new(false));
        // The ticker: moves the bar from the live counts several times a second, whatever
        // the agents' speed (records are written a chunk at a time), and says what Ctrl-C
        // does when it is pressed.
        {
            let (bar, over, pulse, stop) = (
                bar.clone(),
                Arc::clone(&over),
                Arc::clone(pulse),
                Arc::clone(&self.stop),
            );
            let resume = self.resume_command.clone();
            std::thread::spawn(move || {
                let mut told = false;
                while !over.load(Ordering::Relaxed) {
                    if let Some(bar) = &bar {
                        let rounds = pulse.rounds.load(Ordering::Relaxed);
                        match per_unit {
                            Some(n) => bar.set_position(done * n + rounds),
                            None => {
                                bar.set_position(done + pulse.units.load(Ordering::Relaxed));
                                bar.set_message(format!(" ({rounds} rounds)"));
                            }
                        }
                    }
                    if !told && stop.load(Ordering::Relaxed) {
                        told = true;
                        let text = format!(
                            "Ctrl-C: stopping once the chunks in play are saved (Ctrl-C again quits \
                             at once, losing them); then `{resume}` finishes the run"
                        );
                        match &bar {
                            Some(bar) => bar.println(text),
                            None => eprintln!("{text}"),
                        }
                    }
                    std::thread::sleep(Duration::from_millis(200));
                }
            });
        }
        *self.stage.lock().expect("lock") = Some((bar, over));
    }

    fn stage_done(&self, stage: &Stage, result: &StageResult) {
        self.end_stage();
        println!(
            "\nstage `{}`: {} rounds in {:.2} s",
            result.name, result.totals.rounds, result.seconds
        );
        print!("{}", dhumbal_runner::summary::table(result));
        println!();
        if self.report && !result.restored {
            let info = dhumbal_report::StageInfo::of_stage(stage, &result.agents);
            let report = dhumbal_report::report_stage(
                &result.dir,
                &result.dir,
                &info,
                &dhumbal_report::Options::default(),
            );
            report_done(stage, &report);
        }
    }
}

/// Says where a stage's report went, or why it could not be written (the records are complete
/// either way).
fn report_done(stage: &Stage, report: &anyhow::Result<dhumbal_report::StageReport>) {
    match report {
        Ok(r) => {
            println!(
                "stage `{}`: statistics and figures in {}",
                stage.name,
                r.dir.join("report.md").display()
            );
            for (stem, e) in &r.figure_errors {
                eprintln!("warning: figure `{stem}` was not drawn: {e}");
            }
        }
        Err(e) => eprintln!(
            "warning: stage `{}`: the report could not be written ({e:#}); the records are \
                 complete, `dhumbal-run report` can retry",
            stage.name
        ),
    }
}

fn print_agents() {
    use std::fmt::Write as _;
    let mut out = String::new();
    let line = |out: &mut String, p: &dhumbal_agents::Param| {
        let default = p.default.as_ref().map_or_else(
            || "required".to_string(),
            |d| format!("default {}", dhumbal_agents::family::show(d)),
        );
        let _ = writeln!(
            out,
            "  {:<24} {:<13} {:<16} {}",
            p.name,
            p.ty.describe(),
            default,
            p.doc
        );
    };
    let _ = writeln!(
        out,
        "Agent kinds (use as `kind:` in a scenario; set parameters under `params:`).\n"
    );
    for f in registry::FAMILIES {
        let _ = writeln!(out, "{}: {}", f.name(), f.doc());
        let fields = f.fields();
        if let Some(key) = f.shorthand() {
            let _ = writeln!(
                out,
                "  (written `{key}: ...` in place of `kind: {}`; these fields sit beside it)",
                f.name()
            );
        }
        for p in &fields {
            line(&mut out, p);
        }
        let params = f.params();
        if f.open_params() {
            let _ = writeln!(
                out,
                "  {:<24} declared by the script itself (`fn parameters()`, docs/rhai.md) and checked against it",
                "params:"
            );
        } else if params.is_empty() && fields.is_empty() {
            let _ = writeln!(out, "  (no parameters)");
        }
        for p in &params {
            line(&mut out, p);
        }
        let _ = writeln!(out);
    }
    // A closed pipe (`dhumbal-run agents | head`) is not an error.
    let _ = std::io::Write::write_all(&mut std::io::stdout(), out.as_bytes());
}

fn run_bench(
    rounds: u64,
    threads: Vec<usize>,
    generator: Vec<Generator>,
    session: u32,
    seed: u64,
) -> anyhow::Result<ExitCode> {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let threads = if threads.is_empty() {
        if cores > 1 { vec![1, cores] } else { vec![1] }
    } else {
        threads
    };
    if threads.contains(&0) {
        eprintln!("error: --threads must be at least 1");
        return Ok(ExitCode::from(2));
    }
    let generators: Vec<Generator> = if generator.is_empty() {
        vec![Generator::Chacha, Generator::Python]
    } else {
        generator
    };
    println!(
        "Table I matchup, paper preset, {rounds} rounds per row, sessions of {session} rounds, {cores} cores"
    );
    println!(
        "{:<16} {:>7} {:>10} {:>9} {:>12} {:>12} {:>9} {:>11}",
        "generator",
        "threads",
        "rounds",
        "seconds",
        "rounds/s",
        "per thread",
        "us/round",
        "turns/round"
    );
    for &g in &generators {
        for &t in &threads {
            let r = bench::run(BenchConfig {
                rounds,
                threads: t,
                generator: g,
                session_len: session,
                seed,
            })?;
            println!(
                "{:<16} {:>7} {:>10} {:>9.3} {:>12.0} {:>12.0} {:>9.3} {:>11.2}",
                bench::stream_name(g),
                t,
                r.rounds,
                r.seconds,
                r.rounds_per_second(),
                r.per_thread(),
                1e6 / r.per_thread(),
                r.turns as f64 / r.rounds as f64
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Checks a probability argument; prints the error and returns exit code 2 when it is bad.
fn probability(name: &str, value: f64, max_inclusive: bool) -> Result<(), ExitCode> {
    let ok = value > 0.0 && (value < 1.0 || (max_inclusive && value == 1.0));
    if ok {
        Ok(())
    } else {
        eprintln!(
            "error: --{name} must be in (0, 1{}, got {value}",
            if max_inclusive { "]" } else { ")" }
        );
        Err(ExitCode::from(2))
    }
}

/// `--alpha`, `--power` in (0, 1) and `--delta` in (0, 1], as `report` and `plan` take them.
fn check_probabilities(alpha: f64, power: f64, delta: f64) -> Result<(), ExitCode> {
    probability("alpha", alpha, false)?;
    probability("power", power, false)?;
    probability("delta", delta, true)
}

fn report(args: ReportArgs) -> anyhow::Result<ExitCode> {
    let ReportArgs {
        dir,
        out,
        force,
        definitions,
        alpha,
        power,
        delta,
        no_figures,
        titles,
    } = args;
    if let Err(code) = check_probabilities(alpha, power, delta) {
        return Ok(code);
    }
    if !dir.is_dir() {
        eprintln!("error: {} is not a folder", dir.display());
        return Ok(ExitCode::from(2));
    }
    let opts = dhumbal_report::Options {
        definitions: match definitions {
            DefinitionsArg::Ours => dhumbal_report::Definitions::Ours,
            DefinitionsArg::Paper => dhumbal_report::Definitions::Paper,
        },
        alpha,
        power,
        delta,
        figures: !no_figures,
        titles,
    };
    if dhumbal_report::training::is_training(&dir) {
        return training_report(&dir, out.as_deref(), force, titles);
    }
    let start = std::time::Instant::now();
    // Records that cannot be read or make no sense (a missing, empty, header-only or
    // malformed file, columns not those of the records, an unknown agent) are bad input:
    // exit 2, the file named; nothing is written for that stage. Anything else (a file that
    // cannot be written) is a failure while running: exit 1.
    let reports = match dhumbal_report::report_dir(&dir, out.as_deref(), force, &opts) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: {e:#}");
            return Ok(ExitCode::from(
                if e.downcast_ref::<Refusal>().is_some() || dhumbal_report::load::is_input_error(&e)
                {
                    2
                } else {
                    1
                },
            ));
        }
    };
    let mut failed = 0;
    for r in &reports {
        let a = &r.analysis;
        println!(
            "stage `{}`: {} rounds, {} agents, {} pairwise tests -> {}",
            a.stage,
            a.design.rounds,
            a.agents.len(),
            a.pairwise.len(),
            r.dir.join("report.md").display()
        );
        for (stem, e) in &r.figure_errors {
            eprintln!("warning: figure `{stem}` was not drawn: {e}");
            failed += 1;
        }
    }
    println!(
        "{} stage report{} in {:.2} s",
        reports.len(),
        if reports.len() == 1 { "" } else { "s" },
        start.elapsed().as_secs_f64()
    );
    if dir.join("manifest.json").is_file() {
        overview(&dir, out.as_deref().unwrap_or(&dir));
    }
    Ok(if failed > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

fn plan(
    path: PathBuf,
    delta: f64,
    alpha: f64,
    power: f64,
    rounds: Option<u64>,
    pilot: Option<PathBuf>,
) -> anyhow::Result<ExitCode> {
    if let Err(code) = check_probabilities(alpha, power, delta) {
        return Ok(code);
    }
    let overrides = Overrides {
        seed: None,
        rounds,
        out: None,
    };
    let scenario = match load(&path, &overrides) {
        Ok(s) => s,
        Err(code) => return Ok(code),
    };
    let pilot = match pilot {
        None => None,
        Some(dir) if !dir.is_dir() => {
            eprintln!("error: --pilot {}: not a folder", dir.display());
            return Ok(ExitCode::from(2));
        }
        Some(dir) => match dhumbal_report::plan::read_pilot(&dir) {
            Ok(p) => Some(p),
            Err(e) => {
                eprintln!("error: --pilot {}: {e:#}", dir.display());
                return Ok(ExitCode::from(
                    if dhumbal_report::load::is_input_error(&e) {
                        2
                    } else {
                        1
                    },
                ));
            }
        },
    };
    let plans = dhumbal_report::plan::plan(&scenario, delta, alpha, power, pilot.as_deref());
    println!(
        "Plan for a difference of {delta} in each stage's headline outcome (win rate; games won \
         under point scoring),\ntwo-sided, at alpha {alpha} / pairs (Bonferroni), power {power}.\n"
    );
    let count = |x: Option<f64>| x.map_or("-".to_string(), |x| format!("{}", x.ceil() as u64));
    let fixed = |x: Option<f64>, d: usize| x.map_or("-".to_string(), |x| format!("{x:.d$}"));
    for p in &plans {
        let k = p.pairs.max(1);
        let units = format!("{}s", p.unit);
        let outcome = if p.metric == "game_win" {
            "games won"
        } else {
            "win rate"
        };
        println!(
            "stage `{}`: {} agents, {} pairs, {} arrangement{} per {}, {} {} planned; compares the {outcome}",
            p.stage,
            p.agents,
            p.pairs,
            p.arrangements,
            if p.arrangements == 1 { "" } else { "s" },
            p.unit,
            p.planned,
            units,
        );
        if let Some(m) = &p.pilot {
            println!(
                "  from the pilot ({}, {} {}, {} pairs measured; design effect {}; SD of the {} differences {} median, {} largest):",
                m.source,
                m.pilot_units,
                units,
                m.pairs,
                fixed(m.design_effect, 2),
                p.unit,
                fixed(m.sd_units.median, 4),
                fixed(m.sd_units.worst, 4),
            );
            println!(
                "    needed at alpha/{k}: {} {} for the median pair, {} for every pair",
                count(m.units_needed.median),
                units,
                count(m.units_needed.worst),
            );
            println!(
                "    this scenario: power {} for the median pair ({} for the least favourable); minimum detectable difference {} ({})",
                fixed(m.power.median, 3),
                fixed(m.power.worst, 3),
                fixed(m.mde.median, 4),
                fixed(m.mde.worst, 4),
            );
        }
        if let Some(note) = &p.pilot_note {
            println!("  pilot not used: {note}");
        }
        if let Some(warning) = &p.pilot_warning {
            println!("  note: {warning}");
        }
        let i = &p.independent;
        let one = if p.unit == "game" {
            "game (each arrangement)"
        } else {
            "round"
        };
        let label = if p.pilot.is_some() {
            format!("  for comparison, if every {one} were independent")
        } else {
            format!("  if every {one} were independent")
        };
        let rounds_word = if p.unit == "game" { "games" } else { "rounds" };
        println!(
            "{label} (eq. 5, n = 2 (z_(1-alpha/2) + z_power)^2 p(1-p) / delta^2, p = 1/players = {:.3}):",
            i.baseline
        );
        let show = |n: Option<u64>, u: Option<u64>| match (n, u) {
            (Some(n), Some(u)) => format!("{n} {rounds_word} per agent ({u} {units})"),
            _ => "-".to_string(),
        };
        println!(
            "    needed at alpha {alpha}: {}; at alpha/{k}: {}",
            show(i.needed, i.units_needed),
            show(i.needed_bonferroni, i.units_needed_bonferroni)
        );
        println!(
            "    this scenario: power {:.3} (at alpha/{k}: {:.3}); minimum detectable difference at alpha/{k}: {}{}",
            i.power,
            i.power_bonferroni,
            fixed(i.mde_bonferroni, 4),
            i.mde_bonferroni_deals_once
                .map_or(String::new(), |m| format!(
                    " ({m:.4} if the {} arrangements of a {} counted once)",
                    p.arrangements, p.unit
                )),
        );
    }
    if plans.iter().any(|p| p.pilot.is_none()) {
        println!(
            "\nEq. 5 counts every round (every arrangement of a game) as independent. They are \
             not: agents at one table are negatively correlated, the arrangements of one deal \
             repeat or balance its information, and the rounds of a game share its standings, so \
             the design's own power can be higher or lower. Run a small pilot of the same \
             design and plan with --pilot DIR: it measures each pair's variance."
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// The hyperparameters, for `train --help`.
fn train_help() -> String {
    let mut text = String::from(
        "Hyperparameters (`hyper:` of a train entry; presets `default` and `paper`):\n",
    );
    for (name, who, doc) in dhumbal_learn::hyper::PARAMS {
        text.push_str(&format!("  {name:<24} [{who}] {doc}\n"));
    }
    text
}

fn train_command(
    path: PathBuf,
    ids: Vec<String>,
    threads: Option<usize>,
    resume: bool,
    force: bool,
    out: Option<PathBuf>,
) -> anyhow::Result<ExitCode> {
    if threads == Some(0) {
        eprintln!("error: --threads must be at least 1");
        return Ok(ExitCode::from(2));
    }
    let overrides = Overrides {
        out,
        ..Overrides::default()
    };
    let scenario = match load(&path, &overrides) {
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
    let mut which = Vec::new();
    for id in &ids {
        match scenario.trainings.iter().position(|t| t.id() == id) {
            Some(i) => which.push(i),
            None => {
                let names: Vec<&str> = scenario.trainings.iter().map(|t| t.id()).collect();
                eprintln!(
                    "error: --id {id}: no such training in {}; its trainings: {}",
                    path.display(),
                    names.join(", ")
                );
                return Ok(ExitCode::from(2));
            }
        }
    }
    if which.is_empty() {
        which = (0..scenario.trainings.len()).collect();
    }
    let code = run_trainings(&scenario, &which, threads, resume, force)?;
    Ok(code)
}

/// Trains `which`, with a progress bar and the figures; Ctrl-C stops with the checkpoint saved.
fn run_trainings(
    scenario: &Scenario,
    which: &[usize],
    threads: Option<usize>,
    resume: bool,
    force: bool,
) -> anyhow::Result<ExitCode> {
    let threads =
        threads.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    let stop = Arc::new(AtomicBool::new(false));
    signal_hook::flag::register_conditional_shutdown(
        signal_hook::consts::SIGINT,
        130,
        Arc::clone(&stop),
    )?;
    signal_hook::flag::register(signal_hook::consts::SIGINT, Arc::clone(&stop))?;
    let reporter = TrainTerminal {
        bar: Mutex::new(None),
    };
    let results = dhumbal_runner::train::train(
        scenario,
        which,
        &dhumbal_runner::train::TrainOptions {
            threads,
            resume,
            force,
            stop,
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

struct TrainTerminal {
    bar: Mutex<Option<ProgressBar>>,
}

impl dhumbal_runner::train::TrainReporter for TrainTerminal {
    fn start(&self, t: &scenario::Training, done: u64) {
        let mut bar = self.bar.lock().expect("bar");
        if let Some(b) = bar.take() {
            b.finish_and_clear();
        }
        if done == 0 {
            match &t.plan {
                scenario::Plan::Neural(p) => println!(
                    "training `{}`: {} on the `{}` encoding, {} episodes at {} players, opponents {}, checkpoint {}",
                    p.id,
                    p.algorithm.name(),
                    p.encoding.name(),
                    p.episodes,
                    p.rules.players(),
                    p.opponents
                        .iter()
                        .map(|o| o.name())
                        .collect::<Vec<_>>()
                        .join(", "),
                    p.checkpoint.display()
                ),
                scenario::Plan::Tabular(p) => println!(
                    "training `{}`: {} over seed 001's 1,600 states, {} games to elimination, opponents {}, policy {}",
                    p.id,
                    p.method.name(),
                    p.episodes,
                    p.opponents
                        .iter()
                        .map(|o| o.0.as_str())
                        .collect::<Vec<_>>()
                        .join(", "),
                    p.policy.display()
                ),
            }
        } else {
            println!("training `{}`: resuming after {done} episodes", t.id());
        }
        if std::io::stderr().is_terminal() {
            let b = ProgressBar::new(t.episodes());
            b.set_style(
                ProgressStyle::with_template("{prefix} [{bar:40}] {human_pos}/{human_len} episodes{msg}, {per_sec}, ETA {eta}")
                    .expect("template")
                    .progress_chars("=> "),
            );
            b.set_prefix(t.id().to_string());
            b.set_position(done);
            b.reset_eta();
            *bar = Some(b);
        }
    }

    fn episodes(&self, _t: &scenario::Training, done: u64, _last: &[dhumbal_learn::EpisodeRecord]) {
        if let Some(b) = self.bar.lock().expect("bar").as_ref() {
            b.set_position(done);
        }
    }

    fn evaluation(&self, t: &scenario::Training, e: &dhumbal_learn::EvalRecord) {
        let line = format!(
            "  after {:>7} episodes: wins {:.1}% [{:.1}, {:.1}] against {} ({} {}, learner in every seat)",
            e.episode,
            100.0 * e.win_rate,
            100.0 * e.low,
            100.0 * e.high,
            e.opponent,
            e.deals,
            match t.plan {
                scenario::Plan::Neural(_) => "deals",
                scenario::Plan::Tabular(_) => "games",
            }
        );
        match self.bar.lock().expect("bar").as_ref() {
            Some(b) => b.println(line),
            None => println!("{line}"),
        }
    }

    fn finished(&self, t: &scenario::Training, r: &dhumbal_runner::train::TrainResult) {
        if let Some(b) = self.bar.lock().expect("bar").take() {
            b.finish_and_clear();
        }
        println!(
            "training `{}`: {} episodes in {:.1} s ({:.0} episodes/s{}), checkpoint {}, records {}",
            t.id(),
            r.episodes,
            r.seconds,
            r.episodes as f64 / r.seconds.max(1e-9),
            if r.device.is_empty() {
                String::new()
            } else {
                format!(", {}", r.device)
            },
            r.checkpoint.display(),
            r.dir.display()
        );
    }
}
