//! Tests, effect sizes, intervals and multiple-comparison adjustments, on running moments so
//! that a million rounds need one pass and no per-round vectors. Every function returns
//! `None` where the quantity is undefined (too few observations, zero variance) instead of a
//! NaN: the numbers end up in JSON, where NaN does not exist.
//!
//! Checked against SciPy and statsmodels in `tests/fixtures/stats.json`
//! (`scripts/reference/stats_fixture.py`).

use serde::Serialize;

use crate::dist::{normal_quantile, t_quantile, t_two_sided_p};

/// Count, mean and sum of squared deviations, updated one value at a time (Welford), so that
/// variances stay accurate whatever the offset of the data.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Moments {
    pub n: u64,
    pub mean: f64,
    m2: f64,
}

impl Moments {
    pub fn new() -> Moments {
        Moments::default()
    }

    /// Two passes over a slice (mean first): the most accurate form, used by tests.
    pub fn from_slice(values: &[f64]) -> Moments {
        let n = values.len();
        if n == 0 {
            return Moments::default();
        }
        let mean = values.iter().sum::<f64>() / n as f64;
        let m2 = values.iter().map(|v| (v - mean) * (v - mean)).sum();
        Moments {
            n: n as u64,
            mean,
            m2,
        }
    }

    pub fn push(&mut self, x: f64) {
        self.n += 1;
        let delta = x - self.mean;
        self.mean += delta / self.n as f64;
        self.m2 += delta * (x - self.mean);
    }

    /// Variance with `ddof` delta degrees of freedom (1: the sample variance; 0: the
    /// population variance NumPy's `np.var` gives by default).
    pub fn var(&self, ddof: u64) -> Option<f64> {
        (self.n > ddof).then(|| self.m2 / (self.n - ddof) as f64)
    }

    /// The sample standard deviation (ddof 1).
    pub fn sd(&self) -> Option<f64> {
        self.var(1).map(f64::sqrt)
    }

    /// Standard error of the mean.
    pub fn se(&self) -> Option<f64> {
        self.sd().map(|s| s / (self.n as f64).sqrt())
    }

    pub fn mean(&self) -> Option<f64> {
        (self.n > 0).then_some(self.mean)
    }
}

/// A mean over units (clusters) of possibly unequal size: Σ S_g / Σ n_g, with its
/// cluster-robust variance G/(G-1) · Σ_g (S_g - ȳ·n_g)² / (Σ n_g)² (the CR1 sandwich of
/// statsmodels' `cov_type="cluster"` for a mean). With equal sizes this is the variance of
/// the mean of unit means, s²/G. Sums are kept about the first unit's mean, so that the
/// expansion does not cancel catastrophically.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Cluster {
    /// Units.
    pub g: u64,
    shift: f64,
    s: f64,
    n: f64,
    ss: f64,
    sn: f64,
    nn: f64,
}

impl Cluster {
    /// Adds a unit with `count` observations summing to `sum`. A unit may be empty (count 0,
    /// sum 0): it counts as a unit and adds nothing else, as a cluster without rows of this
    /// group does in the stacked regression of a clustered two-sample comparison.
    #[inline(always)]
    pub fn push(&mut self, sum: f64, count: f64) {
        if self.n == 0.0 && count > 0.0 {
            // Shifting by the first non-empty unit's mean; empty units before it are 0 under
            // any shift.
            self.shift = sum / count;
        }
        let s = sum - self.shift * count;
        self.g += 1;
        self.s += s;
        self.n += count;
        self.ss += s * s;
        self.sn += s * count;
        self.nn += count * count;
    }

    pub fn mean(&self) -> Option<f64> {
        (self.n > 0.0).then(|| self.shift + self.s / self.n)
    }

    /// Σ_g (S_g - ȳ·n_g)² (shift-invariant).
    fn residual_ss(&self) -> f64 {
        let m = self.s / self.n;
        (self.ss - 2.0 * m * self.sn + m * m * self.nn).max(0.0)
    }

