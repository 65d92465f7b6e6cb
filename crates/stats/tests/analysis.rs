//! The statistics against SciPy and statsmodels (scripts/reference/stats_fixture.py and its
//! neighbours): two-sample tests and effects, Pearson, cluster-robust means and proportions,
//! Bonferroni and Holm, proportion intervals, quantiles and the noncentral t, power and sample
//! sizes. The report that shows them is tested in the workspace's tests/analysis.rs.

use dhumbal_stats::stats::{
    Cluster, ClusterPair, CoMoments, Moments, PooledSd, bonferroni, cohen_d, cohen_dz, holm,
    mean_interval, normal_interval, paired, pearson, percentile, welch, wilson,
};
use dhumbal_stats::{dist, power};

mod reference;
use reference::{close, close_to, f, f64s, fixture, strs, u64s};

#[test]
fn two_sample_tests_and_effects_match_scipy() {
    let fx = fixture("stats.json");
    for case in fx["two_sample"].as_array().unwrap() {
        let name = case["name"].as_str().unwrap();
        let (a, b) = (f64s(&case["a"]), f64s(&case["b"]));
        let (ma, mb) = (Moments::from_slice(&a), Moments::from_slice(&b));
        let w = welch(&ma, &mb).unwrap();
        close(
            w.statistic,
            f(&case["welch"]["statistic"]),
            &format!("{name} welch t"),
        );
        close(w.df, f(&case["welch"]["df"]), &format!("{name} welch df"));
        close(w.p, f(&case["welch"]["p"]), &format!("{name} welch p"));
        // The streaming (Welford) moments give the same answer as the two-pass ones.
        let mut sa = Moments::new();
        a.iter().for_each(|x| sa.push(*x));
        let ws = welch(&sa, &mb).unwrap();
        close(
            ws.p,
            f(&case["welch"]["p"]),
            &format!("{name} streaming welch p"),
        );
        close(
            cohen_d(&ma, &mb, PooledSd::Sample).unwrap(),
            f(&case["cohen_d"]),
            &format!("{name} d"),
        );
        close(
            cohen_d(&ma, &mb, PooledSd::Population).unwrap(),
            f(&case["cohen_d_paper"]),
            &format!("{name} d (paper)"),
        );
        let (lo, hi) = mean_interval(&ma, 0.95).unwrap();
        close(lo, f(&case["mean_ci95_a"][0]), &format!("{name} ci low"));
        close(hi, f(&case["mean_ci95_a"][1]), &format!("{name} ci high"));
        let mut copy = a.clone();
        close(
            percentile(&mut copy, 0.95).unwrap(),
            f(&case["p95_a"]),
            &format!("{name} p95"),
        );
        if let Some(pr) = case.get("paired") {
            let diff: Vec<f64> = a.iter().zip(&b).map(|(x, y)| x - y).collect();
            let md = Moments::from_slice(&diff);
            let t = paired(&md).unwrap();
            close(
                t.statistic,
                f(&pr["statistic"]),
                &format!("{name} paired t"),
            );
            close(t.df, f(&pr["df"]), &format!("{name} paired df"));
            close(t.p, f(&pr["p"]), &format!("{name} paired p"));
            close(
                cohen_dz(&md).unwrap(),
                f(&case["cohen_dz"]),
                &format!("{name} dz"),
            );
            // Units of one observation each: the cluster form is the paired t-test.
            let mut pair = ClusterPair::default();
            for (x, y) in a.iter().zip(&b) {
                pair.push(*x, 1.0, *y, 1.0);
            }
            let t = pair.test().unwrap();
            close(
                t.statistic,
                f(&pr["statistic"]),
                &format!("{name} cluster t"),
            );
            close(t.p, f(&pr["p"]), &format!("{name} cluster p"));
            close(
                pair.cohen_dz().unwrap(),
                f(&case["cohen_dz"]),
                &format!("{name} cluster dz"),
            );
            let (lo, hi) = pair.a.interval(0.95).unwrap();
            close(
                lo,
                f(&case["mean_ci95_a"][0]),
                &format!("{name} cluster ci"),
            );
            close(
                hi,
                f(&case["mean_ci95_a"][1]),
                &format!("{name} cluster ci"),
            );
        }
    }
}

