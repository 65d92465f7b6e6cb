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
#   --runs  rounds of measurement, every build once per round, in turn (default 5)
#   --out   also write the table (Markdown) to FILE
#
# Each round runs, for every build: the engine alone (`dhumbal-run bench --threads 2
# --generator chacha`, its own timing), a million rounds through the command line without and
# with the report (the working tree's `scenarios/bench/table1-million.yaml --threads 2`, each
# into a fresh folder; the process's wall time), `dhumbal-run report` of that folder (wall
# time), and the search benchmark (`cargo bench --bench search`: ISMCTS at the paper's budget
# and at 1,000 iterations with Aggressive rollouts, ms per decision). Printed: each figure's
# range over the rounds, and the command line's rounds/s without its report as a share of the
# engine's. On 2 cores about 8 s per build and round, after about a minute and a half per
# build (the workspace's crates; the working tree's again at the end if it was not one).
set -euo pipefail
self=$(readlink -f "$0")
here=$PWD

usage() { sed -n '2,/^set -euo/p' "$self" | grep '^#' | sed 's/^# \{0,1\}//'; }
fail() { echo "bench-speed: $*" >&2; exit 2; }
runs=5
out=""
revs=()
while [ $# -gt 0 ]; do
    case "$1" in
        --runs)
            [[ "${2:-}" =~ ^[1-9][0-9]*$ ]] || fail "--runs takes a whole number of rounds, at least 1 (got '${2:-}')"
            runs=$2; shift 2 ;;
        --out)
            [ -n "${2:-}" ] || fail "--out takes a file name"
            out=$(realpath -m -- "$2")
            [ -d "$(dirname "$out")" ] && [ -w "$(dirname "$out")" ] \
                || fail "--out $2: no writable folder $(dirname "$out") to write it in"
            shift 2 ;;
        -h | --help) usage; exit 0 ;;
        -*) fail "unknown option '$1' (valid: --runs N, --out FILE, --help)" ;;
        *) revs+=("$1"); shift ;;
    esac
