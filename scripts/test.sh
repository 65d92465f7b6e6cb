#!/usr/bin/env bash
# Does all set-up and runs every test: the README's test command, and what CI runs.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh

cargo build --locked --workspace --all-targets
cargo test --locked --workspace --all-targets
if cargo fmt --version >/dev/null 2>&1; then
    cargo fmt --all -- --check
fi
