#!/usr/bin/env bash
# Does all set-up and runs every test: the README's test command, and what CI runs.
# Tests build in the release profile, so that this command and scripts/run.sh share one build
# of every dependency. The last line printed is the number of tests.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh
source scripts/setup-torch.sh

if cargo fmt --version >/dev/null 2>&1; then
    cargo fmt --all -- --check
else
    echo "test: cargo fmt is not installed (rustup component add rustfmt): formatting not checked" >&2
fi
# A tool some tests need, installed from Debian's packages when missing and this is root with
# apt-get (as in CI); without it those tests fail where it could be installed, and elsewhere are
# skipped, saying why. `needed PACKAGE TESTS IS`: TESTS names the tests, IS is `is` or `are`.
needed() {
    local package=$1 what=$2 is=$3
    if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
        echo "test: installing $package (apt-get) for $what" >&2
        { DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$package" >/dev/null 2>&1 \
            || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
                "$package" >/dev/null; }; } || echo "test: could not install $package" >&2
    else
        echo "test: no $package and no way to install it (needs root and apt-get): $what" \
            "$is skipped" >&2
    fi
}
# The replay page's and a study's page's tests (tests/viewer.rs, tests/serve.rs) drive headless
# Chromium.
if [ -z "${DHUMBAL_CHROMIUM:-}" ] && ! command -v chromium chromium-browser google-chrome \
    google-chrome-stable >/dev/null 2>&1; then
    needed chromium "the replay page's browser test" is
fi
# The terminal tests (tests/show.rs: `show` in colour) run in tmux.
if ! command -v tmux >/dev/null 2>&1; then
    needed tmux "the terminal tests" are
fi
log=$(mktemp)
trap 'rm -f "$log"' EXIT
set +e
# Lints of every crate and target, warnings as errors.
# Lints: scripts/setup.sh has the workspace's crates compiled by clippy-driver, so the build of
# the tests is the lint pass, and any warning in it fails the test command (as
# `cargo clippy --all-targets -- -D warnings` would, without checking every dependency again).
status=0
if [[ "${RUSTC_WORKSPACE_WRAPPER:-}" == *clippy-driver* ]]; then
    lints="clippy (the build's warnings)"
elif cargo clippy --version >/dev/null 2>&1; then
    cargo clippy --locked --release --workspace --all-targets -- -D warnings 2>&1 | tee "$log"
    status=${PIPESTATUS[0]}
    lints="cargo clippy"
else
    echo "test: clippy is not installed (rustup component add clippy): lints not checked" >&2
    lints="not checked (no clippy)"
fi
# The whole workspace, as scripts/run.sh builds it. The Python package's crate is an extension
# module (no libpython to link a test binary against; its lib has `test = false`): built here
# with the rest, tested through Python below.
if [ "$status" -eq 0 ]; then
    cargo test --locked --release --workspace --all-targets --no-run --color never 2>&1 | tee "$log"
    status=${PIPESTATUS[0]}
    # rustc's count of a crate's warnings ("warning: `dhumbal-runner` (lib) generated 2
    # warnings"), which only the workspace's crates get (cargo caps the dependencies' lints);
    # not cargo's own notes about dependencies.
    if [ "$status" -eq 0 ] && [[ "${RUSTC_WORKSPACE_WRAPPER:-}" == *clippy-driver* ]] \
        && grep -qE '^warning: `[^`]+` \(.*\) generated [0-9]+ warnings?' "$log"; then
        echo "test: the build has warnings (lints above): fix them, as \`cargo clippy -- -D warnings\` would ask" >&2
        status=1
    fi
fi
if [ "$status" -eq 0 ]; then
    cargo test --locked --release --workspace --all-targets 2>&1 | tee "$log"
    status=${PIPESTATUS[0]}
fi
python="skipped (lints or Rust tests failed)"
if [ "$status" -eq 0 ]; then
    if bash scripts/setup-python.sh && "$VIRTUAL_ENV/bin/python" -m pytest -q -p no:cacheprovider tests/python 2>&1 | tee -a "$log"; then
        python="ok"
    else
        python="FAILED"
        status=1
    fi
fi
# The study on a real Slurm cluster (docs/cluster.md): a one-node cluster from Debian's
# packages, started and stopped by the script; it needs root to install and run the daemons.
slurm="skipped (needs root and apt-get: scripts/slurm/test-local.sh)"
if [ "$status" -eq 0 ] && [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
    if DHUMBAL_RUN="$PWD/target/release/dhumbal-run" bash scripts/slurm/test-local.sh; then
        slurm="ok"
    else
        slurm="FAILED"
        status=1
    fi
fi
set -e
awk -v status="$status" -v slurm="$slurm" -v python="$python" -v lints="$lints" '
    /^test result:/ { passed += $4; failed += $6; ignored += $8; binaries++ }
    # pytest: "12 passed, 1 failed in 30.1s"
    /^[0-9]+ (passed|failed).* in [0-9.]+s/ {
        for (i = 1; i < NF; i++) {
            if ($(i + 1) ~ /^passed/) { passed += $i }
            if ($(i + 1) ~ /^failed/) { failed += $i }
        }
        binaries++
    }
    END {
        printf "lints: %s\n", lints
        printf "python tests: %s\n", python
        printf "slurm test: %s\n", slurm
        printf "%s: %d tests passed, %d failed, %d ignored (%d test binaries)\n",
            (status == 0 ? "ok" : "FAILED"), passed, failed, ignored, binaries
    }' "$log"
exit "$status"
