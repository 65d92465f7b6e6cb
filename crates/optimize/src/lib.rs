//! Optimizers for tuning an agent's parameters from noisy match results: a pure library with
//! no knowledge of games, files or threads. The caller asks for points, evaluates them (plays
//! deals), and tells the objective of each (higher is better, typically a win rate in [0, 1]).
//!
//! - [`ntbea`]: the N-Tuple Bandit Evolutionary Algorithm (Lucas, Liu and Perez-Liebana, "The
//!   N-Tuple Bandit Evolutionary Algorithm for Game Agent Optimisation", CEC 2018), as the
//!   TabletopGames framework (TAG) uses it: one evaluation per step, a bandit model over
//!   1-tuples, 2-tuples and the full tuple of the parameters' grid indices.
//! - [`spsa`]: simultaneous perturbation stochastic approximation (Spall, "Implementation of the
//!   simultaneous perturbation algorithm for stochastic optimization", IEEE TAES 34(3), 1998),
//!   as fishtest and OpenBench use it on game pairs: two evaluations per iteration.
//!
//! Both are deterministic: the same space, start, settings, seed and told values give the same
//! asks and recommendation bit for bit (their randomness is a ChaCha8 stream keyed on the seed,
//! and no hash-map order reaches a result). So a run is resumable by replay: a fresh optimizer
//! told the recorded values of every earlier ask, in order, reaches the same state.

mod ntbea;
mod spsa;

pub use ntbea::{NtbeaSettings, ntbea};
pub use spsa::{SpsaSettings, spsa};

use dhumbal_game::rng::{ChaChaSource, Purpose, chacha_stream};

/// One tuned parameter's domain (in a tuning's manifest as `{"int": {"lo", "hi", "step"}}`,
/// `{"real": {"lo", "hi", "levels"}}` or `{"choice": {"n"}}`).
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Dim {
    /// lo, lo+step, ..., up to hi (inclusive when on the grid).
    Int { lo: i64, hi: i64, step: i64 },
    /// Reals in [lo, hi]. NTBEA uses `levels` evenly spaced values (lo and hi included); SPSA
    /// the whole interval.
    Real { lo: f64, hi: f64, levels: usize },
    /// One of n choices (the caller holds the values), as index 0..n.
    Choice { n: usize },
}

/// The most grid values one dimension may have (NTBEA draws grid indices as 32-bit numbers).
pub const MAX_DIM_VALUES: u64 = 1 << 31;

/// Why a parameter space is not well formed ([`Dim::check`], [`Space::check`]).
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum DomainError {
    #[error("integer step {step} is not at least 1")]
    IntStep { step: i64 },
    #[error("integer range {lo}..{hi} is empty")]
    IntEmpty { lo: i64, hi: i64 },
    #[error("integer range {lo}..{hi} step {step} has {count} values, more than {MAX_DIM_VALUES}")]
    IntTooMany {
        lo: i64,
        hi: i64,
        step: i64,
        count: i128,
    },
    #[error("real range {lo}..{hi} is not finite")]
    RealNotFinite { lo: f64, hi: f64 },
    #[error("real range {lo}..{hi} is empty")]
    RealEmpty { lo: f64, hi: f64 },
    #[error("real levels {levels} is not in 1..={MAX_DIM_VALUES}")]
    RealLevels { levels: usize },
    #[error("real range {lo}..{hi} needs at least 2 levels (lo and hi)")]
    RealOneLevel { lo: f64, hi: f64 },
    #[error("choice count {n} is not in 1..={MAX_DIM_VALUES}")]
    ChoiceCount { n: usize },
    #[error("the space has no parameters")]
    NoParameters,
    /// A dimension of a space (from 0) is not well formed.
    #[error("parameter {index}: {source}")]
    Parameter {
        index: usize,
        source: Box<DomainError>,
    },
}

