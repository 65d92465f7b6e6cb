//! Simultaneous perturbation stochastic approximation (Spall, "Implementation of the
//! simultaneous perturbation algorithm for stochastic optimization", IEEE TAES 34(3), 1998),
//! as fishtest and OpenBench tune engine parameters on game pairs.
//!
//! The iterate θ lives in coordinates normalized to [0, 1] per dim (the first grid value at 0,
//! the last at 1). Iteration k (from 0) draws a Rademacher vector Δ (each component ±1 with
//! probability ½), asks for θ + c_k·Δ and θ − c_k·Δ (each clamped to the box and mapped back to
//! natural units, Int and Choice rounded to the nearest grid value), and, told their
//! objectives y+ and y−, ascends:
//!
//! `θ_i ← clamp(θ_i + a_k,i · (y+ − y−) / (2 c_k,i Δ_i), 0, 1)`
//!
//! with Spall's gains `a_k = a / (k + 1 + A)^α` and `c_k = c / (k + 1)^γ`, α = 0.602 and
//! γ = 0.101 (his recommended practical values). For an Int or Choice dim, c_k,i is at least
//! one grid step, so that θ+ and θ− always differ there after rounding.
//!
//! `a` is chosen as Spall recommends, from the magnitude of the gradient estimates at the
//! start: so that the first iterations move each coordinate by about `initial_step` (a fraction
//! of its range). The mean |y+ − y−| of the first `calibration` iterations sets it (each of those
//! iterations uses the mean so far), and it is then fixed, so the gains after calibration are
//! exactly Spall's sequence. While every difference so far is zero (two losses, say) the
//! iterate does not move and calibration goes on. Setting `a` explicitly skips the calibration.

use dhumbal_game::rng::{ChaChaSource, RandomSource};
use serde_json::json;

use super::{Dim, Optimizer, Point, Space, check_values, stream};

/// SPSA's settings.
#[derive(Clone, Debug, PartialEq)]
pub struct SpsaSettings {
    /// The iterations the budget allows (each is two evaluations): the gains are scaled to it
    /// (A is a tenth of it by default). Default 500. Asking past it goes on with the same
    /// gain formulas.
    pub iterations: usize,
    /// The initial perturbation c as a fraction of each dim's range (c_k = c/(k+1)^γ falls to
    /// about half of c after 1,000 iterations). Default 0.2: θ+ and θ− then lie 40% of the
    /// range apart at first and 20% after 1,000 iterations, a difference large enough to move a
    /// win rate measurably on a few deals (on the synthetic tests 0.2 and 0.3 beat 0.1 clearly).
    pub c: f64,
    /// The gain numerator a, in normalized units per unit of objective gradient. Default
    /// `None`: calibrated from `initial_step` as described in the module documentation.
    pub a: Option<f64>,
    /// With `a` calibrated: the move of each coordinate, as a fraction of its range, in an
    /// early iteration whose |y+ − y−| is the calibration mean. Default 0.03: at 0.1 and above
    /// the noise of win rates makes the iterate wander (on the synthetic tests the final
    /// distance to the optimum grew with it); 0.03 still crosses the whole range in about a
    /// hundred iterations of consistent signal.
    pub initial_step: f64,
    /// The iterations whose |y+ − y−| calibrate `a` (at most a tenth of `iterations`, at
    /// least 1; longer while every difference is zero). Default 10.
    pub calibration: usize,
    /// The stability constant A. Default `None`: a tenth of `iterations`, Spall's
    /// recommendation (about 10% of the iterations expected).
    pub stability: Option<f64>,
    /// The decay exponent α of a_k. Default 0.602 (Spall).
    pub alpha: f64,
    /// The decay exponent γ of c_k. Default 0.101 (Spall).
    pub gamma: f64,
}

impl Default for SpsaSettings {
    fn default() -> Self {
        SpsaSettings {
            iterations: 500,
            c: 0.2,
            a: None,
            initial_step: 0.03,
            calibration: 10,
            stability: None,
            alpha: 0.602,
            gamma: 0.101,
        }
    }
}

/// The stream number of SPSA's ChaCha8 stream ("spsa").
const STREAM_TAG: u64 = 0x7370_7361_0000_0001;