#[test]
fn undefined_statistics_are_none_not_nan() {
    let one = Moments::from_slice(&[1.0]);
    let flat = Moments::from_slice(&[2.0, 2.0, 2.0]);
    assert!(welch(&one, &flat).is_none());
    assert!(welch(&flat, &flat).is_none());
    assert!(paired(&flat).is_none());
    assert!(cohen_d(&flat, &flat, PooledSd::Sample).is_none());
    assert!(cohen_dz(&flat).is_none());
    assert!(pearson(&CoMoments::from_slices(&[1.0, 2.0], &[3.0, 3.0]), 0.95).is_none());
    // Either variable constant, at any size: no correlation (not r = NaN with p = 0).
    let (xs, ys) = ([1.0, 2.0, 4.0, 8.0], [3.0, 3.0, 3.0, 3.0]);
    assert!(pearson(&CoMoments::from_slices(&xs, &ys), 0.95).is_none());
    assert!(pearson(&CoMoments::from_slices(&ys, &xs), 0.95).is_none());
    // Two points: r is ±1 exactly (scipy.stats.pearsonr gives r = -1 and p = 1 here), and
    // there is no test on 0 degrees of freedom, nor a Fisher interval under four points.
    let two = pearson(&CoMoments::from_slices(&[1.0, 2.0], &[5.0, 3.0]), 0.95).unwrap();
    assert_eq!(
        (two.n, two.r, two.p, two.low, two.high),
        (2, -1.0, None, None, None)
    );
    // A perfect line: r = 1 exactly; from three points on the t statistic is infinite and p
    // is 0; the Fisher interval needs four points and |r| < 1 (atanh(1) is infinite).
    let line3 = pearson(
        &CoMoments::from_slices(&[0.0, 1.0, 2.0], &[0.0, 1.0, 2.0]),
        0.95,
    )
    .unwrap();
    assert_eq!(
        (line3.r, line3.p, line3.low, line3.high),
        (1.0, Some(0.0), None, None)
    );
    let line4 = [0.0, 1.0, 2.0, 3.0];
    let line4 = pearson(&CoMoments::from_slices(&line4, &line4), 0.95).unwrap();
    assert_eq!(
        (line4.r, line4.p, line4.low, line4.high),
        (1.0, Some(0.0), None, None)
    );
    let three = pearson(
        &CoMoments::from_slices(&[1.0, 2.0, 3.0], &[2.0, 1.0, 6.0]),
        0.95,
    )
    .unwrap();
    assert!(three.r.abs() < 1.0 && three.p.is_some());
    assert_eq!((three.low, three.high), (None, None));
    // A quantile outside [0, 1], or of values with a NaN, is not defined.
    assert_eq!(percentile(&mut [1.0, 2.0], 1.5), None);
    assert_eq!(percentile(&mut [1.0, 2.0], -0.5), None);
    assert_eq!(percentile(&mut [1.0, f64::NAN, 3.0], 0.5), None);
    // On an order statistic itself nothing is interpolated, even next to an infinite value
    // (0·∞ would be NaN).
    assert_eq!(percentile(&mut [f64::INFINITY, 1.0], 0.0), Some(1.0));
    assert_eq!(percentile(&mut [], 0.5), None);
    assert_eq!(holm(&[None, Some(0.01)]), vec![None, Some(0.01)]);
}

