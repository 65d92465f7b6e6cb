//! The distributions behind the tests, intervals and power: the standard normal, Student's t
//! and the noncentral t. Built on statrs' special functions (`erfc`, `erfc_inv`, the
//! regularised incomplete beta) rather than its distribution types, because tail
//! probabilities must stay accurate far out (p-values of 1e-50 are common with a million
//! rounds) and nothing here may panic on a value derived from user data.

use statrs::function::beta::checked_beta_reg;
use statrs::function::erf::{erfc, erfc_inv};
use statrs::function::gamma::ln_gamma;

/// The standard normal distribution function Φ(x).
pub fn normal_cdf(x: f64) -> f64 {
    0.5 * erfc(-x / std::f64::consts::SQRT_2)
}

/// The standard normal upper tail 1 - Φ(x), accurate for large x.
pub fn normal_sf(x: f64) -> f64 {
    0.5 * erfc(x / std::f64::consts::SQRT_2)
}

/// The standard normal quantile Φ⁻¹(p); ±∞ at 0 and 1, NaN outside [0, 1].
pub fn normal_quantile(p: f64) -> f64 {
    if !(0.0..=1.0).contains(&p) {
        return f64::NAN;
    }
    -std::f64::consts::SQRT_2 * erfc_inv(2.0 * p)
}

/// Two-sided p-value of a t statistic: P(|T| >= |t|) with `df` degrees of freedom, computed
/// as one incomplete beta (never as 1 - cdf, which would round tiny p-values to 0).
pub fn t_two_sided_p(t: f64, df: f64) -> Option<f64> {
    if !t.is_finite() || df.is_nan() || df <= 0.0 {
        return None;
    }
    if df.is_infinite() {
        return Some(2.0 * normal_sf(t.abs()));
    }
    let x = df / (df + t * t);
    checked_beta_reg(df / 2.0, 0.5, x).ok()
}

/// Student's t distribution function P(T <= t).
pub fn t_cdf(t: f64, df: f64) -> f64 {
    match t_two_sided_p(t, df) {
        Some(p) if t < 0.0 => 0.5 * p,
        Some(p) => 1.0 - 0.5 * p,
        None => f64::NAN,
    }
}

/// Student's t density.
pub fn t_pdf(t: f64, df: f64) -> f64 {
    let ln = ln_gamma((df + 1.0) / 2.0)
        - ln_gamma(df / 2.0)
        - 0.5 * (df * std::f64::consts::PI).ln()
        - (df + 1.0) / 2.0 * (1.0 + t * t / df).ln();
    ln.exp()
}

/// The smallest tail for which [`t_quantile`] asks statrs for its first guess (below it,
/// statrs' inverse panics or does not return for some degrees of freedom).
const FAR_TAIL: f64 = 1e-30;

