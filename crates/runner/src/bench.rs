//! Throughput benchmark: rounds per second of the paper's Table I matchup.
//!
//! Sessions of `session_len` rounds are the unit of work (coins carry over within a session,
//! as in the paper); threads take whole sessions. With ChaCha, round `r` of session `s` uses
//! deal `deal_id(s, r)`; with the Python generator, session `s` is seeded `seed + s`.

use std::time::Instant;

use rayon::prelude::*;

use dhumbal_agents::{Heuristic, Style};
use dhumbal_game::rng::{ChaChaStreams, PyRandom, PythonStreams, deal_id};
use dhumbal_game::{Agent, PlayError, Preset, Rules, Table};

pub use crate::scenario::Generator;

/// How the benchmark's table names a generator's streams.
pub fn stream_name(g: Generator) -> &'static str {
    match g {
        Generator::Chacha => "chacha8",
        Generator::Python => "python-mt19937",
    }
}

#[derive(Clone, Copy, Debug)]
pub struct BenchConfig {
    pub rounds: u64,
    pub threads: usize,
    pub generator: Generator,
    pub session_len: u32,
    pub seed: u64,
}

#[derive(Clone, Copy, Debug)]
pub struct BenchResult {
    pub config: BenchConfig,
    pub rounds: u64,
    pub seconds: f64,
    /// Player-turns played, to show the work per round.
    pub turns: u64,
    /// Sum of Aggressive's wins, a checksum that the work was done.
    pub seat0_wins: u64,
}

impl BenchResult {
    pub fn rounds_per_second(&self) -> f64 {
        self.rounds as f64 / self.seconds
    }

    pub fn per_thread(&self) -> f64 {
        self.rounds_per_second() / self.config.threads as f64
    }
}

fn table1_agents() -> Vec<Box<dyn Agent>> {
    Style::ALL
        .iter()
        .map(|&s| Box::new(Heuristic::paper(s)) as Box<dyn Agent>)
        .collect()
}

/// Plays one session; returns (rounds, turns, seat-0 wins).
fn session(
    rules: &Rules,
    cfg: &BenchConfig,
    index: u64,
    rounds: u32,
) -> Result<(u64, u64, u64), PlayError> {
    let mut table = Table::new(rules.clone());
    let mut agents = table1_agents();
    // A session as the runner plays one: agents hear it start and end.
    table.start_game(&mut agents);
    let (mut turns, mut wins) = (0u64, 0u64);
    // The outcome read in place, as the runner's tournament reads it (not moved out).
    let mut tally = |played: &Result<dhumbal_game::RoundOutcome, PlayError>| {
        let o = played.as_ref().map_err(Clone::clone)?;
        turns += u64::from(o.turns);
        wins += u64::from(o.winner == Some(0));
        Ok::<_, PlayError>(())
    };
    match cfg.generator {
        Generator::Chacha => {
            let mut streams = ChaChaStreams::new(cfg.seed, deal_id(index, 0), &[0, 1, 2, 3]);
            for r in 0..rounds {
                streams.set_deal(deal_id(index, r));
                tally(&table.play_round(&mut agents, &mut streams, &mut ()))?;
            }
        }
        Generator::Python => {
            let mut streams = PythonStreams(PyRandom::new(cfg.seed + index));
            for _ in 0..rounds {
                tally(&table.play_round(&mut agents, &mut streams, &mut ()))?;
            }
        }
    }
    table.end_game(&mut agents);
    Ok((u64::from(rounds), turns, wins))
}

/// Runs the benchmark on its own thread pool.
pub fn run(cfg: BenchConfig) -> crate::Result<BenchResult> {
    let rules = Rules::preset(Preset::Paper);
    let len = u64::from(cfg.session_len.max(1));
    let sessions = cfg.rounds.div_ceil(len);
    let pool = crate::workers::pool(cfg.threads)?;
    let start = Instant::now();
    let parts: Result<Vec<_>, PlayError> = pool.install(|| {
        (0..sessions)
            .into_par_iter()
            .map(|s| {
                let rounds = len.min(cfg.rounds - s * len) as u32;
                session(&rules, &cfg, s, rounds)
            })
            .collect()
    });
    let seconds = start.elapsed().as_secs_f64();
    let parts = parts.map_err(|e| crate::Error::Play(e.to_string()))?;
    Ok(BenchResult {
        config: cfg,
        rounds: parts.iter().map(|p| p.0).sum(),
        seconds,
        turns: parts.iter().map(|p| p.1).sum(),
        seat0_wins: parts.iter().map(|p| p.2).sum(),
    })
}
