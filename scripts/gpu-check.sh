#!/usr/bin/env bash
# Trains on CUDA and on the CPU from the same seed and compares them
# (scenarios/learning/gpu-check.yaml: PPO, DQN and Double DQN, each with `device: cpu` and
# `device: cuda`), then checks a CUDA training stopped and resumed, and self-play on CUDA.
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
#   - they end in the same place: the last evaluations' 95% intervals overlap;
# and when a PPO training on CUDA trained to 1,536 episodes (an iteration boundary) and resumed to 3,000
# (ppo-cuda-resumed) holds the same networks and optimizer state, bit for bit, as the one
# trained to 3,000 in one go (ppo-cuda), and a self-play training on CUDA (ppo-self-cuda, its
# own snapshots and random as opponents) ran on the GPU and learned (its last evaluation
# against random above its first, intervals apart).
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
mkdir -p "$out"
rm -rf models/gpu-check
scenario=scenarios/learning/gpu-check.yaml
# ppo-cuda-resumed's first half: the same file with that entry's 3000 episodes made 1500 (in
# the same folder, so that its checkpoint path means the same file).
half=scenarios/learning/.gpu-check-half.yaml
sed '/^  - id: ppo-cuda-resumed$/,/^  - id:/ s/^    episodes: 3000 .*/    episodes: 1536/' "$scenario" > "$half"
trap 'rm -f "$half"' EXIT
grep -q '^    episodes: 1536$' "$half" || { echo "gpu-check: could not make the first half's scenario" >&2; exit 2; }

# train LOG FILE ID [--resume]: one training, watched by nvidia-smi; appends to LOG.
train() {
    local log="$out/$1.log" file="$2" id="$3"
    shift 3
    "$trainer" "$file" --id "$id" --out "$out" "${@:---force}" >>"$log" 2>&1 &
    local pid=$! seen=no
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
    # Every part of a training that ran on CUDA must have been seen there.
    if [ -f "$out/train/$id/nvidia-smi-saw-it" ] && [ "$(cat "$out/train/$id/nvidia-smi-saw-it")" = no ]; then
        seen=no
    fi
    echo "$seen" > "$out/train/$id/nvidia-smi-saw-it"
}

for id in ppo-cpu ppo-cuda dqn-cpu dqn-cuda ddqn-cpu ddqn-cuda ppo-self-cuda; do
    train "$id" "$scenario" "$id"
done
train ppo-cuda-resumed "$half" ppo-cuda-resumed
train ppo-cuda-resumed "$scenario" ppo-cuda-resumed --resume

"$python" - "$out" <<'PY'
import json, pathlib, re, sys
out = pathlib.Path(sys.argv[1])
line = re.compile(r"after\s+(\d+) episodes: wins ([\d.]+)% \[([\d.]+), ([\d.]+)\] against (\w+)")
def curve(run):
    return {int(m[1]): (float(m[2]), float(m[3]), float(m[4]))
            for m in (line.search(l) for l in (out / f"{run}.log").read_text().splitlines()) if m}
ok = True
for algo in ["ppo", "dqn", "ddqn"]:
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

# A CUDA training stopped at 1,500 episodes and resumed to 3,000 against one trained in one go.
def tensors(path):
    raw = path.read_bytes()
    n = int.from_bytes(raw[:8], "little")
    header = json.loads(raw[8:8 + n])
    base = 8 + n
    return {k: (v["dtype"], v["shape"], raw[base + v["data_offsets"][0]:base + v["data_offsets"][1]])
            for k, v in header.items() if k != "__metadata__"}
import array
whole, resumed = tensors(pathlib.Path("models/gpu-check/ppo-cuda.safetensors")), tensors(pathlib.Path("models/gpu-check/ppo-cuda-resumed.safetensors"))
mr = json.loads((out / "train" / "ppo-cuda-resumed" / "manifest.json").read_text())
saw = (out / "train" / "ppo-cuda-resumed" / "nvidia-smi-saw-it").read_text().strip()
differ = sorted(k for k in whole if k not in resumed or whole[k] != resumed[k])
print(f"\nresume on CUDA: ppo-cuda-resumed trained to 1,536 episodes (24 iterations of 64), then resumed to {mr['episodes']:,} on {mr['device']} "
      f"(nvidia-smi saw it: {saw}); against ppo-cuda trained to 3,000 in one go: {len(whole)} tensors (networks and Adam's moments), "
      + ("all identical, bit for bit" if not differ and set(whole) == set(resumed) else f"{len(differ)} differ"))
for k in differ[:5]:
    if k in resumed and whole[k][0] == "F32":
        a, b = array.array("f", whole[k][2]), array.array("f", resumed[k][2])
        print(f"  {k}: largest difference {max(abs(x - y) for x, y in zip(a, b)):.3g}")
    else:
        print(f"  {k}: missing or of another type")
ok &= not differ and set(whole) == set(resumed) and mr["device"].startswith("cuda") and saw == "yes"

# Self-play on CUDA: ran on the GPU and learned.
ms = json.loads((out / "train" / "ppo-self-cuda" / "manifest.json").read_text())
saw = (out / "train" / "ppo-self-cuda" / "nvidia-smi-saw-it").read_text().strip()
c = curve("ppo-self-cuda")
first, last = c[min(c)], c[max(c)]
learned = last[1] > first[2]
print(f"\nself-play on CUDA: ppo-self-cuda (opponents: its own snapshots and random) on {ms['device']} (nvidia-smi saw it: {saw}); "
      f"against random {first[0]:.1f}% [{first[1]:.1f}, {first[2]:.1f}] before any update, "
      f"{last[0]:.1f}% [{last[1]:.1f}, {last[2]:.1f}] after {max(c):,} episodes: {'learned' if learned else 'DID NOT LEARN'}; "
      f"{ms['episodes'] / ms['seconds_this_run']:.0f} episodes/s")
ok &= ms["device"].startswith("cuda") and saw == "yes" and learned

print("\ngpu-check: " + ("ok: trained on CUDA from the CPU's starting networks, to the CPU's result; resumed on CUDA to the "
                      "uninterrupted training's networks; self-play on CUDA learned" if ok else "FAILED"))
sys.exit(0 if ok else 1)
PY
