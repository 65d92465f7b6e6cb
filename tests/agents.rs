//! Agent families through the registry, as a scenario uses them: the `epsilon` wrapper (the
//! family added as one file and one registry line), the lifecycle hooks every agent hears,
//! and the registry's messages for bad entries.

use std::path::Path;
use std::sync::{Arc, Mutex};

mod common;
use common::{has, has_all, ok, play_into, tmp_scenario};

use dhumbal::agents::registry::Standalone;
use dhumbal::agents::{RandomAgent, Recipe, registry};
use dhumbal::game::{Agent, Discard, Preset, RoundOutcome, Rules, Table};
use dhumbal::rng::ChaChaStreams;
use dhumbal::scenario::{self, AgentDef, Overrides, SeatEntry};
use dhumbal::tournament::Lineup;
use serde_json::{Value, json};

fn paper() -> Rules {
    Rules::new(Preset::Paper.variant()).unwrap()
}

fn recipe(entry: Value) -> Arc<dyn Recipe> {
    Standalone::recipe(&entry, &paper()).unwrap()
}

/// Every outcome of `rounds` deals of the paper's rules, one recipe per seat.
fn play(recipes: &[Arc<dyn Recipe>], rounds: u64, seed: u64) -> Vec<RoundOutcome> {
    let rules = paper();
    let mut agents: Vec<Box<dyn Agent>> = recipes
        .iter()
        .enumerate()
        .map(|(s, r)| r.build(&format!("seat{s}")))
        .collect();
    let slots: Vec<u32> = (0..agents.len() as u32).collect();
    let mut table = Table::new(rules);
    (0..rounds)
        .map(|deal| {
            let mut streams = ChaChaStreams::new(seed, deal, &slots);
            table
                .play_round(&mut agents, &mut streams, &mut ())
                .unwrap()
        })
        .collect()
}

fn others() -> Vec<Arc<dyn Recipe>> {
    ["aggressive", "conservative", "opportunistic"]
        .iter()
        .map(|k| recipe(json!(k)))
        .collect()
}

fn with_first(first: Arc<dyn Recipe>) -> Vec<Arc<dyn Recipe>> {
    let mut all = vec![first];
    all.extend(others());
    all
}

#[test]
fn epsilon_zero_plays_exactly_as_the_wrapped_agent() {
    let inner = json!({"kind": "balanced", "params": {"call_probability": 0.5}});
    let plain = play(&with_first(recipe(inner.clone())), 300, 7);
    let wrapped = play(
        &with_first(recipe(
            json!({"kind": "epsilon", "params": {"agent": inner, "epsilon": 0.0}}),
        )),
        300,
        7,
    );
    assert_eq!(plain, wrapped);
}

#[test]
fn epsilon_one_plays_exactly_as_random() {
    let random = play(&with_first(recipe(json!("random"))), 300, 8);
    let wrapped = play(
        &with_first(recipe(
            json!({"kind": "epsilon", "params": {"agent": "aggressive", "epsilon": 1.0}}),
        )),
        300,
        8,
    );
    assert_eq!(random, wrapped);
}

/// In between, the agent plays legally (the engine refuses anything else), differs from both
/// ends, and its strength lies between them: noise costs Aggressive wins against the field.
#[test]
fn epsilon_in_between_mixes_the_two() {
    let rounds = 3000;
    let wins = |first: Arc<dyn Recipe>| {
        play(&with_first(first), rounds, 9)
            .iter()
            .filter(|o| o.winner == Some(0))
            .count()
    };
    let eps = |e: f64| {
        recipe(json!({"kind": "epsilon", "params": {"agent": "aggressive", "epsilon": e}}))
    };
    let (clean, half, noise) = (wins(eps(0.0)), wins(eps(0.5)), wins(eps(1.0)));
    assert!(
        noise < half && half < clean,
        "wins: {clean} clean, {half} at 0.5, {noise} random"
    );
}

