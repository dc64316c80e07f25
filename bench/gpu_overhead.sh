#!/usr/bin/env bash
# A GPU worker's step overhead (issue 43): one balancenet worker on cuda:0 against PyTorch's own training loop of
# the same model and batch on the same GPU (bench/gpt_torch_step.py ... cuda:0: nanoGPT's gpt, AdamW with weight
# decay 0 as balancenet's --optimizer adam --weight-decay 0, every step timed after torch.cuda.synchronize()),
# character level on the fortunes text; alternating balancenet, PyTorch, balancenet, PyTorch.
# Target: balancenet >= 0.95 x PyTorch's samples/s.
# Usage: bench/gpu_overhead.sh [out-dir]   (under a minute on an H200)
#   LAYERS HEADS EMBED CONTEXT (6 6 384 256), BATCH (32), STEPS (40), WARMUP (5: steps left out), THREADS (4: both
#   sides' intra-op threads), REPS (2); bench/lib/gpu.sh's BN, BN_ROOT, RUN_TIMEOUT, BN_FLAGS.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${1:-runs/gpu-overhead/$(date +%Y%m%d-%H%M%S)}
. bench/lib/peers.sh     # PY
. bench/lib/fortunes.sh  # fortunes_text
. bench/lib/gpu.sh       # BN, gpu_require, gpu_begin, gpu_result, bn_launch, bn_rate, gpu_text
LAYERS=${LAYERS:-6} HEADS=${HEADS:-6} EMBED=${EMBED:-384} CONTEXT=${CONTEXT:-256} BATCH=${BATCH:-32}
STEPS=${STEPS:-40} WARMUP=${WARMUP:-5} THREADS=${THREADS:-4} REPS=${REPS:-2} LR=3e-4
gpu_require gpu_overhead --device --devices
mkdir -p "$OUT"
gpu_begin "$OUT" overhead "gpt=${LAYERS}x${HEADS}x${EMBED}, context $CONTEXT, batch $BATCH" \
  "steps=$STEPS, warm-up $WARMUP, threads $THREADS, reps $REPS"
TEXT=$OUT/fortunes.txt
(gpu_text "$TEXT") || { gpu_result "$OUT" gpt all failed "no fortunes text"; exit 1; }

FAILED=0
for ((i = 1; i <= REPS; i++)); do
  echo "gpu_overhead: gpt balancenet $i/$REPS" >&2
  if bn_launch "$OUT/bn-$i.log" "$OUT/bn-$i" --workers 1 --devices "$DEV" --threads "$THREADS" --data "text:$TEXT" \
       --val-fraction 0.002 --model gpt --layers "$LAYERS" --heads "$HEADS" --embed "$EMBED" --context "$CONTEXT" \
       --global-batch "$BATCH" --steps "$STEPS" --optimizer adam --weight-decay 0 --lr "$LR" &&
     rate=$(bn_rate "$OUT/bn-$i" "$WARMUP"); then
    gpu_result "$OUT" gpt balancenet "$rate"
  else
    gpu_result "$OUT" gpt balancenet failed "see $OUT/bn-$i.log"
    FAILED=1
  fi
  echo "gpu_overhead: gpt pytorch $i/$REPS" >&2
  if timeout --foreground -k 5 "$RUN_TIMEOUT" "$PY" bench/gpt_torch_step.py "$TEXT" "$LAYERS" "$HEADS" "$EMBED" \
       "$CONTEXT" "$BATCH" "$STEPS" "$THREADS" "$LR" "$DEV" > "$OUT/torch-$i.log" 2>&1 &&
     rate=$("$PY" bench/gpu_summary.py torch-rate "$OUT/torch-$i.log" "$WARMUP" "$BATCH"); then
    gpu_result "$OUT" gpt pytorch "$rate"
  else
    show_tail "$OUT/torch-$i.log"
    gpu_result "$OUT" gpt pytorch failed "see $OUT/torch-$i.log"
    FAILED=1
  fi
done
"$PY" bench/gpu_summary.py bench "$OUT" | tee "$OUT/table.md"
exit $FAILED