    /// Cluster-robust variance of the mean.
    pub fn var_mean(&self) -> Option<f64> {
        (self.g >= 2 && self.n > 0.0).then(|| {
            let g = self.g as f64;
            g / (g - 1.0) * self.residual_ss() / (self.n * self.n)
        })
    }

    /// The t interval mean ± t_{(1+c)/2, G-1}·sqrt(var_mean).
    pub fn interval(&self, confidence: f64) -> Option<(f64, f64)> {
        let (m, v) = (self.mean()?, self.var_mean()?);
        let t = t_quantile(1.0 - (1.0 - confidence) / 2.0, (self.g - 1) as f64);
        let half = t * v.sqrt();
        Some((m - half, m + half))
    }
}

/// Two agents' means over the same units and the cluster-robust variance of their
/// difference: G/(G-1)·Σ_g e_g², e_g = (S_ag - ȳ_a·n_ag)/N_a - (S_bg - ȳ_b·n_bg)/N_b. With equal
/// unit sizes this is exactly the paired t-test on unit means (`scipy.stats.ttest_rel`). A unit
/// may hold observations of one agent only (call success: calls of a deal where one agent
/// never called); then it is the clustered two-sample comparison, the cluster-robust
/// variance of the difference of the two coefficients of the stacked regression of the
/// observations on the two agents' indicators, with the G units in which either agent has an
/// observation as clusters (statsmodels `OLS(...).fit(cov_type="cluster")` with the
/// correction G/(G-1)).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ClusterPair {
    pub a: Cluster,
    pub b: Cluster,
    sab: f64,
    s_a_n_b: f64,
    n_a_s_b: f64,
    n_a_n_b: f64,
}

impl ClusterPair {
    /// Adds a unit where agent a has `na` observations summing to `sa`, agent b `nb` to `sb`
    /// (either count may be 0, not both).
    #[inline(always)]
    pub fn push(&mut self, sa: f64, na: f64, sb: f64, nb: f64) {
        self.a.push(sa, na);
        self.b.push(sb, nb);
        let (xa, xb) = (sa - self.a.shift * na, sb - self.b.shift * nb);
        self.sab += xa * xb;
        self.s_a_n_b += xa * nb;
        self.n_a_s_b += na * xb;
        self.n_a_n_b += na * nb;
    }

    /// Units.
    pub fn units(&self) -> u64 {
        self.a.g
    }

    pub fn difference(&self) -> Option<f64> {
        Some(self.a.mean()? - self.b.mean()?)
    }

    /// Cluster-robust variance of the difference of the two means.
    pub fn var_difference(&self) -> Option<f64> {
        let (a, b) = (&self.a, &self.b);
        if a.g < 2 || a.n <= 0.0 || b.n <= 0.0 {
            return None;
        }
        let (ma, mb) = (a.s / a.n, b.s / b.n);
        let cross = self.sab - mb * self.s_a_n_b - ma * self.n_a_s_b + ma * mb * self.n_a_n_b;
        let g = a.g as f64;
        let v = a.residual_ss() / (a.n * a.n) + b.residual_ss() / (b.n * b.n)
            - 2.0 * cross / (a.n * b.n);
        Some(g / (g - 1.0) * v.max(0.0))
    }

    /// The paired test: t = difference / sqrt(variance), G - 1 degrees of freedom.
    pub fn test(&self) -> Option<TestResult> {
        let v = self.var_difference()?;
        if v.is_nan() || v <= 0.0 {
            return None;
        }
        let statistic = self.difference()? / v.sqrt();
        let df = (self.units() - 1) as f64;
        let p = t_two_sided_p(statistic, df)?;
        Some(TestResult { statistic, df, p })
    }

    /// The standard deviation of the unit differences, sqrt(G·variance) (the SD of the
    /// differences of unit means when units are of equal size).
    pub fn sd_difference(&self) -> Option<f64> {
        Some((self.var_difference()? * self.units() as f64).sqrt())
    }

    /// Cohen's d_z: the difference over the SD of the unit differences (= t/√G).
    pub fn cohen_dz(&self) -> Option<f64> {
        let sd = self.sd_difference()?;
        (sd > 0.0)
            .then(|| self.difference().map(|d| d / sd))
            .flatten()
    }
}

