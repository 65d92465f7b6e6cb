//! Search agents (`ismcts`, `mcts`) through the public API: they play every variant legally
//! (the engine refuses illegal moves, so a wrong move fails the test), they are reproducible to
//! the bit, the oracle and scripted rollouts work, and ISMCTS beats the random baseline.

use dhumbal::agents::Recipe;
use dhumbal::agents::registry::Standalone;
use dhumbal::game::{Agent, Preset, RoundOutcome, Rules, Table};
use dhumbal::rng::ChaChaStreams;
use serde_json::{Value, json};
use std::sync::Arc;

mod common;
use common::{json_file, play_into, tmp_scenario};

fn recipe(kind: &str, params: Value) -> Arc<dyn Recipe> {
    let rules = Rules::new(Preset::Paper.variant()).unwrap();
    Standalone::recipe(&json!({ "kind": kind, "params": params }), &rules).unwrap()
}

/// Plays `rounds` rounds (new tables as point games end) and returns every outcome.
fn play(rules: &Rules, recipes: &[Arc<dyn Recipe>], rounds: u64, seed: u64) -> Vec<RoundOutcome> {
    let n = rules.players();
    let mut agents: Vec<Box<dyn Agent>> = (0..n)
        .map(|s| recipes[s % recipes.len()].build(&format!("seat{s}")))
        .collect();
    let slots: Vec<u32> = (0..n as u32).collect();
    let mut table = Table::new(rules.clone());
    let mut out = Vec::new();
    for deal in 0..rounds {
        if table.game_over() {
            table = Table::new(rules.clone());
        }
        let mut streams = ChaChaStreams::new(seed, deal, &slots);
        out.push(
            table
                .play_round(&mut agents, &mut streams, &mut ())
                .unwrap(),
        );
    }
    out
}

fn rules(preset: Preset) -> Rules {
    Rules::new(preset.variant()).unwrap()
}

#[test]
fn search_agents_play_every_variant_legally() {
    let ismcts = recipe("ismcts", json!({"iterations": 40, "determinizations": 2}));
    let mcts = recipe(
        "mcts",
        json!({"iterations": 40, "reward": "score", "rollout_turns": 8}),
    );
    let oracle = recipe("ismcts", json!({"iterations": 30, "oracle": true}));
    let random = recipe("random", json!({}));
    for preset in [
        Preset::Paper,
        Preset::Jhyap,
        Preset::Yaniv,
        Preset::Simplified2p,
    ] {
        let r = rules(preset);
        let out = play(
            &r,
            &[ismcts.clone(), mcts.clone(), oracle.clone(), random.clone()],
            12,
            3,
        );
        // Every seat was asked to decide (a search that never got a turn would pass a legality
        // check trivially), and the rounds ended as rounds do, some by a call.
        for seat in 0..r.players() {
            let asked: u32 = out.iter().map(|o| u32::from(o.decisions[seat])).sum();
            assert!(asked > 0, "{preset:?}: seat {seat} never decided");
        }
        assert!(
            out.iter().any(|o| o.caller.is_some()),
            "{preset:?}: no round ended by a call"
        );
    }
}

#[test]
fn search_is_reproducible_to_the_bit() {
    let r = rules(Preset::Paper);
    let agents = [
        recipe("ismcts", json!({"iterations": 60})),
        recipe("mcts", json!({"iterations": 60})),
        recipe("balanced", json!({})),
        recipe("random", json!({})),
    ];
    let a = play(&r, &agents, 10, 11);
    let b = play(&r, &agents, 10, 11);
    assert_eq!(a, b);
    // And the search really is random: another seed plays differently.
    let c = play(&r, &agents, 10, 12);
    assert_ne!(a, c);
}

/// A rollout can be any agent, and it is used: the same deals played by a search whose
/// rollouts are `conservative`, `aggressive` or `random` go differently (a rollout setting
/// silently ignored would give the same games).
#[test]
fn rollouts_can_be_any_agent() {
    let r = rules(Preset::Paper);
    let with = |rollout: serde_json::Value| {
        let search = recipe("ismcts", json!({"iterations": 30, "rollout": rollout}));
        play(&r, &[search, recipe("random", json!({}))], 16, 5)
    };
    let conservative = with(json!({"kind": "conservative"}));
    assert_eq!(conservative.len(), 16);
    for other in [json!({"kind": "aggressive"}), json!("random")] {
        assert!(
            conservative != with(other.clone()),
            "rollouts by {other} played the same 16 rounds as by conservative: the rollout is ignored"
        );
    }
    assert!(
        conservative == with(json!({"kind": "conservative"})),
        "not reproducible"
    );
}

