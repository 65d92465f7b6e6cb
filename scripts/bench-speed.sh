#!/usr/bin/env bash
# The figures of the README's speed table, measured for one or more builds in one session,
# the builds alternated run by run: a machine's speed moves by a tenth from hour to hour, so
# two builds are compared only when measured side by side (docs/performance.md).
#
# Usage: scripts/bench-speed.sh [--runs N] [--out FILE] [REV ...]
#   REV     a git revision (a branch, a tag, a commit) or "." for the working tree as it is;
#           by default ".". Each is built in release (a revision in a temporary worktree;
#           the workspace's crates recompile, the dependencies are shared with ./target,
#           which holds the working tree's build again at the end).
#   --runs  rounds of measurement, every build once per round (default 5)
#   --out   also write the table (Markdown) to FILE
#
# Each round runs, for every build: the engine alone (`dhumbal-run bench --threads 2
# --generator chacha`), a million rounds through the command line without and with the
# report (`scenarios/bench/table1-million.yaml --threads 2`, each into a fresh folder),
# `dhumbal-run report` of that folder, and the search benchmark (`cargo bench --bench
# search`: ISMCTS at the paper's budget and at 1,000 iterations with Aggressive rollouts).
# Printed: each figure's range over the rounds (wall seconds of the whole process, ms per
# decision), and the command line's rounds/s without its report as a share of the engine's.
# About 6 s per build and round on 2 cores, after the builds (about a minute and a half each
# on 2 cores: the workspace's crates only).
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD

usage() { sed -n '2,/^set -euo/p' "$0" | grep '^#' | sed 's/^# \{0,1\}//'; }
runs=5
out=""
revs=()
while [ $# -gt 0 ]; do
    case "$1" in
        --runs)
            [[ "${2:-}" =~ ^[1-9][0-9]*$ ]] || { echo "bench-speed: --runs takes a whole number of rounds, at least 1 (got '${2:-}')" >&2; exit 2; }
            runs=$2; shift 2 ;;
        --out)
            [ -n "${2:-}" ] || { echo "bench-speed: --out takes a file name" >&2; exit 2; }
            out=$2; shift 2 ;;
        -h | --help) usage; exit 0 ;;
        -*) echo "bench-speed: unknown option '$1' (valid: --runs N, --out FILE, --help)" >&2; exit 2 ;;
        *) revs+=("$1"); shift ;;
    esac
done
[ ${#revs[@]} -gt 0 ] || revs=(.)
for rev in "${revs[@]}"; do
    if [ "$rev" != "." ] && ! git rev-parse --verify --quiet "$rev^{commit}" >/dev/null; then
        echo "bench-speed: '$rev' is not a git revision of this repository (give a branch, tag or commit, or '.' for the working tree)" >&2
        exit 2
    fi
done

source scripts/setup.sh
source scripts/setup-torch.sh

work=$(mktemp -d)
cleanup() {
    for t in "$work"/tree-*; do
        [ -d "$t" ] && git worktree remove --force "$t" >/dev/null 2>&1
    done
    rm -rf "$work"
}
trap cleanup EXIT

# Builds the tree in $1 and copies its dhumbal-run and search benchmark into $2.
build() {
    local tree=$1 into=$2
    mkdir -p "$into"
    (
        cd "$tree"
        export CARGO_TARGET_DIR="$repo/target"
        cargo build --locked --release --workspace >&2
        local search
        search=$(cargo bench --locked --bench search --no-run --message-format=json 2>/dev/null \
            | grep -o '"executable":"[^"]*search[^"]*"' | tail -1 | cut -d'"' -f4)
        [ -n "$search" ] || { echo "bench-speed: the search benchmark of $tree did not build" >&2; exit 1; }
        cp "$repo/target/release/dhumbal-run" "$into/dhumbal-run"
        cp "$search" "$into/search"
    )
}

# The working tree last, so that ./target ends with its build.
names=()
order=()
for i in "${!revs[@]}"; do [ "${revs[$i]}" != "." ] && order+=("$i"); done
for i in "${!revs[@]}"; do [ "${revs[$i]}" = "." ] && order+=("$i"); done
for i in "${order[@]}"; do
    rev=${revs[$i]}
    if [ "$rev" = "." ]; then
        echo "bench-speed: building the working tree" >&2
        build "$repo" "$work/bin-$i"
        names[$i]="working tree"
    else
        echo "bench-speed: building $rev" >&2
        git worktree add --detach --quiet "$work/tree-$i" "$rev"
        build "$work/tree-$i" "$work/bin-$i"
        git worktree remove --force "$work/tree-$i"
        short=$(git rev-parse --short "$rev")
        case "$short" in "$rev"*) names[$i]=$short ;; *) names[$i]="$rev ($short)" ;; esac
    fi
