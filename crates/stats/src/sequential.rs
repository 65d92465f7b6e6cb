//! The sequential test of a candidate against a baseline: a generalized sequential probability
//! ratio test (GSPRT) on the design's unit, as fishtest runs it on game pairs. The arithmetic
//! lives here, on unit scores; the runner (`dhumbal_runner::sequential`) reads the scores from a
//! stage's records, decides when a `sequential:` or `decide:` stage stops and keeps the
//! decision; the report shows it.
//!
//! The unit is a deal played under every seating arrangement (fishtest's unit is a pair of
//! games on one opening with colours swapped, its "pentanomial" model); the candidate's score
//! in a unit is its mean result over the unit's games, so units are independent while the games
//! of a unit are not.
//!
//! The statistic is written from Michel Van den Bergh's notes, which fishtest cites: "A
//! generalized sequential probability ratio test" (the GSPRT: the SPRT with the unknown
//! distribution replaced by its maximum-likelihood estimate under each hypothesis) and
//! "Normalized Elo" (bounds on the t-value of the score), both at
//! <https://www.cantate.be/Fishtest/> (and the fishtest mathematics page,
//! <https://disservin.github.io/stockfish-docs/fishtest-wiki/Fishtest-mathematics.html>).
//! With `p` the empirical distribution of the unit scores (values `x_i`, frequencies `p_i`, `N`
//! units), and `q⁰`, `q¹` the distributions closest to `p` (maximum likelihood, i.e. least
//! Kullback-Leibler divergence from `p`) that satisfy H0 and H1:
//!
//! `LLR = N · Σ p_i · ln(q¹_i / q⁰_i)`, stopping with H1 at `ln((1-β)/α)` and with H0 at
//! `ln(β/(1-α))` (Wald's bounds; ±2.944 at α = β = 0.05).
//!
//! The closest distribution under "mean = μ" is `q_i = p_i / (1 + λ(x_i - μ))` with `λ` the root
//! of `Σ p_i (x_i - μ) / (1 + λ(x_i - μ)) = 0`; under "t-value `(μ_q - r)/σ_q = t`" (normalized
//! Elo, reference score `r`) the Lagrange conditions give `q_i = p_i / (1 + λ φ_i)` with
//! `φ_i = x_i - r - t·σ_q·(1 + ((x_i - μ_q)/σ_q)²)/2`, solved by iterating on `(μ_q, σ_q)` from
//! `q = p` to a fixed point.
//!
//! Normalized Elo: `nElo = (800/ln 10) · (μ - r) / (σ_unit · sqrt(m))`, with `m` the games in a
//! unit, so that `σ_unit·sqrt(m)` is a per-game standard deviation (fishtest's pentanomial
//! normalization is `m = 2`); for two players without draws a small nElo is about the logistic
//! Elo difference, and a test's expected length depends only on its bounds.
//!
//! Where fishtest replaces every empty pentanomial count by 0.001, a count of 0.001 is given
//! only to each end of the score range (`range`, [0, 1] by default) that no unit scored: unit
//! scores here take many values a sample never sees, and the ends are what every hypothesis
//! inside the range needs to have a closest distribution (and an early sample of equal scores
//! a spread). This differs from fishtest's regularisation, and docs/analysis.md says so.

use std::f64::consts::LN_10;
use std::fmt;

pub mod after;

/// The pseudo-count given to an end of the score range that no unit scored (fishtest's
/// `epsilon` for empty pentanomial bins).
pub const EPSILON: f64 = 1e-3;

/// Normalized Elo per unit of per-game t-value.
pub const NELO_PER_T: f64 = 800.0 / LN_10;

/// Siegmund's constant for the overshoot of a Gaussian random walk over a boundary: a walk
/// with steps of standard deviation `σ` looked at discretely crosses a boundary about
/// `0.5826·σ` beyond it (Siegmund 1985, *Sequential Analysis*, §10.3; Chernoff 1965).
pub const OVERSHOOT_RHO: f64 = 0.5826;

/// The scale `elo0` and `elo1` are written in (fishtest's `elo_model`).
#[derive(
    Clone,
    Copy,
    Debug,
    Default,
    PartialEq,
    Eq,
    serde::Serialize,
    serde::Deserialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum EloModel {
    /// Normalized Elo: the score's distance from 1/2 in per-game standard deviations
    /// (×800/ln 10); a test's length depends only on its bounds.
    #[default]
    Normalized,
    /// Logistic Elo per game, `-400·log10(1/s - 1)` of the candidate's expected score `s`
    /// against the baseline (a game neither won counts 1/2, as a draw).
    Logistic,
}

impl EloModel {
    pub const ALL: [EloModel; 2] = [EloModel::Normalized, EloModel::Logistic];

    pub fn name(self) -> &'static str {
        match self {
            EloModel::Normalized => "normalized",
            EloModel::Logistic => "logistic",
        }
    }

    pub fn from_name(name: &str) -> Option<EloModel> {
        EloModel::ALL.into_iter().find(|m| m.name() == name)
    }

    /// What a bound in this model is called in a sentence: `nElo` or `Elo`.
    pub fn unit(self) -> &'static str {
        match self {
            EloModel::Normalized => "nElo",
            EloModel::Logistic => "Elo",
        }
    }
}

/// The expected score of a logistic Elo difference: `1/(1 + 10^(-elo/400))`.
pub fn logistic_score(elo: f64) -> f64 {
    1.0 / (1.0 + 10f64.powf(-elo / 400.0))
}

/// What H0 and H1 say about the candidate's mean unit score `μ`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Hypotheses {
    /// Normalized Elo (fishtest's bounds): H0 `nElo = elo0`, H1 `nElo = elo1`.
    NormalizedElo { elo0: f64, elo1: f64 },
    /// A difference of the mean score from the reference (a win-rate difference when the
    /// score is a win share): H0 `μ = reference + d0`, H1 `μ = reference + d1`.
    ScoreDifference { d0: f64, d1: f64 },
}

/// A sequential test.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SprtConfig {
    pub hypotheses: Hypotheses,
    /// Probability of accepting H1 when H0 holds.
    pub alpha: f64,
    /// Probability of accepting H0 when H1 holds.
    pub beta: f64,
    /// The candidate's expected unit score when it is as strong as the baseline (1/2 for a
    /// two-player win share; 1/4 for one seat in four).
    pub reference: f64,
    /// Games in a unit (the candidate's games per deal over its arrangements), for the
    /// per-game normalization of normalized Elo.
    pub games_per_unit: f64,
    /// The lowest and highest possible unit scores.
    pub range: (f64, f64),
    /// Whether the bounds are moved in by the expected overshoot of the LLR between looks
    /// ([`SprtConfig::look_bounds`]); Wald's bounds as they are otherwise.
    pub overshoot: bool,
}

impl SprtConfig {
    /// fishtest's usual test: normalized Elo bounds, α = β = 0.05, scores in [0, 1] with
    /// reference 1/2, and `m` games per unit.
    pub fn normalized(elo0: f64, elo1: f64, games_per_unit: f64) -> SprtConfig {
        SprtConfig {
            hypotheses: Hypotheses::NormalizedElo { elo0, elo1 },
            alpha: 0.05,
            beta: 0.05,
            reference: 0.5,
            games_per_unit,
            range: (0.0, 1.0),
            overshoot: false,
        }
    }

