//! What the integration tests share: starting the `dhumbal-run` binary, temporary folders and
//! scenario files, the "refused with exit 2" check, proptest's configuration, and how a
//! trace's decision says a choice.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The binary, run from the repository's root (where `scenarios/` is).
pub fn bin() -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_dhumbal-run"));
    cmd.current_dir(env!("CARGO_MANIFEST_DIR"));
    cmd
}

/// Runs the binary with `args` and waits for it.
pub fn run(args: &[&str]) -> Output {
    bin().args(args).output().expect("the binary runs")
}

/// Everything it printed, stdout then stderr.
pub fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// A temporary folder, removed when dropped.
pub fn tmp() -> tempfile::TempDir {
    tempfile::tempdir().unwrap()
}

/// Writes a scenario file `name` into `dir` and returns its path.
pub fn scenario(dir: &Path, name: &str, body: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, body).unwrap();
    path
}

/// Runs the binary with `args`, requires the refusal of bad input (exit 2, no panic) and
/// returns what it printed.
pub fn refused(args: &[&str]) -> String {
    let o = run(args);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(2), "{args:?}: {t}");
    assert!(
        !t.contains("panicked") && !t.contains("RUST_BACKTRACE"),
        "{args:?}: {t}"
    );
    t
}

/// Proptest's configuration for this suite: `cases` cases drawn from a fixed seed, so that a
/// run (in CI or here) tries the same cases every time and a failure reproduces; a failure's
/// shrunk case is also saved beside the test file (`*.proptest-regressions`, kept in git)
/// and tried first from then on. `PROPTEST_RNG_SEED=N` explores other cases.
pub fn proptest_config(cases: u32) -> proptest::test_runner::Config {
    let mut config = proptest::test_runner::Config::with_cases(cases);
    if std::env::var_os("PROPTEST_RNG_SEED").is_none() {
        config.rng_seed = proptest::test_runner::RngSeed::Fixed(0x6468_756d_6261_6c21);
    }
    config
}

/// How a trace's decision `d` says the choice `c` (its own `choice`, or a candidate's): the
/// legal choice that index names ("discard 9♥ 9♠", "draw", "call").
pub fn said(d: &serde_json::Value, c: &serde_json::Value) -> String {
    let i = c
        .as_u64()
        .unwrap_or_else(|| panic!("a choice is an index among the legal ones: {c}"));
    d["legal"][i as usize]
        .as_str()
        .unwrap_or_else(|| panic!("no legal choice {i}: {d}"))
        .to_string()
}
