//! Sequential stages: the GSPRT against an independent Python computation
//! (scripts/reference/sprt_fixture.py), its error rates and lengths on simulated unit scores,
//! and `sequential:` stages through the binary (the decision, the stop that threads and resumes
//! do not move, the report's block and figure, and refusals of bad input).

use std::path::Path;

use dhumbal::rng::{ChaChaSource, Purpose, RandomSource, chacha_stream};
use dhumbal::runner::folder::same_records;
use dhumbal::runner::sequential::{
    Adjusted, Decision, EloModel, Hypotheses, NELO_PER_T, Outcome, Plan, Sample, SprtConfig, llr,
    sequential,
};
use rayon::prelude::*;
use serde_json::Value;

mod common;
use common::{
    arg, has, has_all, json_file, killed, lacks, refused, run, scenario, text, tmp, tmp_scenario,
};

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
            // Through a stage's plan, as `elo_model: logistic` reaches the test.
            "logistic" => Plan {
                elo0: f("elo0"),
                elo1: f("elo1"),
                elo_model: EloModel::Logistic,
                ..plan()
            }
            .config(1, 1),
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

/// Wald's bounds and the bounds moved in for the overshoot between looks agree with the
/// Python reference at symmetric and asymmetric error rates (α = 0.05 with β = 0.2, α = 0.01
/// with β = 0.1, α = 0.1 with β = 0.01): swapping α and β anywhere fails here.
#[test]
fn bounds_agree_with_the_python_reference() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/sprt.json");
    let fixture: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let cases = fixture["bounds"].as_array().unwrap();
    assert!(cases.len() >= 4);
    for case in cases {
        let f = |k: &str| case[k].as_f64().unwrap();
        let config = SprtConfig {
            alpha: f("alpha"),
            beta: f("beta"),
            overshoot: true,
            ..SprtConfig::normalized(f("elo0"), f("elo1"), f("games_per_unit"))
        };
        let pair = |k: &str| [case[k][0].as_f64().unwrap(), case[k][1].as_f64().unwrap()];
        let (lo, hi) = config.llr_bounds();
        let want = pair("wald");
        assert!(
            (lo - want[0]).abs() < 1e-12 && (hi - want[1]).abs() < 1e-12,
            "{case}"
        );
        let every = case["every"].as_u64().unwrap();
        let (lo, hi) = config.look_bounds(&Sample::from_scores(&[0.0, 1.0]), every);
        let want = pair("corrected");
        assert!(
            (lo - want[0]).abs() < 1e-12 && (hi - want[1]).abs() < 1e-12,
            "{case}"
        );
        let plain = SprtConfig {
            overshoot: false,
            ..config
        };
        assert_eq!(plain.look_bounds(&Sample::new(), every), plain.llr_bounds());
    }
}

