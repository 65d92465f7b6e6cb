//! Power, sample size and minimum detectable effect.
//!
//! - The paper's eq. 5, n = 2(z_{1-α/2} + z_{1-β})² σ² / δ², a closed form for two groups of
//!   n with common variance σ² (for a win rate, σ² = p(1-p)); used by `dhumbal-run plan`.
//! - The two-sided z-test power with both tails (statsmodels `NormalIndPower`).
//! - The two-sample and paired t-test power through the noncentral t (statsmodels
//!   `TTestIndPower`, `TTestPower`), and the sample size or effect size that reaches a
//!   target power, solved by Brent's method to 1e-12 relative from the z-test's closed form
//!   (statsmodels solves with `brentq` too).
//!
//! Effect sizes are standardised (mean difference over a standard deviation).

use crate::dist::{nct_cdf, normal_cdf, normal_quantile, t_quantile};

/// The paper's eq. 5: observations per group to detect a difference `delta` between two
/// means with common variance `sigma2` at two-sided level `alpha` with power `power`.
pub fn sample_size_eq5(delta: f64, sigma2: f64, alpha: f64, power: f64) -> Option<f64> {
    if !(delta != 0.0 && sigma2 > 0.0 && valid_prob(alpha) && valid_prob(power)) {
        return None;
    }
    let z = z_sum(alpha, power);
    Some(2.0 * z * z * sigma2 / (delta * delta))
}

fn valid_prob(p: f64) -> bool {
    p > 0.0 && p < 1.0
}

/// Power of the two-sided two-sample z-test with `n1` and `ratio·n1` observations
/// (statsmodels `NormalIndPower().power`), both rejection tails counted.
pub fn normal_ind_power(effect_size: f64, n1: f64, alpha: f64, ratio: f64) -> f64 {
    let n = 1.0 / (1.0 / n1 + 1.0 / (n1 * ratio));
    let crit = normal_quantile(1.0 - alpha / 2.0);
    let shift = effect_size * n.sqrt();
    normal_cdf(shift - crit) + normal_cdf(-shift - crit)
}

/// Power of the two-sided t-test with `df` degrees of freedom and noncentrality `nc`.
fn t_power(nc: f64, df: f64, alpha: f64) -> f64 {
    let crit = t_quantile(1.0 - alpha / 2.0, df);
    (1.0 - nct_cdf(crit, df, nc)) + nct_cdf(-crit, df, nc)
}

/// Power of the two-sided two-sample t-test (pooled, df = n1 + n2 - 2) with `n1` and
/// `ratio·n1` observations (statsmodels `TTestIndPower().power`).
pub fn ttest_ind_power(effect_size: f64, n1: f64, alpha: f64, ratio: f64) -> f64 {
    let n2 = n1 * ratio;
    let n = 1.0 / (1.0 / n1 + 1.0 / n2);
    t_power(effect_size * n.sqrt(), n1 + n2 - 2.0, alpha)
}

/// Power of the two-sided paired (one-sample) t-test on `n` differences (statsmodels
/// `TTestPower().power`).
pub fn ttest_paired_power(effect_size: f64, n: f64, alpha: f64) -> f64 {
    t_power(effect_size * n.sqrt(), n - 1.0, alpha)
}

