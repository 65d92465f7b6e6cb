//! The difference between two settings measured on the same units (a sweep's points, which
//! play the same deals or games): per unit, a rate on each side (successes over trials), and
//! the mean over the units both sides played of the per-unit difference, with the t interval
//! on units − 1 degrees of freedom (docs/analysis.md, "Sweeps").
//!
//! Checked against SciPy in `tests/fixtures/paired.json` (`scripts/reference/paired_fixture.py`);
//! a sweep's whole summary against pandas and SciPy in `tests/sweeps.rs`.

use std::collections::BTreeMap;

use crate::stats::{Moments, mean_interval};

/// One unit's successes and trials on one side (rounds won of rounds played; games won of
/// games played).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Tally {
    pub successes: f64,
    pub trials: f64,
}

impl Tally {
    /// The unit's rate; `None` for a unit with no trials.
    pub fn rate(self) -> Option<f64> {
        (self.trials > 0.0).then(|| self.successes / self.trials)
    }
}

/// A paired difference `a − b`: its mean over the units both sides played, its 95% interval
/// (`None` for a single unit), and how many units.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Paired {
    pub difference: f64,
    pub ci95: Option<(f64, f64)>,
    pub units: u64,
}

impl Paired {
    /// Whether the interval excludes zero.
    pub fn excludes_zero(&self) -> bool {
        self.ci95.is_some_and(|(low, high)| low > 0.0 || high < 0.0)
    }
}

/// The paired difference of the rates `a − b` over the units that both sides played (a unit
/// missing from one side, or with no trials on one side, is left out); `None` when no unit
/// is shared.
pub fn paired_rates(a: &BTreeMap<u64, Tally>, b: &BTreeMap<u64, Tally>) -> Option<Paired> {
    let mut moments = Moments::new();
    for (unit, x) in a {
        if let Some(ra) = x.rate()
            && let Some(rb) = b.get(unit).and_then(|y| y.rate())
        {
            moments.push(ra - rb);
        }
    }
    Some(Paired {
        difference: moments.mean()?,
        ci95: mean_interval(&moments, 0.95),
        units: moments.n,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tallies(list: &[(u64, f64, f64)]) -> BTreeMap<u64, Tally> {
        list.iter()
            .map(|&(u, successes, trials)| (u, Tally { successes, trials }))
            .collect()
    }

    #[test]
    fn only_units_both_sides_played_are_paired() {
        // Unit 2 is missing on b, unit 3 has no trials on a: units 0 and 1 remain.
        let a = tallies(&[(0, 1.0, 2.0), (1, 2.0, 2.0), (2, 1.0, 1.0), (3, 0.0, 0.0)]);
        let b = tallies(&[(0, 0.0, 2.0), (1, 1.0, 4.0), (3, 1.0, 1.0), (4, 1.0, 1.0)]);
        let d = paired_rates(&a, &b).unwrap();
        assert_eq!(d.units, 2);
        // (0.5 - 0) and (1 - 0.25): mean 0.625.
        assert!((d.difference - 0.625).abs() < 1e-15);
        assert!(paired_rates(&a, &BTreeMap::new()).is_none());
        let b_no_trials = tallies(&[(0, 0.0, 0.0)]);
        assert!(paired_rates(&a, &b_no_trials).is_none());
    }

    #[test]
    fn one_unit_has_no_interval_and_equal_differences_a_point_interval() {
        let d = paired_rates(&tallies(&[(5, 3.0, 4.0)]), &tallies(&[(5, 1.0, 4.0)])).unwrap();
        assert_eq!((d.difference, d.ci95, d.units), (0.5, None, 1));
        assert!(!d.excludes_zero());
        let a = tallies(&[(0, 1.0, 1.0), (1, 1.0, 1.0)]);
        let b = tallies(&[(0, 0.0, 1.0), (1, 0.0, 1.0)]);
        let d = paired_rates(&a, &b).unwrap();
        assert_eq!(d.ci95, Some((1.0, 1.0)));
        assert!(d.excludes_zero());
    }

    #[test]
    fn an_interval_excludes_zero_on_either_side_only_when_it_does() {
        let at = |low, high| Paired {
            difference: 0.0,
            ci95: Some((low, high)),
            units: 3,
        };
        assert!(at(0.1, 0.2).excludes_zero());
        assert!(at(-0.2, -0.1).excludes_zero());
        assert!(!at(-0.1, 0.2).excludes_zero());
        assert!(!at(0.0, 0.2).excludes_zero());
        assert!(!at(-0.2, 0.0).excludes_zero());
    }
}
