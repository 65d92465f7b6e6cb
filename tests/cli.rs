//! Integration tests that drive the `dhumbal-run` binary as a user would: valid runs, every
//! kind of bad input, determinism across thread counts, resume after a kill, Rhai agents.

use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};

mod common;
use common::{
    RANDOM3, arg, bin, csv_rows, has, has_all, json_file, lacks, ok, play_into, play_scenario,
    refused, run, scenario, slowed, text, tmp, tmp_scenario, wait_for_units,
};

/// Runs `file` into `out` on `threads` threads (and `extra` arguments), with `rounds.csv`
/// beside the dataset for the tests to read; it must succeed.
fn run_ok(file: &Path, out: &Path, threads: &str, extra: &[&str]) -> Output {
    let mut args = vec!["--threads", threads, "--csv"];
    args.extend_from_slice(extra);
    play_into(file, out, &args)
}

/// Writes a script and a scenario seating it in seat 0 (with `agent_extra` lines) before
/// `others`; `head` holds the sample size and anything else. Returns the scenario's path.
fn script_scenario(
    dir: &Path,
    script: &str,
    source: &str,
    agent_extra: &str,
    others: &str,
    head: &str,
) -> PathBuf {
    std::fs::write(dir.join(script), source).unwrap();
    let body =
        format!("name: x\nseed: 1\n{head}agents:\n  - script: {script}\n{agent_extra}{others}");
    scenario(dir, "s.yaml", &body)
}

/// The summary's rows keyed by agent, as (rounds, wins, mean coin delta).
fn summary(path: &Path) -> Vec<(String, u64, u64, f64)> {
    let rows = csv_rows(path);
    let col = |name: &str| rows[0].iter().position(|c| c == name).unwrap();
    let (agent, rounds, wins, coins) = (
        col("agent"),
        col("rounds"),
        col("wins"),
        col("mean_coin_delta"),
    );
    rows[1..]
        .iter()
        .map(|r| {
            (
                r[agent].clone(),
                r[rounds].parse().unwrap(),
                r[wins].parse().unwrap(),
                r[coins].parse().unwrap(),
            )
        })
        .collect()
}

#[test]
fn table_one_through_the_cli() {
    let out = tmp();
    let o = ok(&[
        "scenarios/paper/table1.yaml",
        "--out",
        arg(out.path()),
        "--threads",
        "2",
        "--csv",
    ]);
    let t = text(&o);
    has_all(
        &t,
        &[
            "1024 deals x fixed seating = 1024 rounds",
            "35.06",
            "19.43",
            "25.10",
            "20.41",
        ],
    );
    lacks(&t, "game win %");
    lacks(&t, "primary outcome");
    let s = summary(&out.path().join("summary.csv"));
    let wins: Vec<u64> = s.iter().map(|r| r.2).collect();
    assert_eq!(wins, [359, 199, 257, 209]);
    // Coin stages: the per-round columns (the design's interval, then Wilson's by its own name).
    assert_eq!(
        csv_rows(&out.path().join("summary.csv"))[0].join(","),
        "stage,agent,kind,rounds,wins,win_rate,win_ci95_low,win_ci95_high,win_ci95_method,\
         win_ci95_wilson_low,win_ci95_wilson_high,mean_coin_delta,mean_points_delta,calls,calls_per_round,call_success_rate,cards_discarded_per_round,\
         pile_picks_per_round,decisions,mean_decision_us,games,game_wins"
    );
    let econ: Vec<String> = s.iter().map(|r| format!("{:.2}", r.3)).collect();
    assert_eq!(econ, ["6.16", "-2.23", "0.07", "-4.00"]);
    for f in ["rounds.csv", "summary.csv", "manifest.json"] {
        assert!(out.path().join(f).is_file(), "{f} missing");
    }
    assert!(out.path().join("rounds").is_dir(), "the dataset is missing");
    let manifest = json_file(&out.path().join("manifest.json"));
    assert_eq!(manifest["seed"], 42);
    assert_eq!(manifest["rounds"], 1024);
    assert!(manifest["scenario_hash"].as_str().unwrap().len() == 16);
    assert_eq!(manifest["scenario"]["stages"][0]["rules"]["threshold"], 10);
    // Agents are recorded with every parameter as used, defaults included.
    assert_eq!(
        manifest["stages"][0]["agents"][1]["params"]["pickup_threshold"],
        3
    );
    assert_eq!(
        manifest["stages"][0]["agents"][0]["params"]["high_preference"],
        1.0
    );
    // One row per round and seat.
    assert_eq!(csv_rows(&out.path().join("rounds.csv")).len(), 1 + 1024 * 4);
}

const SMALL: &str = "\
name: small
seed: 17
deals: 3000
seating: rotate
rules: {preset: paper}
agents:
  - kind: aggressive
  - kind: balanced
  - kind: random
  - kind: opportunistic
output: {chunk_rounds: 500, decision_timing: false}
";

#[test]
fn records_are_identical_for_any_thread_count_and_rerun() {
    let (dir, file) = tmp_scenario("small.yaml", SMALL);
    let outs: Vec<PathBuf> = ["1", "2", "4", "2"]
        .iter()
        .enumerate()
        .map(|(i, threads)| {
            let out = dir.path().join(format!("out{i}"));
            run_ok(&file, &out, threads, &[]);
            out
        })
        .collect();
    let first = std::fs::read(outs[0].join("rounds.csv")).unwrap();
    // Every part, byte for byte.
    let parts = |out: &Path| -> Vec<(std::ffi::OsString, Vec<u8>)> {
        let mut v: Vec<_> = std::fs::read_dir(out.join("rounds"))
            .unwrap()
            .map(|e| {
                let p = e.unwrap().path();
                (
                    p.file_name().unwrap().to_owned(),
                    std::fs::read(&p).unwrap(),
                )
            })
            .collect();
        v.sort();
        v
    };
    let first_parts = parts(&outs[0]);
    assert_eq!(
        first_parts.len(),
        24,
        "3000 deals x 4 rotations in parts of 500 rounds"
    );
    assert_eq!(
        csv_rows(&outs[0].join("rounds.csv")).len(),
        1 + 3000 * 4 * 4
    );
    for out in &outs[1..] {
        assert!(
            std::fs::read(out.join("rounds.csv")).unwrap() == first,
            "rounds.csv differs in {}",
            out.display()
        );
        assert!(
            parts(out) == first_parts,
            "the parts differ in {}",
            out.display()
        );
        assert_eq!(
            std::fs::read(out.join("summary.csv")).unwrap(),
            std::fs::read(outs[0].join("summary.csv")).unwrap()
        );
    }
}