impl Dim {
    /// Whether the domain is well formed: `lo <= hi` and `step >= 1` (Int, at most
    /// [`MAX_DIM_VALUES`] values), finite `lo <= hi` and `levels >= 1` (Real; `levels == 1`
    /// only when `lo == hi`), `n >= 1` (Choice).
    pub fn check(&self) -> Result<(), DomainError> {
        match *self {
            Dim::Int { lo, hi, step } => {
                if step < 1 {
                    return Err(DomainError::IntStep { step });
                }
                if lo > hi {
                    return Err(DomainError::IntEmpty { lo, hi });
                }
                let count = (hi as i128 - lo as i128) / step as i128 + 1;
                if count > MAX_DIM_VALUES as i128 {
                    return Err(DomainError::IntTooMany {
                        lo,
                        hi,
                        step,
                        count,
                    });
                }
                Ok(())
            }
            Dim::Real { lo, hi, levels } => {
                if !lo.is_finite() || !hi.is_finite() {
                    return Err(DomainError::RealNotFinite { lo, hi });
                }
                if lo > hi {
                    return Err(DomainError::RealEmpty { lo, hi });
                }
                if levels == 0 || levels as u64 > MAX_DIM_VALUES {
                    return Err(DomainError::RealLevels { levels });
                }
                if levels == 1 && lo != hi {
                    return Err(DomainError::RealOneLevel { lo, hi });
                }
                Ok(())
            }
            Dim::Choice { n } => {
                if n == 0 || n as u64 > MAX_DIM_VALUES {
                    return Err(DomainError::ChoiceCount { n });
                }
                Ok(())
            }
        }
    }

    /// The number of grid values: Int's values up to `hi`, Real's `levels`, Choice's `n`.
    pub fn grid_len(&self) -> usize {
        match *self {
            Dim::Int { lo, hi, step } => ((hi as i128 - lo as i128) / step as i128 + 1) as usize,
            Dim::Real { levels, .. } => levels,
            Dim::Choice { n } => n,
        }
    }

    /// Grid value `i` (0 ≤ i < [`Dim::grid_len`]) in natural units.
    pub fn grid_value(&self, i: usize) -> f64 {
        match *self {
            Dim::Int { lo, step, .. } => (lo as i128 + i as i128 * step as i128) as f64,
            Dim::Real { lo, hi, levels } => {
                if levels <= 1 {
                    lo
                } else if i + 1 == levels {
                    hi
                } else {
                    lo + (hi - lo) * (i as f64 / (levels - 1) as f64)
                }
            }
            Dim::Choice { .. } => i as f64,
        }
    }

    /// The index of the grid value nearest `v` (ties to the lower index; out-of-range values
    /// to the nearest end).
    pub fn nearest_index(&self, v: f64) -> usize {
        let n = self.grid_len();
        if n <= 1 || v.is_nan() {
            return 0;
        }
        let (lo, last) = (self.grid_value(0), self.grid_value(n - 1));
        let t = ((v - lo) / (last - lo) * (n - 1) as f64).clamp(0.0, (n - 1) as f64);
        if t.is_nan() {
            return 0;
        }
        let below = t.floor() as usize;
        if below + 1 < n && t - below as f64 > 0.5 {
            below + 1
        } else {
            below
        }
    }

    /// Maps a natural value to [0, 1] (the first grid value to 0, the last to 1; a dim with
    /// one value to 0), clamping values outside.
    fn normalize(&self, v: f64) -> f64 {
        let n = self.grid_len();
        if n <= 1 {
            return 0.0;
        }
        let (lo, last) = (self.grid_value(0), self.grid_value(n - 1));
        let u = (v - lo) / (last - lo);
        if u.is_nan() { 0.0 } else { u.clamp(0.0, 1.0) }
    }

    /// Maps `u` in [0, 1] back to a valid natural value: Int and Choice rounded to the nearest
    /// grid value, Real anywhere in [lo, hi].
    fn denormalize(&self, u: f64) -> f64 {
        let u = u.clamp(0.0, 1.0);
        match *self {
            Dim::Real { lo, hi, .. } => {
                if u >= 1.0 {
                    hi
                } else {
                    (lo + (hi - lo) * u).clamp(lo, hi)
                }
            }
            _ => {
                let n = self.grid_len();
                if n <= 1 {
                    return self.grid_value(0);
                }
                let t = u * (n - 1) as f64;
                let below = t.floor() as usize;
                let i = if below + 1 < n && t - below as f64 >= 0.5 {
                    below + 1
                } else {
                    below.min(n - 1)
                };
                self.grid_value(i)
            }
        }
    }