/// The x in (lo, ∞) at which the increasing f reaches `target`, to 1e-12 relative: a bracket
/// found from `guess` (doubled while f stays below the target, else halved towards `lo`, at
/// most 200 times, as the bisection this replaced stopped), then Brent's method in it. `None`
/// if no x up to 1e15 reaches it (or the guess is past it, or `lo` is not a finite number);
/// where f reaches the target all the way down to `lo`, a point within 2^-200 of the way
/// there. A NaN counts as reaching it, as a bisection would take it.
///
/// Each evaluation of a t-test's power sums a noncentral t series, so the number of them is
/// what the solve costs: from the z-test's answer as the guess, about a dozen, where a
/// bisection of the doubled bracket took about fifty (the report's power summary solves one
/// per pair and metric).
fn solve_increasing(f: impl Fn(f64) -> f64, target: f64, lo: f64, guess: f64) -> Option<f64> {
    let g = |x: f64| {
        #[cfg(test)]
        tests::EVALUATIONS.with(|n| n.set(n.get() + 1));
        let v = f(x) - target;
        if v.is_nan() { 1.0 } else { v }
    };
    if !lo.is_finite() {
        return None;
    }
    let mut b = if guess.is_finite() { guess } else { 1.0 };
    b = b.max(lo * 2.0).max(lo + 1e-9).max(1e-9);
    if b > 1e15 {
        return None;
    }
    let mut gb = g(b);
    let (a, ga);
    if gb < 0.0 {
        loop {
            let (prev, gprev) = (b, gb);
            b *= 2.0;
            if b > 1e15 {
                return None;
            }
            gb = g(b);
            if gb >= 0.0 {
                (a, ga) = (prev, gprev);
                break;
            }
        }
    } else {
        let mut halvings = 0;
        loop {
            let c = lo + 0.5 * (b - lo);
            halvings += 1;
            if !(c > lo && c < b) || b - c <= 1e-12 * b.abs() || halvings > 200 {
                return Some(b);
            }
            let gc = g(c);
            if gc < 0.0 {
                (a, ga) = (c, gc);
                break;
            }
            (b, gb) = (c, gc);
        }
    }
    Some(brent(g, (a, ga), (b, gb), 1e-12))
}

/// A root of `g` in the bracket (a, b), g(a) < 0 <= g(b) given, to `rel` relative: Brent's
/// method (R. P. Brent, *Algorithms for Minimization without Derivatives*, 1973, ch. 4):
/// inverse quadratic or secant steps while they shrink the bracket fast enough, bisection
/// otherwise (at worst about the square of bisection's count; a dozen steps for the smooth
/// power curves here). After 200 steps the best estimate is returned as it is.
fn brent(g: impl Fn(f64) -> f64, (a, ga): (f64, f64), (b, gb): (f64, f64), rel: f64) -> f64 {
    // `cur`: the best estimate; `blk`: the other end of the bracket; `pre`: the estimate
    // before `cur`.
    let (mut pre, mut g_pre) = (a, ga);
    let (mut cur, mut g_cur) = (b, gb);
    let (mut blk, mut g_blk) = (a, ga);
    let (mut step_pre, mut step) = (b - a, b - a);
    for _ in 0..200 {
        if g_pre != 0.0 && g_cur != 0.0 && (g_pre < 0.0) != (g_cur < 0.0) {
            (blk, g_blk) = (pre, g_pre);
            step_pre = cur - pre;
            step = step_pre;
        }
        if g_blk.abs() < g_cur.abs() {
            (pre, g_pre) = (cur, g_cur);
            (cur, g_cur) = (blk, g_blk);
            (blk, g_blk) = (pre, g_pre);
        }
        let tol = 0.5 * (rel * cur.abs()).max(f64::MIN_POSITIVE);
        let half = 0.5 * (blk - cur);
        if g_cur == 0.0 || half.abs() < tol {
            return cur;
        }
        let mut bisect = true;
        if step_pre.abs() > tol && g_cur.abs() < g_pre.abs() {
            let trial = if pre == blk {
                // Secant through the two ends.
                -g_cur * (cur - pre) / (g_cur - g_pre)
            } else {
                // Inverse quadratic through the three points.
                let d_pre = (g_pre - g_cur) / (pre - cur);
                let d_blk = (g_blk - g_cur) / (blk - cur);
                -g_cur * (g_blk * d_blk - g_pre * d_pre) / (d_blk * d_pre * (g_blk - g_pre))
            };
            if trial.is_finite() && 2.0 * trial.abs() < step_pre.abs().min(3.0 * half.abs() - tol) {
                step_pre = step;
                step = trial;
                bisect = false;
            }
        }
        if bisect {
            step_pre = half;
            step = half;
        }
        (pre, g_pre) = (cur, g_cur);
        cur += if step.abs() > tol {
            step
        } else if half > 0.0 {
            tol
        } else {
            -tol
        };
        g_cur = g(cur);
    }
    cur
}

