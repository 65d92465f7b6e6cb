//! The rating model against choix (scripts/reference/ratings_fixture.py): Plackett-Luce and
//! Bradley-Terry fits, the anchor, invariance to the agents' order, the refusal of data that are
//! not strongly connected, and the bootstrap (reproducible on any thread count, resampled within
//! strata). Ratings from records are tested in the workspace's tests/ratings.rs.

use dhumbal_stats::ratings::{self, Data, Game, Model, RatingError, RatingOptions, Unit};
use serde_json::Value;

mod reference;
use reference::f64s;

fn fixture() -> Value {
    reference::fixture("ratings.json")
}

fn units_of(v: &Value) -> Vec<Unit> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|unit| {
            unit.as_array()
                .unwrap()
                .iter()
                .map(|g| Game {
                    agents: g["agents"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .map(|a| a.as_u64().unwrap() as usize)
                        .collect(),
                    places: g["places"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .map(|p| p.as_u64().unwrap() as u32)
                        .collect(),
                })
                .collect()
        })
        .collect()
}

fn model_of(name: &str) -> Model {
    match name {
        "plackett_luce" => Model::PlackettLuce,
        "bradley_terry" => Model::BradleyTerry,
        m => panic!("unknown model {m}"),
    }
}

/// Both models, with ties, at alpha 0 and with a penalty: the Rust fit equals choix's to 1e-6.
#[test]
fn fit_matches_choix() {
    let f = fixture();
    let agents = f["agents"].as_u64().unwrap() as usize;
    let cases = f["cases"].as_array().unwrap();
    assert_eq!(cases.len(), 8, "2 data sets x 2 models x 2 penalties");
    let mut ties = 0;
    for case in cases {
        let units = units_of(&f["datasets"][case["data"].as_str().unwrap()]);
        ties += units
            .iter()
            .flatten()
            .filter(|g| {
                let mut p = g.places.clone();
                p.sort_unstable();
                p.windows(2).any(|w| w[0] == w[1])
            })
            .count();
        let model = model_of(case["model"].as_str().unwrap());
        let alpha = case["alpha"].as_f64().unwrap();
        let want = f64s(&case["theta"]);
        let got = ratings::fit(agents, &units, model, alpha).unwrap();
        let worst = got
            .iter()
            .zip(&want)
            .map(|(a, b)| (a - b).abs())
            .fold(0.0, f64::max);
        eprintln!(
            "{} {model:?} alpha {alpha}: largest |rust - choix| = {worst:.1e}",
            case["data"]
        );
        assert!(
            worst < 1e-6,
            "{} {:?} alpha {alpha}: |rust - choix| = {worst:e}\n{got:?}\n{want:?}",
            case["data"],
            model
        );
    }
    assert!(
        ties > 100,
        "the fixture must exercise ties ({ties} tied games)"
    );
    // The penalty moves the estimates by more than the tolerance: a penalty applied wrongly
    // would show.
    let theta = |i: usize| -> Vec<f64> { f64s(&cases[i]["theta"]) };
    let moved = theta(0)
        .iter()
        .zip(theta(1))
        .map(|(a, b)| (a - b).abs())
        .fold(0.0, f64::max);
    assert!(moved > 1e-4, "alpha moves the fit by {moved:e} only");
}

/// Two-player games: Plackett-Luce and Bradley-Terry are the same model.
#[test]
fn two_player_models_agree() {
    let f = fixture();
    let units = units_of(&f["datasets"]["two_player"]);
    let pl = ratings::fit(6, &units, Model::PlackettLuce, 0.0).unwrap();
    let bt = ratings::fit(6, &units, Model::BradleyTerry, 0.0).unwrap();
    for (a, b) in pl.iter().zip(&bt) {
        assert!((a - b).abs() < 1e-9, "{pl:?} {bt:?}");
    }
}

fn opts(anchor: Option<usize>, resamples: usize, threads: usize) -> RatingOptions {
    RatingOptions {
        model: Model::PlackettLuce,
        anchor,
        alpha: 0.0,
        resamples,
        confidence: 0.95,
        seed: 7,
        threads,
    }
}

#[test]
fn the_anchor_is_zero() {
    let units = units_of(&fixture()["datasets"]["multi"]);
    for anchor in [0, 3, 5] {
        let r = ratings::rate(6, &units, &opts(Some(anchor), 50, 0)).unwrap();
        let a = &r.ratings[anchor];
        assert_eq!((a.elo, a.low, a.high), (0.0, Some(0.0), Some(0.0)));
        // The others are differences of log-strengths on the Elo scale.
        let theta = ratings::fit(6, &units, Model::PlackettLuce, 0.0).unwrap();
        for (i, x) in r.ratings.iter().enumerate() {
            let want = (theta[i] - theta[anchor]) * ratings::ELO_PER_NAT;
            assert!((x.elo - want).abs() < 1e-9);
            let (lo, hi) = (x.low.unwrap(), x.high.unwrap());
            assert!(lo <= x.elo + 1e-9 && x.elo <= hi + 1e-9, "{x:?}");
        }
    }
}

