//! The sequential test against an independent Python computation
//! (scripts/reference/sprt_fixture.py: the LLR, Wald's bounds with and without the overshoot
//! correction, the estimate and the interval after a stop), and its error rates and lengths on
//! simulated unit scores (`sequential:` at α = β = 0.05 and at α = 0.05, β = 0.2; `decide:`
//! with two equal leaders; an `exploit:` entry's test of gain > margin). The stages that run it are tested in the workspace's
//! tests/sequential.rs.

use dhumbal_game::rng::{ChaChaSource, Purpose, RandomSource, chacha_stream};
use dhumbal_stats::sequential::{
    Adjusted, Decision, EloModel, Hypotheses, NELO_PER_T, Plan, Sample, Scales, SprtConfig,
    estimate, llr, sequential,
};
use rayon::prelude::*;
use serde_json::Value;

mod reference;
use reference::fixture;

/// The LLR of every fixture case agrees with the Python reference to 1e-9.
#[test]
fn llr_agrees_with_the_python_reference() {
    let fixture = fixture("sprt.json");
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
    let fixture = fixture("sprt.json");
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
    use dhumbal_stats::sequential::after::{Design, Side, Stop};
    let fixture = fixture("sprt.json");
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
    use dhumbal_stats::sequential::{Scales, estimate};
    let fixture = fixture("sprt.json");
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
    use dhumbal_stats::sequential::{decide_alpha, verdict};
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

/// A plan's test: one game per arrangement and round, its error rates, the overshoot
/// correction and its bounds as asked; logistic bounds as score differences from 1/2.
#[test]
fn a_plans_configuration() {
    let plan = || Plan {
        beta: 0.2,
        ..plan()
    };
    let c = plan().config(2, 3);
    assert_eq!(c.games_per_unit, 6.0);
    assert_eq!(
        (c.alpha, c.beta, c.reference, c.range, c.overshoot),
        (0.05, 0.2, 0.5, (0.0, 1.0), true)
    );
    assert_eq!(
        c.hypotheses,
        Hypotheses::NormalizedElo {
            elo0: 0.0,
            elo1: 10.0
        }
    );
    assert_eq!(plan().config(4, 0).games_per_unit, 4.0);
    let logistic = Plan {
        elo_model: EloModel::Logistic,
        ..plan()
    };
    let Hypotheses::ScoreDifference { d0, d1 } = logistic.config(2, 1).hypotheses else {
        panic!("logistic bounds are score differences");
    };
    assert_eq!(d0, 0.0);
    assert!((d1 - (1.0 / (1.0 + 10f64.powf(-10.0 / 400.0)) - 0.5)).abs() < 1e-15);
}

/// Without a spread there is no Elo per game to speak of: no scales, no normalized Elo
/// and no interval on it.
#[test]
fn no_spread_no_normalized_elo() {
    assert_eq!(Scales::of(&plan(), 0.0, 2.0), None);
    assert_eq!(Scales::of(&plan(), f64::NAN, 2.0), None);
    assert!(Scales::of(&plan(), 0.3, 2.0).is_some());
    let e = estimate(&[0.5, 0.5, 0.5], 0.5, 2.0).unwrap();
    assert_eq!((e.nelo, e.nelo_ci95), (None, None));
    assert_eq!(e.score, 0.5);
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
    keep: &(dyn Fn(&[f64], &dhumbal_stats::sequential::Sequential) + Sync),
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

/// The test of an `exploit:` entry's gain (scores in [-1, 1], reference 0, H0 gain = margin,
/// H1 gain = margin + delta, differences of shares), as the runner sets it up: heads-up
/// per-deal gains of -1/2, 0 and +1/2 (the responder won one rotation more or fewer than the
/// target's self-play), margin 0.02, delta 0.05, alpha 0.05, beta 0.2, a look every 25 deals.
/// Under H0 H1 is accepted in at most alpha of 10,000 simulated tests, under H1 H0 in at most
/// beta (each within three Monte Carlo standard errors), neither far below: the margin is
/// where the test is centred, not 0, and the asymmetric rates are kept.
#[test]
fn the_test_of_an_exploit_gain_keeps_its_error_rates() {
    let (margin, delta) = (0.02, 0.05);
    let config = SprtConfig {
        hypotheses: Hypotheses::ScoreDifference {
            d0: margin,
            d1: margin + delta,
        },
        alpha: 0.05,
        beta: 0.2,
        reference: 0.0,
        games_per_unit: 1.0,
        range: (-1.0, 1.0),
        overshoot: true,
    };
    // P(+1/2) = 0.3 + gain, P(-1/2) = 0.3 - gain, P(0) = 0.4: the mean is the gain.
    let gain_unit = |gain: f64| {
        move |rng: &mut ChaChaSource| {
            let u = rng.random();
            if u < 0.3 + gain {
                0.5
            } else if u < 0.6 {
                -0.5
            } else {
                0.0
            }
        }
    };
    let runs = 10_000u64;
    let n = runs as f64;
    let looks = (25, 100_000);
    let at_h0 = gain_unit(margin);
    let at_h1 = gain_unit(margin + delta);
    let under_h0 = simulate_with(&config, looks, &at_h0, 21, runs, &|_, _| {});
    let under_h1 = simulate_with(&config, looks, &at_h1, 22, runs, &|_, _| {});
    // At no gain at all the test is nearly always right.
    let at_zero = gain_unit(0.0);
    let under_zero = simulate_with(&config, looks, &at_zero, 23, runs, &|_, _| {});
    let (alpha, beta) = (under_h0.h1 as f64 / n, under_h1.h0 as f64 / n);
    println!(
        "gain test: alpha {alpha:.4} (0.05), beta {beta:.4} (0.2), mean lengths {:.0} and {:.0} \
         deals; at gain 0: H1 in {} of {runs}",
        under_h0.mean_length, under_h1.mean_length, under_zero.h1
    );
    let se = |p: f64| (p * (1.0 - p) / n).sqrt();
    assert!(alpha <= 0.05 + 3.0 * se(0.05), "false H1 rate {alpha}");
    assert!(beta <= 0.2 + 3.0 * se(0.2), "false H0 rate {beta}");
    assert!(
        alpha >= 0.03 && beta >= 0.14,
        "{alpha} {beta}: too conservative"
    );
    assert!((under_zero.h1 as f64 / n) < 0.01, "{}", under_zero.h1);
    assert_eq!(
        under_h0.undecided + under_h1.undecided + under_zero.undecided,
        0
    );
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
                let naive = dhumbal_stats::sequential::estimate(scores, 0.5, 2.0).unwrap();
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
    use dhumbal_stats::sequential::{decide_look, verdict};
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
                        |j| -> Result<Vec<f64>, dhumbal_stats::sequential::SprtError> {
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
