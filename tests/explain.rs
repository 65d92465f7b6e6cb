//! Explanations in decision traces (`Agent::explain`, docs/agents.md, docs/rhai.md): every
//! agent family explains each of its traced decisions with content that fits what it did, a
//! trace holds exactly the decisions the records count, and explaining changes no record.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::Value;

mod common;
use common::{arg, play_into, refused, said, scenario, tmp};

/// A script agent that explains itself: scores its discards in a map, its picks in an array
/// with a note, its calls in the whole form; it prints while deciding, and while explaining
/// (which must reach no log). tests/python/test_traces.py seats it too.
const SCRIPT: &str = include_str!("fixtures/explaining.rhai");

/// Every family at the tables: eight seats of the paper's rules (the shipped networks were
/// trained at a paper table; players aside, their rules match), and a two-player stage for
/// the tabular policy (its abstraction is for `simplified-2p`) against `epsilon`.
fn scenario_text(trace: bool) -> String {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/learning");
    let at = |p: &str| root.join(p).display().to_string();
    let output = if trace {
        "output: {decision_timing: false, trace: {deals: [0], every: 1}}"
    } else {
        "output: {decision_timing: false}"
    };
    format!(
        "name: explain
seed: 7
stages:
  - name: paper
    rules: {{preset: paper, players: 8}}
    deals: 16
    agents:
      - kind: aggressive
      - kind: conservative
      - kind: balanced
      - {{kind: ismcts, params: {{iterations: 150}}}}
      - {{kind: mcts, params: {{iterations: 100, determinizations: 2}}}}
      - {{id: ppo, kind: ppo, params: {{checkpoint: {ppo}}}}}
      - {{id: dqn, kind: dqn, params: {{checkpoint: {dqn}}}}}
      - {{script: agent.rhai}}
  - name: tabular
    rules: {{preset: simplified-2p}}
    games: 4
    agents:
      - {{kind: tabular, params: {{policy: {table}}}}}
      - {{kind: epsilon, params: {{agent: balanced, epsilon: 0.3}}}}
{output}
",
        ppo = at("checkpoints/paper/ppo-cards-2p.safetensors"),
        dqn = at("checkpoints/paper/dqn-paper-2p.safetensors"),
        table = at("tabular/q-learning.csv"),
    )
}

/// Runs `file` into `out` on `threads` threads with `rounds.csv`.
fn play(file: &Path, out: &Path, threads: &str) {
    play_into(file, out, &["--threads", threads, "--csv", "--no-report"]);
}

/// A decision event with its trace's deal and arrangement.
type Decision = (u64, u64, Value);
/// Trace files by name, their lines without the decision time (a measurement).
type Traces = BTreeMap<String, Vec<Value>>;

/// The decision events of a stage's traces, in file order, and the traces.
fn decisions(stage: &Path) -> (Vec<Decision>, Traces) {
    let mut out = Vec::new();
    let mut files = BTreeMap::new();
    for entry in std::fs::read_dir(stage.join("traces")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "jsonl") {
            continue;
        }
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        // deal-NNNNNN-arrangement-AAA.jsonl
        let deal: u64 = name[5..11].parse().unwrap();
        let arrangement: u64 = name[24..27].parse().unwrap();
        let mut lines = Vec::new();
        for line in std::fs::read_to_string(&path).unwrap().lines() {
            let mut v: Value = serde_json::from_str(line).unwrap();
            if v["event"] == "decision" {
                out.push((deal, arrangement, v.clone()));
            }
            v.as_object_mut().unwrap().remove("ns");
            lines.push(v);
        }
        files.insert(name, lines);
    }
    (out, files)
}

fn texts(d: &Value, list: &Value) -> Vec<String> {
    list.as_array()
        .unwrap()
        .iter()
        .map(|c| said(d, &c["choice"]))
        .collect()
}

fn legal(d: &Value) -> Vec<String> {
    d["legal"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_str().unwrap().to_string())
        .collect()
}

fn sorted(mut v: Vec<String>) -> Vec<String> {
    v.sort();
    v
}

