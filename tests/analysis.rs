//! The analysis of records: against the paper's own Table I statistics
//! (`tests/fixtures/paper_table1_reference.json`), the pass over records against hand-computed
//! values, and the report's outputs. The statistics themselves against SciPy and statsmodels
//! (`tests/fixtures/stats.json`, made by `scripts/reference/stats_fixture.py`):
//! crates/stats/tests/analysis.rs.
//!
//! Tolerance: relative 1e-9 (absolute 1e-12 where the reference is within 1e-3 of zero), so
//! p-values of 1e-53 are checked to nine digits too.

use std::path::Path;

use dhumbal::report::stats::{
    Moments, PooledSd, cohen_d, cohen_dz, paired, percentile, welch, wilson,
};
use dhumbal::report::{Definitions, Options, Seating, StageInfo, dist, power};
use serde_json::Value;

mod common;
use common::{has, has_all, json_file, lacks, play_into, tmp, tmp_scenario};

fn fixture(name: &str) -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name);
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// `got` within a relative 1e-9 of `want` (an absolute 1e-12 near zero).
#[track_caller]
fn close(got: f64, want: f64, what: &str) {
    let diff = (got - want).abs();
    let near_zero = want.abs() < 1e-3 && diff <= 1e-12;
    assert!(
        near_zero || diff <= 1e-9 * want.abs(),
        "{what}: got {got:e}, want {want:e} (diff {:e})",
        got - want
    );
}

fn f(v: &Value) -> f64 {
    v.as_f64().unwrap()
}

/// (deal, rotation, seat, agent, won, coin change, called, hand value)
type TestRow<'a> = (u64, u32, u32, &'a str, bool, i64, bool, u32);

/// Writes a `rounds.csv` with the given rows (missing columns get neutral values).
fn write_records(dir: &Path, rows: &[TestRow]) {
    let mut text = String::from(
        "stage,deal,rotation,round,seat,agent,starter,won,called,call_success,coin_delta,points_delta,standing,hand_value,cards_discarded,pile_picks,turns,end_reason,decisions,decision_ns,eliminated,game_won\n",
    );
    for &(deal, rotation, seat, agent, won, coins, called, hand) in rows {
        text.push_str(&format!(
            "s,{deal},{rotation},0,{seat},{agent},{},{won},{called},{},{coins},0,0,{hand},{},0,10,call,4,{},false,false\n",
            seat == 0,
            called && won,
            hand % 3,
            1000 * (u64::from(hand) + 1),
        ));
    }
    std::fs::write(dir.join("rounds.csv"), text).unwrap();
}

fn info(agents: &[&str], seating: Seating) -> StageInfo {
    StageInfo {
        name: "s".into(),
        agents: agents.iter().map(|a| a.to_string()).collect(),
        kinds: vec![String::new(); agents.len()],
        seating,
        points: false,
        players: agents.len(),
        session: Some(1),
        seed: Some(1),
        source: "test".into(),
    }
}

/// `rows` as the records of a stage of `agents` seated by `seating`, in a fresh temporary
/// folder: the folder and the stage.
fn stage_of(rows: &[TestRow], agents: &[&str], seating: Seating) -> (tempfile::TempDir, StageInfo) {
    let dir = tmp();
    write_records(dir.path(), rows);
    (dir, info(agents, seating))
}

/// The report's options without figures (these tests read numbers).
fn no_figures() -> Options {
    Options {
        figures: false,
        ..Options::default()
    }
}

/// The cluster-robust t interval of a mean over units (sum, count), written out from its
/// definition: ȳ = ΣS/ΣN, V = G/(G−1)·Σ(S_g − ȳ·n_g)²/N², ȳ ± t_{0.975, G−1}·√V.
fn cluster_interval(units: &[(f64, f64)]) -> [f64; 2] {
    let g = units.len() as f64;
    let (s, n): (f64, f64) = units
        .iter()
        .fold((0.0, 0.0), |(s, n), u| (s + u.0, n + u.1));
    let mean = s / n;
    let ss: f64 = units.iter().map(|u| (u.0 - mean * u.1).powi(2)).sum();
    let v = g / (g - 1.0) * ss / (n * n);
    let half = dist::t_quantile(0.975, g - 1.0) * v.sqrt();
    [mean - half, mean + half]
}