#[test]
fn bad_search_parameters_are_named() {
    let bad = json!({
        "kind": "ismcts",
        "params": {
            "iterations": 0, "reward": "coins", "oracle": "yes", "exploration": -1.0, "iteratons": 5
        }
    });
    let rules = Rules::new(Preset::Paper.variant()).unwrap();
    let problems = Standalone::recipe(&bad, &rules).err().unwrap();
    let names: Vec<&str> = problems.iter().map(|(n, _)| n.as_str()).collect();
    for name in ["iterations", "reward", "oracle", "exploration", "iteratons"] {
        let field = format!("params.{name}");
        assert!(
            names.contains(&field.as_str()),
            "{name} not reported in {problems:?}"
        );
    }
    let reward = problems.iter().find(|(n, _)| n == "params.reward").unwrap();
    assert!(
        reward.1.contains("win") && reward.1.contains("score"),
        "{reward:?}"
    );
}

/// ISMCTS at a modest budget against the random baseline, two players, each deal played with
/// either agent in seat 0: it must win clearly more than half.
#[test]
fn ismcts_beats_random() {
    let mut v = Preset::Paper.variant();
    v.players = 2;
    let r = Rules::new(v).unwrap();
    let ismcts = recipe("ismcts", json!({"iterations": 150}));
    let random = recipe("random", json!({}));
    let deals = 60;
    let mut wins = 0;
    for (order, seat) in [
        (vec![ismcts.clone(), random.clone()], 0),
        (vec![random, ismcts], 1),
    ] {
        for o in play(&r, &order, deals, 21) {
            wins += u32::from(o.winner == Some(seat));
        }
    }
    let rate = f64::from(wins) / (2 * deals) as f64;
    assert!(
        rate > 0.7,
        "ISMCTS won only {rate:.3} of {} rounds",
        2 * deals
    );
}

/// An oracle seated by a scenario really sees the hands: the runner's timing wrapper passes
/// `oracle()` on, and a search asked to be an oracle without the hands fails the run instead
/// of quietly searching sampled worlds. (The run would exit 1 if the hands did not arrive.)
#[test]
fn an_oracle_in_a_scenario_sees_the_hands() {
    let (dir, scenario) = tmp_scenario(
        "oracle.yaml",
        "name: oracle\nseed: 3\ndeals: 6\nrules: {preset: paper}\nagents:\n  - id: oracle\n    kind: ismcts\n    params: {iterations: 20, oracle: true}\n  - kind: ismcts\n    params: {iterations: 20}\n  - kind: random\n  - kind: balanced\noutput: {csv: false}\n",
    );
    play_into(&scenario, &dir.path().join("out"), &["--no-report"]);
}

/// Without the wrapper's pass-through the same search refuses to run blind.
#[test]
fn an_oracle_without_the_hands_is_an_error() {
    struct Hider(Box<dyn Agent>);
    impl Agent for Hider {
        fn name(&self) -> &str {
            "hider"
        }
        // Does not pass `oracle()` on.
        common::decisions!(self, o, r =>
            call { self.0.call(o, r) }
            discard { self.0.discard(o, r) }
            pick { self.0.pick(o, r) }
        );
    }
    let r = rules(Preset::Paper);
    let oracle = recipe("ismcts", json!({"iterations": 10, "oracle": true}));
    let mut agents: Vec<Box<dyn Agent>> = vec![
        Box::new(Hider(oracle.build("oracle"))),
        recipe("random", json!({})).build("r1"),
        recipe("random", json!({})).build("r2"),
        recipe("random", json!({})).build("r3"),
    ];
    let mut table = Table::new(r);
    let mut streams = ChaChaStreams::new(1, 0, &[0, 1, 2, 3]);
    let err = table
        .play_round(&mut agents, &mut streams, &mut ())
        .unwrap_err();
    assert!(err.to_string().contains("not shown the hands"), "{err}");
}