/// z_{1-α/2} + z_power: the two-sided z-test's distance, in standard errors, between no
/// difference and the smallest it detects with `power` (eq. 5's numerator; over a
/// standardised effect, squared, the z-test's observations, the t-test solves' starting
/// guess).
pub fn z_sum(alpha: f64, power: f64) -> f64 {
    normal_quantile(1.0 - alpha / 2.0) + normal_quantile(power)
}

// The z-tests' closed forms (one side of the two-sided rejection region ignored), where the
// t-test solves start: n1 = (z/es)²·(1 + ratio)/ratio for two samples, n = (z/es)² for one (or
// paired), and the effects they detect, es = z/sqrt(n1·ratio/(1 + ratio)) and z/sqrt(n); z is
// [`z_sum`].

/// The z-test's first group for `effect_size` (two samples, `ratio·n1` in the second).
fn z_ind_n1(effect_size: f64, alpha: f64, power: f64, ratio: f64) -> f64 {
    let z = z_sum(alpha, power) / effect_size;
    z * z * (1.0 + ratio) / ratio
}

/// The one-sample (paired) z-test's observations for `effect_size`.
fn z_one_n(effect_size: f64, alpha: f64, power: f64) -> f64 {
    let z = z_sum(alpha, power) / effect_size;
    z * z
}

/// The effect the two-sample z-test detects with `n1` and `ratio·n1` observations.
fn z_ind_mde(n1: f64, alpha: f64, power: f64, ratio: f64) -> f64 {
    let n = n1 * ratio / (1.0 + ratio);
    z_sum(alpha, power) / n.sqrt()
}

/// The effect the one-sample (paired) z-test detects with `n` observations.
fn z_one_mde(n: f64, alpha: f64, power: f64) -> f64 {
    z_sum(alpha, power) / n.sqrt()
}

/// Observations in the first group for the z-test to reach `power`.
pub fn normal_ind_sample_size(effect_size: f64, alpha: f64, power: f64, ratio: f64) -> Option<f64> {
    if effect_size == 0.0 || !valid_prob(alpha) || !valid_prob(power) {
        return None;
    }
    solve_increasing(
        |n| normal_ind_power(effect_size, n, alpha, ratio),
        power,
        1.0,
        z_ind_n1(effect_size, alpha, power, ratio),
    )
}

/// Observations in the first group for the two-sample t-test to reach `power`.
pub fn ttest_ind_sample_size(effect_size: f64, alpha: f64, power: f64, ratio: f64) -> Option<f64> {
    if effect_size == 0.0 || !valid_prob(alpha) || !valid_prob(power) {
        return None;
    }
    if !(ratio > 0.0 && ratio.is_finite()) {
        return None;
    }
    // Degrees of freedom must stay positive: n1·(1 + ratio) > 2.
    let lo = 2.0 / (1.0 + ratio) + 1e-9;
    solve_increasing(
        |n| ttest_ind_power(effect_size, n, alpha, ratio),
        power,
        lo,
        z_ind_n1(effect_size, alpha, power, ratio),
    )
}

/// Differences needed for the paired t-test to reach `power`.
pub fn ttest_paired_sample_size(effect_size: f64, alpha: f64, power: f64) -> Option<f64> {
    if effect_size == 0.0 || !valid_prob(alpha) || !valid_prob(power) {
        return None;
    }
    solve_increasing(
        |n| ttest_paired_power(effect_size, n, alpha),
        power,
        1.0 + 1e-9,
        z_one_n(effect_size, alpha, power),
    )
}

/// The minimum detectable (standardised) effect of the two-sample t-test with `n1` and
/// `ratio·n1` observations at `alpha` and `power`.
pub fn ttest_ind_mde(n1: f64, alpha: f64, power: f64, ratio: f64) -> Option<f64> {
    if n1 * (1.0 + ratio) <= 2.0 || !valid_prob(alpha) || !valid_prob(power) {
        return None;
    }
    solve_increasing(
        |es| ttest_ind_power(es, n1, alpha, ratio),
        power,
        0.0,
        z_ind_mde(n1, alpha, power, ratio),
    )
}