fn notes(e: &Value) -> Vec<String> {
    e["notes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n.as_str().unwrap().to_string())
        .collect()
}

fn has_note(e: &Value, part: &str) -> bool {
    notes(e).iter().any(|n| n.contains(part))
}

/// The number in a note such as "300 worlds sampled (...)".
fn worlds(e: &Value) -> f64 {
    let note = notes(e)
        .into_iter()
        .find(|n| n.contains("worlds sampled"))
        .expect("a search says how many worlds it sampled");
    note.split_whitespace().next().unwrap().parse().unwrap()
}

/// Checks one decision's explanation against what the agent did; returns its family's name
/// for the tally.
fn check(d: &Value) -> &'static str {
    let agent = d["agent"].as_str().unwrap();
    let phase = d["phase"].as_str().unwrap();
    let chosen = said(d, &d["choice"]);
    let e = &d["explanation"];
    let what = format!("{agent} {phase} {chosen}: {e}");
    assert!(e.is_object(), "no explanation: {what}");
    let candidates = e["candidates"].as_array().unwrap();
    assert!(!candidates.is_empty(), "no candidates: {what}");
    for c in candidates {
        assert!(c["score"].as_f64().is_some_and(f64::is_finite), "{what}");
        for (_, v) in c["details"].as_object().unwrap() {
            assert!(v.as_f64().is_some_and(f64::is_finite), "{what}");
        }
    }
    let names = texts(d, &e["candidates"]);
    let scores: Vec<f64> = candidates
        .iter()
        .map(|c| c["score"].as_f64().unwrap())
        .collect();
    let top = scores.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let score_of = |text: &str| scores[names.iter().position(|n| n == text).unwrap()];
    let legal = legal(d);
    for n in &names {
        assert!(legal.contains(n), "a candidate is not legal: {what}");
    }
    match agent {
        "aggressive" | "conservative" | "balanced" => {
            assert!(names.contains(&chosen), "{what}");
            match phase {
                "call" => {
                    assert!(has_note(e, "call rule"), "{what}");
                    assert_eq!(e["score"], "probability", "{what}");
                    assert!((scores.iter().sum::<f64>() - 1.0).abs() < 1e-12, "{what}");
                    // A drawn call says what it drew, and that decided as the choice did.
                    if let Some(n) = notes(e).iter().find(|n| n.contains("drew")) {
                        assert_eq!(agent, "balanced", "{what}");
                        let calls = n.ends_with(": calls");
                        assert_eq!(calls, chosen == "call", "{what}");
                    } else {
                        assert_eq!(score_of(&chosen), 1.0, "{what}");
                    }
                }
                "discard" => {
                    // The one played is ranked first (the first of the best eq. 2 scores, or
                    // the near-threshold rule's pick).
                    assert_eq!(names[0], chosen, "{what}");
                    assert!(has_note(e, "the call threshold"), "{what}");
                }
                _ => {
                    assert_eq!(names[0], chosen, "{what}");
                    assert_eq!(score_of(&chosen), top, "{what}");
                    assert!(has_note(e, "threshold"), "{what}");
                }
            }
            "heuristic"
        }
        "ismcts" | "mcts" => {
            assert_eq!(e["score"], "visits", "{what}");
            // Every simulation went through exactly one root action (at a call decision, the
            // call or one of the discards that play on).
            let visits: f64 = match candidates
                .iter()
                .find(|c| said(d, &c["choice"]) == "play on")
            {
                Some(on) => {
                    let call = names
                        .iter()
                        .position(|n| n == "call")
                        .map_or(0.0, |i| scores[i]);
                    call + on["details"]["discard_visits"].as_f64().unwrap()
                }
                None => scores.iter().sum(),
            };
            let budget = if agent == "ismcts" { 150.0 } else { 200.0 };
            let sampled = worlds(e);
            assert_eq!(visits, sampled, "{what}");
            if has_note(e, "stopped after") {
                // Stopped once settled (stop_when_decided, the default): the most visited
                // action leads the next one shown by more than the simulations left, or it is
                // the only legal one.
                assert!(sampled < budget, "{what}");
                if has_note(e, "the only legal action") {
                    assert_eq!(candidates.len(), 1, "{what}");
                } else {
                    let mut v = scores.clone();
                    v.sort_by(|a, b| b.total_cmp(a));
                    assert!(v.len() >= 2 && v[0] > v[1] + (budget - sampled), "{what}");
                }
            } else {
                assert_eq!(sampled, budget, "{what}");
            }
            for c in candidates {
                let mean = c["details"]["mean_reward"].as_f64().unwrap();
                assert!((0.0..=1.0).contains(&mean), "{what}");
            }
            assert_eq!(names[0], chosen, "{what}");
            assert_eq!(score_of(&chosen), top, "{what}");
            if phase == "call" && chosen == "play on" {
                // Searched with the discards: one of them was visited most.
                assert!(has_note(e, "plays on, as discard"), "{what}");
            }
            "search"
        }
        "ppo" | "dqn" => {
            // One score per legal action, the one played the best.
            assert_eq!(sorted(names.clone()), sorted(legal.clone()), "{what}");
            assert_eq!(score_of(&chosen), top, "{what}");
            if agent == "ppo" {
                assert_eq!(e["score"], "probability", "{what}");
                assert!((scores.iter().sum::<f64>() - 1.0).abs() < 1e-4, "{what}");
            } else {
                assert_eq!(e["score"], "Q-value", "{what}");
            }
            "network"
        }
        "tabular" => {
            assert!(names.contains(&chosen), "{what}");
            assert_eq!(e["score"], "macro value", "{what}");
            assert!(has_note(e, "state: "), "{what}");
            assert!(has_note(e, "values: greedy-decrease"), "{what}");
            // Each macro offered is a candidate: the call at the call decision only.
            assert_eq!(
                candidates.len(),
                if phase == "call" { 3 } else { 2 },
                "{what}"
            );
            "tabular"
        }
        "epsilon" => {
            assert!(names.contains(&chosen), "{what}");
            if has_note(e, "explored (epsilon 0.3)") {
                assert_eq!(sorted(names.clone()), sorted(legal.clone()), "{what}");
                for s in &scores {
                    assert!((s - 1.0 / legal.len() as f64).abs() < 1e-12, "{what}");
                }
                "epsilon explored"
            } else {
                assert!(has_note(e, "did not explore (epsilon 0.3)"), "{what}");
                // The wrapped balanced agent's own explanation follows.
                assert!(
                    has_note(e, "call threshold")
                        || has_note(e, "call rule")
                        || has_note(e, "threshold"),
                    "{what}"
                );
                "epsilon wrapped"
            }
        }
        "agent" => {
            assert!(names.contains(&chosen), "{what}");
            // explain()'s own print is in the notes (and in no log).
            assert!(has_note(e, "in explain(), print: explaining"), "{what}");
            match phase {
                "discard" => {
                    // Ranked by the map's scores; what the decision printed is kept.
                    let hand = d["view"]["hand"].as_array().unwrap();
                    assert_eq!(names.len(), hand.len(), "{what}");
                    assert_eq!(score_of(&chosen), top, "{what}");
                    let card = chosen.strip_prefix("discard ").unwrap();
                    assert!(has_note(e, &format!("print: shedding {card}")), "{what}");
                    assert_eq!(e["score"], "script score", "{what}");
                }
                "pick" => {
                    assert_eq!(names[0], "draw", "{what}");
                    assert!(has_note(e, "takes a card worth 3 or less"), "{what}");
                }
                _ => {
                    assert_eq!(e["score"], "margin", "{what}");
                    assert!(has_note(e, "calls at 5 or less"), "{what}");
                }
            }
            "script"
        }
        other => panic!("an agent this test did not seat: {other}"),
    }
}