/// A rate over strata standardised to fixed weights (direct standardisation): Σ_m w_m·p_m,
/// p_m = S_m/N_m the rate in stratum m (for point games: the win rate in rounds with m
/// players at the table), with its cluster-robust variance by linearisation (the delta
/// method, weights taken as fixed): G/(G-1)·Σ_g e_g², e_g = Σ_m w_m·(S_mg - p_m·n_mg)/N_m. With
/// one stratum it is [`Cluster`]'s mean and variance. Kept as the raw second moments of the
/// unit vectors x_g = (S_1..S_K, n_1..n_K), so that any weights can be applied at the end.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Stratified {
    /// Units.
    pub g: u64,
    strata: usize,
    sum: Vec<f64>,
    count: Vec<f64>,
    /// Σ_g x_g x_gᵀ, row-major, (2K)².
    cross: Vec<f64>,
}

impl Stratified {
    pub fn new(strata: usize) -> Stratified {
        Stratified {
            g: 0,
            strata,
            sum: vec![0.0; strata],
            count: vec![0.0; strata],
            cross: vec![0.0; 4 * strata * strata],
        }
    }

    /// Adds a unit: per stratum, its observations' sum and count.
    pub fn push(&mut self, sums: &[f64], counts: &[f64]) {
        let k = self.strata;
        debug_assert!(sums.len() == k && counts.len() == k);
        self.g += 1;
        let x = |i: usize| if i < k { sums[i] } else { counts[i - k] };
        for i in 0..2 * k {
            let xi = x(i);
            if xi == 0.0 {
                continue;
            }
            for j in 0..2 * k {
                self.cross[i * 2 * k + j] += xi * x(j);
            }
        }
        for m in 0..k {
            self.sum[m] += sums[m];
            self.count[m] += counts[m];
        }
    }

    /// Observations per stratum.
    pub fn counts(&self) -> &[f64] {
        &self.count
    }

    /// Rate per stratum (`None` where a stratum has no observation).
    pub fn rates(&self) -> Vec<Option<f64>> {
        (0..self.strata)
            .map(|m| (self.count[m] > 0.0).then(|| self.sum[m] / self.count[m]))
            .collect()
    }

    /// The standardised rate Σ w_m p_m; `None` when a stratum with positive weight has no
    /// observation (its rate is unknown, so no standardisation reaches that mix).
    pub fn rate(&self, weights: &[f64]) -> Option<f64> {
        let rates = self.rates();
        let mut total = 0.0;
        for (w, p) in weights.iter().zip(&rates) {
            if *w > 0.0 {
                total += w * (*p)?;
            }
        }
        Some(total)
    }

    /// Cluster-robust variance of the standardised rate (see the type).
    pub fn var(&self, weights: &[f64]) -> Option<f64> {
        self.rate(weights)?;
        if self.g < 2 {
            return None;
        }
        let k = self.strata;
        // e_g = a·x_g with a = (w_m/N_m for the sums, -w_m·p_m/N_m for the counts).
        let mut a = vec![0.0; 2 * k];
        for m in 0..k {
            if weights[m] > 0.0 {
                let (n, p) = (self.count[m], self.sum[m] / self.count[m]);
                a[m] = weights[m] / n;
                a[k + m] = -weights[m] * p / n;
            }
        }
        let mut q = 0.0;
        for i in 0..2 * k {
            for j in 0..2 * k {
                q += a[i] * self.cross[i * 2 * k + j] * a[j];
            }
        }
        let g = self.g as f64;
        Some(g / (g - 1.0) * q.max(0.0))
    }

    /// The t interval on G - 1 degrees of freedom, clipped to [0, 1] (a rate).
    pub fn interval(&self, weights: &[f64], confidence: f64) -> Option<(f64, f64)> {
        let (r, v) = (self.rate(weights)?, self.var(weights)?);
        let t = t_quantile(1.0 - (1.0 - confidence) / 2.0, (self.g - 1) as f64);
        let half = t * v.sqrt();
        Some(((r - half).max(0.0), (r + half).min(1.0)))
    }
}