/// The minimum detectable (standardised) effect of the paired t-test on `n` differences.
pub fn ttest_paired_mde(n: f64, alpha: f64, power: f64) -> Option<f64> {
    if n <= 1.0 || !valid_prob(alpha) || !valid_prob(power) {
        return None;
    }
    solve_increasing(
        |es| ttest_paired_power(es, n, alpha),
        power,
        0.0,
        z_one_mde(n, alpha, power),
    )
}

/// Power, units needed and minimum detectable difference of a clustered (paired) test, from
/// a measured design: `var_difference`, the cluster-robust variance of the mean difference
/// over `units` units (deals or games), i.e. a standard deviation of the unit differences
/// σ_u = sqrt(G·V). The test is the paired t-test on G units with effect δ/σ_u (statsmodels
/// `TTestPower`); σ_u carries the design effect (pairing, clustering, table negativity), so
/// the same σ_u plans a run of the same design with any number of units.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MeasuredDesign {
    /// SD of the unit differences, sqrt(G·V).
    pub sd_units: f64,
}

impl MeasuredDesign {
    /// From the variance of the mean difference measured over `units` units; `None` without
    /// a positive variance or with fewer than two units.
    pub fn new(var_difference: f64, units: u64) -> Option<MeasuredDesign> {
        (units >= 2 && var_difference > 0.0 && var_difference.is_finite()).then(|| MeasuredDesign {
            sd_units: (var_difference * units as f64).sqrt(),
        })
    }

    /// Power to detect a difference `delta` with `units` units at two-sided `alpha`.
    pub fn power(&self, delta: f64, units: f64, alpha: f64) -> f64 {
        ttest_paired_power(delta / self.sd_units, units, alpha)
    }

    /// Units needed to detect `delta` at `alpha` with `power`.
    pub fn units_needed(&self, delta: f64, alpha: f64, power: f64) -> Option<f64> {
        ttest_paired_sample_size(delta / self.sd_units, alpha, power)
    }

