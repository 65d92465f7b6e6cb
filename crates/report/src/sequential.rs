//! The sequential test of a candidate against a baseline: a generalized sequential probability
//! ratio test (GSPRT) on the design's unit, as fishtest runs it on game pairs.
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
//! As fishtest replaces empty pentanomial counts by 0.001, a count of 0.001 is given to each end
//! of the score range (`range`, [0, 1] by default) that no unit scored, so that every hypothesis
//! inside the range has a closest distribution and an early sample of equal scores has a
//! spread.

use std::f64::consts::LN_10;
use std::fmt;

/// The pseudo-count given to an end of the score range that no unit scored (fishtest's
/// `epsilon` for empty pentanomial bins).
pub const EPSILON: f64 = 1e-3;

/// Normalized Elo per unit of per-game t-value.
pub const NELO_PER_T: f64 = 800.0 / LN_10;

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
    for _ in 0..1000 {
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
        if change <= 1e-15 {
            break;
        }
    }
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
    /// (lower, upper) LLR bounds.
    pub bounds: (f64, f64),
    /// Every look, in order (for the figure of LLR against units).
    pub checks: Vec<Check>,
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
    let bounds = config.llr_bounds();
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
        let decision = if l >= bounds.1 {
            Some(Decision::AcceptH1)
        } else if l <= bounds.0 {
            Some(Decision::AcceptH0)
        } else if n == max_units {
            Some(Decision::Undecided)
        } else {
            None
        };
        if let Some(decision) = decision {
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