    /// Whether `v` is a valid value: on the grid for Int and Choice; for Real on one of the
    /// `levels` when `levels` is set, else anywhere in [lo, hi].
    fn is_valid(&self, v: f64, real_levels: bool) -> bool {
        match *self {
            Dim::Real { lo, hi, .. } if !real_levels => v >= lo && v <= hi,
            _ => {
                let n = self.grid_len();
                let i = self.nearest_index(v);
                i < n && self.grid_value(i) == v
            }
        }
    }
}

/// The tuned parameters' domains, in order.
#[derive(Clone, Debug, PartialEq)]
pub struct Space {
    pub dims: Vec<Dim>,
}

/// A point: one f64 per dim, in natural units (Int: the integer value; Real: the value; Choice:
/// the index as f64). Always valid (on the grid / in range).
pub type Point = Vec<f64>;

impl Space {
    /// Whether every dim is well formed (and there is at least one).
    pub fn check(&self) -> Result<(), DomainError> {
        if self.dims.is_empty() {
            return Err(DomainError::NoParameters);
        }
        for (index, d) in self.dims.iter().enumerate() {
            d.check().map_err(|e| DomainError::Parameter {
                index,
                source: Box::new(e),
            })?;
        }
        Ok(())
    }

    /// The number of grid points (the product of [`Dim::grid_len`]), saturating.
    pub fn grid_size(&self) -> u128 {
        self.dims
            .iter()
            .fold(1u128, |acc, d| acc.saturating_mul(d.grid_len() as u128))
    }

    /// The grid point nearest `p` (each coordinate to its nearest grid value; Real to its
    /// nearest level). Missing coordinates take the first grid value.
    pub fn snap(&self, p: &[f64]) -> Point {
        self.dims
            .iter()
            .enumerate()
            .map(|(i, d)| d.grid_value(d.nearest_index(p.get(i).copied().unwrap_or(f64::NAN))))
            .collect()
    }

    /// Whether `p` is a valid point: one coordinate per dim, Int and Choice on the grid, Real
    /// on a level when `real_levels` (NTBEA's points) or anywhere in [lo, hi] otherwise
    /// (SPSA's points).
    pub fn contains(&self, p: &[f64], real_levels: bool) -> bool {
        p.len() == self.dims.len()
            && self
                .dims
                .iter()
                .zip(p)
                .all(|(d, &v)| d.is_valid(v, real_levels))
    }

    fn indices(&self, p: &[f64]) -> Vec<usize> {
        self.dims
            .iter()
            .enumerate()
            .map(|(i, d)| d.nearest_index(p.get(i).copied().unwrap_or(f64::NAN)))
            .collect()
    }

    fn point_of(&self, idx: &[usize]) -> Point {
        self.dims
            .iter()
            .zip(idx)
            .map(|(d, &i)| d.grid_value(i))
            .collect()
    }
}

/// An optimizer driven by ask and tell.
pub trait Optimizer: Send {
    /// The points to evaluate next, in order: NTBEA one; SPSA two (θ+ then θ−), which the caller
    /// evaluates on the same deals (paired). Asking again before telling returns the same
    /// points.
    fn ask(&mut self) -> Vec<Point>;
    /// The objective of each point of the last ask, in order (higher is better; a win rate in
    /// [0, 1] typically, noisy). Panics when the count is not the last ask's or a value is not
    /// finite.
    fn tell(&mut self, values: &[f64]);
    /// The recommendation now (the best estimate; for NTBEA the point with the best model
    /// estimate without exploration among those evaluated, or over the space when small; for
    /// SPSA the current iterate rounded onto the grid).
    fn recommend(&self) -> Point;
    /// The optimizer's name and settings, for the report and manifest.
    fn describe(&self) -> serde_json::Value;
}

/// An optimizer's own ChaCha8 stream, keyed on the caller's seed and a per-optimizer tag (so
/// that it shares no stream with the deals, the agents or training).
fn stream(seed: u64, tag: u64) -> ChaChaSource {
    chacha_stream(seed, Purpose::Learn, tag)
}

fn check_values(values: &[f64], expected: usize, who: &str) {
    assert_eq!(
        values.len(),
        expected,
        "{who}: told {} values for an ask of {expected} points",
        values.len()
    );
    assert!(
        values.iter().all(|v| v.is_finite()),
        "{who}: told a value that is not finite: {values:?}"
    );
}

