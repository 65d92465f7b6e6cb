#!/usr/bin/env bash
# Mutation testing (cargo-mutants) of the modules that compute what a researcher reports or
# decides on: would a test notice the day one of them computes something else? cargo-mutants
# changes one thing at a time (an operator, a constant, a function's body replaced by a
# default value), builds, and runs the tests; a mutant the tests do not fail on is "missed"
# (docs/analysis.md, "Mutation testing"; the ones that cannot change a result are named in
# docs/mutants-equivalent.md). Not part of scripts/test.sh: a module takes hours.
#
#   scripts/mutants.sh MODULE [CARGO-MUTANTS OPTION ...]
#   scripts/mutants.sh sequential                  # the SPRT, its estimate after a stop, decide:
#   scripts/mutants.sh stats -F 'holm|wilson'      # only the mutants whose names match
#   scripts/mutants.sh power --list                # list the mutants, run nothing
#   scripts/mutants.sh sequential --lines crates/stats/src/sequential.rs:560,561
#                                                  # only the mutants on those lines
#   scripts/mutants.sh sequential --quick          # first pass: no simulation runs, then
#   scripts/mutants.sh sequential --iterate        # the missed ones again, with them
#
# MODULE is one of sequential, stats, power, ratings, sweep, optimizers, or all (each in
# turn). Each module's mutants are tested by its crate's unit tests and the fixture tests
# that check it against the Python references (tests/fixtures/, scripts/reference/), not the
# whole suite (a module's slowest simulations are skipped: `skip` below). Every module lives
# in a small crate that knows no game (dhumbal-stats, dhumbal-optimize), so a mutant costs a
# rebuild of that crate and its tests: 5 to 10 seconds on the loaded 2-core development
# machine, a minute for the sequential test's simulations; a whole module (20 to 1,010
# mutants) is minutes to hours. Select with -F REGEX (mutant names, as --list prints them)
# or --lines. cargo-mutants 27.1.0's -F and -E do not filter its struct-field
# deletions ("delete field x from struct S expression"): --lines FILE:LINE,LINE,... (this
# script's option, repeatable) selects by line, every kind of mutant included (it becomes
# cargo-mutants' --in-diff, with a diff that marks those lines as added).
#
# --quick (this script's option) skips every simulation of the sequential test, so that a
# mutant costs seconds instead of a minute. A mutant the quick tests catch is caught by the
# whole set too (the quick tests are among them); the ones they miss are then run again with
# the simulations by `--iterate` (cargo-mutants skips what an earlier run caught), and only
# that second pass's missed mutants count as missed.
#
# cargo-mutants (a pinned version) is installed on first use into target/tools/ with `cargo
# install --locked`. It mutates this working tree in place and restores each file after its
# mutant (do not edit, build or commit here while it runs; an interrupted run can leave a
# mutant behind: `git diff` shows it, marked `/* ~ changed by cargo-mutants ~ */`). It builds
# in the release profile and target/ that scripts/test.sh uses, with the packages selected so
# that every dependency's features stay those of the workspace build (no dependency is built
# again), incremental compilation and 16 codegen units for the mutated crate (only while
# mutants run: that crate and those above it are built again by the next plain `cargo build
# --release`). Results: target/mutants/MODULE/mutants.out/
# (outcomes.json, caught.txt, missed.txt, unviable.txt, timeout.txt, a log per mutant).
set -euo pipefail
cd "$(dirname "$0")/.."

version=27.1.0
tools="$PWD/target/tools"