    /// Checks the configuration: a message for a person if it cannot be used.
    pub fn validate(&self) -> Result<(), SprtError> {
        let bad = |m: String| Err(SprtError::BadConfig(m));
        let prob = |p: f64| p > 0.0 && p < 0.5;
        if !prob(self.alpha) || !prob(self.beta) {
            return bad(format!(
                "alpha and beta must be in (0, 0.5), not {} and {}",
                self.alpha, self.beta
            ));
        }
        let (lo, hi) = self.range;
        if !(lo.is_finite() && hi.is_finite() && lo < hi) {
            return bad(format!("the score range [{lo}, {hi}] is empty"));
        }
        if !(self.reference > lo && self.reference < hi) {
            return bad(format!(
                "the reference score {} must lie strictly inside [{lo}, {hi}]",
                self.reference
            ));
        }
        if !(self.games_per_unit >= 1.0 && self.games_per_unit.is_finite()) {
            return bad(format!(
                "games per unit must be at least 1, not {}",
                self.games_per_unit
            ));
        }
        let (h0, h1) = match self.hypotheses {
            Hypotheses::NormalizedElo { elo0, elo1 } => (elo0, elo1),
            Hypotheses::ScoreDifference { d0, d1 } => {
                for d in [d0, d1] {
                    if !(self.reference + d > lo && self.reference + d < hi) {
                        return bad(format!(
                            "the score {} (reference {} + {d}) is outside ({lo}, {hi})",
                            self.reference + d,
                            self.reference
                        ));
                    }
                }
                (d0, d1)
            }
        };
        if !(h0.is_finite() && h1.is_finite() && h0 < h1) {
            return bad(format!(
                "the bounds must satisfy H0 < H1, not {h0} and {h1}"
            ));
        }
        Ok(())
    }

    /// Wald's bounds on the LLR: (accept H0 at or below, accept H1 at or above).
    pub fn llr_bounds(&self) -> (f64, f64) {
        llr_bounds(self.alpha, self.beta)
    }

    /// The per-unit drift of H0 and H1 on the standardized scale (the unit score's t-value
    /// `(μ - r)/σ`), with `sd` the unit scores' standard deviation (needed only for score
    /// differences); `None` without a spread.
    pub fn standardized(&self, sd: f64) -> Option<(f64, f64)> {
        match self.hypotheses {
            Hypotheses::NormalizedElo { elo0, elo1 } => {
                let t = |e: f64| e / NELO_PER_T * self.games_per_unit.sqrt();
                Some((t(elo0), t(elo1)))
            }
            Hypotheses::ScoreDifference { d0, d1 } => (sd > 0.0).then(|| (d0 / sd, d1 / sd)),
        }
    }

    /// The bounds the test stops at when it looks every `every` units, `sample` the units so
    /// far: Wald's, moved in by the expected overshoot when [`SprtConfig::overshoot`] is set.
    ///
    /// Between looks the LLR moves by about `(t1 - t0)·sqrt(every)` standard deviations (its
    /// normal approximation: `(t1 - t0)` per unit on the standardized scale), so a test looked
    /// at discretely stops beyond its bound by about [`OVERSHOOT_RHO`] times that; Wald's
    /// bounds are exact for a continuous path, so moving each in by that much gives about the
    /// error rates asked for (Siegmund 1985, §10.3). Fishtest corrects the same overshoot
    /// from the path of the LLR itself (Siegmund's Corollary 8.33); this correction depends on
    /// the design alone for normalized Elo bounds (on the units' spread so far for logistic
    /// ones), which lets [`after`] use the same boundaries. The correction is at most a
    /// quarter of the distance between the bounds.
    pub fn look_bounds(&self, sample: &Sample, every: u64) -> (f64, f64) {
        let (a, b) = self.llr_bounds();
        if !self.overshoot {
            return (a, b);
        }
        let sd = sample.mean_sd().map_or(0.0, |(_, sd)| sd);
        let Some((t0, t1)) = self.standardized(sd) else {
            return (a, b);
        };
        let o = (OVERSHOOT_RHO * (t1 - t0) * (every as f64).sqrt()).min((b - a) / 4.0);
        (a + o, b - o)
    }
}

/// Wald's bounds on the LLR for error rates α and β: `(ln(β/(1-α)), ln((1-β)/α))`.
pub fn llr_bounds(alpha: f64, beta: f64) -> (f64, f64) {
    ((beta / (1.0 - alpha)).ln(), ((1.0 - beta) / alpha).ln())
}

/// Why a test cannot run.
#[derive(Clone, Debug, PartialEq)]
pub enum SprtError {
    BadConfig(String),
    /// A unit score is not a finite number inside the range.
    BadScore {
        unit: usize,
        score: f64,
    },
}

impl fmt::Display for SprtError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SprtError::BadConfig(m) => write!(f, "sequential test: {m}"),
            SprtError::BadScore { unit, score } => write!(
                f,
                "sequential test: unit {unit} has score {score}, outside the score range"
            ),
        }
    }
}

impl std::error::Error for SprtError {}

/// The unit scores seen so far, as counts of their distinct values (sorted by value).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Sample {
    values: Vec<(f64, f64)>,
    units: u64,
}

impl Sample {
    pub fn new() -> Sample {
        Sample::default()
    }

    pub fn from_scores(scores: &[f64]) -> Sample {
        let mut s = Sample::new();
        scores.iter().for_each(|&x| s.push(x));
        s
    }

    /// Adds one unit's score.
    pub fn push(&mut self, x: f64) {
        self.units += 1;
        match self.values.binary_search_by(|(v, _)| v.total_cmp(&x)) {
            Ok(i) => self.values[i].1 += 1.0,
            Err(i) => self.values.insert(i, (x, 1.0)),
        }
    }

    pub fn units(&self) -> u64 {
        self.units
    }

    /// The mean unit score and its standard deviation (population), of the units alone.
    pub fn mean_sd(&self) -> Option<(f64, f64)> {
        if self.units == 0 {
            return None;
        }
        let n = self.units as f64;
        let mean = self.values.iter().map(|(x, c)| x * c).sum::<f64>() / n;
        let var = self
            .values
            .iter()
            .map(|(x, c)| c * (x - mean) * (x - mean))
            .sum::<f64>()
            / n;
        Some((mean, var.sqrt()))
    }

    /// The point estimate of normalized Elo (`None` with fewer than two distinct scores).
    pub fn normalized_elo(&self, reference: f64, games_per_unit: f64) -> Option<f64> {
        let (mean, sd) = self.mean_sd()?;
        (sd > 0.0).then(|| NELO_PER_T * (mean - reference) / (sd * games_per_unit.sqrt()))
    }

    /// The distribution the LLR is computed on: the counts, with [`EPSILON`] at each end of
    /// `range` no unit scored; (values, counts) sorted by value.
    fn regularized(&self, range: (f64, f64)) -> (Vec<f64>, Vec<f64>) {
        let mut xs = Vec::with_capacity(self.values.len() + 2);
        let mut cs = Vec::with_capacity(self.values.len() + 2);
        if self.values.first().is_none_or(|&(x, _)| x != range.0) {
            xs.push(range.0);
            cs.push(EPSILON);
        }
        for &(x, c) in &self.values {
            xs.push(x);
            cs.push(c);
        }
        if self.values.last().is_none_or(|&(x, _)| x != range.1) {
            xs.push(range.1);
            cs.push(EPSILON);
        }
        (xs, cs)
    }
}

