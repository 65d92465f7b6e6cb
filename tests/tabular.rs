//! The two-player tabular plan (docs/tabular.md): the 1,600-state abstraction over real
//! observations, the macro actions' legality, learning from a scenario, and reproducibility.

use std::sync::{Arc, Mutex};

mod common;
use common::{arg, has, json_file, ok, tmp};

use dhumbal::agents::tabular::{
    Chooser, FixedChooser, MAX_CARDS, MAX_VALUE, Macro, MacroAgent, PolicyTable, State,
};
use dhumbal::game::rng::{ChaChaStreams, RandomSource, deal_id};
use dhumbal::game::{Agent, Observation, Phase, Preset, Rules, Table};

/// Plays uniformly random macros and records every state it sees, checking each against the
/// raw observation (nothing clamped).
struct Probe {
    seen: Arc<Mutex<Vec<bool>>>,
}

impl Chooser for Probe {
    fn choose(&mut self, state: State, may_call: bool, rng: &mut dyn RandomSource) -> Macro {
        self.seen.lock().unwrap()[state.index()] = true;
        Macro::ALL[rng.below(if may_call { 3 } else { 2 }) as usize]
    }
}

/// Checks that an observation maps into the abstraction unclamped.
fn check(obs: &Observation<'_>) {
    let s = State::of(obs);
    assert!(
        (1..=MAX_CARDS).contains(&obs.hand.len()),
        "hand of {}",
        obs.hand.len()
    );
    assert!(
        (1..=MAX_VALUE as u32).contains(&obs.hand_value),
        "value {}",
        obs.hand_value
    );
    assert_eq!(s.own as usize, obs.hand.len());
    assert_eq!(u32::from(s.value), obs.hand_value);
    assert_eq!(s.opponent, obs.hand_sizes[1 - obs.seat]);
    assert_eq!(State::from_index(s.index()), s);
}

/// `agent`, checking each observation it calls or discards on (see [`check`]).
fn checked(agent: impl Agent) -> impl Agent {
    common::Probe::new(agent, |obs: &Observation<'_>| {
        if obs.phase != Phase::Pick {
            check(obs)
        }
    })
}

/// Every observation met in 3,000 games of `simplified-2p` (random macros against each fixed
/// macro agent) maps into the 1,600 states without clamping, and every macro action is one
/// the engine accepts (it refuses illegal ones with an error, which would fail the game).
#[test]
fn states_cover_real_observations_and_macros_only_make_legal_actions() {
    let rules = Rules::new(Preset::Simplified2p.variant()).unwrap();
    let seen = Arc::new(Mutex::new(vec![false; 1600]));
    for game in 0..3_000u64 {
        let fixed = Macro::ALL[(game % 3) as usize];
        let mut a = checked(MacroAgent::new("probe", Probe { seen: seen.clone() }));
        let mut b = checked(MacroAgent::new(
            "fixed",
            FixedChooser {
                action: fixed,
                call_at: (game % 7) as u32,
            },
        ));
        let mut seats: Vec<&mut dyn Agent> = vec![&mut a, &mut b];
        let mut table = Table::new(rules.clone());
        let mut streams = ChaChaStreams::new(11, deal_id(game, 0), &[0, 1]);
        table.start_game(&mut seats);
        while !table.game_over() {
            streams.set_deal(deal_id(game, table.rounds_played()));
            table
                .play_round(&mut seats, &mut streams, &mut ())
                .unwrap_or_else(|e| panic!("game {game}: {e}"));
        }
        table.end_game(&mut seats);
    }
    let met = seen.lock().unwrap().iter().filter(|&&s| s).count();
    // Many states are unreachable (one card worth 64, five cards worth 1): a good share is met.
    assert!(met > 400, "only {met} states met");
}

#[test]
fn a_policy_table_reads_back_bit_for_bit() {
    let mut t = PolicyTable::new();
    for i in 0..1600 {
        t.values[i] = [i as f64 / 7.0, -(i as f64).sqrt(), f64::NEG_INFINITY];
        t.visits[i] = i as u64 * 3;
        t.actions[i] = Macro::ALL[i % 3];
    }
    t.set_meta("rules", "abc");
    let back = PolicyTable::parse(&t.to_csv()).unwrap();
    assert_eq!(back, t);
    let broken = t.to_csv().replace("1,1,1,", "1,1,99,");
    let e = PolicyTable::parse(&broken).unwrap_err().to_string();
    has(&e, "field 3 must be 1 to 64");
    // NaN or plus infinity would choose a macro by accident: refused, with the line.
    for bad in ["NaN", "inf"] {
        let broken = t.to_csv().replacen(",-inf,", &format!(",{bad},"), 1);
        let e = PolicyTable::parse(&broken).unwrap_err().to_string();
        has(&e, "field 6 must be a number or -inf");
        has(&e, &format!("`{bad}`"));
    }
    let broken = t.to_csv().replacen(",call,", ",fold,", 1);
    let e = PolicyTable::parse(&broken).unwrap_err().to_string();
    has(
        &e,
        "field 7 must be one of greedy-decrease, delay-collect, call, got `fold`",
    );
}

/// Learning from a scenario: both methods, in seconds; the tables are the same bytes on 1 and
/// 2 threads; the learned policies beat `random` clearly, and a `tabular` agent seats them.
#[test]
fn both_methods_learn_from_a_scenario_reproducibly() {
    let dir = tmp();
    let yaml = r#"
name: tab
seed: 3
rules: {preset: simplified-2p}
train:
  - id: q
    algorithm: q-learning
    episodes: 20000
    reward: points
    opponents: [random, aggressive]
    evaluate: {every: 20000, games: 100, against: [random]}
    checkpoint: q.csv
  - id: vi
    algorithm: value-iteration
    episodes: 20000
    hyper: {samples: 5000}
    opponents: [random, aggressive]
    evaluate: {every: 20000, games: 100, against: [random]}
    checkpoint: vi.csv
"#;
    let mut tables = Vec::new();
    for threads in [1usize, 2] {
        let sub = dir.path().join(format!("t{threads}"));
        std::fs::create_dir_all(&sub).unwrap();
        let path = sub.join("tab.yaml");
        std::fs::write(&path, yaml).unwrap();
        let threads = threads.to_string();
        let status = ok(&[
            "train",
            arg(&path),
            "--threads",
            &threads,
            "--out",
            arg(&sub.join("out")),
        ]);
        let out = String::from_utf8_lossy(&status.stdout).to_string();
        for id in ["q", "vi"] {
            let m = json_file(&sub.join(format!("out/train/{id}/manifest.json")));
            let last = &m["last_evaluations"][0];
            assert_eq!(last["opponent"], "random");
            assert!(
                last["low"].as_f64().unwrap() > 0.8,
                "{id} does not beat random clearly: {last}\n{out}"
            );
            assert!(
                sub.join(format!("out/train/{id}/figures/policy_calls.svg"))
                    .is_file()
            );
        }
        tables.push((
            std::fs::read(sub.join("q.csv")).unwrap(),
            std::fs::read(sub.join("vi.csv")).unwrap(),
        ));
        // The learned tables play.
        let play = sub.join("play.yaml");
        std::fs::write(
            &play,
            "name: play\nseed: 5\nrules: {preset: simplified-2p}\ngames: 20\nseating: rotate\nagents:\n  - {kind: tabular, params: {policy: vi.csv}}\n  - {kind: macro, params: {action: delay-collect}}\n",
        )
        .unwrap();
        ok(&[arg(&play), "--out", arg(&sub.join("played"))]);
    }
    assert!(
        tables[0] == tables[1],
        "tables differ between 1 and 2 threads"
    );
}