#[test]
fn rotated_deals_are_the_unit_and_pairs_use_deal_means() {
    // Two agents, two rotations per deal, three deals. (deal, rotation, seat, agent, won,
    // coins, called, hand value)
    let rows = [
        (0, 0, 0, "x", true, 10, true, 3),
        (0, 0, 1, "y", false, -10, false, 20),
        (0, 1, 0, "y", true, 6, true, 5),
        (0, 1, 1, "x", false, -6, false, 12),
        (1, 0, 0, "x", true, 8, true, 2),
        (1, 0, 1, "y", false, -8, false, 9),
        (1, 1, 0, "y", false, -4, true, 11),
        (1, 1, 1, "x", true, 4, false, 7),
        (2, 0, 0, "x", false, -3, false, 14),
        (2, 0, 1, "y", true, 3, true, 1),
        (2, 1, 0, "y", true, 5, true, 4),
        (2, 1, 1, "x", false, -5, false, 16),
    ];
    let (dir, info) = stage_of(&rows, &["x", "y"], Seating::Rotate);
    let opts = no_figures();
    let (s, acc) = dhumbal::report::analyze_stage(dir.path(), &info, &opts).unwrap();
    assert_eq!((acc.rounds, acc.units, acc.rows), (6, 3, 12));
    let x = &s.agents[0];
    assert_eq!((x.rounds, x.win.k, x.calls, x.call_success.k), (6, 3, 2, 2));
    close(
        x.economic.mean.unwrap(),
        (10.0 - 6.0 + 8.0 + 4.0 - 3.0 - 5.0) / 6.0,
        "x coins",
    );
    // Per-deal coin means of x: (10-6)/2, (8+4)/2, (-3-5)/2; of y their negatives.
    let dx = [2.0 - -2.0, 6.0 - -6.0, -4.0 - 4.0];
    let md = Moments::from_slice(&dx);
    let want = paired(&md).unwrap();
    let row = s
        .pairwise
        .iter()
        .find(|r| r.metric == "economic" && r.test == "paired")
        .unwrap();
    assert_eq!(row.unit, "deal");
    assert_eq!(row.n_a, 3);
    close(
        row.statistic.unwrap(),
        want.statistic,
        "paired t on deal means",
    );
    close(row.p.unwrap(), want.p, "paired p");
    close(row.effect.unwrap(), cohen_dz(&md).unwrap(), "dz");
    assert!(row.primary);
    // Welch on the six rounds of each.
    let coins = |who: &str| -> Vec<f64> {
        rows.iter()
            .filter(|r| r.3 == who)
            .map(|r| r.5 as f64)
            .collect()
    };
    let (mx, my) = (
        Moments::from_slice(&coins("x")),
        Moments::from_slice(&coins("y")),
    );
    let w = s
        .pairwise
        .iter()
        .find(|r| r.metric == "economic" && r.test == "welch")
        .unwrap();
    close(w.p.unwrap(), welch(&mx, &my).unwrap().p, "welch p");
    close(
        w.effect.unwrap(),
        cohen_d(&mx, &my, PooledSd::Sample).unwrap(),
        "d",
    );
    // The variance ratio: paired variance of the mean difference over Welch's.
    let se2 = mx.var(1).unwrap() / 6.0 + my.var(1).unwrap() / 6.0;
    close(
        row.variance_ratio.unwrap(),
        md.var(1).unwrap() / 3.0 / se2,
        "variance ratio",
    );
    // What pairing alone removes: the deal differences against the unpaired deal means.
    let (ux, uy) = (
        Moments::from_slice(&[2.0, 6.0, -4.0]),
        Moments::from_slice(&[-2.0, -6.0, 4.0]),
    );
    close(
        row.pairing_ratio.unwrap(),
        md.var(1).unwrap() / (ux.var(1).unwrap() + uy.var(1).unwrap()),
        "pairing ratio",
    );
    // Seats: x won in seat 0 twice of three, in seat 1 once of three.
    assert_eq!((x.by_seat[0].win.k, x.by_seat[0].win.n), (2, 3));
    assert_eq!((x.by_seat[1].win.k, x.by_seat[1].win.n), (1, 3));
    // Risk: Pearson over x's calls (hand 3 won, hand 2 won): no variance in success.
    assert!(x.risk.is_none());
    // Decision time: mean over all decisions is exact, p95 over per-round means.
    let d = x.decision_time.as_ref().unwrap();
    let hands: Vec<f64> = rows
        .iter()
        .filter(|r| r.3 == "x")
        .map(|r| f64::from(r.7))
        .collect();
    let total_ns: f64 = hands.iter().map(|h| 1000.0 * (h + 1.0)).sum();
    close(
        d.mean_us.unwrap(),
        total_ns / 24.0 / 1000.0,
        "mean decision time",
    );
    let mut per_round: Vec<f64> = hands.iter().map(|h| (h + 1.0) / 4.0).collect();
    close(
        d.p95_us.unwrap(),
        percentile(&mut per_round, 0.95).unwrap(),
        "p95",
    );
    // The figure's median is of the same per-round distribution, so it never exceeds the p95.
    let mut sorted = per_round.clone();
    sorted.sort_by(f64::total_cmp);
    close(
        d.median_us.unwrap(),
        (sorted[2] + sorted[3]) / 2.0,
        "median of per-round means",
    );
    assert!(d.median_us <= d.p95_us);
    // Rotated seating: the win rate's primary interval is by deal, the cluster-robust t
    // interval over x's per-deal (wins, rounds): (1, 2), (2, 2), (0, 2); Wilson stays beside it.
    assert_eq!(x.win.ci95_method, "deal");
    let want = cluster_interval(&[(1.0, 2.0), (2.0, 2.0), (0.0, 2.0)]);
    assert_eq!(x.win.ci95, x.win.ci95_units);
    close(x.win.ci95.unwrap()[0], want[0].max(0.0), "win by deal low");
    close(x.win.ci95.unwrap()[1], want[1].min(1.0), "win by deal high");
    assert_eq!(x.win.units, Some(3));
    let (wl, wh) = wilson(3, 6, 0.95).unwrap();
    assert_eq!(x.win.ci95_wilson, Some([wl, wh]));
    // y: calls in deal 0 (1 of 1 succeeded), deal 1 (0 of 1), deal 2 (2 of 2).
    let y = &s.agents[1];
    assert_eq!((y.call_success.k, y.call_success.n), (3, 4));
    assert_eq!(y.call_success.ci95_method, "deal");
    let want = cluster_interval(&[(1.0, 1.0), (0.0, 1.0), (2.0, 2.0)]);
    close(
        y.call_success.ci95.unwrap()[0],
        want[0].max(0.0),
        "calls by deal",
    );
    close(
        y.call_success.ci95.unwrap()[1],
        want[1].min(1.0),
        "calls by deal",
    );
    // x won every call: a rate of 1 has no cluster variance, so the by-deal interval is
    // Wilson's over the 2 deals with calls, not the point [1, 1].
    let (l, h) = wilson(2, 2, 0.95).unwrap();
    assert_eq!(x.call_success.ci95, Some([l, h]));
    // By seat, by deal: x in seat 0 won in deals 0 and 1, not 2 (one round per deal).
    let seat0 = &x.by_seat[0].win;
    assert_eq!(seat0.ci95_method, "deal");
    let want = cluster_interval(&[(1.0, 1.0), (1.0, 1.0), (0.0, 1.0)]);
    close(seat0.ci95.unwrap()[1], want[1].min(1.0), "seat 0 by deal");
    assert_eq!(s.seats[0].win.ci95_method, "deal");
    // Holm and Bonferroni over one pair leave p unchanged.
    assert_eq!(row.p_holm, row.p);
    assert_eq!(row.p_bonferroni, row.p);
}

