//! `dhumbal-run bench`: the engine's rounds per second on the paper's Table I matchup.

use std::process::ExitCode;

use clap::Args;

use dhumbal_runner::bench::{self, BenchConfig, Generator};

use super::settings;

/// `dhumbal-run bench`.
#[derive(Args, Debug)]
pub struct BenchArgs {
    /// Rounds per measurement.
    #[arg(long, default_value_t = 1_000_000)]
    pub rounds: u64,
    /// Thread counts to measure; default: 1 and all cores.
    #[arg(long, value_delimiter = ',', value_parser = settings::at_least_one)]
    pub threads: Vec<usize>,
    /// Generators to measure: chacha (per-deal ChaCha8 streams, the default for
    /// experiments), python (CPython's MT19937, for reproducing the paper); default: both.
    #[arg(long, value_delimiter = ',', value_parser = parse_generator)]
    pub generator: Vec<Generator>,
    /// Rounds per session (coins carry over within a session, as in the paper).
    #[arg(long, default_value_t = 1024)]
    pub session: u32,
    /// Seed of the deals.
    #[arg(long, default_value_t = 42)]
    pub seed: u64,
}

/// `--generator`: the names a scenario's `generator:` takes.
fn parse_generator(s: &str) -> Result<Generator, String> {
    match s {
        "chacha" => Ok(Generator::Chacha),
        "python" => Ok(Generator::Python),
        _ => Err("expected chacha or python".into()),
    }
}

/// `dhumbal-run bench`.
pub fn bench(args: BenchArgs) -> anyhow::Result<ExitCode> {
    let BenchArgs {
        rounds,
        threads,
        generator,
        session,
        seed,
    } = args;
    let cores = settings::cores();
    let threads = if threads.is_empty() {
        if cores > 1 { vec![1, cores] } else { vec![1] }
    } else {
        threads
    };
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