#[test]
fn pearson_matches_scipy() {
    let fx = fixture("stats.json");
    let p = &fx["pearson"];
    let c = CoMoments::from_slices(&f64s(&p["x"]), &f64s(&p["y"]));
    let r = pearson(&c, 0.95).unwrap();
    close(r.r, f(&p["r"]), "r");
    close(r.p.unwrap(), f(&p["p"]), "p");
    close(r.low.unwrap(), f(&p["ci95"][0]), "ci low");
    close(r.high.unwrap(), f(&p["ci95"][1]), "ci high");
}

#[test]
fn cluster_robust_means_match_statsmodels() {
    let fx = fixture("stats.json");
    let c = &fx["cluster"];
    let groups = u64s(&c["group"]);
    let agents = strs(&c["agent"]);
    let values = f64s(&c["value"]);
    let units = *groups.iter().max().unwrap() as usize + 1;
    let mut sums = vec![[(0.0, 0.0); 2]; units];
    for ((g, a), v) in groups.iter().zip(&agents).zip(&values) {
        let slot = &mut sums[*g as usize][usize::from(*a == "b")];
        slot.0 += v;
        slot.1 += 1.0;
    }
    let mut a = Cluster::default();
    let mut pair = ClusterPair::default();
    for [(sa, na), (sb, nb)] in &sums {
        a.push(*sa, *na);
        pair.push(*sa, *na, *sb, *nb);
    }
    close(a.mean().unwrap(), f(&c["mean_a"]), "cluster mean");
    close(a.var_mean().unwrap().sqrt(), f(&c["se_a"]), "cluster SE");
    close(
        pair.difference().unwrap(),
        f(&c["difference"]),
        "difference",
    );
    close(
        pair.var_difference().unwrap(),
        f(&c["var_difference"]),
        "variance of the difference",
    );
}

#[test]
fn bonferroni_and_holm_match_statsmodels() {
    let fx = fixture("stats.json");
    let families = fx["adjust"].as_array().unwrap();
    assert!(
        families
            .iter()
            .any(|c| f64s(&c["holm"]).contains(&1.0) && f64s(&c["p"]).iter().all(|p| *p < 1.0)),
        "a family where Holm caps at 1"
    );
    for case in families {
        let p: Vec<Option<f64>> = f64s(&case["p"]).into_iter().map(Some).collect();
        let (b, h) = (bonferroni(&p), holm(&p));
        // One adjusted p-value per p-value (a zip alone would pass an empty answer).
        assert_eq!((b.len(), h.len()), (p.len(), p.len()));
        for (got, want) in b.iter().zip(f64s(&case["bonferroni"])) {
            close(got.unwrap(), want, "bonferroni");
        }
        for (got, want) in h.iter().zip(f64s(&case["holm"])) {
            close(got.unwrap(), want, "holm");
        }
    }
}

#[test]
fn proportion_intervals_match_statsmodels() {
    let fx = fixture("stats.json");
    let z = dist::normal_quantile(0.975);
    for case in fx["proportions"].as_array().unwrap() {
        let (k, n) = (case["k"].as_u64().unwrap(), case["n"].as_u64().unwrap());
        let (lo, hi) = wilson(k, n, 0.95).unwrap();
        close(lo, f(&case["wilson"][0]), &format!("wilson {k}/{n}"));
        close(hi, f(&case["wilson"][1]), &format!("wilson {k}/{n}"));
        let (lo, hi) = normal_interval(k, n, z).unwrap();
        close(lo, f(&case["normal"][0]), &format!("normal {k}/{n}"));
        close(hi, f(&case["normal"][1]), &format!("normal {k}/{n}"));
    }
    // Nothing to estimate: no interval, not [0, 1].
    assert_eq!(wilson(0, 0, 0.95), None);
    assert_eq!(normal_interval(0, 0, z), None);
}

