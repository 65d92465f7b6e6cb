//! Records at scale: the Parquet dataset is the journal (a run killed at any moment resumes to
//! exactly the records of an uninterrupted run, and readers only ever see complete parts),
//! CSV only when asked, and studies split into shards that merge to a single run's records.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use dhumbal::runner::dataset::Dataset;
use dhumbal::runner::folder::same_records;

mod common;
use common::{
    arg, bin, crashing, has, has_all, json_file, killed, lacks, ok, refused, run, scenario, text,
    tmp_scenario,
};

/// Asserts that two stage folders hold the same records (decision times aside), and
/// returns their rows.
fn same(a: &Path, b: &Path) -> usize {
    match same_records(a, b).unwrap() {
        Ok(rows) => rows,
        Err(why) => panic!("{} and {} differ: {why}", a.display(), b.display()),
    }
}

const SMALL: &str = "\
name: small
seed: 17
deals: 1200
seating: rotate
rules: {preset: paper}
agents:
  - kind: aggressive
  - kind: balanced
  - kind: random
  - kind: opportunistic
output: {chunk_rounds: 48, decision_timing: false}
";

/// The default output is the dataset alone; `csv: true` (or `--csv`) adds `rounds.csv`
/// with the same rows; `parquet: false` is refused with what to do instead.
#[test]
fn the_dataset_is_the_output_and_csv_is_asked_for() {
    let (dir, file) = tmp_scenario("s.yaml", &SMALL.replace("deals: 1200", "deals: 100"));
    let plain = dir.path().join("plain");
    ok(&[arg(&file), "--out", arg(&plain), "--no-report"]);
    assert!(!plain.join("rounds.csv").exists());
    let dataset = Dataset::open(&plain).unwrap();
    dataset.check_complete().unwrap();
    assert_eq!(dataset.rows(), 100 * 4 * 4);
    assert!(!plain.join(".incoming").read_dir().unwrap().any(|_| true));
    // Every part is a Parquet file with the string columns as dictionaries.
    let df = polars_io::prelude::ParquetReader::new(
        std::fs::File::open(&dataset.parts[0].path).unwrap(),
    );
    use polars_io::prelude::SerReader;
    let df = df.finish().unwrap();
    assert!(matches!(
        df.column("agent").unwrap().dtype(),
        polars_core::prelude::DataType::Enum(..)
    ));

    let asked = scenario(
        dir.path(),
        "c.yaml",
        &SMALL
            .replace("deals: 1200", "deals: 100")
            .replace("chunk_rounds: 48", "chunk_rounds: 48, csv: true"),
    );
    let with_csv = dir.path().join("csv");
    ok(&[arg(&asked), "--out", arg(&with_csv), "--no-report"]);
    let lines = std::fs::read_to_string(with_csv.join("rounds.csv"))
        .unwrap()
        .lines()
        .count();
    assert_eq!(lines, 1 + 100 * 4 * 4);
    // The CSV alone (the dataset moved away) reads as the same records.
    let lone = dir.path().join("lone");
    std::fs::create_dir(&lone).unwrap();
    std::fs::copy(with_csv.join("rounds.csv"), lone.join("rounds.csv")).unwrap();
    assert_eq!(same(&plain, &lone), 100 * 4 * 4);

    let no_parquet = scenario(
        dir.path(),
        "p.yaml",
        &SMALL.replace("chunk_rounds: 48", "chunk_rounds: 48, parquet: false"),
    );
    let t = refused(&[arg(&no_parquet), "--out", arg(&dir.path().join("p"))]);
    has_all(&t, &["`output.parquet`", "csv: true"]);
}

/// A small deterministic generator for the kill times.
fn lcg(state: &mut u64) -> u64 {
    *state = state
        .wrapping_mul(6_364_136_223_846_793_005)
        .wrapping_add(1_442_695_040_888_963_407);
    *state >> 33
}