/// Every event of a round, as text, with the state each was seen in.
#[derive(Default)]
struct Events(Vec<String>);

impl dhumbal::game::Observer for Events {
    fn event(&mut self, state: &dhumbal::game::RoundState, event: &dhumbal::game::Event) {
        self.0.push(format!("{event:?} {state:?}"));
    }
}

/// `stop_when_decided` (the default) ends a search once no other root action could catch up
/// with the most visited one in the simulations left: the same deals played with it and
/// without it go exactly alike (every event, every state, every outcome), for both selection
/// rules, random and heuristic rollouts, several worlds per iteration, four and two players,
/// while the searches that stop run fewer simulations. A rollout agent that keeps state from
/// one simulation to the next (Opportunistic's risk), or may (any agent the search builds), is
/// never cut short: the simulations left out could change its later choices.
#[test]
fn a_search_stops_when_decided_and_plays_as_the_full_budget() {
    use dhumbal::agents::{Heuristic, Rollout, SearchAgent, SearchParams, Style};
    let rollouts = || {
        [
            ("random", Rollout::Random),
            (
                "aggressive",
                Rollout::Heuristic(Heuristic::paper(Style::Aggressive)),
            ),
            (
                "balanced",
                Rollout::Heuristic(Heuristic::paper(Style::Balanced)),
            ),
            (
                "conservative",
                Rollout::Heuristic(Heuristic::paper(Style::Conservative)),
            ),
            (
                "opportunistic",
                Rollout::Heuristic(Heuristic::paper(Style::Opportunistic)),
            ),
            // Any other agent (here a random one, built as an agent): the search cannot see
            // whether it keeps state, so it plays every iteration.
            (
                "an agent",
                Rollout::Agent(Box::new(dhumbal::agents::RandomAgent::new("rollout"))),
            ),
        ]
    };
    let configs = [
        (
            Preset::Paper,
            SearchParams {
                iterations: 200,
                ..SearchParams::ismcts()
            },
        ),
        (
            Preset::Paper,
            SearchParams {
                iterations: 150,
                reward: dhumbal::agents::search::Reward::Score,
                ..SearchParams::mcts()
            },
        ),
        (
            Preset::Jhyap,
            SearchParams {
                iterations: 60,
                determinizations: 3,
                ..SearchParams::ismcts()
            },
        ),
        (
            Preset::Simplified2p,
            SearchParams {
                iterations: 300,
                rollout_turns: 0,
                ..SearchParams::ismcts()
            },
        ),
    ];
    let mut stopped_somewhere = 0;
    for (preset, params) in configs {
        let r = rules(preset);
        let n = r.players();
        for ((name, rollout), (_, twin)) in rollouts().into_iter().zip(rollouts()) {
            let mut runs = Vec::new();
            for (stop, rollout) in [(true, rollout), (false, twin)] {
                let p = SearchParams {
                    stop_when_decided: stop,
                    ..params
                };
                let mut search = SearchAgent::new("search", p, rollout);
                let mut others: Vec<Box<dyn Agent>> = (1..n)
                    .map(|s| {
                        let kind = ["balanced", "random", "opportunistic"][(s - 1) % 3];
                        recipe(kind, json!({})).build(&format!("seat{s}"))
                    })
                    .collect();
                let slots: Vec<u32> = (0..n as u32).collect();
                let mut table = Table::new(r.clone());
                let mut events = Events::default();
                let mut outcomes = Vec::new();
                let mut decisions = 0u64;
                for deal in 0..6 {
                    if table.game_over() {
                        table = Table::new(r.clone());
                    }
                    let mut seats: Vec<&mut dyn Agent> = vec![&mut search];
                    seats.extend(others.iter_mut().map(|a| &mut **a as &mut dyn Agent));
                    let mut streams = ChaChaStreams::new(17, deal, &slots);
                    let o = table
                        .play_round(&mut seats, &mut streams, &mut events)
                        .unwrap();
                    decisions += u64::from(o.decisions[0]);
                    outcomes.push(o);
                }
                runs.push((outcomes, events.0, search.simulations(), decisions));
            }
            let (with, without) = (&runs[0], &runs[1]);
            let what = format!(
                "{preset:?}, {:?} x {}, {name} rollouts",
                params.selection, params.iterations
            );
            assert_eq!(with.0, without.0, "{what}: outcomes differ");
            assert_eq!(with.1, without.1, "{what}: events differ");
            let budget = u64::from(params.iterations * params.determinizations);
            assert!(with.3 > 0, "{what}: the search never decided");
            assert_eq!(without.2, budget * without.3, "{what}: the full budget");
            if name == "opportunistic" || name == "an agent" {
                assert_eq!(
                    with.2, without.2,
                    "{what}: a rollout that may keep state was cut short"
                );
            } else {
                assert!(with.2 < without.2, "{what}: no search stopped early");
                stopped_somewhere += 1;
            }
        }
    }
    assert_eq!(stopped_somewhere, 16);
}

