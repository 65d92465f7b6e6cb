//! What the reference tests share: the fixture files under the workspace's `tests/fixtures/`
//! (made by `scripts/reference/` with SciPy, statsmodels, choix and fishtest's formulas), read as
//! JSON, and comparisons at a tolerance.

#![allow(dead_code)] // each test binary uses its own part

use std::path::Path;

use serde_json::Value;

/// `tests/fixtures/NAME` of the workspace, as JSON.
pub fn fixture(name: &str) -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures")
        .join(name);
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e} (scripts/reference/ makes it)", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// A JSON array of numbers.
pub fn f64s(v: &Value) -> Vec<f64> {
    let all = v.as_array().unwrap_or_else(|| panic!("not an array: {v}"));
    all.iter().map(|x| x.as_f64().expect("a number")).collect()
}

/// A JSON array of whole numbers.
pub fn u64s(v: &Value) -> Vec<u64> {
    let all = v.as_array().unwrap_or_else(|| panic!("not an array: {v}"));
    all.iter()
        .map(|x| x.as_u64().expect("a whole number"))
        .collect()
}

/// A JSON array of strings.
pub fn strs(v: &Value) -> Vec<&str> {
    let all = v.as_array().unwrap_or_else(|| panic!("not an array: {v}"));
    all.iter().map(|x| x.as_str().expect("a string")).collect()
}

/// `got` within a relative 1e-9 of `want` (an absolute 1e-12 near zero).
#[track_caller]
pub fn close(got: f64, want: f64, what: &str) {
    close_to(got, want, 1e-9, what);
}

/// `got` within a relative `rel` of `want` (an absolute 1e-12 near zero).
#[track_caller]
pub fn close_to(got: f64, want: f64, rel: f64, what: &str) {
    let ok = if want.abs() < 1e-3 {
        (got - want).abs() <= 1e-12 || (got - want).abs() <= rel * want.abs()
    } else {
        (got - want).abs() <= rel * want.abs()
    };
    assert!(
        ok,
        "{what}: got {got:e}, want {want:e} (diff {:e})",
        got - want
    );
}

/// A JSON number.
pub fn f(v: &Value) -> f64 {
    v.as_f64().unwrap()
}
