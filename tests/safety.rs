//! A user's results are safe: a run never writes over another run's results unasked, a
//! results folder holds everything needed to play it again (and `rerun` checks that it does),
//! Ctrl-C stops a run with its records saved and says how to finish it, and the messages say
//! what to do next.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

mod common;
use common::{
    arg, has, has_all, json_file, lacks, ok, play_scenario, refused, run, slowed, text, tmp,
    tmp_scenario, wait_for_units,
};

const SMALL: &str = "name: small
seed: 5
rules: {preset: paper}
deals: 400
seating: rotate
agents:
  - kind: aggressive
  - kind: conservative
  - kind: balanced
  - kind: random
output: {chunk_rounds: 100, decision_timing: false}
";

/// A scenario in `dir/study/` whose script sits in `dir/agents/` (a path that leaves the
/// scenario's folder), in two stages.
fn staged_with_script(dir: &Path) -> PathBuf {
    std::fs::create_dir_all(dir.join("study")).unwrap();
    std::fs::create_dir_all(dir.join("agents")).unwrap();
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/heuristics/threshold.rhai"),
        dir.join("agents/threshold.rhai"),
    )
    .unwrap();
    let file = dir.join("study/two.yaml");
    std::fs::write(
        &file,
        "name: two
seed: 9
rules: {preset: paper}
stages:
  - name: first
    deals: 64
    seating: rotate
    agents:
      - kind: aggressive
      - kind: conservative
      - script: ../agents/threshold.rhai
        params: {call_at: 7}
      - kind: random
  - name: second
    deals: 32
    rules: {preset: paper, players: 2}
    agents:
      - winner_of: first
      - kind: balanced
",
    )
    .unwrap();
    file
}

#[test]
fn a_second_run_into_the_same_folder_is_refused_unless_forced() {
    let (dir, file) = tmp_scenario("small.yaml", SMALL);
    let out = dir.path().join("out");
    ok(&[arg(&file), "--out", arg(&out), "--no-report", "--csv"]);
    let before = std::fs::read(out.join("rounds.csv")).unwrap();
    std::fs::write(out.join("notes.txt"), "mine").unwrap();

    // A smaller run into the same folder: refused, nothing touched.
    let t = refused(&[arg(&file), "--out", arg(&out), "--rounds", "10"]);
    has_all(
        &t,
        &[
            "holds a finished run of `small` (1600 rounds)",
            "--force",
            "--resume",
            "--out",
        ],
    );
    lacks(&t, "panicked");
    assert_eq!(std::fs::read(out.join("rounds.csv")).unwrap(), before);

    // An interrupted run's folder is protected too.
    let partial = dir.path().join("partial");
    std::fs::create_dir(&partial).unwrap();
    std::fs::write(
        partial.join("progress.json"),
        r#"{"scenario_hash":"x","stages":[]}"#,
    )
    .unwrap();
    let t = refused(&[arg(&file), "--out", arg(&partial)]);
    has(&t, "an unfinished run");

    // --force replaces the run's files and keeps the user's own.
    ok(&[
        arg(&file),
        "--out",
        arg(&out),
        "--rounds",
        "10",
        "--force",
        "--no-report",
        "--csv",
    ]);
    assert_eq!(
        std::fs::read_to_string(out.join("notes.txt")).unwrap(),
        "mine"
    );
    let rows = std::fs::read_to_string(out.join("rounds.csv"))
        .unwrap()
        .lines()
        .count();
    assert_eq!(rows, 1 + 10 * 4 * 4);
    // Only the new run's parts are left.
    let parts = dhumbal::runner::dataset::Dataset::open(&out).unwrap();
    assert_eq!(parts.rows(), 10 * 4 * 4);
}

#[test]
fn resume_without_the_runs_folder_says_so_and_creates_nothing() {
    let (dir, file) = tmp_scenario("small.yaml", SMALL);
    let nowhere = dir.path().join("nowhere");
    let t = refused(&[arg(&file), "--out", arg(&nowhere), "--resume"]);
    has_all(&t, &["does not exist", "--out of the interrupted run"]);
    assert!(!nowhere.exists(), "an empty folder was left behind");
}