/// Student's t quantile: statrs' inverse (through the inverse incomplete beta) polished by
/// Newton steps on the accurate cdf above, so that critical values agree with SciPy's to
/// about 1e-12.
pub fn t_quantile(p: f64, df: f64) -> f64 {
    if !(0.0..=1.0).contains(&p) || df.is_nan() || df <= 0.0 {
        return f64::NAN;
    }
    if p == 0.0 {
        return f64::NEG_INFINITY;
    }
    if p == 1.0 {
        return f64::INFINITY;
    }
    if df.is_infinite() {
        return normal_quantile(p);
    }
    // Symmetry: solve in the upper half for the upper tail's probability, taken as p itself
    // below one half (1 - (1 - p) would lose p's digits: 1e-12 would become 1.00002e-12).
    let (upper, tail, sign) = if p >= 0.5 {
        (p, 1.0 - p, 1.0)
    } else {
        (1.0 - p, p, -1.0)
    };
    // statrs' inverse panics for a tail under about 1e-163 (its Newton steps leave [0, 1]),
    // and does not return at all for some far tails at many degrees of freedom (1e-149 at
    // 1e5): under 1e-30 (far past any level a test asks for), the larger of two guesses that the polish below takes to the root, the normal
    // quantile (the t's tail is heavier, so its quantile is larger) and the power-law tail's
    // `(c / tail)^(1/df)`, with `sf(t) ≈ c·t^-df` for `t² ≫ df`.
    // c = Γ((df+1)/2)·df^((df-1)/2) / (sqrt(df·π)·Γ(df/2)).
    // Where the quantile is past 1e10, the power-law tail is the tail itself: sf(t) =
    // c·t^-df·(1 - a/t² + ...) with a = df(df+1)/(2(df+2)), so `(c / tail)^(1/df)` is the
    // quantile to a relative a/(df·t²) < 1/t², 1e-20 (whatever df), and the only answer where t² overflows (t past 1e154, which heavy tails
    // reach at moderate levels: df = 0.1 at a tail of 1e-20 is at 1.6e196) and the cdf can
    // no longer tell the tail apart from 0; past the largest float it is infinite. statrs'
    // first guess is worthless there (below about df = 0.2 it stalls near 1e-17).
    let ln_c = ln_gamma((df + 1.0) / 2.0) + (df - 1.0) / 2.0 * df.ln()
        - 0.5 * (df * std::f64::consts::PI).ln()
        - ln_gamma(df / 2.0);
    // As `c^(1/df) · tail^(-1/df)`: powf rounds once, where exp(ln) would lose ln t's worth
    // of digits (1e-14 at t = 1e100); in logs only where the second factor alone overflows.
    let power = match (ln_c / df).exp() * tail.powf(-1.0 / df) {
        p if p.is_finite() => p,
        _ => ((ln_c - tail.ln()) / df).exp(),
    };
    if power >= 1e10 {
        return sign * power;
    }
    let y = if tail >= FAR_TAIL {
        statrs::function::beta::inv_beta_reg(df / 2.0, 0.5, 2.0 * tail)
    } else {
        0.0
    };
    let mut t = if y > 0.0 {
        (df * (1.0 - y) / y).sqrt()
    } else if tail < FAR_TAIL {
        let normal = -normal_quantile(tail);
        // The power law holds where t² ≫ df; below that the normal is the better start (the
        // steps below climb from it: the tail is convex).
        if power * power > 10.0 * df {
            normal.max(power)
        } else {
            normal
        }
    } else {
        normal_quantile(upper)
    };
    if !t.is_finite() {
        t = normal_quantile(upper);
    }
    for _ in 0..4 {
        #[cfg(test)]
        tests::count(&tests::NEWTON_STEPS);
        // Work with the upper tail so that the residual keeps its precision.
        let sf = 0.5 * t_two_sided_p(t, df).unwrap_or(f64::NAN);
        let density = t_pdf(t, df);
        if !sf.is_finite() || density <= 0.0 {
            break;
        }
        let step = (sf - tail) / density;
        t += step;
        if step.abs() <= 1e-15 * t.abs().max(1.0) {
            break;
        }
    }
    sign * far_tail(t, df, tail)
}

/// The upper-tail quantile polished further where the four steps above have not reached it:
/// far in the tail (p of 1e-12, or heavy tails at one degree of freedom or fewer, where the
/// first guess can be orders of magnitude short), Newton's steps on ln sf against ln t, in
/// which the tail is nearly a straight line (ln sf ≈ -df·ln t for heavy tails). A quantile
/// whose tail already agrees to 1e-10 is returned as it is, so the common ones (intervals,
/// critical values, which the four steps give to about 1e-15) are those of the four steps,
/// bit for bit, and a solve over the degrees of freedom sees the same smooth function.
fn far_tail(mut t: f64, df: f64, tail: f64) -> f64 {
    let sf = |t: f64| 0.5 * t_two_sided_p(t, df).unwrap_or(f64::NAN);
    let agrees = |t: f64| (sf(t) - tail).abs() <= 1e-10 * tail;
    if !t.is_finite() || t < 1.0 || agrees(t) {
        return t;
    }
    for _ in 0..200 {
        #[cfg(test)]
        tests::count(&tests::FAR_TAIL_STEPS);
        let (s, density) = (sf(t), t_pdf(t, df));
        if s.is_nan() || density.is_nan() || s <= 0.0 || density <= 0.0 {
            break;
        }
        // d ln sf / d ln t = -t·pdf/sf.
        let step = (s.ln() - tail.ln()) / (t * density / s);
        let next = t * step.exp();
        if !next.is_finite() {
            break;
        }
        t = next;
        // t to about 1e-13 relatively: closer, the steps are rounding noise.
        if step.abs() <= 1e-13 {
            break;
        }
    }
    t
}

/// The noncentral t distribution function P(T' <= t) with `df` degrees of freedom and
/// noncentrality `nc`, by the Poisson-mixture series of Lenth (1989, AS 243), summed from the
/// Poisson mode outward in both directions (Benton and Krishnamoorthy, 2003) so that large
/// noncentralities neither underflow nor need thousands of terms.
pub fn nct_cdf(t: f64, df: f64, nc: f64) -> f64 {
    if t.is_nan() || df.is_nan() || nc.is_nan() || df <= 0.0 {
        return f64::NAN;
    }
    if t < 0.0 {
        // P(T' <= t; nc) = 1 - P(T' <= -t; -nc).
        return (1.0 - nct_cdf_nonneg(-t, df, -nc)).clamp(0.0, 1.0);
    }
    nct_cdf_nonneg(t, df, nc).clamp(0.0, 1.0)
}