done

# ./target/release/dhumbal-run is the last build's: the working tree's again if it was not
# among them.
if [[ " ${revs[*]} " != *" . "* ]]; then
    echo "bench-speed: building the working tree again (./target holds its build)" >&2
    cargo build --locked --release --workspace >&2
fi

now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.3f", b - a }'; }
# Appends a figure of build $1 to its file $2.
note() { echo "$3" >>"$work/fig-$1-$2"; }

million=scenarios/bench/table1-million.yaml
for round in $(seq 1 "$runs"); do
    echo "bench-speed: round $round of $runs" >&2
    for i in "${!revs[@]}"; do
        bin=$work/bin-$i
        engine=$("$bin/dhumbal-run" bench --threads 2 --generator chacha | awk '$1 == "chacha8" { print $4 }')
        note "$i" engine "$engine"
        rm -rf "$work/run"
        t=$(now)
        "$bin/dhumbal-run" "$million" --threads 2 --no-report --out "$work/run" >/dev/null 2>&1
        note "$i" no-report "$(since "$t")"
        note "$i" share "$(awk -v e="$engine" -v c="$(tail -1 "$work/fig-$i-no-report")" 'BEGIN { printf "%.1f", 100 * e / c }')"
        t=$(now)
        "$bin/dhumbal-run" report "$work/run" --out "$work/report" --force >/dev/null 2>&1
        note "$i" report "$(since "$t")"
        rm -rf "$work/run" "$work/report"
        t=$(now)
        "$bin/dhumbal-run" "$million" --threads 2 --out "$work/run" >/dev/null 2>&1
        note "$i" with-report "$(since "$t")"
        rm -rf "$work/run"
        "$bin/search" --bench --only "aggressive rollouts" | awk '/decisions/ { for (f = 1; f < NF; f++) if ($f == "mean") print $(f + 1) }' >>"$work/fig-$i-aggressive"
        "$bin/search" --bench --only "paper budget" | awk '/ismcts/ { for (f = 1; f < NF; f++) if ($f == "mean") print $(f + 1) }' >>"$work/fig-$i-paper"
    done
done

# The range of a build's figure: "min-max" (one value when they agree).
range() {
    sort -g "$work/fig-$1-$2" | awk -v d="$3" 'NR == 1 { lo = $1 } { hi = $1 } END {
        a = sprintf("%." d "f", lo); b = sprintf("%." d "f", hi); print (a == b ? a : a "-" b) }'
}
{
    printf '| what (%s rounds, builds alternated) |' "$runs"
    for i in "${!revs[@]}"; do printf ' %s |' "${names[$i]}"; done
    printf '\n|---|'
    for _ in "${revs[@]}"; do printf -- '---|'; done
    printf '\n'
    row() {
        printf '| %s |' "$1"
        for i in "${!revs[@]}"; do printf ' %s |' "$(range "$i" "$2" "$3")$4"; done
        printf '\n'
    }
    row "engine, a million rounds on 2 threads (\`dhumbal-run bench\`)" engine 3 " s"
    row "the command line, the same million without its report (\`--no-report\`)" no-report 2 " s"
    row "its rounds/s as a share of the engine's" share 0 "%"
    row "the same run with its report" with-report 2 " s"
    row "the report alone (\`dhumbal-run report\`)" report 2 " s"
    row "ISMCTS 100 x 3 (the paper's budget), 4 players" paper 3 " ms/decision"
    row "ISMCTS 1,000, Aggressive rollouts" aggressive 3 " ms/decision"
} | tee "$work/table.md"
[ -z "$out" ] || cp "$work/table.md" "$out"
