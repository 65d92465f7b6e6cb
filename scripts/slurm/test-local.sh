#!/usr/bin/env bash
# End-to-end test of the Slurm scripts on a real (one-node, throwaway) Slurm cluster.
#
#   sudo scripts/slurm/test-local.sh
#
# Needs root and a Debian-like system: local-cluster.sh installs Slurm + munge (apt)
# and starts the daemons. The temp dir under /tmp stands in for the shared filesystem.
#
#  1. submit.sh on study.yaml (two stages, the second seating the first's winner)
#     with 4 tasks; every job must end COMPLETED; the merge job must say it merged;
#     the reports, the shards' part files and progress files must be there; and
#     `dhumbal-run rerun` on one machine must reproduce the records exactly.
#  2. Resubmission is idempotent: a shard run again plays 0 rounds and leaves the
#     part files as they were.
#  3. A failing shard cancels what depends on it: submitted into a folder that holds
#     another study, the first stage's tasks fail, and the second stage's array and
#     the merge are cancelled (DependencyNeverSatisfied) instead of pending forever.
#  4. Sequential stages (sequential.yaml: an SPRT and a `decide:` league, then a final):
#     submit.sh gives each test a driver job (drive.sbatch) that submits one array per
#     look. The first driver is killed during its first wave (the jobs after it are
#     cancelled); submit.sh again completes the study from the parts on disk, and the
#     records and both outcome files (sequential.json) equal a single machine's.
#  5. A tuning (a Rhai script, two parameters) and a stage seating it: submit.sh gives the
#     tuning a driver (drive.sbatch tune:ID), one array per evaluation; the agent file, the
#     evaluations log and the confirmation equal a single machine's.
#  6. An exploitability entry with a gain test, then a stage: its driver (exploit:ID) is
#     killed during its first wave and submitted again; exploitability.json, its table and
#     both gain tests equal a single machine's. A scenario whose training has not run is
#     refused by submit.sh (exit 2, nothing submitted): trainings run on one machine first.
#
# Environment:
#   DHUMBAL_RUN      the program (default: dhumbal-run on PATH, else target/release/dhumbal-run)
#   KEEP_CLUSTER=1   leave the cluster running afterwards (default: stop it, also on failure)
#   KEEP_TMP=1       keep the temp dir after success (it is always kept after a failure)
#   SLURM_TEST_TIMEOUT  seconds to wait for each batch of jobs (default 180)
#
# Output goes to stdout/stderr only; the last line is `slurm test: ok` on success,
# and the exit code is non-zero (with a `slurm test: FAILED: ...` line) otherwise.
set -euo pipefail

SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)"
REPO="$(cd "$SCRIPT_DIR/../.." && pwd -P)"
LC="$SCRIPT_DIR/local-cluster.sh"
SUBMIT="$SCRIPT_DIR/submit.sh"
STUDY="$SCRIPT_DIR/study.yaml"
SEQ="$SCRIPT_DIR/sequential.yaml"
TASKS=4
TIMEOUT="${SLURM_TEST_TIMEOUT:-180}"

if [ "$(id -u)" -ne 0 ]; then
    echo "test-local.sh: must run as root (it installs and starts a local Slurm cluster); try: sudo $0" >&2
    exit 2
fi

if [ -n "${DHUMBAL_RUN:-}" ]; then
    BIN="$DHUMBAL_RUN"
elif command -v dhumbal-run >/dev/null 2>&1; then
    BIN="$(command -v dhumbal-run)"
else
    BIN="$REPO/target/release/dhumbal-run"
fi
case "$BIN" in /*) ;; */*) BIN="$PWD/$BIN" ;; *) BIN="$(command -v "$BIN" || echo "$BIN")" ;; esac
if [ ! -x "$BIN" ]; then
    echo "test-local.sh: no dhumbal-run program at '$BIN' (cargo build --release, or set DHUMBAL_RUN)" >&2
    exit 2
fi
export DHUMBAL_RUN="$BIN"

