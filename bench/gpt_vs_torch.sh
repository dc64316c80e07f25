#!/usr/bin/env bash
# gpt tokens/s of one balancenet worker against PyTorch's own training step on the same model (nanoGPT's,
# bench/gpt_torch_step.py): character level on the fortunes text, the same sizes, batch, threads, Adam(W) with
# weight decay 0, dropout 0; alternating balancenet, PyTorch, balancenet, PyTorch in one run.
# Usage: bench/gpt_vs_torch.sh [out-dir]   LAYERS HEADS EMBED CONTEXT (6 6 384 256), BATCH (8), STEPS (12),
#        THREADS (1; see docs/results.md for 2), REPS (2) override. tokens/s over the steps after the first WARMUP (2) of each run.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${1:-runs/gpt-vs-torch/$(date +%Y%m%d-%H%M%S)}
. bench/lib/peers.sh     # PY, require_torch
. bench/lib/fortunes.sh  # fortunes_text
. bench/lib/rates.sh     # step_rate, load1, rate_table
LAYERS=${LAYERS:-6} HEADS=${HEADS:-6} EMBED=${EMBED:-384} CONTEXT=${CONTEXT:-256}
BATCH=${BATCH:-8} STEPS=${STEPS:-12} THREADS=${THREADS:-1} REPS=${REPS:-2} WARMUP=2 LR=3e-4
BN=build/apps/balancenet
require_torch gpt_vs_torch
[ -x "$BN" ] || { echo "gpt_vs_torch: $BN not built" >&2; exit 2; }
TEXT=$OUT/fortunes.txt
fortunes_text "$TEXT"  # and $OUT
begin_results "$OUT" "$0" "$@" "LAYERS=$LAYERS" "HEADS=$HEADS" "EMBED=$EMBED" "CONTEXT=$CONTEXT" "BATCH=$BATCH" "STEPS=$STEPS" "THREADS=$THREADS"
for ((i = 1; i <= REPS; i++)); do
  before=$(load1)
  rm -rf "$OUT/bn-$i"
  # --val-fraction 0.002: the evaluation at the end (not timed) stays a few seconds.
  "$BN" train --nodes 1 --threads "$THREADS" --data "text:$TEXT" --val-fraction 0.002 --model gpt \
    --layers "$LAYERS" --heads "$HEADS" --embed "$EMBED" --context "$CONTEXT" --global-batch "$BATCH" \
    --steps "$STEPS" --optimizer adam --weight-decay 0 --lr "$LR" --progress-seconds 0 --log-level warn \
    --run-dir "$OUT/bn-$i" > "$OUT/bn-$i.log" 2>&1 || { echo "gpt_vs_torch: balancenet failed, see $OUT/bn-$i.log" >&2; exit 1; }
  sps=$(step_rate "$OUT/bn-$i" "$WARMUP")
  echo "balancenet $i $(awk -v s="$sps" -v t="$CONTEXT" 'BEGIN {printf "%.1f", s * t}') $before $(load1)" | tee -a "$OUT/results.txt" >&2
  before=$(load1)
  "$PY" bench/gpt_torch_step.py "$TEXT" "$LAYERS" "$HEADS" "$EMBED" "$CONTEXT" "$BATCH" "$STEPS" "$THREADS" "$LR" \
    > "$OUT/torch-$i.log" 2>&1 || { echo "gpt_vs_torch: PyTorch failed, see $OUT/torch-$i.log" >&2; exit 1; }
  tps=$(awk -v w="$WARMUP" -v b="$BATCH" -v t="$CONTEXT" '/^step_seconds/ {for (i = 2 + w; i <= NF; i++) {s += $i; n++}
    printf "%.1f", n * b * t / s}' "$OUT/torch-$i.log")
  echo "pytorch $i $tps $before $(load1)" | tee -a "$OUT/results.txt" >&2
done
rate_table "$OUT/results.txt" tokens/s balancenet/pytorch | tee "$OUT/table.md"