#[cfg(test)]
mod tests {
    use super::testing::{int, real};
    use super::*;

    #[test]
    fn grid_values_and_snapping() {
        let int = int(1, 10, 4);
        assert_eq!(int.grid_len(), 3);
        assert_eq!(
            (0..3).map(|i| int.grid_value(i)).collect::<Vec<_>>(),
            [1.0, 5.0, 9.0]
        );
        assert_eq!(int.nearest_index(10.0), 2);
        assert_eq!(int.nearest_index(6.9), 1);
        assert_eq!(int.nearest_index(-3.0), 0);
        let real = real(-1.0, 1.0, 5);
        assert_eq!(
            (0..5).map(|i| real.grid_value(i)).collect::<Vec<_>>(),
            [-1.0, -0.5, 0.0, 0.5, 1.0]
        );
        assert_eq!(real.denormalize(0.3), -0.4);
        assert_eq!(int.denormalize(0.76), 9.0);
        assert_eq!(int.denormalize(0.74), 5.0);
        assert_eq!(int.denormalize(0.2), 1.0);
        let space = Space {
            dims: vec![int, real, Dim::Choice { n: 3 }],
        };
        assert_eq!(space.grid_size(), 45);
        assert_eq!(space.snap(&[7.5, 0.3, 1.6]), vec![9.0, 0.5, 2.0]);
        assert!(space.contains(&[9.0, 0.5, 2.0], true));
        assert!(!space.contains(&[9.0, 0.3, 2.0], true));
        assert!(space.contains(&[9.0, 0.3, 2.0], false));
        assert!(!space.contains(&[8.0, 0.5, 2.0], false));
        assert!(!space.contains(&[9.0, 0.5, 3.0], false));
    }

    #[test]
    fn malformed_dims_are_refused() {
        assert!(int(0, 5, 0).check().is_err());
        assert!(int(5, 0, 1).check().is_err());
        assert!(int(i64::MIN, i64::MAX, 1).check().is_err());
        assert!(real(0.0, 1.0, 1).check().is_err());
        assert!(real(0.0, f64::NAN, 3).check().is_err());
        assert!(Dim::Choice { n: 0 }.check().is_err());
        assert!(Space { dims: vec![] }.check().is_err());
        assert!(real(2.0, 2.0, 1).check().is_ok());
    }

    const LIMIT: i64 = MAX_DIM_VALUES as i64; // 2^31

    #[test]
    fn an_int_range_may_have_2_pow_31_values_and_no_more() {
        // Exactly 2^31 values: 0..=2^31 - 1 by 1, 0..=2^32 - 2 by 2, and 0..2^32 - 1 by 2
        // (whose `hi` is off the grid), and from a negative `lo`.
        for d in [
            int(0, LIMIT - 1, 1),
            int(0, 2 * LIMIT - 2, 2),
            int(0, 2 * LIMIT - 1, 2),
            int(-5, LIMIT - 6, 1),
        ] {
            assert_eq!(d.check(), Ok(()), "{d:?}");
            assert_eq!(d.grid_len() as u64, MAX_DIM_VALUES, "{d:?}");
        }
        // One more value is refused, with the count.
        for (lo, hi, step) in [(0, LIMIT, 1), (0, 2 * LIMIT, 2), (-5, LIMIT - 5, 1)] {
            assert_eq!(
                int(lo, hi, step).check(),
                Err(DomainError::IntTooMany {
                    lo,
                    hi,
                    step,
                    count: i128::from(LIMIT) + 1
                })
            );
        }
        // The whole i64 range (2^64 - 1 wide): by 2^33, 2^31 values; by 2^32, 2^32 values.
        assert_eq!(int(i64::MIN, i64::MAX, 1 << 33).check(), Ok(()));
        assert_eq!(
            int(i64::MIN, i64::MAX, 1 << 33).grid_len() as u64,
            MAX_DIM_VALUES
        );
        assert_eq!(
            int(i64::MIN, i64::MAX, 1 << 32).check(),
            Err(DomainError::IntTooMany {
                lo: i64::MIN,
                hi: i64::MAX,
                step: 1 << 32,
                count: 1 << 32
            })
        );
        assert_eq!(int(3, 3, 1).check(), Ok(()));
        assert_eq!(int(3, 3, 1).grid_len(), 1);
    }