/// Cohen's h, the effect size of a difference of two proportions: 2·asin√p_a − 2·asin√p_b
/// (Cohen 1988, ch. 6; 0.2, 0.5, 0.8 small, medium, large as for d).
pub fn cohen_h(pa: f64, pb: f64) -> f64 {
    2.0 * pa.clamp(0.0, 1.0).sqrt().asin() - 2.0 * pb.clamp(0.0, 1.0).sqrt().asin()
}

/// Running co-moments of pairs (x, y), for Pearson's correlation.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct CoMoments {
    pub n: u64,
    mean_x: f64,
    mean_y: f64,
    m2x: f64,
    m2y: f64,
    cxy: f64,
}

impl CoMoments {
    pub fn push(&mut self, x: f64, y: f64) {
        self.n += 1;
        let n = self.n as f64;
        let dx = x - self.mean_x;
        let dy = y - self.mean_y;
        self.mean_x += dx / n;
        self.mean_y += dy / n;
        self.m2x += dx * (x - self.mean_x);
        self.m2y += dy * (y - self.mean_y);
        self.cxy += dx * (y - self.mean_y);
    }

    pub fn from_slices(x: &[f64], y: &[f64]) -> CoMoments {
        let mut c = CoMoments::default();
        for (a, b) in x.iter().zip(y) {
            c.push(*a, *b);
        }
        c
    }
}

/// A test statistic with its degrees of freedom and two-sided p-value.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct TestResult {
    pub statistic: f64,
    pub df: f64,
    pub p: f64,
}

/// Welch's unequal-variance t-test (the paper's eq. 10, as `scipy.stats.ttest_ind(a, b,
/// equal_var=False)`), with the Welch-Satterthwaite degrees of freedom.
pub fn welch(a: &Moments, b: &Moments) -> Option<TestResult> {
    let (va, vb) = (a.var(1)?, b.var(1)?);
    let (sa, sb) = (va / a.n as f64, vb / b.n as f64);
    let se2 = sa + sb;
    if se2.is_nan() || se2 <= 0.0 {
        return None;
    }
    let statistic = (a.mean - b.mean) / se2.sqrt();
    let df = se2 * se2 / (sa * sa / (a.n - 1) as f64 + sb * sb / (b.n - 1) as f64);
    let p = t_two_sided_p(statistic, df)?;
    Some(TestResult { statistic, df, p })
}

/// The paired t-test on differences a - b (`scipy.stats.ttest_rel`): a one-sample t-test of
/// the differences' mean against 0, with n - 1 degrees of freedom.
pub fn paired(diff: &Moments) -> Option<TestResult> {
    let se = diff.se()?;
    if se.is_nan() || se <= 0.0 {
        return None;
    }
    let statistic = diff.mean / se;
    let df = (diff.n - 1) as f64;
    let p = t_two_sided_p(statistic, df)?;
    Some(TestResult { statistic, df, p })
}

/// Which variances go into the pooled standard deviation of Cohen's d.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum PooledSd {
    /// Sample variances (ddof 1), as the paper's eq. 12 and Cohen (1988) define it.
    Sample,
    /// Population variances (ddof 0) in the same formula: what the paper's public code
    /// computes (`np.var`), kept to reproduce its numbers.
    Population,
}

/// The pooled standard deviation sqrt(((n1-1)·s1² + (n2-1)·s2²) / (n1+n2-2)) of the
/// paper's eq. 12, from the two variances (so it is defined whatever the means); `None` when
/// a variance is undefined.
pub fn pooled_sd(a: &Moments, b: &Moments, sd: PooledSd) -> Option<f64> {
    let ddof = match sd {
        PooledSd::Sample => 1,
        PooledSd::Population => 0,
    };
    if a.n + b.n <= 2 || a.n == 0 || b.n == 0 {
        return None;
    }
    let (va, vb) = (a.var(ddof)?, b.var(ddof)?);
    Some((((a.n - 1) as f64 * va + (b.n - 1) as f64 * vb) / (a.n + b.n - 2) as f64).sqrt())
}