#[test]
fn epsilon_entries_are_checked_with_their_fields_named() {
    let problems = |entry: Value| -> Vec<(String, String)> {
        Standalone::recipe(&entry, &paper()).err().expect("refused")
    };
    let p = problems(json!({"kind": "epsilon", "params": {"agent": "random", "epsilon": 1.5}}));
    assert_eq!(p[0].0, "params.epsilon");
    assert!(p[0].1.contains("probability"), "{p:?}");
    let p = problems(json!({"kind": "epsilon"}));
    assert_eq!(p[0].0, "params.agent");
    assert!(p[0].1.starts_with("missing"), "{p:?}");
    let p = problems(json!({"kind": "epsilon", "params": {"agent": {"kind": "balancd"}}}));
    assert_eq!(p[0].0, "params.agent.kind");
    assert!(p[0].1.contains("did you mean `balanced`"), "{p:?}");
    let p = problems(json!({"kind": "epsilon", "params": {"agent": "random", "epsilonn": 0.2}}));
    assert_eq!(p[0].0, "params.epsilonn");
    assert!(p[0].1.contains("did you mean `epsilon`"), "{p:?}");
}

#[test]
fn every_family_has_a_unique_name_and_documented_parameters() {
    let mut names: Vec<&str> = registry::FAMILIES.iter().map(|f| f.name()).collect();
    assert!(names.contains(&"epsilon"));
    names.sort_unstable();
    let count = names.len();
    names.dedup();
    assert_eq!(names.len(), count, "two families share a name");
    for f in registry::FAMILIES {
        for p in f.params().iter().chain(f.fields().iter()) {
            assert!(!p.doc.is_empty(), "{}.{} has no doc", f.name(), p.name);
            if let Some(d) = &p.default {
                assert!(
                    p.ty.admits(d),
                    "{}.{}: default {d} is not a {:?}",
                    f.name(),
                    p.name,
                    p.ty
                );
            }
        }
    }
}

/// An agent's discard as the engine asks it (`discard_into`, written in place) and as
/// `discard` returns it, compared at every discard; the agent plays the in-place one.
struct BothWays {
    inner: Box<dyn Agent>,
    compared: Arc<Mutex<u64>>,
}

impl Agent for BothWays {
    fn name(&self) -> &str {
        self.inner.name()
    }

    common::decisions!(self, obs, rng =>
        call { self.inner.call(obs, rng) }
        discard { unreachable!("the engine asks discard_into") }
        discard_into(into) {
            // The heuristics draw nothing to discard, so asking twice changes nothing.
            let returned = self.inner.discard(obs, rng)?;
            // Stale cards in the buffer must not survive into the answer.
            *into = Discard::from_slice(&obs.hand.as_slice()[..1]).unwrap();
            into.push(obs.hand.as_slice()[0]);
            self.inner.discard_into(obs, rng, into)?;
            assert_eq!(
                returned.as_slice(),
                into.as_slice(),
                "hand {:?}",
                obs.hand.as_slice()
            );
            *self.compared.lock().unwrap() += 1;
            Ok(())
        }
        pick { self.inner.pick(obs, rng) }
    );
}

/// The heuristics write their discard in place (`Agent::discard_into`, which spares the
/// engine a stall on every turn): the same cards, in the same order, as `discard` returns,
/// for every style under every preset, at every discard of a few hundred rounds.
#[test]
fn heuristics_write_in_place_the_discard_they_return() {
    for preset in Preset::ALL {
        let rules = Rules::new(preset.variant()).unwrap();
        let compared = Arc::new(Mutex::new(0u64));
        let kinds = ["aggressive", "conservative", "balanced", "opportunistic"];
        let mut agents: Vec<Box<dyn Agent>> = kinds
            .iter()
            .take(rules.players())
            .map(|k| {
                let inner = Standalone::recipe(&json!(k), &rules).unwrap().build(k);
                Box::new(BothWays {
                    inner,
                    compared: compared.clone(),
                }) as Box<dyn Agent>
            })
            .collect();
        let slots: Vec<u32> = (0..agents.len() as u32).collect();
        let mut table = Table::new(rules);
        for deal in 0..300 {
            let mut streams = ChaChaStreams::new(5, deal, &slots);
            table
                .play_round(&mut agents, &mut streams, &mut ())
                .unwrap();
        }
        let compared = *compared.lock().unwrap();
        assert!(
            compared > 3000,
            "{preset:?}: only {compared} discards compared"
        );
    }
}