/// Search agents (ISMCTS with a scripted rollout, MCTS) and a Rhai script draw from their own
/// streams and keep state across decisions: their records, too, are the same on 1, 2 and 3
/// threads, with parts small enough that every thread plays some of them.
#[test]
fn search_and_script_records_are_identical_for_any_thread_count() {
    let dir = tmp();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    std::fs::copy(
        root.join("scenarios/heuristics/threshold.rhai"),
        dir.path().join("threshold.rhai"),
    )
    .unwrap();
    let file = scenario(
        dir.path(),
        "search.yaml",
        "name: search\nseed: 23\ndeals: 8\nseating: rotate\nrules: {preset: paper}\nagents:\n  \
         - {kind: ismcts, params: {iterations: 12, determinizations: 2, rollout: {script: threshold.rhai}}}\n  \
         - {kind: mcts, params: {iterations: 30}}\n  \
         - {script: threshold.rhai, params: {call_at: 7}}\n  \
         - {kind: random}\n\
         output: {chunk_rounds: 4, decision_timing: false}\n",
    );
    let records: Vec<(Vec<u8>, Vec<u8>)> = ["1", "2", "3"]
        .iter()
        .map(|threads| {
            let out = dir.path().join(format!("t{threads}"));
            run_ok(&file, &out, threads, &["--no-report"]);
            (
                std::fs::read(out.join("rounds.csv")).unwrap(),
                std::fs::read(out.join("summary.csv")).unwrap(),
            )
        })
        .collect();
    assert_eq!(
        csv_rows(&dir.path().join("t1/rounds.csv")).len(),
        1 + 8 * 4 * 4
    );
    for (i, other) in records.iter().enumerate().skip(1) {
        assert!(records[0] == *other, "{} threads: records differ", i + 1);
    }
}

/// The deals of a run's rows and whether each row's `decision_ns` is filled.
fn timed_rows(out: &Path) -> Vec<(u64, bool)> {
    let rows = csv_rows(&out.join("rounds.csv"));
    let col = |name: &str| rows[0].iter().position(|c| c == name).unwrap();
    let (deal, ns) = (col("deal"), col("decision_ns"));
    rows[1..]
        .iter()
        .map(|r| (r[deal].parse().unwrap(), !r[ns].is_empty()))
        .collect()
}

#[test]
fn decision_times_are_sampled_by_deal() {
    let body = format!(
        "name: x\nseed: 3\ndeals: 640\nsession: 64\nseating: rotate\n{AGENTS4}output: {{chunk_rounds: 256}}\n"
    );
    let (dir, file) = tmp_scenario("s.yaml", &body);
    let go = |file: &Path, out: &str, threads: &str| {
        let out = dir.path().join(out);
        run_ok(file, &out, threads, &["--no-report"]);
        timed_rows(&out)
    };
    let rows = go(&file, "a", "1");
    assert_eq!(rows.len(), 640 * 4 * 4);
    // Every row of a deal (all seats, all four rotations) is timed, or none is.
    let mut by_deal = std::collections::BTreeMap::new();
    for &(deal, timed) in &rows {
        by_deal.entry(deal).or_insert_with(Vec::new).push(timed);
    }
    assert_eq!(by_deal.len(), 640);
    for (deal, t) in &by_deal {
        assert!(t.iter().all(|&x| x == t[0]), "deal {deal} is partly timed");
    }
    let timed = by_deal.values().filter(|t| t[0]).count();
    // One deal in 16 on average: 40 of 640 (a binomial's 99.9% range is about 21 to 61).
    assert!((20..=62).contains(&timed), "{timed} of 640 deals timed");
    // The same deals on another thread count.
    assert_eq!(go(&file, "b", "2"), rows);
    // `decision_sample: 1` times every deal; `decision_timing: false` none.
    for (sample, all) in [
        ("decision_sample: 1", true),
        ("decision_timing: false", false),
    ] {
        let body = body.replace("chunk_rounds: 256", &format!("chunk_rounds: 256, {sample}"));
        let file = scenario(dir.path(), "t.yaml", &body);
        let rows = go(&file, if all { "c" } else { "d" }, "2");
        assert!(rows.iter().all(|&(_, t)| t == all), "{sample}");
    }
    let t = bad(&format!(
        "name: x\nseed: 1\ndeals: 10\n{AGENTS4}output:\n  decision_sample: 0\n"
    ));
    has(
        &t,
        "bad.yaml:6:20: `output.decision_sample`: must be at least 1",
    );
}

fn resume(file: &Path, out: &Path) -> Output {
    run(&[arg(file), "--out", arg(out), "--resume"])
}