/// The root `λ` of `Σ p_i φ_i / (1 + λ φ_i) = 0` with every `1 + λ φ_i > 0` (the function
/// falls from +∞ to -∞ on that interval), or `None` if the `φ_i` do not change sign.
fn secular(p: &[f64], phi: &[f64]) -> Option<f64> {
    let max = phi.iter().copied().fold(f64::MIN, f64::max);
    let min = phi.iter().copied().fold(f64::MAX, f64::min);
    if !(max > 0.0 && min < 0.0) {
        return None;
    }
    let (mut lo, mut hi) = (-1.0 / max, -1.0 / min);
    let f = |l: f64| -> (f64, f64) {
        let mut v = 0.0;
        let mut d = 0.0;
        for (pi, fi) in p.iter().zip(phi) {
            let r = fi / (1.0 + l * fi);
            v += pi * r;
            d -= pi * r * r;
        }
        (v, d)
    };
    let mut l = 0.0;
    for _ in 0..300 {
        #[cfg(test)]
        tests::count(&tests::SECULAR_STEPS);
        let (v, d) = f(l);
        if v == 0.0 {
            return Some(l);
        }
        if v > 0.0 {
            lo = l;
        } else {
            hi = l;
        }
        let newton = l - v / d;
        let next = if newton > lo && newton < hi {
            newton
        } else {
            lo + (hi - lo) / 2.0
        };
        if next == l || (next - l).abs() <= 4.0 * f64::EPSILON * l.abs().max(1e-300) {
            return Some(next);
        }
        l = next;
    }
    Some(l)
}

/// The distribution closest to `p` (on values `x`) with mean `mu`.
fn closest_with_mean(x: &[f64], p: &[f64], mu: f64) -> Option<Vec<f64>> {
    let phi: Vec<f64> = x.iter().map(|xi| xi - mu).collect();
    let l = secular(p, &phi)?;
    Some(
        p.iter()
            .zip(&phi)
            .map(|(pi, fi)| pi / (1.0 + l * fi))
            .collect(),
    )
}

/// The distribution closest to `p` with t-value `(μ - reference)/σ = t`.
fn closest_with_t(x: &[f64], p: &[f64], reference: f64, t: f64) -> Option<Vec<f64>> {
    let mut q = p.to_vec();
    let mut phi = vec![0.0; x.len()];
    for _ in 0..200 {
        #[cfg(test)]
        tests::count(&tests::T_ITERATIONS);
        let mu: f64 = x.iter().zip(&q).map(|(xi, qi)| xi * qi).sum();
        let var: f64 = x
            .iter()
            .zip(&q)
            .map(|(xi, qi)| qi * (xi - mu).powi(2))
            .sum();
        let sigma = var.sqrt();
        if sigma.is_nan() || sigma <= 0.0 {
            return None;
        }
        for (f, xi) in phi.iter_mut().zip(x) {
            let z = (xi - mu) / sigma;
            *f = xi - reference - t * sigma * (1.0 + z * z) / 2.0;
        }
        let l = secular(p, &phi)?;
        let mut change = 0.0f64;
        for ((qi, pi), fi) in q.iter_mut().zip(p).zip(&phi) {
            let next = pi / (1.0 + l * fi);
            change = change.max((next - *qi).abs());
            *qi = next;
        }
        if change <= 1e-14 {
            return Some(q);
        }
    }
    // Not converged: the last iterate is within the solver's reach of the fixed point.
    Some(q)
}

/// The GSPRT's log-likelihood ratio of H1 against H0 on the units in `sample` (0 without
/// units). Fails only on a configuration [`SprtConfig::validate`] refuses.
pub fn llr(sample: &Sample, config: &SprtConfig) -> Result<f64, SprtError> {
    config.validate()?;
    if sample.units == 0 {
        return Ok(0.0);
    }
    let (x, c) = sample.regularized(config.range);
    let n: f64 = c.iter().sum();
    let p: Vec<f64> = c.iter().map(|ci| ci / n).collect();
    let (q0, q1) = match config.hypotheses {
        Hypotheses::ScoreDifference { d0, d1 } => (
            closest_with_mean(&x, &p, config.reference + d0),
            closest_with_mean(&x, &p, config.reference + d1),
        ),
        Hypotheses::NormalizedElo { elo0, elo1 } => {
            let t = |e: f64| e / NELO_PER_T * config.games_per_unit.sqrt();
            (
                closest_with_t(&x, &p, config.reference, t(elo0)),
                closest_with_t(&x, &p, config.reference, t(elo1)),
            )
        }
    };
    // Inside the (regularized) range both hypotheses have a closest distribution; should one
    // not (a t-value beyond what the range allows), the data rule it out entirely.
    Ok(match (q0, q1) {
        (Some(q0), Some(q1)) => {
            n * p
                .iter()
                .zip(q0.iter().zip(&q1))
                .map(|(pi, (a, b))| if *pi > 0.0 { pi * (b / a).ln() } else { 0.0 })
                .sum::<f64>()
        }
        (None, Some(_)) => f64::INFINITY,
        (Some(_), None) => f64::NEG_INFINITY,
        (None, None) => 0.0,
    })
}

/// What a sequential test concluded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Decision {
    /// The LLR reached the upper bound.
    AcceptH1,
    /// The LLR reached the lower bound.
    AcceptH0,
    /// `max_units` were played without reaching a bound.
    Undecided,
    /// Fewer than `max_units` units so far and no bound reached: play on.
    Continue,
}

impl Decision {
    pub fn as_str(self) -> &'static str {
        match self {
            Decision::AcceptH1 => "H1 accepted",
            Decision::AcceptH0 => "H0 accepted",
            Decision::Undecided => "undecided",
            Decision::Continue => "continue",
        }
    }
}

/// One look at the test: the LLR after the first `units` units.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Check {
    pub units: u64,
    pub llr: f64,
}

/// The course of a sequential test over a sequence of unit scores.
#[derive(Clone, Debug, PartialEq)]
pub struct Sequential {
    pub decision: Decision,
    /// The units the decision rests on: the stopping unit count for a decision, `max_units`
    /// when undecided, the last look so far when continuing (0 before the first look).
    pub units: u64,
    /// The LLR at that look.
    pub llr: f64,
    /// (lower, upper) LLR bounds at the last look ([`SprtConfig::look_bounds`]).
    pub bounds: (f64, f64),
    /// Every look, in order (for the figure of LLR against units).
    pub checks: Vec<Check>,
}

/// What a look with LLR `l` concludes against `bounds` (`None`: play on); `last` is the
/// maximum's look, where a test that reached no bound ends undecided.
pub fn verdict(l: f64, bounds: (f64, f64), last: bool) -> Option<Decision> {
    if l >= bounds.1 {
        Some(Decision::AcceptH1)
    } else if l <= bounds.0 {
        Some(Decision::AcceptH0)
    } else if last {
        Some(Decision::Undecided)
    } else {
        None
    }
}