# ---------------------------------------------------------------- helpers
now_ms() { date +%s%3N; }
T0="$(now_ms)"
TIMINGS=()
STEP=""
STEP_T0=""
step() { # NAME: ends the previous step (recording its time) and starts this one
    local t; t="$(now_ms)"
    if [ -n "$STEP" ]; then
        TIMINGS+=("$(printf '%8.2f s  %s' "$(awk -v d=$((t - STEP_T0)) 'BEGIN{print d/1000}')" "$STEP")")
    fi
    STEP="$1"; STEP_T0="$t"
    [ -z "$STEP" ] || echo "=== [$(awk -v d=$((t - T0)) 'BEGIN{printf "%.1f", d/1000}')s] $STEP"
}
print_timings() {
    step ""
    echo "timings:"
    local l
    for l in ${TIMINGS[@]+"${TIMINGS[@]}"}; do echo "$l"; done
    printf '%8.2f s  total\n' "$(awk -v d=$(($(now_ms) - T0)) 'BEGIN{print d/1000}')"
}

WORK=""
OK=0
STOPPED=0
stop_cluster() {
    STOPPED=1
    if [ "${KEEP_CLUSTER:-0}" = 1 ]; then
        echo "test-local.sh: KEEP_CLUSTER=1: leaving the cluster running ($LC stop stops it)"
    else
        "$LC" stop || echo "test-local.sh: warning: local-cluster.sh stop failed" >&2
    fi
}
cleanup() {
    local rc=$?
    set +e
    if [ "$STOPPED" = 0 ]; then
        echo "=== stopping the cluster"
        stop_cluster
    fi
    if [ -n "$WORK" ] && [ -d "$WORK" ]; then
        if [ "$OK" = 1 ]; then
            [ "${KEEP_TMP:-0}" = 1 ] || rm -rf "$WORK"
        else
            echo "test-local.sh: files kept in $WORK"
        fi
    fi
    [ "$OK" = 1 ] || [ "$rc" -ne 0 ] || rc=1
    exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

fail() {
    echo "slurm test: FAILED: $*" >&2
    exit 1
}

show_logs() { # print the jobs' log files in $WORK
    local f
    for f in "$WORK"/*.out; do
        [ -e "$f" ] || continue
        echo "----- $f -----"
        cat "$f"
    done
}

wait_jobs() { # IDS... -> local-cluster.sh wait's output in $WAIT_OUT, its rc in $WAIT_RC
    WAIT_RC=0
    WAIT_OUT="$(SLURM_LOCAL_WAIT_TIMEOUT="$TIMEOUT" "$LC" wait "$@" 2>&1)" || WAIT_RC=$?
    echo "$WAIT_OUT"
}

submit() { # args for submit.sh -> sets SUB_OUT, JOBS, MERGE_ID
    SUB_OUT="$("$SUBMIT" "$@")" || { echo "$SUB_OUT"; fail "submit.sh $* failed"; }
    echo "$SUB_OUT"
    JOBS="$(sed -n 's/^jobs: //p' <<<"$SUB_OUT")"
    MERGE_ID="$(sed -n 's/^merge: //p' <<<"$SUB_OUT")"
    [ -n "$JOBS" ] && [ -n "$MERGE_ID" ] || fail "submit.sh printed no 'jobs:' / 'merge:' line"
}

parts_listing() { # DIR -> "path size mtime" of every part file, sorted
    find "$1" -path '*/rounds/part-*.parquet' -printf '%P %s %T@\n' | sort
}

# ---------------------------------------------------------------- cluster
echo "test-local.sh: program $BIN ($("$BIN" --version 2>/dev/null || echo '?'))"
step "install Slurm (local-cluster.sh install)"
"$LC" install
step "start the cluster (local-cluster.sh start)"
"$LC" start

WORK="$(mktemp -d /tmp/dhumbal-slurm-test.XXXXXX)"
OUT="$WORK/study"
cd "$WORK"   # submit.sh uses it as the jobs' --chdir: their logs land here
echo "test-local.sh: working in $WORK"

# ---------------------------------------------------------------- 1. study
step "1. submit $STUDY ($TASKS tasks per stage)"
submit "$STUDY" "$OUT" "$TASKS"
step "1. wait for jobs $JOBS"
# shellcheck disable=SC2086
wait_jobs $JOBS
if [ "$WAIT_RC" -ne 0 ]; then
    show_logs
    fail "not every job COMPLETED (local-cluster.sh wait exit $WAIT_RC)"
fi

step "1. check the outputs"
MERGE_LOG="$WORK/dhumbal-merge-$MERGE_ID.out"
[ -f "$MERGE_LOG" ] || { show_logs; fail "no merge log $MERGE_LOG"; }
grep -E '^merged [0-9]+ rounds of 2 stage' "$MERGE_LOG" \
    || { show_logs; fail "the merge job's log does not say it merged (no 'merged N rounds of 2 stage(s)')"; }
for stage in league final; do
    [ -s "$OUT/$stage/report.md" ] || fail "missing $OUT/$stage/report.md"
    [ -s "$OUT/$stage/summary.csv" ] || fail "missing $OUT/$stage/summary.csv"
    n="$(find "$OUT/$stage/rounds" -name 'part-*.parquet' | wc -l)"
    [ "$n" -ge "$TASKS" ] || fail "stage $stage: $n part files, expected at least $TASKS (one or more per shard)"
    echo "stage $stage: $n part files"
done
[ -s "$OUT/manifest.json" ] || fail "missing $OUT/manifest.json"
for i in $(seq 0 $((TASKS - 1))); do
    [ -s "$OUT/shards/$i-of-$TASKS.json" ] || fail "missing shard progress file $OUT/shards/$i-of-$TASKS.json"
done
n="$(find "$OUT/shards" -name "*-of-$TASKS.json" | wc -l)"
[ "$n" -eq "$TASKS" ] || fail "$n shard progress files, expected $TASKS"
n="$(find "$WORK" -maxdepth 1 -name 'dhumbal-shard-*.out' | wc -l)"
[ "$n" -eq $((2 * TASKS)) ] || fail "$n shard logs, expected $((2 * TASKS))"
echo "reports, manifest, parts, $TASKS shard progress files and $n shard logs are there"

step "1. rerun on one machine, compare records"
RERUN_OUT="$("$BIN" rerun "$OUT" --out "$OUT-single" --no-report --threads 2 2>&1)" \
    || { echo "$RERUN_OUT"; fail "dhumbal-run rerun failed"; }
grep -E '^(stage .*identical|rerun reproduces)' <<<"$RERUN_OUT" || true
grep -q 'rerun reproduces' <<<"$RERUN_OUT" || { echo "$RERUN_OUT"; fail "rerun did not print 'rerun reproduces'"; }

# ---------------------------------------------------------------- 2. idempotence
step "2. run shard 2/$TASKS of each stage again by hand"
before="$(parts_listing "$OUT")"
for stage in league final; do
    out="$("$BIN" "$STUDY" --out "$OUT" --shard "2/$TASKS" --stage "$stage" --threads 1 2>&1)" \
        || { echo "$out"; fail "shard 2/$TASKS --stage $stage run again failed"; }
    grep -E "^shard 2/$TASKS: " <<<"$out" || true
    grep -qE "^shard 2/$TASKS: 0 rounds" <<<"$out" \
        || { echo "$out"; fail "shard 2/$TASKS --stage $stage run again did not say '0 rounds'"; }
done
after="$(parts_listing "$OUT")"
if [ "$before" != "$after" ]; then
    diff <(echo "$before") <(echo "$after") || true
    fail "part files changed when a finished shard ran again"
fi
echo "part files unchanged ($(wc -l <<<"$after") files, sizes and mtimes)"

# ---------------------------------------------------------------- 3. failure
step "3. submit into a folder that holds another study (the shards must fail)"
OUT2="$WORK/foreign"
"$BIN" "$STUDY" --seed 12 --out "$OUT2" --shard "0/$TASKS" --stage league --threads 1 >/dev/null 2>&1 \
    || fail "could not plant another study in $OUT2"
submit "$STUDY" "$OUT2" "$TASKS"
read -r L_ID F_ID M_ID <<<"$JOBS"
step "3. wait for jobs $JOBS (they must not all complete)"
# shellcheck disable=SC2086
wait_jobs $JOBS
[ "$WAIT_RC" -eq 1 ] || { show_logs; fail "local-cluster.sh wait exit $WAIT_RC, expected 1 (some job not COMPLETED)"; }
n="$(grep -cE "^${L_ID}_[0-9]+ FAILED" <<<"$WAIT_OUT" || true)"
[ "$n" -eq "$TASKS" ] || fail "expected $TASKS FAILED league tasks, saw $n"
grep -qE "^${F_ID}(_[^ ]*)? CANCELLED DependencyNeverSatisfied" <<<"$WAIT_OUT" \
    || fail "the final stage's array $F_ID was not cancelled with DependencyNeverSatisfied"
grep -qE "^${M_ID} CANCELLED DependencyNeverSatisfied" <<<"$WAIT_OUT" \
    || fail "the merge job $M_ID was not cancelled with DependencyNeverSatisfied"
grep -h 'Use another --out' "$WORK/dhumbal-shard-${L_ID}_0.out" \
    || { show_logs; fail "the failing shard's log does not say why"; }
echo "league tasks FAILED; final array and merge CANCELLED (DependencyNeverSatisfied)"
[ ! -e "$WORK/dhumbal-merge-$M_ID.out" ] || fail "the cancelled merge job left a log (it ran?)"

# ---------------------------------------------------------------- 4. sequential stages
step "4. submit $SEQ (sequential and decide: stages, drivers) and kill the first driver"
OUT4="$WORK/sequential"
submit "$SEQ" "$OUT4" "$TASKS"
read -r D_ID _ <<<"$JOBS"
# Kill the first driver once its first wave is in the queue: the jobs after it are cancelled
# (afterok), and submit.sh again must go on from the parts on disk to the same files.
for _ in $(seq 1 300); do
    [ -z "$(squeue -h -n "$(printf 'dhumbal-look-%s' "$(printf '%s' "$OUT4//test" | cksum | cut -d' ' -f1)")" -o %i)" ] || break
    sleep 0.2
done
scancel "$D_ID"
# shellcheck disable=SC2086
wait_jobs $JOBS
[ "$WAIT_RC" -eq 1 ] || { show_logs; fail "local-cluster.sh wait exit $WAIT_RC after the driver was killed, expected 1"; }
grep -qE "^${D_ID} CANCELLED" <<<"$WAIT_OUT" || fail "the killed driver $D_ID is not CANCELLED"
step "4. submit again; wait for jobs"
submit "$SEQ" "$OUT4" "$TASKS"
# shellcheck disable=SC2086
wait_jobs $JOBS
if [ "$WAIT_RC" -ne 0 ]; then
    show_logs
    fail "not every job COMPLETED after the driver was submitted again (local-cluster.sh wait exit $WAIT_RC)"
fi
STATUS="$("$BIN" status "$OUT4")" || fail "dhumbal-run status $OUT4 failed"
echo "$STATUS"
grep -q "stage \`league\`: sequential test, ended after" <<<"$STATUS" || fail "status does not say the league decided"
step "4. one machine: the same records and outcomes"
"$BIN" "$SEQ" --out "$OUT4-single" --no-report --threads 2 >/dev/null 2>&1 || fail "the single-machine run of $SEQ failed"
for stage in test league; do
    cmp "$OUT4/$stage/sequential.json" "$OUT4-single/$stage/sequential.json" \
        || fail "stage $stage: sequential.json differs from the single-machine run's"
done
RERUN_OUT="$("$BIN" rerun "$OUT4" --out "$OUT4-rerun" --no-report --threads 2 2>&1)" \
    || { echo "$RERUN_OUT"; fail "dhumbal-run rerun of $OUT4 failed"; }
grep -q 'rerun reproduces' <<<"$RERUN_OUT" || { echo "$RERUN_OUT"; fail "rerun of $OUT4 did not reproduce it"; }
n="$(find "$WORK" -maxdepth 1 -name 'dhumbal-drive-*.out' | wc -l)"
echo "sequential.json of both tests equal to one machine's; records reproduced; $n driver logs"
grep -h "wave .* ended" "$WORK"/dhumbal-drive-*.out | head -8

# ---------------------------------------------------------------- 5. a tuning by waves
step "5. submit a scenario with a tuning (a Rhai script, two parameters) and a stage seating it"
mkdir -p "$WORK/t5" "$WORK/t5-single"
cp "$REPO/scenarios/heuristics/threshold.rhai" "$WORK/t5/"
cp "$REPO/scenarios/heuristics/threshold.rhai" "$WORK/t5-single/"
for d in t5 t5-single; do
    cat >"$WORK/$d/tuned.yaml" <<'YAML'
name: tuned-waves
seed: 9
rules: {preset: paper, players: 2}
tune:
  - id: mine
    agent: {script: threshold.rhai}
    params:
      call_at: {from: 2, to: 9}
      take_at_most: [1, 3, 5]
    opponents: [aggressive]
    budget: 240
    batch: 60
    confirm: {max_deals: 200, every: 100}
    output: mine.json
stages:
  - name: check
    deals: 40
    agents:
      - tuned: mine.json
      - kind: balanced
YAML
done
submit "$WORK/t5/tuned.yaml" "$WORK/t5/out" "$TASKS"
grep -q '^tuning mine: [0-9]* (driver' <<<"$SUB_OUT" || fail "submit.sh did not submit a driver for the tuning"
# shellcheck disable=SC2086
wait_jobs $JOBS
if [ "$WAIT_RC" -ne 0 ]; then
    show_logs
    fail "not every job of the tuning's scenario COMPLETED (local-cluster.sh wait exit $WAIT_RC)"
fi
step "5. one machine: the same agent file, evaluations and confirmation"
"$BIN" "$WORK/t5-single/tuned.yaml" --out "$WORK/t5-single/out" --no-report --threads 2 >/dev/null 2>&1 \
    || fail "the single-machine run of the tuning's scenario failed"
cmp "$WORK/t5/mine.json" "$WORK/t5-single/mine.json" || fail "the agent file differs from one machine's"
for f in tune/mine/evaluations.jsonl tune/mine/confirm/sequential.json; do
    cmp "$WORK/t5/out/$f" "$WORK/t5-single/out/$f" || fail "$f differs from one machine's"
done
[ -f "$WORK/t5/out/check/summary.csv" ] || fail "the stage seating the tuned agent was not merged"
grep -h "wave .* ended\|complete after" "$WORK"/dhumbal-drive-*.out | grep -c . | sed 's/^/driver log lines: /'
echo "agent file, evaluations log and confirmation equal to one machine's"

# ---------------------------------------------------------------- 6. an exploitability entry by waves
step "6. submit a scenario with an exploitability entry (a gain test) and kill its driver"
mkdir -p "$WORK/x6" "$WORK/x6-single"
for d in x6 x6-single; do
    cat >"$WORK/$d/measured.yaml" <<'YAML'
name: measured-waves
seed: 11
rules: {preset: paper, players: 2}
output: {chunk_rounds: 16}
exploit:
  - id: never-calls
    target: {kind: conservative, params: {strict_threshold: 0}}
    deals: 400
    sequential: {delta: 0.05, every: 25}
    methods:
      search: {iterations: 40, particles: 12}
      self: {}
stages:
  - name: check
    deals: 40
    agents:
      - kind: aggressive
      - kind: balanced
YAML
done
OUT6="$WORK/x6/out"
submit "$WORK/x6/measured.yaml" "$OUT6" "$TASKS"
grep -q '^exploit never-calls: [0-9]* (driver' <<<"$SUB_OUT" || fail "submit.sh did not submit a driver for the entry"
read -r X_ID _ <<<"$JOBS"
# Killed once its first wave is in the queue; submitted again, it goes on from the parts.
for _ in $(seq 1 300); do
    [ -z "$(squeue -h -n "$(printf 'dhumbal-look-%s' "$(printf '%s' "$OUT6//exploit:never-calls" | cksum | cut -d' ' -f1)")" -o %i)" ] || break
    sleep 0.2
done
scancel "$X_ID"
# shellcheck disable=SC2086
wait_jobs $JOBS
[ "$WAIT_RC" -eq 1 ] || { show_logs; fail "local-cluster.sh wait exit $WAIT_RC after the entry's driver was killed, expected 1"; }
STATUS="$("$BIN" status "$OUT6")" || fail "dhumbal-run status $OUT6 failed"
echo "$STATUS"
grep -q "exploit \`never-calls\`: measuring as $TASKS shards" <<<"$STATUS" || fail "status does not show the entry being measured"
step "6. submit again; wait for jobs"
submit "$WORK/x6/measured.yaml" "$OUT6" "$TASKS"
# shellcheck disable=SC2086
wait_jobs $JOBS
if [ "$WAIT_RC" -ne 0 ]; then
    show_logs
    fail "not every job of the entry's scenario COMPLETED (local-cluster.sh wait exit $WAIT_RC)"
fi
step "6. one machine: the same result, gain tests and table"
"$BIN" "$WORK/x6-single/measured.yaml" --out "$WORK/x6-single/out" --no-report --threads 2 >/dev/null 2>&1 \
    || fail "the single-machine run of the entry's scenario failed"
for f in exploitability.json exploitability.csv search/gain-test.json self/gain-test.json; do
    cmp "$OUT6/exploit/never-calls/$f" "$WORK/x6-single/out/exploit/never-calls/$f" \
        || fail "exploit/never-calls/$f differs from one machine's"
done
[ -f "$OUT6/check/summary.csv" ] || fail "the stage after the entry was not merged"
"$BIN" status "$OUT6" | grep -q "exploit \`never-calls\`: measured" || fail "status does not say the entry is measured"
grep -h "wave .* ended\|complete after" "$WORK"/dhumbal-drive-*.out | tail -3
echo "exploitability.json, the table and both gain tests equal to one machine's, after a killed driver"

step "6. a scenario whose training has not run is refused by submit.sh"
cat >"$WORK/trained.yaml" <<'YAML'
name: trained-first
seed: 3
rules: {preset: simplified-2p}
train:
  - id: q
    algorithm: q-learning
    episodes: 200
    reward: points
    opponents: [random]
    checkpoint: q.csv
stages:
  - name: check
    games: 10
    agents: [{kind: random}, {kind: random}]
YAML
rc=0
out="$("$SUBMIT" "$WORK/trained.yaml" "$WORK/trained" "$TASKS" 2>&1)" || rc=$?
[ "$rc" -eq 2 ] || { echo "$out"; fail "submit.sh of a scenario with a training to run exited $rc, expected 2"; }
grep -q "train \`q\`: .*(to do: runs on one machine before the stages)" <<<"$out" \
    && grep -q "Run them first, once, without shards" <<<"$out" \
    || { echo "$out"; fail "submit.sh did not say that the training runs first"; }
! grep -q '^jobs:' <<<"$out" || fail "submit.sh submitted jobs for a scenario it refused"
echo "refused (exit 2), naming the training and what to run"

step "stop the cluster"
stop_cluster
print_timings
OK=1
if [ "${KEEP_TMP:-0}" = 1 ]; then echo "test-local.sh: files kept in $WORK"; fi
echo "slurm test: ok"
