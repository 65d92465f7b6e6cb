//! The `dhumbal-run` command line: argument parsing, progress and terminal output, over the
//! library. Exit codes: 0 success, 1 a failure while running, 2 bad input (arguments or
//! scenario file).

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Mutex;

use clap::{Args, Parser, Subcommand, ValueEnum};
use indicatif::{ProgressBar, ProgressStyle};

use crate::agents::registry;
use crate::bench::{self, BenchConfig, Generator};
use crate::scenario::{self, AgentDef, Overrides, Scenario, Stage};
use crate::tournament::runner::{self, Reporter, RunOptions, StageResult};

#[derive(Parser, Debug)]
#[command(
    name = "dhumbal-run",
    version,
    about = "Seeded, parallel experiments on the card game Dhumbal (Jhyap, Yaniv)",
    long_about = "Seeded, parallel experiments on the card game Dhumbal (Jhyap, Yaniv).\n\n\
        `dhumbal-run SCENARIO.yaml` plays the tournaments a scenario file describes and writes, \
        per stage, rounds.csv and rounds.parquet (one row per round and seat), summary.csv (one \
        row per agent), and manifest.json (what ran, how fast) to reports/<name>/. \
        The same scenario gives the same records whatever the thread count.",
    args_conflicts_with_subcommands = true,
    after_help = "Examples:\n  dhumbal-run scenarios/paper/table1.yaml\n  dhumbal-run validate scenarios/championship.yaml\n  \
        dhumbal-run scenarios/championship.yaml --threads 8 --out /tmp/champ\n  dhumbal-run scenarios/big.yaml --resume"
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
    /// run gives.
    #[arg(long)]
    pub resume: bool,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Run a scenario (the same as `dhumbal-run SCENARIO`).
    Run(RunArgs),
    /// Check a scenario file and print what it would run, without running it.
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
        /// Generators to measure; default: both.
        #[arg(long, value_enum, value_delimiter = ',')]
        generator: Vec<GeneratorArg>,
        /// Rounds per session (coins carry over within a session, as in the paper).
        #[arg(long, default_value_t = 1024)]
        session: u32,
        #[arg(long, default_value_t = 42)]
        seed: u64,
    },
}

#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum GeneratorArg {
    /// Per-deal ChaCha8 streams (the default for experiments).
    Chacha,
    /// CPython's MT19937 stream, for reproducing the paper.
    Python,
}

/// Runs the CLI; returns the process exit code.
pub fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
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
        None => match cli.run.scenario {
            Some(_) => run(cli.run),
            None => {
                eprintln!(
                    "error: no scenario given\n\nUsage: dhumbal-run SCENARIO.yaml [OPTIONS], or see `dhumbal-run --help`"
                );
                return ExitCode::from(2);
            }
        },
        Some(Command::Validate {
            scenario,
            seed,
            rounds,
        }) => validate(scenario, seed, rounds),
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
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(1)
        }
    }
}

fn load(path: &PathBuf, overrides: &Overrides) -> Result<Scenario, ExitCode> {
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
    let scenario = match load(&path, &overrides) {
        Ok(s) => s,
        Err(code) => return Ok(code),
    };
    let threads = args
        .threads
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    describe(&scenario);
    println!(
        "  {threads} threads{}",
        if args.resume { ", resuming" } else { "" }
    );
    let reporter = Terminal {
        bar: Mutex::new(None),
        rounds_per_unit: Mutex::new(1),
    };
    let report = runner::run(
        &scenario,
        &RunOptions {
            threads,
            resume: args.resume,
        },
        &reporter,
    )?;
    println!(
        "{} rounds in {:.2} s ({:.0} rounds/s); records, summary and manifest in {}",
        report.rounds,
        report.seconds,
        report.rounds as f64 / report.seconds.max(1e-9),
        scenario.output.dir.display()
    );
    Ok(ExitCode::SUCCESS)
}

/// Progress bar on a terminal, nothing otherwise; summaries on stdout.
struct Terminal {
    bar: Mutex<Option<ProgressBar>>,
    rounds_per_unit: Mutex<u64>,
}

impl Reporter for Terminal {
    fn stage_start(&self, stage: &Stage, _lineup: &[AgentDef], units: u64, done: u64) {
        let per_unit = u64::from(stage.session.unwrap_or(1));
        *self.rounds_per_unit.lock().expect("lock") = per_unit;
        let bar = if std::io::stderr().is_terminal() {
            let (len, unit) = match stage.session {
                Some(_) => (units * per_unit, "rounds"),
                None => (units, "games"),
            };
            let bar = ProgressBar::new(len);
            bar.set_style(
                ProgressStyle::with_template(&format!(
                    "{{prefix}} [{{bar:40}}] {{human_pos}}/{{human_len}} {unit}, {{rate}}, ETA {{eta}}"
                ))
                .expect("template")
                .with_key("rate", |state: &indicatif::ProgressState, w: &mut dyn std::fmt::Write| {
                    let _ = write!(w, "{:.0}/s", state.per_sec());
                })
                .progress_chars("=> "),
            );
            bar.set_prefix(stage.name.clone());
            bar.set_position(done * if stage.session.is_some() { per_unit } else { 1 });
            bar.reset_eta();
            Some(bar)
        } else {
            None
        };
        *self.bar.lock().expect("lock") = bar;
    }

    fn advance(&self, units: u64, _rounds: u64) {
        if let Some(bar) = self.bar.lock().expect("lock").as_ref() {
            let per_unit = *self.rounds_per_unit.lock().expect("lock");
            bar.inc(units * per_unit);
        }
    }

    fn stage_done(&self, stage: &Stage, result: &StageResult) {
        if let Some(bar) = self.bar.lock().expect("lock").take() {
            bar.finish_and_clear();
        }
        println!(
            "\nstage `{}`: {} rounds in {:.2} s",
            result.name, result.totals.rounds, result.seconds
        );
        print!(
            "{}",
            crate::records::summary::table(result, stage.is_points())
        );
        println!();
    }
}

fn print_agents() {
    println!(
        "Built-in agent kinds (use as `kind:` in a scenario; set parameters under `params:`)."
    );
    println!("Rhai agents: `script: path/to/agent.rhai` (see docs/rhai.md).\n");
    for k in registry::kinds() {
        println!("{}: {}", k.name, k.doc);
        if k.params.is_empty() {
            println!("  (no parameters)");
        }
        for p in &k.params {
            println!(
                "  {:<24} {:<13} default {:<6} {}",
                p.name,
                p.ty.describe(),
                p.default.to_string(),
                p.doc
            );
        }
        println!();
    }
}

fn run_bench(
    rounds: u64,
    threads: Vec<usize>,
    generator: Vec<GeneratorArg>,
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
        vec![Generator::ChaCha, Generator::Python]
    } else {
        generator
            .iter()
            .map(|g| match g {
                GeneratorArg::Chacha => Generator::ChaCha,
                GeneratorArg::Python => Generator::Python,
            })
            .collect()
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
                g.name(),
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
