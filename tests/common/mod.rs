//! What the integration tests that drive the `dhumbal-run` binary share.
#![allow(dead_code)]

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