    #[test]
    fn real_levels_and_choices_run_from_1_to_2_pow_31() {
        let real = |lo, hi, levels| Dim::Real { lo, hi, levels };
        let limit = MAX_DIM_VALUES as usize;
        assert_eq!(real(0.0, 1.0, 2).check(), Ok(()));
        assert_eq!(real(0.0, 1.0, limit).check(), Ok(()));
        for levels in [0, limit + 1] {
            assert_eq!(
                real(0.0, 1.0, levels).check(),
                Err(DomainError::RealLevels { levels })
            );
        }
        // One level is a range of one value only.
        assert_eq!(real(-0.5, -0.5, 1).check(), Ok(()));
        assert_eq!(
            real(-0.5, 0.5, 1).check(),
            Err(DomainError::RealOneLevel { lo: -0.5, hi: 0.5 })
        );
        assert_eq!(
            real(0.5, -0.5, 3).check(),
            Err(DomainError::RealEmpty { lo: 0.5, hi: -0.5 })
        );
        assert_eq!(Dim::Choice { n: 1 }.check(), Ok(()));
        assert_eq!(Dim::Choice { n: limit }.check(), Ok(()));
        for n in [0, limit + 1] {
            assert_eq!(
                Dim::Choice { n }.check(),
                Err(DomainError::ChoiceCount { n })
            );
        }
    }

    #[test]
    fn a_real_grid_ends_exactly_at_lo_and_hi() {
        // lo + (hi - lo) · 1 is 0.20000000000000004 here: the last level must be hi itself.
        let (lo, hi) = (-0.1, 0.2);
        assert_ne!(lo + (hi - lo), hi);
        let d = Dim::Real { lo, hi, levels: 4 };
        assert_eq!(d.grid_value(0), lo);
        assert_eq!(d.grid_value(3), hi);
        for (i, want) in [(1, 0.0), (2, 0.1)] {
            assert!((d.grid_value(i) - want).abs() < 1e-15, "level {i}");
        }
        assert_eq!(d.nearest_index(hi), 3);
        assert!(d.is_valid(hi, true));
        // A single level is lo.
        let one = real(2.5, 2.5, 1);
        assert_eq!(one.grid_value(0), 2.5);
    }

    #[test]
    fn nearest_index_maps_each_grid_value_back_and_ties_to_the_lower() {
        // lo away from 0, so that the position is measured from lo over the grid's span.
        let d = int(100, 104, 1);
        for i in 0..5 {
            assert_eq!(d.nearest_index(d.grid_value(i)), i);
        }
        assert_eq!(d.nearest_index(101.4), 1);
        assert_eq!(d.nearest_index(101.6), 2);
        let real = real(10.0, 20.0, 11);
        for i in 0..11 {
            assert_eq!(real.nearest_index(real.grid_value(i)), i);
        }
        // Halfway between two grid values: the lower index.
        let even = int(0, 4, 2);
        assert_eq!(even.nearest_index(1.0), 0);
        assert_eq!(even.nearest_index(1.0 + 1e-9), 1);
        assert_eq!(even.nearest_index(3.0), 1);
        assert_eq!(even.nearest_index(3.0 + 1e-9), 2);
        assert_eq!(real.nearest_index(12.5), 2);
        assert_eq!(d.nearest_index(102.5), 2);
        // Out of range: the nearest end; NaN: the first.
        assert_eq!(even.nearest_index(-7.0), 0);
        assert_eq!(even.nearest_index(f64::INFINITY), 2);
        assert_eq!(even.nearest_index(f64::NAN), 0);
        assert_eq!(int(5, 7, 3).nearest_index(9.0), 0);
    }