done
cd "$(dirname "$self")/.."
repo=$PWD
[ ${#revs[@]} -gt 0 ] || revs=(.)
for rev in "${revs[@]}"; do
    [ "$rev" = "." ] || git rev-parse --verify --quiet "$rev^{commit}" >/dev/null \
        || fail "'$rev' is not a git revision of this repository (give a branch, tag or commit, or '.' for the working tree)"
done

source scripts/setup.sh
source scripts/setup-torch.sh

work=$(mktemp -d)
finished=no
built_other=no
cleanup() {
    for t in "$work"/tree-*; do
        if [ -d "$t" ]; then git worktree remove --force "$t" >/dev/null 2>&1 || true; fi
    done
    git worktree prune >/dev/null 2>&1 || true
    rm -rf "$work"
    if [ "$finished" = no ] && [ "$built_other" = yes ]; then
        echo "bench-speed: stopped before the end: ./target/release holds another revision's build; \`cargo build --release\` (or scripts/run.sh) builds the working tree's again" >&2
    fi
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
        # In the release profile with the workspace's features, so that it reuses the build
        # above (`cargo bench`'s own build would compile the workspace's crates again).
        search=$(cargo build --locked --release --workspace --bench search --message-format=json \
            | grep -o '"executable":"[^"]*/deps/search-[^"]*"' | tail -1 | cut -d'"' -f4 || true)
        [ -n "$search" ] || { echo "bench-speed: the search benchmark (benches/search.rs) of $tree did not build" >&2; exit 1; }
        cp "$repo/target/release/dhumbal-run" "$into/dhumbal-run"
        cp "$search" "$into/search"
    )
}

# The working tree last, so that ./target ends with its build.
names=()
order=()
for i in "${!revs[@]}"; do [ "${revs[$i]}" = "." ] || order+=("$i"); done
for i in "${!revs[@]}"; do [ "${revs[$i]}" != "." ] || order+=("$i"); done
for i in "${order[@]}"; do
    rev=${revs[$i]}
    if [ "$rev" = "." ]; then
        echo "bench-speed: building the working tree" >&2
        build "$repo" "$work/bin-$i"
        names[i]="working tree"
        built_other=no
    else
        echo "bench-speed: building $rev" >&2
        git worktree add --detach --quiet "$work/tree-$i" "$rev"
        built_other=yes
        build "$work/tree-$i" "$work/bin-$i"
        git worktree remove --force "$work/tree-$i"
        short=$(git rev-parse --short "$rev^{commit}")
        if [[ "$rev" =~ ^[0-9a-f]+$ && "$rev" == "$short"* ]] || [[ "$short" == "$rev" ]]; then
            names[i]=$short
        else
            names[i]="$rev ($short)"
        fi
    fi
done
# ./target/release/dhumbal-run is the last build's: the working tree's again if it was not
# among them.
if [ "$built_other" = yes ]; then
    echo "bench-speed: building the working tree again (./target holds its build)" >&2
    cargo build --locked --release --workspace >&2
    built_other=no
fi

now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.3f", b - a }'; }
# Appends figure $2 of build $1 to its file, after checking that it is one number.
note() {
    [[ "$3" =~ ^[0-9]+(\.[0-9]+)?$ ]] || { echo "bench-speed: ${names[$1]}: could not read its $2 figure (got '$3')" >&2; exit 1; }
    echo "$3" >>"$work/fig-$1-$2"
}
# Runs a build's command, its output in $work/log; on failure shows it and stops.
run() {
    local i=$1; shift
    "$@" >"$work/log" 2>&1 || {
        echo "bench-speed: ${names[$i]}: \`${*#"$work/bin-$i/"}\` failed:" >&2
        tail -20 "$work/log" >&2
        exit 1
    }
}
# The mean ms per decision of the one search benchmark line labelled $2.
mean_ms() {
    awk -v label="$2" 'index($0, label) == 1 { for (f = 1; f < NF; f++) if ($f == "mean") { print $(f + 1); n++ } }
        END { if (n != 1) print "" }' "$1" | tail -1
}

million=scenarios/bench/table1-million.yaml
for round in $(seq 1 "$runs"); do
    echo "bench-speed: round $round of $runs" >&2
    # Each round starts with the next build, so that none is always first.
    for k in "${!revs[@]}"; do
        i=$(((k + round - 1) % ${#revs[@]}))
        bin=$work/bin-$i
        run "$i" "$bin/dhumbal-run" bench --threads 2 --generator chacha
        engine=$(awk '$1 == "chacha8" { print $4 }' "$work/log")
        note "$i" engine "$engine"
        rm -rf "$work/run" "$work/report"
        t=$(now)
        run "$i" "$bin/dhumbal-run" "$million" --threads 2 --no-report --out "$work/run"
        secs=$(since "$t")
        note "$i" no-report "$secs"
        note "$i" share "$(awk -v e="$engine" -v c="$secs" 'BEGIN { printf "%.1f", 100 * e / c }')"
        t=$(now)
        run "$i" "$bin/dhumbal-run" report "$work/run" --out "$work/report"
        note "$i" report "$(since "$t")"
        rm -rf "$work/run" "$work/report"
        t=$(now)
        run "$i" "$bin/dhumbal-run" "$million" --threads 2 --out "$work/run"
        note "$i" with-report "$(since "$t")"
        rm -rf "$work/run"
        run "$i" "$bin/search" --bench --only "aggressive rollouts"
        note "$i" aggressive "$(mean_ms "$work/log" "ismcts 1000, aggressive rollouts")"
        run "$i" "$bin/search" --bench --only "ismcts 100 x 3"
        note "$i" paper "$(mean_ms "$work/log" "ismcts 100 x 3")"
    done
done

# The range of a build's figure: "min-max" (one value when they agree).
range() {
    sort -g "$work/fig-$1-$2" | awk -v d="$3" 'NR == 1 { lo = $1 } { hi = $1 } END {
        a = sprintf("%." d "f", lo); b = sprintf("%." d "f", hi); print (a == b ? a : a "-" b) }'
}
{
    what="$runs round$([ "$runs" = 1 ] || echo s)"
    [ ${#revs[@]} = 1 ] || what="$what, builds alternated"
    printf '| what (%s) |' "$what"
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
finished=yes
