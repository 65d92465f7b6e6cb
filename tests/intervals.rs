//! The numbers a researcher copies first follow the design (issue 33): the table printed at
//! the end of a stage, `summary.csv`, the overview and the stage reports give the same
//! interval for the same quantity (stats.json's `ci95`), the overview puts the winner's own
//! pair beside its lead, the variance wording says which way the design moved the variance,
//! and the cumulative bands say what they assume. On a small `permute` run of four players
//! and a heads-up one, through the release binary.

mod common;
use common::{has, has_all, json_file, lacks, play_scenario};

use std::collections::HashMap;
use std::path::Path;
use std::sync::OnceLock;

use serde_json::Value;

const SCENARIO: &str = "\
name: intervals
seed: 11
seating: permute
rules:
  preset: paper
stages:
  - name: four
    deals: 30
    agents:
      - kind: aggressive
      - kind: conservative
      - kind: balanced
      - kind: random
  - name: heads-up
    deals: 80
    rules: {players: 2}
    agents:
      - kind: aggressive
      - kind: balanced
";

/// The run, played once for every test: its folder (kept for the process) and its stdout.
fn run() -> &'static (tempfile::TempDir, String) {
    static RUN: OnceLock<(tempfile::TempDir, String)> = OnceLock::new();
    RUN.get_or_init(|| {
        let (dir, _, o) = play_scenario("intervals.yaml", SCENARIO, &["--threads", "2"]);
        (dir, String::from_utf8_lossy(&o.stdout).into_owned())
    })
}

fn out() -> std::path::PathBuf {
    run().0.path().join("out")
}

fn stats(stage: &str) -> Value {
    json_file(&out().join(stage).join("stats.json"))
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// summary.csv as agent -> column -> text (this run's ids and kinds hold no comma or quote).
fn summary(stage: &str) -> HashMap<String, HashMap<String, String>> {
    let text = read(&out().join(stage).join("summary.csv"));
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    lines
        .map(|l| {
            let row: HashMap<String, String> = header
                .iter()
                .map(|h| h.to_string())
                .zip(l.split(',').map(String::from))
                .collect();
            (row["agent"].clone(), row)
        })
        .collect()
}

fn pair(v: &Value) -> [f64; 2] {
    [v[0].as_f64().unwrap(), v[1].as_f64().unwrap()]
}

fn num(s: &str) -> f64 {
    s.parse().unwrap_or_else(|_| panic!("not a number: {s:?}"))
}

/// `[lo, hi]` in percent with two decimals, as the terminal prints an interval.
fn printed(ci: [f64; 2]) -> String {
    format!("[{:.2}, {:.2}]", 100.0 * ci[0], 100.0 * ci[1])
}

#[test]
fn summary_and_console_give_the_design_interval_and_wilson_by_its_own_name() {
    let stdout = &run().1;
    for stage in ["four", "heads-up"] {
        let s = stats(stage);
        let rows = summary(stage);
        for a in s["agents"].as_array().unwrap() {
            let id = a["agent"].as_str().unwrap();
            let row = &rows[id];
            let win = &a["win"];
            assert_eq!(win["ci95_method"], "deal", "{stage} {id}");
            // The same interval as stats.json's ci95, to the bit.
            let ci = pair(&win["ci95"]);
            assert_eq!(
                [num(&row["win_ci95_low"]), num(&row["win_ci95_high"])],
                ci,
                "{stage} {id}: summary.csv's win_ci95 is stats.json's ci95"
            );
            assert_eq!(row["win_ci95_method"], "deal", "{stage} {id}");
            assert_eq!(
                [
                    num(&row["win_ci95_wilson_low"]),
                    num(&row["win_ci95_wilson_high"])
                ],
                pair(&win["ci95_wilson"]),
                "{stage} {id}: Wilson's under its own name"
            );
            // The terminal prints the same interval in the agent's line.
            let line = stdout
                .lines()
                .skip_while(|l| !l.starts_with(&format!("stage `{stage}`:")))
                .find(|l| l.split_whitespace().next() == Some(id))
                .unwrap_or_else(|| panic!("{stage}: no line for {id} in {stdout}"));
            assert!(line.contains(&printed(ci)), "{stage} {id}: {line}");
        }
    }
    has(stdout, "95% CI (by deal)");
    lacks(stdout, "95% CI (Wilson)");
    has(stdout, "note: 95% CIs \"by deal\"");
    // Under permute at four players the two intervals differ: the test compares something.
    let four = stats("four");
    let a = &four["agents"][3]["win"];
    assert_ne!(pair(&a["ci95"]), pair(&a["ci95_wilson"]));
}

/// The primary win-rate row of the pair (a, b) in a stage's stats.json, and the sign that
/// makes its difference a − b.
fn pair_row<'a>(s: &'a Value, a: &str, b: &str) -> (&'a Value, f64) {
    s["pairwise"]
        .as_array()
        .unwrap()
        .iter()
        .find_map(|t| {
            if t["metric"] != "win" || t["primary"] != true {
                return None;
            }
            let (ta, tb) = (t["a"].as_str()?, t["b"].as_str()?);
            if (ta, tb) == (a, b) {
                Some((t, 1.0))
            } else if (ta, tb) == (b, a) {
                Some((t, -1.0))
            } else {
                None
            }
        })
        .unwrap()
}

/// Two decimals, a sign on positive values and a true minus, as the overview writes a
/// difference.
fn signed(x: f64) -> String {
    let s = format!("{x:.2}");
    if x > 0.0 && s != "0.00" {
        format!("+{s}")
    } else {
        s.replace('-', "−")
    }
}