#[test]
fn a_report_writes_every_output_with_finite_numbers() {
    let rows: Vec<TestRow> = (0..40u64)
        .flat_map(|deal| {
            let w = deal % 3;
            let names = ["a", "b", "c"];
            (0..3u32).map(move |seat| {
                let won = u64::from(seat) == w;
                (
                    deal,
                    0,
                    seat,
                    names[seat as usize],
                    won,
                    if won { 12 } else { -6 },
                    won || (deal + u64::from(seat)) % 5 == 0,
                    // Hand values far apart by seat: some p-values are tiny.
                    ((deal * 7 + u64::from(seat) * 3) % 17 + 20 * u64::from(seat)) as u32,
                )
            })
        })
        .collect();
    let (dir, info) = stage_of(&rows, &["a", "b", "c"], Seating::Fixed);
    let opts = no_figures();
    let report = dhumbal::report::report_stage(dir.path(), dir.path(), &info, &opts).unwrap();
    for f in [
        "stats.json",
        "report.md",
        "tables/agents.csv",
        "tables/agents.tex",
        "tables/pairwise.csv",
        "tables/pairwise.tex",
        "tables/seats.csv",
        "tables/seats.tex",
    ] {
        assert!(dir.path().join(f).is_file(), "{f} written");
    }
    let json = json_file(&dir.path().join("stats.json"));
    // Every number that is defined here is a number (serde writes a NaN or an infinity as
    // null, so a computation gone wrong shows up as a null where a number is required).
    for a in json["agents"].as_array().unwrap() {
        let number = |path: &str| {
            let v = a.pointer(path).unwrap_or(&Value::Null);
            assert!(v.is_number(), "agent {}: {path} is {v}", a["agent"]);
        };
        // Each agent sits in its own seat (fixed seating).
        number(&format!("/by_seat/{}/rate", a["slot"]));
        number(&format!("/by_seat/{}/ci95/1", a["slot"]));
        for path in [
            "/win/rate",
            "/win/ci95/0",
            "/win/ci95/1",
            "/win/ci95_wilson/0",
            "/win/ci95_normal/1",
            "/economic/mean",
            "/economic/sd",
            "/economic/ci95/0",
            "/economic/ci95/1",
            "/calls_per_round/mean",
            "/call_success/rate",
            "/call_success/ci95/0",
            "/call_success/ci95/1",
            "/cards_discarded_per_round/mean",
            "/turns_per_round/mean",
            "/final_hand_value/mean",
            "/final_hand_value/ci95/1",
            "/decision_time/mean_us",
            "/decision_time/median_us",
            "/decision_time/p95_us",
        ] {
            number(path);
        }
        assert_eq!(a["win"]["ci95_method"], "wilson", "fixed seating");
        assert!(a["win"]["ci95_units"].is_null(), "no clusters here");
    }
    for r in json["pairwise"].as_array().unwrap() {
        for key in [
            "statistic",
            "df",
            "p",
            "p_bonferroni",
            "p_holm",
            "effect",
            "mde",
        ] {
            assert!(
                r[key].is_number(),
                "{} {} {key}: {r}",
                r["metric"],
                r["test"]
            );
        }
    }
    for key in ["power", "power_bonferroni", "eq5", "mde_bonferroni"] {
        assert!(
            json["power"]["independent"][key].is_number(),
            "power.independent {key}"
        );
    }
    for key in ["sd_units", "power_at_delta", "mde", "units_needed"] {
        for which in ["median", "worst"] {
            assert!(
                json["power"]["design"][key][which].is_number(),
                "power.design {key} {which}"
            );
        }
    }
    assert_eq!(json["power"]["independent"]["unit"], "round");
    assert_eq!(json["power"]["independent"]["units_per_agent"], 40);
    assert_eq!(json["power"]["design"]["unit"], "round");
    assert_eq!(json["power"]["design"]["units"], 40);
    // Defined where they must be: every win test here has a statistic and a p-value.
    for r in json["pairwise"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["metric"] == "win")
    {
        assert!(
            r["statistic"].is_f64() && r["p"].is_f64() && r["effect"].is_f64(),
            "{r}"
        );
    }
    assert_eq!(json["agents"].as_array().unwrap().len(), 3);
    let pairwise = json["pairwise"].as_array().unwrap();
    for key in [
        "metric",
        "a",
        "b",
        "test",
        "statistic",
        "df",
        "p",
        "p_bonferroni",
        "p_holm",
        "effect",
        "effect_name",
    ] {
        assert!(
            pairwise.iter().all(|r| r.get(key).is_some()),
            "pairwise has {key}"
        );
    }
    // Three pairs per metric and test; Holm never exceeds Bonferroni.
    let win_welch: Vec<&Value> = pairwise
        .iter()
        .filter(|r| r["metric"] == "win" && r["test"] == "welch")
        .collect();
    assert_eq!(win_welch.len(), 3);
    for r in &win_welch {
        assert!(f(&r["p_holm"]) <= f(&r["p_bonferroni"]) + 1e-15);
    }
    assert_eq!(report.analysis.design.unit, "round");
    let md = std::fs::read_to_string(dir.path().join("report.md")).unwrap();
    assert!(md.contains("## Pairwise comparisons") && md.contains("| a vs b |"));
    // The summary's p is named for what it is: Holm-adjusted, of the paired test (the
    // clustered one for call success, whose calls do not pair), with that test's own effect,
    // d_z, beside it.
    has_all(
        &md,
        &[
            "| win d_z | win p (Holm, paired) |",
            "| call_success h | call_success p (Holm, clustered) |",
        ],
    );
    // Timing is described, not tested.
    assert!(!pairwise.iter().any(|r| r["metric"] == "decision_time_us"));
    lacks(&md, "decision_time_us p");
    let tex = std::fs::read_to_string(dir.path().join("tables/agents.tex")).unwrap();
    assert!(tex.contains("\\toprule") && tex.contains("\\bottomrule"));
    // In LaTeX the effect size is math, d with a subscript z; metric names keep their
    // underscores as text.
    let tex = std::fs::read_to_string(dir.path().join("tables/pairwise.tex")).unwrap();
    has_all(&tex, &["win $d_z$ &", "call\\_success h &"]);
    lacks(&tex, "d\\_z");
    // pairwise.csv: p-values at full precision; small ones in scientific notation.
    let csv = std::fs::read_to_string(dir.path().join("tables/pairwise.csv")).unwrap();
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = |name: &str| header.iter().position(|h| *h == name).unwrap();
    let mut small = 0;
    // (Compared with the numbers in memory: serde_json's own float parsing may be a unit in
    // the last place off.)
    for (line, r) in lines.zip(&report.analysis.pairwise) {
        let cells: Vec<&str> = line.split(',').collect();
        for (key, want) in [("p", r.p), ("p_holm", r.p_holm)] {
            let cell = cells[col(key)];
            let want = want.unwrap();
            assert_eq!(cell.parse::<f64>().unwrap(), want, "{key} round-trips");
            if want < 1e-4 {
                assert!(cell.contains('e'), "{cell} in scientific notation");
                small += 1;
            }
        }
    }
    assert!(small > 0, "some p-values here are tiny");
}

#[test]
fn csv_numbers_are_exact_and_small_ones_scientific() {
    use dhumbal::report::tables::csv_num;
    assert_eq!(
        csv_num(Some(1.2839639276787884e-15)),
        "1.2839639276787884e-15"
    );
    assert_eq!(csv_num(Some(0.5)), "0.5");
    assert_eq!(csv_num(Some(-0.25)), "-0.25");
    assert_eq!(csv_num(Some(0.0)), "0");
    assert_eq!(csv_num(Some(2e-300)), "2e-300");
    assert_eq!(csv_num(Some(f64::NAN)), "");
    assert_eq!(csv_num(None), "");
    for v in [3.0e-53, 9.99e-5, 1e-4, 0.123456789012345, 123456.75, 1e20] {
        assert_eq!(csv_num(Some(v)).parse::<f64>().unwrap(), v);
    }
}

/// Fixed seating, two agents with exactly equal means (the same values in the same rounds:
/// coins +5/−5, wins on alternate deals) but a spread: the minimum detectable effect and the
/// power still exist, from the pooled SD of the two variances (not from difference / d,
/// undefined at a zero difference).
#[test]
fn equal_means_keep_their_minimum_detectable_effect() {
    let rows: Vec<TestRow> = (0..30u64)
        .flat_map(|deal| {
            let even = deal % 2 == 0;
            let coins = if even { 5 } else { -5 };
            [
                (deal, 0, 0, "a", even, coins, false, 3),
                (deal, 0, 1, "b", even, coins, false, 4),
            ]
        })
        .collect();
    let (dir, info) = stage_of(&rows, &["a", "b"], Seating::Fixed);
    let opts = no_figures();
    let (s, _) = dhumbal::report::analyze_stage(dir.path(), &info, &opts).unwrap();
    let values = |who: &str, m: fn(&TestRow) -> f64| -> Moments {
        Moments::from_slice(
            &rows
                .iter()
                .filter(|r| r.3 == who)
                .map(m)
                .collect::<Vec<_>>(),
        )
    };
    for (metric, m) in [
        (
            "economic",
            (|r: &TestRow| r.5 as f64) as fn(&TestRow) -> f64,
        ),
        ("win", |r: &TestRow| f64::from(u8::from(r.4))),
    ] {
        let (ma, mb) = (values("a", m), values("b", m));
        assert_eq!(ma.mean, mb.mean, "{metric}: equal means");
        let r = s
            .pairwise
            .iter()
            .find(|r| r.metric == metric && r.test == "welch")
            .unwrap();
        assert_eq!(r.difference, Some(0.0));
        let pooled = ((29.0 * ma.var(1).unwrap() + 29.0 * mb.var(1).unwrap()) / 58.0).sqrt();
        let es = power::ttest_ind_mde(30.0, 0.05, 0.8, 1.0).unwrap();
        close(r.mde.unwrap(), es * pooled, &format!("{metric} mde"));
        if metric == "win" {
            close(
                r.power_at_delta.unwrap(),
                power::ttest_ind_power(0.05 / pooled, 30.0, 0.05, 1.0),
                "power at delta",
            );
        }
    }
}