/// Cohen's d: the mean difference over the pooled standard deviation
/// sqrt(((n1-1)·s1² + (n2-1)·s2²) / (n1+n2-2)) (the paper's eq. 11-12).
pub fn cohen_d(a: &Moments, b: &Moments, sd: PooledSd) -> Option<f64> {
    let pooled = pooled_sd(a, b, sd)?;
    (pooled > 0.0).then(|| (a.mean - b.mean) / pooled)
}

/// Cohen's d_z for paired data: the mean difference over the standard deviation of the
/// differences (sample, ddof 1).
pub fn cohen_dz(diff: &Moments) -> Option<f64> {
    let sd = diff.sd()?;
    (sd > 0.0).then(|| diff.mean / sd)
}

/// Bonferroni adjustment over one family: min(1, m·p), m the number of defined p-values.
pub fn bonferroni(p: &[Option<f64>]) -> Vec<Option<f64>> {
    let m = p.iter().flatten().count() as f64;
    p.iter().map(|p| p.map(|p| (p * m).min(1.0))).collect()
}

/// Holm's step-down adjustment over one family (as statsmodels' `multipletests(method=
/// "holm")`): the i-th smallest p times (m - i + 1), made monotone, capped at 1. It controls
/// the family-wise error rate like Bonferroni and never rejects less.
pub fn holm(p: &[Option<f64>]) -> Vec<Option<f64>> {
    let mut order: Vec<(usize, f64)> = p
        .iter()
        .enumerate()
        .filter_map(|(i, p)| p.map(|p| (i, p)))
        .collect();
    order.sort_by(|a, b| a.1.total_cmp(&b.1));
    let m = order.len();
    let mut out = vec![None; p.len()];
    let mut running: f64 = 0.0;
    for (rank, (i, p)) in order.into_iter().enumerate() {
        running = running.max(p * (m - rank) as f64);
        out[i] = Some(running.min(1.0));
    }
    out
}

/// Significance stars for a p-value: `***` < 0.001, `**` < 0.01, `*` < 0.05, else empty.
pub fn stars(p: Option<f64>) -> &'static str {
    match p {
        Some(p) if p < 0.001 => "***",
        Some(p) if p < 0.01 => "**",
        Some(p) if p < 0.05 => "*",
        _ => "",
    }
}

/// The two-sided 95% normal quantile, z such that P(|Z| <= z) = 0.95.
pub const Z_95: f64 = 1.959_963_984_540_054;

/// The Wilson score interval for `k` successes in `n` trials at normal quantile `z` (1.96 for
/// 95%): the project's one implementation, used by the run's summary and by the report
/// ([`wilson`] at a confidence level).
/// `None` when `n` is 0.
pub fn wilson_z(k: u64, n: u64, z: f64) -> Option<(f64, f64)> {
    if n == 0 {
        return None;
    }
    let n = n as f64;
    let p = k as f64 / n;
    let denom = 1.0 + z * z / n;
    let centre = (p + z * z / (2.0 * n)) / denom;
    let half = z * (p * (1.0 - p) / n + z * z / (4.0 * n * n)).sqrt() / denom;
    Some(((centre - half).max(0.0), (centre + half).min(1.0)))
}

/// The Wilson score interval for k successes in n trials (statsmodels' `proportion_confint(
/// method="wilson")`); `None` when n is 0 (nothing to estimate).
pub fn wilson(k: u64, n: u64, confidence: f64) -> Option<(f64, f64)> {
    // At 95% the correctly rounded quantile the run's summary.csv uses too (erfc_inv's is an
    // ulp off), so that both files give the same bits.
    let z = if confidence == 0.95 {
        Z_95
    } else {
        normal_quantile(1.0 - (1.0 - confidence) / 2.0)
    };
    wilson_z(k, n, z)
}

