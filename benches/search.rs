//! Milliseconds per decision of the search agents, in 4-player games under the paper's rules,
//! the search agent in seat 0 against the paper's heuristics. Run with
//! `cargo bench --bench search` (release profile); `-- --quick` for a short run,
//! `-- --params '{"rollout_turns": 0}'` to change a setting in every configuration, `-- --only
//! aggressive` to run only the configurations whose label says so.
//!
//! Reports, for each configuration: decisions timed, mean and 95th percentile ms per decision,
//! simulations per second, and the tree size of the last search.

use std::time::Instant;

use dhumbal::agents::search::SearchFamily;
use dhumbal::agents::{Heuristic, SearchAgent, SearchParams, Style};
use dhumbal::game::cards::Discard;
use dhumbal::game::{Agent, AgentError, Observation, Pick, Preset, Rules, Table};
use dhumbal::rng::{ChaChaStreams, RandomSource};

/// Times every decision of the wrapped agent.
struct Timed {
    inner: SearchAgent,
    times: Vec<f64>,
}

impl Timed {
    fn time<T>(&mut self, f: impl FnOnce(&mut SearchAgent) -> T) -> T {
        let t = Instant::now();
        let out = f(&mut self.inner);
        self.times.push(t.elapsed().as_secs_f64() * 1e3);
        out
    }
}

impl Agent for Timed {
    fn name(&self) -> &str {
        self.inner.name()
    }
    fn call(&mut self, o: &Observation<'_>, r: &mut dyn RandomSource) -> Result<bool, AgentError> {
        self.time(|a| a.call(o, r))
    }
    fn discard(
        &mut self,
        o: &Observation<'_>,
        r: &mut dyn RandomSource,
    ) -> Result<Discard, AgentError> {
        self.time(|a| a.discard(o, r))
    }
    fn pick(&mut self, o: &Observation<'_>, r: &mut dyn RandomSource) -> Result<Pick, AgentError> {
        self.time(|a| a.pick(o, r))
    }
}

/// `--params '{"rollout_turns": 20}'`: settings merged into every configuration.
fn extra() -> serde_json::Map<String, serde_json::Value> {
    let args: Vec<String> = std::env::args().collect();
    match args.iter().position(|a| a == "--params") {
        Some(i) => serde_json::from_str(&args[i + 1]).expect("--params takes a JSON object"),
        None => serde_json::Map::new(),
    }
}

fn search(kind: &str, params: serde_json::Value) -> SearchParams {
    let mut params: serde_json::Map<String, serde_json::Value> =
        serde_json::from_value(params).unwrap();
    params.extend(extra());
    let family = match kind {
        "mcts" => &SearchFamily::MCTS,
        _ => &SearchFamily::ISMCTS,
    };
    family
        .params_from(&params)
        .expect("valid search parameters")
}

fn bench(label: &str, params: SearchParams, rounds: u64) {
    bench_with(label, params, dhumbal::agents::Rollout::Random, rounds);
}

/// `--only TEXT`: only the configurations whose label contains TEXT (for a profiler).
fn selected(label: &str) -> bool {
    let args: Vec<String> = std::env::args().collect();
    match args.iter().position(|a| a == "--only") {
        Some(i) => label.contains(args[i + 1].as_str()),
        None => true,
    }
}

fn bench_with(label: &str, params: SearchParams, rollout: dhumbal::agents::Rollout, rounds: u64) {
    if !selected(label) {
        return;
    }
    let rules = Rules::new(Preset::Paper.variant()).unwrap();
    let mut timed = Timed {
        inner: SearchAgent::new("search", params, rollout),
        times: Vec::new(),
    };
    let mut others: Vec<Heuristic> = [Style::Aggressive, Style::Conservative, Style::Balanced]
        .into_iter()
        .map(Heuristic::paper)
        .collect();
    let start = Instant::now();
    let sims_before = timed.inner.simulations();
    let turns_before = timed.inner.simulated_turns();
    for deal in 0..rounds {
        let mut table = Table::new(rules.clone());
        let mut streams = ChaChaStreams::new(1, deal, &[0, 1, 2, 3]);
        let mut seats: Vec<&mut dyn Agent> = vec![&mut timed];
        for o in others.iter_mut() {
            seats.push(o);
        }
        table.play_round(&mut seats, &mut streams, &mut ()).unwrap();
    }
    let wall = start.elapsed().as_secs_f64();
    let sims = timed.inner.simulations() - sims_before;
    let turns = timed.inner.simulated_turns() - turns_before;
    let mut t = timed.times.clone();
    t.sort_by(f64::total_cmp);
    let mean = t.iter().sum::<f64>() / t.len() as f64;
    let p95 = t[((t.len() as f64 * 0.95) as usize).min(t.len() - 1)];
    let search_time: f64 = t.iter().sum::<f64>() / 1e3;
    println!(
        "{label:<44} {:>6} decisions  mean {mean:>8.3} ms  p95 {p95:>8.3} ms  {:>7.0} simulations/decision  {:>10.0} simulations/s  {:>5.1} turns/simulation  last tree {:>6} nodes  ({rounds} rounds, {wall:.1} s)",
        t.len(),
        sims as f64 / t.len() as f64,
        sims as f64 / search_time,
        turns as f64 / sims as f64,
        timed.inner.tree_size(),
    );
}

fn main() {
    // `cargo bench` passes `--bench`; `cargo test --all-targets` runs this too, as a smoke
    // test, and then a short run is enough.
    let quick =
        std::env::args().any(|a| a == "--quick") || !std::env::args().any(|a| a == "--bench");
    let scale = if quick { 1 } else { 5 };
    println!(
        "search benchmark: 4 players, paper rules, seat 0 searches vs Aggressive/Conservative/Balanced; extra settings {:?}",
        extra()
    );
    bench(
        "ismcts 100 x 3 (paper budget)",
        search(
            "ismcts",
            serde_json::json!({"iterations": 100, "determinizations": 3}),
        ),
        40 * scale,
    );
    bench(
        "mcts 100 x 1 (paper budget)",
        search("mcts", serde_json::json!({"iterations": 100})),
        40 * scale,
    );
    bench(
        "ismcts 1000 (default)",
        search("ismcts", serde_json::json!({})),
        10 * scale,
    );
    // The configuration studies use (the championship's search stage and final); a scenario's
    // `rollout: aggressive` builds the same concrete rollout (`Heuristic::from_recipe`).
    bench_with(
        "ismcts 1000, aggressive rollouts",
        search("ismcts", serde_json::json!({"iterations": 1000})),
        dhumbal::agents::Rollout::Heuristic(Heuristic::paper(Style::Aggressive)),
        10 * scale,
    );
    bench(
        "ismcts 10000",
        search("ismcts", serde_json::json!({"iterations": 10000})),
        2 * scale,
    );
}