/// An SPSA run over `space` from `start`. Panics when the space is malformed
/// ([`Space::check`]) or a setting is out of range (c not in (0, 0.5], a or initial_step not
/// positive, A negative, α or γ negative; all must be finite).
pub fn spsa(
    space: &Space,
    start: &Point,
    settings: &SpsaSettings,
    seed: u64,
) -> Box<dyn Optimizer> {
    Box::new(Spsa::new(space, start, settings, seed))
}

struct Pending {
    delta: Vec<f64>,
    c: Vec<f64>,
    points: Vec<Point>,
}

pub(super) struct Spsa {
    space: Space,
    settings: SpsaSettings,
    seed: u64,
    rng: ChaChaSource,
    /// A, resolved.
    stability: f64,
    /// Calibration iterations, resolved.
    calibration: usize,
    /// The smallest c_k,i of each dim: one grid step for Int and Choice, 0 for Real.
    floor: Vec<f64>,
    theta: Vec<f64>,
    k: usize,
    abs_sum: f64,
    /// The calibrated mean |y+ − y−| once calibration is over.
    scale: Option<f64>,
    pending: Option<Pending>,
}

impl Spsa {
    pub(super) fn new(space: &Space, start: &Point, settings: &SpsaSettings, seed: u64) -> Spsa {
        if let Err(e) = space.check() {
            panic!("spsa: {e}");
        }
        let s = settings;
        assert!(
            s.c.is_finite() && s.c > 0.0 && s.c <= 0.5,
            "spsa: c {} is not in (0, 0.5]",
            s.c
        );
        assert!(
            s.a.is_none_or(|a| a.is_finite() && a > 0.0),
            "spsa: a {:?} is not a finite number > 0",
            s.a
        );
        assert!(
            s.initial_step.is_finite() && s.initial_step > 0.0,
            "spsa: initial_step {} is not a finite number > 0",
            s.initial_step
        );
        assert!(
            s.stability.is_none_or(|a| a.is_finite() && a >= 0.0),
            "spsa: stability {:?} is not a finite number ≥ 0",
            s.stability
        );
        assert!(
            s.alpha.is_finite() && s.alpha >= 0.0 && s.gamma.is_finite() && s.gamma >= 0.0,
            "spsa: alpha {} and gamma {} must be finite numbers ≥ 0",
            s.alpha,
            s.gamma
        );
        let floor = space
            .dims
            .iter()
            .map(|d| match d {
                Dim::Real { .. } => 0.0,
                _ if d.grid_len() > 1 => 1.0 / (d.grid_len() - 1) as f64,
                _ => 0.0,
            })
            .collect();
        let theta = space
            .dims
            .iter()
            .enumerate()
            .map(|(i, d)| d.normalize(start.get(i).copied().unwrap_or(f64::NAN)))
            .map(|u| if u.is_nan() { 0.0 } else { u })
            .collect();
        Spsa {
            space: space.clone(),
            settings: s.clone(),
            seed,
            rng: stream(seed, STREAM_TAG),
            stability: s.stability.unwrap_or(0.1 * s.iterations as f64),
            calibration: s.calibration.min(s.iterations / 10).max(1),
            floor,
            theta,
            k: 0,
            abs_sum: 0.0,
            scale: None,
            pending: None,
        }
    }

    fn c_k(&self, k: usize) -> Vec<f64> {
        let c = self.settings.c / ((k + 1) as f64).powf(self.settings.gamma);
        self.floor.iter().map(|&f| c.max(f)).collect()
    }

    fn natural(&self, u: &[f64]) -> Point {
        self.space
            .dims
            .iter()
            .zip(u)
            .map(|(d, &x)| d.denormalize(x))
            .collect()
    }
}

impl Optimizer for Spsa {
    fn ask(&mut self) -> Vec<Point> {
        if self.pending.is_none() {
            let delta: Vec<f64> = (0..self.theta.len())
                .map(|_| if self.rng.below(2) == 0 { 1.0 } else { -1.0 })
                .collect();
            let c = self.c_k(self.k);
            let shifted = |sign: f64| -> Vec<f64> {
                self.theta
                    .iter()
                    .zip(&delta)
                    .zip(&c)
                    .map(|((&t, &d), &c)| (t + sign * c * d).clamp(0.0, 1.0))
                    .collect()
            };
            let points = vec![self.natural(&shifted(1.0)), self.natural(&shifted(-1.0))];
            self.pending = Some(Pending { delta, c, points });
        }
        self.pending
            .as_ref()
            .map(|p| p.points.clone())
            .unwrap_or_default()
    }