#[test]
fn quantiles_and_noncentral_t_match_scipy() {
    let fx = fixture("stats.json");
    for q in fx["quantiles"].as_array().unwrap() {
        let p = f(&q["p"]);
        close(dist::normal_quantile(p), f(&q["normal"]), &format!("z {p}"));
        for t in q["t"].as_array().unwrap() {
            let df = f(&t["df"]);
            close(
                dist::t_quantile(p, df),
                f(&t["q"]),
                &format!("t {p} df {df}"),
            );
        }
    }
    for c in fx["nct"].as_array().unwrap() {
        let (t, df, nc) = (f(&c["t"]), f(&c["df"]), f(&c["nc"]));
        close(
            dist::nct_cdf(t, df, nc),
            f(&c["cdf"]),
            &format!("nct {t} {df} {nc}"),
        );
    }
    // Far tails stay finite and ordered (SciPy itself returns NaN out there).
    let far = dist::nct_cdf(1.96, 9998.0, 10.0);
    assert!((0.0..1e-15).contains(&far), "{far}");
    assert!((dist::nct_cdf(1.96, 1e6, 60.0) - 0.0).abs() < 1e-300);
}

#[test]
fn power_and_sample_size_match_statsmodels() {
    let fx = fixture("stats.json");
    let pw = &fx["power"];
    for c in pw["eq5"].as_array().unwrap() {
        let n = power::sample_size_eq5(
            f(&c["delta"]),
            f(&c["sigma2"]),
            f(&c["alpha"]),
            f(&c["power"]),
        );
        close(n.unwrap(), f(&c["n"]), "eq5");
    }
    for c in pw["normal_ind"].as_array().unwrap() {
        let (es, alpha, ratio) = (f(&c["effect_size"]), f(&c["alpha"]), f(&c["ratio"]));
        if c.get("statsmodels_solve_power").is_some() {
            let n = power::normal_ind_sample_size(es, alpha, f(&c["power"]), ratio).unwrap();
            close(n, f(&c["nobs1"]), "NormalIndPower nobs1");
            close_to(
                n,
                f(&c["statsmodels_solve_power"]),
                1e-7,
                "NormalIndPower solve_power",
            );
        } else {
            let p = power::normal_ind_power(es, f(&c["nobs1"]), alpha, ratio);
            close(p, f(&c["power"]), "NormalIndPower power");
        }
    }
    for c in pw["ttest_ind"].as_array().unwrap() {
        let (alpha, ratio) = (f(&c["alpha"]), f(&c["ratio"]));
        if c.get("statsmodels_solve_power").is_none() {
            let p = power::ttest_ind_power(f(&c["effect_size"]), f(&c["nobs1"]), alpha, ratio);
            close(p, f(&c["power"]), "TTestIndPower power");
        } else if c["nobs1"].is_f64() {
            let n =
                power::ttest_ind_sample_size(f(&c["effect_size"]), alpha, f(&c["power"]), ratio);
            close(n.unwrap(), f(&c["nobs1"]), "TTestIndPower nobs1");
        } else {
            let es = power::ttest_ind_mde(f(&c["nobs1"]), alpha, f(&c["power"]), ratio);
            close(
                es.unwrap(),
                f(&c["effect_size"]),
                "TTestIndPower effect size",
            );
        }
    }
    for c in pw["ttest_paired"].as_array().unwrap() {
        let alpha = f(&c["alpha"]);
        if c.get("statsmodels_solve_power").is_none() {
            let p = power::ttest_paired_power(f(&c["effect_size"]), f(&c["nobs"]), alpha);
            close(p, f(&c["power"]), "TTestPower power");
        } else if c["nobs"].is_f64() {
            let n = power::ttest_paired_sample_size(f(&c["effect_size"]), alpha, f(&c["power"]));
            close(n.unwrap(), f(&c["nobs"]), "TTestPower nobs");
        } else {
            let es = power::ttest_paired_mde(f(&c["nobs"]), alpha, f(&c["power"]));
            close(es.unwrap(), f(&c["effect_size"]), "TTestPower effect size");
        }
    }
}

