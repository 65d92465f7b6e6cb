//! Decision traces as a run writes them (docs/traces.md): which deals are traced, under every
//! seating arrangement; a trace exists exactly when its unit's records do, through kills and
//! resumes, shards and merges; records never depend on tracing.

use std::collections::BTreeMap;
use std::path::Path;

mod common;
use common::{
    arg, has, has_all, killed, ok, play_into, refused, run, scenario, shards_merged, tmp_scenario,
};

const STAGED: &str = "\
name: traced
seed: 11
rules: {preset: paper}
stages:
  - name: league
    deals: 120
    seating: rotate
    agents:
      - kind: aggressive
      - kind: conservative
      - kind: balanced
      - kind: random
  - name: final
    deals: 40
    seating: permute
    agents:
      - winner_of: league
      - kind: random
      - kind: conservative
      - kind: balanced
output: {chunk_rounds: 48, decision_timing: false, trace: {deals: [3], every: 50}}
";

/// Both stages of the run in `a` have the traces of the run in `b`.
#[track_caller]
fn same_traces(a: &Path, b: &Path) {
    for stage in ["league", "final"] {
        assert_eq!(traces(&a.join(stage)), traces(&b.join(stage)), "{stage}");
    }
}

/// Every trace of a stage: file name to its lines, each without the decision time (`ns`, a
/// measurement).
fn traces(stage: &Path) -> BTreeMap<String, Vec<serde_json::Value>> {
    let mut all = BTreeMap::new();
    let Ok(entries) = std::fs::read_dir(stage.join("traces")) else {
        return all;
    };
    for entry in entries {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "jsonl") {
            continue;
        }
        let lines = std::fs::read_to_string(&path)
            .unwrap()
            .lines()
            .map(|l| {
                let mut v: serde_json::Value = serde_json::from_str(l)
                    .unwrap_or_else(|e| panic!("{}: {e}: {l}", path.display()));
                if let Some(o) = v.as_object_mut() {
                    o.remove("ns");
                }
                v
            })
            .collect();
        all.insert(
            path.file_name().unwrap().to_string_lossy().into_owned(),
            lines,
        );
    }
    all
}

#[test]
fn chosen_deals_are_traced_under_every_arrangement_and_change_no_record() {
    let (dir, file) = tmp_scenario("traced.yaml", STAGED);
    let f = arg(&file);
    let traced = dir.path().join("traced");
    ok(&[
        f,
        "--out",
        arg(&traced),
        "--no-report",
        "--csv",
        "--trace",
        "7,3",
    ]);
    // Deals 0, 3, 7, 50, 100 of the league (4 rotations), 0, 3, 7 of the final (24 orders).
    let league = traces(&traced.join("league"));
    let want: Vec<String> = [0u64, 3, 7, 50, 100]
        .iter()
        .flat_map(|d| (0..4).map(move |a| format!("deal-{d:06}-arrangement-{a:03}.jsonl")))
        .collect();
    assert_eq!(league.keys().cloned().collect::<Vec<_>>(), want);
    assert_eq!(traces(&traced.join("final")).len(), 3 * 24);
    // Each trace: a game line, then rounds, then the game's end.
    for (name, lines) in &league {
        assert_eq!(lines[0]["event"], "game", "{name}");
        assert_eq!(lines.last().unwrap()["event"], "game_end", "{name}");
        let rounds = lines.iter().filter(|l| l["event"] == "round_end").count();
        assert_eq!(rounds, 1, "{name}: a paper session is one round");
        assert!(lines.iter().any(|l| l["event"] == "decision"), "{name}");
    }
    // The same records without tracing, on another thread count.
    let plain_file = scenario(
        dir.path(),
        "plain.yaml",
        &STAGED.replace(", trace: {deals: [3], every: 50}", ""),
    );
    let plain = dir.path().join("plain");
    ok(&[
        arg(&plain_file),
        "--out",
        arg(&plain),
        "--no-report",
        "--csv",
        "--threads",
        "1",
    ]);
    for stage in ["league", "final"] {
        assert!(
            std::fs::read(traced.join(stage).join("rounds.csv")).unwrap()
                == std::fs::read(plain.join(stage).join("rounds.csv")).unwrap(),
            "{stage}: tracing changed the records"
        );
        assert!(traces(&plain.join(stage)).is_empty());
    }
    // The command line is kept for a rerun, which traces the same deals.
    let again = dir.path().join("again");
    ok(&["rerun", arg(&traced), "--out", arg(&again), "--no-report"]);
    same_traces(&again, &traced);
}