#[test]
fn resume_finishes_a_killed_run_to_the_same_records() {
    let body = SMALL
        .replace("deals: 3000", "deals: 2000")
        .replace("chunk_rounds: 500", "chunk_rounds: 200");
    let (dir, file) = tmp_scenario("small.yaml", &body);
    let whole = dir.path().join("whole");
    ok(&[arg(&file), "--out", arg(&whole)]);

    // Kill a slowed-down run once a few parts are on disk (tests/scale.rs kills at many
    // moments; this one checks the messages).
    let cut = dir.path().join("cut");
    let mut child = slowed(&[arg(&file), "--out", arg(&cut)], 60, Stdio::null);
    wait_for_units(&cut, 600);
    child.kill().unwrap();
    child.wait().unwrap();
    let on_disk = dhumbal::runner::dataset::Dataset::open(&cut).unwrap();
    assert!(
        !on_disk.is_complete(on_disk.parts[0].meta.stage_units),
        "the run finished before it was killed; slow it down more"
    );
    assert!(!cut.join("summary.csv").exists());

    // Resuming with another scenario is refused, saying what differs.
    let other = scenario(
        dir.path(),
        "other.yaml",
        &body.replace("seed: 17", "seed: 18"),
    );
    let o = resume(&other, &cut);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("different scenario"), "{}", text(&o));

    let o = resume(&file, &cut);
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        text(&o).contains("after"),
        "says what was on disk: {}",
        text(&o)
    );
    let rows = dhumbal::runner::folder::same_records(&whole, &cut)
        .unwrap()
        .unwrap();
    assert_eq!(rows, 2000 * 4 * 4);
    assert_eq!(
        std::fs::read(cut.join("summary.csv")).unwrap(),
        std::fs::read(whole.join("summary.csv")).unwrap()
    );
    // Resuming a finished run changes nothing.
    let o = resume(&file, &cut);
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        dhumbal::runner::folder::same_records(&whole, &cut)
            .unwrap()
            .is_ok()
    );
    // A part that is not this run's is named.
    let stranger = dhumbal::runner::dataset::Dataset::open(&whole).unwrap();
    let foreign = dir.path().join("foreign");
    ok(&[arg(&other), "--out", arg(&foreign), "--no-report"]);
    let theirs = dhumbal::runner::dataset::Dataset::open(&foreign).unwrap();
    std::fs::copy(&theirs.parts[0].path, &stranger.parts[0].path).unwrap();
    let o = resume(&file, &whole);
    assert_ne!(o.status.code(), Some(0), "{}", text(&o));
    assert!(
        text(&o).contains(stranger.parts[0].path.to_str().unwrap())
            && text(&o).contains("another scenario"),
        "{}",
        text(&o)
    );
}

/// Runs a bad scenario and returns its message; checks exit code 2.
fn bad(body: &str) -> String {
    let (dir, file) = tmp_scenario("bad.yaml", body);
    let t = common::refused(&["validate", arg(&file)]);
    let o2 = run(&[arg(&file), "--out", arg(&dir.path().join("o"))]);
    assert_eq!(
        o2.status.code(),
        Some(2),
        "running must refuse too: {}",
        text(&o2)
    );
    assert!(
        !dir.path().join("o").exists(),
        "nothing may run or be written"
    );
    t
}

const AGENTS4: &str =
    "agents: [{kind: aggressive}, {kind: conservative}, {kind: balanced}, {kind: random}]\n";

#[test]
fn unknown_fields_name_file_line_column_and_the_nearest_name() {
    let t = bad(&format!(
        "name: x\nseed: 1\ndeals: 5\nrules:\n  preset: paper\n  thresold: 5\nsaeting: rotate\n{AGENTS4}"
    ));
    has(
        &t,
        "bad.yaml:6:3: `rules.thresold`: unknown field; did you mean `threshold`?",
    );
    has(
        &t,
        "bad.yaml:7:1: `saeting`: unknown field; did you mean `seating`?",
    );
    assert!(t.contains("2 problems"), "every problem is reported: {t}");
}

#[test]
fn unknown_agent_kinds_and_parameters() {
    let t = bad(
        "name: x\nseed: 1\ndeals: 5\nagents:\n  - kind: agressive\n  - kind: balanced\n    params: {call_probabilty: 0.5}\n  - kind: conservative\n    params: {strict_threshold: -1}\n  - kind: random\n",
    );
    has(
        &t,
        "bad.yaml:5:11: `agents.0.kind`: unknown agent kind `agressive`; did you mean `aggressive`?",
    );
    has(
        &t,
        "`agents.1.params.call_probabilty`: unknown parameter of `balanced`; did you mean `call_probability`?",
    );
    has(
        &t,
        "`agents.2.params.strict_threshold`: expected a whole number, zero or more",
    );
}

#[test]
fn impossible_rules_and_sample_sizes() {
    let t = bad(&format!(
        "name: x\nseed: 1\ndeals: 5\nrules:\n  players: 4\n  hand_size: 13\n{AGENTS4}"
    ));
    has_all(&t, &["`rules.players`", "leave no stock"]);
    let t = bad(&format!(
        "name: x\nseed: 1\nrounds: 10\nseating: rotate\n{AGENTS4}"
    ));
    has(&t, "10 rounds cannot be split evenly over 4 seatings");
    let t = bad(&format!(
        "name: x\nseed: 1\ndeals: 10\nrules: {{preset: jhyap}}\n{AGENTS4}"
    ));
    has(&t, "give the sample size as `games`");
    let t = bad("name: x\nseed: 1\ndeals: 10\nagents: [{kind: random}, {kind: random}]\n");
    has(&t, "2 agents for 4 seats");
    let t = bad("name: x\nseed: 1\ndeals: 10\nagents: []\n");
    has(&t, "0 agents for 4 seats");
    let t = bad(&format!(
        "name: x\nseed: 1\ndeals: 2000000\nsession: 2000000\n{AGENTS4}"
    ));
    has(&t, "at most 1048575 rounds per session");
    // Sessions that --rounds does not fill: the message names --rounds, not the file's deals.
    let o = run(&[
        "scenarios/paper/table1.yaml",
        "--rounds",
        "1",
        "--out",
        "/nonexistent",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o).contains(
            "`session`: --rounds 1 does not divide into sessions of 1024 rounds; give --rounds a multiple of 1024"
        ),
        "{}",
        text(&o)
    );
    let t = bad(&format!("name: x\nseed: -3\ndeals: 10\n{AGENTS4}"));
    has(
        &t,
        "bad.yaml:2:7: `seed`: expected a whole number, 0 or more",
    );
}

