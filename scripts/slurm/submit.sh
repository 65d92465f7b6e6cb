#!/usr/bin/env bash
# Submit a dhumbal-run study to Slurm as sharded array jobs plus a merge job.
# Run `scripts/slurm/submit.sh --help` for usage.
set -euo pipefail

SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)"
REPO="$(cd "$SCRIPT_DIR/../.." && pwd -P)"
PROG="${0##*/}"

usage() {
    cat <<EOF
Usage: $PROG [OPTIONS] SCENARIO OUT TASKS [-- SBATCH_ARGS...]

Submit the study SCENARIO to Slurm: TASKS array tasks play one shard each
(dhumbal-run SCENARIO --out OUT --shard), writing into OUT, and a final job
(dhumbal-run merge OUT) checks the records and writes the summaries and reports.

  - A one-stage scenario is one array (--array=0-<TASKS-1>) of shard.sbatch.
  - A scenario with several stages is one array per stage, in order, each task
    given --stage NAME, and each array depending on the one before
    (--dependency=afterok:<previous> --kill-on-invalid-dep=yes), since a stage
    may seat the winner of an earlier one.
  - merge.sbatch runs after the last array (afterok). If a shard fails, the jobs
    after it are cancelled (DependencyNeverSatisfied) instead of waiting forever;
    resubmit the failed shards (they play only what is missing) and the rest.
  - The first array is submitted held and released (scontrol release) once all
    the jobs are in, so none can end before the jobs that depend on it exist.
    If any sbatch fails, the jobs already submitted are cancelled.

SCENARIO and OUT are made absolute: OUT must be on a filesystem every node sees,
and must not hold another study (dhumbal-run refuses). Jobs run in the current
directory (--chdir), where their logs go (dhumbal-shard-<array>_<task>.out,
dhumbal-merge-<job>.out). Threads per shard: pass --cpus-per-task=T after --.

  - A stage with a sequential test (`sequential:`, `decide:`) is played one look
    at a time: its job is a driver (drive.sbatch, one CPU) that submits an array
    of TASKS shards per look (sbatch --wait) until the test decides, and the next
    stage depends on the driver. Its --time must cover every look of the stage:
    see --driver-time.
  - Tunings (`tune:`) and exploitability entries (`exploit:`) not done yet in
    OUT come first, in that order, a driver each (drive.sbatch tune:ID or
    exploit:ID): one array of TASKS shards per evaluation of a tuning, and per
    step of an entry (its stages' shares, then a look of its gain test per wave),
    until the agent file or exploitability.json is written. A training
    (`train:`) not done yet is refused: run it once on one machine first.
Options:
  --driver-time T  sbatch --time of the drivers of sequential stages (default:
                 the --time given after --, else the partition's default)
  --no-report    pass --no-report to the merge (no statistics reports)
  --csv          pass --csv to the merge (also write rounds.csv)
  --dry-run      print the sbatch commands, submit nothing (made-up job ids)
  -h, --help     show this help

SBATCH_ARGS (after --) go to every sbatch call, after this script's own
arguments, e.g. -- --partition=long --time=02:00:00 --cpus-per-task=8

Output: one line per job, 'stage NAME: JOBID' and 'merge: JOBID', then
'jobs: ID ID ...' with every job id (for squeue -j / scancel / waiting).

The program: \$DHUMBAL_RUN if set, else dhumbal-run on PATH, else
$REPO/target/release/dhumbal-run. It is resolved here, once, to an absolute
path that is exported to the jobs (DHUMBAL_RUN), so every job runs the same
binary: it must be reachable from the nodes, and must not be rebuilt while the
study runs.

Example:
  $PROG scenarios/championship.yaml /scratch/champ 32 -- --cpus-per-task=4
EOF
}

die() { echo "$PROG: $*" >&2; exit 2; }

merge_args=()
driver_time=()
dry_run=0
pos=()
extra=()
while [ $# -gt 0 ]; do
    case "$1" in
        -h|--help) usage; exit 0 ;;
        --no-report|--csv) merge_args+=("$1"); shift ;;
        --dry-run) dry_run=1; shift ;;
        --driver-time)
            [ $# -ge 2 ] || die "--driver-time needs a value (sbatch's --time format, say 12:00:00)"
            driver_time=(--time="$2"); shift 2 ;;
        --driver-time=*) driver_time=(--time="${1#--driver-time=}"); shift ;;
        --) shift; extra=("$@"); break ;;
        -*) die "unknown option '$1' (sbatch options go after --; see --help)" ;;
        *) pos+=("$1"); shift ;;
    esac
done
[ "${#pos[@]}" -eq 3 ] || { usage >&2; exit 2; }
SCENARIO="${pos[0]}"
OUT="${pos[1]}"
TASKS="${pos[2]}"
[[ "$TASKS" =~ ^[1-9][0-9]*$ ]] || die "TASKS must be a positive integer, not '$TASKS'"