/// kill -9 at moments spread over a run (before the first part, between parts, while parts
/// are written, after the last), each time followed by `--resume` (or a fresh start when
/// nothing was begun): the folder only ever holds complete parts, and the finished run has
/// exactly the records and summary of an uninterrupted one.
#[test]
fn a_run_killed_at_any_moment_resumes_to_the_same_records() {
    let (dir, file) = tmp_scenario("small.yaml", SMALL);
    let whole = dir.path().join("whole");
    ok(&[arg(&file), "--out", arg(&whole), "--no-report"]);

    let cut = dir.path().join("cut");
    let args = |resume: bool| {
        let mut a = vec![
            file.to_str().unwrap().to_string(),
            "--out".into(),
            arg(&cut).into(),
            "--no-report".into(),
        ];
        if resume {
            a.push("--resume".into());
        }
        a
    };
    let mut state = 0x5eed_u64;
    let mut kills = 0;
    let mut begun = false;
    for attempt in 0..40 {
        // Slowed down so that the run spans a second or so: 25 parts, 40 ms apart.
        let mut child = bin()
            .args(args(begun))
            .env("DHUMBAL_RUN_CHUNK_DELAY_MS", "40")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let wait = Duration::from_millis(lcg(&mut state) % 700);
        let start = Instant::now();
        let mut finished = None;
        while start.elapsed() < wait {
            if let Some(status) = child.try_wait().unwrap() {
                finished = Some(status);
                break;
            }
            std::thread::sleep(Duration::from_millis(2));
        }
        match finished {
            Some(status) => {
                // It ended before the kill: done, or refused to resume (killed before it had
                // begun: nothing to resume, so start afresh).
                if status.success() {
                    break;
                }
                assert!(
                    !begun || cut.join("progress.json").is_file(),
                    "attempt {attempt}"
                );
                begun = false;
                continue;
            }
            None => {
                child.kill().unwrap(); // SIGKILL
                child.wait().unwrap();
                kills += 1;
            }
        }
        begun = cut.join("progress.json").is_file();
        // Only complete parts are visible, and none overlaps.
        only_complete_parts(&cut, &format!("after kill {kills}"));
    }
    assert!(
        kills >= 3,
        "only {kills} kills landed; slow the run down more"
    );
    // Finish it.
    let o = run(&args(begun).iter().map(String::as_str).collect::<Vec<_>>());
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(same(&whole, &cut), 1200 * 4 * 4);
    assert_eq!(
        std::fs::read(cut.join("summary.csv")).unwrap(),
        std::fs::read(whole.join("summary.csv")).unwrap()
    );
    // Resuming a finished run changes nothing.
    ok(&args(true).iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(same(&whole, &cut), 1200 * 4 * 4);
}

const STAGED: &str = "\
name: staged
seed: 5
rules: {preset: paper}
stages:
  - name: league
    deals: 300
    seating: rotate
    agents:
      - kind: aggressive
      - kind: conservative
      - kind: balanced
      - kind: opportunistic
  - name: final
    deals: 200
    seating: permute
    agents:
      - winner_of: league
      - kind: random
      - kind: conservative
      - kind: balanced
output: {chunk_rounds: 64, decision_timing: false}
";

/// Checks what a killed run left in `stage`: only complete parts, none overlapping, all of
/// this stage.
fn only_complete_parts(stage: &Path, when: &str) {
    if !stage.join("rounds").is_dir() {
        return;
    }
    let d = Dataset::open(stage).unwrap_or_else(|e| panic!("{when}: {e:#}"));
    for p in &d.parts {
        dhumbal::runner::dataset::read_part(&p.path, None)
            .unwrap_or_else(|e| panic!("{when}: {}: {e:#}", p.path.display()));
    }
    if let Some(first) = d.parts.first() {
        let key = dhumbal::runner::dataset::StageKey {
            scenario: first.meta.scenario.clone(),
            stage: first.meta.stage.clone(),
            agents: first.meta.agents.clone(),
            stage_units: first.meta.stage_units,
        };
        d.check(&key).unwrap_or_else(|e| panic!("{when}: {e:#}"));
    }
}

/// A two-stage run (with `rounds.csv`) killed at every crash point of the runner in turn
/// (`DHUMBAL_RUN_CRASH_AT`, crates/runner/src/crash.rs), in both stages and between them, and
/// resumed after each: the folder only ever holds complete parts, and the finished run has
/// exactly the records, `rounds.csv` and summaries of an uninterrupted one. Every kill lands
/// at a chosen point, whatever the machine's load, and a failure names it.
#[test]
fn a_run_killed_at_each_crash_point_resumes_to_the_same_records() {
    let (dir, file) = tmp_scenario("staged.yaml", STAGED);
    let f = arg(&file);
    let whole = dir.path().join("whole");
    ok(&[f, "--out", arg(&whole), "--no-report", "--csv"]);
    let cut = dir.path().join("cut");
    let c = arg(&cut);
    // The league has 300 deals in parts of 64 rounds (5 parts: 4 rounds a deal), the final
    // 200: points are passed in the league first, then (counting again in each process) in
    // the final once the league is done.
    let plan = [
        ("part-begun", 1),
        ("part-written", 2),
        ("part-placed", 1),
        ("progress-saved", 3),
        ("part-written", 1),
        ("stage-finished", 1),
        ("part-begun", 2),
        ("part-placed", 3),
        ("progress-saved", 2),
        ("stage-finished", 1),
    ];
    let mut killed = 0;
    for (point, n) in plan {
        let when = format!("killed at {point}:{n}");
        let mut args = vec![f, "--out", c, "--no-report", "--csv"];
        if cut.join("progress.json").is_file() {
            args.push("--resume");
        }
        let o = crashing(&args, &format!("{point}:{n}"));
        if o.status.success() {
            // The point was not reached again: the run is over.
            break;
        }
        assert_eq!(
            o.status.code(),
            None,
            "{when}: not killed, but {}",
            text(&o)
        );
        killed += 1;
        for stage in ["league", "final"] {
            only_complete_parts(&cut.join(stage), &when);
        }
    }
    assert_eq!(
        killed,
        plan.len(),
        "only {killed} of the planned kills landed"
    );
    ok(&[f, "--out", c, "--no-report", "--csv", "--resume"]);
    for stage in ["league", "final"] {
        // Rows: a round per seat; rotate plays 4 rounds a deal, permute 24.
        let rounds = if stage == "league" { 300 * 4 } else { 200 * 24 };
        assert_eq!(
            same(&whole.join(stage), &cut.join(stage)),
            rounds * 4,
            "{stage}"
        );
        for name in ["summary.csv", "rounds.csv"] {
            assert_eq!(
                std::fs::read_to_string(cut.join(stage).join(name)).unwrap(),
                std::fs::read_to_string(whole.join(stage).join(name)).unwrap(),
                "{stage}/{name}"
            );
        }
    }
}

/// A run killed after its last part went to disk and before its report: `--resume` has
/// nothing left to play, and writes the report (and the overview, which reads it) all the
/// same, as an uninterrupted run would have. (Until 2026-11-27 it left the stage without
/// one, and a sweep without its `sweep.csv`; the crash points then killed through a `kill`
/// program, slowly enough that a fast run sometimes got that far.)
#[test]
fn a_run_killed_before_its_report_is_reported_when_resumed() {
    let (dir, file) = tmp_scenario(
        "one.yaml",
        "name: one
seed: 5
deals: 100
seating: rotate
rules: {preset: paper}
agents: [{kind: aggressive}, {kind: conservative}, {kind: balanced}, {kind: opportunistic}]
output: {chunk_rounds: 100}
",
    );
    let f = arg(&file);
    let out = dir.path().join("out");
    let o = arg(&out);
    // 400 rounds in parts of 100: the fourth part placed is the last.
    killed(&[f, "--out", o], "part-placed:4");
    assert_eq!(
        Dataset::open(&out).unwrap().units_done(),
        400,
        "every unit on disk"
    );
    assert!(!out.join("report.md").exists());
    let resumed = ok(&[f, "--out", o, "--resume"]);
    assert!(
        text(&resumed).contains("statistics and figures in"),
        "{}",
        text(&resumed)
    );
    for name in ["report.md", "stats.json", "summary.csv"] {
        assert!(out.join(name).is_file(), "{name} missing");
    }
    // Resumed again, the finished run is left as it is: its report is not written again.
    let before = std::fs::metadata(out.join("report.md"))
        .unwrap()
        .modified()
        .unwrap();
    let again = ok(&[f, "--out", o, "--resume"]);
    assert!(
        !text(&again).contains("statistics and figures in"),
        "{}",
        text(&again)
    );
    let after = std::fs::metadata(out.join("report.md"))
        .unwrap()
        .modified()
        .unwrap();
    assert_eq!(before, after);
}

/// Shards of a two-stage study, each a separate process: the later stage's shards refuse to
/// start until the earlier stage is complete, a shard run twice changes nothing, `merge`
/// refuses a study with a shard missing and names the units, and the merged study equals a
/// single run, records and summaries, with the report written.
#[test]
fn shards_merge_to_the_single_run() {
    let (dir, file) = tmp_scenario("staged.yaml", STAGED);
    let f = arg(&file);
    let single = dir.path().join("single");
    // With its report, as the merge writes one: summary.csv then gives the design's intervals.
    ok(&[f, "--out", arg(&single)]);

    let study = dir.path().join("study");
    let s = arg(&study);
    let shard = |i: u32, stage: &str| {
        run(&[
            f,
            "--out",
            s,
            "--shard",
            &format!("{i}/3"),
            "--stage",
            stage,
            "--threads",
            "1",
        ])
    };
    // The final seats the league's winner: it waits for the league. A shard says what it
    // played, what is missing and the commands that play it, the final's wave before the
    // merge (which needs every stage).
    let o = shard(0, "league");
    assert!(o.status.success(), "{}", text(&o));
    let t = text(&o);
    for says in [
        "stage `league`: played 384 rounds, this shard's share (units 0..384 of 1200)",
        "shards 1/3, 2/3 have not finished their share",
        &format!("{f} --out {s} --shard I/3 --stage league, for I = 1, 2"),
        &format!(
            "stage `final`: every shard (its wave): dhumbal-run {f} --out {s} --shard I/3 --stage final"
        ),
        &format!("then: dhumbal-run merge {s}"),
    ] {
        assert!(t.contains(says), "{says:?} not in {t}");
    }
    lacks(&t, "finishes the study");
    let o = shard(0, "final");
    assert_eq!(o.status.code(), Some(3), "{}", text(&o));
    let t = text(&o);
    for says in [
        "not yet: stage `final` seats the winner of stage `league`, whose records are not \
         complete: shards 1/3, 2/3 have not finished their share of it",
        "shard 0/3: 0 rounds",
        "stage `final`: not played: it waits for `league`",
        &format!("{f} --out {s} --shard I/3 --stage league, for I = 1, 2"),
    ] {
        assert!(t.contains(says), "{says:?} not in {t}");
    }
    // Without --stage, a shard plays its share of the league, then stops at the final (exit
    // 3), saying what it played.
    let o = run(&[f, "--out", s, "--shard", "1/3", "--threads", "1"]);
    assert_eq!(o.status.code(), Some(3), "{}", text(&o));
    let t = text(&o);
    for says in [
        "shard 1/3: 384 rounds",
        "stage `league`: played 384 rounds, this shard's share (units 384..768 of 1200); not \
         complete: shard 2/3 has not finished its share",
        &format!(
            "stage `league`: shard 2/3 to finish: dhumbal-run {f} --out {s} --shard 2/3 --stage league"
        ),
    ] {
        assert!(t.contains(says), "{says:?} not in {t}");
    }
    // A merge now names what is missing, the shard that owes it and the commands that finish
    // the study (not --resume, which a shards' folder refuses).
    let t = refused(&["merge", s]);
    let copy = study.join("source/staged.yaml");
    let copy = arg(&copy);
    for says in [
        "cannot merge yet: stage `league` is not complete: 432 of its 1200 units have no \
         records (units 768..1200",
        "Shard 2/3 has not finished its share of `league`",
        &format!("  dhumbal-run {copy} --out {s} --shard 2/3 --stage league\n"),
        "then the shards of stage `final` (after `league` is complete):",
        &format!(
            "  dhumbal-run {copy} --out {s} --shard I/3 --stage final, for each I from 0 to 2"
        ),
        &format!("Then merge again: dhumbal-run merge {s}"),
    ] {
        assert!(t.contains(says), "{says:?} not in {t}");
    }
    lacks(&t, "--resume the run");
    // A refused merge writes nothing, and the shared folder is no run to --resume.
    assert!(!study.join("progress.json").exists());
    let t = refused(&[f, "--out", s, "--resume"]);
    has(&t, "played as shards");
    for i in 1..3 {
        let o = shard(i, "league");
        assert!(o.status.success(), "{}", text(&o));
    }
    // The league is complete; the final's wave comes before the merge.
    let t = text(&shard(2, "league"));
    has(
        &t,
        "stage `league`: this shard's share (units 768..1200 of 1200) was on disk",
    );
    has(&t, "complete: every unit is on disk");
    has(
        &t,
        &format!(
            "stage `final`: every shard (its wave): dhumbal-run {f} --out {s} --shard I/3 --stage final, \
                 for each I from 0 to 2"
        ),
    );
    lacks(&t, "finishes the study");
    // Run again (a resubmitted task), a shard plays nothing and changes nothing.
    let parts = Dataset::open(&study.join("league")).unwrap().parts.len();
    let o = shard(1, "league");
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("shard 1/3: 0 rounds"), "{}", text(&o));
    assert_eq!(
        Dataset::open(&study.join("league")).unwrap().parts.len(),
        parts
    );
    for i in 0..3 {
        let o = shard(i, "final");
        assert!(o.status.success(), "{}", text(&o));
        if i == 2 {
            assert!(
                text(&o).contains(&format!(
                    "Every unit of every stage is on disk: `dhumbal-run merge {s}`"
                )),
                "{}",
                text(&o)
            );
        }
    }
    let o = ok(&["merge", s]);
    assert!(
        text(&o).contains("statistics and figures in"),
        "{}",
        text(&o)
    );
    for stage in ["league", "final"] {
        same(&single.join(stage), &study.join(stage));
        assert_eq!(
            std::fs::read(single.join(stage).join("summary.csv")).unwrap(),
            std::fs::read(study.join(stage).join("summary.csv")).unwrap(),
            "{stage}"
        );
        assert!(study.join(stage).join("report.md").is_file());
    }
    let manifest = json_file(&study.join("manifest.json"));
    assert_eq!(manifest["rounds"], 300 * 4 + 200 * 24);
}

