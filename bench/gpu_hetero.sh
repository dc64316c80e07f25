#!/usr/bin/env bash
# Two workers share the one GPU, one of them limited to about a quarter of its SMs (issue 43): balancenet --policy
# balanced and --policy equal against PyTorch DDP (bench/ddp_peer.py --device cuda), and each worker alone at its
# limit, whose sum is the ideal. resnet18 on a Fashion-MNIST image folder and gpt on the fortunes text.
# Usage: bench/gpu_hetero.sh [out-dir]   (about 2 minutes on an H200)
#   The limit: CUDA MPS (nvidia-cuda-mps-control -d, pipe and log folders under /tmp/bn-mps), each worker a client
#   with CUDA_MPS_ACTIVE_THREAD_PERCENTAGE of its own: FAST_PCT (100) and SLOW_PCT (25). balancenet's launcher
#   gives every worker its own environment, so the workers are started here as another launcher would start them
#   (torchrun's variables, rank 0 serving the store; bench/lib/gpu.sh's bn_ranks), each with its percentage.
#   Where MPS does not start (or MPS=0), the workers are paced instead: --slowdown 1,SLOWDOWN (4) on both systems
#   (balancenet's emulation; ddp_peer.py's, which sleeps before backward), said so in the output and meta.txt.
#   DDP: both ranks on cuda:0 over Gloo (NCCL refuses two ranks on one GPU), its images decoded once (--preload).
#   MODELS (resnet18 gpt), STEPS (30), WARMUP (5: steps left out of samples/s), LIMIT (2000 images per split),
#   RN_BATCH (512), SIZE (32), LAYERS HEADS EMBED CONTEXT (6 6 384 256), GPT_BATCH (64); bench/lib/gpu.sh's BN,
#   BN_ROOT, RUN_TIMEOUT, BN_FLAGS. Targets: balanced >= 1.5x DDP and >= 0.85 of the ideal (bench/gpu_summary.py).
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${1:-runs/gpu-hetero/$(date +%Y%m%d-%H%M%S)}
. bench/lib/peers.sh     # PY, free_port, run_peers, wait_peers
. bench/lib/fortunes.sh  # fortunes_text
. bench/lib/gpu.sh       # BN, gpu_require, gpu_begin, gpu_result, bn_ranks, bn_launch, bn_rate, data
MODELS=${MODELS:-resnet18 gpt} STEPS=${STEPS:-30} WARMUP=${WARMUP:-5} LIMIT=${LIMIT:-2000}
RN_BATCH=${RN_BATCH:-512} SIZE=${SIZE:-32}
LAYERS=${LAYERS:-6} HEADS=${HEADS:-6} EMBED=${EMBED:-384} CONTEXT=${CONTEXT:-256} GPT_BATCH=${GPT_BATCH:-64}
FAST_PCT=${FAST_PCT:-100} SLOW_PCT=${SLOW_PCT:-25} SLOWDOWN=${SLOWDOWN:-4}
gpu_require gpu_hetero --device --devices
mkdir -p "$OUT"