/// An agent that never calls has no call-success interval (null, not [0, 1]).
#[test]
fn no_calls_no_interval() {
    let rows: Vec<TestRow> = (0..10u64)
        .flat_map(|deal| {
            [
                (deal, 0, 0, "a", true, 5, true, 3),
                (deal, 0, 1, "b", false, -5, false, 9),
            ]
        })
        .collect();
    let (dir, info) = stage_of(&rows, &["a", "b"], Seating::Fixed);
    let opts = no_figures();
    dhumbal::report::report_stage(dir.path(), dir.path(), &info, &opts).unwrap();
    let json = json_file(&dir.path().join("stats.json"));
    let b = &json["agents"][1]["call_success"];
    assert_eq!(b["n"], 0);
    for key in ["rate", "ci95", "ci95_wilson", "ci95_normal", "ci95_units"] {
        assert!(b[key].is_null(), "{key}: {b}");
    }
    assert!(json["agents"][0]["call_success"]["ci95"].is_array());
}

/// Columns are checked against the records' schema by name: reordered, missing or
/// unexpected columns are refused as bad input naming them, never read by position.
#[test]
fn record_columns_are_checked_by_name() {
    let rows: Vec<TestRow> = (0..6u64)
        .flat_map(|deal| {
            [
                (deal, 0, 0, "a", deal % 2 == 0, 5, true, 3),
                (deal, 0, 1, "b", deal % 2 == 1, -5, false, 9),
            ]
        })
        .collect();
    let (dir, info) = stage_of(&rows, &["a", "b"], Seating::Fixed);
    let opts = no_figures();
    let good = std::fs::read_to_string(dir.path().join("rounds.csv")).unwrap();
    // Rewrites every line with its cells transformed.
    let rewrite = |edit: &dyn Fn(&mut Vec<String>)| {
        let text: String = good
            .lines()
            .map(|l| {
                let mut cells: Vec<String> = l.split(',').map(String::from).collect();
                edit(&mut cells);
                cells.join(",") + "\n"
            })
            .collect();
        std::fs::write(dir.path().join("rounds.csv"), text).unwrap();
    };
    let header: Vec<String> = good
        .lines()
        .next()
        .unwrap()
        .split(',')
        .map(String::from)
        .collect();
    let at = |name: &str| header.iter().position(|h| h == name).unwrap();
    let (hand, cards) = (at("hand_value"), at("cards_discarded"));
    let error = || {
        let e = dhumbal::report::analyze_stage(dir.path(), &info, &opts).unwrap_err();
        assert!(matches!(e, dhumbal::report::Error::Input(_)), "{e:#}");
        let text = format!("{e:#}");
        assert!(text.contains("rounds.csv"), "names the file: {text}");
        text
    };
    // Two columns swapped, header and values together: same data, wrong layout.
    rewrite(&|c| c.swap(hand, cards));
    let e = error();
    has(&e, "out of order `cards_discarded`, `hand_value`");
    rewrite(&|c| {
        c.remove(hand);
    });
    let e = error();
    has(&e, "missing `hand_value`");
    lacks(&e, "out of order");
    rewrite(&|c| {
        c.push(if c[0] == "stage" {
            "extra".into()
        } else {
            "1".into()
        })
    });
    assert!(error().contains("unexpected `extra`"));
    // The file as written reads, and gives what the rows say.
    std::fs::write(dir.path().join("rounds.csv"), &good).unwrap();
    let (s, _) = dhumbal::report::analyze_stage(dir.path(), &info, &opts).unwrap();
    close(
        s.agents[0].final_hand_value.mean.unwrap(),
        3.0,
        "hand value",
    );
    close(
        s.agents[1].cards_discarded_per_round.mean.unwrap(),
        0.0,
        "cards (9 % 3)",
    );
    // A header without rows is no stage to analyse.
    std::fs::write(
        dir.path().join("rounds.csv"),
        good.lines().next().unwrap().to_string() + "\n",
    )
    .unwrap();
    assert!(error().contains("holds no rounds"));
}

/// Plays the scenario file `path` (from the repository's root) through the library into a
/// fresh temporary folder, on one thread: `rounds` of it when given, with `rounds.csv` when
/// `csv`. Returns the folder.
fn played(path: &str, rounds: Option<u64>, csv: bool) -> tempfile::TempDir {
    use dhumbal::runner::run::{Quiet, RunOptions};
    let out = tmp();
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(path);
    let sc = dhumbal::scenario::load(&path, &overrides(rounds, out.path())).unwrap();
    let opts = RunOptions {
        threads: 1,
        csv,
        ..RunOptions::default()
    };
    dhumbal::runner::run::run(&sc, &opts, &Quiet).unwrap();
    out
}

/// The command line's overrides of a run into `out`, `rounds` of it when given.
fn overrides(rounds: Option<u64>, out: &Path) -> dhumbal::scenario::Overrides {
    dhumbal::scenario::Overrides {
        rounds,
        out: Some(out.to_path_buf()),
        ..Default::default()
    }
}

/// The paper's Table I run, analysed with the paper's definitions, gives the numbers of its
/// `metrics.csv` and `statistical_analysis.csv` (except `cards`, a hypothetical next discard
/// our records do not hold).
#[test]
fn table_one_statistics_match_the_papers_own() {
    let out = played("scenarios/paper/table1.yaml", None, false);
    let opts = Options {
        definitions: Definitions::Paper,
        figures: false,
        ..Options::default()
    };
    let reports = dhumbal::report::report_dir(out.path(), None, false, &opts).unwrap();
    assert_eq!(reports.len(), 1);
    let s = &reports[0].analysis;
    let reference = fixture("paper_table1_reference.json");
    for (agent, want) in s
        .agents
        .iter()
        .zip(reference["metrics"].as_array().unwrap())
    {
        let name = &agent.agent;
        close(
            100.0 * agent.win.rate.unwrap(),
            f(&want["win_rate_pct"]),
            name,
        );
        let half = 100.0 * (agent.win.ci95_normal.unwrap()[1] - agent.win.rate.unwrap());
        close(half, f(&want["win_ci_pct"]), &format!("{name} CI"));
        close(agent.economic.mean.unwrap(), f(&want["economic"]), name);
        close(
            100.0 * agent.call_success.rate.unwrap(),
            f(&want["jhyap_success_pct"]),
            name,
        );
        close(
            agent.risk.unwrap().r,
            f(&want["risk"]),
            &format!("{name} risk"),
        );
    }
    for want in reference["pairwise"].as_array().unwrap() {
        let (a, b) = (want["a"].as_str().unwrap(), want["b"].as_str().unwrap());
        for (ours, theirs) in [
            ("win", "win"),
            ("economic", "economic"),
            ("calls", "jhyap"),
            ("call_success", "risk"),
        ] {
            let r = s
                .pairwise
                .iter()
                .find(|r| r.metric == ours && r.test == "welch" && r.a == a && r.b == b)
                .unwrap();
            assert_eq!(r.paper_metric, Some(theirs));
            let what = format!("{a} vs {b} {theirs}");
            close(
                r.effect.unwrap(),
                f(&want[format!("{theirs}_d")]),
                &format!("{what} d"),
            );
            close(
                r.p.unwrap(),
                f(&want[format!("{theirs}_p")]),
                &format!("{what} p"),
            );
        }
    }
}