/// Per unit present in `units` (in unit order), the sums and counts of `values` in each of
/// `k` slots (agents, strata).
fn slot_sums(
    units: &[u64],
    slots: &[usize],
    values: &[f64],
    k: usize,
) -> Vec<(Vec<f64>, Vec<f64>)> {
    let mut by_unit = std::collections::BTreeMap::new();
    for ((u, s), v) in units.iter().zip(slots).zip(values) {
        let (sums, counts) = by_unit
            .entry(*u)
            .or_insert_with(|| (vec![0.0; k], vec![0.0; k]));
        sums[*s] += v;
        counts[*s] += 1.0;
    }
    by_unit.into_values().collect()
}

#[test]
fn clustered_proportions_match_statsmodels() {
    let fx = fixture("stats.json");
    let c = &fx["cluster_pair"];
    let agents: Vec<usize> = c["agent"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| usize::from(a.as_str().unwrap() == "b"))
        .collect();
    let units = slot_sums(&u64s(&c["group"]), &agents, &f64s(&c["value"]), 2);
    let mut pair = ClusterPair::default();
    for (s, n) in &units {
        pair.push(s[0], n[0], s[1], n[1]);
    }
    assert_eq!(pair.units(), c["units"].as_u64().unwrap());
    let one_agent = units
        .iter()
        .filter(|(_, n)| n[0] == 0.0 || n[1] == 0.0)
        .count();
    assert_eq!(one_agent as u64, c["units_one_agent"].as_u64().unwrap());
    assert!(one_agent > 0, "units with calls of one agent only");
    let t = pair.test().unwrap();
    assert_eq!(t.df, f(&c["test"]["df"]));
    for (got, want, what) in [
        (pair.difference(), &c["difference"], "difference"),
        (pair.var_difference(), &c["var_difference"], "variance"),
        (Some(t.statistic), &c["test"]["statistic"], "t"),
        (Some(t.p), &c["test"]["p"], "p (statsmodels t_test)"),
        (Some(t.p), &c["p_scipy"], "p (scipy t.sf)"),
        (pair.cohen_dz(), &c["cohen_dz"], "d_z"),
    ] {
        close(got.unwrap(), f(want), what);
    }
}

#[test]
fn stratified_rate_matches_statsmodels() {
    use dhumbal_stats::stats::Stratified;
    let fx = fixture("stats.json");
    let c = &fx["stratified"];
    let strata: Vec<usize> = u64s(&c["stratum"]).iter().map(|m| *m as usize).collect();
    let units = slot_sums(&u64s(&c["group"]), &strata, &f64s(&c["value"]), 3);
    let mut st = Stratified::new(3);
    for (s, n) in &units {
        st.push(s, n);
    }
    assert_eq!(st.g, c["units"].as_u64().unwrap());
    for (got, want) in st.rates().iter().zip(f64s(&c["rates"])) {
        close(got.unwrap(), want, "stratum rate");
    }
    for case in c["cases"].as_array().unwrap() {
        let w = f64s(&case["weights"]);
        close(
            st.rate(&w).unwrap(),
            f(&case["rate"]),
            &format!("rate {w:?}"),
        );
        close(
            st.var(&w).unwrap(),
            f(&case["var"]),
            &format!("variance {w:?}"),
        );
        let (lo, hi) = st.interval(&w, 0.95).unwrap();
        close(lo, f(&case["ci95"][0]), &format!("interval {w:?}"));
        close(hi, f(&case["ci95"][1]), &format!("interval {w:?}"));
    }

    // An agent never at a two-player table: no rate for a mix that weights that stratum, and
    // none of its variance or interval; without weight there, the rate of the other two.
    let mut none_at_two = Stratified::new(3);
    for (s, n) in &units {
        none_at_two.push(&[s[0], s[1], 0.0], &[n[0], n[1], 0.0]);
    }
    let pooled = f64s(&c["cases"][0]["weights"]);
    assert!(pooled[2] > 0.0);
    assert_eq!(none_at_two.rate(&pooled), None);
    assert_eq!(none_at_two.var(&pooled), None);
    assert_eq!(none_at_two.interval(&pooled, 0.95), None);
    let rates = f64s(&c["rates"]);
    close(
        none_at_two.rate(&[0.6, 0.4, 0.0]).unwrap(),
        0.6 * rates[0] + 0.4 * rates[1],
        "rate without the empty stratum",
    );
    assert!(none_at_two.var(&[0.6, 0.4, 0.0]).unwrap() > 0.0);
}