/// Runs the test over `scores` (the candidate's unit scores in unit order), looking after
/// every `every` units and at `max_units`: it stops at the first look whose LLR is at or
/// beyond a bound. Looks happen only at whole multiples of `every` (and at `max_units`), so
/// the decision and stopping unit depend only on the first units in unit order, never on how
/// many units past the stop were played: the same with any number of threads or resumes.
/// Scores past `max_units` are ignored.
pub fn sequential(
    scores: &[f64],
    config: &SprtConfig,
    every: u64,
    max_units: u64,
) -> Result<Sequential, SprtError> {
    config.validate()?;
    if every == 0 || max_units == 0 {
        return Err(SprtError::BadConfig(
            "the look interval and the maximum of units must be at least 1".into(),
        ));
    }
    let mut bounds = config.llr_bounds();
    let (lo, hi) = config.range;
    let mut sample = Sample::new();
    let mut checks = Vec::new();
    let available = (scores.len() as u64).min(max_units);
    for (i, &x) in scores.iter().take(available as usize).enumerate() {
        if !(x >= lo && x <= hi) {
            return Err(SprtError::BadScore { unit: i, score: x });
        }
        sample.push(x);
        let n = i as u64 + 1;
        if !n.is_multiple_of(every) && n != max_units {
            continue;
        }
        let l = llr(&sample, config)?;
        checks.push(Check { units: n, llr: l });
        bounds = config.look_bounds(&sample, every);
        if let Some(decision) = verdict(l, bounds, n == max_units) {
            return Ok(Sequential {
                decision,
                units: n,
                llr: l,
                bounds,
                checks,
            });
        }
    }
    let last = checks
        .last()
        .copied()
        .unwrap_or(Check { units: 0, llr: 0.0 });
    Ok(Sequential {
        decision: Decision::Continue,
        units: last.units,
        llr: last.llr,
        bounds,
        checks,
    })
}

/// The estimate of the candidate's strength from unit scores: the mean unit score with a
/// normal 95% interval over units, and the same as logistic Elo and as normalized Elo. After a
/// sequential stop these intervals lean towards the bound that stopped the test (the test stops
/// when the estimate happens to be far out), so they are descriptive, not a test.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Estimate {
    pub units: u64,
    pub score: f64,
    /// `None` with a single unit (no spread to estimate; JSON has no NaN to write).
    pub score_ci95: Option<[f64; 2]>,
    /// `-400·log10(1/s - 1)` of the score (two players: the Elo difference; several: of the
    /// head-to-head score against the baseline); `None` where the score is 0 or 1.
    pub elo: Option<f64>,
    pub elo_ci95: [Option<f64>; 2],
    /// Normalized Elo (`None` while every unit scored the same).
    pub nelo: Option<f64>,
    pub nelo_ci95: Option<[f64; 2]>,
}

/// Logistic Elo of a score in (0, 1) (±infinity at the ends).
pub fn logistic_elo(score: f64) -> f64 {
    -400.0 * (1.0 / score - 1.0).log10()
}

fn finite(x: f64) -> Option<f64> {
    x.is_finite().then_some(x)
}

/// [`Estimate`] of `scores` (units), `None` without units.
pub fn estimate(scores: &[f64], reference: f64, games_per_unit: f64) -> Option<Estimate> {
    let sample = Sample::from_scores(scores);
    let (mean, sd) = sample.mean_sd()?;
    let n = scores.len() as f64;
    // The sample standard deviation (n - 1) for the standard error.
    let se = if n > 1.0 {
        sd * (n / (n - 1.0)).sqrt() / n.sqrt()
    } else {
        f64::NAN
    };
    let z = 1.959_963_984_540_054;
    let ci = [mean - z * se, mean + z * se];
    let nelo = |s: f64| NELO_PER_T * (s - reference) / (sd * games_per_unit.sqrt());
    Some(Estimate {
        units: scores.len() as u64,
        score: mean,
        score_ci95: se.is_finite().then_some(ci),
        elo: finite(logistic_elo(mean)),
        elo_ci95: [
            finite(logistic_elo(ci[0].clamp(0.0, 1.0))),
            finite(logistic_elo(ci[1].clamp(0.0, 1.0))),
        ],
        nelo: (sd > 0.0).then(|| nelo(mean)),
        nelo_ci95: (sd > 0.0 && se.is_finite()).then(|| [nelo(ci[0]), nelo(ci[1])]),
    })
}

// ----------------------------------------------------------------------------------------
// A stage's sequential test: the plan a scenario's `sequential:` resolves to, the candidate's
// unit scores read from the stage's records, and the decision kept beside them.

/// A stage's `sequential:` entry, checked: a GSPRT of `candidate` against `baseline` on the
/// stage's deals (coins; sessions when longer than one round) or games (points), each played
/// under every seating arrangement, looked at every `every` of them.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Plan {
    pub candidate: String,
    pub baseline: String,
    /// Their slots in the stage's agent list.
    pub candidate_slot: usize,
    pub baseline_slot: usize,
    /// The bounds, in [`Plan::elo_model`]'s scale.
    pub elo0: f64,
    pub elo1: f64,
    /// The scale of `elo0` and `elo1` (normalized when a file written before it existed is
    /// read).
    #[serde(default)]
    pub elo_model: EloModel,
    /// Whether the bounds are corrected for the overshoot between looks (false when a file
    /// written before the correction existed is read: those tests used Wald's bounds).
    #[serde(default)]
    pub overshoot: bool,
    pub alpha: f64,
    pub beta: f64,
    /// Matches (sessions of coin rounds, or games) between looks; the stage's `matches` is the
    /// maximum.
    pub every: u64,
    /// A stage's `decide:`: the candidate and baseline are the leader and the second by the
    /// `winner_of` rule, chosen again at every look (empty in the plan; named in an outcome).
    #[serde(default)]
    pub decide: bool,
}

impl Plan {
    /// The GSPRT configuration for a stage with `arrangements` seatings and `rounds` rounds per
    /// match (coins; 1 for games): scores in [0, 1] with reference 1/2, one game per round
    /// (coins) or game (points) and arrangement.
    pub fn config(&self, arrangements: u64, rounds: u64) -> SprtConfig {
        SprtConfig {
            hypotheses: match self.elo_model {
                EloModel::Normalized => Hypotheses::NormalizedElo {
                    elo0: self.elo0,
                    elo1: self.elo1,
                },
                EloModel::Logistic => Hypotheses::ScoreDifference {
                    d0: logistic_score(self.elo0) - 0.5,
                    d1: logistic_score(self.elo1) - 0.5,
                },
            },
            alpha: self.alpha,
            beta: self.beta,
            reference: 0.5,
            games_per_unit: (arrangements * rounds.max(1)) as f64,
            range: (0.0, 1.0),
            overshoot: self.overshoot,
        }
    }

    /// The configuration of each of a `decide:` stage's comparisons among `agents` agents:
    /// [`Plan::config`] with α split over the agents ([`decide_alpha`]).
    pub fn decide_config(&self, arrangements: u64, rounds: u64, agents: usize) -> SprtConfig {
        SprtConfig {
            alpha: decide_alpha(self.alpha, agents),
            ..self.config(arrangements, rounds)
        }
    }
}

/// The α of each comparison of a `decide:` stage of `agents` agents whose rate of a false
/// "decided" is to stay at or below `alpha`: `alpha / agents`.
///
/// A false decision names a leader that is not stronger than some other agent by the bound,
/// after the leader's test against that agent crossed its upper bound. The leader is chosen
/// again at every look, so any agent may be the one named; the chance that a given agent's
/// test against a not-weaker one ever crosses the bound is at most about its α (the
/// likelihood ratio under H0 is a martingale: Ville's inequality), so splitting α over the
/// agents that could be named keeps the union at or below `alpha` whatever the strengths. It
/// is conservative when fewer agents are tied at the top (two equal leaders among four:
/// about `alpha / 2`); the simulation in tests/sequential.rs measures it.
pub fn decide_alpha(alpha: f64, agents: usize) -> f64 {
    alpha / agents.max(2) as f64
}