/// One row of a point-scoring run, read from its `rounds.csv` by this test.
struct PointRow {
    deal: u64,
    rotation: u32,
    round: u32,
    agent: String,
    won: bool,
    points: i64,
    eliminated: bool,
    game_won: bool,
}

/// Point scoring through the runner (the `jhyap` preset: games until one player is left,
/// seats rotated): the game is the unit, game wins are counted per game and arrangement,
/// players are eliminated, and games (clusters) differ in size. Every number checked here is
/// recomputed from the records by this test, with the formulas written out.
#[test]
fn point_games_are_analysed_with_the_game_as_unit() {
    let games = 12u64;
    let out = played("scenarios/variants/jhyap.yaml", Some(games), true);
    let opts = no_figures();
    let reports = dhumbal::report::report_dir(out.path(), None, false, &opts).unwrap();
    assert_eq!(reports.len(), 1);
    let s = &reports[0].analysis;
    assert!(s.info.points);
    assert_eq!(s.design.unit, "game");
    assert_eq!(s.design.units, games);

    // The records, read here from the CSV (the analysis read the Parquet dataset).
    let text = std::fs::read_to_string(reports[0].dir.join("rounds.csv")).unwrap();
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let at = |name: &str| header.iter().position(|h| *h == name).unwrap();
    let rows: Vec<PointRow> = lines
        .map(|l| {
            let c: Vec<&str> = l.split(',').collect();
            PointRow {
                deal: c[at("deal")].parse().unwrap(),
                rotation: c[at("rotation")].parse().unwrap(),
                round: c[at("round")].parse().unwrap(),
                agent: c[at("agent")].to_string(),
                won: c[at("won")] == "true",
                points: c[at("points_delta")].parse().unwrap(),
                eliminated: c[at("eliminated")] == "true",
                game_won: c[at("game_won")] == "true",
            }
        })
        .collect();
    assert!(
        rows.iter().any(|r| r.eliminated),
        "some player is eliminated"
    );
    let agents: Vec<&str> = s.agents.iter().map(|a| a.agent.as_str()).collect();
    // Per agent and game (deal): (wins, rounds) and (game wins, games started).
    let per_game = |agent: &str, value: &dyn Fn(&PointRow) -> Option<f64>| -> Vec<(f64, f64)> {
        (0..games)
            .map(|g| {
                rows.iter()
                    .filter(|r| r.deal == g && r.agent == agent)
                    .filter_map(value)
                    .fold((0.0, 0.0), |(s, n), v| (s + v, n + 1.0))
            })
            .collect()
    };
    let wins = |a: &str| per_game(a, &|r| Some(f64::from(u8::from(r.won))));
    // A game (one arrangement) is started at round 0 and won by the row with `game_won`.
    let game_wins = |a: &str| -> Vec<(f64, f64)> {
        (0..games)
            .map(|g| {
                let started = rows
                    .iter()
                    .filter(|r| r.deal == g && r.agent == a && r.round == 0)
                    .count() as f64;
                let won = rows
                    .iter()
                    .filter(|r| r.deal == g && r.agent == a && r.game_won)
                    .count() as f64;
                (won, started)
            })
            .collect()
    };
    let sizes: Vec<f64> = agents.iter().flat_map(|a| wins(a)).map(|u| u.1).collect();
    assert!(
        sizes.iter().any(|n| *n != sizes[0]),
        "games differ in size: {sizes:?}"
    );

    for (i, a) in agents.iter().enumerate() {
        let m = &s.agents[i];
        let w = wins(a);
        let (k, n) = w.iter().fold((0.0, 0.0), |(k, n), u| (k + u.0, n + u.1));
        assert_eq!((m.win.k, m.win.n), (k as u64, n as u64), "{a} wins");
        assert_eq!(m.win.ci95_method, "game");
        let want = cluster_interval(&w);
        let got = m.win.ci95.unwrap();
        close(got[0], want[0].max(0.0), &format!("{a} win by game, low"));
        close(got[1], want[1].min(1.0), &format!("{a} win by game, high"));
        // Game wins: each arrangement of a game once; the 4 rotations of a game cluster.
        let gw = game_wins(a);
        let (gk, gn) = gw.iter().fold((0.0, 0.0), |(k, n), u| (k + u.0, n + u.1));
        let games_rate = m.games.as_ref().unwrap();
        assert_eq!((games_rate.k, games_rate.n), (gk as u64, gn as u64), "{a}");
        assert_eq!(gn as u64, 4 * games, "every agent starts every arrangement");
        assert_eq!(games_rate.ci95_method, "game");
        if gk > 0.0 && gk < gn {
            let want = cluster_interval(&gw);
            close(
                games_rate.ci95.unwrap()[1],
                want[1].min(1.0),
                &format!("{a} game wins by game"),
            );
        }
        // Economic performance: minus the points taken per round.
        let pts: Vec<f64> = rows
            .iter()
            .filter(|r| r.agent == *a)
            .map(|r| -(r.points as f64))
            .collect();
        close(
            m.economic.mean.unwrap(),
            pts.iter().sum::<f64>() / pts.len() as f64,
            &format!("{a} economic"),
        );
    }
    // The per-round win rate at the stage's table mix: the table size of a round is its
    // number of rows; w_m the share of all rows at m players; per agent Σ_m w_m·p_m with the
    // linearised variance by game, G/(G−1)·Σ_g e_g², e_g = Σ_m w_m (S_mg − p_m n_mg)/N_m.
    let mut size = std::collections::HashMap::new();
    for r in &rows {
        *size.entry((r.deal, r.rotation, r.round)).or_insert(0usize) += 1;
    }
    let table = |r: &PointRow| size[&(r.deal, r.rotation, r.round)];
    let mut weight = [0.0f64; 5];
    for r in &rows {
        weight[table(r)] += 1.0 / rows.len() as f64;
    }
    let mix: Vec<(usize, f64)> = s
        .design
        .table_mix
        .iter()
        .map(|t| (t.players, t.share))
        .collect();
    let want_mix: Vec<(usize, f64)> = (1..5)
        .filter(|m| weight[*m] > 0.0)
        .map(|m| (m, weight[m]))
        .collect();
    assert_eq!(mix.len(), want_mix.len());
    for ((m, w), (wm, ww)) in mix.iter().zip(&want_mix) {
        assert_eq!(m, wm);
        close(*w, *ww, "table-size share");
    }
    assert!(mix.len() >= 2, "games reach smaller tables: {mix:?}");
    let mut standardised = 0;
    for (i, a) in agents.iter().enumerate() {
        // Per table size m: (wins, rounds) over the stage and per game.
        let cell = |m: usize, g: Option<u64>| {
            rows.iter()
                .filter(|r| r.agent == *a && table(r) == m && g.is_none_or(|g| r.deal == g))
                .fold((0.0, 0.0), |(k, n), r| {
                    (k + f64::from(u8::from(r.won)), n + 1.0)
                })
        };
        let got = s.agents[i].win_standardized.as_ref().unwrap();
        if mix.iter().any(|(m, _)| cell(*m, None).1 == 0.0) {
            assert_eq!(got.rate, None, "{a} never played some table size");
            continue;
        }
        let rate: f64 = mix
            .iter()
            .map(|(m, w)| {
                let (k, n) = cell(*m, None);
                w * k / n
            })
            .sum();
        close(
            got.rate.unwrap(),
            rate,
            &format!("{a} standardised win rate"),
        );
        let e2: f64 = (0..games)
            .map(|g| {
                mix.iter()
                    .map(|(m, w)| {
                        let (k, n) = cell(*m, None);
                        let (kg, ng) = cell(*m, Some(g));
                        w * (kg - k / n * ng) / n
                    })
                    .sum::<f64>()
                    .powi(2)
            })
            .sum();
        let gf = games as f64;
        let half = dist::t_quantile(0.975, gf - 1.0) * (gf / (gf - 1.0) * e2).sqrt();
        let ci = got.ci95.unwrap();
        close(
            ci[0],
            (rate - half).max(0.0),
            &format!("{a} standardised low"),
        );
        close(
            ci[1],
            (rate + half).min(1.0),
            &format!("{a} standardised high"),
        );
        standardised += 1;
    }
    assert!(standardised >= 2, "{standardised} agents checked");
    let total_game_wins: u64 = s.agents.iter().map(|a| a.games.as_ref().unwrap().k).sum();
    assert_eq!(
        total_game_wins,
        4 * games,
        "one winner per game and arrangement"
    );

    for (i, j) in [(0usize, 1usize), (0, 3), (2, 3)] {
        let (a, b) = (agents[i], agents[j]);
        let find = |metric: &str| {
            s.pairwise
                .iter()
                .find(|r| r.metric == metric && r.test == "paired" && r.a == a && r.b == b)
                .unwrap()
        };
        // Game wins: 4 arrangements per game for both, so the paired t-test on per-game means.
        let (ga, gb) = (game_wins(a), game_wins(b));
        let diff: Vec<f64> = ga
            .iter()
            .zip(&gb)
            .map(|(x, y)| x.0 / x.1 - y.0 / y.1)
            .collect();
        let r = find("game_win");
        assert_eq!((r.unit, r.n_a), ("game", games));
        if let Some(want) = paired(&Moments::from_slice(&diff)) {
            close(
                r.statistic.unwrap(),
                want.statistic,
                &format!("{a}-{b} game t"),
            );
            close(r.p.unwrap(), want.p, &format!("{a}-{b} game p"));
        }
        // Round wins over games of unequal size: the cluster-robust paired comparison,
        // V = G/(G−1)·Σ e_g², e_g = (S_ag − ȳ_a n_ag)/N_a − (S_bg − ȳ_b n_bg)/N_b.
        let (wa, wb) = (wins(a), wins(b));
        let tot = |w: &[(f64, f64)]| w.iter().fold((0.0, 0.0), |(s, n), u| (s + u.0, n + u.1));
        let ((sa, na), (sb, nb)) = (tot(&wa), tot(&wb));
        let (ya, yb) = (sa / na, sb / nb);
        let e2: f64 = wa
            .iter()
            .zip(&wb)
            .map(|(x, y)| ((x.0 - ya * x.1) / na - (y.0 - yb * y.1) / nb).powi(2))
            .sum();
        let g = games as f64;
        let t = (ya - yb) / (g / (g - 1.0) * e2).sqrt();
        let r = find("win");
        close(r.statistic.unwrap(), t, &format!("{a}-{b} win t"));
        close(
            r.p.unwrap(),
            dist::t_two_sided_p(t, g - 1.0).unwrap(),
            &format!("{a}-{b} win p"),
        );
        close(r.difference.unwrap(), ya - yb, "difference");
    }

    // Power after the run: the design's, of the paired test of games won over the 12 games
    // (σ_u from each pair's measured variance), and, for comparison, eq. 5 over games as
    // `plan` counts them: each agent started 4 × 12 games.
    let p = &s.power;
    assert_eq!(p.metric, "game_win");
    assert_eq!((p.design.unit, p.design.units), ("game", games));
    let alpha_k = p.alpha / p.pairs as f64;
    let mut powers = Vec::new();
    for r in s
        .pairwise
        .iter()
        .filter(|r| r.metric == "game_win" && r.test == "paired")
    {
        let Some(t) = r.statistic.filter(|t| *t != 0.0) else {
            continue;
        };
        let v = (r.difference.unwrap() / t).powi(2);
        let m = power::MeasuredDesign::new(v, games).unwrap();
        close(r.sd_units.unwrap(), (v * games as f64).sqrt(), "sd_units");
        let expected = power::ttest_paired_power(p.delta / m.sd_units, games as f64, alpha_k);
        close(
            r.power_at_delta.unwrap(),
            expected,
            "design power of a pair",
        );
        powers.push(expected);
    }
    assert_eq!(p.design.pairs_measured, powers.len());
    powers.sort_by(f64::total_cmp);
    close(
        p.design.power_at_delta.worst.unwrap(),
        powers[0],
        "least favourable pair's power",
    );
    let i = &p.independent;
    assert_eq!(i.unit, "game");
    assert_eq!(i.units_per_agent, 4 * games);
    assert!(i.rounds_per_agent > i.units_per_agent);
    let es = p.delta / (i.baseline * (1.0 - i.baseline)).sqrt();
    close(
        i.power,
        power::normal_ind_power(es, (4 * games) as f64, p.alpha, 1.0),
        "power over games if they were independent",
    );
}