/// The normal (Wald) interval p ± z·sqrt(p(1-p)/n), clipped to [0, 1]: the paper's eq. 6
/// (its code uses z = 1.96 and the population SD of the win indicator, which is the same
/// thing). Too narrow near 0 and 1, which is why Wilson is our headline interval. `None` when
/// n is 0.
pub fn normal_interval(k: u64, n: u64, z: f64) -> Option<(f64, f64)> {
    if n == 0 {
        return None;
    }
    let n = n as f64;
    let p = k as f64 / n;
    let half = z * (p * (1.0 - p) / n).sqrt();
    Some(((p - half).max(0.0), (p + half).min(1.0)))
}

/// The t interval for a mean: mean ± t_{(1+c)/2, n-1}·s/√n.
pub fn mean_interval(m: &Moments, confidence: f64) -> Option<(f64, f64)> {
    let se = m.se()?;
    let t = t_quantile(1.0 - (1.0 - confidence) / 2.0, (m.n - 1) as f64);
    Some((m.mean - t * se, m.mean + t * se))
}

/// Pearson's correlation with its two-sided p-value (t = r·sqrt((n-2)/(1-r²)), n - 2
/// degrees of freedom) and a Fisher-z confidence interval, as `scipy.stats.pearsonr`.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Correlation {
    pub n: u64,
    pub r: f64,
    pub p: Option<f64>,
    pub low: Option<f64>,
    pub high: Option<f64>,
}

pub fn pearson(c: &CoMoments, confidence: f64) -> Option<Correlation> {
    if c.n < 2 || c.m2x.is_nan() || c.m2x <= 0.0 || c.m2y.is_nan() || c.m2y <= 0.0 {
        return None;
    }
    let r = (c.cxy / (c.m2x * c.m2y).sqrt()).clamp(-1.0, 1.0);
    let n = c.n as f64;
    let p = if c.n > 2 && r.abs() < 1.0 {
        let t = r * ((n - 2.0) / (1.0 - r * r)).sqrt();
        t_two_sided_p(t, n - 2.0)
    } else if c.n > 2 {
        Some(0.0)
    } else {
        None
    };
    let (low, high) = if c.n > 3 && r.abs() < 1.0 {
        let z = r.atanh();
        let half = normal_quantile(1.0 - (1.0 - confidence) / 2.0) / (n - 3.0).sqrt();
        (Some((z - half).tanh()), Some((z + half).tanh()))
    } else {
        (None, None)
    };
    Some(Correlation {
        n: c.n,
        r,
        p,
        low,
        high,
    })
}