/// `decisions` of each (deal, rotation, round, seat) in a stage's `rounds.csv`.
fn counted(stage: &Path) -> BTreeMap<(u64, u64, u64, u64), u64> {
    let csv = std::fs::read_to_string(stage.join("rounds.csv")).unwrap();
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = |name: &str| header.iter().position(|h| *h == name).unwrap();
    let (deal, rotation, round, seat, decisions) = (
        col("deal"),
        col("rotation"),
        col("round"),
        col("seat"),
        col("decisions"),
    );
    let mut out = BTreeMap::new();
    for line in lines {
        let f: Vec<&str> = line.split(',').collect();
        let n = |i: usize| f[i].parse::<u64>().unwrap();
        out.insert((n(deal), n(rotation), n(round), n(seat)), n(decisions));
    }
    out
}

#[test]
fn every_family_explains_its_traced_decisions_and_changes_no_record() {
    let dir = tmp();
    std::fs::write(dir.path().join("agent.rhai"), SCRIPT).unwrap();
    let traced_file = scenario(dir.path(), "traced.yaml", &scenario_text(true));
    let plain_file = scenario(dir.path(), "plain.yaml", &scenario_text(false));
    let out = |name: &str| dir.path().join(name);
    play(&traced_file, &out("traced2"), "2");
    play(&traced_file, &out("traced1"), "1");
    play(&plain_file, &out("plain1"), "1");
    play(&plain_file, &out("plain2"), "2");

    let mut tally: BTreeMap<&str, u64> = BTreeMap::new();
    let mut phases: BTreeMap<(String, String), u64> = BTreeMap::new();
    for stage in ["paper", "tabular"] {
        let traced = out("traced2").join(stage);
        let (events, files) = decisions(&traced);
        // (1) Every decision explained, sensibly for its family.
        let mut seen: BTreeMap<(u64, u64, u64, u64), u64> = BTreeMap::new();
        for (deal, arrangement, d) in &events {
            *tally.entry(check(d)).or_default() += 1;
            *phases
                .entry((
                    d["agent"].as_str().unwrap().to_string(),
                    d["phase"].as_str().unwrap().to_string(),
                ))
                .or_default() += 1;
            let round = d["round"].as_u64().unwrap();
            let seat = d["seat"].as_u64().unwrap();
            *seen.entry((*deal, *arrangement, round, seat)).or_default() += 1;
        }
        // (2) A seat's decisions in a round are the records' count, for every round (every
        // deal is traced).
        let mut want = counted(&traced);
        want.retain(|_, n| *n > 0);
        assert_eq!(
            seen, want,
            "{stage}: trace decisions differ from rounds.csv"
        );
        // (3) Tracing changes no record, on either thread count; the traces themselves do
        // not depend on the thread count.
        let records = std::fs::read(traced.join("rounds.csv")).unwrap();
        for plain in ["plain1", "plain2", "traced1"] {
            assert!(
                records == std::fs::read(out(plain).join(stage).join("rounds.csv")).unwrap(),
                "{stage}: rounds.csv of the traced run differs from {plain}'s"
            );
        }
        assert_eq!(files, decisions(&out("traced1").join(stage)).1, "{stage}");
    }
    // What a script prints while explaining reaches no log: the logs are the untraced run's
    // (lines sorted: two threads interleave them).
    let log = |run: &str| {
        let mut lines: Vec<String> = std::fs::read_to_string(out(run).join("scripts.log"))
            .unwrap()
            .lines()
            .map(str::to_string)
            .collect();
        lines.sort();
        lines
    };
    assert!(!log("plain2").is_empty());
    assert_eq!(log("traced2"), log("plain2"));
    assert!(!log("traced2").iter().any(|l| l.contains("explaining")));

    // Every family explained something, every phase of the deterministic ones came up, and
    // epsilon both explored and did not.
    for family in [
        "heuristic",
        "search",
        "network",
        "tabular",
        "epsilon explored",
        "epsilon wrapped",
        "script",
    ] {
        assert!(
            tally.get(family).is_some_and(|&n| n > 0),
            "{family}: {tally:?}"
        );
    }
    for agent in [
        "aggressive",
        "conservative",
        "balanced",
        "ismcts",
        "mcts",
        "tabular",
    ] {
        for phase in ["call", "discard", "pick"] {
            assert!(
                phases.contains_key(&(agent.to_string(), phase.to_string())),
                "{agent} never decided a {phase}: {phases:?}"
            );
        }
    }
}