#[test]
fn missing_scripts_and_script_syntax_errors() {
    let t = bad(
        "name: x\nseed: 1\ndeals: 5\nagents:\n  - script: nowhere.rhai\n  - kind: random\n  - kind: random\n  - kind: random\n",
    );
    has(&t, "bad.yaml:5:13: `agents.0.script`: no such file");
    let dir = tmp();
    let file = script_scenario(
        dir.path(),
        "broken.rhai",
        "fn call_jhyap(obs) { true }\nfn discard(obs) { let x = ; }\nfn pick(obs) { () }\n",
        "",
        RANDOM3,
        "deals: 5\n",
    );
    let o = run(&["validate", arg(&file)]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o).contains("broken.rhai, line 2, column"),
        "{}",
        text(&o)
    );
}

#[test]
fn winner_of_must_name_an_earlier_stage() {
    let t = bad(
        "name: x\nseed: 1\ndeals: 5\nstages:\n  - name: first\n    agents: [{kind: random}, {kind: random}, {kind: random}, {kind: random}]\n  - name: second\n    agents: [{winner_of: frist}, {kind: random}, {kind: random}, {kind: random}]\n",
    );
    has(&t, "`frist` is not an earlier stage; did you mean `first`?");
}

#[test]
fn bad_arguments_exit_2() {
    assert_eq!(
        run(&["scenarios/paper/table1.yaml", "--threads", "zero"])
            .status
            .code(),
        Some(2)
    );
    assert_eq!(
        run(&["scenarios/paper/table1.yaml", "--frobnicate"])
            .status
            .code(),
        Some(2)
    );
    // A thread count is checked once, the same way, by every command that takes one.
    for args in [
        &["scenarios/paper/table1.yaml", "--threads", "0"][..],
        &["train", "scenarios/learning/quick.yaml", "--threads", "0"][..],
        &["rerun", "reports/none", "--threads", "0"][..],
        &["bench", "--threads", "1,0"][..],
    ] {
        let o = run(args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert!(
            text(&o).contains("must be at least 1"),
            "{args:?}: {}",
            text(&o)
        );
    }
    assert_eq!(run(&[]).status.code(), Some(2));
    assert_eq!(run(&["no/such/file.yaml"]).status.code(), Some(2));
    let help = run(&["--help"]);
    assert!(help.status.success());
    for word in [
        "validate",
        "agents",
        "--resume",
        "--threads",
        "--seed",
        "--rounds",
        "--out",
    ] {
        assert!(text(&help).contains(word), "--help lacks {word}");
    }
}

#[test]
fn agents_lists_kinds_with_parameters() {
    let o = run(&["agents"]);
    assert!(o.status.success());
    let t = text(&o);
    for kind in [
        "random",
        "aggressive",
        "conservative",
        "balanced",
        "opportunistic",
    ] {
        has(&t, &format!("{kind}:"));
    }
    has_all(&t, &["pickup_threshold", "default 4"]);
}

#[test]
fn the_rhai_port_of_aggressive_gives_the_native_records() {
    let dir = tmp();
    let out_script = dir.path().join("script");
    let out_native = dir.path().join("native");
    ok(&[
        "scenarios/rhai-aggressive.yaml",
        "--rounds",
        "200",
        "--out",
        arg(&out_script),
        "--csv",
    ]);
    let native = std::fs::read_to_string("scenarios/rhai-aggressive.yaml")
        .unwrap()
        .replace(
            "  - script: heuristics/aggressive.rhai\n    id: aggressive\n",
            "  - kind: aggressive\n",
        );
    assert!(native.contains("- kind: aggressive"));
    let file = scenario(dir.path(), "native.yaml", &native);
    ok(&[
        arg(&file),
        "--rounds",
        "200",
        "--out",
        arg(&out_native),
        "--csv",
    ]);
    // Equal except for decision times.
    let strip = |p: &Path| -> Vec<Vec<String>> {
        let rows = csv_rows(p);
        let ns = rows[0].iter().position(|c| c == "decision_ns").unwrap();
        rows.into_iter()
            .map(|mut r| {
                r.remove(ns);
                r
            })
            .collect()
    };
    let (a, b) = (
        strip(&out_script.join("rounds.csv")),
        strip(&out_native.join("rounds.csv")),
    );
    assert_eq!(a.len(), 1 + 200 * 4 * 4);
    assert!(
        a == b,
        "the Rhai port played differently from the native agent"
    );
}

/// A script that fails on a pick late in a session (rounds a validation rehearsal does not
/// reach), at line 4.
const FAILS_LATE: &str = "fn call_jhyap(obs) { obs.hand_value <= obs.threshold }\n\
    fn discard(obs) { [obs.hand[0]] }\n\
    fn pick(obs) {\n    if obs.round > 30 && obs.hand_value > 45 { let x = obs.no_such_field + 1; }\n    ()\n}\n";

/// [`FAILS_LATE`] against three Conservatives, with `head` (sample size, output settings).
fn fails_late(dir: &Path, head: &str) -> PathBuf {
    let conservative3 = "  - kind: conservative\n  - kind: conservative\n  - kind: conservative\n";
    script_scenario(dir, "fails.rhai", FAILS_LATE, "", conservative3, head)
}

#[test]
fn a_failing_script_stops_the_run_naming_script_line_and_deal_and_keeps_records() {
    let dir = tmp();
    let file = fails_late(
        dir.path(),
        "deals: 400\nsession: 40\noutput: {chunk_rounds: 40}\n",
    );
    let out = dir.path().join("o");
    let o = run(&[arg(&file), "--out", arg(&out), "--threads", "1"]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let t = text(&o);
    has_all(
        &t,
        &["script fails.rhai, in pick()", "line 4", "stage `x`, deal "],
    );
    lacks(&t, "panicked");
    // The parts before the failure are on disk.
    let dataset = dhumbal::runner::dataset::Dataset::open(&out).unwrap();
    assert!(dataset.units_done() > 0, "{t}");
}

#[test]
fn a_failure_keeps_exactly_the_units_before_it_whatever_the_threads() {
    let dir = tmp();
    // As above, with more threads: they play on past the unit that fails (parts of one unit,
    // or of three), and what they played after it must not be written.
    for chunk_rounds in [40, 120] {
        let file = fails_late(
            dir.path(),
            &format!("deals: 800\nsession: 40\noutput: {{chunk_rounds: {chunk_rounds}}}\n"),
        );
        let played = |threads: &str| {
            let out = dir.path().join(format!("o{chunk_rounds}-{threads}"));
            let o = run(&[arg(&file), "--out", arg(&out), "--threads", threads]);
            assert_eq!(o.status.code(), Some(1), "{}", text(&o));
            let t = text(&o);
            let failure: Vec<String> = t
                .lines()
                .filter(|l| l.contains("deal ") || l.contains("line 4"))
                .map(String::from)
                .collect();
            let dataset = dhumbal::runner::dataset::Dataset::open(&out).unwrap();
            let mut units: Vec<(u64, u64)> = dataset
                .parts
                .iter()
                .map(|p| (p.meta.start, p.meta.end))
                .collect();
            units.sort();
            (failure, units)
        };
        let (failure1, units1) = played("1");
        assert!(!failure1.is_empty());
        // The units on disk: 0 up to the first failure, without a gap.
        let mut next = 0;
        for &(start, end) in &units1 {
            assert_eq!(start, next, "{units1:?}");
            next = end;
        }
        assert!(next > 0, "the first unit failed: pick a later failure");
        for threads in ["2", "4"] {
            let (failure, units) = played(threads);
            assert_eq!(
                failure, failure1,
                "{threads} threads, chunk_rounds {chunk_rounds}"
            );
            assert_eq!(
                units, units1,
                "{threads} threads, chunk_rounds {chunk_rounds}"
            );
        }
    }
}

#[test]
fn a_script_that_loops_forever_is_stopped() {
    let dir = tmp();
    let file = script_scenario(
        dir.path(),
        "loops.rhai",
        "fn call_jhyap(obs) { false }\nfn discard(obs) { loop { } }\nfn pick(obs) { () }\n",
        "    max_operations: 10000\n",
        RANDOM3,
        "deals: 50\n",
    );
    let o = run(&[arg(&file), "--out", arg(&dir.path().join("o"))]);
    // Caught before the run, by the validation rehearsal.
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o).to_lowercase().contains("too many operations")
            && text(&o).contains("`max_operations`"),
        "{}",
        text(&o)
    );
}