/// The q-quantile (0..=1) by linear interpolation between order statistics (NumPy's default,
/// Hyndman-Fan type 7). Reorders `values`; `None` when empty or on a NaN.
pub fn percentile(values: &mut [f64], q: f64) -> Option<f64> {
    if values.is_empty() || !(0.0..=1.0).contains(&q) || values.iter().any(|v| v.is_nan()) {
        return None;
    }
    let h = (values.len() - 1) as f64 * q;
    let lo = h.floor() as usize;
    let frac = h - lo as f64;
    let (_, &mut a, rest) = values.select_nth_unstable_by(lo, f64::total_cmp);
    if frac == 0.0 || rest.is_empty() {
        return Some(a);
    }
    let b = rest.iter().copied().fold(f64::INFINITY, f64::min);
    Some(a + frac * (b - a))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wilson_matches_statsmodels() {
        // tests/fixtures/wilson.json, made by scripts/reference/wilson_fixture.py.
        let text = include_str!("../../../tests/fixtures/wilson.json");
        let fixture: serde_json::Value = serde_json::from_str(text).unwrap();
        for case in fixture["cases"].as_array().unwrap() {
            let (k, n) = (case["k"].as_u64().unwrap(), case["n"].as_u64().unwrap());
            let confidence = case["confidence"].as_f64().unwrap();
            let (lo, hi) = wilson(k, n, confidence).unwrap();
            assert!(
                (lo - case["low"].as_f64().unwrap()).abs() < 1e-9,
                "{k}/{n} at {confidence}: {lo}"
            );
            assert!(
                (hi - case["high"].as_f64().unwrap()).abs() < 1e-9,
                "{k}/{n} at {confidence}: {hi}"
            );
            if confidence == 0.95 {
                assert_eq!(wilson_z(k, n, Z_95), Some((lo, hi)));
            }
        }
        assert_eq!(wilson_z(0, 0, Z_95), None);
    }

    /// The two ways to moments agree: one value at a time (Welford) and two passes over a
    /// slice, on values far from 0 as near it; the variance by hand. Near 1e8 the squares
    /// pass 2^53, so Σv² - n·m², equal on paper, loses the variance: both ways keep it.
    #[test]
    fn moments_one_at_a_time_and_in_two_passes_agree() {
        let values = [1.0, 2.0, 4.0, 8.0, 9.0];
        // Mean 4.8, squared deviations 166 - 24²/5 = 50.8.
        for offset in [0.0, -50.0, 1e8 + 0.37] {
            let shifted: Vec<f64> = values.iter().map(|v| v + offset).collect();
            let two = Moments::from_slice(&shifted);
            let mut one = Moments::new();
            for v in &shifted {
                one.push(*v);
            }
            for m in [two, one] {
                assert_eq!(m.n, 5);
                assert!((m.mean().unwrap() - 4.8 - offset).abs() < 1e-6, "{offset}");
                assert!((m.var(1).unwrap() - 12.7).abs() < 1e-6, "{offset}");
                assert!((m.var(0).unwrap() - 10.16).abs() < 1e-6, "{offset}");
            }
        }
        assert_eq!(Moments::from_slice(&[]), Moments::default());
        assert_eq!(Moments::new().mean(), None);
    }

    /// Too little to say is `None`, never a NaN or an infinity: no unit, one unit, units
    /// without observations (of one agent), a difference without variance.
    #[test]
    fn clustered_quantities_need_what_they_need() {
        let mut c = Cluster::default();
        assert_eq!((c.mean(), c.var_mean()), (None, None));
        // An empty unit first: the shift waits for a unit with observations.
        c.push(0.0, 0.0);
        assert_eq!((c.mean(), c.var_mean()), (None, None), "only an empty unit");
        c.push(6.0, 3.0);
        assert_eq!(c.mean(), Some(2.0));
        // Two units (an empty one counts), residuals 0 and 0.
        assert_eq!(
            c.var_mean(),
            Some(0.0),
            "one unit with observations, two in all"
        );
        c.push(12.0, 3.0);
        assert_eq!(c.mean(), Some(3.0));
        // Units (0, 0), (6, 3), (12, 3): residuals S - 3n = 0, -3, 3; 3/2 · 18 / 6².
        assert!((c.var_mean().unwrap() - 0.75).abs() < 1e-12);
        let mut one = Cluster::default();
        one.push(6.0, 3.0);
        assert_eq!(one.var_mean(), None, "one unit");
        let mut empty = Cluster::default();
        empty.push(0.0, 0.0);
        empty.push(0.0, 0.0);
        assert_eq!(
            (empty.mean(), empty.var_mean()),
            (None, None),
            "units without observations"
        );

        let mut pair = ClusterPair::default();
        pair.push(1.0, 1.0, 2.0, 1.0);
        assert_eq!(pair.var_difference(), None, "one unit");
        pair.push(3.0, 1.0, 4.0, 1.0);
        // Differences -1 and -1: no variance, no test.
        assert_eq!(pair.var_difference(), Some(0.0));
        assert!(pair.test().is_none());
        assert_eq!(pair.cohen_dz(), None, "no spread: no standardised effect");
        let mut lopsided = ClusterPair::default();
        lopsided.push(1.0, 1.0, 0.0, 0.0);
        lopsided.push(2.0, 1.0, 0.0, 0.0);
        assert_eq!(lopsided.var_difference(), None, "b has no observation");
        let mut other = ClusterPair::default();
        other.push(0.0, 0.0, 1.0, 1.0);
        other.push(0.0, 0.0, 2.0, 1.0);
        assert_eq!(other.var_difference(), None, "a has no observation");
    }

    /// Cohen's h on proportions whose arcsines are known: asin√(1/2) = π/4, asin√(1/4) = π/6,
    /// so h(1/2, 1/4) = π/6; the full range is π; proportions outside [0, 1] are clamped.
    #[test]
    fn cohen_h_by_hand() {
        use std::f64::consts::PI;
        let close = |a: f64, b: f64| assert!((a - b).abs() < 1e-12, "{a} {b}");
        close(cohen_h(0.5, 0.25), PI / 6.0);
        close(cohen_h(0.25, 0.5), -PI / 6.0);
        close(cohen_h(1.0, 0.0), PI);
        close(cohen_h(1.2, -0.1), PI);
        close(cohen_h(0.3, 0.3), 0.0);
    }

    /// A stratified rate's variance needs two units; its counts are the strata's
    /// observations.
    #[test]
    fn stratified_rates_need_two_units() {
        let mut s = Stratified::new(2);
        s.push(&[1.0, 0.0], &[2.0, 1.0]);
        assert_eq!(s.var(&[0.5, 0.5]), None, "one unit");
        s.push(&[2.0, 1.0], &[2.0, 3.0]);
        assert!(s.var(&[0.5, 0.5]).is_some_and(|v| v >= 0.0), "two units");
        assert_eq!(s.counts(), &[4.0, 4.0]);
        assert_eq!(s.rate(&[0.5, 0.5]), Some(0.5 * 0.75 + 0.5 * 0.25));
    }

    /// Tests and effects without a spread to measure have no answer (not an infinite
    /// statistic); the pooled SD needs three observations in all, one in each group.
    #[test]
    fn no_spread_no_test() {
        let ones = Moments::from_slice(&[1.0, 1.0, 1.0]);
        let twos = Moments::from_slice(&[2.0, 2.0, 2.0]);
        assert!(welch(&ones, &twos).is_none());
        assert!(paired(&ones).is_none(), "constant differences");
        assert_eq!(cohen_dz(&ones), None);
        let one = Moments::from_slice(&[1.0]);
        let two = Moments::from_slice(&[1.0, 3.0]);
        assert_eq!(
            pooled_sd(&one, &one, PooledSd::Population),
            None,
            "two in all"
        );
        // (0·0 + 1·1) / 1 with population variances: 1.
        assert_eq!(pooled_sd(&one, &two, PooledSd::Population), Some(1.0));
        assert_eq!(pooled_sd(&Moments::new(), &two, PooledSd::Population), None);
    }

    /// Stars by the usual thresholds, each threshold itself in the band above it (p < 0.05 is
    /// significant, p = 0.05 is not), none without a p-value.
    #[test]
    fn stars_by_threshold() {
        let cases = [
            (1e-9, "***"),
            (0.000_999, "***"),
            (0.001, "**"),
            (0.009, "**"),
            (0.01, "*"),
            (0.049, "*"),
            (0.05, ""),
            (0.8, ""),
        ];
        for (p, want) in cases {
            assert_eq!(stars(Some(p)), want, "{p}");
        }
        assert_eq!(stars(None), "");
    }

    /// Units far from 0 (rounds of a game scored in the millions, say) keep their variance:
    /// the sums are kept about the first unit's mean, so that the expansion of Σ(S_g - ȳ·n_g)²
    /// does not cancel. Unshifted, values near 1e9 with a spread of 1 lose every digit of it.
    #[test]
    fn a_large_offset_does_not_cancel() {
        let offset = 1e9;
        // Units of 3 observations: deviations (summed) from the offset, and their count.
        let units = [
            (0.5, 3.0),
            (-1.25, 3.0),
            (2.0, 3.0),
            (0.75, 3.0),
            (-0.5, 3.0),
        ];
        let (mut far, mut near) = (Cluster::default(), Cluster::default());
        for (dev, n) in units {
            far.push(offset * n + dev, n);
            near.push(dev, n);
        }
        let (m_far, m_near) = (far.mean().unwrap(), near.mean().unwrap());
        assert!((m_far - offset - m_near).abs() < 1e-6, "{m_far} {m_near}");
        let (v_far, v_near) = (far.var_mean().unwrap(), near.var_mean().unwrap());
        assert!(v_near > 0.0);
        assert!((v_far / v_near - 1.0).abs() < 1e-6, "{v_far} {v_near}");
    }
}
