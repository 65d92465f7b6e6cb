#!/usr/bin/env bash
# Shared set-up for the project's scripts: makes sure a Rust toolchain is on PATH.
# Sourced by scripts/run.sh and scripts/test.sh; safe to run again.
set -euo pipefail

if ! command -v cargo >/dev/null 2>&1 && [ -x "$HOME/.cargo/bin/cargo" ]; then
    export PATH="$HOME/.cargo/bin:$PATH"
fi
if ! command -v cargo >/dev/null 2>&1; then
    echo "setup: no Rust toolchain found; installing one with rustup (stable, minimal profile)" >&2
    curl --proto '=https' --tlsv1.2 -sSf https://sh.rustup.rs | sh -s -- -y --profile minimal --component rustfmt
    export PATH="$HOME/.cargo/bin:$PATH"
fi