/// The inference after a stop (`after::Design`): the tail probabilities of the stagewise
/// ordering at several drifts, and the median-unbiased estimate with its 95% interval, agree
/// with the Python reference (Gauss-Legendre nodes in place of the trapezoid grid), for stops
/// at the upper and lower bound and at the maximum, at α = β = 0.05 with equal spacing and at
/// α = 0.05, β = 0.2 with unequal spacing and t0 < 0. The tolerances are above the grid's own
/// error (6 points per standard deviation): up to 9e-4 in a tail and 1% of a standard error in
/// an estimate or bound (a stop at the first look, with no grid, agrees to 1e-11).
#[test]
fn the_inference_after_a_stop_agrees_with_the_python_reference() {
    use dhumbal::runner::sequential::after::{Design, Side, Stop};
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/sprt.json");
    let fixture = json_file(&path);
    let cases = fixture["after"].as_array().unwrap();
    assert!(cases.len() >= 8);
    let (mut worst_tail, mut worst_estimate) = (0.0f64, 0.0f64);
    for case in cases {
        let d = &case["design"];
        let f = |v: &Value| v.as_f64().unwrap();
        let design = Design {
            t0: f(&d["t0"]),
            t1: f(&d["t1"]),
            bounds: (f(&d["bounds"][0]), f(&d["bounds"][1])),
            looks: d["looks"]
                .as_array()
                .unwrap()
                .iter()
                .map(|n| n.as_u64().unwrap())
                .collect(),
        };
        let s = &case["stop"];
        let stop = Stop {
            look: s["look"].as_u64().unwrap() as usize,
            side: match s["side"].as_str().unwrap() {
                "upper" => Side::Upper,
                "lower" => Side::Lower,
                _ => Side::Max,
            },
            sum: f(&s["sum"]),
        };
        for pair in case["tails"].as_array().unwrap() {
            let (theta, want) = (f(&pair[0]), f(&pair[1]));
            let got = design.tail(theta, &stop);
            worst_tail = worst_tail.max((got - want).abs());
            assert!(
                (got - want).abs() < 1.5e-3,
                "{stop:?} at drift {theta}: tail {got} against {want}"
            );
        }
        let spread = 1.0 / (design.looks[stop.look] as f64).sqrt();
        let inference = design.infer(&stop);
        for (got, want) in [
            (inference.estimate, f(&case["estimate"])),
            (inference.ci95[0], f(&case["ci95"][0])),
            (inference.ci95[1], f(&case["ci95"][1])),
        ] {
            worst_estimate = worst_estimate.max((got - want).abs() / spread);
            assert!(
                (got - want).abs() < 0.02 * spread,
                "{stop:?}: {inference:?} against {want}"
            );
        }
    }
    println!(
        "largest differences from the Python reference: {worst_tail:.1e} in a tail, \
         {worst_estimate:.1e} standard errors in an estimate or bound"
    );
}

/// The fixed-sample estimate of a test's unit scores (`estimate`: the mean, its normal 95%
/// interval on the sample standard deviation, as logistic and as normalized Elo) and a plan's
/// bounds on both scales at the spread the test saw (`Scales::of`, for normalized and for
/// logistic bounds) agree with the Python reference to 1e-12 (relative), at odd sizes, an
/// interval past 1 (its Elo none), a reference other than 1/2 and several games per unit.
#[test]
fn estimates_and_scales_agree_with_the_python_reference() {
    use dhumbal::runner::sequential::{Scales, estimate};
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/sprt.json");
    let fixture = json_file(&path);
    let cases = fixture["estimates"].as_array().unwrap();
    assert!(cases.len() >= 3);
    let close = |got: f64, want: &Value, what: &str| {
        let want = want.as_f64().unwrap();
        assert!(
            (got - want).abs() <= 1e-12 * want.abs().max(1.0),
            "{what}: {got} against {want}"
        );
    };
    let maybe = |got: Option<f64>, want: &Value, what: &str| match (got, want.as_f64()) {
        (Some(g), Some(_)) => close(g, want, what),
        (None, None) => {}
        _ => panic!("{what}: {got:?} against {want}"),
    };
    for case in cases {
        let scores: Vec<f64> = case["scores"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_f64().unwrap())
            .collect();
        let reference = case["reference"].as_f64().unwrap();
        let m = case["games_per_unit"].as_f64().unwrap();
        let e = estimate(&scores, reference, m).unwrap();
        assert_eq!(e.units, scores.len() as u64);
        close(e.score, &case["score"], "score");
        let ci = e.score_ci95.unwrap();
        close(ci[0], &case["score_ci95"][0], "score low");
        close(ci[1], &case["score_ci95"][1], "score high");
        maybe(e.elo, &case["elo"], "Elo");
        maybe(e.elo_ci95[0], &case["elo_ci95"][0], "Elo low");
        maybe(e.elo_ci95[1], &case["elo_ci95"][1], "Elo high");
        close(e.nelo.unwrap(), &case["nelo"], "nElo");
        let nci = e.nelo_ci95.unwrap();
        close(nci[0], &case["nelo_ci95"][0], "nElo low");
        close(nci[1], &case["nelo_ci95"][1], "nElo high");
        // The population standard deviation, as the test's normalized Elo uses it.
        let sd = Sample::from_scores(&scores).mean_sd().unwrap().1;
        let nelo = Sample::from_scores(&scores).normalized_elo(reference, m);
        close(nelo.unwrap(), &case["nelo"], "Sample's nElo");
        let bounds = &case["bounds"];
        for (model, key) in [
            (EloModel::Normalized, "normalized_bounds_as_elo"),
            (EloModel::Logistic, "logistic_bounds_as_nelo"),
        ] {
            let plan = Plan {
                elo0: bounds[0].as_f64().unwrap(),
                elo1: bounds[1].as_f64().unwrap(),
                elo_model: model,
                ..plan()
            };
            let s = Scales::of(&plan, sd, m).unwrap();
            close(s.per_game_sd, &case["per_game_sd"], "per-game sd");
            for i in 0..2 {
                match model {
                    EloModel::Normalized => {
                        maybe(s.elo[i], &case[key][i], key);
                        close(s.nelo[i], &bounds[i], "nElo bound");
                    }
                    EloModel::Logistic => {
                        close(s.nelo[i], &case[key][i], key);
                        maybe(s.elo[i], &bounds[i], "Elo bound");
                    }
                }
            }
        }
    }
    // One unit: no spread, so no interval and no normalized Elo; no units, no estimate.
    let one = estimate(&[0.75], 0.5, 2.0).unwrap();
    assert_eq!(
        (one.score_ci95, one.nelo, one.nelo_ci95),
        (None, None, None)
    );
    assert!(estimate(&[], 0.5, 2.0).is_none());
}