/// The rows the analysis reads are the same from a run's Parquet dataset (the agent an `Enum`,
/// read by its codes) and from its `rounds.csv` (the agent by name), every field of every row.
#[test]
fn rows_from_the_dataset_and_from_csv_agree() {
    let (dir, file) = tmp_scenario(
        "s.yaml",
        "name: both\nseed: 5\ndeals: 30\nseating: permute\nrules: {preset: paper}\nagents:\n  - kind: aggressive\n  - kind: conservative\n  - kind: balanced\n  - kind: random\n",
    );
    let out = dir.path().join("out");
    play_into(&file, &out, &["--no-report", "--csv", "--threads", "2"]);
    let csv_only = dir.path().join("csv");
    std::fs::create_dir(&csv_only).unwrap();
    std::fs::copy(out.join("rounds.csv"), csv_only.join("rounds.csv")).unwrap();
    let agents: Vec<String> = ["aggressive", "conservative", "balanced", "random"]
        .map(String::from)
        .to_vec();
    let read = |d: &Path| {
        let mut rows = Vec::new();
        dhumbal::report::load::for_each_row(d, &agents, |r| rows.push(format!("{r:?}"))).unwrap();
        rows
    };
    let (parquet, csv) = (read(&out), read(&csv_only));
    assert_eq!(parquet.len(), 30 * 24 * 4);
    assert_eq!(parquet, csv);
    // Every agent is read, in its own slot.
    for slot in 0..4 {
        assert!(
            parquet
                .iter()
                .any(|r| r.starts_with(&format!("Row {{ slot: {slot},")))
        );
    }
    // The parts' `agent` column is decoded by the report itself (not through Polars): every
    // part, each row's slot as the rows above have it.
    let slots: std::collections::HashMap<&str, u8> = agents
        .iter()
        .enumerate()
        .map(|(i, a)| (a.as_str(), i as u8))
        .collect();
    let mut parts: Vec<_> = std::fs::read_dir(out.join("rounds"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    parts.sort();
    let mut decoded = Vec::new();
    for part in &parts {
        let slots = dhumbal::report::load::part_agents(part, &slots)
            .unwrap()
            .expect("a part this program wrote is decoded without Polars");
        decoded.extend(slots);
    }
    let from_rows: Vec<u8> = parquet
        .iter()
        .map(|r| {
            r["Row { slot: ".len()..]
                .split(',')
                .next()
                .unwrap()
                .parse()
                .unwrap()
        })
        .collect();
    assert_eq!(decoded, from_rows);
    // An agent the stage does not have is refused the same way from either file.
    for d in [&out, &csv_only] {
        let e = dhumbal::report::load::for_each_row(d, &agents[..3], |_| {}).unwrap_err();
        assert!(
            format!("{e:#}").contains(
                "agent `random` is not one of this stage's agents (aggressive, balanced, conservative)"
            ),
            "{e:#}"
        );
    }
}

/// A reporter whose tap makes the report's pass over each stage's records as they are played
/// (as the CLI's does), and which keeps, per stage it saw whole, that pass and the folder the
/// stage's records went to.
#[derive(Default)]
struct Tapping {
    /// Set (a stop request) once a tap has seen its first chunk, if given.
    stop: Option<std::sync::Arc<std::sync::atomic::AtomicBool>>,
    taps: std::sync::Mutex<Vec<String>>,
    done: std::sync::Mutex<Vec<(String, StageInfo, dhumbal::report::metrics::Accumulated)>>,
    dirs: std::sync::Mutex<Vec<(String, std::path::PathBuf)>>,
}

struct PassTap<'a> {
    stream: dhumbal::report::metrics::Stream,
    info: StageInfo,
    /// The units seen, chunk by chunk.
    seen: Vec<std::ops::Range<u64>>,
    units: u64,
    out: &'a Tapping,
}

impl dhumbal::runner::run::RecordTap for PassTap<'_> {
    fn records(
        &mut self,
        units: std::ops::Range<u64>,
        records: &[dhumbal::runner::records::Records],
    ) {
        assert_eq!(records.len() as u64, units.end - units.start);
        if let Some(stop) = &self.out.stop {
            stop.store(true, std::sync::atomic::Ordering::Relaxed);
        }
        self.seen.push(units);
        self.stream.push(records);
    }

    fn complete(self: Box<Self>) {
        // Every unit once, in order, from the first.
        let mut at = 0;
        for r in &self.seen {
            assert_eq!(r.start, at, "{}: chunks out of order", self.info.name);
            at = r.end;
        }
        assert_eq!(at, self.units, "{}: not every unit seen", self.info.name);
        let acc = self.stream.finish().unwrap().expect("rounds");
        let name = self.info.name.clone();
        self.out.done.lock().unwrap().push((name, self.info, acc));
    }
}

