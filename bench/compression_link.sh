#!/usr/bin/env bash
# --grad-compress and --comm auto --allow-lossy-comm (issue 54) on an emulated slow link and on loopback: cnn, 2
# workers, one thread each, the same steps and data; samples/s, the bytes per step and what auto chose.
# Usage: bench/compression_link.sh [out-dir]
#   STEPS=n (default 60), MBPS=m the emulated link's Mbit/s per worker (default 50; --net-bandwidth-mbps), REPS=n
#   (default 1) runs of each, means reported.
# The emulated link is balancenet's own (docs/communication.md#emulated-networks): PyTorch DDP has none, so the
# side-by-side with DDP's bf16_compress_hook and PowerSGD needs the testbed's shaped links (not in this script).
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${1:-runs/compression/$(date +%Y%m%d-%H%M%S)}
. bench/lib/peers.sh  # PY
. bench/lib/rates.sh  # step_rate, load1, rate_table, begin_results
BN=build/apps/balancenet
STEPS=${STEPS:-60}; MBPS=${MBPS:-50}; REPS=${REPS:-1}; WARMUP=1
[ -x "$BN" ] || { echo "compression_link: $BN not built (cmake --build build --target balancenet)" >&2; exit 2; }
mkdir -p "$OUT"
begin_results "$OUT" "$0 $* STEPS=$STEPS MBPS=$MBPS REPS=$REPS"
variants=("allreduce|--comm allreduce" "allreduce-bf16|--comm allreduce --grad-compress bf16"
          "allreduce-fp16|--comm allreduce --grad-compress fp16" "allreduce-int8|--comm allreduce --grad-compress int8"
          "allreduce-powersgd|--comm allreduce --grad-compress powersgd"
          "allreduce-powersgd-4|--comm allreduce --grad-compress powersgd:4" "auto|--comm auto"
          "auto-lossy|--comm auto --allow-lossy-comm")
for link in slow fast; do
  emulation=()
  [ "$link" = slow ] && emulation=(--net-bandwidth-mbps "$MBPS,$MBPS")
  for v in "${variants[@]}"; do
    name=${v%%|*}
    read -r -a flags <<< "${v#*|}"
    for ((i = 1; i <= REPS; i++)); do
      run="$OUT/$link-$name-$i"
      echo "compression_link: $link $name $i/$REPS ($(uptime | sed 's/.*load/load/'))" >&2
      before=$(load1)
      rm -rf "$run"
      "$BN" train --workers 2 --threads 1 --steps "$STEPS" --global-batch 128 --eval-samples 2000 \
        --progress-seconds 0 --log-level warn --run-dir "$run" "${emulation[@]}" "${flags[@]}" > "$run.log" 2>&1 \
        || { echo "compression_link: $link $name failed, see $run.log" >&2; exit 1; }
      echo "$link-$name $i $(step_rate "$run" "$WARMUP") $before $(load1)" >> "$OUT/results.txt"
      "$PY" - "$run" "$link-$name" >> "$OUT/details.txt" <<'PY'
import csv, json, sys
run, name = sys.argv[1], sys.argv[2]
s = json.load(open(f"{run}/summary.json"))
rows = [r for r in csv.DictReader(open(f"{run}/steps.csv")) if r["rank"] == "0"]
auto = s.get("comm_auto", {})
print(f"{name}: final accuracy {s.get('final_accuracy')}, bytes sent per step (rank 0, last step) "
      f"{rows[-1]['bytes_sent']}, auto chose {auto.get('chosen', '-')}")
PY
    done
  done
done
{
  rate_table "$OUT/results.txt" "samples/s" slow-allreduce-bf16/slow-allreduce slow-allreduce-fp16/slow-allreduce \
    slow-allreduce-int8/slow-allreduce slow-allreduce-powersgd/slow-allreduce slow-allreduce-powersgd-4/slow-allreduce \
    slow-auto-lossy/slow-auto fast-allreduce-bf16/fast-allreduce fast-allreduce-int8/fast-allreduce \
    fast-allreduce-powersgd/fast-allreduce fast-auto-lossy/fast-auto
  echo
  cat "$OUT/details.txt"
} | tee "$OUT/table.md"
