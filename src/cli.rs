//! The `dhumbal-run` command line: argument parsing, progress and terminal output, over the
//! library. Exit codes: 0 success, 1 a failure while running, 2 bad input (arguments, a
//! scenario file, or records given to `report` that cannot be read or make no sense).

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Mutex;

use clap::{Args, Parser, Subcommand, ValueEnum};
use indicatif::{ProgressBar, ProgressStyle};

use dhumbal_agents::registry;
use dhumbal_runner::bench::{self, BenchConfig, Generator};
use dhumbal_runner::run::{self as runner, Reporter, RunOptions, StageResult};
use dhumbal_runner::scenario::{self, AgentDef, Overrides, Scenario, Stage};

#[derive(Parser, Debug)]
#[command(
    name = "dhumbal-run",
    version,
    about = "Seeded, parallel experiments on the card game Dhumbal (Jhyap, Yaniv)",
    long_about = "Seeded, parallel experiments on the card game Dhumbal (Jhyap, Yaniv).\n\n\
        `dhumbal-run SCENARIO.yaml` plays the tournaments a scenario file describes and writes, \
        per stage, rounds.csv and rounds.parquet (one row per round and seat), summary.csv (one \
        row per agent), manifest.json (what ran, how fast) and a statistics report (report.md, \
        stats.json, tables/, figures/; see `dhumbal-run report`) to reports/<name>/. \
        The same scenario gives the same records whatever the thread count.",
    args_conflicts_with_subcommands = true,
    after_help = "Examples:\n  dhumbal-run scenarios/paper/table1.yaml\n  dhumbal-run validate scenarios/championship.yaml\n  \
        dhumbal-run scenarios/championship.yaml --threads 8 --out /tmp/champ\n  dhumbal-run scenarios/big.yaml --resume\n  \
        dhumbal-run report /tmp/champ --definitions paper\n  dhumbal-run plan scenarios/championship.yaml --delta 0.05"
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
    /// Do not write the statistics report (report.md, stats.json, tables/, figures/) after
    /// each stage; `dhumbal-run report DIR` can write it later.
    #[arg(long)]
    pub no_report: bool,
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
    /// Write the statistics of a finished run from its records alone: per stage report.md,
    /// stats.json, tables/ (CSV and LaTeX) and figures/ (SVG, PNG, PDF), beside the records.
    /// See docs/analysis.md.
    Report {
        /// A run's output folder (with manifest.json) or one stage's folder.
        dir: PathBuf,
        /// Whose metric definitions: ours, or the paper's (population SD in Cohen's d, the
        /// normal win interval, stars on Bonferroni-adjusted Welch p-values) to reproduce its
        /// numbers.
        #[arg(long, value_enum, default_value_t = DefinitionsArg::Ours)]
        definitions: DefinitionsArg,
        /// Family-wise significance level of the pairwise tests.
        #[arg(long, default_value_t = 0.05)]
        alpha: f64,
        /// Target power for minimum detectable effects and sample sizes.
        #[arg(long, default_value_t = 0.8)]
        power: f64,
        /// The win-rate difference of interest (0.05 = 5 percentage points).
        #[arg(long, default_value_t = 0.05)]
        delta: f64,
        /// Statistics and tables only, no figures.
        #[arg(long)]
        no_figures: bool,
    },
    /// Sample size before a run: rounds (or games) per agent needed to detect a win-rate
    /// difference DELTA, by the paper's eq. 5 at the equal-strength win rate, with and without
    /// the Bonferroni correction over the stage's pairs; and the power of the scenario as
    /// written.
    Plan {
        scenario: PathBuf,
        /// The win-rate difference to detect (0.05 = 5 percentage points).
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
        Some(Command::Report {
            dir,
            definitions,
            alpha,
            power,
            delta,
            no_figures,
        }) => report(dir, definitions, alpha, power, delta, no_figures),
        Some(Command::Plan {
            scenario,
            delta,
            alpha,
            power,
            rounds,
        }) => plan(scenario, delta, alpha, power, rounds),
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
        report: !args.no_report,
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
    for warning in &report.warnings {
        eprintln!("warning: {warning}");
    }
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
    /// Write each stage's statistics report once its records are safe.
    report: bool,
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
            dhumbal_runner::summary::table(result, stage.is_points())
        );
        println!();
        if self.report && !result.restored {
            let info = dhumbal_report::StageInfo::of_stage(stage, &result.agents);
            let report = dhumbal_report::report_stage(
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
                "  {:<24} any names and values, passed to the agent as they are",
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

fn report(
    dir: PathBuf,
    definitions: DefinitionsArg,
    alpha: f64,
    power: f64,
    delta: f64,
    no_figures: bool,
) -> anyhow::Result<ExitCode> {
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
    };
    let start = std::time::Instant::now();
    // Records that cannot be read or make no sense (a missing, empty, header-only or
    // malformed file, columns not those of the records, an unknown agent) are bad input:
    // exit 2, the file named; nothing is written for that stage. Anything else (a file that
    // cannot be written) is a failure while running: exit 1.
    let reports = match dhumbal_report::report_dir(&dir, &opts) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: {e:#}");
            return Ok(ExitCode::from(
                if dhumbal_report::load::is_input_error(&e) {
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
    println!(
        "Sample size for a win-rate difference of {delta} at alpha {alpha} (two-sided) with power {power},\n\
         by the paper's eq. 5, n = 2 (z_(1-alpha/2) + z_power)^2 p(1-p) / delta^2, p = 1/players \
         (equal strength);\nBonferroni: alpha divided by the stage's pairs. Per agent; each deal \
         or game is played once per seating arrangement.\n"
    );
    for p in dhumbal_report::plan::plan(&scenario, delta, alpha, power) {
        println!(
            "stage `{}`: {} agents, {} pairs, {} arrangement{}, baseline win rate {:.3}",
            p.stage,
            p.agents,
            p.pairs,
            p.arrangements,
            if p.arrangements == 1 { "" } else { "s" },
            p.baseline
        );
        let deals = if p.unit == "games" { "games" } else { "deals" };
        let show = |n: Option<u64>, d: Option<u64>| match (n, d) {
            (Some(n), Some(d)) => format!("{n} {} per agent ({deals}: {d})", p.unit),
            _ => "-".to_string(),
        };
        println!(
            "  needed at alpha {alpha}: {}",
            show(p.needed, p.deals_needed)
        );
        println!(
            "  needed at alpha/{} = {:.5}: {}",
            p.pairs.max(1),
            alpha / p.pairs.max(1) as f64,
            show(p.needed_bonferroni, p.deals_needed_bonferroni)
        );
        println!(
            "  this scenario: {} {} per agent; power {:.3} (at alpha/{}: {:.3}); minimum detectable difference at alpha/{}: {}",
            p.planned,
            p.unit,
            p.power,
            p.pairs.max(1),
            p.power_bonferroni,
            p.pairs.max(1),
            p.mde_bonferroni
                .map_or("-".to_string(), |m| format!("{m:.4}"))
        );
    }
    println!(
        "\nThe formula treats the agents' rounds as independent. With paired designs (every \
         agent plays every deal; `rotate`, `permute`) the need depends on how the agents' \
         results correlate: after a run, report.md gives the achieved minimum detectable \
         difference from the observed paired variance."
    );
    Ok(ExitCode::SUCCESS)
}
