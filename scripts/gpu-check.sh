#!/usr/bin/env bash
# Trains on CUDA and on the CPU from the same seed and compares them
# (scenarios/learning/gpu-check.yaml: PPO and DQN, each with `device: cpu` and `device: cuda`).
# Run it on a machine with an NVIDIA GPU and a Python whose torch is the CUDA build:
#
#   scripts/gpu-check.sh [TRAINER]
#
# TRAINER is the dhumbal-train to use (default: target/gpu-trainer/dhumbal-train from
# scripts/build-gpu-trainer.sh, else target/release/dhumbal-train). It runs against that
# Python's libtorch (found with `python3 -c 'import torch'`, or $DHUMBAL_TORCH_PYTHON) and
# passes (exit 0) when, for each algorithm:
#   - the CUDA training ran on the GPU: its manifest records `cuda:0` and nvidia-smi saw its
#     process while it trained (the CPU one records `cpu`);
#   - both started from the same networks: the evaluation before any update is identical
#     (networks are initialised on the CPU and moved, episodes and evaluation deals come from
#     the same streams);
#   - they end in the same place: the last evaluations' 95% intervals overlap.
# It prints the two learning curves side by side (after the first update the two runs are
# different trainings, as two seeds are, since floating-point results of the updates differ
# between cuBLAS and the CPU; points in between are shown, not required to agree) and
# episodes per second on each device.
set -euo pipefail
cd "$(dirname "$0")/.."

trainer="${1:-}"
if [ -z "$trainer" ]; then
    for t in target/gpu-trainer/dhumbal-train target/release/dhumbal-train; do
        if [ -x "$t" ]; then trainer="$t"; break; fi
    done
fi
[ -n "$trainer" ] && [ -x "$trainer" ] || { echo "gpu-check: no dhumbal-train (build one with scripts/build-gpu-trainer.sh)" >&2; exit 2; }
python="${DHUMBAL_TORCH_PYTHON:-python3}"
torch_lib=$("$python" -c 'import os, torch; print(os.path.join(os.path.dirname(torch.__file__), "lib"))')
torch_version=$("$python" -c 'import torch; print(torch.__version__, "CUDA", torch.version.cuda, "devices", torch.cuda.device_count())')
export LD_LIBRARY_PATH="$torch_lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
echo "gpu-check: trainer $trainer, Python's torch $torch_version ($torch_lib)"
command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader

out="${DHUMBAL_GPU_OUT:-$(mktemp -d)}"
rm -rf models/gpu-check
status=0
for id in ppo-cpu ppo-cuda dqn-cpu dqn-cuda; do
    log="$out/$id.log"
    "$trainer" scenarios/learning/gpu-check.yaml --id "$id" --out "$out" --force >"$log" 2>&1 &
    pid=$!
    seen=no
    while kill -0 "$pid" 2>/dev/null; do
        if command -v nvidia-smi >/dev/null && nvidia-smi --query-compute-apps=pid --format=csv,noheader 2>/dev/null | grep -qw "$pid"; then
            seen=yes
        fi
        sleep 0.5
    done
    if ! wait "$pid"; then
        echo "gpu-check: training $id failed:" >&2
        tail -20 "$log" >&2
        exit 1
    fi
    echo "$seen" > "$out/train/$id/nvidia-smi-saw-it"
done

"$python" - "$out" <<'PY'
import json, pathlib, re, sys
out = pathlib.Path(sys.argv[1])
line = re.compile(r"after\s+(\d+) episodes: wins ([\d.]+)% \[([\d.]+), ([\d.]+)\] against (\w+)")
def curve(run):
    return {int(m[1]): (float(m[2]), float(m[3]), float(m[4]))
            for m in (line.search(l) for l in (out / f"{run}.log").read_text().splitlines()) if m}
ok = True
for algo in ["ppo", "dqn"]:
    cpu, cuda = curve(f"{algo}-cpu"), curve(f"{algo}-cuda")
    mc = json.loads((out / "train" / f"{algo}-cpu" / "manifest.json").read_text())
    mg = json.loads((out / "train" / f"{algo}-cuda" / "manifest.json").read_text())
    saw = (out / "train" / f"{algo}-cuda" / "nvidia-smi-saw-it").read_text().strip()
    used = mg["device"].startswith("cuda") and saw == "yes" and mc["device"] == "cpu"
    first, last = min(cpu), max(cpu)
    same_start = cpu.get(first) == cuda.get(first)
    overlap = lambda a, b: a[1] <= b[2] and b[1] <= a[2]
    same_end = last in cuda and overlap(cpu[last], cuda[last])
    ok &= used and same_start and same_end
    print(f"\n{algo}: CPU run on {mc['device']}, CUDA run on {mg['device']} (nvidia-smi saw the process: {saw})")
    print(f"  {'episodes':>8}  {'CPU win % [95% CI]':>22}  {'CUDA win % [95% CI]':>22}  intervals overlap")
    for e in sorted(cpu):
        a, b = cpu[e], cuda.get(e)
        if b is None:
            ok = False
            print(f"  {e:>8}  missing on CUDA")
            continue
        print(f"  {e:>8}  {a[0]:>6.1f} [{a[1]:.1f}, {a[2]:.1f}]  {b[0]:>8.1f} [{b[1]:.1f}, {b[2]:.1f}]  {'yes' if overlap(a, b) else 'no'}")
    diff = [abs(cpu[e][0] - cuda[e][0]) for e in cpu if e in cuda and e != first]
    print(f"  same start: {'yes' if same_start else 'NO'}; same end (intervals overlap): {'yes' if same_end else 'NO'}; "
          f"mean |CPU - CUDA| after the first update: {sum(diff) / max(len(diff), 1):.1f} points")
    rate = lambda m: m["episodes"] / m["seconds_this_run"]
    print(f"  episodes/s: CPU {rate(mc):.0f}, CUDA {rate(mg):.0f} ({rate(mg) / rate(mc):.1f}x; {mc['threads']} threads play the episodes on both); {mc['episodes']} episodes each")
print("\ngpu-check: " + ("ok: trained on CUDA from the CPU's starting networks, to the CPU's result" if ok else "FAILED"))
sys.exit(0 if ok else 1)
PY