/// The series for t >= 0:
/// F = Φ(-δ) + ½ Σ_j [ p_j I_x(j+½, ν/2) + (δ/√2) q_j I_x(j+1, ν/2) ],
/// x = t²/(t²+ν), p_j = e^{-λ} λ^j / j!, q_j = e^{-λ} λ^j / Γ(j+3/2), λ = δ²/2.
fn nct_cdf_nonneg(t: f64, df: f64, nc: f64) -> f64 {
    if t.is_infinite() {
        return 1.0;
    }
    let base = normal_cdf(-nc);
    if t == 0.0 {
        return base;
    }
    let x = t * t / (t * t + df);
    let lambda = nc * nc / 2.0;
    let half_df = df / 2.0;
    let ib = |a: f64| checked_beta_reg(a, half_df, x).unwrap_or(f64::NAN);
    let coef = nc / std::f64::consts::SQRT_2;
    let term = |j: f64| -> (f64, f64) {
        // (weight bound, contribution)
        let (lp, lq) = if lambda > 0.0 {
            let l = -lambda + j * lambda.ln();
            (l - ln_gamma(j + 1.0), l - ln_gamma(j + 1.5))
        } else if j == 0.0 {
            (0.0, -ln_gamma(1.5))
        } else {
            return (0.0, 0.0);
        };
        let (p, q) = (lp.exp(), lq.exp());
        (p + coef.abs() * q, p * ib(j + 0.5) + coef * q * ib(j + 1.0))
    };
    let mode = lambda.floor();
    let mut sum = 0.0;
    // Forward from the mode.
    let mut j = mode;
    loop {
        let (w, c) = term(j);
        sum += c;
        if (w < 1e-20 && j > mode + 1.0) || j > mode + 1e5 {
            break;
        }
        j += 1.0;
    }
    // Backward from just below the mode.
    let mut j = mode - 1.0;
    while j >= 0.0 {
        let (w, c) = term(j);
        sum += c;
        if w < 1e-20 {
            break;
        }
        j -= 1.0;
    }
    base + 0.5 * sum
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;
    use std::thread::LocalKey;

    thread_local! {
        /// The four Newton steps `t_quantile` took on this thread.
        pub(super) static NEWTON_STEPS: Cell<u32> = const { Cell::new(0) };
        /// The steps on ln sf that `far_tail` took on this thread.
        pub(super) static FAR_TAIL_STEPS: Cell<u32> = const { Cell::new(0) };
    }

    pub(super) fn count(counter: &'static LocalKey<Cell<u32>>) {
        counter.with(|n| n.set(n.get() + 1));
    }

    /// The quantile and the steps of each kind it took.
    fn steps(p: f64, df: f64) -> (f64, u32, u32) {
        NEWTON_STEPS.with(|n| n.set(0));
        FAR_TAIL_STEPS.with(|n| n.set(0));
        let q = t_quantile(p, df);
        (
            q,
            NEWTON_STEPS.with(Cell::get),
            FAR_TAIL_STEPS.with(Cell::get),
        )
    }

    /// The quantiles the statistics ask for (intervals and critical values, p from 0.9 to
    /// 0.9999, one degree of freedom or more) come from statrs' first guess and at most four
    /// Newton steps, and already agree to 1e-12: the far tail's polish is never needed, so a
    /// wrong first guess or step shows here even though the polish would repair the value.
    #[test]
    fn the_quantiles_the_statistics_ask_for_need_no_polish() {
        for df in [1.0, 2.0, 3.5, 10.0, 30.0, 100.0, 1000.0, 1e5] {
            for p in [0.9, 0.95, 0.975, 0.995, 0.999, 0.9999] {
                let (q, newton, far) = steps(p, df);
                let tail = 0.5 * t_two_sided_p(q, df).unwrap();
                // The incomplete beta itself is good to about 1e-10 at 1e5 degrees of freedom.
                let rel = if df < 1e4 { 1e-12 } else { 1e-10 };
                assert!(
                    (tail - (1.0 - p)).abs() <= rel * (1.0 - p),
                    "p = {p}, df = {df}: tail {tail:e}"
                );
                assert_eq!(far, 0, "p = {p}, df = {df}: polished");
                assert!(
                    (1..=4).contains(&newton),
                    "p = {p}, df = {df}: {newton} steps"
                );
                // The lower quantile is its mirror image, bit for bit.
                assert_eq!(
                    steps(1.0 - p, df).0.to_bits(),
                    (-q).to_bits(),
                    "p = {p}, df = {df}"
                );
            }
        }
    }

    /// Far in a heavy tail (but short of 1e10, where the power law takes over) the polish
    /// does the work, in a few steps.
    #[test]
    fn far_heavy_tails_are_polished_in_few_steps() {
        for (p, df) in [(1e-6, 0.7), (1e-9, 1.0), (1.0 - 1e-10, 1.0)] {
            let (q, _, far) = steps(p, df);
            assert!((2..=30).contains(&far), "p = {p}, df = {df}: {far} steps");
            let tail = 0.5 * t_two_sided_p(q, df).unwrap();
            let want = p.min(1.0 - p);
            assert!(
                (tail - want).abs() <= 1e-12 * want,
                "p = {p}, df = {df}: {tail:e}"
            );
        }
    }

    /// Tails statrs' inverse cannot start (it panics under about 1e-163, and at 1e5 degrees
    /// of freedom did not return at 1e-149): the quantile from
    /// the larger of the normal and the power-law guesses, polished to the tail asked; past
    /// the largest float, infinite. Both signs, light and heavy tails.
    #[test]
    fn the_farthest_tails_have_quantiles() {
        for df in [0.5, 1.0, 3.0, 30.0, 1e3, 1e5] {
            for tail in [1e-29, 1e-31, 1e-60, 1e-100, 1e-151, 1e-200, 1e-300] {
                let q = t_quantile(tail, df);
                assert_eq!(
                    t_quantile(1.0 - tail, df),
                    f64::INFINITY,
                    "1 - {tail:e} is 1"
                );
                assert!(q < 0.0, "df = {df}, tail {tail:e}: {q}");
                if q.abs() > 1e150 {
                    // t² past the largest float (heavy tails: at df = 1/2 a tail of 1e-200
                    // is at t of about 1e400): no tail to check it by; far beyond the normal.
                    assert!(df < 3.0 && q < -1e100, "df = {df}, tail {tail:e}: {q}");
                    continue;
                }
                let got = 0.5 * t_two_sided_p(q, df).unwrap();
                assert!(
                    (got - tail).abs() <= 1e-8 * tail,
                    "df = {df}, tail {tail:e}: quantile {q:e} has tail {got:e}"
                );
            }
        }
    }

    /// Past 1e10 the quantile is the power-law tail's, which is exact there: the Cauchy's
    /// (df = 1) `1/tan(π·tail)` to the last digits, SciPy's `stats.t.ppf(1e-5, 0.05)`
    /// (-1.0876044676001792e93, SciPy 1.15), and infinite where it is past the largest float.
    /// Before, below about df = 0.2 statrs' first guess stalled near 1e-17 and the polish
    /// ended far from the root: at df = 0.05 a tail of 1e-20 gave -1.39e13, whose tail is
    /// 0.099.
    #[test]
    fn quantiles_past_1e10_are_the_power_laws() {
        for tail in [1e-11, 1e-40, 1e-100, 1e-300] {
            let cauchy = -(std::f64::consts::PI * tail).tan().recip();
            let q = t_quantile(tail, 1.0);
            assert!(
                (q / cauchy - 1.0).abs() <= 1e-14,
                "tail {tail:e}: {q:e} against {cauchy:e}"
            );
        }
        let scipy = -1.0876044676001792e93;
        let q = t_quantile(1e-5, 0.05);
        assert!((q / scipy - 1.0).abs() <= 1e-14, "{q:e}");
        assert_eq!(t_quantile(1e-20, 0.05), f64::NEG_INFINITY);
        // In the power law, quantiles scale as the tails' ratio to the -1/df: exactly, and
        // also where `tail^(-1/df)` alone overflows (3e-16^-20 is 3e310) but the quantile,
        // c^20 of it with c ≈ 0.45, does not (about 3e303).
        let (q1, q2) = (t_quantile(1e-15, 0.05), t_quantile(3e-16, 0.05));
        assert!(q2.is_finite() && q2 < -1e300, "{q2:e}");
        let want = (1e-15f64 / 3e-16).powf(20.0);
        assert!(((q2 / q1) / want - 1.0).abs() <= 1e-12, "{q1:e} {q2:e}");
        // Heavier tails, further out: never nearer 0 for a smaller tail.
        let mut last = 0.0;
        for tail in [1e-5, 1e-10, 1e-20, 1e-29, 1e-31, 1e-60] {
            let q = t_quantile(tail, 0.1);
            assert!(
                q <= last && q < -1e40,
                "tail {tail:e}: {q:e} after {last:e}"
            );
            last = q;
        }
    }
}
