#!/usr/bin/env bash
# Issue 54's convergence table: cnn on Fashion-MNIST, 2 workers, the same steps (default 600), B = 128: test
# accuracy at the end (the whole test set) for fp32, each --grad-compress (error feedback on; and off for bf16, int8
# and powersgd:4, --no-error-feedback: the gap the feedback closes) and --precision bf16.
# --precision fp16 is left out on a CPU: torch's fp16 convolutions there run at 1/80 of fp32 (benchmarks.md).
# Usage: bench/fewer_bits_convergence.sh [out-dir]     STEPS=n, SEED=n (default 1), ONLY="name ..." (a subset of the
# variants below, by name)
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${1:-runs/fewer-bits/$(date +%Y%m%d-%H%M%S)}
BN=build/apps/balancenet
STEPS=${STEPS:-600}; SEED=${SEED:-1}
[ -x "$BN" ] || { echo "fewer_bits_convergence: $BN not built" >&2; exit 2; }
mkdir -p "$OUT"
echo "command: $0 $* STEPS=$STEPS SEED=$SEED" > "$OUT/command.txt"
variants=("fp32|" "grad-compress-bf16|--grad-compress bf16" "grad-compress-fp16|--grad-compress fp16"
          "grad-compress-int8|--grad-compress int8" "grad-compress-powersgd|--grad-compress powersgd"
          "grad-compress-powersgd-4|--grad-compress powersgd:4"
          "grad-compress-powersgd-warmup-60|--grad-compress powersgd --compress-warmup 60" "precision-bf16|--precision bf16"
          "grad-compress-int8-no-feedback|--grad-compress int8 --no-error-feedback"
          "grad-compress-powersgd-4-no-feedback|--grad-compress powersgd:4 --no-error-feedback"
          "grad-compress-bf16-no-feedback|--grad-compress bf16 --no-error-feedback")
echo "| variant | test accuracy after $STEPS steps | samples/s |" > "$OUT/table.md"
echo "|---|---|---|" >> "$OUT/table.md"
for v in "${variants[@]}"; do
  name=${v%%|*}
  read -r -a flags <<< "${v#*|}"
  [ -z "${ONLY:-}" ] || [[ " $ONLY " == *" $name "* ]] || continue
  echo "fewer_bits_convergence: $name ($(uptime | sed 's/.*load/load/'))" >&2
  rm -rf "$OUT/$name"
  "$BN" train --workers 2 --steps "$STEPS" --global-batch 128 --seed "$SEED" --comm allreduce --progress-seconds 0 \
    --log-level warn --run-dir "$OUT/$name" ${flags[@]+"${flags[@]}"} > "$OUT/$name.log" 2>&1 \
    || { echo "fewer_bits_convergence: $name failed, see $OUT/$name.log" >&2; exit 1; }
  python3 -c 'import json, sys; s = json.load(open(sys.argv[1] + "/summary.json"))
print("| %s | %.2f%% | %.1f |" % (sys.argv[2], 100 * s["final_accuracy"], s["samples_per_second"]))' "$OUT/$name" \
    "$name" >> "$OUT/table.md"
done
cat "$OUT/table.md"
