//! Sequential stages through the binary: the decision, the stop that threads and resumes do not
//! move, the report's block and figure, and refusals of bad input. The test's arithmetic against
//! the Python reference and its simulated error rates are crates/stats/tests/sequential.rs.

use std::path::Path;

use dhumbal::runner::folder::same_records;
use dhumbal::runner::sequential::Outcome;
use serde_json::Value;

mod common;
use common::{
    arg, has, has_all, json_file, killed, lacks, refused, run, scenario, text, tmp, tmp_scenario,
};

/// A league of four that plays until its winner is decided, then a final that seats it.
const LEAGUE_THEN_FINAL: &str = "  - name: league
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
    has(
        &t,
        "sequential test: H1 accepted: `aggressive` is stronger than `random`",
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
    has_all(&md, &["LLR: ", "lean towards that bound"]);
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
    has(&md2, "## Sequential test");
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
    has_all(&md, &["Score: ", "[n/a, n/a]"]);
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

/// Bad `sequential:` entries are refused with the file, line, field and what is valid.
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
    lacks(&t, "stages.0.deals");
}

/// A sequential test and a `decide:` league played as shards, one look per wave of three
/// (as scripts/slurm/drive.sbatch submits them): each wave plays one look, `status` says where
/// the test stands and exits with 3 until it decides, a merge before then says it has not
/// decided, and the merged study has the single run's outcomes byte for byte and its records.
#[test]
fn shards_play_a_sequential_test_one_look_per_wave() {
    let test = "  - name: test
    rules: {players: 2}
    sequential: {candidate: aggressive, baseline: random, elo0: 0, elo1: 10, max_deals: 1000, every: 50}
    agents:
      - kind: aggressive
      - kind: random
";
    let body = format!(
        "name: waves\nseed: 11\nseating: rotate\nrules: {{preset: paper}}\n\
         output: {{chunk_rounds: 64, decision_timing: false}}\nstages:\n{test}{LEAGUE_THEN_FINAL}"
    );
    let (dir, file) = tmp_scenario("waves.yaml", &body);
    let single = dir.path().join("single");
    go(&[arg(&file), "--out", arg(&single), "--no-report"]);
    let shards = dir.path().join("shards");
    let status = |stage: &str| run(&["status", arg(&shards), "--stage", stage]);
    let shard = |i: u64, stage: &str| {
        let shard = format!("{i}/3");
        go(&[
            arg(&file),
            "--out",
            arg(&shards),
            "--shard",
            &shard,
            "--stage",
            stage,
        ])
    };
    assert_eq!(status("test").status.code(), Some(3), "no run yet");
    // A name from the command line never reaches the terminal raw.
    let t = refused(&["status", arg(&single), "--stage", "\u{1b}[31mX"]);
    has_all(&t, &["no such stage", "\\x1b[31mX", "test, league, final"]);
    lacks(&t, "\u{1b}");
    for stage in ["test", "league"] {
        let mut waves = 0;
        while status(stage).status.code() == Some(3) {
            waves += 1;
            assert!(waves <= 5, "stage {stage}: still not decided after 5 waves");
            for i in 0..3 {
                has(&shard(i, stage), "the test's look");
            }
            if stage == "test" && waves == 1 {
                // One look on disk, not decided: what status and merge say.
                let t = text(&status(stage));
                has_all(
                    &t,
                    &["not decided: 50 of at most 1000 matches", "LLR", "bounds"],
                );
                let t = refused(&["merge", arg(&shards)]);
                has_all(&t, &["has not decided yet", "--shard I/3 --stage test"]);
            }
        }
        assert_eq!(
            waves, 2,
            "stage {stage}: the single run decided after two looks"
        );
        let t = text(&status(stage));
        has(&t, "ended after");
    }
    for i in 0..3 {
        shard(i, "final");
    }
    go(&["merge", arg(&shards), "--no-report"]);
    for stage in ["test", "league"] {
        let read = |root: &Path| std::fs::read(root.join(stage).join("sequential.json")).unwrap();
        assert_eq!(
            read(&single),
            read(&shards),
            "stage {stage}: sequential.json"
        );
    }
    let t = go(&[
        "rerun",
        arg(&shards),
        "--out",
        arg(&dir.path().join("rerun")),
        "--no-report",
    ]);
    has(&t, "rerun reproduces");
}

/// A league that plays until its leader is resolved from the second: it stops early, says who
/// leads whom, seats that leader in the next stage, and the overview lists the decision.
#[test]
fn a_stage_plays_until_its_winner_is_decided() {
    let body = format!(
        "name: decide\nseed: 11\nseating: rotate\nrules: {{preset: paper}}\n\
         output: {{decision_timing: false}}\nstages:\n{LEAGUE_THEN_FINAL}"
    );
    let (dir, file) = tmp_scenario("decide.yaml", &body);
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
    has(&t, &line);
    // The leader is the stage's winner, seated in the final.
    let manifest = json_file(&out.join("manifest.json"));
    assert_eq!(
        manifest["stages"][0]["winner"]["agent"].as_str(),
        Some(o.plan.candidate.as_str()),
        "{manifest}"
    );
    let md = std::fs::read_to_string(out.join("league/report.md")).unwrap();
    has(&md, "## Deciding the winner");
    let overview = std::fs::read_to_string(out.join("report.md")).unwrap();
    has(&overview, "## Stages that play until they decide");
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
    has(&md, "## Deciding the winner");
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
    has(
        &overview,
        "the winner rule (win rate, then economic performance) chose",
    );
    // Both entries in one stage are refused.
    let both = body.replace(
        "    decide: {elo: 20",
        "    sequential: {candidate: aggressive, baseline: random}\n    decide: {elo: 20",
    );
    let file = scenario(dir.path(), "both.yaml", &both);
    let t = refused(&["validate", arg(&file)]);
    has_all(&t, &["stages.0.decide", "not both"]);
}
