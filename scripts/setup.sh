#!/usr/bin/env bash
# Shared set-up for the project's scripts: makes sure a Rust toolchain recent enough for the
# project (`rust-version` in Cargo.toml) is on PATH, and has the workspace's own crates
# compiled through Clippy (below). Sourced by scripts/run.sh and scripts/test.sh; safe to run
# again.
set -euo pipefail

need=$(sed -n 's/^rust-version *= *"\([0-9.]*\)".*/\1/p' Cargo.toml | head -n 1)

if ! command -v cargo >/dev/null 2>&1 && [ -x "$HOME/.cargo/bin/cargo" ]; then
    export PATH="$HOME/.cargo/bin:$PATH"
fi

# The version of the cargo on PATH ("" when there is none).
cargo_version() {
    command -v cargo >/dev/null 2>&1 && cargo --version 2>/dev/null | awk '{print $2}' | cut -d- -f1
}

# Whether version $1 is at least $2.
at_least() {
    [ "$(printf '%s\n%s\n' "$2" "$1" | sort -V | head -n 1)" = "$2" ]
}

# Installs Rust when the cargo on PATH is missing or too old.
install_rust() {
if [ -n "$have" ]; then
    echo "setup: this project needs Rust $need or newer; the cargo on PATH is $have" >&2
else
    echo "setup: this project needs Rust $need or newer; no cargo was found" >&2
fi

if command -v rustup >/dev/null 2>&1; then
    echo "setup: updating the stable toolchain with rustup" >&2
    rustup toolchain install stable --profile minimal --component rustfmt --component clippy
    rustup default stable >/dev/null
elif command -v curl >/dev/null 2>&1 && curl --proto '=https' --tlsv1.2 -sSf --max-time 15 -o /dev/null https://sh.rustup.rs 2>/dev/null; then
    echo "setup: installing Rust with rustup (stable, minimal profile) into ~/.cargo" >&2
    curl --proto '=https' --tlsv1.2 -sSf https://sh.rustup.rs | sh -s -- -y --profile minimal --component rustfmt --component clippy
    export PATH="$HOME/.cargo/bin:$PATH"
fi

have=$(cargo_version || true)
if [ -z "$have" ] || ! at_least "$have" "$need"; then
    cat >&2 <<MSG
setup: could not install Rust $need or newer here (no rustup, and https://sh.rustup.rs is not
reachable). Install it, then run this script again:
  - with rustup (https://rustup.rs), on a machine that can reach it:
      curl --proto '=https' --tlsv1.2 -sSf https://sh.rustup.rs | sh -s -- -y --profile minimal
      rustup toolchain install $need
  - or an offline installer (rust-$need-<target>.tar.xz from https://forge.rust-lang.org/infra/other-installation-methods.html),
    unpacked and installed with its install.sh
Distribution packages (apt's cargo, say) are often older than $need: check with \`cargo --version\`.
MSG
    exit 1
fi
}

have=$(cargo_version || true)
if [ -z "$have" ] || ! at_least "$have" "$need"; then
    install_rust
fi

# Lints in the same pass as the build: with Clippy installed, the workspace's own crates are
# compiled by clippy-driver (rustc with Clippy's lints added, the same code generated) through
# cargo's RUSTC_WORKSPACE_WRAPPER, and the dependencies by rustc as before. A separate
# `cargo clippy` would type-check every dependency again in check mode (about a minute of
# scripts/test.sh on 2 cores), since cargo keeps check artifacts apart from build ones;
# scripts/test.sh fails on any warning of its build instead (cargo repeats the warnings of
# what it does not recompile). A `cargo build` without this variable, by hand, recompiles
# the workspace's crates (not their dependencies); DHUMBAL_NO_CLIPPY=1 leaves it unset.
if [ -z "${RUSTC_WORKSPACE_WRAPPER:-}" ] && [ -z "${DHUMBAL_NO_CLIPPY:-}" ]; then
    # The clippy-driver of the rustc that cargo runs (its sysroot): another toolchain's would
    # compile the workspace's crates with another compiler than their dependencies.
    driver="$(rustc --print sysroot 2>/dev/null || true)/bin/clippy-driver"
    if [ -x "$driver" ] && "$driver" --version >/dev/null 2>&1; then
        export RUSTC_WORKSPACE_WRAPPER="$driver"
    fi
fi

