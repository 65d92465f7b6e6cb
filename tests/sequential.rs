//! Sequential stages: the GSPRT against an independent Python computation
//! (scripts/reference/sprt_fixture.py), its error rates and lengths on simulated unit scores,
//! and `sequential:` stages through the binary (the decision, the stop that threads and resumes
//! do not move, the report's block and figure, and refusals of bad input).

use std::path::Path;

use dhumbal::rng::{Purpose, RandomSource, chacha_stream};
use dhumbal::runner::folder::same_records;
use dhumbal::runner::sequential::{
    Decision, Hypotheses, NELO_PER_T, Outcome, Sample, SprtConfig, llr, sequential,
};
use rayon::prelude::*;
use serde_json::Value;

mod common;
use common::{arg, json_file, killed, refused, run, scenario, text, tmp, tmp_scenario};

/// The LLR of every fixture case agrees with the Python reference to 1e-9.
#[test]
fn llr_agrees_with_the_python_reference() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/sprt.json");
    let fixture = json_file(&path);
    let cases = fixture["cases"].as_array().unwrap();
    assert!(cases.len() >= 10);
    let mut worst = 0.0f64;
    for case in cases {
        let name = case["name"].as_str().unwrap();
        let mut scores = Vec::new();
        for (v, c) in case["values"]
            .as_array()
            .unwrap()
            .iter()
            .zip(case["counts"].as_array().unwrap())
        {
            scores.extend(std::iter::repeat_n(
                v.as_f64().unwrap(),
                c.as_u64().unwrap() as usize,
            ));
        }
        let h = &case["hypotheses"];
        let f = |k: &str| h[k].as_f64().unwrap();
        let config = match h["kind"].as_str().unwrap() {
            "normalized" => SprtConfig::normalized(f("elo0"), f("elo1"), f("games_per_unit")),
            _ => SprtConfig {
                hypotheses: Hypotheses::ScoreDifference {
                    d0: f("d0"),
                    d1: f("d1"),
                },
                ..SprtConfig::normalized(0.0, 1.0, 1.0)
            },
        };
        let ours = llr(&Sample::from_scores(&scores), &config).unwrap();
        let theirs = case["llr"].as_f64().unwrap();
        let diff = (ours - theirs).abs();
        worst = worst.max(diff);
        println!("{name}: LLR {ours:.12} (Python {theirs:.12}, difference {diff:.1e})");
        assert!(diff < 1e-9, "{name}: {ours} against {theirs}");
    }
    println!("largest difference from the Python reference: {worst:.1e}");
}

/// A heads-up unit score (a deal under both seatings: 0, 1/2 or 1) with normalized Elo
/// `nelo`: P(1) = a + d, P(0) = a - d, P(1/2) = 1 - 2a, whose t-value d / sqrt(a/2 - d²) is
/// nelo / (800/ln 10) · sqrt(2).
fn draw_unit(rng: &mut impl RandomSource, a: f64, nelo: f64) -> f64 {
    let t = nelo / NELO_PER_T * 2f64.sqrt();
    let d = t * (a / 2.0).sqrt() / (1.0 + t * t).sqrt();
    let u = rng.random();
    if u < a + d {
        1.0
    } else if u < 2.0 * a {
        0.0
    } else {
        0.5
    }
}

