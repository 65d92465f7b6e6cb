//! The distributions (crates/stats/src/dist.rs) against SciPy (scripts/reference/dist_fixture.py):
//! both tails and the middle, far tails compared relatively (a p-value of 1e-60 must not be
//! 1e-61 or 0), fractional, small, huge and infinite degrees of freedom, negative t and
//! noncentrality, and the edges where a value is infinite or undefined.

use dhumbal_stats::dist::{
    nct_cdf, normal_cdf, normal_quantile, normal_sf, t_cdf, t_pdf, t_quantile, t_two_sided_p,
};
use serde_json::Value;

mod reference;
use reference::fixture;

/// A fixture number: a JSON number, or "inf", "-inf", "nan".
fn num(v: &Value) -> f64 {
    match v {
        Value::String(s) => match s.as_str() {
            "inf" => f64::INFINITY,
            "-inf" => f64::NEG_INFINITY,
            "nan" => f64::NAN,
            other => panic!("not a number: {other}"),
        },
        v => v.as_f64().unwrap_or_else(|| panic!("not a number: {v}")),
    }
}

/// `got` within a relative `rel` of `want` however small `want` is (tails), equal where
/// `want` is infinite or NaN, and within 1e-300 absolutely where `want` is 0 or subnormal.
#[track_caller]
fn agrees(got: f64, want: f64, rel: f64, what: &str) {
    let ok = if want.is_nan() {
        got.is_nan()
    } else if want.is_infinite() || want == 0.0 {
        got == want || (want == 0.0 && got.abs() < 1e-300)
    } else {
        (got - want).abs() <= rel * want.abs()
    };
    if !ok {
        eprintln!("{what}: got {got:e}, want {want:e}");
        FAILED.with(|f| f.set(f.get() + 1));
    }
}

thread_local! {
    /// The disagreements of this test's thread: every case is compared and printed before the
    /// test fails, so that one run shows them all.
    static FAILED: std::cell::Cell<u32> = const { std::cell::Cell::new(0) };
}

#[track_caller]
fn none_failed() {
    let n = FAILED.with(|f| f.get());
    assert_eq!(n, 0, "{n} values disagree with SciPy (printed above)");
}

#[test]
fn the_normal_distribution_matches_scipy() {
    let fx = fixture("dist.json");
    for c in fx["normal"].as_array().unwrap() {
        let x = num(&c["x"]);
        // statrs' erfc, which they are built on, is good to about 5e-11 relatively, in the far
        // tails too (measured against SciPy's: the largest gap here is 5.3e-11, at -8.5).
        agrees(normal_cdf(x), num(&c["cdf"]), 1e-10, &format!("cdf({x})"));
        agrees(normal_sf(x), num(&c["sf"]), 1e-10, &format!("sf({x})"));
    }
    for c in fx["normal_quantile"].as_array().unwrap() {
        let p = num(&c["p"]);
        agrees(
            normal_quantile(p),
            num(&c["q"]),
            1e-10,
            &format!("ppf({p})"),
        );
    }
    for p in [-0.1, 1.1, f64::NAN] {
        assert!(normal_quantile(p).is_nan(), "ppf({p})");
    }
    none_failed();
}

#[test]
fn students_t_matches_scipy_in_both_tails_and_at_any_degrees_of_freedom() {
    let fx = fixture("dist.json");
    let cases = fx["t"].as_array().unwrap();
    assert!(cases.len() > 60);
    for c in cases {
        let (t, df) = (num(&c["t"]), num(&c["df"]));
        let what = format!("t = {t}, df = {df}");
        // At ten million degrees of freedom the incomplete beta and the log-gamma differences
        // lose digits (1.7e-8 relatively, measured); below a million, 1e-9 holds.
        let rel = if df < 1e6 { 1e-9 } else { 1e-7 };
        let p = t_two_sided_p(t, df).unwrap_or_else(|| panic!("{what}: no p-value"));
        agrees(
            p,
            num(&c["two_sided_p"]),
            rel,
            &format!("{what}: two-sided p"),
        );
        agrees(t_cdf(t, df), num(&c["cdf"]), rel, &format!("{what}: cdf"));
        if !c["pdf"].is_null() {
            agrees(t_pdf(t, df), num(&c["pdf"]), rel, &format!("{what}: pdf"));
        }
    }
    // Undefined: no p-value, a NaN distribution function.
    for (t, df) in [
        (f64::INFINITY, 3.0),
        (f64::NAN, 3.0),
        (1.0, 0.0),
        (1.0, -2.0),
        (1.0, f64::NAN),
    ] {
        assert_eq!(t_two_sided_p(t, df), None, "t = {t}, df = {df}");
        assert!(t_cdf(t, df).is_nan(), "t = {t}, df = {df}");
    }
    none_failed();
}