#[test]
fn stages_seat_the_winner_of_an_earlier_stage() {
    let (_dir, out, _) = play_scenario(
        "s.yaml",
        "name: two\nseed: 3\ndeals: 300\nstages:\n  - name: first\n    seating: rotate\n    agents: [{kind: random}, {kind: aggressive}, {kind: random, id: r2}, {kind: random, id: r3}]\n  - name: second\n    rules: {players: 2}\n    seating: permute\n    agents: [{winner_of: first}, {kind: conservative}]\n  - name: third\n    rules: {players: 2}\n    agents: [{winner_of: first}, {kind: aggressive}]\n",
        &[],
    );
    let s = summary(&out.join("second/summary.csv"));
    assert_eq!(
        s[0].0, "aggressive",
        "Aggressive wins the first stage and is seated in the second"
    );
    assert_eq!(s[0].1, 600, "300 deals x 2 seat permutations");
    assert!(out.join("first/rounds").is_dir());
    // A winner meeting an agent of its own name is told apart by its stage.
    let third: Vec<String> = summary(&out.join("third/summary.csv"))
        .into_iter()
        .map(|r| r.0)
        .collect();
    assert_eq!(third, ["aggressive-first", "aggressive"]);
}

#[test]
fn point_games_run_until_one_player_is_left() {
    let out = tmp();
    ok(&[
        "scenarios/variants/simplified-2p.yaml",
        "--rounds",
        "40",
        "--out",
        arg(out.path()),
        "--csv",
    ]);
    let rows = csv_rows(&out.path().join("rounds.csv"));
    let h = &rows[0];
    let col = |n: &str| h.iter().position(|c| c == n).unwrap();
    let game_won: usize = rows[1..]
        .iter()
        .filter(|r| r[col("game_won")] == "true")
        .count();
    assert_eq!(game_won, 80, "40 games x 2 seatings, one winner each");
    assert!(rows[1..].iter().all(|r| r[col("coin_delta")] == "0"));
}

/// A point stage is won by games, not rounds: survivors play smaller tables, where rounds are
/// easier to win. Its summary (file and terminal) leads with the games.
#[test]
fn a_point_stage_is_won_by_games_and_its_summary_leads_with_them() {
    let (dir, file) = tmp_scenario(
        "p.yaml",
        "name: p\nseed: 6\nrules: {preset: jhyap, players: 3}\nstages:\n  - name: first\n    games: 40\n    seating: rotate\n    agents: [{kind: conservative}, {kind: balanced}, {kind: opportunistic}]\n  - name: second\n    games: 5\n    agents: [{winner_of: first}, {kind: random}, {kind: random, id: r2}]\n",
    );
    let out = dir.path().join("o");
    let o = run_ok(&file, &out, "2", &["--no-report"]);
    let rows = csv_rows(&out.join("first/summary.csv"));
    assert_eq!(
        rows[0][..9].join(","),
        "stage,agent,kind,games,game_wins,game_win_rate,game_win_ci95_low,game_win_ci95_high,game_win_ci95_method"
    );
    assert_eq!(rows[0].iter().filter(|c| c.starts_with("game")).count(), 8);
    let col = |n: &str| rows[0].iter().position(|c| c == n).unwrap();
    let best = |rate: &str| {
        let r = &rows[1..];
        let best = (0..r.len())
            .max_by(|&a, &b| {
                let x = |i: usize| r[i][col(rate)].parse::<f64>().unwrap();
                x(a).total_cmp(&x(b))
            })
            .unwrap();
        r[best][col("agent")].clone()
    };
    assert_ne!(
        best("game_win_rate"),
        best("win_rate"),
        "this seed's stage wins by games and by rounds disagree (else pick another seed)"
    );
    let second = summary(&out.join("second/summary.csv"));
    assert_eq!(second[0].0, best("game_win_rate"));
    let t = text(&o);
    has(
        &t,
        "agent           games  games won  game win %   95% CI (Wilson)    rounds  win %/round",
    );
    has(&t, "games won is the primary outcome");
    // The overview of a point-game run counts games, and leads with games won.
    ok(&["report", arg(&out), "--no-figures"]);
    let page = std::fs::read_to_string(out.join("report.md")).unwrap();
    has_all(
        &page,
        &[
            "40 games × 3 rotations = 120 games, ",
            "| agent | games won | minus points per round |",
        ],
    );
    // Written elsewhere, the page names the run's copy of the scenario instead of linking it.
    let other = dir.path().join("elsewhere");
    ok(&["report", arg(&out), "--no-figures", "--out", arg(&other)]);
    let page = std::fs::read_to_string(other.join("report.md")).unwrap();
    lacks(&page, "[source/](source/)");
    has(&page, &format!("`{}`", out.join("source").display()));
}

