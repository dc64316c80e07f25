#!/usr/bin/env bash
# Calibration of `balancenet simulate` against real 4-worker runs on this machine (issue 19): for each policy,
# `balancenet train` with emulated node speeds (docs/results.md's h1: one node at a quarter speed), then the
# simulator on the same scenario, its step law fitted from the real runs' steps.csv, and a table of both
# samples/s. The simulator should be within 10% of each real run.
# Usage: bench/simulate_calibration.sh [out-dir] [steps]   (about 12 minutes at 150 steps: the emulated speeds
# are absolute, 100 samples/s for the fast nodes). A real run already in out-dir (its summary.json) is reused.
# bno runs a third of the steps: its effective global batch is about 4 B (docs/allocation.md).
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${1:-runs/simulate-calibration}
STEPS=${2:-150}
BN=build/apps/balancenet
POLICIES=(equal proportional balanced bno)
SCENARIO=(--nodes 4 --node-speed 100,100,100,25 --global-batch 128)
mkdir -p "$OUT"
steps_of() { if [ "$1" = bno ]; then echo $((STEPS / 3)); else echo "$STEPS"; fi; }
for p in "${POLICIES[@]}"; do
  [ -f "$OUT/real-$p/summary.json" ] && continue
  "$BN" train "${SCENARIO[@]}" --model cnn --steps "$(steps_of "$p")" --eval-every 0 --threads 1 --policy "$p" \
    --run-dir "$OUT/real-$p" --log-level warn
done

# The fit, from every real run's steps (step 0 and the first 10 skipped: warm-up):
#  - per node, compute_ms = a_i + c_i b (least squares over all runs: proportional and balanced spread b);
#    the simulator's law is (fixed + per_sample b) / speed_i: fixed = a_0, per_sample = c_0, speed_i = c_0 / c_i;
#  - noise: the spread of log(compute_ms / (a_i + c_i b)) (a log-normal with that sigma);
#  - the rest of a step (all-reduce, update, data): the median over steps of max_r update_ms - max_r
#    compute_ms, played by a ring all-reduce of 1 MB at the bandwidth that takes that long with no latency.
read -r LAW SPEEDS NOISE NETWORK < <("${BALANCENET_PYTHON:-.venv/bin/python}" - "$OUT" "${POLICIES[@]}" <<'PYEOF'
import csv, math, statistics, sys
out, policies = sys.argv[1], sys.argv[2:]
points, extra = {}, []
for p in policies:
    steps = {}
    for row in csv.DictReader(open(f"{out}/real-{p}/steps.csv")):
        step, rank = int(row["step"]), int(row["rank"])
        if step <= 10: continue
        b, c, u = int(row["batch"]), float(row["compute_ms"]), float(row["update_ms"])
        points.setdefault(rank, []).append((b, c))
        steps.setdefault(step, []).append((c, u))
    extra += [max(u for _, u in v) - max(c for c, _ in v) for v in steps.values()]
def fit(pts):
    n = len(pts); mb = sum(b for b, _ in pts) / n; mt = sum(t for _, t in pts) / n
    var = sum((b - mb) ** 2 for b, _ in pts)
    c = sum((b - mb) * (t - mt) for b, t in pts) / var if var > 0 else mt / mb
    a = mt - c * mb
    if a < 0 or c <= 0: a, c = 0.0, sum(t for _, t in pts) / sum(b for b, _ in pts)
    return a, c
lines = {r: fit(v) for r, v in sorted(points.items())}
a0, c0 = lines[0]
logs = [math.log(t / (lines[r][0] + lines[r][1] * b)) for r, v in points.items() for b, t in v]
sigma = statistics.pstdev(logs)
changes = ",".join(f"0:{r}:{c0 / c:.4f}" for r, (a, c) in lines.items() if r > 0)
overhead = max(statistics.median(extra), 1e-3)
bits = 1.5 * 1e6 / overhead * 8 * 1000  # ring all-reduce of 1 MB over 4 ranks moves 1.5 MB per rank
print(f"{a0:.4f},{c0:.5f} {changes} lognormal:1,{sigma:.4f} ring:{bits:.0f}bit,0us")
PYEOF
)
echo "fitted: --step-law $LAW --change $SPEEDS --noise $NOISE --network $NETWORK" >&2

printf "%-13s %14s %14s %8s\n" policy real_samples/s sim_samples/s diff
for p in "${POLICIES[@]}"; do
  "$BN" simulate --nodes 4 --global-batch 128 --steps "$(steps_of "$p")" --speeds const:1 --change "$SPEEDS" \
    --step-law "$LAW" --noise "$NOISE" --network "$NETWORK" --gradient-bytes 1e6 --probe-peers 0 \
    --rebalance-every 5 --policies "$p" --out "$OUT/sim-$p" >/dev/null
  "${BALANCENET_PYTHON:-.venv/bin/python}" - "$OUT" "$p" <<'PYEOF'
import csv, json, sys
out, p = sys.argv[1], sys.argv[2]
real = json.load(open(f"{out}/real-{p}/summary.json"))["samples_per_second"]
sim = float(next(csv.DictReader(open(f"{out}/sim-{p}/simulation.csv")))["samples_per_s"])
print(f"{p:<13} {real:14.1f} {sim:14.1f} {100 * (sim - real) / real:+7.1f}%")
PYEOF
done