#[test]
fn a_results_folder_reruns_to_identical_records_from_itself_alone() {
    let work = tmp();
    let file = staged_with_script(work.path());
    let out = work.path().join("results");
    ok(&[
        arg(&file),
        "--out",
        arg(&out),
        "--seed",
        "33",
        "--no-report",
    ]);

    // The folder holds the scenario as written, the script, and what the run was told.
    let source = out.join("source");
    assert_eq!(
        std::fs::read(source.join("study/two.yaml")).unwrap(),
        std::fs::read(&file).unwrap()
    );
    assert_eq!(
        std::fs::read(source.join("agents/threshold.rhai")).unwrap(),
        std::fs::read(work.path().join("agents/threshold.rhai")).unwrap()
    );
    let saved = json_file(&source.join("run.json"));
    assert_eq!(saved["command_line"]["seed"], 33);
    assert_eq!(saved["scenario"], "study/two.yaml");
    assert_eq!(saved["version"], env!("CARGO_PKG_VERSION"));
    assert_eq!(saved["resolved"]["seed"], 33);

    // Move the folder away from everything else and delete the originals.
    let moved = tmp();
    let kept = moved.path().join("kept");
    std::fs::rename(&out, &kept).unwrap();
    std::fs::remove_dir_all(work.path().join("study")).unwrap();
    std::fs::remove_dir_all(work.path().join("agents")).unwrap();

    let again = moved.path().join("again");
    let o = ok(&["rerun", arg(&kept), "--out", arg(&again), "--no-report"]);
    let t = text(&o);
    has_all(
        &t,
        &[
            "stage `first`: 1024 rows identical",
            "stage `second`",
            "rerun reproduces",
        ],
    );

    // The copy is a scenario like any other: it finds its script where the original did.
    let direct = moved.path().join("direct");
    ok(&[
        arg(&kept.join("source/study/two.yaml")),
        "--out",
        arg(&direct),
        "--seed",
        "33",
        "--no-report",
    ]);
    assert!(
        dhumbal::runner::folder::same_records(&direct.join("first"), &kept.join("first"))
            .unwrap()
            .is_ok()
    );

    // A changed result is found: the kept script, edited to take higher cards from the pile,
    // plays the same number of rounds differently.
    let script = kept.join("source/agents/threshold.rhai");
    let original = std::fs::read_to_string(&script).unwrap();
    assert!(original.contains("default_value: 3,"));
    std::fs::write(
        &script,
        original.replace("default_value: 3,", "default_value: 9,"),
    )
    .unwrap();
    let changed = moved.path().join("changed");
    let o = run(&["rerun", arg(&kept), "--out", arg(&changed), "--no-report"]);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(1), "{t}");
    has_all(&t, &["stage `first`: records DIFFER", "column `"]);
    std::fs::write(&script, original).unwrap();

    // A tampered record is found: a part gone.
    let second = dhumbal::runner::dataset::Dataset::open(&kept.join("second")).unwrap();
    std::fs::remove_file(&second.parts.last().unwrap().path).unwrap();
    let o = run(&[
        "rerun",
        arg(&kept),
        "--out",
        arg(&again),
        "--force",
        "--no-report",
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(text(&o).contains("records DIFFER"), "{}", text(&o));
}

#[test]
fn resume_names_a_script_that_changed() {
    let work = tmp();
    let file = staged_with_script(work.path());
    let out = work.path().join("results");
    ok(&[arg(&file), "--out", arg(&out), "--no-report"]);
    // Pretend the run was interrupted, then change the script.
    std::fs::remove_file(out.join("manifest.json")).unwrap();
    let script = work.path().join("agents/threshold.rhai");
    let body = std::fs::read_to_string(&script).unwrap();
    std::fs::write(&script, format!("{body}\n// changed\n")).unwrap();
    let t = refused(&[arg(&file), "--out", arg(&out), "--resume"]);
    has(
        &t,
        "the script \"../agents/threshold.rhai\" changed since the run began",
    );
}

/// `--resume` with other settings than the run was started with says so in the command line's
/// words (`--rounds`, `--seed`), not the resolved scenario's (`stages[0].matches`), with what to
/// do; a changed scenario file is named in the file's words.
#[test]
fn resume_with_other_settings_names_them_as_given() {
    let (work, file) = tmp_scenario("small.yaml", SMALL);
    let out = work.path().join("results");
    ok(&[
        arg(&file),
        "--out",
        arg(&out),
        "--rounds",
        "40",
        "--no-report",
    ]);
    // Pretend the run was interrupted.
    std::fs::remove_file(out.join("manifest.json")).unwrap();
    let t = refused(&[arg(&file), "--out", arg(&out), "--rounds", "60", "--resume"]);
    for says in [
        "was started with other settings; nothing was changed",
        "--rounds: this folder was started with --rounds 40, this command gives --rounds 60 \
         (--rounds replaces every stage's sample size: its deals, or games under point scoring)",
        "resume it as it was started (--rounds 40)",
        "the same command with --force in place of --resume",
    ] {
        assert!(t.contains(says), "{says:?} not in {t}");
    }
    lacks(&t, "matches");
    lacks(&t, "stages[");
    // No --rounds where the run had one, and a --seed it had not.
    let t = refused(&[arg(&file), "--out", arg(&out), "--seed", "9", "--resume"]);
    for says in [
        "--rounds: this folder was started with --rounds 40, this command gives no --rounds",
        "--seed: this folder was started without --seed, this command gives --seed 9",
        "resume it as it was started (--rounds 40, no --seed)",
    ] {
        assert!(t.contains(says), "{says:?} not in {t}");
    }
    // The file changed: named in its own words.
    let other = work.path().join("other.yaml");
    std::fs::write(&other, SMALL.replace("seating: rotate", "seating: permute")).unwrap();
    let t = refused(&[
        arg(&other),
        "--out",
        arg(&out),
        "--rounds",
        "40",
        "--resume",
    ]);
    has(&t, "was started from a different scenario");
    has(
        &t,
        "stage `small`: seating \"rotate\" there, \"permute\" here",
    );
    // As it was started, it resumes.
    ok(&[
        arg(&file),
        "--out",
        arg(&out),
        "--rounds",
        "40",
        "--resume",
        "--no-report",
    ]);
}

#[cfg(unix)]
#[test]
fn ctrl_c_saves_the_finished_records_and_says_how_to_resume() {
    let (dir, file) = tmp_scenario("small.yaml", &SMALL.replace("deals: 400", "deals: 2000"));
    let whole = dir.path().join("whole");
    ok(&[arg(&file), "--out", arg(&whole), "--no-report"]);

    let cut = dir.path().join("cut");
    let child = slowed(
        &[arg(&file), "--out", arg(&cut), "--no-report"],
        100,
        Stdio::piped,
    );
    wait_for_units(&cut, 100);
    let kill = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(kill.success());
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(130), "{}", text(&o));
    let t = text(&o);
    has(&t, "interrupted: stage `small` has ");
    has(&t, &format!("--out {} --resume", arg(&cut)));
    lacks(&t, "panicked");
    let partial = dhumbal::runner::dataset::Dataset::open(&cut).unwrap();
    let full = dhumbal::runner::dataset::Dataset::open(&whole).unwrap();
    assert!(
        partial.rows() < full.rows(),
        "the run finished before Ctrl-C"
    );

    // The resumed run gives the uninterrupted run's records, and its rate counts only the
    // rounds it played.
    let o = ok(&[arg(&file), "--out", arg(&cut), "--resume", "--no-report"]);
    assert!(
        text(&o).contains("rounds played before the interruption"),
        "{}",
        text(&o)
    );
    assert_eq!(
        dhumbal::runner::folder::same_records(&whole, &cut)
            .unwrap()
            .unwrap() as u64,
        full.rows()
    );
}