const STAGED: &str = "\
name: staged
seed: 5
rules: {preset: paper, players: 3}
stages:
  - name: first
    deals: 150
    seating: rotate
    agents: [{kind: aggressive}, {kind: conservative}, {kind: random}]
  - name: second
    deals: 40
    seating: permute
    agents: [{winner_of: first}, {kind: balanced}, {kind: random}]
";

#[test]
fn report_regenerates_statistics_tables_and_figures_from_the_records() {
    let (dir, out, _) = play_scenario("s.yaml", STAGED, &["--no-report", "--csv"]);
    assert!(
        !out.join("first/report.md").exists(),
        "--no-report writes none"
    );

    let o = ok(&["report", arg(&out)]);
    assert!(text(&o).contains("2 stage reports"), "{}", text(&o));
    for stage in ["first", "second"] {
        let d = out.join(stage);
        for f in [
            "report.md",
            "stats.json",
            "tables/agents.csv",
            "tables/pairwise.tex",
        ] {
            assert!(d.join(f).is_file(), "{stage}/{f}");
        }
        for stem in [
            "win_rate",
            "economic",
            "call_success",
            "effects",
            "win_by_seat",
            "cumulative_wins",
            "cumulative_economic",
        ] {
            for ext in ["svg", "png", "pdf"] {
                assert!(
                    d.join(format!("figures/{stem}.{ext}")).is_file(),
                    "{stage}/{stem}.{ext}"
                );
            }
        }
    }
    let first = json_file(&out.join("first/stats.json"));
    assert_eq!(first["design"]["unit"], "deal");
    assert_eq!(first["design"]["units"], 150);
    assert_eq!(first["agents"][0]["rounds"], 450, "150 deals x 3 rotations");
    let second = json_file(&out.join("second/stats.json"));
    assert_eq!(second["design"]["arrangements"], 6);
    assert_eq!(
        second["agents"][0]["agent"], "aggressive",
        "the winner of `first`, from the manifest"
    );

    // From the CSV alone (no Parquet, no manifest, no summary): the same statistics.
    let lone = dir.path().join("lone");
    std::fs::create_dir_all(&lone).unwrap();
    std::fs::copy(out.join("first/rounds.csv"), lone.join("rounds.csv")).unwrap();
    ok(&["report", arg(&lone), "--no-figures"]);
    let again = json_file(&lone.join("stats.json"));
    assert_eq!(
        again["info"]["seating"], "rotate",
        "inferred from the records"
    );
    assert_eq!(again["pairwise"], first["pairwise"]);
    assert_eq!(again["agents"][1]["win"], first["agents"][1]["win"]);

    // The paper's definitions: its metric names, population SD in Cohen's d.
    // In place of the first report: asked for with --force.
    ok(&[
        "report",
        arg(&out.join("first")),
        "--definitions",
        "paper",
        "--no-figures",
        "--force",
    ]);
    let paper = json_file(&out.join("first/stats.json"));
    assert_eq!(paper["definitions"], "paper");
    let names: Vec<&str> = paper["pairwise"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|r| r["paper_metric"].as_str())
        .collect();
    for n in ["win", "economic", "jhyap", "cards", "risk"] {
        assert!(names.contains(&n), "paper metric {n}");
    }

    // Bad input exits 2.
    assert_eq!(run(&["report", "no/such/folder"]).status.code(), Some(2));
    assert_eq!(
        run(&["report", arg(dir.path()), "--alpha", "1.5"])
            .status
            .code(),
        Some(2)
    );
    let empty = dir.path().join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    let t = refused(&["report", arg(&empty)]);
    has(&t, "no records");
}