#[test]
fn a_trace_of_a_deal_no_stage_plays_is_refused() {
    let (dir, file) = tmp_scenario("traced.yaml", STAGED);
    let out = dir.path().join("out");
    let t = refused(&[arg(&file), "--out", arg(&out), "--trace", "120"]);
    assert!(!out.exists(), "nothing may be written");
    has_all(
        &t,
        &["output.trace.deals", "deal 120 is beyond every stage"],
    );
    let t = refused(&[
        "validate",
        scenario(
            dir.path(),
            "zero.yaml",
            &STAGED.replace("every: 50", "every: 0"),
        )
        .to_str()
        .unwrap(),
    ]);
    has_all(&t, &["output.trace.every", "at least 1"]);
}

/// Killed at each point where a part and its traces are written, and resumed: every unit
/// whose records are in place has its trace, and the finished run has the traces of an
/// uninterrupted one.
#[test]
fn traces_exist_exactly_with_their_records_through_kills_and_resumes() {
    let body = STAGED.replace("every: 50", "every: 2");
    let (dir, file) = tmp_scenario("traced.yaml", &body);
    let f = arg(&file);
    let whole = dir.path().join("whole");
    ok(&[f, "--out", arg(&whole), "--no-report"]);
    let cut = dir.path().join("cut");
    let c = arg(&cut);
    for (point, n) in [("part-written", 2), ("part-placed", 3), ("part-written", 4)] {
        let mut args = vec![f, "--out", c, "--no-report"];
        if cut.join("progress.json").is_file() {
            args.push("--resume");
        }
        killed(&args, &format!("{point}:{n}"));
        // Every unit in a placed part that is traced has its trace.
        let stage = cut.join("league");
        let dataset = dhumbal::runner::dataset::Dataset::open(&stage).unwrap();
        let have = traces(&stage);
        for part in &dataset.parts {
            for unit in part.meta.start..part.meta.end {
                let (m, a) = (unit / 4, unit % 4);
                if m % 2 == 0 || m == 3 {
                    let name = format!("deal-{m:06}-arrangement-{a:03}.jsonl");
                    assert!(have.contains_key(&name), "{point}:{n}: no {name}");
                }
            }
        }
    }
    ok(&[f, "--out", c, "--no-report", "--resume"]);
    same_traces(&cut, &whole);
}

/// Shards in their own folders, merged into a third: the traces come along.
#[test]
fn merged_shards_keep_their_traces() {
    let (dir, file) = tmp_scenario(
        "single.yaml",
        "name: single\nseed: 3\ndeals: 90\nseating: rotate\nrules: {preset: paper}\n\
         agents: [{kind: aggressive}, {kind: conservative}, {kind: balanced}, {kind: random}]\n\
         output: {chunk_rounds: 40, decision_timing: false, trace: {every: 10}}\n",
    );
    let whole = dir.path().join("whole");
    play_into(&file, &whole, &["--no-report"]);
    let (_, merged) = shards_merged(&file, dir.path());
    let got = traces(&merged);
    assert_eq!(got.len(), 9 * 4);
    assert_eq!(got, traces(&whole));
}

/// Traces of another format (a folder started by an older build) are neither mixed with this
/// build's by `--resume` nor shown: each refuses with exit 2, naming the file and the format.
#[test]
fn traces_of_another_format_are_refused_by_resume_show_and_the_page() {
    let (dir, file) = tmp_scenario(
        "traced.yaml",
        &STAGED
            .replace("deals: 120", "deals: 8")
            .replace("deals: 40", "deals: 4"),
    );
    let out = dir.path().join("out");
    let (file, out_s) = (arg(&file), arg(&out));
    ok(&[file, "--out", out_s, "--no-report", "--trace", "1"]);
    let old = out.join("league/traces/deal-000001-arrangement-000.jsonl");
    let text = std::fs::read_to_string(&old).unwrap();
    let (first, rest) = text.split_once('\n').unwrap();
    let mut game: serde_json::Value = serde_json::from_str(first).unwrap();
    assert_eq!(game["format"], 2);
    game["format"] = 1.into();
    std::fs::write(&old, format!("{game}\n{rest}")).unwrap();
    let t = refused(&[
        file,
        "--out",
        out_s,
        "--no-report",
        "--trace",
        "1",
        "--resume",
    ]);
    has_all(
        &t,
        &["holds traces of format 1", "deal-000001-arrangement-000"],
    );
    let t = refused(&["show", out_s, "--stage", "league", "--deal", "1"]);
    has(&t, "trace format 1, written by an older");
    let html = dir.path().join("page.html");
    let o = run(&[
        "show",
        out_s,
        "--stage",
        "league",
        "--deal",
        "1",
        "--html",
        arg(&html),
    ]);
    assert_ne!(o.status.code(), Some(0), "{}", common::text(&o));
    assert!(!html.exists());
}