/// A test's bounds on both Elo scales, at the spread of the candidate's games the test saw:
/// what `elo1: 10` meant for this stage's design.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Scales {
    /// The standard deviation of the candidate's score per game (the unit score's, times the
    /// square root of the games in a unit).
    pub per_game_sd: f64,
    /// `elo0` and `elo1` as logistic Elo per game (`None` beyond a score of 0 or 1).
    pub elo: [Option<f64>; 2],
    /// `elo0` and `elo1` as normalized Elo.
    pub nelo: [f64; 2],
}

impl Scales {
    /// The bounds of `plan` on both scales, with `sd` the unit scores' standard deviation and
    /// `games_per_unit` the games in a unit; `None` without a spread.
    pub fn of(plan: &Plan, sd: f64, games_per_unit: f64) -> Option<Scales> {
        let per_game_sd = sd * games_per_unit.sqrt();
        if per_game_sd.is_nan() || per_game_sd <= 0.0 {
            return None;
        }
        let bounds = [plan.elo0, plan.elo1];
        let (elo, nelo) = match plan.elo_model {
            EloModel::Normalized => (
                bounds.map(|e| finite(logistic_elo(0.5 + e / NELO_PER_T * per_game_sd))),
                bounds,
            ),
            EloModel::Logistic => (
                bounds.map(Some),
                bounds.map(|e| NELO_PER_T * (logistic_score(e) - 0.5) / per_game_sd),
            ),
        };
        Some(Scales {
            per_game_sd,
            elo,
            nelo,
        })
    }
}

/// The median-unbiased estimate of the candidate's strength and its 95% interval, from the
/// test's own stopping rule ([`after`]), on the three scales of [`Estimate`].
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Adjusted {
    /// How they were computed, for a reader of the file.
    pub method: String,
    pub score: f64,
    pub score_ci95: [f64; 2],
    pub elo: Option<f64>,
    pub elo_ci95: [Option<f64>; 2],
    pub nelo: f64,
    pub nelo_ci95: [f64; 2],
}

/// What [`Adjusted::method`] says.
pub const ADJUSTED_METHOD: &str = "median-unbiased estimate and 95% interval by the stagewise \
    ordering of the test's outcomes (Jennison and Turnbull 2000, section 8.4), on the normal \
    approximation of the test with its own looks and bounds";

impl Adjusted {
    /// The inference after the test `course` with configuration `config` (looks every
    /// `every` units up to `max_units`) stopped on `scores`; `None` while it continues or
    /// without a spread.
    pub fn of(
        config: &SprtConfig,
        course: &Sequential,
        scores: &[f64],
        every: u64,
        max_units: u64,
    ) -> Option<Adjusted> {
        let side = match course.decision {
            Decision::AcceptH1 => after::Side::Upper,
            Decision::AcceptH0 => after::Side::Lower,
            Decision::Undecided => after::Side::Max,
            Decision::Continue => return None,
        };
        let (mean, sd) = Sample::from_scores(scores).mean_sd()?;
        if sd.is_nan() || sd <= 0.0 {
            return None;
        }
        let (t0, t1) = config.standardized(sd)?;
        let every = every.max(1);
        let mut looks: Vec<u64> = (1..=max_units / every).map(|k| k * every).collect();
        if looks.last() != Some(&max_units) {
            looks.push(max_units);
        }
        let look = looks.iter().position(|&n| n == course.units)?;
        let design = after::Design {
            t0,
            t1,
            bounds: course.bounds,
            looks,
        };
        let stop = after::Stop {
            look,
            side,
            sum: scores.len() as f64 * (mean - config.reference) / sd,
        };
        let found = design.infer(&stop);
        if !(found.estimate.is_finite() && found.ci95.iter().all(|x| x.is_finite())) {
            return None;
        }
        let score = |t: f64| config.reference + t * sd;
        let nelo = |t: f64| t * NELO_PER_T / config.games_per_unit.sqrt();
        let ci = found.ci95;
        Some(Adjusted {
            method: ADJUSTED_METHOD.into(),
            score: score(found.estimate),
            score_ci95: ci.map(score),
            elo: finite(logistic_elo(score(found.estimate))),
            elo_ci95: ci.map(|t| finite(logistic_elo(score(t)))),
            nelo: nelo(found.estimate),
            nelo_ci95: ci.map(nelo),
        })
    }
}

/// What a stage's matches are made of.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Shape {
    /// The stage's maximum, in matches.
    pub max_matches: u64,
    pub arrangements: u64,
    /// Rounds per match (coins: the session's length), 1 for games.
    pub rounds_per_match: u64,
    /// Point scoring: a match is a game.
    pub points: bool,
    /// The stage's agents (0 in files written before it existed).
    #[serde(default)]
    pub agents: u64,
}

/// One look of a `decide:` test: the leader's comparison with its closest rival.
#[derive(Clone, Debug, PartialEq)]
pub struct DecideLook {
    /// The agent (slot) the leader is least resolved from: the lowest LLR.
    pub rival: usize,
    /// The leader's scores against the rival, match by match.
    pub scores: Vec<f64>,
    pub llr: f64,
    /// The bounds of the look ([`SprtConfig::look_bounds`] of the comparison).
    pub bounds: (f64, f64),
}

