//! `sweep:` in a stage, through the binary: expansion into one stage per point and its names
//! and folders, grid and zip, validation at the swept value's line, every point on the same
//! deals, `sweep.csv` against each point's stats.json and the paired differences against the
//! Python reference (tests/fixtures/sweep_pairs.json), resume, and shards merged.

mod common;
use common::{
    arg, has, has_all, killed, lacks, ok, play_into, play_scenario, refused, tmp, tmp_scenario,
};

use std::path::Path;

const AGENTS4: &str = "agents:
  - kind: aggressive
  - kind: conservative
  - kind: balanced
  - kind: opportunistic
";

/// A grid of two paths (2 x 2 points) and a zip of the same values (2 points).
fn grid_and_zip() -> String {
    format!(
        "name: sw
seed: 3
games: 12
seating: rotate
rules:
  preset: jhyap
{AGENTS4}stages:
  - name: grid
    sweep:
      rules.threshold: [5, 10]
      agents.balanced.params.call_probability: {{from: 0.5, to: 0.9, step: 0.4}}
  - name: zipped
    sweep:
      mode: zip
      rules.threshold: [5, 10]
      agents.balanced.params.call_probability: [0.5, 0.9]
"
    )
}

fn json(path: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap())
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The fields of one CSV line (RFC 4180 quoting; no line breaks inside fields).
fn fields(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut field = String::new();
    let mut quoted = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '"' if quoted && chars.peek() == Some(&'"') => {
                field.push('"');
                chars.next();
            }
            '"' => quoted = !quoted,
            ',' if !quoted => out.push(std::mem::take(&mut field)),
            c => field.push(c),
        }
    }
    out.push(field);
    out
}

/// The header and rows of a CSV file.
fn read_csv(path: &Path) -> (Vec<String>, Vec<Vec<String>>) {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut lines = text.lines();
    let header = fields(lines.next().unwrap());
    (header, lines.map(fields).collect())
}

/// The rows of a CSV file, as maps from the header.
fn csv_rows(path: &Path) -> Vec<std::collections::BTreeMap<String, String>> {
    let (header, rows) = read_csv(path);
    rows.into_iter()
        .map(|r| {
            assert_eq!(r.len(), header.len(), "{}: {r:?}", path.display());
            header.iter().cloned().zip(r).collect()
        })
        .collect()
}

/// A stage's `rounds.csv` without the columns that name the stage or measure time.
fn records_without_stage(path: &Path) -> Vec<Vec<String>> {
    let (header, rows) = read_csv(path);
    let keep: Vec<usize> = (0..header.len())
        .filter(|&i| header[i] != "stage" && header[i] != "decision_ns")
        .collect();
    rows.iter()
        .map(|r| keep.iter().map(|&i| r[i].clone()).collect())
        .collect()
}