#[test]
fn a_run_writes_its_report_after_each_stage() {
    let (_dir, out, o) = play_scenario("s.yaml", STAGED, &[]);
    assert!(
        text(&o).contains("statistics and figures in"),
        "{}",
        text(&o)
    );
    let md = std::fs::read_to_string(out.join("second/report.md")).unwrap();
    has(&md, "![win_rate](figures/win_rate.svg)");
    assert!(out.join("second/figures/effects.png").is_file());

    // The run's overview page: every stage, its winner as the runner chose it, who advanced,
    // the last stage in full, its figure.
    let manifest = json_file(&out.join("manifest.json"));
    assert_eq!(
        manifest["stages"][0]["winner"],
        serde_json::json!({"agent": "aggressive", "decided_by": "rate"})
    );
    assert!(
        text(&o).contains("overview of the stages in"),
        "{}",
        text(&o)
    );
    let page = std::fs::read_to_string(out.join("report.md")).unwrap();
    for line in [
        "# staged: overview",
        "| [first](<first/report.md>) | 3 | 150 deals × 3 rotations = 450 rounds | aggressive, conservative, random | **aggressive** |",
        "| [second](<second/report.md>) | 3 | 40 deals × 6 seat permutations = 240 rounds | aggressive (winner of first), balanced, random |",
        "- `second` seats the winners of earlier stages: aggressive from `first`.",
        "## The last stage: `second`",
        "![Win rates with 95% intervals, stage second](<second/figures/win_rate.svg>)",
        "Pairwise, coins per round (row minus column); p Holm-adjusted:",
        "[source/](source/)",
    ] {
        assert!(page.contains(line), "{line}\n{page}");
    }
    // Aggressive's lead over Conservative in `first`, with the paired test's p.
    let first = json_file(&out.join("first/stats.json"));
    let test = first["pairwise"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| {
            t["metric"] == "win"
                && t["primary"] == true
                && t["a"] == "aggressive"
                && t["b"] == "conservative"
        })
        .unwrap();
    let lead = format!(
        "+{:.2} percentage points over conservative",
        100.0 * test["difference"].as_f64().unwrap()
    );
    assert!(page.contains(&lead), "{lead}\n{page}");
    // `report` writes the same page from the same records.
    ok(&["report", arg(&out), "--force", "--no-figures"]);
    assert_eq!(
        std::fs::read_to_string(out.join("report.md")).unwrap(),
        page
    );
}

#[test]
fn plan_gives_the_papers_sample_size_and_the_scenarios_power() {
    let o = ok(&["plan", "scenarios/paper/table1.yaml", "--delta", "0.05"]);
    let t = text(&o);
    // Eq. 5 at p = 1/4: 2 (1.95996 + 0.84162)^2 0.1875 / 0.05^2 = 1177.3; at alpha/6: 1816.4.
    has_all(
        &t,
        &[
            "1178 rounds per agent",
            "1817 rounds per agent",
            "this scenario: power 0.743 (at alpha/6: 0.490)",
            "if every round were independent",
            "plan with --pilot DIR",
        ],
    );
    let o = ok(&[
        "plan",
        "scenarios/championship.yaml",
        "--delta",
        "0.02",
        "--power",
        "0.9",
    ]);
    assert!(
        text(&o).contains("stage `final`: 4 agents, 6 pairs, 24 arrangements"),
        "{}",
        text(&o)
    );
    assert_eq!(
        run(&["plan", "scenarios/paper/table1.yaml", "--power", "1"])
            .status
            .code(),
        Some(2)
    );
    assert_eq!(run(&["plan", "no/such.yaml"]).status.code(), Some(2));
    let help = text(&run(&["--help"]));
    has_all(
        &help,
        &[
            "Write the statistics of a finished run",
            "Sample size before a run",
        ],
    );
}

/// `plan --pilot` plans with the pilot's measured variances: the numbers it prints are those
/// of the pilot's own report (the design's power section), and a pilot of another design is
/// named and not used.
#[test]
fn plan_uses_a_pilot_runs_measured_design() {
    let dir = tmp();
    let pilot = dir.path().join("pilot");
    ok(&[
        "scenarios/paper/table1.yaml",
        "--out",
        arg(&pilot),
        "--no-report",
    ]);
    let o = ok(&[
        "plan",
        "scenarios/paper/table1.yaml",
        "--pilot",
        arg(&pilot),
    ]);
    let t = text(&o);
    has_all(
        &t,
        &[
            "from the pilot",
            "for comparison, if every round were independent",
        ],
    );
    // The pilot's own report: the same units needed (at alpha/6, power 0.8, delta 0.05).
    ok(&["report", arg(&pilot), "--no-figures"]);
    let stats = json_file(&pilot.join("stats.json"));
    let need = &stats["power"]["design"]["units_needed"];
    let line = format!(
        "needed at alpha/6: {} deals for the median pair, {} for every pair",
        need["median"].as_f64().unwrap().ceil(),
        need["worst"].as_f64().unwrap().ceil()
    );
    assert!(t.contains(&line), "{line} in {t}");
    // Another design: matched (one stage each) but not used, and said why.
    let o = ok(&[
        "plan",
        "scenarios/variants/jhyap.yaml",
        "--pilot",
        arg(&pilot),
    ]);
    let t = text(&o);
    has(
        &t,
        "pilot not used: pilot stage `paper-table1` has seating `fixed` (here `rotate`)",
    );
    lacks(&t, "from the pilot");
    refused(&[
        "plan",
        "scenarios/paper/table1.yaml",
        "--pilot",
        "no/such/dir",
    ]);
}

