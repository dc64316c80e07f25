#!/usr/bin/env bash
# --precision fp32, bf16 and fp16 on this CPU (issue 54): one worker's samples/s of `balancenet train` against
# PyTorch's own loop on the same model (bench/ddp_peer.py --precision: torch.autocast, GradScaler for fp16), back
# to back for each precision, with the machine's CPU named; then the low types' ratio to fp32 on each side.
# Usage: bench/precision_vs_torch.sh [out-dir]
#   STEPS=n       steps of fp32 and bf16 (default 40); FP16_STEPS=n fp16's (default 6: torch's CPU convolutions in
#                 fp16 are slow); WARMUP=n steps left out of samples/s on both sides (default 1)
#   THREADS=n     intra-op threads on both sides (default 2); MODEL (cnn; the peer has cnn and resnet18)
#   REPS=n        back-to-back pairs per precision (default 2), means reported
# Exit 77 (a skip, for CTest) when the project's Python (.venv/) has no torch. Results: docs/benchmarks.md.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${1:-runs/precision/$(date +%Y%m%d-%H%M%S)}
. bench/lib/peers.sh  # PY, require_torch, free_port, run_ddp
. bench/lib/rates.sh  # step_rate, ddp_rate, load1, rate_table, begin_results
BN=build/apps/balancenet
STEPS=${STEPS:-40}; FP16_STEPS=${FP16_STEPS:-6}; WARMUP=${WARMUP:-1}; THREADS=${THREADS:-2}; MODEL=${MODEL:-cnn}
REPS=${REPS:-2}
require_torch precision_vs_torch
[ -x "$BN" ] || { echo "precision_vs_torch: $BN not built (cmake --build build --target balancenet)" >&2; exit 2; }
mkdir -p "$OUT"
begin_results "$OUT" "$0 $* STEPS=$STEPS FP16_STEPS=$FP16_STEPS WARMUP=$WARMUP THREADS=$THREADS MODEL=$MODEL REPS=$REPS"
lscpu | sed -n 's/^Model name: *//p' > "$OUT/cpu.txt"
grep -o -w 'avx2\|avx512f\|avx512_bf16\|avx512_fp16\|amx_bf16' /proc/cpuinfo | sort -u | tr '\n' ' ' >> "$OUT/cpu.txt"

one_rank() {  # run_ddp's runner: everything here
  local r=$1
  shift
  LOCAL_RANK=$r LOCAL_WORLD_SIZE=1 exec "$@"
}

for precision in fp32 bf16 fp16; do
  steps=$STEPS
  [ "$precision" = fp16 ] && steps=$FP16_STEPS
  common=(--global-batch 128 --steps "$steps" --threads "$THREADS" --precision "$precision")
  for ((i = 1; i <= REPS; i++)); do
    echo "precision_vs_torch: $precision pair $i/$REPS ($(uptime | sed 's/.*load/load/'))" >&2
    before=$(load1)
    rm -rf "$OUT/$precision-bn-$i"
    "$BN" train --workers 1 --model "$MODEL" --eval-samples 0 --progress-seconds 0 --log-level warn \
      --run-dir "$OUT/$precision-bn-$i" "${common[@]}" > "$OUT/$precision-bn-$i.log" 2>&1 \
      || { echo "precision_vs_torch: balancenet failed, see $OUT/$precision-bn-$i.log" >&2; exit 1; }
    echo "balancenet-$precision $i $(step_rate "$OUT/$precision-bn-$i" "$WARMUP") $before $(load1)" >> "$OUT/results.txt"
    before=$(load1)
    run_ddp one_rank 1 127.0.0.1 "$(free_port)" "$OUT/$precision-torch-$i.json" --model "$MODEL" "${common[@]}" \
      > "$OUT/$precision-torch-$i.log" 2>&1 \
      || { echo "precision_vs_torch: PyTorch failed, see $OUT/$precision-torch-$i.log" >&2; exit 1; }
    echo "pytorch-$precision $i $(ddp_rate "$OUT/$precision-torch-$i.json" "$WARMUP") $before $(load1)" >> "$OUT/results.txt"
  done
done
{
  echo "CPU: $(cat "$OUT/cpu.txt")"
  echo
  rate_table "$OUT/results.txt" "samples/s" balancenet-fp32/pytorch-fp32 balancenet-bf16/pytorch-bf16 \
    balancenet-fp16/pytorch-fp16 balancenet-bf16/balancenet-fp32 pytorch-bf16/pytorch-fp32 \
    balancenet-fp16/balancenet-fp32 pytorch-fp16/pytorch-fp32
} | tee "$OUT/table.md"