/// A look at or beyond a bound decides (`verdict`), and `decide:` splits α over the agents
/// that could be named (`decide_alpha`: α/agents, as for two below two): with α unsplit a
/// four-agent `decide:` stage's false "decided" rate would be up to four times α.
#[test]
fn a_look_at_a_bound_decides_and_decide_splits_alpha() {
    use dhumbal::runner::sequential::{decide_alpha, verdict};
    let b = (-1.5, 2.5);
    assert_eq!(verdict(2.5, b, false), Some(Decision::AcceptH1));
    assert_eq!(verdict(-1.5, b, false), Some(Decision::AcceptH0));
    assert_eq!(verdict(2.4, b, false), None);
    assert_eq!(verdict(-1.4, b, true), Some(Decision::Undecided));
    for (alpha, agents, want) in [
        (0.05, 4, 0.0125),
        (0.05, 5, 0.01),
        (0.1, 2, 0.05),
        (0.1, 1, 0.05),
    ] {
        let got = decide_alpha(alpha, agents);
        assert!((got - want).abs() < 1e-15, "{agents} agents: {got}");
    }
    // Through a stage's plan: the comparison's α and its Wald bounds.
    let plan = Plan {
        alpha: 0.05,
        beta: 0.2,
        decide: true,
        ..plan()
    };
    let config = plan.decide_config(2, 1, 4);
    assert!((config.alpha - 0.0125).abs() < 1e-15 && config.beta == 0.2);
    let (lo, hi) = config.llr_bounds();
    assert!((lo - (0.2f64 / 0.9875).ln()).abs() < 1e-12 && (hi - 64f64.ln()).abs() < 1e-12);
}