    fn tell(&mut self, values: &[f64]) {
        let pending = self
            .pending
            .take()
            .expect("spsa: told values without an ask");
        check_values(values, 2, "spsa");
        let dy = values[0] - values[1];
        let s = &self.settings;
        let decay = (self.k as f64 + 1.0 + self.stability).powf(s.alpha);
        let c0 = self.c_k(0);
        // The gain numerator of each dim (None: no move, calibration has seen no difference).
        let a: Option<Vec<f64>> = match s.a {
            Some(a) => Some(vec![a; self.theta.len()]),
            None => {
                let mean = match self.scale {
                    Some(m) => m,
                    None => {
                        self.abs_sum += dy.abs();
                        let mean = self.abs_sum / (self.k + 1) as f64;
                        if self.k + 1 >= self.calibration && mean > 0.0 {
                            self.scale = Some(mean);
                        }
                        mean
                    }
                };
                (mean > 0.0).then(|| {
                    let base = s.initial_step * (1.0 + self.stability).powf(s.alpha) / mean;
                    c0.iter().map(|&c| base * 2.0 * c).collect()
                })
            }
        };
        if let Some(a) = a {
            for (i, theta) in self.theta.iter_mut().enumerate() {
                if self.space.dims[i].grid_len() <= 1 {
                    continue; // a dim with one value stays at it
                }
                let gradient = dy / (2.0 * pending.c[i] * pending.delta[i]);
                *theta = (*theta + a[i] / decay * gradient).clamp(0.0, 1.0);
            }
        }
        self.k += 1;
    }

    fn recommend(&self) -> Point {
        self.natural(&self.theta)
    }