/// 10,000 simulated tests under H0 and 10,000 under H1 (elo0 0, elo1 40, α = β = 0.05, a look
/// every 5 units): H1 is accepted under H0 in at most α of them (within three Monte Carlo
/// standard errors), H1 is accepted under H1 in about 1 − β of them, and the mean length is
/// below the fixed-sample size of the same power.
#[test]
fn simulated_error_rates_and_lengths() {
    let (elo0, elo1) = (0.0, 40.0);
    let config = SprtConfig::normalized(elo0, elo1, 2.0);
    let (every, max) = (5u64, 20_000u64);
    let runs = 10_000u64;
    let simulate = |nelo: f64, salt: u64| -> (u64, u64, u64, f64) {
        let outcomes: Vec<(Decision, u64)> = (0..runs)
            .into_par_iter()
            .map(|run| {
                // The run's units in order, drawn ahead in blocks: units past the stop are
                // never looked at.
                let mut rng = chacha_stream(salt, Purpose::Search, run);
                let mut scores = Vec::new();
                let mut block = 1024;
                loop {
                    while scores.len() < block {
                        scores.push(draw_unit(&mut rng, 0.3, nelo));
                    }
                    let s = sequential(&scores, &config, every, max).unwrap();
                    if s.decision != Decision::Continue {
                        return (s.decision, s.units);
                    }
                    block *= 2;
                }
            })
            .collect();
        let count = |d: Decision| outcomes.iter().filter(|o| o.0 == d).count() as u64;
        let mean = outcomes.iter().map(|o| o.1 as f64).sum::<f64>() / runs as f64;
        (
            count(Decision::AcceptH1),
            count(Decision::AcceptH0),
            count(Decision::Undecided),
            mean,
        )
    };
    let start = std::time::Instant::now();
    let (h1_under_h0, h0_under_h0, und0, len0) = simulate(elo0, 1);
    let (h1_under_h1, h0_under_h1, und1, len1) = simulate(elo1, 2);
    // The fixed-sample test of the same error rates: n = ((z_(1-α) + z_(1-β)) / t1)², t1 the
    // per-unit t-value under H1.
    let z = 1.644_853_626_951_472_2;
    let t1 = elo1 / NELO_PER_T * 2f64.sqrt();
    let fixed = ((z + z) / t1).powi(2);
    let n = runs as f64;
    let (alpha, beta) = (h1_under_h0 as f64 / n, h0_under_h1 as f64 / n);
    println!(
        "under H0 (nElo {elo0}): H1 {h1_under_h0}, H0 {h0_under_h0}, undecided {und0} of \
         {runs}: false H1 rate {alpha:.4} (alpha 0.05); mean length {len0:.1} units"
    );
    println!(
        "under H1 (nElo {elo1}): H1 {h1_under_h1}, H0 {h0_under_h1}, undecided {und1} of \
         {runs}: power {:.4} (1 - beta 0.95); mean length {len1:.1} units",
        h1_under_h1 as f64 / n
    );
    println!(
        "fixed-sample size of the same power: {fixed:.0} units; {:.1} s",
        start.elapsed().as_secs_f64()
    );
    let se = (0.05f64 * 0.95 / n).sqrt();
    assert!(alpha <= 0.05 + 3.0 * se, "false H1 rate {alpha}");
    assert!(beta <= 0.05 + 3.0 * se, "false H0 rate {beta}");
    // Wald's bounds are conservative (looks every few units overshoot them): the rates are
    // below the nominal ones, but not far below (the test is not blind).
    assert!(alpha > 0.01 && beta > 0.01, "{alpha} {beta}");
    assert!(
        len0 < fixed && len1 < fixed,
        "{len0} {len1} against {fixed}"
    );
    assert_eq!(und0 + und1, 0);
}

/// A heads-up stage, `aggressive` against `random`, looked at every 50 deals.
fn strong(max: u64) -> String {
    format!(
        "\
name: seq
seed: 7
seating: permute
rules: {{preset: paper, players: 2}}
output: {{chunk_rounds: 40, decision_timing: false}}
stages:
  - name: test
    sequential: {{candidate: aggressive, baseline: random, elo0: 0, elo1: 10, max_deals: {max}, every: 50}}
    agents:
      - kind: aggressive
      - kind: random
  - name: after
    deals: 20
    agents:
      - winner_of: test
      - kind: random
"
    )
}

fn go(args: &[&str]) -> String {
    let o = run(args);
    let t = text(&o);
    assert!(o.status.success(), "{args:?}: {t}");
    t
}

fn outcome(stage: &Path) -> Outcome {
    Outcome::read(stage).unwrap().expect("sequential.json")
}