/// Calls to the hooks, as (seat, hook, detail).
type Log = Arc<Mutex<Vec<(usize, &'static str, i64)>>>;

/// An agent that plays like `random` and writes down every hook it hears.
struct Listener {
    log: Log,
}

impl Agent for Listener {
    fn name(&self) -> &str {
        "listener"
    }
    fn game_start(&mut self, seat: usize, rules: &Rules) {
        self.log
            .lock()
            .unwrap()
            .push((seat, "game_start", rules.players() as i64));
    }
    fn round_start(&mut self, seat: usize, standings: &[i64]) {
        self.log
            .lock()
            .unwrap()
            .push((seat, "round_start", standings[seat]));
    }
    fn round_end(&mut self, seat: usize, outcome: &RoundOutcome) {
        self.log
            .lock()
            .unwrap()
            .push((seat, "round_end", outcome.coin_delta[seat]));
    }
    fn game_end(&mut self, seat: usize, standings: &[i64], won: bool) {
        let _ = standings;
        self.log
            .lock()
            .unwrap()
            .push((seat, "game_end", i64::from(won)));
    }
    common::decisions!(self, obs, rng =>
        call { Ok(RandomAgent::choose_call(rng)) }
        discard { Ok(RandomAgent::choose_discard(obs, rng)) }
        pick { Ok(RandomAgent::choose_pick(obs, rng)) }
    );
}

/// A recipe whose agents all write to one log: shared state across agents, as a recipe
/// shares a compiled script or model weights.
struct ListenerRecipe(Log);

impl Recipe for ListenerRecipe {
    fn family(&self) -> &'static str {
        "listener"
    }
    fn describe(&self) -> serde_json::Map<String, Value> {
        serde_json::Map::new()
    }
    fn build(&self, _id: &str) -> Box<dyn Agent> {
        Box::new(Listener {
            log: self.0.clone(),
        })
    }
}

/// A session of 5 rounds played by the runner: each agent hears the game start, every round
/// start and end (its coins before, its coin change after), and the game end, in that order,
/// and exactly one seat is told it won. Wrappers (the runner's timing wrapper, `epsilon`)
/// pass the hooks on.
#[test]
fn agents_hear_every_round_and_game_through_the_runner() {
    let text = "name: hooks\nseed: 3\ndeals: 5\nsession: 5\nrules: {preset: paper}\n\
                agents: [{kind: random}, {kind: random}, {kind: random}, {kind: random}]\n";
    let scenario = scenario::parse(Path::new("hooks.yaml"), text, &Overrides::default()).unwrap();
    let stage = &scenario.stages[0];
    let log: Log = Arc::default();
    let listener: Arc<dyn Recipe> = Arc::new(ListenerRecipe(log.clone()));
    // Seat 3 is the listener inside `epsilon`: the wrapper must pass every hook on.
    let wrapped = dhumbal::agents::epsilon::EpsilonFamily::wrap(listener.clone(), 0.0);
    let agents: Vec<AgentDef> = stage
        .seats
        .iter()
        .enumerate()
        .map(|(i, seat)| {
            let SeatEntry::Agent(def) = seat else {
                panic!("plain agents")
            };
            let mut def = def.clone();
            def.recipe = if i == 3 {
                wrapped.clone()
            } else {
                listener.clone()
            };
            def
        })
        .collect();
    let lineup = Lineup::untimed(stage, agents);
    let records = lineup.play_unit(0).unwrap();
    assert_eq!(records.rounds(), 5);
    let log = log.lock().unwrap();
    for seat in 0..4 {
        let heard: Vec<&str> = log.iter().filter(|e| e.0 == seat).map(|e| e.1).collect();
        let mut want = vec!["game_start"];
        for _ in 0..5 {
            want.extend(["round_start", "round_end"]);
        }
        want.push("game_end");
        assert_eq!(heard, want, "seat {seat}");
        // Coins before each round follow from the coin changes after the ones before it.
        let mut coins = None;
        for e in log.iter().filter(|e| e.0 == seat) {
            match e.1 {
                "round_start" => {
                    if let Some(c) = coins {
                        assert_eq!(c, e.2, "seat {seat}: standings passed to round_start");
                    }
                    coins = Some(e.2);
                }
                "round_end" => coins = coins.map(|c| c + e.2),
                _ => {}
            }
        }
    }
    // The session's leader, one seat, is told it won; the others that they did not.
    let wins = log.iter().filter(|e| e.1 == "game_end" && e.2 == 1).count();
    assert_eq!(wins, 1, "{wins} seats told they won");
}