/// A sequential plan of `a` against `b` (nElo 0 against 10, α = β = 0.05, looks every 100).
fn plan() -> Plan {
    Plan {
        candidate: "a".into(),
        baseline: "b".into(),
        candidate_slot: 0,
        baseline_slot: 1,
        elo0: 0.0,
        elo1: 10.0,
        elo_model: EloModel::Normalized,
        overshoot: true,
        alpha: 0.05,
        beta: 0.05,
        every: 100,
        decide: false,
    }
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

/// What simulated tests concluded.
struct Rates {
    h1: u64,
    h0: u64,
    undecided: u64,
    mean_length: f64,
}

/// The unit scores of a simulation, drawn from a run's stream.
type Units<'a> = &'a (dyn Fn(&mut ChaChaSource) -> f64 + Sync);

/// `runs` tests of `config`, looked at every `every` units up to `max`, on units drawn by
/// `unit` (run `r` from stream `r` of `salt`); each run's course is handed to `keep`.
fn simulate_with(
    config: &SprtConfig,
    (every, max): (u64, u64),
    unit: Units<'_>,
    salt: u64,
    runs: u64,
    keep: &(dyn Fn(&[f64], &dhumbal::runner::sequential::Sequential) + Sync),
) -> Rates {
    let outcomes: Vec<(Decision, u64)> = (0..runs)
        .into_par_iter()
        .map(|run| {
            // The run's units in order, drawn ahead in blocks: units past the stop are never
            // looked at.
            let mut rng = chacha_stream(salt, Purpose::Search, run);
            let mut scores = Vec::new();
            let mut block = 1024;
            loop {
                while scores.len() < block.min(max as usize) {
                    scores.push(unit(&mut rng));
                }
                let s = sequential(&scores, config, every, max).unwrap();
                if s.decision != Decision::Continue {
                    keep(&scores[..s.units as usize], &s);
                    return (s.decision, s.units);
                }
                block *= 2;
            }
        })
        .collect();
    let count = |d: Decision| outcomes.iter().filter(|o| o.0 == d).count() as u64;
    Rates {
        h1: count(Decision::AcceptH1),
        h0: count(Decision::AcceptH0),
        undecided: count(Decision::Undecided),
        mean_length: outcomes.iter().map(|o| o.1 as f64).sum::<f64>() / runs as f64,
    }
}

/// [`simulate_with`] on heads-up units of normalized Elo `nelo`.
fn simulate(config: &SprtConfig, looks: (u64, u64), nelo: f64, salt: u64, runs: u64) -> Rates {
    let unit = |rng: &mut ChaChaSource| draw_unit(rng, 0.3, nelo);
    simulate_with(config, looks, &unit, salt, runs, &|_, _| {})
}

/// 10,000 simulated tests under H0 and 10,000 under H1 (elo0 0, elo1 40, α = β = 0.05, a look
/// every 5 units, Wald's bounds as they are): H1 is accepted under H0 in at most α of them
/// (within three Monte Carlo standard errors), H1 is accepted under H1 in about 1 − β of them,
/// and the mean length is below the fixed-sample size of the same power.
#[test]
fn simulated_error_rates_and_lengths() {
    let (elo0, elo1) = (0.0, 40.0);
    let config = SprtConfig::normalized(elo0, elo1, 2.0);
    let runs = 10_000u64;
    let start = std::time::Instant::now();
    let under_h0 = simulate(&config, (5, 20_000), elo0, 1, runs);
    let under_h1 = simulate(&config, (5, 20_000), elo1, 2, runs);
    // The fixed-sample test of the same error rates: n = ((z_(1-α) + z_(1-β)) / t1)², t1 the
    // per-unit t-value under H1.
    let z = 1.644_853_626_951_472_2;
    let t1 = elo1 / NELO_PER_T * 2f64.sqrt();
    let fixed = ((z + z) / t1).powi(2);
    let n = runs as f64;
    let (alpha, beta) = (under_h0.h1 as f64 / n, under_h1.h0 as f64 / n);
    println!(
        "under H0 (nElo {elo0}): H1 {}, H0 {}, undecided {} of {runs}: false H1 rate \
         {alpha:.4} (alpha 0.05); mean length {:.1} units",
        under_h0.h1, under_h0.h0, under_h0.undecided, under_h0.mean_length
    );
    println!(
        "under H1 (nElo {elo1}): H1 {}, H0 {}, undecided {} of {runs}: power {:.4} (1 - beta \
         0.95); mean length {:.1} units",
        under_h1.h1,
        under_h1.h0,
        under_h1.undecided,
        under_h1.h1 as f64 / n,
        under_h1.mean_length
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
        under_h0.mean_length < fixed && under_h1.mean_length < fixed,
        "{} {} against {fixed}",
        under_h0.mean_length,
        under_h1.mean_length
    );
    assert_eq!(under_h0.undecided + under_h1.undecided, 0);
}

/// α = 0.05 and β = 0.2 (a common choice when a false positive costs more than a missed
/// gain), heads-up nElo 0 against 20, a look every 50 units: with the overshoot correction the
/// achieved rates are near both targets (each within three Monte Carlo standard errors above
/// it, and not far below), and without it they are smaller. Swapping α and β in Wald's bounds
/// (or in the correction) would put the false-H1 rate far above 0.05.
#[test]
fn asymmetric_error_rates_are_kept_with_the_overshoot_correction() {
    let config = SprtConfig {
        alpha: 0.05,
        beta: 0.2,
        overshoot: true,
        ..SprtConfig::normalized(0.0, 20.0, 2.0)
    };
    let (lo, hi) = config.llr_bounds();
    assert!((lo - (0.2f64 / 0.95).ln()).abs() < 1e-12 && (hi - 16f64.ln()).abs() < 1e-12);
    let runs = 6_000u64;
    let n = runs as f64;
    let looks = (50, 100_000);
    let under_h0 = simulate(&config, looks, 0.0, 11, runs);
    let under_h1 = simulate(&config, looks, 20.0, 12, runs);
    let plain = SprtConfig {
        overshoot: false,
        ..config
    };
    let plain_h0 = simulate(&plain, looks, 0.0, 11, runs);
    let plain_h1 = simulate(&plain, looks, 20.0, 12, runs);
    let (alpha, beta) = (under_h0.h1 as f64 / n, under_h1.h0 as f64 / n);
    let (plain_alpha, plain_beta) = (plain_h0.h1 as f64 / n, plain_h1.h0 as f64 / n);
    println!(
        "corrected: alpha {alpha:.4} (0.05), beta {beta:.4} (0.2), mean lengths {:.0} and {:.0} \
         units; Wald's bounds alone: alpha {plain_alpha:.4}, beta {plain_beta:.4}, mean lengths \
         {:.0} and {:.0}",
        under_h0.mean_length, under_h1.mean_length, plain_h0.mean_length, plain_h1.mean_length
    );
    let se = |p: f64| (p * (1.0 - p) / n).sqrt();
    assert!(alpha <= 0.05 + 3.0 * se(0.05), "false H1 rate {alpha}");
    assert!(beta <= 0.2 + 3.0 * se(0.2), "false H0 rate {beta}");
    assert!(
        alpha >= 0.035 && beta >= 0.15,
        "{alpha} {beta}: too conservative"
    );
    assert!(plain_alpha < alpha && plain_beta < beta);
    assert!(under_h0.mean_length < plain_h0.mean_length);
}

/// After a stop, the median-unbiased estimate's 95% interval (`Adjusted`) covers the true
/// normalized Elo in about 95% of simulated tests, across true values below, between and above
/// the bounds; the fixed-sample interval of the same tests is printed beside it.
#[test]
fn the_interval_after_a_stop_covers_the_truth() {
    use std::sync::Mutex;
    let config = SprtConfig {
        overshoot: true,
        ..SprtConfig::normalized(0.0, 20.0, 2.0)
    };
    let (every, max) = (50u64, 5_000u64);
    let runs = 300u64;
    let mut covered = 0u64;
    let mut naive_covered = 0u64;
    let mut total = 0u64;
    for (i, truth) in [-10.0, 0.0, 10.0, 20.0, 30.0].into_iter().enumerate() {
        let hits = Mutex::new((0u64, 0u64));
        simulate_with(
            &config,
            (every, max),
            &|rng| draw_unit(rng, 0.3, truth),
            100 + i as u64,
            runs,
            &|scores, course| {
                let adjusted = Adjusted::of(&config, course, scores, every, max).unwrap();
                let naive = dhumbal::runner::sequential::estimate(scores, 0.5, 2.0).unwrap();
                let inside = |ci: [f64; 2]| ci[0] <= truth && truth <= ci[1];
                let mut h = hits.lock().unwrap();
                h.0 += u64::from(inside(adjusted.nelo_ci95));
                h.1 += u64::from(naive.nelo_ci95.is_some_and(inside));
            },
        );
        let (a, b) = hits.into_inner().unwrap();
        println!(
            "true nElo {truth:+}: the interval after the stop covers it in {a} of {runs}, the \
             fixed-sample interval in {b}"
        );
        assert!(
            a as f64 / runs as f64 >= 0.90,
            "nElo {truth}: {a} of {runs}"
        );
        covered += a;
        naive_covered += b;
        total += runs;
    }
    let rate = covered as f64 / total as f64;
    println!(
        "coverage {rate:.3} (fixed-sample {:.3}) over {total} tests",
        naive_covered as f64 / total as f64
    );
    let se = (0.95f64 * 0.05 / total as f64).sqrt();
    assert!((rate - 0.95).abs() <= 3.0 * se, "coverage {rate}");
}

/// `decide:` with two equally strong agents at the top (heads-up; three agents with a weaker
/// third; four with two weaker): the stage is falsely "decided" (H1: a leader that is not
/// stronger than its equal) in at most α of simulated stages, with the leader chosen again at
/// every look. Each game has one winner, drawn from the agents' strengths; a match is a game
/// under each of the `k` arrangements.
#[test]
fn decide_keeps_its_alpha_with_two_equal_leaders() {
    use dhumbal::runner::sequential::{decide_look, verdict};
    let plan = Plan {
        elo1: 20.0,
        decide: true,
        ..plan()
    };
    let max = 3_000u64;
    let runs = 3_000u64;
    for (salt, strengths) in [
        vec![0.5, 0.5],
        vec![0.4, 0.4, 0.2],
        vec![0.3, 0.3, 0.2, 0.2],
    ]
    .into_iter()
    .enumerate()
    {
        let k = strengths.len();
        let config = plan.decide_config(k as u64, 1, k);
        let decided = (0..runs)
            .into_par_iter()
            .filter(|&run| {
                let mut rng = chacha_stream(200 + salt as u64, Purpose::Search, run);
                // Winners of each match's k games.
                let mut games: Vec<Vec<usize>> = Vec::new();
                let mut wins = vec![0u64; k];
                let mut to = 0;
                loop {
                    let next = (to + plan.every).min(max);
                    while (games.len() as u64) < next {
                        let match_games: Vec<usize> = (0..k)
                            .map(|_| {
                                let u: f64 = rng.random();
                                let mut acc = 0.0;
                                strengths
                                    .iter()
                                    .position(|p| {
                                        acc += p;
                                        u < acc
                                    })
                                    .unwrap_or(k - 1)
                            })
                            .collect();
                        match_games.iter().for_each(|&w| wins[w] += 1);
                        games.push(match_games);
                    }
                    to = next;
                    // The leader: the most wins, the first on a tie (the winner rule's order).
                    let leader = (0..k)
                        .max_by_key(|&i| (wins[i], std::cmp::Reverse(i)))
                        .unwrap();
                    let look = decide_look(
                        leader,
                        k,
                        &config,
                        plan.every,
                        |j| -> Result<Vec<f64>, dhumbal::runner::sequential::SprtError> {
                            Ok(games
                                .iter()
                                .map(|g| {
                                    g.iter()
                                        .map(|&w| match w {
                                            w if w == leader => 1.0,
                                            w if w == j => 0.0,
                                            _ => 0.5,
                                        })
                                        .sum::<f64>()
                                        / k as f64
                                })
                                .collect())
                        },
                        |e| e,
                    )
                    .unwrap();
                    match verdict(look.llr, look.bounds, to == max) {
                        Some(d) => return d == Decision::AcceptH1,
                        None => continue,
                    }
                }
            })
            .count() as f64;
        let rate = decided / runs as f64;
        let se = (0.05f64 * 0.95 / runs as f64).sqrt();
        println!("{k} agents {strengths:?}: falsely decided in {rate:.4} of {runs} (alpha 0.05)");
        assert!(rate <= 0.05 + 3.0 * se, "{k} agents: {rate}");
    }
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
    lacks(&t, "stages.0.deals");
    let file = scenario(dir.path(), "ok.yaml", &base);
    let out = dir.path().join("sharded");
    let t = refused(&[arg(&file), "--out", arg(&out), "--shard", "0/2"]);
    has(&t, "cannot be split into shards");
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

/// A unit of `m` games among `k` players in which the candidate wins each game with chance
/// `1/k + d` and the baseline with `1/k - d` (the others share the rest): games independent,
/// a game another player won scoring 1/2.
fn design_unit(rng: &mut impl RandomSource, k: usize, m: usize, d: f64) -> f64 {
    let w = 1.0 / k as f64;
    let mut sum = 0.0;
    for _ in 0..m {
        let u: f64 = rng.random();
        sum += if u < w + d {
            1.0
        } else if u < 2.0 * w {
            0.0
        } else {
            0.5
        };
    }
    sum / m as f64
}

/// The `d` of [`design_unit`] whose per-game normalized Elo is `nelo` among `k` players.
fn design_lead(k: usize, nelo: f64) -> f64 {
    let w = 1.0 / k as f64;
    let nelo_of = |d: f64| {
        let var =
            (w + d) * (0.5 - d).powi(2) + (w - d) * (0.5 + d).powi(2) + (1.0 - 2.0 * w) * d * d;
        NELO_PER_T * d / var.sqrt()
    };
    let (mut lo, mut hi) = (0.0, w);
    for _ in 0..100 {
        let mid = 0.5 * (lo + hi);
        if nelo_of(mid) < nelo {
            lo = mid
        } else {
            hi = mid
        }
    }
    0.5 * (lo + hi)
}

/// The table of docs/analysis.md ("Sequential tests"): achieved α, β and mean lengths of a
/// test of nElo 0 against 10 at α = β = 0.05, by design (players, seating, looks), with and
/// without the overshoot correction, on simulated units of independent games. Run by
/// `scripts/sprt-table.sh` (about 20 s on 2 cores); it asserts that the corrected rates stay
/// within three Monte Carlo standard errors of their targets.
#[test]
fn error_rates_and_lengths_by_design() {
    let runs = 2_000u64;
    let designs: [(usize, &str, usize, u64); 10] = [
        (2, "rotate", 2, 10),
        (2, "rotate", 2, 100),
        (3, "rotate", 3, 10),
        (3, "rotate", 3, 100),
        (3, "permute", 6, 10),
        (3, "permute", 6, 100),
        (4, "rotate", 4, 10),
        (4, "rotate", 4, 100),
        (4, "permute", 24, 10),
        (4, "permute", 24, 100),
    ];
    println!(
        "| players | seating | games per deal | look every | alpha | beta | mean deals (nElo 0) \
         | mean deals (nElo 10) | Wald's bounds alone: alpha, beta, mean deals (nElo 0) |"
    );
    println!("|---:|---|---:|---:|---:|---:|---:|---:|---|");
    let n = runs as f64;
    let se = (0.05f64 * 0.95 / n).sqrt();
    for (row, &(k, seating, m, every)) in designs.iter().enumerate() {
        let run = |overshoot: bool, nelo: f64, salt: u64| -> Rates {
            let config = SprtConfig {
                overshoot,
                ..SprtConfig::normalized(0.0, 10.0, m as f64)
            };
            let d = design_lead(k, nelo);
            let unit = |rng: &mut ChaChaSource| design_unit(rng, k, m, d);
            simulate_with(&config, (every, 1_000_000), &unit, salt, runs, &|_, _| {})
        };
        let salt = 1_000 + 10 * row as u64;
        let (h0, h1) = (run(true, 0.0, salt), run(true, 10.0, salt + 1));
        let (p0, p1) = (run(false, 0.0, salt), run(false, 10.0, salt + 1));
        let (alpha, beta) = (h0.h1 as f64 / n, h1.h0 as f64 / n);
        println!(
            "| {k} | {seating} | {m} | {every} | {:.1}% | {:.1}% | {:.0} | {:.0} | {:.1}%, {:.1}%, {:.0} |",
            100.0 * alpha,
            100.0 * beta,
            h0.mean_length,
            h1.mean_length,
            100.0 * p0.h1 as f64 / n,
            100.0 * p1.h0 as f64 / n,
            p0.mean_length,
        );
        assert!(
            alpha <= 0.05 + 3.0 * se && beta <= 0.05 + 3.0 * se,
            "{k} {seating} {every}"
        );
        assert_eq!(h0.undecided + h1.undecided, 0);
    }
}
