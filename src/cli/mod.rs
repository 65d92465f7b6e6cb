//! The `dhumbal-run` command line, in the style of a thin binary over library crates: this
//! module parses the arguments into one of the commands and maps its result to an exit code;
//! each command is one module (its arguments and what it does); what several share is in
//! [`settings`] (arguments checked once: threads, probabilities, scenario loading),
//! [`interrupt`] (the one place Ctrl-C is handled) and [`progress`] (bars and the tables
//! printed as stages end).
//!
//! Exit codes: 0 success, 1 a failure while running, 2 bad input (arguments, a scenario file,
//! or records given to `report` that cannot be read or make no sense), 3 not yet (a shard's
//! stage waits for an earlier stage), 130 interrupted.
//!
//! Training networks needs libtorch, which only the trainer executable `dhumbal-train` links:
//! `train` and a run that must train a checkpoint first start it as a child process
//! ([`train`]); everything else runs in this process, which never loads libtorch.

pub mod agents;
pub mod bench;
pub mod console;
pub mod exploit;
pub mod interrupt;
pub mod merge;
pub mod plan;
pub mod play;
pub mod progress;
pub mod report;
pub mod rerun;
pub mod run;
pub mod schema;
pub mod serve;
pub mod settings;
pub mod show;
pub mod status;
pub mod train;
pub mod tune;
pub mod validate;

use std::path::Path;
use std::process::ExitCode;

use clap::{CommandFactory, Parser, Subcommand};