    #[test]
    fn normalize_puts_the_first_grid_value_at_0_and_the_last_at_1() {
        let d = int(100, 104, 1);
        assert_eq!(d.normalize(100.0), 0.0);
        assert_eq!(d.normalize(101.0), 0.25);
        assert_eq!(d.normalize(103.0), 0.75);
        assert_eq!(d.normalize(104.0), 1.0);
        assert_eq!(d.normalize(90.0), 0.0);
        assert_eq!(d.normalize(110.0), 1.0);
        assert_eq!(d.normalize(f64::NAN), 0.0);
        // The last grid value, not hi, is 1.
        assert_eq!(int(1, 10, 4).normalize(9.0), 1.0);
        assert_eq!(int(1, 10, 4).normalize(5.0), 0.5);
        let real = real(-1.0, 3.0, 5);
        assert_eq!(real.normalize(0.0), 0.25);
        assert_eq!(real.normalize(2.0), 0.75);
        assert_eq!(int(5, 5, 1).normalize(5.0), 0.0);
        assert_eq!(Dim::Choice { n: 1 }.normalize(3.0), 0.0);
    }

    #[test]
    fn denormalize_rounds_to_the_nearest_grid_value_halves_up() {
        // Three grid values 0, 2, 4 at u = 0, 0.5, 1.
        let d = int(0, 4, 2);
        for (u, want) in [
            (0.0, 0.0),
            (0.2, 0.0),
            (0.25, 2.0),
            (0.3, 2.0),
            (0.5, 2.0),
            (0.74, 2.0),
            (0.75, 4.0),
            (1.0, 4.0),
            (-0.5, 0.0),
            (1.5, 4.0),
        ] {
            assert_eq!(d.denormalize(u), want, "u = {u}");
        }
        assert_eq!(Dim::Choice { n: 3 }.denormalize(0.25), 1.0);
        assert_eq!(int(7, 7, 2).denormalize(0.9), 7.0);
        // A real anywhere in [lo, hi], hi exactly at 1.
        let real = real(-0.1, 0.2, 4);
        assert_eq!(real.denormalize(1.0), 0.2);
        assert_eq!(real.denormalize(2.0), 0.2);
        assert_eq!(real.denormalize(0.0), -0.1);
        assert_eq!(real.denormalize(-1.0), -0.1);
        assert!((real.denormalize(0.5) - 0.05).abs() < 1e-15);
    }

    #[test]
    fn a_real_is_valid_in_its_closed_range_or_on_its_levels() {
        let d = real(0.0, 1.0, 5);
        for v in [0.0, 0.3, 1.0] {
            assert!(d.is_valid(v, false), "{v}");
        }
        for v in [-0.5, -1e-12, 1.0 + 1e-12, 1.5, f64::NAN] {
            assert!(!d.is_valid(v, false), "{v}");
        }
        assert!(d.is_valid(0.25, true));
        assert!(d.is_valid(1.0, true));
        assert!(!d.is_valid(0.3, true));
        assert!(!d.is_valid(1.25, true));
        assert!(int(1, 10, 4).is_valid(9.0, false));
        assert!(!int(1, 10, 4).is_valid(10.0, false));
        assert!(!int(1, 10, 4).is_valid(-3.0, false));
    }

    #[test]
    fn a_dim_without_values_contains_nothing_and_indexes_without_underflow() {
        // Refused by `check`, but `nearest_index` and `contains` guard `n - 1` themselves.
        for d in [Dim::Choice { n: 0 }, real(0.0, 1.0, 0)] {
            assert_eq!(d.grid_len(), 0);
            for v in [0.0, 0.5, 5.0] {
                assert_eq!(d.nearest_index(v), 0, "{d:?} at {v}");
                assert!(!d.is_valid(v, true), "{d:?} at {v}");
            }
            assert!(!Space { dims: vec![d] }.contains(&[0.0], true));
        }
    }

    #[test]
    #[should_panic(expected = "ntbea: told 2 values for an ask of 1 points")]
    fn a_tell_of_the_wrong_count_panics() {
        check_values(&[0.5, 0.5], 1, "ntbea");
    }

    #[test]
    #[should_panic(expected = "spsa: told a value that is not finite")]
    fn a_tell_of_a_value_not_finite_panics() {
        check_values(&[0.5, f64::INFINITY], 2, "spsa");
    }

    #[test]
    #[should_panic(expected = "told a value that is not finite")]
    fn a_tell_of_nan_panics() {
        check_values(&[f64::NAN], 1, "ntbea");
    }

    #[test]
    fn finite_values_of_the_right_count_are_accepted() {
        check_values(&[0.0, -3.5], 2, "spsa");
        check_values(&[1e300], 1, "ntbea");
    }
}