    /// Smallest difference detected with `units` units at `alpha` with `power`.
    pub fn mde(&self, units: f64, alpha: f64, power: f64) -> Option<f64> {
        ttest_paired_mde(units, alpha, power).map(|e| e * self.sd_units)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    thread_local! {
        /// Evaluations of the function a solve is given, on this thread.
        pub(super) static EVALUATIONS: std::cell::Cell<u32> = const { std::cell::Cell::new(0) };
    }

    /// `solve()`'s answer and the evaluations it took.
    fn counted<T>(solve: impl FnOnce() -> T) -> (T, u32) {
        EVALUATIONS.with(|n| n.set(0));
        let answer = solve();
        (answer, EVALUATIONS.with(|n| n.get()))
    }

    /// Every solve starts from the z-test's closed form, near its root: a handful of
    /// evaluations (measured: 5 to 6 for the z-test, whose guess is its answer but for the far
    /// tail; 6 to 12 for the t-tests). A guess off by a factor adds the doubling or halving
    /// that reaches a bracket.
    #[test]
    fn every_solve_starts_near_its_root() {
        for es in [0.02, 0.2, 1.5] {
            for ratio in [0.5, 1.0, 3.0] {
                let (n, k) = counted(|| normal_ind_sample_size(es, 0.05, 0.8, ratio));
                assert!(
                    n.is_some() && k <= 6,
                    "z es {es} ratio {ratio}: {k} evaluations"
                );
                let (n, k) = counted(|| ttest_ind_sample_size(es, 0.05, 0.8, ratio));
                assert!(
                    n.is_some() && k <= 12,
                    "t es {es} ratio {ratio}: {k} evaluations"
                );
            }
            let (n, k) = counted(|| ttest_paired_sample_size(es, 0.01, 0.9));
            assert!(n.is_some() && k <= 11, "paired es {es}: {k} evaluations");
        }
        for n in [5.0, 40.0, 1e4] {
            let (es, k) = counted(|| ttest_ind_mde(n, 0.05, 0.8, 2.0));
            assert!(es.is_some() && k <= 11, "mde n {n}: {k} evaluations");
            let (es, k) = counted(|| ttest_paired_mde(n, 0.05, 0.8));
            assert!(es.is_some() && k <= 11, "paired mde n {n}: {k} evaluations");
        }
        assert_eq!(normal_ind_sample_size(0.0, 0.05, 0.8, 1.0), None);
        assert_eq!(normal_ind_sample_size(0.3, 0.0, 0.8, 1.0), None);
        assert_eq!(normal_ind_sample_size(0.3, 0.05, 1.0, 1.0), None);
    }

    /// The solves' starting points are the z-tests' closed forms: the z-test's power there,
    /// the far side of the rejection region left out, is the power asked, at unequal group
    /// sizes too; and a guard's inputs with no answer (a level that is not a number) have none.
    #[test]
    fn the_guesses_are_the_z_tests_answers() {
        let one_sided = |x: f64, alpha: f64| normal_cdf(x - normal_quantile(1.0 - alpha / 2.0));
        for (alpha, power) in [(0.05, 0.8), (0.01, 0.9), (0.1, 0.5)] {
            for ratio in [0.5, 1.0, 3.0] {
                for es in [0.05, 0.3] {
                    let n1 = z_ind_n1(es, alpha, power, ratio);
                    let n2 = ratio * n1;
                    let reach = es / (1.0 / n1 + 1.0 / n2).sqrt();
                    assert!(
                        (one_sided(reach, alpha) - power).abs() < 1e-9,
                        "{es} {ratio}"
                    );
                }
                for n1 in [30.0, 500.0] {
                    let es = z_ind_mde(n1, alpha, power, ratio);
                    let reach = es / (1.0 / n1 + 1.0 / (ratio * n1)).sqrt();
                    assert!(
                        (one_sided(reach, alpha) - power).abs() < 1e-9,
                        "{n1} {ratio}"
                    );
                }
            }
            for es in [0.05, 0.3] {
                let n = z_one_n(es, alpha, power);
                assert!(
                    (one_sided(es * n.sqrt(), alpha) - power).abs() < 1e-9,
                    "{es}"
                );
            }
            for n in [30.0, 500.0] {
                let es = z_one_mde(n, alpha, power);
                assert!(
                    (one_sided(es * n.sqrt(), alpha) - power).abs() < 1e-9,
                    "{n}"
                );
            }
        }
        assert_eq!(normal_ind_sample_size(0.3, f64::NAN, 0.8, 1.0), None);
        assert_eq!(normal_ind_sample_size(0.3, 0.05, f64::NAN, 1.0), None);
    }

    /// The solves' answers reach the target power (statsmodels' own values are checked in
    /// tests/analysis.rs), from guesses on either side of the root.
    #[test]
    fn solves_land_on_the_target_power() {
        for es in [0.003, 0.02, 0.2, 1.5] {
            let n = ttest_paired_sample_size(es, 0.05 / 6.0, 0.8).unwrap();
            let p = ttest_paired_power(es, n, 0.05 / 6.0);
            assert!((p - 0.8).abs() < 1e-9, "paired es {es}: n {n}, power {p}");
            let n1 = ttest_ind_sample_size(es, 0.05, 0.9, 0.5).unwrap();
            let p = ttest_ind_power(es, n1, 0.05, 0.5);
            assert!((p - 0.9).abs() < 1e-9, "ind es {es}: n1 {n1}, power {p}");
            let z = normal_ind_sample_size(es, 0.05, 0.8, 2.0).unwrap();
            let p = normal_ind_power(es, z, 0.05, 2.0);
            assert!((p - 0.8).abs() < 1e-9, "z es {es}: n1 {z}, power {p}");
        }
        for n in [3.0, 40.0, 1e6] {
            let es = ttest_paired_mde(n, 0.05, 0.8).unwrap();
            assert!(
                (ttest_paired_power(es, n, 0.05) - 0.8).abs() < 1e-9,
                "mde n {n}"
            );
        }
    }

    /// A level or a power outside (0, 1), no difference or no variance: no sample size, no
    /// detectable effect (the bounds themselves excluded); just inside them, an answer.
    #[test]
    fn inputs_outside_their_ranges_have_no_answer() {
        for p in [0.0, 1.0, -0.5, 1.5, f64::NAN] {
            assert_eq!(sample_size_eq5(0.1, 0.25, p, 0.8), None, "alpha {p}");
            assert_eq!(sample_size_eq5(0.1, 0.25, 0.05, p), None, "power {p}");
            assert_eq!(ttest_ind_sample_size(0.3, p, 0.8, 1.0), None, "alpha {p}");
            assert_eq!(ttest_ind_sample_size(0.3, 0.05, p, 1.0), None, "power {p}");
            assert_eq!(ttest_paired_sample_size(0.3, p, 0.8), None, "alpha {p}");
            assert_eq!(ttest_paired_sample_size(0.3, 0.05, p), None, "power {p}");
            assert_eq!(ttest_ind_mde(50.0, p, 0.8, 1.0), None, "alpha {p}");
            assert_eq!(ttest_paired_mde(50.0, 0.05, p), None, "power {p}");
        }
        assert_eq!(sample_size_eq5(0.0, 0.25, 0.05, 0.8), None);
        for var in [0.0, -0.25, f64::NAN] {
            assert_eq!(sample_size_eq5(0.1, var, 0.05, 0.8), None, "variance {var}");
        }
        assert_eq!(ttest_ind_sample_size(0.0, 0.05, 0.8, 1.0), None);
        assert_eq!(ttest_paired_sample_size(0.0, 0.05, 0.8), None);
        assert_eq!(
            ttest_ind_mde(1.0, 0.05, 0.8, 1.0),
            None,
            "two observations in all"
        );
        assert!(
            ttest_ind_mde(1.0, 0.05, 0.8, 1.5).is_some(),
            "2.5 observations in all"
        );
        assert_eq!(ttest_paired_mde(1.0, 0.05, 0.8), None, "one difference");
        for p in [1e-9, 0.999_999] {
            assert!(sample_size_eq5(0.1, 0.25, p, 0.5).is_some(), "alpha {p}");
            assert!(sample_size_eq5(0.1, 0.25, 0.05, p).is_some(), "power {p}");
        }
        assert!(
            sample_size_eq5(-0.1, 0.25, 0.05, 0.8).is_some(),
            "a negative difference"
        );
    }

    /// The solve finds its bracket by doubling from the guess (a dozen or so evaluations with
    /// Brent's steps, whatever the distance), and the largest x it tries is 1e15 itself.
    #[test]
    fn the_bracket_doubles_up_to_1e15() {
        let calls = std::cell::Cell::new(0u32);
        let line = |x: f64| {
            calls.set(calls.get() + 1);
            x
        };
        let x = solve_increasing(line, 1e6, 0.0, 1e-3).unwrap();
        assert!((x - 1e6).abs() <= 1e-12 * 1e6, "{x}");
        assert!(calls.get() <= 60, "{} evaluations", calls.get());
        // Reached exactly at 1e15, from a guess that doubles onto it, or from 1e15 itself.
        assert_eq!(
            solve_increasing(|x| x, 1e15, 0.0, 1e15 / 1024.0),
            Some(1e15)
        );
        assert_eq!(solve_increasing(|x| x, 1e15, 0.0, 1e15), Some(1e15));
        // Not reached by 1e15: no answer.
        assert_eq!(solve_increasing(|x| x, 3e15, 0.0, 1.0), None);
        assert_eq!(solve_increasing(|x| x, 3e15, 0.0, 2e15), None);
    }

    /// Brent's steps are what make a solve cheap: on the power curves themselves, and on a
    /// smooth root within its bracket, a few evaluations where bisection to 1e-12 relative
    /// takes about forty (the module's doc: a dozen against fifty). A step that interpolates
    /// wrongly still converges, through bisection, so only the count tells.
    #[test]
    fn brents_steps_take_few_evaluations() {
        let calls = std::cell::Cell::new(0u32);
        let counted = |f: &dyn Fn(f64) -> f64, x: f64| {
            calls.set(calls.get() + 1);
            f(x)
        };
        for es in [0.003, 0.02, 0.2, 1.5] {
            let z = z_sum(0.05, 0.8) / es;
            calls.set(0);
            let power = |n: f64| ttest_paired_power(es, n, 0.05);
            let n = solve_increasing(|n| counted(&power, n), 0.8, 1.0 + 1e-9, z * z).unwrap();
            assert!(
                calls.get() <= 12,
                "paired es {es}: {} evaluations",
                calls.get()
            );
            assert!((ttest_paired_power(es, n, 0.05) - 0.8).abs() < 1e-9);
        }
        let cubic = |x: f64| x * x * x - 2.0;
        calls.set(0);
        let root = brent(|x| counted(&cubic, x), (0.0, -2.0), (2.0, 6.0), 1e-12);
        assert!((root - 2f64.cbrt()).abs() <= 1e-12 * 2f64.cbrt(), "{root}");
        assert!(calls.get() <= 10, "cubic: {} evaluations", calls.get());
    }

    /// Where f reaches the target from the guess down, the bracket is found by halving
    /// towards `lo`: the first point below the target bounds it; where f reaches the target
    /// all the way down, the answer is the last point tried, 200 halvings from the start (or
    /// the first within 1e-12 relative of the one before it).
    #[test]
    fn the_bracket_halves_towards_lo() {
        // f reaches 1 exactly at 1: the halving stops below it, Brent's steps land on it.
        let x = solve_increasing(|x| x.min(1.0), 1.0, 0.0, 4.0).unwrap();
        assert!((x - 1.0).abs() <= 1e-9, "{x}");
        // Reached everywhere above lo = 0: 2^-200 of the start, after 201 evaluations.
        let (x, k) = counted(|| solve_increasing(|_| 1.0, 0.5, 0.0, 1.0));
        assert_eq!((x, k), (Some(2f64.powi(-200)), 201));
        assert_eq!(
            solve_increasing(|_| f64::NAN, 0.5, 0.0, 1.0),
            Some(2f64.powi(-200))
        );
        // Above lo = 4 (from 8 = 2·lo): within 1e-12 relative of the previous point.
        assert_eq!(
            solve_increasing(|_| 1.0, 0.5, 4.0, 1.0),
            Some(4.0 + 2f64.powi(-37))
        );
    }

    /// Huge effects need the fewest observations the tests allow: the answer stays where
    /// the degrees of freedom are positive (n > 1 differences; n1·(1 + ratio) > 2) and
    /// reaches the power asked there.
    #[test]
    fn huge_effects_stay_where_the_test_exists() {
        for es in [3.0, 8.0, 20.0] {
            let n = ttest_paired_sample_size(es, 0.05, 0.8).unwrap();
            assert!(n > 1.0, "paired es {es}: {n}");
            assert!(
                (ttest_paired_power(es, n, 0.05) - 0.8).abs() < 1e-9,
                "paired es {es}"
            );
            for ratio in [0.5, 1.0, 3.0] {
                let n1 = ttest_ind_sample_size(es, 0.05, 0.8, ratio).unwrap();
                assert!(n1 * (1.0 + ratio) > 2.0, "es {es} ratio {ratio}: {n1}");
                let p = ttest_ind_power(es, n1, 0.05, ratio);
                assert!(
                    (p - 0.8).abs() < 1e-9,
                    "es {es} ratio {ratio}: {n1}, power {p}"
                );
            }
        }
    }

    /// Inputs with no answer end (no endless halving towards a bound that is not a number).
    #[test]
    fn solves_without_an_answer_end() {
        for ratio in [f64::NAN, -1.0, -3.0, 0.0, f64::INFINITY] {
            assert_eq!(
                ttest_ind_sample_size(0.3, 0.05, 0.8, ratio),
                None,
                "{ratio}"
            );
        }
        // A power at or below alpha is reached by any effect: the answer is next to 0.
        let es = ttest_paired_mde(50.0, 0.05, 0.04).unwrap();
        assert!((0.0..1e-6).contains(&es), "{es}");
        // An effect so small that the units needed pass 1e15.
        assert_eq!(ttest_paired_sample_size(1e-9, 0.05, 0.8), None);
    }
}