/// `aggressive` is far stronger than `random`: H1 within a few hundred deals, said on the
/// console, in stats.json, in report.md with its figure; the stage is complete at its stop
/// and the next stage seats its winner.
#[test]
fn a_strong_candidate_is_accepted_within_a_few_hundred_deals() {
    let (dir, file) = tmp_scenario("s.yaml", &strong(5000));
    let out = dir.path().join("out");
    let t = go(&[arg(&file), "--out", arg(&out)]);
    let o = outcome(&out.join("test"));
    assert_eq!(o.decision, "H1", "{t}");
    assert!(
        o.matches <= 400 && o.matches.is_multiple_of(50),
        "{}",
        o.matches
    );
    assert!(o.llr >= o.bounds.1);
    assert!(
        t.contains("sequential test: H1 accepted: `aggressive` is stronger than `random`"),
        "{t}"
    );
    // Only the deals up to the stop were played.
    let progress = json_file(&out.join("progress.json"));
    let stage = &progress["stages"][0];
    assert_eq!(stage["units_done"].as_u64(), Some(o.matches * 2));
    assert_eq!(stage["complete"], Value::Bool(true));
    let stats = json_file(&out.join("test/stats.json"));
    assert_eq!(stats["sequential"]["decision"], "H1");
    assert_eq!(stats["sequential"]["matches"].as_u64(), Some(o.matches));
    let md = std::fs::read_to_string(out.join("test/report.md")).unwrap();
    assert!(md.contains("## Sequential test: `aggressive` against `random`"));
    assert!(
        md.contains("LLR: ") && md.contains("lean towards that bound"),
        "{md}"
    );
    assert!(out.join("test/figures/sequential_llr.svg").is_file());
    assert!(out.join("test/figures/sequential_llr.png").is_file());
    // The winner advanced.
    let manifest = std::fs::read_to_string(out.join("manifest.json")).unwrap();
    assert!(manifest.contains("aggressive"));
    assert!(out.join("after/summary.csv").is_file());
    // `report` rebuilds the same section from the records.
    let again = dir.path().join("again");
    go(&["report", arg(&out), "--out", arg(&again)]);
    let md2 = std::fs::read_to_string(again.join("test/report.md")).unwrap();
    assert!(md2.contains("## Sequential test"), "{md2}");
}

/// A sequential stage cut to one deal (`--rounds 1`, a first try of a scenario): one unit has
/// no spread, so no interval for its score; the run, its report and the next stage go on (the
/// interval was NaN, written to `sequential.json` as null, and the run died reading it back).
#[test]
fn a_sequential_stage_of_one_deal_runs_and_reports() {
    let (dir, file) = tmp_scenario("s.yaml", &strong(5000));
    let out = dir.path().join("out");
    let t = go(&[arg(&file), "--out", arg(&out), "--rounds", "1"]);
    let o = outcome(&out.join("test"));
    assert_eq!(o.matches, 1, "{t}");
    assert!(out.join("after/summary.csv").is_file(), "{t}");
    let md = std::fs::read_to_string(out.join("test/report.md")).unwrap();
    assert!(md.contains("Score: ") && md.contains("[n/a, n/a]"), "{md}");
}

/// Two copies of the same agent under different ids: never H1 (H0, or undecided).
#[test]
fn identical_agents_are_not_told_apart() {
    let body = "\
name: same
seed: 3
seating: permute
rules: {preset: paper, players: 2}
sequential: {candidate: a, baseline: b, elo0: 0, elo1: 10, max_deals: 3000, every: 100}
agents:
  - {id: a, kind: balanced}
  - {id: b, kind: balanced}
";
    let (dir, file) = tmp_scenario("same.yaml", body);
    let out = dir.path().join("out");
    let t = go(&[arg(&file), "--out", arg(&out)]);
    let o = outcome(&out);
    assert_ne!(o.decision, "H1", "{t}");
    println!("identical agents: {}", o.sentence());
}