impl dhumbal::runner::run::Reporter for Tapping {
    fn tap(
        &self,
        stage: &dhumbal::scenario::Stage,
        agents: &[dhumbal::scenario::AgentDef],
    ) -> Option<Box<dyn dhumbal::runner::run::RecordTap + '_>> {
        self.taps.lock().unwrap().push(stage.name.clone());
        let info = StageInfo::of_stage(stage, agents);
        Some(Box::new(PassTap {
            stream: dhumbal::report::metrics::Stream::new(&info),
            info,
            seen: Vec::new(),
            units: stage.matches * stage.arrangements(),
            out: self,
        }))
    }

    fn intervals(
        &self,
        stage: &dhumbal::scenario::Stage,
        result: &dhumbal::runner::run::StageResult,
    ) -> Option<Vec<dhumbal::runner::summary::DesignIntervals>> {
        self.dirs
            .lock()
            .unwrap()
            .push((stage.name.clone(), result.dir.clone()));
        None
    }
}

/// Runs the scenario `body` in `out` with `opts`, `tapping` tapping every stage it may.
fn run_tapped(
    out: &Path,
    body: &str,
    opts: &dhumbal::runner::run::RunOptions,
    tapping: Tapping,
) -> (Tapping, dhumbal::runner::Result<()>) {
    let file = out.join("s.yaml");
    std::fs::write(&file, body).unwrap();
    let sc = dhumbal::scenario::load(&file, &overrides(None, &out.join("run"))).unwrap();
    let ran = dhumbal::runner::run::run(&sc, opts, &tapping).map(|_| ());
    (tapping, ran)
}

/// The report's pass made while a stage plays (the CLI's tap) gives the analysis the pass
/// over the stage's dataset gives, to the last digit of every number in `stats.json`: coin
/// and point scoring, every seating, two to four players, a stage seating an earlier one's
/// winner, parts released out of order by two threads, decisions timed for a sample of deals.
#[test]
fn the_pass_made_during_play_equals_the_pass_over_the_dataset() {
    use dhumbal::runner::run::RunOptions;
    let body = r#"name: streamed
seed: 11
output: {chunk_rounds: 64, decision_sample: 3}
stages:
  - name: fixed
    deals: 700
    agents: [{kind: aggressive}, {kind: conservative}, {kind: balanced}, {kind: random}]
  - name: rotate
    deals: 150
    seating: rotate
    rules: {players: 3}
    agents: [{kind: aggressive}, {kind: conservative}, {kind: random}]
  - name: permute
    deals: 40
    seating: permute
    agents: [{winner_of: fixed}, {kind: conservative}, {kind: balanced}, {kind: random, id: r2}]
  - name: random
    deals: 300
    seating: random
    agents: [{kind: aggressive}, {kind: conservative}, {kind: random}, {kind: balanced}]
  - name: heads-up
    deals: 400
    seating: rotate
    rules: {players: 2}
    agents: [{kind: aggressive}, {kind: conservative}]
  - name: jhyap
    games: 24
    seating: rotate
    rules: {preset: jhyap}
    agents: [{kind: aggressive}, {kind: conservative}, {kind: balanced}, {kind: random}]
  - name: jhyap-random
    games: 30
    seating: random
    rules: {preset: jhyap, players: 3}
    agents: [{kind: aggressive}, {kind: conservative}, {kind: random}]
"#;
    let dir = tmp();
    let (tapping, ran) = run_tapped(
        dir.path(),
        body,
        &RunOptions {
            threads: 2,
            ..RunOptions::default()
        },
        Tapping::default(),
    );
    ran.unwrap();
    let done = tapping.done.into_inner().unwrap();
    let dirs = tapping.dirs.into_inner().unwrap();
    let names: Vec<&str> = done.iter().map(|(n, _, _)| n.as_str()).collect();
    assert_eq!(
        names,
        [
            "fixed",
            "rotate",
            "permute",
            "random",
            "heads-up",
            "jhyap",
            "jhyap-random"
        ]
    );
    let opts = no_figures();
    for (name, info, streamed) in done {
        let (_, stage_dir) = dirs.iter().find(|(n, _)| *n == name).unwrap();
        let (from_disk, acc) = dhumbal::report::analyze_stage(stage_dir, &info, &opts).unwrap();
        let (from_play, _) = dhumbal::report::analyze_streamed(&info, streamed, &opts);
        assert!(acc.rounds > 0, "{name}");
        assert_eq!(
            serde_json::to_string_pretty(&from_play).unwrap(),
            serde_json::to_string_pretty(&from_disk).unwrap(),
            "stage `{name}`"
        );
    }
}