/// Shards written to folders of their own merge into one with `--out`; a part found in two
/// folders, a folder of another scenario, and a shard spec out of range are refused.
#[test]
fn shards_in_separate_folders_merge_into_one() {
    let (dir, file) = tmp_scenario("small.yaml", &SMALL.replace("deals: 1200", "deals: 400"));
    let f = arg(&file);
    let single = dir.path().join("single");
    // Without a report, as the merge below: summary.csv then gives Wilson's intervals.
    ok(&[f, "--out", arg(&single), "--no-report"]);
    let shards: Vec<PathBuf> = (0..4)
        .map(|i| dir.path().join(format!("shard{i}")))
        .collect();
    for (i, out) in shards.iter().enumerate() {
        ok(&[f, "--out", arg(out), "--shard", &format!("{i}/4")]);
    }
    let merged = dir.path().join("merged");
    let mut args: Vec<&str> = vec!["merge"];
    args.extend(shards.iter().map(|p| arg(p)));
    let o = run(&args);
    assert_eq!(o.status.code(), Some(2), "needs --out: {}", text(&o));
    args.extend(["--out", arg(&merged), "--no-report", "--csv"]);
    ok(&args);
    assert_eq!(same(&single, &merged), 400 * 4 * 4);
    assert!(merged.join("rounds.csv").is_file());
    assert_eq!(
        std::fs::read(single.join("summary.csv")).unwrap(),
        std::fs::read(merged.join("summary.csv")).unwrap()
    );
    // Merging into one of the folders being merged would remove its parts first.
    let t = refused(&[
        "merge",
        arg(&shards[0]),
        arg(&shards[1]),
        "--out",
        arg(&shards[0]),
        "--force",
    ]);
    has(&t, "is one of the folders being merged");
    assert!(!Dataset::open(&shards[0]).unwrap().parts.is_empty());
    // The same shard twice: units would be there twice.
    let twice = dir.path().join("twice");
    let t = refused(&[
        "merge",
        arg(&shards[0]),
        arg(&shards[0]),
        arg(&shards[1]),
        "--out",
        arg(&twice),
    ]);
    has(&t, "each unit must come from one shard");
    // Another scenario's shard.
    let other = scenario(
        dir.path(),
        "other.yaml",
        &SMALL.replace("seed: 17", "seed: 18"),
    );
    let stranger = dir.path().join("stranger");
    ok(&[arg(&other), "--out", arg(&stranger), "--shard", "0/4"]);
    let t = refused(&[
        "merge",
        arg(&shards[0]),
        arg(&stranger),
        "--out",
        arg(&dir.path().join("mixed")),
    ]);
    has(&t, "another scenario");
    // A shard of another scenario cannot join this study's folder either.
    let t = refused(&[arg(&other), "--out", arg(&shards[1]), "--shard", "1/4"]);
    has(&t, "holds a run of another scenario");
    for bad in ["4/4", "x", "1/0"] {
        let o = run(&[f, "--out", arg(&dir.path().join("b")), "--shard", bad]);
        assert_eq!(o.status.code(), Some(2), "{bad}: {}", text(&o));
        assert!(text(&o).contains("expected I/N"), "{}", text(&o));
    }
}