/// The stop and the records are the same with 1, 2 or 16 threads, and after kills and resumes.
#[test]
fn the_stop_is_the_same_whatever_the_threads_and_resumes() {
    let (dir, file) = tmp_scenario("s.yaml", &strong(5000));
    let f = arg(&file);
    let one = dir.path().join("one");
    let two = dir.path().join("two");
    go(&[f, "--out", arg(&one), "--threads", "1", "--no-report"]);
    go(&[f, "--out", arg(&two), "--threads", "2", "--no-report"]);
    let sixteen = dir.path().join("sixteen");
    go(&[f, "--out", arg(&sixteen), "--threads", "16", "--no-report"]);
    let a = outcome(&one.join("test"));
    for other in [&two, &sixteen] {
        assert_eq!(a, outcome(&other.join("test")));
        same_records(&one.join("test"), &other.join("test"))
            .unwrap()
            .unwrap();
    }
    // Killed after the first parts land, and again after the decision is kept but before the
    // stage is finished; resumed each time.
    let cut = dir.path().join("cut");
    let c = arg(&cut);
    for (i, point) in ["part-placed:2", "stage-finished:1"].iter().enumerate() {
        let mut args = vec![f, "--out", c, "--no-report"];
        if i > 0 {
            args.push("--resume");
        }
        killed(&args, point);
    }
    go(&[f, "--out", c, "--no-report", "--resume"]);
    assert_eq!(a, outcome(&cut.join("test")));
    let rows = same_records(&one.join("test"), &cut.join("test"))
        .unwrap()
        .unwrap();
    assert_eq!(rows as u64, a.matches * 2 * 2);
    // A resume of the finished run plays nothing and keeps the decision.
    go(&[f, "--out", c, "--no-report", "--resume"]);
    assert_eq!(a, outcome(&cut.join("test")));
}

/// Bad `sequential:` entries are refused with the file, line, field and what is valid; a
/// sequential stage is not split into shards.
#[test]
fn bad_entries_are_refused_with_where_and_what() {
    let dir = tmp();
    let base = strong(1000);
    let cases = [
        (
            "candidate: aggressive",
            "candidate: agressive",
            "stages.0.sequential.candidate",
            "did you mean `aggressive`",
        ),
        (
            "elo0: 0, elo1: 10",
            "elo0: 10, elo1: 0",
            "stages.0.sequential.elo1",
            "elo0 < elo1",
        ),
        (
            "elo1: 10,",
            "elo1: 10, alpha: 0.7,",
            "stages.0.sequential.alpha",
            "between 0 and 0.5",
        ),
        (
            "every: 50}",
            "every: 5000}",
            "stages.0.sequential.every",
            "between 1 and the maximum (1000 deals)",
        ),
        (
            "    agents:\n      - kind: aggressive",
            "    deals: 300\n    agents:\n      - kind: aggressive",
            "stages.0.deals",
            "remove `deals`",
        ),
        (
            "baseline: random",
            "baseline: aggressive",
            "stages.0.sequential.baseline",
            "the candidate itself",
        ),
        (
            "max_deals: 1000",
            "max_games: 1000",
            "stages.0.sequential.max_games",
            "these rules score coins",
        ),
    ];
    for (i, (from, to, field, says)) in cases.iter().enumerate() {
        assert!(base.contains(from), "{from}");
        let file = scenario(
            dir.path(),
            &format!("bad{i}.yaml"),
            &base.replacen(from, to, 1),
        );
        let t = refused(&["validate", arg(&file)]);
        assert!(t.contains(field), "{to}: {t}");
        assert!(t.contains(says), "{to}: {t}");
        assert!(t.contains(&format!("bad{i}.yaml:")), "{to}: no line: {t}");
    }
    // A missing maximum, a misspelt baseline and reversed bounds at once: each is reported,
    // and nothing about a sample size the stage must not give.
    let all = base
        .replacen("max_deals: 1000, ", "", 1)
        .replacen("baseline: random", "baseline: rando", 1)
        .replacen("elo0: 0, elo1: 10", "elo0: 10, elo1: 0", 1);
    assert_ne!(all, base);
    let file = scenario(dir.path(), "all.yaml", &all);
    let t = refused(&["validate", arg(&file)]);
    for says in [
        "has 3 problems",
        "missing: the most deals to play (`max_deals`)",
        "`rando` is not an agent of this stage",
        "elo0 < elo1",
    ] {
        assert!(t.contains(says), "{says:?} not in {t}");
    }
    assert!(!t.contains("stages.0.deals"), "{t}");
    let file = scenario(dir.path(), "ok.yaml", &base);
    let out = dir.path().join("sharded");
    let t = refused(&[arg(&file), "--out", arg(&out), "--shard", "0/2"]);
    assert!(t.contains("cannot be split into shards"), "{t}");
}

