//! The `dhumbal-run` command line: argument parsing and output, over the library.

use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};

use crate::bench::{self, BenchConfig, Generator};

#[derive(Parser, Debug)]
#[command(
    name = "dhumbal-run",
    version,
    about = "Seeded, parallel experiments on the card game Dhumbal (Jhyap, Yaniv)"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
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

/// Runs the CLI; returns the process exit code (0 ok, 1 failure, 2 bad input).
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
    match run(cli) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(1)
        }
    }
}

fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    match cli.command {
        Command::Bench {
            rounds,
            threads,
            generator,
            session,
            seed,
        } => {
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
    }
}