#[test]
fn a_sweep_expands_into_one_stage_per_point_with_a_folder_each() {
    let (dir, file) = tmp_scenario("sw.yaml", &grid_and_zip());
    let out = dir.path().join("out");
    ok(&["validate", arg(&file)]);
    ok(&[arg(&file), "--out", arg(&out), "--threads", "2", "--csv"]);
    // Grid: the first path varies slowest; names are `<stage>/<name>=<value>,...` in file order.
    let want = [
        "grid/threshold=5,call_probability=0.5",
        "grid/threshold=5,call_probability=0.9",
        "grid/threshold=10,call_probability=0.5",
        "grid/threshold=10,call_probability=0.9",
        "zipped/threshold=5,call_probability=0.5",
        "zipped/threshold=10,call_probability=0.9",
    ];
    let manifest = json(&out.join("manifest.json"));
    let names: Vec<&str> = manifest["stages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, want);
    for (i, name) in want.iter().enumerate() {
        let stage = out.join(name);
        for f in [
            "rounds",
            "rounds.csv",
            "stats.json",
            "report.md",
            "summary.csv",
        ] {
            assert!(stage.join(f).exists(), "{name}: no {f}");
        }
        // Each point is resolved as if its values were written in the stage.
        let spec = &manifest["scenario"]["stages"][i];
        let threshold = if name.contains("threshold=5") { 5 } else { 10 };
        assert_eq!(spec["rules"]["threshold"], threshold, "{name}");
        let p = if name.ends_with("0.5") { 0.5 } else { 0.9 };
        assert_eq!(spec["agents"][2]["params"]["call_probability"], p, "{name}");
        assert_eq!(spec["sweep"]["point"], name.split_once('/').unwrap().1);
        // Every point keeps the stage's seed: the same deals.
        assert_eq!(spec["seed"], 3);
    }
    // One sweep.csv per sweep, a row per point and agent; the overview has a section each.
    assert_eq!(csv_rows(&out.join("grid/sweep.csv")).len(), 4 * 4);
    assert_eq!(csv_rows(&out.join("zipped/sweep.csv")).len(), 2 * 4);
    let overview = std::fs::read_to_string(out.join("report.md")).unwrap();
    has_all(&overview, &["## Sweep `grid`", "## Sweep `zipped`"]);
    // Two parameters: a figure per agent, along the first parameter, and the grid of both
    // (one panel per agent) for a grid, not for a zip.
    for slot in 1..=4 {
        assert!(out.join(format!("grid/figures/sweep-{slot}.svg")).is_file());
    }
    let grid = std::fs::read_to_string(out.join("grid/figures/sweep-grid.svg")).unwrap();
    for needle in [
        "Rule: threshold",
        "call_probability",
        "of balanced",
        "Games won (%)",
    ] {
        assert!(
            grid.contains(needle),
            "{needle} missing from the grid figure"
        );
    }
    has(&overview, "grid/figures/sweep-grid.svg");
    assert!(!out.join("zipped/figures/sweep-grid.svg").exists());

    // Common random numbers: the grid's and the zip's point (5, 0.5) are the same stage under
    // two names, and play the same games to the last record.
    let a = records_without_stage(&out.join(want[0]).join("rounds.csv"));
    let b = records_without_stage(&out.join(want[4]).join("rounds.csv"));
    assert!(!a.is_empty());
    assert_eq!(a, b);
    // At threshold 5 Balanced always calls when it may (its sure_threshold is 5), so its call
    // probability changes nothing: the same deals give the same games, and the paired
    // difference is exactly 0 with an interval of width 0.
    let a = records_without_stage(&out.join(want[0]).join("rounds.csv"));
    let b = records_without_stage(&out.join(want[1]).join("rounds.csv"));
    assert_eq!(a, b);
    let rows = csv_rows(&out.join("grid/sweep.csv"));
    for r in rows
        .iter()
        .filter(|r| r["point"] == "threshold=5,call_probability=0.9")
    {
        assert_eq!(r["games_won_vs_first_difference"], "0", "{r:?}");
        assert_eq!(r["games_won_vs_first_ci_low"], "0", "{r:?}");
        assert_eq!(r["games_won_vs_first_ci_high"], "0", "{r:?}");
        assert_eq!(r["games_won_vs_first_units"], "12", "{r:?}");
    }
    // In a grid, "previous" is the previous value of the first path, the others the same:
    // (10, 0.5) against (5, 0.5), which is the first point; (5, 0.9) has none.
    for r in &rows {
        let prev = &r["games_won_vs_previous_difference"];
        match r["point"].as_str() {
            "threshold=10,call_probability=0.5" => {
                assert_eq!(prev, &r["games_won_vs_first_difference"], "{r:?}");
                assert_eq!(
                    r["win_vs_previous_ci_low"], r["win_vs_first_ci_low"],
                    "{r:?}"
                );
            }
            "threshold=5,call_probability=0.5" | "threshold=5,call_probability=0.9" => {
                assert_eq!(prev, "", "{r:?}")
            }
            _ => assert!(!prev.is_empty(), "{r:?}"),
        }
    }
    // At threshold 10 the deals are the same but play differs.
    let c = records_without_stage(&out.join(want[2]).join("rounds.csv"));
    assert_ne!(a, c);

    // `--stage` (of a shard) names a sweep: all its points.
    let only = dir.path().join("only");
    ok(&[
        arg(&file),
        "--out",
        arg(&only),
        "--shard",
        "0/1",
        "--stage",
        "zipped",
    ]);
    assert!(only.join(want[4]).join("rounds").is_dir());
    assert!(only.join(want[5]).join("rounds").is_dir());
    assert!(!only.join(want[0]).exists());
}

#[test]
fn sweep_csv_holds_each_points_statistics_as_stats_json_gives_them() {
    let (_dir, out, _) = play_scenario("sw.yaml", &grid_and_zip(), &[]);
    let rows = csv_rows(&out.join("grid/sweep.csv"));
    for r in &rows {
        let stats = json(&out.join("grid").join(&r["point"]).join("stats.json"));
        let agent = stats["agents"]
            .as_array()
            .unwrap()
            .iter()
            .find(|a| a["agent"] == r["agent"].as_str())
            .unwrap();
        for (column, key, value) in [
            ("games_won", "games", "rate"),
            ("win", "win", "rate"),
            ("economic", "economic", "mean"),
        ] {
            let got: f64 = r[column].parse().unwrap();
            assert_eq!(got, agent[key][value].as_f64().unwrap(), "{column} {r:?}");
            let lo: f64 = r[&format!("{column}_ci_low")].parse().unwrap();
            let hi: f64 = r[&format!("{column}_ci_high")].parse().unwrap();
            assert_eq!(
                lo,
                agent[key]["ci95"][0].as_f64().unwrap(),
                "{column} {r:?}"
            );
            assert_eq!(
                hi,
                agent[key]["ci95"][1].as_f64().unwrap(),
                "{column} {r:?}"
            );
        }
        // The point's values, by parameter.
        let threshold: u32 = r["threshold"].parse().unwrap();
        assert!(r["point"].starts_with(&format!("threshold={threshold},")));
    }
}

#[test]
fn paired_differences_agree_with_the_python_reference() {
    let dir = tmp();
    let out = dir.path().join("out");
    ok(&[
        "tests/fixtures/sweep-pairs.yaml",
        "--out",
        arg(&out),
        "--threads",
        "2",
    ]);
    let fixture =
        json(&Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/sweep_pairs.json"));
    let cases = fixture["cases"].as_array().unwrap();
    assert!(cases.len() >= 40, "{}", cases.len());
    let mut nonzero = 0;
    for c in cases {
        let sweep = c["sweep"].as_str().unwrap();
        let rows = csv_rows(&out.join(sweep).join("sweep.csv"));
        let row = rows
            .iter()
            .find(|r| {
                r["point"] == c["point"].as_str().unwrap()
                    && r["agent"] == c["agent"].as_str().unwrap()
            })
            .unwrap_or_else(|| panic!("no row for {c}"));
        let prefix = format!(
            "{}_{}",
            c["measure"].as_str().unwrap(),
            c["against"].as_str().unwrap()
        );
        for key in ["difference", "ci_low", "ci_high"] {
            let got: f64 = row[&format!("{prefix}_{key}")].parse().unwrap();
            let want = c[key].as_f64().unwrap();
            assert!(
                (got - want).abs() <= 1e-9,
                "{prefix}_{key}: {got} vs {want} ({c})"
            );
        }
        assert_eq!(row[&format!("{prefix}_units")], c["units"].to_string());
        if c["difference"].as_f64().unwrap() != 0.0 {
            nonzero += 1;
        }
    }
    assert!(
        nonzero > 10,
        "the fixture compares real differences ({nonzero})"
    );
}

/// Runs `file` into `out` with extra arguments; requires success.
#[test]
fn a_sweep_resumes_and_merges_point_by_point_to_the_same_records() {
    let body = format!(
        "name: sh
seed: 5
deals: 400
seating: rotate
rules: {{preset: paper}}
{AGENTS4}output: {{chunk_rounds: 200}}
stages:
  - name: sw
    sweep:
      rules.threshold: [7, 10]
"
    );
    let (dir, file) = tmp_scenario("sh.yaml", &body);
    let whole = dir.path().join("whole");
    play_into(&file, &whole, &[]);
    let points = ["sw/threshold=7", "sw/threshold=10"];

    // Killed (SIGKILL) in the first point, then resumed.
    let cut = dir.path().join("cut");
    killed(&[arg(&file), "--out", arg(&cut)], "part-placed:5");
    assert!(!cut.join(points[1]).join("summary.csv").exists());
    play_into(&file, &cut, &["--resume"]);

    // Two shards into one folder, then merged.
    let sharded = dir.path().join("sharded");
    play_into(&file, &sharded, &["--shard", "0/2"]);
    play_into(&file, &sharded, &["--shard", "1/2"]);
    ok(&["merge", arg(&sharded)]);

    for folder in [&cut, &sharded] {
        for p in points {
            let rows = dhumbal::runner::folder::same_records(&whole.join(p), &folder.join(p))
                .unwrap()
                .unwrap_or_else(|e| panic!("{}: {p}: {e}", folder.display()));
            assert_eq!(rows, 400 * 4 * 4);
        }
        assert_eq!(
            std::fs::read(folder.join("sw/sweep.csv")).unwrap(),
            std::fs::read(whole.join("sw/sweep.csv")).unwrap(),
            "{}",
            folder.display()
        );
    }
}

/// A bad scenario's message (exit 2).
fn bad(body: &str) -> String {
    let (_dir, file) = tmp_scenario("bad.yaml", body);
    refused(&["validate", arg(&file)])
}

#[test]
fn every_problem_of_a_sweep_is_reported_at_its_line_with_what_is_valid() {
    let t = bad(&format!(
        "name: sw
seed: 3
games: 12
rules:
  preset: jhyap
{AGENTS4}stages:
  - name: s
    sweep:
      rules.treshold: [5, 10]
      rules.threshold: [5, 1000, x]
      agents.balancd.params.call_probability: [0.5]
      agents.balanced.params.call_probabilty: [0.5]
      agents.balanced.params.late_call_probability: {{from: 0.1, to: 0.3, step: -0.1}}
      players: [2]
      mode: grids
  - name: z
    sweep:
      mode: zip
      rules.threshold: [5, 10]
      agents.balanced.params.call_probability: [0.5, 0.7, 0.9]
      agents.oportunistic.params.call_at: [3, 4]
  - name: final
    agents:
      - winner_of: s
      - kind: random
      - kind: random
      - kind: random
"
    ));
    has_all(
        &t,
        &[
            // A path that is not a rule field, with the nearest and the list.
            "bad.yaml:14:23: `stages.0.sweep.rules.treshold`: `treshold` is not a rule field; did you mean `rules.threshold`? rule fields: ace_high,",
            // A value the engine refuses, at the list item's line and column.
            "bad.yaml:15:28: `stages.0.sweep.rules.threshold.1`: 1000 is above any possible hand value",
            // A value of the wrong type.
            "bad.yaml:15:34: `stages.0.sweep.rules.threshold.2`: expected a whole number, 0 or more, got \"x\"",
            // An agent that is not in the stage.
            "`stages.0.sweep.agents.balancd.params.call_probability`: no agent `balancd` in this stage; did you mean `balanced`? its agents: aggressive, conservative, balanced, opportunistic",
            // A parameter the kind does not have, as the registry says it, at the value.
            "bad.yaml:17:48: `stages.0.sweep.agents.balanced.params.call_probabilty.0`: unknown parameter",
            "did you mean `call_probability`?",
            // A range that goes nowhere.
            "`stages.0.sweep.agents.balanced.params.late_call_probability.step`: a step of -0.1 never goes from 0.1 to 0.3",
            "`stages.0.sweep.players`: cannot sweep `players`: a swept path is `rules.<field>`",
            "`stages.0.sweep.mode`: expected `grid` (every combination of the values) or `zip`",
            // Zip: lists of one length.
            "`stages.1.sweep.agents.balanced.params.call_probability`: `mode: zip` pairs the i-th values of every path, so every path needs as many values: rules.threshold has 2, agents.balanced.params.call_probability has 3",
            // ... which does not hide a problem of a path itself.
            "`stages.1.sweep.agents.oportunistic.params.call_at`: no agent `oportunistic` in this stage",
            // winner_of a sweep.
            "`stages.2.agents.0.winner_of`: `s` is a sweep: each of its points is a stage with its own winner",
        ],
    );
    // The bad value is reported once, not once per point it appears in.
    assert_eq!(t.matches("1000 is above").count(), 1, "{t}");

    // A value that is valid for some points only names the point: 4 seats need 4 agents.
    let t = bad(&format!(
        "name: sw
seed: 3
deals: 10
{AGENTS4}stages:
  - name: s
    sweep:
      rules.players: [4, 3]
"
    ));
    has(
        &t,
        "bad.yaml:12:26: `stages.0.sweep.rules.players.1`: at sweep point `players=3`: \
             `agents`: 4 agents for 3 seats",
    );

    // A swept value must name a folder; a stage may not share a sweep's name.
    let t = bad(&format!(
        "name: sw
seed: 3
deals: 10
{AGENTS4}stages:
  - name: s
    sweep:
      rules.threshold: [5, 5]
  - name: s
"
    ));
    has_all(
        &t,
        &[
            "`stages.0.sweep.rules.threshold.1`: 5 is listed twice",
            "`stages.1.name`: stage `s` is defined twice",
        ],
    );

    // A zip may repeat a value of one path, not a whole point.
    let t = bad(&format!(
        "name: sw
seed: 3
deals: 10
{AGENTS4}stages:
  - name: fine
    sweep:
      mode: zip
      rules.threshold: [5, 5, 7]
      agents.balanced.params.call_probability: [0.5, 0.7, 0.5]
  - name: twice
    sweep:
      mode: zip
      rules.threshold: [5, 5]
      agents.balanced.params.call_probability: [0.5, 0.5]
"
    ));
    has(&t, "`stages.1.sweep`: the zipped values 5, 0.5 come twice");
    lacks(&t, "stages.0");
}

/// The overview's "Strength by time per decision": stages against one field (a sweep of a
/// search's budget, and a heuristic alone) are put on one scale, each point its first agent's
/// mean time per decision and games won as its stats.json gives them; a sweep of a rule
/// (the same time at every point) and a stage against another field get no figure.
#[test]
fn stages_against_one_field_are_put_on_a_scale_of_time_per_decision() {
    let body = "name: cost
seed: 5
games: 6
seating: rotate
output: {decision_sample: 1}
rules: {preset: jhyap, players: 2}
stages:
  - name: search
    agents:
      - {id: mcts, kind: mcts, params: {iterations: 4, rollout_turns: 4}}
      - kind: aggressive
    sweep:
      agents.mcts.params.iterations: [4, 400]
  - name: heuristic
    agents:
      - kind: balanced
      - kind: aggressive
  - name: threshold
    agents:
      - kind: conservative
      - kind: random
    sweep:
      rules.threshold: [5, 10]
";
    let (_dir, out, _) = play_scenario("cost.yaml", body, &[]);
    let page = std::fs::read_to_string(out.join("report.md")).unwrap();
    has_all(
        &page,
        &[
            "## Strength by time per decision",
            "### 2 players against aggressive",
            "| search | search/iterations=400 | mcts |",
            "| heuristic | heuristic | balanced |",
            "(<cost/figures/cost-1.svg>)",
        ],
    );
    // Only the field with the search: the threshold sweep faces another field.
    lacks(&page, "### 2 players against random");
    assert!(out.join("cost/figures/cost-1.svg").is_file());
    assert!(!out.join("cost/figures/cost-2.svg").exists());
    let rows = csv_rows(&out.join("cost/cost.csv"));
    let stages: Vec<&str> = rows.iter().map(|r| r["stage"].as_str()).collect();
    assert_eq!(
        stages,
        ["search/iterations=4", "search/iterations=400", "heuristic"]
    );
    let mut times = Vec::new();
    for r in &rows {
        let stats = json(&out.join(&r["stage"]).join("stats.json"));
        let first = &stats["agents"][0];
        assert_eq!(r["agent"], first["agent"].as_str().unwrap());
        assert_eq!(r["measure"], "games won");
        let rate: f64 = r["rate"].parse().unwrap();
        assert_eq!(rate, first["games"]["rate"].as_f64().unwrap(), "{r:?}");
        let lo: f64 = r["ci95_low"].parse().unwrap();
        assert_eq!(lo, first["games"]["ci95"][0].as_f64().unwrap(), "{r:?}");
        let us: f64 = r["micros_per_decision"].parse().unwrap();
        assert_eq!(
            us,
            first["decision_time"]["mean_us"].as_f64().unwrap(),
            "{r:?}"
        );
        times.push(us);
    }
    // A hundred times the iterations take more time per decision.
    assert!(times[1] > 2.0 * times[0], "{times:?}");
}