#[test]
fn report_never_replaces_a_report_unasked() {
    let (dir, out, _) = play_scenario("small.yaml", SMALL, &[]);
    let ours = std::fs::read(out.join("report.md")).unwrap();

    let t = refused(&[
        "report",
        arg(&out),
        "--definitions",
        "paper",
        "--no-figures",
    ]);
    has(&t, "report.md exists");
    assert_eq!(std::fs::read(out.join("report.md")).unwrap(), ours);

    let paper = dir.path().join("paper");
    ok(&[
        "report",
        arg(&out),
        "--definitions",
        "paper",
        "--no-figures",
        "--out",
        arg(&paper),
    ]);
    assert!(paper.join("report.md").is_file() && paper.join("stats.json").is_file());
    assert_eq!(std::fs::read(out.join("report.md")).unwrap(), ours);

    ok(&["report", arg(&out), "--no-figures", "--force"]);
}

#[test]
fn an_unknown_command_is_not_read_as_a_file() {
    let t = refused(&["raport"]);
    has_all(
        &t,
        &[
            "`raport` is neither a command nor a scenario file",
            "Did you mean `dhumbal-run report`?",
        ],
    );
    lacks(&t, "cannot read the file");
}

#[test]
fn an_agent_failure_is_not_called_a_crash() {
    let dir = tmp();
    // Fails only late in a round, so that a short rehearsal need not meet it.
    std::fs::write(
        dir.path().join("late.rhai"),
        "fn call_jhyap(obs) { false }\nfn discard(obs) { [obs.hand[0]] }\n\
         fn pick(obs) {\n    if obs.round > 20 { let x = obs.no_such_field + 1; }\n    ()\n}\n",
    )
    .unwrap();
    let file = dir.path().join("late.yaml");
    std::fs::write(
        &file,
        "name: late\nseed: 1\nrules: {preset: paper}\ndeals: 200\nsession: 50\n\
         agents:\n  - script: late.rhai\n  - kind: random\n  - kind: random\n  - kind: random\n",
    )
    .unwrap();
    let o = run(&[
        arg(&file),
        "--out",
        arg(&dir.path().join("o")),
        "--threads",
        "1",
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let t = text(&o);
    has_all(&t, &["script late.rhai, in pick()", "Fix the agent"]);
    lacks(&t, "continue after a crash");
}

/// The live counts a progress display reads move with play, before records are written,
/// and a stop request ends play between rounds.
#[test]
fn the_pulse_counts_rounds_as_they_are_played_and_stops_play() {
    use dhumbal::runner::scenario::{self, Overrides, SeatEntry};
    use dhumbal::runner::tournament::{Halt, Lineup, Pulse};
    use std::sync::atomic::Ordering;
    let sc = scenario::parse(
        Path::new("pulse.yaml"),
        &SMALL.replace("deals: 400", "deals: 111\nsession: 37"),
        &Overrides::default(),
    )
    .unwrap();
    let stage = &sc.stages[0];
    let agents = stage
        .seats
        .iter()
        .map(|s| match s {
            SeatEntry::Agent(d) => d.clone(),
            SeatEntry::WinnerOf(_) => unreachable!(),
        })
        .collect();
    let lineup = Lineup::untimed(stage, agents);
    let pulse = Pulse::default();
    let units = lineup.units();
    let (records, halt) = lineup.play_chunk(0..units, &pulse);
    assert!(halt.is_none());
    let rounds: u64 = records.iter().map(|r| r.rounds()).sum();
    assert_eq!(
        rounds,
        3 * 37 * 4,
        "sessions of 37 rounds under 4 rotations"
    );
    assert_eq!(pulse.rounds.load(Ordering::Relaxed), rounds);
    assert_eq!(pulse.units.load(Ordering::Relaxed), units);

    pulse.stop.store(true, Ordering::Relaxed);
    let (records, halt) = lineup.play_chunk(0..units, &pulse);
    assert!(records.is_empty());
    assert!(matches!(halt, Some(Halt::Stopped)));
}

/// `same_records`, which decides the rerun, resume and merge checks, catches a single changed
/// value of any column (not only a changed row count), and ignores `decision_ns` alone.
#[test]
fn same_records_catches_a_single_changed_value() {
    use dhumbal::runner::folder::same_records;
    let (dir, file) = tmp_scenario("small.yaml", SMALL);
    let a = dir.path().join("a");
    ok(&[
        arg(&file),
        "--out",
        arg(&a),
        "--csv",
        "--no-report",
        "--rounds",
        "40",
    ]);
    let csv = std::fs::read_to_string(a.join("rounds.csv")).unwrap();
    let lines: Vec<&str> = csv.lines().collect();
    let rows = lines.len() - 1;
    let column = |name: &str| lines[0].split(',').position(|c| c == name).unwrap();
    // A folder holding only a rounds.csv (read as one part) with field `col` of data row
    // `row` replaced.
    let variant = |name: &str, row: usize, col: usize, value: &dyn Fn(&str) -> String| {
        let mut changed: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
        let mut fields: Vec<String> = changed[row + 1].split(',').map(String::from).collect();
        fields[col] = value(&fields[col]);
        changed[row + 1] = fields.join(",");
        let d = dir.path().join(name);
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(d.join("rounds.csv"), changed.join("\n") + "\n").unwrap();
        d
    };
    let plus_one = |v: &str| (v.parse::<i64>().unwrap() + 1).to_string();
    let same = variant("same", 5, column("coin_delta"), &|v| v.to_string());
    assert_eq!(same_records(&a, &same).unwrap(), Ok(rows));
    let timing = variant("timing", 5, column("decision_ns"), &|_| "123".into());
    assert_eq!(same_records(&a, &timing).unwrap(), Ok(rows));
    let coins = variant("coins", 537, column("coin_delta"), &plus_one);
    assert_eq!(
        same_records(&a, &coins).unwrap(),
        Err("column `coin_delta` differs first at row 537".into())
    );
    let won = variant("won", 222, column("won"), &|v| {
        if v == "true" { "false" } else { "true" }.into()
    });
    assert_eq!(
        same_records(&a, &won).unwrap(),
        Err("column `won` differs first at row 222".into())
    );
    let agent = variant("agent", 9, column("agent"), &|v| {
        if v == "random" { "balanced" } else { "random" }.into()
    });
    assert_eq!(
        same_records(&a, &agent).unwrap(),
        Err("column `agent` differs first at row 9".into())
    );
}