    fn describe(&self) -> serde_json::Value {
        let s = &self.settings;
        json!({
            "optimizer": "spsa",
            "source": "Spall, IEEE TAES 34(3), 1998; as fishtest and OpenBench use it",
            "seed": self.seed,
            "iterations": s.iterations,
            "c": s.c,
            "a": s.a,
            "initial_step": s.initial_step,
            "calibration": self.calibration,
            "stability": self.stability,
            "alpha": s.alpha,
            "gamma": s.gamma,
            "calibrated_mean_abs_difference": self.scale,
            "iterations_done": self.k,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{
        check_deterministic_and_replayable, gaussian, int, mixed_space, noise, real, record,
    };
    use super::*;

    fn space() -> Space {
        Space {
            dims: (0..5).map(|i| real(-1.0, 1.0 + i as f64, 9)).collect(),
        }
    }

    /// Normalized coordinates of the optimum and of the start.
    const OPTIMUM: [f64; 5] = [0.6, 0.3, 0.5, 0.7, 0.4];
    const START: [f64; 5] = [0.0, 1.0, 0.0, 0.0, 1.0];

    fn distance(space: &Space, p: &[f64]) -> f64 {
        space
            .dims
            .iter()
            .zip(p)
            .zip(OPTIMUM)
            .map(|((d, &v), o)| (d.normalize(v) - o).powi(2))
            .sum::<f64>()
            .sqrt()
    }

    /// A concave quadratic in normalized coordinates, 0.6 at the optimum, with Gaussian noise
    /// of sd `sd`, or (`bernoulli`) a win drawn with that probability.
    fn run(seed: u64, settings: &SpsaSettings, sd: f64, bernoulli: bool) -> (f64, f64) {
        let space = space();
        let start: Point = space
            .dims
            .iter()
            .zip(START)
            .map(|(d, u)| d.denormalize(u))
            .collect();
        let mut opt = spsa(&space, &start, settings, seed);
        let mut rng = noise(seed);
        let f = |p: &[f64]| {
            let d = distance(&space, p);
            0.6 - 0.25 * d * d
        };
        for _ in 0..settings.iterations {
            let values: Vec<f64> = opt
                .ask()
                .iter()
                .map(|p| {
                    if bernoulli {
                        f64::from(u8::from(rng.random() < f(p)))
                    } else {
                        f(p) + sd * gaussian(&mut rng)
                    }
                })
                .collect();
            opt.tell(&values);
        }
        (distance(&space, &start), distance(&space, &opt.recommend()))
    }

    /// 20 runs of `iterations` from the start (`bernoulli`: told single wins and losses, else
    /// values with noise `sd`) end within `fraction` of the start's distance from the optimum
    /// in at least `runs` of them (printed, with every run's); the start's distance and the
    /// mean final one.
    fn closing_in(
        iterations: usize,
        sd: f64,
        bernoulli: bool,
        fraction: f64,
        runs: usize,
    ) -> (f64, f64) {
        let settings = SpsaSettings {
            iterations,
            ..SpsaSettings::default()
        };
        let seeds = 20;
        let mut finals = Vec::new();
        let mut start = 0.0;
        for seed in 0..seeds {
            let (s, f) = run(seed, &settings, sd, bernoulli);
            start = s;
            finals.push(f);
        }
        let close = finals.iter().filter(|&&f| f < fraction * start).count();
        let mean = finals.iter().sum::<f64>() / finals.len() as f64;
        eprintln!(
            "start distance {start:.3}, final mean {mean:.3}, within {fraction} of it in {close}/{seeds}: {finals:.3?}"
        );
        assert!(
            close >= runs,
            "{close}/{seeds} runs ended within {fraction} of the start's distance"
        );
        (start, mean)
    }

    #[test]
    fn moves_a_five_dim_start_towards_the_optimum() {
        // Measured: 20/20, mean final distance 0.097 from 1.40.
        closing_in(300, 0.05, false, 0.25, 18);
    }

    #[test]
    fn moves_towards_the_optimum_on_single_wins_and_losses() {
        // Measured: 15/20, mean final distance 0.56 from 1.40.
        let (start, mean) = closing_in(1000, 0.0, true, 0.5, 12);
        assert!(
            mean < 0.5 * start,
            "mean final distance {mean:.3} from {start:.3}"
        );
    }

    #[test]
    fn deterministic_replayable_and_on_the_grid() {
        let space = mixed_space(int(-100, 100, 1));
        let start = vec![5.0, 0.3, 3.0, 5.0, -100.0];
        let settings = SpsaSettings {
            iterations: 30,
            ..SpsaSettings::default()
        };
        let make = || spsa(&space, &start, &settings, 42);
        check_deterministic_and_replayable(&space, make, false);
        let other = || spsa(&space, &start, &settings, 43);
        assert_ne!(record(&space, make, 30).0, record(&space, other, 30).0);
        // An explicit gain, too.
        let fixed = SpsaSettings {
            a: Some(0.02),
            ..settings.clone()
        };
        check_deterministic_and_replayable(&space, || spsa(&space, &start, &fixed, 7), false);
    }

    fn close(got: f64, want: f64, what: &str) {
        assert!(
            (got - want).abs() < 1e-12,
            "{what}: {got} where {want} was expected"
        );
    }

    /// A real dimension of five levels (SPSA searches the whole interval).
    fn real5(lo: f64, hi: f64) -> Dim {
        real(lo, hi, 5)
    }

    #[test]
    fn c_k_is_c_over_k_plus_1_to_the_gamma_and_at_least_one_grid_step() {
        let space = Space {
            dims: vec![
                real5(0.0, 1.0),
                int(0, 10, 1),
                Dim::Choice { n: 3 },
                int(4, 4, 1),
            ],
        };
        let o = Spsa::new(
            &space,
            &vec![0.5, 5.0, 1.0, 4.0],
            &SpsaSettings::default(),
            1,
        );
        // c = 0.2, γ = 0.101: c / (k + 1)^γ, by hand (0.2 / 1000^0.101 = 0.0995: about half of
        // c after 1,000 iterations).
        for (k, c) in [
            (0, 0.2),
            (1, 0.186_477_297_287_366_5),
            (9, 0.158_500_266_096_094_36),
            (99, 0.125_611_671_762_663_58),
            (999, 0.099_547_416_995_787_2),
        ] {
            let got = o.c_k(k);
            close(got[0], c, "real");
            // An integer's step is 1/10 of its range, a choice's 1/2; one value: no floor.
            close(got[1], c.max(0.1), "int");
            assert_eq!(got[2], 0.5);
            close(got[3], c, "single value");
        }
        assert_eq!(o.c_k(999)[1], 0.1);
    }

    /// Δ of each iteration as the optimizer's stream gives it: +1 when `below(2)` draws 0.
    fn deltas(seed: u64, dims: usize, iterations: usize) -> Vec<Vec<f64>> {
        let mut rng = stream(seed, STREAM_TAG);
        (0..iterations)
            .map(|_| {
                (0..dims)
                    .map(|_| if rng.below(2) == 0 { 1.0 } else { -1.0 })
                    .collect()
            })
            .collect()
    }

    #[test]
    fn the_asks_are_theta_plus_then_minus_c_k_delta_clamped_to_the_box() {
        let space = Space {
            dims: vec![real5(-1.0, 3.0), real5(0.0, 1.0), real5(10.0, 20.0)],
        };
        // θ = (0.25, 0.5, 0.9): the last at 0.9 ± 0.2 reaches the box's edge.
        let start = vec![0.0, 0.5, 19.0];
        let settings = SpsaSettings {
            a: Some(0.01),
            ..SpsaSettings::default()
        };
        let seed = 17;
        let mut o = Spsa::new(&space, &start, &settings, seed);
        let iterations = 12;
        let deltas = deltas(seed, 3, iterations);
        let plus = deltas.iter().flatten().filter(|&&d| d > 0.0).count();
        assert!((8..=28).contains(&plus), "{plus} of 36 are +1");
        for (k, delta) in deltas.iter().enumerate() {
            let theta = o.theta.clone();
            let asked = o.ask();
            let c = 0.2 / (k as f64 + 1.0).powf(0.101);
            for (i, d) in space.dims.iter().enumerate() {
                let Dim::Real { lo, hi, .. } = *d else {
                    unreachable!()
                };
                for (j, sign) in [(0, 1.0), (1, -1.0)] {
                    let u = (theta[i] + sign * c * delta[i]).clamp(0.0, 1.0);
                    close(asked[j][i], lo + (hi - lo) * u, "ask");
                    if u == 1.0 {
                        assert_eq!(asked[j][i], hi);
                    }
                }
            }
            o.tell(&[0.6, 0.4]);
        }
    }

    #[test]
    fn a_step_with_a_given_gain_is_spalls_update() {
        let space = Space {
            dims: vec![
                real5(-1.0, 3.0),
                real5(0.0, 1.0),
                int(0, 10, 1),
                int(5, 7, 3),
            ],
        };
        let settings = SpsaSettings {
            a: Some(0.05),
            stability: Some(4.0),
            ..SpsaSettings::default()
        };
        let seed = 5;
        let mut o = Spsa::new(&space, &vec![0.0, 0.5, 5.0, 5.0], &settings, seed);
        let mut theta = [0.25, 0.5, 0.5, 0.0];
        assert_eq!(o.theta, theta);
        let told = [(0.7, 0.4), (0.2, 0.6), (0.55, 0.5), (0.3, 0.3), (0.9, 0.1)];
        let deltas = deltas(seed, 4, told.len());
        for (k, &(y_plus, y_minus)) in told.iter().enumerate() {
            o.ask();
            o.tell(&[y_plus, y_minus]);
            // a_k = a / (k + 1 + A)^α, c_k = c / (k + 1)^γ (the integer's at least 0.1).
            let a_k = 0.05 / (k as f64 + 1.0 + 4.0).powf(0.602);
            let c_k = 0.2 / (k as f64 + 1.0).powf(0.101);
            if k == 0 {
                // By hand: 0.05 / 5^0.602 = 0.018975.
                assert!((a_k - 0.018_975_361_6).abs() < 1e-10);
            }
            for i in 0..3 {
                let c = if i == 2 { c_k.max(0.1) } else { c_k };
                let g = (y_plus - y_minus) / (2.0 * c * deltas[k][i]);
                theta[i] = (theta[i] + a_k * g).clamp(0.0, 1.0);
                close(o.theta[i], theta[i], &format!("θ{i} after iteration {k}"));
            }
            // The dim with one value stays.
            assert_eq!(o.theta[3], 0.0);
        }
        // The first step, by hand: 0.018975 · 0.3 / 0.4 = 0.014232 along Δ.
        let mut o = Spsa::new(&space, &vec![0.0, 0.5, 5.0, 5.0], &settings, seed);
        o.ask();
        o.tell(&[0.7, 0.4]);
        for i in 0..3 {
            let moved = (o.theta[i] - [0.25, 0.5, 0.5][i]) * deltas[0][i];
            assert!((moved - 0.014_231_521_2).abs() < 1e-10, "{moved}");
        }
        // The recommendation: θ in natural units, the integer on its grid.
        let rec = o.recommend();
        close(rec[0], -1.0 + 4.0 * o.theta[0], "recommendation");
        close(rec[1], o.theta[1], "recommendation");
        assert_eq!(rec[2], 5.0);
        assert_eq!(rec[3], 5.0);
    }

    #[test]
    fn a_large_step_stops_at_the_box() {
        let space = Space {
            dims: vec![real5(-1.0, 3.0), real5(0.0, 1.0), real5(2.0, 4.0)],
        };
        let settings = SpsaSettings {
            a: Some(50.0),
            ..SpsaSettings::default()
        };
        let seed = 8;
        let mut o = Spsa::new(&space, &vec![0.0, 0.5, 3.0], &settings, seed);
        o.ask();
        o.tell(&[0.9, 0.1]);
        // Ascending: each coordinate goes to the end Δ points to (y+ > y−).
        let delta = &deltas(seed, 3, 1)[0];
        let rec = o.recommend();
        for (i, d) in space.dims.iter().enumerate() {
            let Dim::Real { lo, hi, .. } = *d else {
                unreachable!()
            };
            let (u, end) = if delta[i] > 0.0 { (1.0, hi) } else { (0.0, lo) };
            assert_eq!(o.theta[i], u);
            assert_eq!(rec[i], end);
        }
    }

    /// Three dims (two reals, an integer 0..=20), θ = 0.5 each; settings: 100 iterations
    /// (A = 10), `calibration` as given.
    fn calibrating(calibration: usize, iterations: usize, seed: u64) -> Spsa {
        let space = Space {
            dims: vec![real5(0.0, 1.0), real5(-2.0, 2.0), int(0, 20, 1)],
        };
        let settings = SpsaSettings {
            iterations,
            calibration,
            ..SpsaSettings::default()
        };
        Spsa::new(&space, &vec![0.5, 0.0, 10.0], &settings, seed)
    }

    /// The steps of a calibrated run told `told`, checked against Spall's update with
    /// a_k,i = initial_step · (1 + A)^α / mean · 2 c_0,i over (k + 1 + A)^α, `means[k]` the
    /// mean |y+ − y−| iteration k uses (None: no move); and the calibrated mean after each.
    fn check_calibrated_steps(
        mut o: Spsa,
        seed: u64,
        stability: f64,
        told: &[(f64, f64)],
        means: &[Option<f64>],
        scales: &[Option<f64>],
    ) {
        let deltas = deltas(seed, 3, told.len());
        let mut theta = o.theta.clone();
        let (alpha, gamma, step) = (0.602, 0.101, 0.03);
        for (k, &(y_plus, y_minus)) in told.iter().enumerate() {
            o.ask();
            o.tell(&[y_plus, y_minus]);
            if let Some(mean) = means[k] {
                let c_k = 0.2 / (k as f64 + 1.0).powf(gamma);
                let decay = (k as f64 + 1.0 + stability).powf(alpha);
                for i in 0..3 {
                    let a = step * (1.0 + stability).powf(alpha) / mean * 2.0 * 0.2;
                    let g = (y_plus - y_minus) / (2.0 * c_k * deltas[k][i]);
                    theta[i] = (theta[i] + a / decay * g).clamp(0.0, 1.0);
                }
            }
            for (i, (&got, &want)) in o.theta.iter().zip(&theta).enumerate() {
                close(got, want, &format!("θ{i} after iteration {k}"));
            }
            let described = o.describe()["calibrated_mean_abs_difference"].as_f64();
            match (described, scales[k]) {
                (Some(got), Some(want)) => close(got, want, "calibrated mean"),
                (got, want) => assert_eq!(got, want, "calibrated mean after iteration {k}"),
            }
            assert_eq!(o.describe()["iterations_done"], k + 1);
        }
    }

    #[test]
    fn the_first_calibrated_step_moves_each_coordinate_by_initial_step() {
        for seed in [2, 3] {
            let mut o = calibrating(3, 100, seed);
            o.ask();
            o.tell(&[0.3, 0.8]);
            // y+ < y−: each coordinate moves 0.03 against its Δ.
            let delta = &deltas(seed, 3, 1)[0];
            for (&got, &d) in o.theta.iter().zip(delta) {
                close(got, 0.5 - 0.03 * d, "θ after the first step");
            }
            assert_eq!(o.theta.len(), 3);
        }
    }

    #[test]
    fn the_gain_is_calibrated_on_the_first_iterations_then_fixed() {
        // Calibration over 3 iterations (min(3, 100/10)): the means 0.25, 0.375, then 0.3,
        // which stays.
        let seed = 4;
        let told = [
            (0.75, 0.5),
            (0.25, 0.75),
            (0.6, 0.45),
            (1.0, 0.0),
            (0.5, 0.5),
            (0.2, 0.3),
        ];
        let m = Some(0.9 / 3.0);
        check_calibrated_steps(
            calibrating(3, 100, seed),
            seed,
            10.0,
            &told,
            &[Some(0.25), Some(0.375), m, m, m, m],
            &[None, None, m, m, m, m],
        );
        // With `iterations` 20, calibration is cut to 2 (a tenth), A = 2.
        let m = Some(0.375);
        check_calibrated_steps(
            calibrating(3, 20, seed),
            seed,
            2.0,
            &told,
            &[Some(0.25), m, m, m, m, m],
            &[None, m, m, m, m, m],
        );
    }

    #[test]
    fn calibration_goes_on_while_every_difference_is_zero() {
        // Calibration 1 (min(10, 10/10)), A = 1: the first iteration's difference is 0, so
        // nothing moves and the second (mean 0.2 / 2) sets the gain.
        let seed = 6;
        let told = [(0.0, 0.0), (1.0, 0.8), (0.5, 0.6), (0.4, 0.4)];
        let m = Some(0.1);
        check_calibrated_steps(
            calibrating(10, 10, seed),
            seed,
            1.0,
            &told,
            &[None, m, m, m],
            &[None, m, m, m],
        );
        // Zero differences only: never calibrated, never moved.
        let mut o = calibrating(10, 10, seed);
        for _ in 0..5 {
            o.ask();
            o.tell(&[1.0, 1.0]);
        }
        assert_eq!(o.theta, [0.5, 0.5, 0.5]);
        assert_eq!(o.scale, None);
    }

    #[test]
    fn describe_gives_the_settings_resolved_and_the_run_so_far() {
        let space = space();
        let start = vec![0.0; 5];
        let settings = SpsaSettings {
            iterations: 30,
            c: 0.25,
            initial_step: 0.04,
            alpha: 0.7,
            gamma: 0.2,
            ..SpsaSettings::default()
        };
        let mut o = spsa(&space, &start, &settings, 12);
        let source = "Spall, IEEE TAES 34(3), 1998; as fishtest and OpenBench use it";
        assert_eq!(
            o.describe(),
            json!({
                "optimizer": "spsa",
                "source": source,
                "seed": 12,
                "iterations": 30,
                "c": 0.25,
                "a": null,
                "initial_step": 0.04,
                // min(10, 30/10), and a tenth of the iterations.
                "calibration": 3,
                "stability": 3.0,
                "alpha": 0.7,
                "gamma": 0.2,
                "calibrated_mean_abs_difference": null,
                "iterations_done": 0,
            })
        );
        for told in [[0.5, 0.25], [0.25, 0.5], [1.0, 0.25]] {
            o.ask();
            o.tell(&told);
        }
        let d = o.describe();
        close(
            d["calibrated_mean_abs_difference"].as_f64().unwrap(),
            (0.25 + 0.25 + 0.75) / 3.0,
            "calibrated mean",
        );
        assert_eq!(d["iterations_done"], 3);
        let fixed = SpsaSettings {
            iterations: 5,
            a: Some(0.02),
            stability: Some(2.5),
            ..SpsaSettings::default()
        };
        let d = spsa(&space, &start, &fixed, 1).describe();
        assert_eq!(d["a"], 0.02);
        assert_eq!(d["stability"], 2.5);
        assert_eq!(d["calibration"], 1);
        assert_eq!(d["iterations"], 5);
    }

    #[test]
    #[should_panic(expected = "spsa: told 1 values for an ask of 2 points")]
    fn a_tell_of_one_value_panics() {
        let mut o = spsa(&space(), &vec![0.0; 5], &SpsaSettings::default(), 1);
        o.ask();
        o.tell(&[0.5]);
    }

    #[test]
    #[should_panic(expected = "spsa: told a value that is not finite")]
    fn a_tell_of_an_infinite_value_panics() {
        let mut o = spsa(&space(), &vec![0.0; 5], &SpsaSettings::default(), 1);
        o.ask();
        o.tell(&[0.5, f64::NEG_INFINITY]);
    }
}
