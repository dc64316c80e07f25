#!/usr/bin/env bash
# Throughput of balancenet train on cnn for N = 1, 2, 4 local workers (equal split), one run each,
# reading samples/s from each run's summary.json. Usage: bench/scaling.sh [steps] [build-dir]
set -euo pipefail
cd "$(dirname "$0")/.."
STEPS=${1:-100}
BUILD=${2:-build}
OUT=$(mktemp -d /tmp/balancenet-scaling-XXXXXX)
printf "%-6s %-8s %-14s %-18s\n" nodes threads samples/s mean_update_ms
for n in 1 2 4; do
  threads=$(( $(nproc) / n )); (( threads >= 1 )) || threads=1
  "$BUILD/apps/balancenet" train --nodes "$n" --model cnn --global-batch 128 --steps "$STEPS" \
    --threads "$threads" --run-dir "$OUT/n$n" --progress-seconds 0 --log-level warn >/dev/null 2>&1
  python3 -c "import json,sys; s=json.load(open('$OUT/n$n/summary.json')); print(f\"{$n:<6} {$threads:<8} {s['samples_per_second']:<14.1f} {s['mean_weight_update_ms']:<18.2f}\")"
done
echo "(runs kept in $OUT)"