#[test]
fn the_overview_puts_the_winners_own_pair_beside_its_lead() {
    let page = read(&out().join("report.md"));
    let manifest = json_file(&out().join("manifest.json"));
    lacks(&page, "resolvable difference");
    has(&page, "least favourable pair detects (power 0.8)");
    for (i, stage) in ["four", "heads-up"].iter().enumerate() {
        let s = stats(stage);
        let winner = manifest["stages"][i]["winner"]["agent"].as_str().unwrap();
        // The next agent by win rate.
        let next = s["agents"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|a| a["agent"] != winner)
            .max_by(|a, b| {
                a["win"]["rate"]
                    .as_f64()
                    .unwrap()
                    .total_cmp(&b["win"]["rate"].as_f64().unwrap())
            })
            .unwrap()["agent"]
            .as_str()
            .unwrap();
        let (row, sign) = pair_row(&s, winner, next);
        let ci = pair(&row["ci95"]);
        let (lo, hi) = if sign > 0.0 {
            (ci[0], ci[1])
        } else {
            (-ci[1], -ci[0])
        };
        let d = sign * row["difference"].as_f64().unwrap();
        // The interval is the pair's own: difference ± t_{0.975, df}·se, se that of its test.
        let se = row["difference"].as_f64().unwrap() / row["statistic"].as_f64().unwrap();
        let df = row["df"].as_f64().unwrap();
        let t975 = dhumbal::report::dist::t_quantile(0.975, df);
        assert!(
            ((hi - lo) / 2.0 - t975 * se.abs()).abs() < 1e-12
                && (d - (lo + hi) / 2.0).abs() < 1e-12,
            "{stage}: {row}"
        );
        let lead = format!(
            "{} percentage points over {next} [{}, {}]",
            signed(100.0 * d),
            signed(100.0 * lo),
            signed(100.0 * hi)
        );
        let line = page
            .lines()
            .find(|l| l.starts_with(&format!("| [{stage}]")))
            .unwrap();
        assert!(line.contains(&lead), "{stage}: want {lead} in {line}");
        let critical = row["critical_difference"].as_f64().unwrap();
        assert!(
            line.contains(&format!("±{:.2} points", 100.0 * critical)),
            "{stage}: critical difference {critical} in {line}"
        );
        // The critical difference is at the stage's Bonferroni level, on the pair's own se,
        // and below the pair's detectable difference (which needs power besides).
        let k = s["power"]["pairs"].as_f64().unwrap();
        let t = dhumbal::report::dist::t_quantile(1.0 - 0.05 / (2.0 * k), df);
        assert!((critical - t * se.abs()).abs() < 1e-12, "{stage}: {row}");
        assert!(critical < row["mde"].as_f64().unwrap(), "{stage}: {row}");
        // The least favourable pair's detectable difference is named as such, with its value.
        let worst = s["power"]["design"]["mde"]["worst"].as_f64().unwrap();
        assert!(
            line.ends_with(&format!("| {:.2} points |", 100.0 * worst)),
            "{stage}: {line}"
        );
    }
}

#[test]
fn heads_up_wording_says_which_way_the_design_moved_the_variance() {
    let s = stats("heads-up");
    let report = read(&out().join("heads-up").join("report.md"));
    let ratios = s["design"]["variance_ratio"].as_array().unwrap();
    let win = ratios.iter().find(|r| r["metric"] == "win").unwrap();
    // One winner per round: the pairing ratio of the win rate is 2 by construction.
    let pairing = win["pairing"].as_f64().unwrap();
    assert!((pairing - 2.0).abs() < 1e-9, "{win}");
    // Each agent's own variance under the design, against independent rounds: the squared
    // ratio of its interval widths (t against z aside), and what the report says of it.
    let per_agent = win["per_agent"].as_f64().unwrap();
    let design = win["design"].as_f64().unwrap();
    let change = |r: f64| {
        let c = 100.0 * (r - 1.0);
        if format!("{:.1}", c.abs()) == "0.0" {
            "0.0% (the same)".to_string()
        } else if c < 0.0 {
            format!("−{:.1}% (less)", -c)
        } else {
            format!("+{c:.1}% (more)")
        }
    };
    let row = format!(
        "| win | {per_agent:.3} | {} | {design:.3} | {} | {pairing:.3} |",
        change(per_agent),
        change(design)
    );
    assert!(report.contains(&row), "want {row} in\n{report}");
    lacks(&report, "removed |");
    // The Wilson sentence says what Wilson does here, measured.
    let widths: Vec<f64> = s["agents"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| {
            let (w, u) = (
                pair(&a["win"]["ci95_wilson"]),
                pair(&a["win"]["ci95_units"]),
            );
            (w[1] - w[0]) / (u[1] - u[0])
        })
        .collect();
    let median = (widths[0] + widths[1]) / 2.0;
    let said = format!("here {median:.2} times as wide as the interval by deal");
    assert!(report.contains(&said), "want {said} in\n{report}");
    let verdict = if median > 1.0 {
        "too wide"
    } else {
        "too narrow"
    };
    has(&report, &format!("{said}, median over agents: {verdict}"));
    // One pair: "the 1 pair of agents".
    let families = s["families"].as_str().unwrap();
    has(families, "the 1 pair of agents");
    lacks(&report, "1 pairs");
}

#[test]
fn cumulative_bands_follow_the_design_and_say_so() {
    for stage in ["four", "heads-up"] {
        let report = read(&out().join(stage).join("report.md"));
        let caption = report
            .lines()
            .find(|l| l.starts_with("*Cumulative wins over"))
            .unwrap_or_else(|| panic!("{stage}: no caption in\n{report}"));
        has_all(
            caption,
            &["S_t ± 1.96·s·√(D·t)", "the variance of its mean by deal"],
        );
        lacks(caption, "S_t ± 1.96·s·√t,");
    }
}