/// A script's `explain(obs)` is rehearsed at validation like its other functions: a value
/// that is no explanation, or a choice that is not legal, is refused with what to return.
#[test]
fn a_script_explanation_that_cannot_be_read_is_refused_at_validation() {
    let dir = tmp();
    let base =
        "fn call_jhyap(obs) { false }\nfn discard(obs) { obs.hand[0] }\nfn pick(obs) { -1 }\n";
    for (explain, says) in [
        (
            "fn explain(obs) { 42 }",
            "return a map of choices to scores",
        ),
        (
            "fn explain(obs) { #{\"discard Jk2 Jk1 Jk2\": 1} }",
            "is not a legal choice",
        ),
        (
            "fn explain(obs) { if obs.phase == \"discard\" { [#{choice: obs.hand[0]}] } }",
            "no number `score`",
        ),
        ("fn explain(obs) { undefined_helper(obs) }", "explain"),
    ] {
        std::fs::write(dir.path().join("a.rhai"), format!("{base}{explain}\n")).unwrap();
        let file = scenario(
            dir.path(),
            "s.yaml",
            "name: s\nrules: {preset: paper}\ndeals: 2\nagents:\n  - {script: a.rhai}\n  - kind: random\n  - kind: random\n  - kind: random\n",
        );
        let t = refused(&["validate", arg(&file)]);
        assert!(
            t.contains("rehearsal") && t.contains(says),
            "{explain}: {t}"
        );
    }
}
