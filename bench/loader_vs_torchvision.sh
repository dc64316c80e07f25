#!/usr/bin/env bash
# Loader throughput: balancenet's imagefolder loader (bench_loader, one loader thread) against torchvision's
# DataLoader (num_workers=0, one thread), the same 256x256 JPEGs and transforms (resize to S, random crop
# with padding 4, flip, normalise), at S = 32 and 224, alternating A B A B in the same run.
# Usage: bench/loader_vs_torchvision.sh [out-dir]   MEASURE_SECONDS=n per measurement (20), REPS=n pairs (2),
#        IMAGES=n JPEGs (256). Prints a markdown table; uptime before and after each measurement.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${1:-runs/loader/$(date +%Y%m%d-%H%M%S)}
. bench/lib/peers.sh  # PY, require_torch
. bench/lib/rates.sh  # load1
SECONDS_EACH=${MEASURE_SECONDS:-20} REPS=${REPS:-2} IMAGES=${IMAGES:-256}
BIN=build/bench/bench_loader
require_torch loader_vs_torchvision
[ -x "$BIN" ] || { echo "loader_vs_torchvision: $BIN not built (cmake --build build --target bench_loader)" >&2; exit 2; }
mkdir -p "$OUT"
[ -d "$OUT/jpegs" ] || "$PY" bench/loader_torchvision.py make "$OUT/jpegs" "$IMAGES" 256
measure() {  # name size cmd...: appends "name size images/s load-before load-after" to results.txt
  local name=$1 size=$2 before rate
  shift 2
  before=$(load1)
  rate=$("$@" | awk '/images_per_second/ {print $2}')
  echo "$name $size $rate $before $(load1)" | tee -a "$OUT/results.txt" >&2
}
: > "$OUT/results.txt"
for size in 32 224; do
  for ((i = 1; i <= REPS; i++)); do
    measure balancenet "$size" env OPENBLAS_NUM_THREADS=1 "$BIN" "$OUT/jpegs" "$size" "$SECONDS_EACH"
    measure torchvision "$size" "$PY" bench/loader_torchvision.py run "$OUT/jpegs" "$size" "$SECONDS_EACH"
  done
done
awk '{r[$1" "$2] = r[$1" "$2] " " $3; s[$1" "$2] += $3; n[$1" "$2]++; l[$1" "$2] = l[$1" "$2] " " $4 "/" $5}
  END {
    print "| S | balancenet images/s (runs) | torchvision images/s (runs) | ratio of means | load before/after |"
    print "|---|---|---|---|---|"
    for (sz = 0; sz < 2; sz++) { S = sz ? 224 : 32; b = "balancenet " S; t = "torchvision " S
      printf "| %d | %.0f (%s) | %.0f (%s) | %.2fx | %s;%s |\n", S, s[b]/n[b], r[b], s[t]/n[t], r[t], (s[b]/n[b])/(s[t]/n[t]), l[b], l[t] }
  }' "$OUT/results.txt" | tee "$OUT/table.md"