#[test]
fn the_t_quantile_matches_scipy_and_inverts_the_distribution_function() {
    let fx = fixture("dist.json");
    for c in fx["t_quantile"].as_array().unwrap() {
        let (p, df) = (num(&c["p"]), num(&c["df"]));
        let q = t_quantile(p, df);
        let what = format!("p = {p}, df = {df}");
        agrees(q, num(&c["q"]), 1e-9, &what);
        // And back: the distribution function at the quantile is p, in the tail that holds it.
        if df.is_finite() {
            let back = if p < 0.5 {
                t_cdf(q, df)
            } else {
                0.5 * t_two_sided_p(q, df).unwrap()
            };
            let want = if p < 0.5 { p } else { 1.0 - p };
            agrees(back, want, 1e-9, &format!("{what}: back"));
        }
    }
    assert_eq!(t_quantile(0.0, 5.0), f64::NEG_INFINITY);
    assert_eq!(t_quantile(1.0, 5.0), f64::INFINITY);
    for (p, df) in [
        (-0.1, 5.0),
        (1.1, 5.0),
        (0.5, 0.0),
        (0.5, -1.0),
        (0.5, f64::NAN),
        (f64::NAN, 5.0),
    ] {
        assert!(t_quantile(p, df).is_nan(), "p = {p}, df = {df}");
    }
    none_failed();
}

#[test]
fn the_noncentral_t_matches_scipy_on_both_sides_of_zero() {
    let fx = fixture("dist.json");
    let cases = fx["nct"].as_array().unwrap();
    assert!(cases.len() > 150);
    for c in cases {
        let (t, df, nc) = (num(&c["t"]), num(&c["df"]), num(&c["nc"]));
        let want = num(&c["cdf"]);
        let got = nct_cdf(t, df, nc);
        // Good to 1e-9 relatively where the probability is not small, and to about 2e-11
        // absolutely in the tails (below 1e-6 the reflection, 1 - P(T' <= -t; -nc), keeps only
        // absolute digits: 6.734e-9 against SciPy's 6.714e-9 at t = -5, df = 300, nc = 0.8).
        let what = format!("t = {t}, df = {df}, nc = {nc}");
        if (got - want).abs() > 1e-9 * want.min(1.0 - want).max(0.05) {
            eprintln!("{what}: got {got:e}, want {want:e}");
            FAILED.with(|f| f.set(f.get() + 1));
        }
    }
    for (t, df, nc) in [
        (f64::NAN, 3.0, 1.0),
        (1.0, 0.0, 1.0),
        (1.0, -1.0, 1.0),
        (1.0, 3.0, f64::NAN),
        (1.0, f64::NAN, 1.0),
    ] {
        assert!(nct_cdf(t, df, nc).is_nan(), "t = {t}, df = {df}, nc = {nc}");
    }
    // At t = 0 the series is its first term, Φ(-nc), exactly: far in its tail too (1.1e-19 at
    // nc = 9, which the reflection 1 - Φ(9) would round to 0).
    for nc in [-2.0, 0.0, 0.8, 9.0, 30.0] {
        for df in [1.0, 25.0] {
            assert_eq!(
                nct_cdf(0.0, df, nc),
                normal_cdf(-nc),
                "df = {df}, nc = {nc}"
            );
        }
    }
    assert!(nct_cdf(0.0, 4.0, 9.0) > 1e-19);
    assert_eq!(nct_cdf(f64::INFINITY, 3.0, 2.0), 1.0);
    assert_eq!(nct_cdf(f64::NEG_INFINITY, 3.0, 2.0), 0.0);
    none_failed();
}