/// `--shard` without a value takes the Slurm array task's place, from its index within the
/// array; outside an array job it says how to give one.
#[test]
fn shard_from_slurm_variables() {
    let (dir, file) = tmp_scenario("small.yaml", &SMALL.replace("deals: 1200", "deals: 200"));
    let out = dir.path().join("o");
    let o = bin()
        .args([arg(&file), "--out", arg(&out), "--shard"])
        .env_remove("SLURM_ARRAY_TASK_ID")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o).contains("SLURM_ARRAY_TASK_ID is not set"),
        "{}",
        text(&o)
    );
    let o = bin()
        .args([arg(&file), "--out", arg(&out), "--shard"])
        .env("SLURM_ARRAY_TASK_ID", "5")
        .env("SLURM_ARRAY_TASK_MIN", "4")
        .env("SLURM_ARRAY_TASK_MAX", "5")
        .env_remove("SLURM_ARRAY_TASK_COUNT")
        .env_remove("DHUMBAL_SHARDS")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("shard 1/2"), "{}", text(&o));
    // The shard's progress counts its own share.
    let p = json_file(&out.join("shards/1-of-2.json"));
    let stage = &p["stages"][0];
    assert_eq!(stage["complete"], true);
    assert_eq!(stage["units_done"], stage["units_total"]);
    // About half the stage's 800 rounds: shards split at part boundaries.
    let rounds = stage["totals"]["rounds"].as_u64().unwrap();
    assert!((300..=500).contains(&rounds), "{rounds}");
}
