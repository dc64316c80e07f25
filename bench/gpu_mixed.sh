#!/usr/bin/env bash
# One GPU worker and eight CPU workers in one job (issue 43): balancenet --policy balanced against the GPU worker
# alone (the same worker, the same flags, no CPU peers) and against --policy equal; resnet18 on a Fashion-MNIST
# image folder and gpt on the fortunes text. Target: balanced >= 0.95 x the GPU worker alone (the CPU workers
# may add a little, and must not cost more than 5%).
# Usage: bench/gpu_mixed.sh [out-dir]   (about 2 minutes on an H200 with 16 cores)
#   CPU_WORKERS (8) with THREADS (2) intra-op threads each (`--threads`, every worker's, the GPU worker's too),
#   --devices cuda:0,cpu,...; MODELS (resnet18 gpt), STEPS (30), WARMUP (5: steps left out of samples/s),
#   EQUAL_STEPS (10: an equal split waits for the CPU workers every step), EQUAL_WARMUP (2), LIMIT (2000 images
#   per split), RN_BATCH (512), SIZE (32), gpt LAYERS HEADS EMBED CONTEXT (4 4 256 128: small enough for a CPU
#   worker's share to matter), GPT_BATCH (128); bench/lib/gpu.sh's BN, BN_ROOT, RUN_TIMEOUT, BN_FLAGS.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${1:-runs/gpu-mixed/$(date +%Y%m%d-%H%M%S)}
. bench/lib/peers.sh     # PY
. bench/lib/fortunes.sh  # fortunes_text
. bench/lib/gpu.sh       # BN, gpu_require, gpu_begin, gpu_result, bn_launch, bn_rate, data
MODELS=${MODELS:-resnet18 gpt} STEPS=${STEPS:-30} WARMUP=${WARMUP:-5} EQUAL_STEPS=${EQUAL_STEPS:-10}
EQUAL_WARMUP=${EQUAL_WARMUP:-2} LIMIT=${LIMIT:-2000} RN_BATCH=${RN_BATCH:-512} SIZE=${SIZE:-32}
LAYERS=${LAYERS:-4} HEADS=${HEADS:-4} EMBED=${EMBED:-256} CONTEXT=${CONTEXT:-128} GPT_BATCH=${GPT_BATCH:-128}
CPU_WORKERS=${CPU_WORKERS:-8} THREADS=${THREADS:-2}
gpu_require gpu_mixed --device --devices --threads
mkdir -p "$OUT"
DEVICES=$DEV
for ((i = 0; i < CPU_WORKERS; i++)); do DEVICES+=,cpu; done
gpu_begin "$OUT" mixed "devices=$DEVICES" "threads=$THREADS per worker" "steps=$STEPS (equal: $EQUAL_STEPS), warm-up $WARMUP"

# measure MODEL SYSTEM: one run; prints its samples/s.
measure() {
  local model=$1 system=$2 log=$OUT/$1-$2.log run=$OUT/$1-$2
  case $system in
    gpu-alone) bn_launch "$log" "$run" --workers 1 --devices "$DEV" --threads "$THREADS" --steps "$STEPS" "${args[@]}" &&
                 bn_rate "$run" "$WARMUP" ;;
    balanced) bn_launch "$log" "$run" --workers $((CPU_WORKERS + 1)) --devices "$DEVICES" --threads "$THREADS" \
                --policy balanced --steps "$STEPS" "${args[@]}" && bn_rate "$run" "$WARMUP" ;;
    equal) bn_launch "$log" "$run" --workers $((CPU_WORKERS + 1)) --devices "$DEVICES" --threads "$THREADS" \
             --policy equal --steps "$EQUAL_STEPS" "${args[@]}" && bn_rate "$run" "$EQUAL_WARMUP" ;;
  esac
}

FAILED=0
for model in $MODELS; do
  case $model in
    resnet18)
      DIR=$OUT/fashion-folder
      gpu_image_folder "$DIR" "$LIMIT" || { gpu_result "$OUT" "$model" all failed "no image folder"; FAILED=1; continue; }
      args=(--model resnet18 --data "imagefolder:$DIR" --image-size "$SIZE" --global-batch "$RN_BATCH" --lr 0.05
            --momentum 0.9) ;;
    gpt)
      TEXT=$OUT/fortunes.txt
      (gpu_text "$TEXT") || { gpu_result "$OUT" "$model" all failed "no fortunes text"; FAILED=1; continue; }
      args=(--model gpt --data "text:$TEXT" --val-fraction 0.002 --layers "$LAYERS" --heads "$HEADS" --embed "$EMBED"
            --context "$CONTEXT" --global-batch "$GPT_BATCH" --optimizer adam --lr 1e-3) ;;
    *) echo "gpu_mixed: unknown model $model (resnet18, gpt)" >&2; exit 2 ;;
  esac
  gpu_systems "$OUT" "$model" gpu_mixed gpu-alone balanced equal
done
"$PY" bench/gpu_summary.py bench "$OUT" | tee "$OUT/table.md"
exit $FAILED