abspath() { # no need for the path to exist
    case "$1" in
        /*) printf '%s\n' "$1" ;;
        *) printf '%s\n' "$PWD/${1#./}" ;;
    esac
}
[ -f "$SCENARIO" ] || die "no scenario file '$SCENARIO'"
SCENARIO="$(cd "$(dirname "$SCENARIO")" && pwd -P)/$(basename "$SCENARIO")"
OUT="$(abspath "$OUT")"
OUT="${OUT%/}"

# ---- the program, resolved once for every job
if [ -n "${DHUMBAL_RUN:-}" ]; then
    BIN="$DHUMBAL_RUN"
    case "$BIN" in
        */*) ;;
        *) BIN="$(command -v "$BIN" || true)" ;;
    esac
elif command -v dhumbal-run >/dev/null 2>&1; then
    BIN="$(command -v dhumbal-run)"
else
    BIN="$REPO/target/release/dhumbal-run"
fi
[ -n "$BIN" ] && [ -x "$BIN" ] || die "no dhumbal-run program at '${BIN:-$DHUMBAL_RUN}' (build it: cargo build --release, or set DHUMBAL_RUN)"
BIN="$(abspath "$BIN")"
export DHUMBAL_RUN="$BIN"
# The study's number of shards: tasks resubmitted alone (--array=5,9) still play theirs.
export DHUMBAL_SHARDS="$TASKS"
export DHUMBAL_REPO="$REPO"

# ---- validate, and read the stage names
rc=0
vout="$("$BIN" validate "$SCENARIO" 2>&1)" || rc=$?
if [ "$rc" -ne 0 ]; then
    printf '%s\n' "$vout" >&2
    echo "$PROG: the scenario is not valid; nothing submitted" >&2
    exit "$rc"