# --- the limit: MPS, else pacing -------------------------------------------------------------------------
MPS_DIR=/tmp/bn-mps
MPS_STARTED=""
mps_stop() {
  [ -n "$MPS_STARTED" ] || return 0
  echo quit | nvidia-cuda-mps-control > /dev/null 2>&1 || true
  MPS_STARTED=""
  unset CUDA_MPS_PIPE_DIRECTORY CUDA_MPS_LOG_DIRECTORY
}
trap mps_stop EXIT
trap 'exit 143' TERM INT  # the EXIT trap (the daemon's quit) runs on a timeout's TERM too
WHY=""
mps_start() {  # returns 1, WHY saying why, when MPS cannot limit a client here
  if [ "${MPS:-1}" = 0 ]; then WHY="MPS=0"; return 1; fi
  command -v nvidia-cuda-mps-control > /dev/null || { WHY="nvidia-cuda-mps-control not found"; return 1; }
  rm -rf "$MPS_DIR"
  mkdir -p "$MPS_DIR/pipe" "$MPS_DIR/log"
  export CUDA_MPS_PIPE_DIRECTORY=$MPS_DIR/pipe CUDA_MPS_LOG_DIRECTORY=$MPS_DIR/log
  if ! nvidia-cuda-mps-control -d > "$OUT/mps-start.log" 2>&1; then
    unset CUDA_MPS_PIPE_DIRECTORY CUDA_MPS_LOG_DIRECTORY
    WHY="nvidia-cuda-mps-control -d failed: $(tail -1 "$OUT/mps-start.log")"
    return 1
  fi
  MPS_STARTED=1
  # A client at the slow limit must compute (a client that cannot reach the server fails its first CUDA call).
  if ! CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=$SLOW_PCT timeout 60 "$PY" -c '
import torch
x = torch.ones(2048, 2048, device="cuda")
print("MPS client ok:", float((x @ x).sum()))' >> "$OUT/mps-start.log" 2>&1; then
    WHY="an MPS client at $SLOW_PCT% failed: $(tail -1 "$OUT/mps-start.log")"
    tail -n 5 "$MPS_DIR"/log/*.log >> "$OUT/mps-start.log" 2>/dev/null || true
    mps_stop
    return 1
  fi
}
[ "$DEV" = cpu ] && MPS=0
if mps_start; then
  MODE=mps
  echo "gpu_hetero: MPS started: worker 0 at $FAST_PCT% of the SMs, worker 1 at $SLOW_PCT%" >&2
  gpu_begin "$OUT" hetero "mode=mps" "limits=${FAST_PCT}%,${SLOW_PCT}% of the SMs (CUDA_MPS_ACTIVE_THREAD_PERCENTAGE)"
else
  MODE=paced
  echo "gpu_hetero: MPS unusable ($WHY): pacing instead, --slowdown 1,$SLOWDOWN (balancenet's emulation flag)" >&2
  gpu_begin "$OUT" hetero "mode=paced (--slowdown 1,$SLOWDOWN)" "why=MPS unusable: $WHY"
fi
echo "steps=$STEPS, warm-up $WARMUP; DDP: gloo, both ranks on cuda:0, images preloaded" >> "$OUT/meta.txt"

# --- the systems ---------------------------------------------------------------------------------------------
# bn_pair LOG RUN POLICY ARGS...: two workers on cuda:0, worker 1 the limited one.
bn_pair() {
  local log=$1 run=$2 policy=$3
  shift 3
  if [ "$MODE" = mps ]; then
    bn_ranks "$log" "$run" 2 "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=$FAST_PCT" "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=$SLOW_PCT" \
      -- --devices "$DEV,$DEV" --policy "$policy" "$@"
  else
    bn_launch "$log" "$run" --workers 2 --devices "$DEV,$DEV" --slowdown "1,$SLOWDOWN" --policy "$policy" "$@"
  fi
}
# bn_alone LOG RUN fast|slow ARGS...: one worker on cuda:0 at that worker's limit, the whole global batch.
bn_alone() {
  local log=$1 run=$2 which=$3
  shift 3
  if [ "$MODE" = mps ]; then
    local pct=$FAST_PCT
    [ "$which" = slow ] && pct=$SLOW_PCT
    bn_ranks "$log" "$run" 1 "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=$pct" -- --devices "$DEV" "$@"
  elif [ "$which" = slow ]; then
    bn_launch "$log" "$run" --workers 1 --devices "$DEV" --slowdown "$SLOWDOWN" "$@"
  else
    bn_launch "$log" "$run" --workers 1 --devices "$DEV" "$@"
  fi
}
# run_ddp's runner: rank r here, with its MPS percentage, under RUN_TIMEOUT.
# shellcheck disable=SC2317  # called by run_peers
on_this_gpu() {
  local r=$1 pct=$FAST_PCT
  shift
  [ "$r" = 1 ] && pct=$SLOW_PCT
  [ "$MODE" = mps ] && export CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=$pct
  LOCAL_RANK=$r LOCAL_WORLD_SIZE=2 exec timeout --foreground -k 5 "$RUN_TIMEOUT" "$@"
}

# measure MODEL SYSTEM: one run; prints its samples/s.
measure() {
  local model=$1 system=$2 log=$OUT/$1-$2.log run=$OUT/$1-$2
  case $system in
    balanced | equal) bn_pair "$log" "$run" "$system" "${bn_args[@]}" ;;
    alone-fast) bn_alone "$log" "$run" fast "${bn_args[@]}" ;;
    alone-slow) bn_alone "$log" "$run" slow "${bn_args[@]}" ;;
    ddp)
      local pace=()
      [ "$MODE" = paced ] && pace=(--slowdown "1,$SLOWDOWN")
      if ! run_ddp on_this_gpu 2 127.0.0.1 "$(free_port)" "$run.json" --device "${DEV%%:*}" --backend gloo "${ddp_args[@]}" \
          "${pace[@]}" > "$log" 2>&1; then
        show_tail "$log"
        return 1
      fi
      "$PY" bench/gpu_summary.py ddp-rate "$run.json" "$WARMUP"
      return ;;
  esac || return 1
  bn_rate "$run" "$WARMUP"
}

FAILED=0
for model in $MODELS; do
  case $model in
    resnet18)
      DIR=$OUT/fashion-folder
      gpu_image_folder "$DIR" "$LIMIT" || { gpu_result "$OUT" "$model" all failed "no image folder"; FAILED=1; continue; }
      bn_args=(--model resnet18 --data "imagefolder:$DIR" --image-size "$SIZE" --global-batch "$RN_BATCH"
               --steps "$STEPS" --lr 0.05 --momentum 0.9)
      ddp_args=(--model resnet18 --data "imagefolder:$DIR" --image-size "$SIZE" --preload --global-batch "$RN_BATCH"
                --steps "$STEPS" --lr 0.05 --momentum 0.9) ;;
    gpt)
      TEXT=$OUT/fortunes.txt
      (gpu_text "$TEXT") || { gpu_result "$OUT" "$model" all failed "no fortunes text"; FAILED=1; continue; }
      bn_args=(--model gpt --data "text:$TEXT" --val-fraction 0.002 --layers "$LAYERS" --heads "$HEADS"
               --embed "$EMBED" --context "$CONTEXT" --global-batch "$GPT_BATCH" --steps "$STEPS" --optimizer adam --lr 1e-3)
      ddp_args=(--model gpt --data "text:$TEXT" --layers "$LAYERS" --heads "$HEADS" --embed "$EMBED"
                --context "$CONTEXT" --global-batch "$GPT_BATCH" --steps "$STEPS" --optimizer adam --lr 1e-3) ;;
    *) echo "gpu_hetero: unknown model $model (resnet18, gpt)" >&2; exit 2 ;;
  esac
  gpu_systems "$OUT" "$model" gpu_hetero balanced ddp alone-fast alone-slow equal
done
mps_stop
"$PY" bench/gpu_summary.py bench "$OUT" | tee "$OUT/table.md"
exit $FAILED