/// Renaming the agents (a permutation of their indices) renames the ratings and changes
/// nothing else: point estimates and bootstrap intervals.
#[test]
fn invariant_to_agent_order() {
    let units = units_of(&fixture()["datasets"]["multi"]);
    let perm = [4, 2, 5, 0, 1, 3]; // agent i becomes perm[i]
    let renamed: Vec<Unit> = units
        .iter()
        .map(|u| {
            u.iter()
                .map(|g| Game {
                    agents: g.agents.iter().map(|&a| perm[a]).collect(),
                    places: g.places.clone(),
                })
                .collect()
        })
        .collect();
    for model in [Model::PlackettLuce, Model::BradleyTerry] {
        let mut o = opts(Some(1), 100, 0);
        o.model = model;
        let a = ratings::rate(6, &units, &o).unwrap();
        o.anchor = Some(perm[1]);
        let b = ratings::rate(6, &renamed, &o).unwrap();
        for (x, &p) in a.ratings.iter().zip(&perm) {
            let y = &b.ratings[p];
            assert!((x.elo - y.elo).abs() < 1e-9, "{model:?} {x:?} {y:?}");
            assert!((x.low.unwrap() - y.low.unwrap()).abs() < 1e-9);
            assert!((x.high.unwrap() - y.high.unwrap()).abs() < 1e-9);
            assert_eq!(x.games, y.games);
        }
    }
}

fn game(agents: &[usize], places: &[u32]) -> Game {
    Game {
        agents: agents.to_vec(),
        places: places.to_vec(),
    }
}

/// Agent 0 never finishes behind 1 or 2: no maximum-likelihood rating, and the message says
/// who; a penalty gives finite ratings.
#[test]
fn refuses_when_not_strongly_connected() {
    let units: Vec<Unit> = vec![
        vec![game(&[0, 1, 2], &[0, 1, 2]), game(&[1, 2, 0], &[2, 1, 0])],
        vec![game(&[0, 1, 2], &[0, 1, 1])],
        vec![game(&[2, 0, 1], &[0, 1, 1])], // 0 tied with 1: still never behind it ...
    ];
    // ... a tie is half a win each way, so 0 and 1 are connected; 2 beat 0 once.
    assert!(ratings::fit(3, &units, Model::PlackettLuce, 0.0).is_ok());
    let strict: Vec<Unit> = vec![
        vec![game(&[0, 1, 2], &[0, 1, 2]), game(&[1, 2, 0], &[1, 2, 0])],
        vec![game(&[0, 1, 2], &[0, 2, 1])],
    ];
    for model in [Model::PlackettLuce, Model::BradleyTerry] {
        let e = ratings::fit(3, &strict, model, 0.0).unwrap_err();
        assert_eq!(
            e,
            RatingError::NotConnected {
                top: vec![0],
                rest: vec![1, 2]
            }
        );
        let names = ["mine".to_string(), "old".into(), "random".into()];
        let text = e.describe(&names);
        assert!(
            text.contains("mine never finished behind old, random"),
            "{text}"
        );
        assert!(
            e.to_string()
                .contains("agent 0 never finished behind agent 1, agent 2")
        );
        let mut o = opts(Some(2), 0, 1);
        o.model = model;
        assert_eq!(ratings::rate(3, &strict, &o).unwrap_err(), e);
        // A penalty (choix's default) gives finite, huge ratings instead.
        let theta = ratings::fit(3, &strict, model, 1e-6).unwrap();
        assert!(theta.iter().all(|t| t.is_finite()) && theta[0] - theta[1] > 5.0);
    }
}

/// The bootstrap: the same intervals to the bit with 1, 2 or 5 threads and on a second call;
/// another seed gives other intervals.
#[test]
fn bootstrap_is_reproducible_and_independent_of_threads() {
    let units = units_of(&fixture()["datasets"]["multi"]);
    let one = ratings::rate(6, &units, &opts(Some(0), 199, 1)).unwrap();
    for threads in [1, 2, 5, 0] {
        let again = ratings::rate(6, &units, &opts(Some(0), 199, threads)).unwrap();
        for (a, b) in one.ratings.iter().zip(&again.ratings) {
            assert_eq!(a.elo.to_bits(), b.elo.to_bits());
            assert_eq!(a.low.unwrap().to_bits(), b.low.unwrap().to_bits());
            assert_eq!(a.high.unwrap().to_bits(), b.high.unwrap().to_bits());
        }
    }
    let mut other = opts(Some(0), 199, 1);
    other.seed = 8;
    let other = ratings::rate(6, &units, &other).unwrap();
    assert_ne!(one.ratings[3].low, other.ratings[3].low);
    assert_eq!(one.ratings[3].elo, other.ratings[3].elo);
    // A sensible width: the percentile interval of 120 units around the estimate.
    let r = &one.ratings[3];
    assert!(r.high.unwrap() - r.low.unwrap() > 20.0 && r.high.unwrap() - r.low.unwrap() < 400.0);
    assert_eq!(one.resamples, 199);
}

/// Strata (stages) are resampled separately: two strata rate like one when every resample
/// keeps all units, and adding units to a stratum in another order changes nothing but the
/// draw.
#[test]
fn strata_are_resampled_within() {
    let units = units_of(&fixture()["datasets"]["multi"]);
    let mut split = Data::new(6, Model::PlackettLuce);
    let mut whole = Data::new(6, Model::PlackettLuce);
    for (i, u) in units.iter().enumerate() {
        split.add_unit(i % 2, u).unwrap();
        whole.add_unit(0, u).unwrap();
    }
    assert_eq!(split.units(), whole.units());
    let a = split.rate(&opts(Some(0), 0, 1)).unwrap();
    let b = whole.rate(&opts(Some(0), 0, 1)).unwrap();
    for (x, y) in a.ratings.iter().zip(&b.ratings) {
        assert!((x.elo - y.elo).abs() < 1e-9);
    }
    let a = split.rate(&opts(Some(0), 100, 2)).unwrap();
    assert!(a.ratings.iter().all(|r| r.low.is_some()));
}