/// A league that plays until its leader is resolved from the second: it stops early, says who
/// leads whom, seats that leader in the next stage, and the overview lists the decision.
#[test]
fn a_stage_plays_until_its_winner_is_decided() {
    let body = "\
name: decide
seed: 11
seating: rotate
rules: {preset: paper}
output: {decision_timing: false}
stages:
  - name: league
    decide: {elo: 20, max_deals: 3000, every: 100}
    agents:
      - kind: aggressive
      - kind: conservative
      - kind: balanced
      - kind: random
  - name: final
    rules: {players: 2}
    deals: 50
    agents:
      - winner_of: league
      - kind: random
";
    let (dir, file) = tmp_scenario("decide.yaml", body);
    let out = dir.path().join("out");
    let t = go(&[arg(&file), "--out", arg(&out)]);
    let o = outcome(&out.join("league"));
    assert!(o.plan.decide);
    assert!(o.matches < 3000, "{}", o.matches);
    assert_eq!(o.decision, "H1", "{t}");
    let line = format!(
        "winner: decided: `{}` leads `{}`",
        o.plan.candidate, o.plan.baseline
    );
    assert!(t.contains(&line), "{t}");
    // The leader is the stage's winner, seated in the final.
    let manifest = json_file(&out.join("manifest.json"));
    assert_eq!(
        manifest["stages"][0]["winner"]["agent"].as_str(),
        Some(o.plan.candidate.as_str()),
        "{manifest}"
    );
    let md = std::fs::read_to_string(out.join("league/report.md")).unwrap();
    assert!(md.contains("## Deciding the winner"), "{md}");
    let overview = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(
        overview.contains("## Stages that play until they decide"),
        "{overview}"
    );
    // Killed after its first part and resumed: the same stop and records.
    let cut = dir.path().join("cut");
    killed(&[arg(&file), "--out", arg(&cut)], "part-placed:1");
    go(&[arg(&file), "--out", arg(&cut), "--resume"]);
    assert_eq!(o, outcome(&cut.join("league")));
    same_records(&out.join("league"), &cut.join("league"))
        .unwrap()
        .unwrap();
    // Killed while its report was being written, after `report.md` and before the sequential
    // section was added (stats.json without it): the resume writes the report again. A
    // complete report is left alone.
    let league = out.join("league");
    let mtime = |name: &str| {
        std::fs::metadata(league.join(name))
            .unwrap()
            .modified()
            .unwrap()
    };
    let page = mtime("report.md");
    go(&[arg(&file), "--out", arg(&out), "--resume"]);
    assert_eq!(
        mtime("report.md"),
        page,
        "a complete report was written again"
    );
    let mut stats = json_file(&league.join("stats.json"));
    stats.as_object_mut().unwrap().remove("sequential");
    std::fs::write(league.join("stats.json"), stats.to_string()).unwrap();
    let md = md.replace("## Deciding the winner", "## (cut)");
    std::fs::write(league.join("report.md"), md).unwrap();
    go(&[arg(&file), "--out", arg(&out), "--resume"]);
    let md = std::fs::read_to_string(league.join("report.md")).unwrap();
    assert!(md.contains("## Deciding the winner"), "{md}");
    let stats = json_file(&league.join("stats.json"));
    assert!(stats.get("sequential").is_some());
    // A cap too small to resolve anything: undecided, and the overview names the rule that chose.
    let capped = body.replace("max_deals: 3000, every: 100", "max_deals: 20, every: 10");
    let file = scenario(dir.path(), "capped.yaml", &capped);
    let out = dir.path().join("capped");
    go(&[arg(&file), "--out", arg(&out)]);
    let o = outcome(&out.join("league"));
    assert_ne!(o.decision, "H1");
    let overview = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(
        overview.contains("the winner rule (win rate, then economic performance) chose"),
        "{overview}"
    );
    // Both entries in one stage are refused.
    let both = body.replace(
        "    decide: {elo: 20",
        "    sequential: {candidate: aggressive, baseline: random}\n    decide: {elo: 20",
    );
    let file = scenario(dir.path(), "both.yaml", &both);
    let t = refused(&["validate", arg(&file)]);
    assert!(
        t.contains("stages.0.decide") && t.contains("not both"),
        "{t}"
    );
}