/// `stop_when_decided` changes no decision, so a description (what manifests show and scenario
/// hashes are made of) names it only when it is turned off: runs started before it existed
/// keep their hash, and resume and merge as before.
#[test]
fn stop_when_decided_is_described_only_when_off() {
    let on = recipe("ismcts", json!({"iterations": 50})).describe();
    assert!(on["params"].get("stop_when_decided").is_none(), "{on:?}");
    assert_eq!(on["params"]["iterations"], 50);
    let off = recipe("mcts", json!({"stop_when_decided": false})).describe();
    assert_eq!(off["params"]["stop_when_decided"], false, "{off:?}");
}

/// A search agent that keeps the notes of its decisions' explanations.
struct Explaining {
    inner: Box<dyn Agent>,
    notes: Vec<String>,
}

impl Explaining {
    fn keep(&mut self, obs: &dhumbal::game::Observation<'_>) {
        if let Some(e) = self.inner.explain(obs) {
            self.notes.extend(e.notes);
        }
    }
}

impl Agent for Explaining {
    fn name(&self) -> &str {
        self.inner.name()
    }
    common::decisions!(self, obs, rng =>
        call { let c = self.inner.call(obs, rng); self.keep(obs); c }
        discard { let d = self.inner.discard(obs, rng); self.keep(obs); d }
        pick { let p = self.inner.pick(obs, rng); self.keep(obs); p }
    );
}

/// A tuned agent file of a heuristic (as `tune` writes them) rolls out as that heuristic given
/// inline: the same games, and the heuristic's rollout (no agent built, so its searches stop
/// once settled, which a rollout agent the search cannot see into never does).
#[test]
fn a_tuned_heuristic_rolls_out_as_its_heuristic() {
    let file = "scenarios/tuning/tuned/aggressive-paper-2p.json";
    let entry = json_file(std::path::Path::new(file));
    assert_eq!(entry["kind"], "aggressive", "{entry}");
    let r = rules(Preset::Paper);
    let tuned = recipe(
        "ismcts",
        json!({"iterations": 200, "rollout": {"tuned": file}}),
    );
    let inline = recipe("ismcts", json!({"iterations": 200, "rollout": entry}));
    let balanced = recipe("balanced", json!({}));
    let a = play(&r, &[tuned.clone(), balanced.clone()], 6, 9);
    assert_eq!(a, play(&r, &[inline, balanced.clone()], 6, 9));
    let mut search = Explaining {
        inner: tuned.build("search"),
        notes: Vec::new(),
    };
    let mut others: Vec<Box<dyn Agent>> = (1..4)
        .map(|s| balanced.build(&format!("seat{s}")))
        .collect();
    let mut table = Table::new(r.clone());
    for deal in 0..3 {
        let mut seats: Vec<&mut dyn Agent> = vec![&mut search];
        seats.extend(others.iter_mut().map(|a| &mut **a as &mut dyn Agent));
        let mut streams = ChaChaStreams::new(9, deal, &[0, 1, 2, 3]);
        table.play_round(&mut seats, &mut streams, &mut ()).unwrap();
    }
    assert!(
        search
            .notes
            .iter()
            .any(|n| n.contains("rollout aggressive-paper-2p cut after")),
        "{:?}",
        search.notes
    );
    assert!(
        search.notes.iter().any(|n| n.starts_with("stopped after")),
        "a tuned heuristic's rollouts were not the heuristic's: no search stopped early"
    );
}