/// A look of a `decide:` test with `leader` chosen: its GSPRT against every other of the
/// `agents` agents on the matches so far (`scores_against(j)`: the leader's match scores
/// against `j`; `test_error` says which stage a test that cannot run belongs to), each at
/// `config` (α already split: [`Plan::decide_config`]); the rival is the
/// agent with the lowest LLR, and the look's verdict ([`verdict`]) is that comparison's: H1,
/// the leader is resolved from every other agent; H0, from its rival it is not.
pub fn decide_look<E>(
    leader: usize,
    agents: usize,
    config: &SprtConfig,
    every: u64,
    mut scores_against: impl FnMut(usize) -> Result<Vec<f64>, E>,
    test_error: impl Fn(SprtError) -> E,
) -> Result<DecideLook, E> {
    let mut best: Option<DecideLook> = None;
    for j in (0..agents).filter(|&j| j != leader) {
        let scores = scores_against(j)?;
        let sample = Sample::from_scores(&scores);
        let value = llr(&sample, config).map_err(&test_error)?;
        if best.as_ref().is_none_or(|b| value < b.llr) {
            best = Some(DecideLook {
                rival: j,
                bounds: config.look_bounds(&sample, every),
                scores,
                llr: value,
            });
        }
    }
    best.ok_or_else(|| test_error(SprtError::BadConfig("a decision needs two agents".into())))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;
    use std::thread::LocalKey;

    thread_local! {
        /// The steps `secular` took on this thread (Newton's, or bisection's where Newton
        /// would leave the bracket).
        pub(super) static SECULAR_STEPS: Cell<u32> = const { Cell::new(0) };
        /// The fixed-point iterations `closest_with_t` took on this thread.
        pub(super) static T_ITERATIONS: Cell<u32> = const { Cell::new(0) };
    }

    pub(super) fn count(counter: &'static LocalKey<Cell<u32>>) {
        counter.with(|n| n.set(n.get() + 1));
    }

    /// `f()` and how many times it counted on `counter`.
    fn counted<T>(counter: &'static LocalKey<Cell<u32>>, f: impl FnOnce() -> T) -> (T, u32) {
        counter.with(|n| n.set(0));
        let out = f();
        (out, counter.with(Cell::get))
    }

    #[test]
    fn wald_bounds_are_fishtests() {
        let (lo, hi) = llr_bounds(0.05, 0.05);
        assert!((lo + 2.944_438_979_166_440_5).abs() < 1e-12);
        assert!((hi - 2.944_438_979_166_440_5).abs() < 1e-12);
    }

    #[test]
    fn no_units_no_evidence() {
        let c = SprtConfig::normalized(0.0, 10.0, 2.0);
        assert_eq!(llr(&Sample::new(), &c).unwrap(), 0.0);
    }

    #[test]
    fn the_closest_distribution_has_the_asked_mean() {
        let x = [0.0, 0.5, 1.0];
        let p = [0.2, 0.5, 0.3];
        let q = closest_with_mean(&x, &p, 0.45).unwrap();
        let mean: f64 = x.iter().zip(&q).map(|(a, b)| a * b).sum();
        assert!((mean - 0.45).abs() < 1e-12, "{mean}");
        assert!((q.iter().sum::<f64>() - 1.0).abs() < 1e-12);
    }

    #[test]
    fn the_closest_distribution_has_the_asked_t_value() {
        let x = [0.0, 0.25, 0.5, 0.75, 1.0];
        let p = [0.1, 0.2, 0.35, 0.2, 0.15];
        for t in [-0.1, 0.0, 0.05, 0.2] {
            let q = closest_with_t(&x, &p, 0.5, t).unwrap();
            let mu: f64 = x.iter().zip(&q).map(|(a, b)| a * b).sum();
            let var: f64 = x.iter().zip(&q).map(|(a, b)| b * (a - mu).powi(2)).sum();
            assert!(((mu - 0.5) / var.sqrt() - t).abs() < 1e-10, "t {t}");
            assert!((q.iter().sum::<f64>() - 1.0).abs() < 1e-10);
        }
    }

    #[test]
    fn a_stronger_candidate_drives_the_llr_up_and_a_weaker_down() {
        let c = SprtConfig::normalized(0.0, 10.0, 2.0);
        let strong: Vec<f64> = (0..400).map(|i| [1.0, 0.5, 1.0, 0.0][i % 4]).collect();
        let weak: Vec<f64> = (0..400).map(|i| [0.0, 0.5, 0.0, 1.0][i % 4]).collect();
        assert!(llr(&Sample::from_scores(&strong), &c).unwrap() > 2.95);
        assert!(llr(&Sample::from_scores(&weak), &c).unwrap() < -2.95);
    }

    #[test]
    fn looks_happen_on_the_grid_only() {
        let c = SprtConfig::normalized(0.0, 10.0, 2.0);
        let scores: Vec<f64> = (0..1000).map(|i| [1.0, 0.5, 1.0, 0.0][i % 4]).collect();
        let s = sequential(&scores, &c, 50, 1000).unwrap();
        assert_eq!(s.decision, Decision::AcceptH1);
        assert_eq!(s.units % 50, 0);
        assert!(s.checks.iter().all(|k| k.units % 50 == 0));
        // More scores past the stop change nothing.
        let again = sequential(&scores[..s.units as usize + 37], &c, 50, 1000).unwrap();
        assert_eq!(again, s);
        // Fewer than the stop: continue, with the looks so far.
        let before = sequential(&scores[..s.units as usize - 1], &c, 50, 1000).unwrap();
        assert_eq!(before.decision, Decision::Continue);
    }

    #[test]
    fn the_maximum_ends_a_test_undecided() {
        let c = SprtConfig::normalized(0.0, 10.0, 2.0);
        let even: Vec<f64> = (0..100).map(|i| [1.0, 0.0][i % 2]).collect();
        let s = sequential(&even, &c, 30, 100).unwrap();
        assert_eq!(s.decision, Decision::Undecided);
        assert_eq!(s.units, 100);
        assert_eq!(
            s.checks.iter().map(|k| k.units).collect::<Vec<_>>(),
            [30, 60, 90, 100]
        );
    }

    #[test]
    fn bad_configurations_and_scores_are_refused() {
        let mut c = SprtConfig::normalized(10.0, 0.0, 2.0);
        assert!(matches!(c.validate(), Err(SprtError::BadConfig(_))));
        c = SprtConfig::normalized(0.0, 10.0, 2.0);
        c.alpha = 0.5;
        assert!(c.validate().is_err());
        c.alpha = 0.05;
        assert!(matches!(
            sequential(&[0.5, 2.0], &c, 1, 10),
            Err(SprtError::BadScore { unit: 1, .. })
        ));
    }

    #[test]
    fn elo_models_by_name() {
        assert_eq!(EloModel::Normalized.name(), "normalized");
        assert_eq!(EloModel::Logistic.name(), "logistic");
        assert_eq!(EloModel::Normalized.unit(), "nElo");
        assert_eq!(EloModel::Logistic.unit(), "Elo");
        for m in EloModel::ALL {
            assert_eq!(EloModel::from_name(m.name()), Some(m));
        }
        assert_eq!(EloModel::from_name("elo"), None);
        assert_eq!(EloModel::from_name(""), None);
    }

    /// Each check of `validate` at its edge: just inside is accepted, on or just past the
    /// edge refused, and each condition refused on its own (one half of an `and` failing).
    #[test]
    fn every_check_of_a_configuration_at_its_edge() {
        let base = SprtConfig::normalized(0.0, 5.0, 2.0);
        let diff = |reference: f64, d0: f64, d1: f64| SprtConfig {
            hypotheses: Hypotheses::ScoreDifference { d0, d1 },
            reference,
            ..base
        };
        let ok: Vec<(&str, SprtConfig)> = vec![
            ("fishtest's", base),
            (
                "alpha near 0",
                SprtConfig {
                    alpha: 1e-9,
                    ..base
                },
            ),
            (
                "beta near 1/2",
                SprtConfig {
                    beta: 0.499,
                    ..base
                },
            ),
            (
                "one game a unit",
                SprtConfig {
                    games_per_unit: 1.0,
                    ..base
                },
            ),
            ("scores near the ends", diff(0.25, -0.2499, 0.7499)),
        ];
        for (what, c) in ok {
            assert_eq!(c.validate(), Ok(()), "{what}");
        }
        let nan = f64::NAN;
        let inf = f64::INFINITY;
        let refused: Vec<(&str, SprtConfig)> = vec![
            ("alpha 0", SprtConfig { alpha: 0.0, ..base }),
            ("alpha 1/2", SprtConfig { alpha: 0.5, ..base }),
            ("beta 0", SprtConfig { beta: 0.0, ..base }),
            ("beta 1/2", SprtConfig { beta: 0.5, ..base }),
            (
                "an empty range",
                SprtConfig {
                    range: (1.0, 1.0),
                    ..base
                },
            ),
            (
                "a range upside down",
                SprtConfig {
                    range: (1.0, 0.0),
                    ..base
                },
            ),
            (
                "no upper end",
                SprtConfig {
                    range: (0.0, inf),
                    ..base
                },
            ),
            (
                "no lower end",
                SprtConfig {
                    range: (-inf, 1.0),
                    ..base
                },
            ),
            (
                "the reference at the low end",
                SprtConfig {
                    reference: 0.0,
                    ..base
                },
            ),
            (
                "the reference at the high end",
                SprtConfig {
                    reference: 1.0,
                    ..base
                },
            ),
            (
                "the reference above the range",
                SprtConfig {
                    reference: 2.0,
                    ..base
                },
            ),
            (
                "the reference below the range",
                SprtConfig {
                    reference: -1.0,
                    ..base
                },
            ),
            (
                "under a game a unit",
                SprtConfig {
                    games_per_unit: 0.999,
                    ..base
                },
            ),
            (
                "infinitely many games",
                SprtConfig {
                    games_per_unit: inf,
                    ..base
                },
            ),
            ("H0's score below the range", diff(0.25, -0.3, 0.1)),
            ("H1's score above the range", diff(0.75, -0.1, 0.3)),
            ("H0's score at the low end", diff(0.25, -0.25, 0.1)),
            ("H1's score at the high end", diff(0.75, -0.1, 0.25)),
            ("equal hypotheses", SprtConfig::normalized(5.0, 5.0, 2.0)),
            ("H0 above H1", SprtConfig::normalized(5.0, 0.0, 2.0)),
            ("no H1", SprtConfig::normalized(0.0, nan, 2.0)),
            ("an infinite H1", SprtConfig::normalized(0.0, inf, 2.0)),
        ];
        for (what, c) in refused {
            assert!(
                matches!(c.validate(), Err(SprtError::BadConfig(_))),
                "{what}: {c:?}"
            );
        }
    }

    #[test]
    fn the_hypotheses_on_the_standardized_scale() {
        // Normalized Elo: nElo / (800/ln 10) per game, times sqrt(games per unit).
        let c = SprtConfig::normalized(-2.0, 3.0, 4.0);
        let (t0, t1) = c.standardized(0.0).unwrap();
        assert!((t0 - -2.0 * LN_10 / 800.0 * 2.0).abs() < 1e-15, "{t0}");
        assert!((t1 - 3.0 * LN_10 / 800.0 * 2.0).abs() < 1e-15, "{t1}");
        // A score difference: in units of the scores' spread, which it needs.
        let d = SprtConfig {
            hypotheses: Hypotheses::ScoreDifference { d0: 0.0, d1: 0.1 },
            ..c
        };
        assert_eq!(d.standardized(0.25), Some((0.0, 0.4)));
        let d = SprtConfig {
            hypotheses: Hypotheses::ScoreDifference {
                d0: -0.05,
                d1: 0.15,
            },
            ..c
        };
        assert_eq!(d.standardized(0.5), Some((-0.1, 0.3)));
        assert_eq!(d.standardized(0.0), None);
        assert_eq!(d.standardized(-0.5), None);
    }

    #[test]
    fn a_sample_counts_its_units_and_their_spread() {
        // Scores 0, 1, 1, 1/2, 1/2, 1/2, 1/4, 1/4: mean 1/2, population variance
        // (3·1/4 + 3·0 + 2·1/16)/8 = 7/64.
        let s = Sample::from_scores(&[0.0, 1.0, 0.5, 1.0, 0.5, 0.25, 0.5, 0.25]);
        assert_eq!(s.units(), 8);
        let (mean, sd) = s.mean_sd().unwrap();
        assert!((mean - 0.5).abs() < 1e-15, "{mean}");
        assert!((sd - (7.0f64 / 64.0).sqrt()).abs() < 1e-15, "{sd}");
        // Off centre, so that a sign slip in the deviations shows: 1, 1, 0 has mean 2/3 and
        // variance 2/9.
        let (mean, sd) = Sample::from_scores(&[1.0, 1.0, 0.0]).mean_sd().unwrap();
        assert!((mean - 2.0 / 3.0).abs() < 1e-15 && (sd - (2.0f64 / 9.0).sqrt()).abs() < 1e-15);
        assert_eq!(Sample::new().mean_sd(), None);
        // Far from 0 the deviations are taken from the mean before squaring: 1e8, 1e8 + 1 and
        // 1e8 + 1 have variance 2/9, and a mean that is not a float (1e8 + 2/3), whose rounding
        // any other form multiplies by 1e8 (E[x²] - mean², or (x + mean)(x - mean)).
        let (mean, sd) = Sample::from_scores(&[1e8, 1e8 + 1.0, 1e8 + 1.0])
            .mean_sd()
            .unwrap();
        assert_eq!(mean, (3e8 + 2.0) / 3.0);
        assert!((sd * sd - 2.0 / 9.0).abs() < 1e-12, "{sd}");
        // No spread, no normalized Elo.
        assert_eq!(
            Sample::from_scores(&[0.75; 5]).normalized_elo(0.5, 2.0),
            None
        );
        let one = Sample::from_scores(&[1.0, 0.0, 1.0]);
        let nelo = one.normalized_elo(0.5, 1.0).unwrap();
        let want = NELO_PER_T * (2.0 / 3.0 - 0.5) / (2.0f64 / 9.0).sqrt();
        assert!((nelo - want).abs() < 1e-12, "{nelo} {want}");
    }

    #[test]
    fn the_secular_root_needs_both_signs() {
        // The root exists only where the φ change sign; 0 is not a sign.
        for phi in [
            [0.0, 1.0],
            [-1.0, 0.0],
            [1.0, 2.0],
            [-2.0, -1.0],
            [0.0, 0.0],
        ] {
            assert_eq!(secular(&[0.5, 0.5], &phi), None, "{phi:?}");
        }
        // Symmetric: λ = 0. Skewed: -0.25/(1 - λ) + 1.5/(1 + 2λ) = 0 at λ = 5/8.
        assert_eq!(secular(&[0.5, 0.5], &[-1.0, 1.0]), Some(0.0));
        let (p, phi) = ([0.25, 0.75], [-1.0, 2.0]);
        let l = secular(&p, &phi).unwrap();
        assert!((l - 0.625).abs() < 1e-12, "{l}");
        let v: f64 = p
            .iter()
            .zip(&phi)
            .map(|(pi, fi)| pi * fi / (1.0 + l * fi))
            .sum();
        assert!(
            v.abs() < 1e-12 && 1.0 - l > 0.0 && 1.0 + 2.0 * l > 0.0,
            "{l} {v}"
        );
    }

    /// Newton's steps, kept inside the bracket, find the root in a handful of steps where
    /// bisection alone takes about fifty; the distributions are those the LLR meets (a
    /// regularized sample, the hypotheses' means near its own).
    #[test]
    fn the_secular_root_takes_few_steps() {
        let sample = Sample::from_scores(&[0.0, 0.25, 0.5, 0.5, 0.75, 1.0, 1.0, 0.5, 0.25, 1.0]);
        let (x, c) = sample.regularized((0.0, 1.0));
        let n: f64 = c.iter().sum();
        let p: Vec<f64> = c.iter().map(|ci| ci / n).collect();
        let mut most = 0;
        for mu in [0.3, 0.45, 0.5, 0.55, 0.6, 0.7, 0.9] {
            let phi: Vec<f64> = x.iter().map(|xi| xi - mu).collect();
            let (l, steps) = counted(&SECULAR_STEPS, || secular(&p, &phi).unwrap());
            let v: f64 = p
                .iter()
                .zip(&phi)
                .map(|(pi, fi)| pi * fi / (1.0 + l * fi))
                .sum();
            assert!(v.abs() < 1e-13, "mu {mu}: residual {v}");
            assert!(phi.iter().all(|fi| 1.0 + l * fi > 0.0), "mu {mu}: {l}");
            most = most.max(steps);
        }
        assert!((3..=12).contains(&most), "{most} steps");
    }

    /// The t-value's closest distribution: a fixed point reached in a few iterations (each a
    /// secular solve), and one whose t-value is the one asked for.
    #[test]
    fn the_closest_distribution_with_a_t_value_is_a_fixed_point_found_quickly() {
        let sample = Sample::from_scores(&[0.0, 0.25, 0.5, 0.5, 0.75, 1.0, 1.0, 0.5, 0.25, 1.0]);
        let (x, c) = sample.regularized((0.0, 1.0));
        let n: f64 = c.iter().sum();
        let p: Vec<f64> = c.iter().map(|ci| ci / n).collect();
        for t in [-0.2, -0.05, 0.05, 0.2] {
            let (q, iterations) =
                counted(&T_ITERATIONS, || closest_with_t(&x, &p, 0.5, t).unwrap());
            let mu: f64 = x.iter().zip(&q).map(|(xi, qi)| xi * qi).sum();
            let var: f64 = x
                .iter()
                .zip(&q)
                .map(|(xi, qi)| qi * (xi - mu).powi(2))
                .sum();
            assert!(((mu - 0.5) / var.sqrt() - t).abs() < 1e-10, "t {t}");
            assert!((q.iter().sum::<f64>() - 1.0).abs() < 1e-12);
            assert!(
                (2..=40).contains(&iterations),
                "t {t}: {iterations} iterations"
            );
        }
    }

    #[test]
    fn decisions_by_name() {
        assert_eq!(Decision::AcceptH1.as_str(), "H1 accepted");
        assert_eq!(Decision::AcceptH0.as_str(), "H0 accepted");
        assert_eq!(Decision::Undecided.as_str(), "undecided");
        assert_eq!(Decision::Continue.as_str(), "continue");
    }

    #[test]
    fn a_test_needs_looks_and_units() {
        let c = SprtConfig::normalized(0.0, 5.0, 2.0);
        for (every, max) in [(0, 10), (1, 0), (0, 0)] {
            assert!(
                matches!(
                    sequential(&[0.5; 4], &c, every, max),
                    Err(SprtError::BadConfig(_))
                ),
                "every {every}, max {max}"
            );
        }
        assert!(sequential(&[0.5; 4], &c, 1, 4).is_ok());
    }

    /// Scores of `n` units with mean about `mean`: a fixed cycle of unit scores (no random
    /// stream), so that a test on them stops where it stops on every machine.
    fn cycle(n: usize, high: usize) -> Vec<f64> {
        (0..n)
            .map(|i| match i % 4 {
                k if k < high => 1.0,
                2 => 0.5,
                _ => 0.0,
            })
            .collect()
    }

    /// The inference after a stop is the stagewise ordering's on the test's own design: its
    /// looks (every `every` units, and the maximum when it is not a multiple), its bounds,
    /// the stop's look and side, and the sum of the standardized scores; brought back to
    /// the score and normalized Elo scales by the units' spread.
    #[test]
    fn the_inference_after_a_stop_is_on_the_tests_own_design() {
        let mut config = SprtConfig::normalized(0.0, 10.0, 2.0);
        config.overshoot = true;
        for (scores, every, max, want) in [
            // A strong candidate: H1 early; a weak one: H0.
            (cycle(1000, 2), 40, 950, Decision::AcceptH1),
            (cycle(1000, 1), 40, 950, Decision::AcceptH0),
            // Undecided at its maximum, 130, a look that is not a multiple of 60.
            (cycle(130, 2), 60, 130, Decision::Undecided),
        ] {
            let course = sequential(&scores, &config, every, max).unwrap();
            assert_eq!(course.decision, want, "{course:?}");
            let used = &scores[..course.units as usize];
            let got = Adjusted::of(&config, &course, used, every, max).unwrap();
            let (mean, sd) = Sample::from_scores(used).mean_sd().unwrap();
            let (t0, t1) = config.standardized(sd).unwrap();
            let mut looks: Vec<u64> = (1..=max / every).map(|k| k * every).collect();
            if max % every != 0 {
                looks.push(max);
            }
            let look = looks.iter().position(|&n| n == course.units).unwrap();
            let side = match course.decision {
                Decision::AcceptH1 => after::Side::Upper,
                Decision::AcceptH0 => after::Side::Lower,
                _ => after::Side::Max,
            };
            let design = after::Design {
                t0,
                t1,
                bounds: course.bounds,
                looks,
            };
            let found = design.infer(&after::Stop {
                look,
                side,
                sum: used.len() as f64 * (mean - 0.5) / sd,
            });
            let score = |t: f64| 0.5 + t * sd;
            let nelo = |t: f64| t * NELO_PER_T / 2f64.sqrt();
            assert_eq!(got.score, score(found.estimate), "{course:?}");
            assert_eq!(got.score_ci95, found.ci95.map(score));
            assert_eq!(got.nelo, nelo(found.estimate));
            assert_eq!(got.nelo_ci95, found.ci95.map(nelo));
            assert_eq!(got.elo, Some(logistic_elo(got.score)));
            assert!(got.score_ci95[0] < got.score && got.score < got.score_ci95[1]);
            assert_eq!(got.method, ADJUSTED_METHOD);
        }
        // A test that goes on has no inference yet, nor one without a spread.
        let going = sequential(&cycle(40, 2), &config, 40, 950).unwrap();
        assert_eq!(going.decision, Decision::Continue);
        assert_eq!(Adjusted::of(&config, &going, &cycle(40, 2), 40, 950), None);
    }

    /// A `decide:` look compares the leader with every other agent and names the one it is
    /// least resolved from: the lowest LLR, never the leader itself.
    #[test]
    fn a_decide_look_names_the_closest_rival() {
        let config = SprtConfig::normalized(0.0, 10.0, 2.0);
        let against = |j: usize| -> Result<Vec<f64>, SprtError> {
            Ok(match j {
                1 => cycle(200, 3), // far behind the leader
                2 => cycle(200, 1), // close
                3 => cycle(200, 2),
                _ => panic!("the leader against itself"),
            })
        };
        let look = decide_look(0, 4, &config, 50, against, |e| e).unwrap();
        let llr_of = |j| llr(&Sample::from_scores(&against(j).unwrap()), &config).unwrap();
        assert_eq!(look.rival, 2, "{look:?}");
        assert_eq!(look.llr, llr_of(2));
        assert!(llr_of(2) < llr_of(3) && llr_of(3) < llr_of(1));
        assert_eq!(look.scores, cycle(200, 1));
        // Another leader, the same rule.
        let against = |j: usize| -> Result<Vec<f64>, SprtError> {
            Ok(match j {
                0 => cycle(200, 2),
                2 => cycle(200, 3),
                _ => panic!("the leader against itself"),
            })
        };
        assert_eq!(
            decide_look(1, 3, &config, 50, against, |e| e)
                .unwrap()
                .rival,
            0
        );
        // Two rivals the leader is equally resolved from (the same scores): the first is
        // named, on every machine.
        let twins = |j: usize| -> Result<Vec<f64>, SprtError> {
            Ok(if j == 3 { cycle(200, 3) } else { cycle(200, 1) })
        };
        assert_eq!(
            decide_look(0, 4, &config, 50, twins, |e| e).unwrap().rival,
            1
        );
    }

    #[test]
    fn the_estimate_is_on_three_scales() {
        let e = estimate(&[1.0, 0.5, 0.5, 1.0], 0.5, 2.0).unwrap();
        assert_eq!(e.score, 0.75);
        assert!((e.elo.unwrap() - 190.848_501_887_864_98).abs() < 1e-9);
        let ci = e.score_ci95.unwrap();
        assert!(ci[0] < 0.75 && ci[1] > 0.75);
        // One unit: no interval (it was NaN, written to JSON as null and not read back).
        let one = estimate(&[1.0], 0.5, 2.0).unwrap();
        assert_eq!(one.score_ci95, None);
        let json = serde_json::to_string(&one).unwrap();
        assert_eq!(serde_json::from_str::<Estimate>(&json).unwrap(), one);
        assert!(e.nelo.unwrap() > 0.0);
    }
}