use dhumbal_agents::escape_lines;

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
        merge` puts together; see docs/cluster.md. Networks are trained by the trainer \
        executable dhumbal-train, which dhumbal-run starts when needed (docs/learning.md).\n\n\
        Exit codes: 0 success, 1 a failure while running, 2 bad input (arguments, scenario \
        file, a folder holding something else), 3 not yet (a shard's stage waits for an \
        earlier stage that other shards are still playing), 130 interrupted (Ctrl-C).",
    args_conflicts_with_subcommands = true,
    after_help = "Examples:\n  dhumbal-run scenarios/paper/table1.yaml\n  dhumbal-run validate scenarios/championship.yaml\n  \
        dhumbal-run scenarios/championship.yaml --threads 8 --out /tmp/champ\n  dhumbal-run scenarios/big.yaml --resume\n  \
        dhumbal-run rerun /tmp/champ --out /tmp/champ-again\n  \
        dhumbal-run scenarios/big.yaml --out /scratch/big --shard 0/4   (then 1/4, 2/4, 3/4)\n  \
        dhumbal-run merge /scratch/big\n  \
        dhumbal-run report /tmp/champ --definitions paper --out /tmp/champ-paper\n  dhumbal-run plan scenarios/championship.yaml --delta 0.05\n  \
        dhumbal-run train scenarios/learning/quick.yaml"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,
    #[command(flatten)]
    pub run: run::RunArgs,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Run a scenario (the same as `dhumbal-run SCENARIO`).
    Run(run::RunArgs),
    /// Play a results folder's scenario again from the folder alone (its copy of the
    /// scenario, scripts and command-line settings in source/) and check that the records are
    /// the same, bit for bit (decision times aside).
    Rerun(rerun::RerunArgs),
    /// Finish a study played as shards (`--shard`): check that every stage's parts hold each
    /// unit exactly once (one scenario, one program version, no gap, no overlap), then write
    /// the summaries, the manifest and the statistics reports, as a single run would. DIR is
    /// the folder the shards shared (finished in place); several DIRs (shards run with their
    /// own --out) are gathered into --out. The merged records equal a single run's.
    Merge(merge::MergeArgs),
    /// Where a run or a study played as shards stands, read from its folder alone (nothing is
    /// written; it may run while shards play, from a cluster's login node): each tuning's
    /// evaluations and deals of its budget, each stage's units on disk, a sequential test's
    /// looks and its LLR against its bounds, the shards that owe their share. With --stage NAME, the exit code is 0 when that stage is complete and 3
    /// when it is not yet.
    #[command(after_help = "Examples:
  dhumbal-run status /scratch/champ
          dhumbal-run status /scratch/champ --stage league && echo decided")]
    Status(status::StatusArgs),
    /// Train the learning agents a scenario declares (`train:`, docs/learning.md): DQN, Double
    /// DQN or PPO, against the opponents listed, with evaluation on fixed deals. Writes the
    /// checkpoint each entry names and <output>/train/<id>/ (episodes.parquet,
    /// evaluations.parquet, manifest.json, figures/). An existing checkpoint is continued only
    /// with --resume and replaced only with --force. Same seed, same threads: the same
    /// checkpoint, bit for bit. Networks train in the trainer executable dhumbal-train (the
    /// only program linking libtorch; scripts/run.sh builds it beside dhumbal-run), which
    /// this command starts; the two-player tabular policies (`algorithm: q-learning` or
    /// `value-iteration`, docs/tabular.md) learn in dhumbal-run itself, into a .csv table,
    /// afresh each time.
    #[command(after_help = train::hyper_help())]
    Train(train::TrainArgs),
    /// Tune the parameters of the agents a scenario declares (`tune:`, docs/tuning.md): an
    /// optimizer (NTBEA or SPSA) asks for points of the agent's parameter space, each played on
    /// deals of its own against the entry's opponents, within a budget of deals. Writes the
    /// best parameters as an agent file (a seat names it with `tuned: FILE`) and
    /// <output>/tune/<id>/ (evaluations.parquet, the log, manifest.json, report.md, figures/),
    /// then confirms the result against the starting parameters on fresh deals with a
    /// sequential test (tune/<id>/confirm/). The same seed gives the same search and the same
    /// parameters on any thread count; Ctrl-C or a kill loses at most one evaluation
    /// (--resume goes on). An existing agent file is replaced only with --force.
    Tune(tune::TuneArgs),
    /// Measure how beatable agents are (`exploit:`, docs/exploitability.md): for each entry,
    /// best responders (`search`: ISMCTS that knows the target's policy, weighs the worlds it
    /// samples by how likely the target made the moves it saw, and plays the target in every
    /// other seat of its simulations) sit at the target's own table, and each one's share of
    /// rounds (games) won is compared with the target's own at its self-play table, deal by
    /// deal on the same fresh deals under every rotation of the seats: the gain with its 95%
    /// interval and a one-sided test against the entry's margin. Writes
    /// <output>/exploit/<id>/ (a stage per responder and the self-play, exploitability.json
    /// and .csv, figures/, report.md, the deals each responder gained most on traced for
    /// `dhumbal-run show`). Budgets are iterations and deals: the same numbers on any thread
    /// count; Ctrl-C or a kill keeps what was played (--resume goes on).
    Exploit(exploit::ExploitArgs),
    /// Check a scenario file and print what it would run, without running it: every problem
    /// with its line, and a rehearsal of each script agent (a few rounds, or eight, the script
    /// in every seat) to catch runtime errors.
    Validate(validate::ValidateArgs),
    /// List the built-in agent kinds and their parameters with defaults.
    Agents,
    /// Print the JSON Schema of scenario files.
    Schema,
    /// Write the statistics of a finished run from its records alone: per stage report.md,
    /// stats.json, tables/ (CSV and LaTeX) and figures/ (SVG, PNG, PDF), beside the records or
    /// under --out; an existing report is replaced only with --force. See docs/analysis.md.
    /// Given a training's folder (`train/<id>/`), draws its four figures again (docs/learning.md);
    /// given a tuning's (`tune/<id>/`), its report and figures (docs/tuning.md); given an
    /// exploitability measurement's (`exploit/<id>/`), its stages' reports and its page
    /// (docs/exploitability.md).
    Report(report::ReportArgs),
    /// Sample size before a run: per stage, the deals (games under point scoring) needed to
    /// detect a difference DELTA in the headline outcome (win rate; games won under point
    /// scoring) at the Bonferroni level over the stage's pairs, and the power and minimum
    /// detectable difference of the scenario as written. With --pilot, from a pilot run's
    /// measured variances (the design as it is: paired deals, clustered games); without,
    /// only the paper's eq. 5 with every round counted as independent. See docs/analysis.md.
    Plan(plan::PlanArgs),
    /// Measure engine throughput: rounds per second of the paper's Table I matchup
    /// (Aggressive, Conservative, Balanced, Opportunistic under the `paper` preset), on one
    /// thread and on all threads, with each random generator.
    Bench(bench::BenchArgs),
    /// Play a game yourself against agents, in the terminal: a scenario's stage (its rules
    /// and agents, you in --seat's place) or a game given here (--rules, --players,
    /// --opponent; the opponents default to the paper's four heuristics). You see only your
    /// seat's view; each decision lists the legal actions numbered (type a number, or cards
    /// such as `9h 10h jh`), `?` asks the advisor agent for its choice and top three candidates
    /// (it decides on your view with its own random stream: hints never change the game), `h`
    /// shows the round's history, `q` stops. Each round ends with every hand shown. Point
    /// scoring plays until one player is left, coin scoring a session of --rounds rounds. The
    /// same seed and the same answers give the same game; --out DIR writes its trace
    /// (DIR/traces/, as a traced run writes it; `dhumbal-run show DIR` replays it). Exit codes:
    /// 0 the game was played to its end, 2 bad input, 130 stopped before the end (`q`, end of
    /// input, Ctrl-C; the trace so far is kept).
    #[command(
        after_help = "Examples:\n  dhumbal-run play --rules paper --players 2 --seat 0 --seed 3 --out /tmp/game\n  \
        dhumbal-run play --rules jhyap --players 3 --opponent ismcts --opponent balanced\n  \
        dhumbal-run play scenarios/variants/simplified-2p.yaml --seat 1 --advisor none\n  \
        dhumbal-run show /tmp/game --deal 0"
    )]
    Play(play::PlayArgs),
    /// Serve a study with people (a scenario's `study:`, docs/studies.md): a web page where
    /// each participant signs in with a code and plays the study's games against its agents,
    /// seeing only their own seat; every decision written as it is made (journals, traces,
    /// records in the study's folder), so a restart loses nothing. Localhost by default.
    #[command(after_help = "Examples:
  dhumbal-run serve scenarios/study/pilot.yaml --out /tmp/pilot
          dhumbal-run serve scenarios/study/pilot.yaml --port 0 --out /tmp/pilot")]
    Serve(serve::ServeArgs),
    /// Replay a traced deal in the terminal, turn by turn: the deal, each decision with the
    /// agent's top candidates and their scores (where the agent explains itself), the cards
    /// drawn, and a summary of each round; `--seat K` shows only what seat K saw. Cards in
    /// colour on a terminal (plain when piped or with NO_COLOR). Reads RUN_DIR/traces/ (or
    /// RUN_DIR/<stage>/traces/), written for the deals a run traces (`--trace DEALS`,
    /// `output.trace`; docs/traces.md).
    #[command(
        after_help = "Examples:\n  dhumbal-run scenarios/championship.yaml --out /tmp/champ --trace 0\n  \
        dhumbal-run show /tmp/champ --stage final --deal 0\n  \
        dhumbal-run show /tmp/champ --stage final --deal 0 --arrangement 5 --round 2 --seat 1"
    )]
    Show(show::ShowArgs),
}

/// Runs the CLI; returns the process exit code.
pub fn main() -> ExitCode {
    main_from(std::env::args_os())
}

/// Runs the CLI on these arguments (the first is the program's name), as `dhumbal-run` would:
/// how the Python package's `dhumbal.run` runs a scenario in its own process (it leaves no
/// signal handler behind: [`interrupt`]).
pub fn main_from<I, T>(args: I) -> ExitCode
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(e) => return settings::clap_exit(&e),
    };
    let result = match cli.command {
        Some(Command::Run(args)) => run::run(args),
        None => match &cli.run.scenario {
            Some(path) => match unknown_command(path) {
                Some(message) => {
                    eprintln!("{message}");
                    return ExitCode::from(2);
                }
                None => run::run(cli.run),
            },
            None => {
                eprintln!(
                    "error: no scenario given\n\nUsage: dhumbal-run SCENARIO.yaml [OPTIONS], or see `dhumbal-run --help`"
                );
                return ExitCode::from(2);
            }
        },
        Some(Command::Rerun(args)) => rerun::rerun(args),
        Some(Command::Merge(args)) => merge::merge(args),
        Some(Command::Status(args)) => status::status(args),
        Some(Command::Validate(args)) => validate::validate(args),
        Some(Command::Train(args)) => train::train(args),
        Some(Command::Tune(args)) => tune::tune(args),
        Some(Command::Exploit(args)) => exploit::exploit(args),
        Some(Command::Agents) => agents::agents(),
        Some(Command::Schema) => schema::schema(),
        Some(Command::Bench(args)) => bench::bench(args),
        Some(Command::Report(args)) => report::report(args),
        Some(Command::Plan(args)) => plan::plan(args),
        Some(Command::Play(args)) => play::play(args),
        Some(Command::Serve(args)) => serve::serve(args),
        Some(Command::Show(args)) => show::show(args),
    };
    exit_code(result)
}

/// The exit code of a command's result: its own code, or the code its error means
/// ([`crate::experiment::Error::exit_code`]: 2 a refusal, 3 a shard that must wait, 130 a stop,
/// 1 any other failure), with the error printed.
pub(crate) fn exit_code(result: anyhow::Result<ExitCode>) -> ExitCode {
    match result {
        Ok(code) => code,
        Err(e) => exit_with(sorted(e)),
    }
}

/// A command's error as the experiment's. The library's errors reach here boxed by `?`: each
/// is taken back out as its type and sorted by its variants (`From` for the experiment's
/// error); a refusal the command made itself is bad input; anything else a failure.
fn sorted(e: anyhow::Error) -> crate::experiment::Error {
    use crate::experiment::{Error, Failure};
    let e = match e.downcast::<Error>() {
        Ok(e) => return e,
        Err(e) => e,
    };
    let e = match e.downcast::<dhumbal_runner::Error>() {
        Ok(e) => return e.into(),
        Err(e) => e,
    };
    let e = match e.downcast::<dhumbal_report::Error>() {
        Ok(e) => return e.into(),
        Err(e) => e,
    };
    match e.downcast::<dhumbal_runner::folder::Refusal>() {
        Ok(r) => Error::BadInput(r.0),
        Err(e) => Error::Failed(Failure::Other(format!("{e:#}"))),
    }
}

/// Runs `work` with the terminal as the experiment's hooks (Ctrl-C handled while it runs):
/// exit code 0 when it succeeds, else its error's, printed once the handler is gone.
pub(crate) fn with_console<T>(
    work: impl FnOnce(&console::Console) -> Result<T, crate::experiment::Error>,
) -> anyhow::Result<ExitCode> {
    let console = console::Console::new()?;
    let result = work(&console);
    drop(console);
    Ok(match result {
        Ok(_) => ExitCode::SUCCESS,
        Err(e) => exit_with(e),
    })
}

/// Prints an experiment's error as the terminal shows it and gives its exit code. A message
/// may quote what came from outside (a scenario's values, a script's error, a trace): its
/// control characters are shown escaped ([`escape_lines`]), never obeyed.
pub(crate) fn exit_with(e: crate::experiment::Error) -> ExitCode {
    use crate::experiment::Error;
    match &e {
        Error::BadInput(message) => {
            // A scenario's problems end with a newline; other messages do not.
            eprint!("error: {}", escape_lines(message));
            if !message.ends_with('\n') {
                eprintln!();
            }
        }
        Error::NotYet { .. } | Error::Pending(_) => eprintln!("{}", escape_lines(&e.to_string())),
        Error::Interrupted { .. } => eprintln!("\n{}", escape_lines(&e.to_string())),
        Error::Failed(inner) => eprintln!("error: {}", escape_lines(&inner.to_string())),
    }
    ExitCode::from(e.exit_code())
}

/// A bare word that is neither a file nor a command (`dhumbal-run raport`): the message that
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