if [ $# -lt 1 ]; then
    sed -n '2,/^# cargo-mutants (a pinned/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'
    exit 2
fi
module=$1
shift
# --lines FILE:LINE,LINE,...: collected here, turned into a diff for --in-diff below.
lines=()
rest=()
quick=
while [ $# -gt 0 ]; do
    if [ "$1" = --lines ] && [ $# -ge 2 ]; then
        lines+=("$2")
        shift 2
    elif [ "$1" = --quick ]; then
        quick=1
        shift
    else
        rest+=("$1")
        shift
    fi
done
set -- ${rest[@]+"${rest[@]}"}

# Rust (scripts/setup.sh), without compiling the workspace's crates through Clippy: a mutant
# is built for its tests, not linted.
export DHUMBAL_NO_CLIPPY=1
source scripts/setup.sh

mutants="$tools/bin/cargo-mutants"
if ! { [ -x "$mutants" ] && cargo install --list --root "$tools" | grep -q "^cargo-mutants v$version:"; }; then
    echo "mutants: installing cargo-mutants $version into $tools (once; a few minutes)" >&2
    cargo install --locked --version "$version" --root "$tools" --target-dir "$tools/build" \
        cargo-mutants
fi

# The files of each module, the crate that owns them, and the tests that check it. The
# statistics (sequential, stats, power, ratings, and the sweep's paired differences) are
# crates/stats (dhumbal-stats), the optimizers crates/optimize (dhumbal-optimize): small crates
# that know no game, so that a mutant rebuilds its crate and that crate's own tests alone (the
# fixture tests against the Python references among them, crates/stats/tests/), seconds.
files=()
tests=()
skip=()
owner=
select_module() {
    case "$1" in
        sequential)
            # Wald's bounds, the GSPRT's LLR, the overshoot, the stop, the estimate and the
            # interval after a stop, decide:'s alpha and looks.
            owner=dhumbal-stats
            files=(crates/stats/src/sequential.rs crates/stats/src/sequential/after.rs)
            tests=(sequential)
            ;;
        stats)
            # t-tests, effects, intervals, Pearson, cluster-robust means, Holm, Bonferroni,
            # Wilson, and the distributions under them.
            owner=dhumbal-stats
            files=(crates/stats/src/stats.rs crates/stats/src/dist.rs)
            tests=(analysis ratings dist)
            ;;
        power)
            owner=dhumbal-stats
            files=(crates/stats/src/power.rs)
            tests=(analysis)
            ;;
        ratings)
            owner=dhumbal-stats
            files=(crates/stats/src/ratings.rs)
            tests=(ratings)
            ;;
        sweep)
            # The paired differences of a sweep's points (the report's sweep.rs tallies the
            # records per unit and shows these numbers; tests/sweeps.rs checks the whole).
            owner=dhumbal-stats
            files=(crates/stats/src/paired.rs)
            tests=(analysis)
            ;;
        optimizers)
            # NTBEA's and SPSA's steps and the final round of a tuning.
            owner=dhumbal-optimize
            files=(crates/optimize/src/ntbea.rs crates/optimize/src/spsa.rs
                crates/optimize/src/lib.rs)
            tests=()
            ;;
        *)
            echo "mutants: no module '$1' (sequential, stats, power, ratings, sweep, optimizers, all)" >&2
            exit 2
            ;;
    esac
    if [ "$owner" = dhumbal-stats ]; then
        # The simulations of minutes (a loaded 2-core machine): the error rates by design and
        # the coverage of the interval after a stop. Those of the error rates at alpha = beta =
        # 0.05 and at alpha = 0.05, beta = 0.2, and of decide:'s alpha, stay.
        skip=(error_rates_and_lengths_by_design the_interval_after_a_stop_covers_the_truth)
        if [ -n "$quick" ]; then
            # --quick: the other simulations too (tests/sequential.rs; seconds, not a minute).
            skip+=(simulated_error_rates_and_lengths asymmetric_error_rates_are_kept
                the_test_of_an_exploit_gain_keeps_its_error_rates decide_keeps_its_alpha)
        fi
    fi
}

run_module() {
    select_module "$1"
    shift
    local args=(--in-place --workspace --no-shuffle --baseline=skip --output "target/mutants/$module_name")
    local f t
    for f in "${files[@]}"; do args+=(--file "$f"); done
    # The crate's unit tests and the module's reference tests (crates/stats/tests/).
    args+=(--test-package "$owner" --cargo-arg=--lib)
    for t in ${tests[@]+"${tests[@]}"}; do args+=("--cargo-arg=--test=$t"); done
    args+=("--cargo-arg=--config=profile.release.package.$owner.incremental=true")
    args+=("--cargo-arg=--config=profile.release.package.$owner.codegen-units=16")
    if [ "${#skip[@]}" -gt 0 ]; then
        args+=(--cargo-test-arg=--)
        for t in "${skip[@]}"; do args+=("--cargo-test-arg=--skip=$t"); done
    fi
    # A mutant that loops is killed: generous limits for a loaded 2-core machine. The tests
    # take under a second there but for the sequential test's simulations (a minute).
    local limit=10
    [ "$module_name" = sequential ] && [ -z "$quick" ] && limit=240
    args+=(--profile release --build-timeout 1200 --timeout "$limit")
    # Display and Debug: no statistic.
    args+=(--exclude-re '<impl .*(Display|Debug) for ')
    mkdir -p "target/mutants/$module_name"
    if [ "${#lines[@]}" -gt 0 ]; then
        # A diff in which the selected lines are added (the old side has them marked).
        local diff="target/mutants/$module_name/lines.diff"
        python3 - "${lines[@]}" >"$diff" <<'PY'
import collections, difflib, sys
want = collections.defaultdict(set)
for arg in sys.argv[1:]:
    path, nums = arg.rsplit(":", 1)
    want[path].update(int(n) for n in nums.split(","))
for path, nums in want.items():
    new = open(path).read().splitlines(keepends=True)
    old = [l.rstrip("\n") + " /*x*/\n" if i + 1 in nums else l for i, l in enumerate(new)]
    sys.stdout.writelines(difflib.unified_diff(old, new, "a/" + path, "b/" + path, n=0))
PY
        args+=(--in-diff "$diff")
    fi
    echo "mutants: $module_name: ${files[*]}; tests: $owner --lib, ${tests[*]}" >&2
    local start=$SECONDS status=0
    "$mutants" mutants "${args[@]}" "$@" || status=$?
    echo "mutants: $module_name took $((SECONDS - start)) s (cargo-mutants exit $status:" \
        "0 all caught, 2 some missed, 3 some timed out)" >&2
    return "$status"
}

if [ "$module" = all ]; then
    overall=0
    for module_name in sequential stats power ratings sweep optimizers; do
        run_module "$module_name" "$@" || overall=$?
    done
    exit "$overall"
fi
module_name=$module
run_module "$module" "$@"