fi
printf '%s\n' "$vout" >&2
stages=()
looks=()
tunings=()
exploits=()
while IFS= read -r line; do
    # A tuning not done yet: searched (and confirmed) by waves of shards first, a driver job
    # each (drive.sbatch tune:ID), one after the other (a tuning may seat an earlier one's).
    if [[ "$line" =~ ^\ \ tune\ \`([^\`]+)\`:.*\(to\ do: ]]; then
        tunings+=("tune:${BASH_REMATCH[1]}")
    fi
    # An exploitability entry not measured yet: its stages by waves of shards, after the
    # tunings (its `tune` method's responder is one of them), a driver each (exploit:ID).
    if [[ "$line" =~ ^\ \ exploit\ \`([^\`]+)\`:.*\(to\ do: ]]; then
        exploits+=("exploit:${BASH_REMATCH[1]}")
    fi
    if [[ "$line" =~ ^\ \ stage\ \`([^\`]+)\`: ]]; then
        stages+=("${BASH_REMATCH[1]}")
        # A sequential test (`sequential:`, `decide:`) is played one look per wave by a
        # driver job (drive.sbatch).
        case "$line" in
            *"at most: stops when"*) looks+=(1) ;;
            *) looks+=(0) ;;
        esac
    fi
done <<<"$vout"
if grep -q '(to do: runs on one machine before the stages)' <<<"$vout"; then
    die "the scenario has trainings that run on one machine before its stages (the lines marked 'to do: runs on one machine' above; each is a loop of steps that depend on the ones before). Run them first, once, without shards: '$BIN' $SCENARIO --out $OUT (on a cluster: as one job), then submit again"
fi
drivers=(${tunings[@]+"${tunings[@]}"} ${exploits[@]+"${exploits[@]}"})
[ "${#stages[@]}" -ge 1 ] || [ "${#drivers[@]}" -ge 1 ] \
    || die "could not read the stage names from '$BIN validate' (lines '  stage \`NAME\`: ...')"

if [ "$dry_run" -eq 0 ]; then
    command -v sbatch >/dev/null 2>&1 || die "sbatch not found (is this a Slurm submit host?)"
fi

echo "$PROG: ${#stages[@]} stage(s) x $TASKS task(s) into $OUT, program $BIN" >&2

# ---- submit (job lines on stdout; everything else on stderr)
submitted=()
fake_id=1000
cancel_submitted() {
    if [ "${#submitted[@]}" -gt 0 ] && [ "$dry_run" -eq 0 ]; then
        echo "$PROG: cancelling the jobs already submitted: ${submitted[*]}" >&2
        scancel "${submitted[@]}" 2>/dev/null || true
    fi
}
submit() { # sbatch args... -> sets JOBID; on failure cancels what was submitted and exits
    local out rc=0
    if [ "$dry_run" -eq 1 ]; then
        { printf 'dry-run: sbatch'; printf ' %q' "$@"; echo; } >&2
        fake_id=$((fake_id + 1))
        JOBID="$fake_id"
    else
        out="$(sbatch --parsable "$@")" || rc=$?
        out="${out%%;*}"   # "jobid;cluster" on multi-cluster setups
        if [ "$rc" -ne 0 ] || ! [[ "$out" =~ ^[0-9]+$ ]]; then
            { printf '%s: sbatch failed (rc=%s):' "$PROG" "$rc"; printf ' %q' "$@"; echo; } >&2
            [ -z "$out" ] || echo "$out" >&2
            cancel_submitted
            exit 1
        fi
        JOBID="$out"
    fi
    submitted+=("$JOBID")
}

# The first array is submitted held and released once every job is in: otherwise a
# first stage that ends (fails) within milliseconds could make a later sbatch's
# dependency invalid before that sbatch runs. (Not if the caller asked for --hold.)
user_hold=0
for a in ${extra[@]+"${extra[@]}"}; do
    case "$a" in -H|--hold) user_hold=1 ;; esac
done
common=(--chdir="$PWD")
array=(--array="0-$((TASKS - 1))")
prev=""
first=""
for id in ${drivers[@]+"${drivers[@]}"}; do
    args=("${common[@]}")
    if [ -z "$first" ] && [ "$user_hold" -eq 0 ]; then
        args+=(--hold)
    fi
    if [ -n "$prev" ]; then
        args+=(--dependency="afterok:$prev" --kill-on-invalid-dep=yes)
    fi
    submit "${args[@]}" ${extra[@]+"${extra[@]}"} --cpus-per-task=1 \
        ${driver_time[@]+"${driver_time[@]}"} "$SCRIPT_DIR/drive.sbatch" "$SCENARIO" "$OUT" \
        "$id" "$TASKS" 1 ${extra[@]+"${extra[@]}"}
    case "$id" in
        tune:*) echo "tuning ${id#tune:}: $JOBID (driver: one array per evaluation)" ;;
        *) echo "exploit ${id#exploit:}: $JOBID (driver: one array per step of its stages)" ;;
    esac
    prev="$JOBID"
    [ -n "$first" ] || first="$JOBID"
done
for index in "${!stages[@]}"; do
    stage="${stages[$index]}"
    if [ "${looks[$index]}" -eq 1 ]; then
        # The driver: one CPU, the arrays' own options passed on to the arrays it submits
        # (--cpus-per-task=1 after them wins for the driver itself).
        args=("${common[@]}")
    else
        args=("${common[@]}" "${array[@]}")
    fi
    if [ -z "$first" ] && [ "$user_hold" -eq 0 ]; then
        args+=(--hold)
    fi
    stage_args=()
    if [ "${#stages[@]}" -gt 1 ]; then
        stage_args=("$stage")
    fi
    if [ -n "$prev" ]; then
        args+=(--dependency="afterok:$prev" --kill-on-invalid-dep=yes)
    fi
    if [ "${looks[$index]}" -eq 1 ]; then
        submit "${args[@]}" ${extra[@]+"${extra[@]}"} --cpus-per-task=1 \
            ${driver_time[@]+"${driver_time[@]}"} "$SCRIPT_DIR/drive.sbatch" "$SCENARIO" "$OUT" \
            "$stage" "$TASKS" "$(( ${#stages[@]} > 1 ? 1 : 0 ))" ${extra[@]+"${extra[@]}"}
        echo "stage $stage: $JOBID (driver: one array per look)"
    else
        submit "${args[@]}" ${extra[@]+"${extra[@]}"} \
            "$SCRIPT_DIR/shard.sbatch" "$SCENARIO" "$OUT" ${stage_args[@]+"${stage_args[@]}"}
        echo "stage $stage: $JOBID"
    fi
    prev="$JOBID"
    [ -n "$first" ] || first="$JOBID"
    if [ "${#stages[@]}" -eq 1 ]; then
        break
    fi
done

if [ "${#stages[@]}" -ge 1 ]; then
    submit "${common[@]}" --dependency="afterok:$prev" --kill-on-invalid-dep=yes \
        ${extra[@]+"${extra[@]}"} "$SCRIPT_DIR/merge.sbatch" "$OUT" ${merge_args[@]+"${merge_args[@]}"}
    echo "merge: $JOBID"
fi
if [ "$user_hold" -eq 0 ]; then
    if [ "$dry_run" -eq 1 ]; then
        echo "dry-run: scontrol release $first" >&2
    elif ! scontrol release "$first"; then
        echo "$PROG: could not release job $first; release it with: scontrol release $first" >&2
        echo "jobs: ${submitted[*]}"
        exit 1
    fi
fi
echo "jobs: ${submitted[*]}"