/// Records that cannot be read or make no sense are bad input: exit 2, the record file named,
/// and nothing written for the stage (no stats.json, no report.md).
#[test]
fn report_refuses_bad_records_with_exit_2_and_writes_nothing() {
    let (dir, file) = tmp_scenario(
        "s.yaml",
        "name: x\nseed: 3\ndeals: 10\nseating: rotate\nagents:\n  - kind: random\n  - kind: aggressive\n  - kind: balanced\n  - kind: conservative\n",
    );
    let out = dir.path().join("o");
    ok(&[arg(&file), "--out", arg(&out), "--no-report", "--csv"]);
    let good = std::fs::read_to_string(out.join("rounds.csv")).unwrap();
    let header: Vec<&str> = good.lines().next().unwrap().split(',').collect();
    let at = |name: &str| header.iter().position(|h| *h == name).unwrap();
    // Each line's cells, edited.
    let edit = |f: &dyn Fn(usize, &mut Vec<String>)| -> String {
        good.lines()
            .enumerate()
            .map(|(i, l)| {
                let mut cells: Vec<String> = l.split(',').map(String::from).collect();
                f(i, &mut cells);
                cells.join(",") + "\n"
            })
            .collect()
    };
    let (hand, cards, won) = (at("hand_value"), at("cards_discarded"), at("won"));
    let cases: Vec<(&str, String, &str)> = vec![
        ("empty", String::new(), "empty"),
        (
            "header-only",
            good.lines().next().unwrap().to_string() + "\n",
            "no rounds",
        ),
        (
            "unparsable",
            edit(&|i, c| {
                if i == 5 {
                    c[won] = "maybe".into();
                }
            }),
            "maybe",
        ),
        (
            "missing-column",
            edit(&|_, c| {
                c.remove(hand);
            }),
            "missing `hand_value`",
        ),
        (
            "swapped-columns",
            edit(&|_, c| c.swap(hand, cards)),
            "out of order `cards_discarded`, `hand_value`",
        ),
    ];
    for (name, body, says) in &cases {
        let d = dir.path().join(name);
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(d.join("rounds.csv"), body).unwrap();
        let o = run(&["report", arg(&d)]);
        let t = text(&o);
        assert_eq!(o.status.code(), Some(2), "{name}: {t}");
        assert!(
            t.contains(arg(&d.join("rounds.csv"))),
            "{name} names the file: {t}"
        );
        assert!(t.contains(says), "{name}: {t}");
        assert!(!t.contains("infer_schema_length"), "no Polars advice: {t}");
        for f in ["stats.json", "report.md", "tables"] {
            assert!(!d.join(f).exists(), "{name}: {f} not written");
        }
    }

    // An agent the stage does not have: the run's manifest lists the stage's agents.
    let renamed = good.replace(",random,", ",stranger,");
    std::fs::write(out.join("rounds.csv"), renamed).unwrap();
    std::fs::remove_dir_all(out.join("rounds")).unwrap();
    let o = run(&["report", arg(&out), "--no-figures"]);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(2), "{t}");
    has(&t, "agent `stranger` is not one of this stage's agents");
    has(&t, arg(&out.join("rounds.csv")));
    assert!(!out.join("stats.json").exists() && !out.join("report.md").exists());

    // The records as written report fine.
    std::fs::write(out.join("rounds.csv"), &good).unwrap();
    ok(&["report", arg(&out), "--no-figures"]);
    assert!(out.join("stats.json").is_file());
}

/// Blocked designs show the by-deal interval first, labelled, with Wilson beside it.
#[test]
fn rotated_reports_label_the_by_deal_interval_as_primary() {
    let (_dir, out, _) = play_scenario(
        "s.yaml",
        "name: x\nseed: 3\ndeals: 30\nseating: rotate\nagents:\n  - kind: random\n  - kind: aggressive\n  - kind: balanced\n  - kind: conservative\n",
        &[],
    );
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    has_all(
        &md,
        &[
            "Win % [95% CI by deal]",
            "Wilson CI (rounds independent)",
            "Call success % [95% CI by deal]",
            "win p (Holm, paired)",
        ],
    );
    let s = json_file(&out.join("stats.json"));
    for a in s["agents"].as_array().unwrap() {
        assert_eq!(a["win"]["ci95_method"], "deal");
        assert_eq!(a["win"]["ci95"], a["win"]["ci95_units"]);
        assert_eq!(a["win"]["units"], 30);
    }
    // The figure's caption says which interval (figures carry no title by default; the
    // caption is the title in a paper).
    let caption = md
        .split("![win_rate](figures/win_rate.svg)")
        .nth(1)
        .and_then(|rest| rest.lines().find(|l| !l.is_empty()))
        .unwrap();
    has(caption, "by deal");
    let csv = std::fs::read_to_string(out.join("tables/agents.csv")).unwrap();
    assert!(csv.lines().next().unwrap().contains("win_ci95_method"));
    assert!(csv.lines().nth(1).unwrap().contains(",deal,"));
}

/// Every argument of every command (and of the trainer's command line) is described in its
/// --help: no bare `<SCENARIO>` or `--seed <SEED>` line.
#[test]
fn every_argument_of_every_command_is_described() {
    use clap::CommandFactory;
    fn undescribed(cmd: &clap::Command, path: &str, out: &mut Vec<String>) {
        for arg in cmd.get_arguments() {
            let id = arg.get_id().as_str();
            if id == "help" || id == "version" {
                continue;
            }
            let help = arg
                .get_help()
                .or(arg.get_long_help())
                .map(|h| h.to_string())
                .unwrap_or_default();
            if help.trim().is_empty() {
                out.push(format!("{path} {id}"));
            }
        }
        for sub in cmd.get_subcommands() {
            undescribed(sub, &format!("{path} {}", sub.get_name()), out);
        }
    }
    let mut out = Vec::new();
    undescribed(&dhumbal::cli::Cli::command(), "dhumbal-run", &mut out);
    undescribed(
        &dhumbal::cli::train::TrainerCli::command(),
        "dhumbal-train",
        &mut out,
    );
    assert!(out.is_empty(), "arguments without help: {out:?}");
    // As a user sees it.
    let help = text(&run(&["validate", "--help"]));
    for line in ["<SCENARIO>  ", "--seed <SEED>  ", "--rounds <ROUNDS>  "] {
        // The argument's own line (not the usage line), with words after the name.
        let shown = help.lines().find(|l| l.trim_start().starts_with(line));
        assert!(
            shown.is_some_and(|l| !l.trim_start()[line.len()..].trim().is_empty()),
            "{line:?} undescribed in {help}"
        );
    }
}

/// `dhumbal-run validate FILE | head` and the like: output into a pipe its reader has closed
/// ends the program quietly, as it does `cat` (SIGPIPE), instead of a panic (exit 101).
#[test]
fn a_closed_pipe_ends_the_program_quietly() {
    use std::os::unix::process::ExitStatusExt as _;
    for args in [
        &["validate", "scenarios/championship.yaml"][..],
        &["agents"],
        &["schema"],
    ] {
        let mut child = bin()
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // The reader goes before the program writes a line.
        drop(child.stdout.take());
        let o = child.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            o.status.success() || o.status.signal() == Some(13),
            "{args:?}: {:?}: {err}",
            o.status
        );
        assert!(!err.contains("panicked"), "{args:?}: {err}");
    }
}