/// The binary lists the new family with its parameters, and runs a scenario that uses it.
#[test]
fn the_cli_knows_epsilon() {
    let out = ok(&["agents"]);
    let text = String::from_utf8_lossy(&out.stdout);
    has_all(
        &text,
        &[
            "epsilon: ",
            "probability that a decision is uniformly random",
        ],
    );
    let (dir, file) = tmp_scenario(
        "noisy.yaml",
        "name: noisy\nseed: 1\ndeals: 20\nrules: {preset: paper}\nagents:\n  \
         - {kind: epsilon, params: {agent: {kind: balanced}, epsilon: 0.2}}\n  \
         - {kind: aggressive}\n  - {kind: conservative}\n  - {kind: random}\n",
    );
    play_into(&file, &dir.path().join("out"), &["--no-report"]);
    let summary = std::fs::read_to_string(dir.path().join("out/summary.csv")).unwrap();
    has(&summary, "epsilon,epsilon,");
    let manifest = std::fs::read_to_string(dir.path().join("out/manifest.json")).unwrap();
    has(&manifest, "\"epsilon\": 0.2");
}

/// What a wrapper wraps counts: a search cannot roll out with a search, even behind `epsilon`.
#[test]
fn a_rollout_cannot_search_even_when_wrapped() {
    let entry = json!({
        "kind": "ismcts",
        "params": {"rollout": {"kind": "epsilon", "params": {"agent": "mcts"}}}
    });
    let problems = Standalone::recipe(&entry, &paper()).err().expect("refused");
    assert_eq!(problems[0].0, "params.rollout");
    assert!(
        problems[0].1.contains("cannot itself search"),
        "{problems:?}"
    );
}

/// Scenario entries: a null is as good as absent, a field of another family is named as such,
/// and an entry that names no agent says every way to name one.
#[test]
fn scenario_entries_read_as_a_user_means_them() {
    let parse = |agents: &str| {
        let text = format!(
            "name: t\nseed: 1\ndeals: 2\nrules: {{preset: paper, players: 2}}\nagents: {agents}\n"
        );
        scenario::parse(Path::new("t.yaml"), &text, &Overrides::default())
    };
    let ok = parse("[{kind: random, id: ~, params: ~}, {kind: balanced}]").unwrap();
    let SeatEntry::Agent(first) = &ok.stages[0].seats[0] else {
        panic!()
    };
    assert_eq!(first.id, "random");
    let err = parse("[{kind: balanced, max_operations: 5}, {kind: random}]")
        .err()
        .unwrap();
    let text = err.to_string();
    has(
        &text,
        "`agents.0.max_operations`: applies to `script` agents only",
    );
    let err = parse("[{params: {}}, {kind: random}]")
        .err()
        .unwrap()
        .to_string();
    has_all(
        &err,
        &["give exactly one of `kind`", "`script`", "`winner_of`"],
    );
}