#[test]
fn measured_design_power_matches_statsmodels() {
    use dhumbal_stats::power::MeasuredDesign;
    let fx = fixture("stats.json");
    for d in fx["measured_design"].as_array().unwrap() {
        let name = d["name"].as_str().unwrap();
        let var_difference = f(&d["var_difference"]);
        // The variance is the one measured in its own case above.
        assert_eq!(var_difference, f(&fx[name]["var_difference"]));
        let design = MeasuredDesign::new(var_difference, d["units"].as_u64().unwrap()).unwrap();
        close(
            design.sd_units,
            f(&d["sd_units"]),
            &format!("{name} sd_units"),
        );
        // (fixture key, the arguments' keys, the result's key, the Rust call)
        type Call<'a> = &'a dyn Fn(f64, f64, f64) -> Option<f64>;
        let calls: [(&str, [&str; 3], &str, Call); 3] = [
            ("power", ["delta", "units", "alpha"], "power", &|d, n, a| {
                Some(design.power(d, n, a))
            }),
            (
                "units_needed",
                ["delta", "alpha", "power"],
                "units",
                &|d, a, p| design.units_needed(d, a, p),
            ),
            ("mde", ["units", "alpha", "power"], "delta", &|n, a, p| {
                design.mde(n, a, p)
            }),
        ];
        for (key, args, result, call) in calls {
            for c in d[key].as_array().unwrap() {
                let [x, y, z] = args.map(|k| f(&c[k]));
                close(
                    call(x, y, z).unwrap(),
                    f(&c[result]),
                    &format!("{name} {key} {x} {y} {z}"),
                );
            }
        }
    }
    assert_eq!(MeasuredDesign::new(0.0, 40), None);
    assert_eq!(MeasuredDesign::new(0.01, 1), None);
}

#[test]
fn paired_rates_match_scipy() {
    use dhumbal_stats::paired::{Tally, paired_rates};
    use std::collections::BTreeMap;
    let fx = fixture("paired.json");
    let side = |v: &serde_json::Value| -> BTreeMap<u64, Tally> {
        v.as_object()
            .unwrap()
            .iter()
            .map(|(unit, t)| {
                let t = f64s(t);
                let tally = Tally {
                    successes: t[0],
                    trials: t[1],
                };
                (unit.parse().unwrap(), tally)
            })
            .collect()
    };
    let cases = fx["cases"].as_array().unwrap();
    assert!(cases.len() >= 9);
    for case in cases {
        let name = case["name"].as_str().unwrap();
        let got = paired_rates(&side(&case["a"]), &side(&case["b"]));
        let want = &case["expected"];
        let Some(got) = got else {
            assert!(
                want.is_null(),
                "{name}: no difference, the reference has one"
            );
            continue;
        };
        assert_eq!(got.units, want["units"].as_u64().unwrap(), "{name} units");
        close(
            got.difference,
            f(&want["difference"]),
            &format!("{name} difference"),
        );
        match (got.ci95, &want["ci95"]) {
            (None, w) => assert!(w.is_null(), "{name}: no interval, the reference has one"),
            (Some((low, high)), w) => {
                let w = f64s(w);
                close(low, w[0], &format!("{name} low"));
                close(high, w[1], &format!("{name} high"));
            }
        }
    }
}