/// Only a stage played whole by one invocation is tapped: not a shard's share, not the rest of
/// a stage an interrupted run began, not a finished stage, not a sequential test.
#[test]
fn only_a_stage_played_whole_is_tapped() {
    use dhumbal::runner::run::{RunOptions, Shard};
    let body = r#"name: parts
seed: 4
output: {chunk_rounds: 50}
rules: {players: 2}
stages:
  - name: first
    deals: 2000
    agents: [{kind: aggressive}, {kind: random}]
  - name: second
    deals: 300
    agents: [{kind: conservative}, {kind: random}]
"#;
    let taps = |t: Tapping| t.taps.into_inner().unwrap();
    let dir = tmp();
    let (shard, ran) = run_tapped(
        dir.path(),
        body,
        &RunOptions {
            threads: 2,
            shard: Some(Shard { index: 0, count: 2 }),
            ..RunOptions::default()
        },
        Tapping::default(),
    );
    ran.unwrap();
    assert!(taps(shard).is_empty());

    // A run stopped (as by Ctrl-C) once its tap has seen the first chunk: the stage was tapped
    // while it played, but is not complete, so the tap is dropped.
    let dir = tmp();
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let (cut, ran) = run_tapped(
        dir.path(),
        body,
        &RunOptions {
            threads: 2,
            stop: stop.clone(),
            ..RunOptions::default()
        },
        Tapping {
            stop: Some(stop),
            ..Tapping::default()
        },
    );
    assert!(matches!(
        ran.unwrap_err(),
        dhumbal::runner::Error::Interrupted(_)
    ));
    assert_eq!(cut.taps.lock().unwrap().as_slice(), ["first"]);
    assert!(cut.done.into_inner().unwrap().is_empty());
    // Its rest is not tapped (its first part is on disk); the next stage, played whole, is.
    let (rest, ran) = run_tapped(
        dir.path(),
        body,
        &RunOptions {
            threads: 2,
            resume: true,
            ..RunOptions::default()
        },
        Tapping::default(),
    );
    ran.unwrap();
    assert_eq!(rest.taps.lock().unwrap().as_slice(), ["second"]);
    let done: Vec<String> = rest
        .done
        .into_inner()
        .unwrap()
        .into_iter()
        .map(|d| d.0)
        .collect();
    assert_eq!(done, ["second"]);
    assert_eq!(rest.dirs.into_inner().unwrap().len(), 2);
    // Finished: nothing is played again.
    let (again, ran) = run_tapped(
        dir.path(),
        body,
        &RunOptions {
            resume: true,
            ..RunOptions::default()
        },
        Tapping::default(),
    );
    ran.unwrap();
    assert!(taps(again).is_empty());

    // A sequential test may stop anywhere.
    let sequential = "name: seq\nseed: 2\nrules: {players: 2}\nseating: permute\nsequential: {candidate: aggressive, baseline: random, elo0: 0, elo1: 40, max_deals: 400, every: 100}\nagents: [{kind: aggressive}, {kind: random}]\n";
    let dir = tmp();
    let (seq, ran) = run_tapped(
        dir.path(),
        sequential,
        &RunOptions::default(),
        Tapping::default(),
    );
    ran.unwrap();
    assert_eq!(seq.dirs.lock().unwrap().len(), 1);
    assert!(taps(seq).is_empty());
}

/// As a user runs it: the report the run writes for the stages it plays whole (made from the
/// records as they were played) is the report `dhumbal-run report` makes from the dataset, every
/// number of `stats.json` and every table, coin and point scoring alike.
#[test]
fn the_runs_report_is_the_report_of_its_dataset() {
    let (dir, file) = tmp_scenario(
        "s.yaml",
        r#"name: both
seed: 8
output: {chunk_rounds: 96}
stages:
  - name: coins
    deals: 150
    seating: rotate
    agents: [{kind: aggressive}, {kind: conservative}, {kind: balanced}, {kind: random}]
  - name: points
    games: 12
    seating: permute
    rules: {preset: jhyap, players: 3}
    agents: [{winner_of: coins}, {kind: conservative}, {kind: random}]
"#,
    );
    let (out, again) = (dir.path().join("out"), dir.path().join("again"));
    let bin = env!("CARGO_BIN_EXE_dhumbal-run");
    let ran = std::process::Command::new(bin)
        .arg(&file)
        .args(["--threads", "2", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(ran.status.success(), "{ran:?}");
    let reported = std::process::Command::new(bin)
        .arg("report")
        .arg(&out)
        .arg("--out")
        .arg(&again)
        .output()
        .unwrap();
    assert!(reported.status.success(), "{reported:?}");
    // Where the stage's description came from (the run, or its manifest) is the one difference.
    let numbers = |path: &Path| -> String {
        std::fs::read_to_string(path)
            .unwrap()
            .lines()
            .filter(|l| !l.trim_start().starts_with("\"source\":"))
            .collect::<Vec<_>>()
            .join("\n")
    };
    for stage in ["coins", "points"] {
        let (ours, theirs) = (out.join(stage), again.join(stage));
        assert_eq!(
            numbers(&ours.join("stats.json")),
            numbers(&theirs.join("stats.json")),
            "stage `{stage}`"
        );
        let mut tables = 0;
        for table in std::fs::read_dir(ours.join("tables")).unwrap() {
            let table = table.unwrap().path();
            let name = table.file_name().unwrap();
            assert_eq!(
                std::fs::read(&table).unwrap(),
                std::fs::read(theirs.join("tables").join(name)).unwrap(),
                "stage `{stage}`: {}",
                name.to_string_lossy()
            );
            tables += 1;
        }
        assert!(tables > 5, "stage `{stage}`: {tables} tables");
    }
}