/// Test helpers shared by the optimizers' tests: synthetic noisy objectives.
#[cfg(test)]
pub(crate) mod testing {
    use super::*;
    use dhumbal_game::rng::RandomSource;

    /// An integer dimension, shorter to write in a test.
    pub fn int(lo: i64, hi: i64, step: i64) -> Dim {
        Dim::Int { lo, hi, step }
    }

    /// A real dimension, shorter to write in a test.
    pub fn real(lo: f64, hi: f64, levels: usize) -> Dim {
        Dim::Real { lo, hi, levels }
    }

    /// A standard normal draw (Box-Muller).
    pub fn gaussian(rng: &mut ChaChaSource) -> f64 {
        let u1 = 1.0 - rng.random();
        let u2 = rng.random();
        (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
    }

    /// A space of every kind of dimension, one of them a single value, and `last`: the grid
    /// the optimizers' determinism tests walk.
    pub fn mixed_space(last: Dim) -> Space {
        Space {
            dims: vec![
                int(1, 10, 4),
                real(-1.0, 1.0, 7),
                Dim::Choice { n: 4 },
                int(5, 5, 3),
                last,
            ],
        }
    }

    /// The noise stream of a test run (separate from the optimizer's).
    pub fn noise(seed: u64) -> ChaChaSource {
        chacha_stream(seed, Purpose::Search, 7)
    }

    /// A run of `steps` asks and tells on a smooth noisy objective: every ask, every value
    /// told, the recommendation after each step, and the description at the end.
    #[allow(clippy::type_complexity)]
    pub fn record(
        space: &Space,
        make: impl Fn() -> Box<dyn Optimizer>,
        steps: usize,
    ) -> (
        Vec<Vec<Point>>,
        Vec<Vec<f64>>,
        Vec<Point>,
        serde_json::Value,
    ) {
        let mut opt = make();
        let mut rng = noise(3);
        let (mut asks, mut values, mut recs) = (Vec::new(), Vec::new(), Vec::new());
        for _ in 0..steps {
            let asked = opt.ask();
            let told: Vec<f64> = asked
                .iter()
                .map(|p| {
                    let signal: f64 = space
                        .dims
                        .iter()
                        .zip(p)
                        .map(|(d, &v)| (d.normalize(v) * 3.0).cos())
                        .sum();
                    0.5 + 0.05 * signal + 0.05 * gaussian(&mut rng)
                })
                .collect();
            opt.tell(&told);
            asks.push(asked);
            values.push(told);
            recs.push(opt.recommend());
        }
        (asks, values, recs, opt.describe())
    }

    fn bits(points: &[Point]) -> Vec<Vec<u64>> {
        points
            .iter()
            .map(|p| p.iter().map(|v| v.to_bits()).collect())
            .collect()
    }

    /// Two runs agree bit for bit; every point asked and recommended is valid; and a fresh
    /// optimizer told the first 20 steps' values reaches the state of the original: the same
    /// recommendation then, and the same asks and recommendation for the next 10 steps.
    pub fn check_deterministic_and_replayable(
        space: &Space,
        make: impl Fn() -> Box<dyn Optimizer>,
        real_levels: bool,
    ) {
        let (asks, values, recs, describe) = record(space, &make, 30);
        let again = record(space, &make, 30);
        let flat = |a: &[Vec<Point>]| bits(&a.concat());
        assert_eq!(flat(&asks), flat(&again.0));
        assert_eq!(bits(&recs), bits(&again.2));
        assert_eq!(describe, again.3);
        for p in asks.iter().flatten().chain(&recs) {
            assert!(space.contains(p, real_levels), "invalid point {p:?}");
        }
        let mut replay = make();
        for step in 0..30 {
            let asked = replay.ask();
            assert_eq!(
                bits(&asked),
                bits(&asks[step]),
                "ask {step} differs on replay"
            );
            // Asking again before telling changes nothing.
            assert_eq!(bits(&replay.ask()), bits(&asks[step]));
            replay.tell(&values[step]);
            if step == 19 {
                assert_eq!(bits(&[replay.recommend()]), bits(&recs[19..20]));
            }
        }
        assert_eq!(bits(&[replay.recommend()]), bits(&recs[29..30]));
        assert_eq!(replay.describe(), describe);
    }
}
