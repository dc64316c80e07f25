#!/usr/bin/env bash
# Time to accuracy with an adaptive global batch (issue 32): cnn on Fashion-MNIST, H1 (4 workers paced at
# 100,100,100,25 samples/s), each system until the test accuracy (the first TEST test images, every few
# steps) reaches TARGET or BUDGET seconds of training pass:
#   auto         --global-batch auto (from 128, the B --lr is set for, up to 4096; AdaScale lr), balanced split
#   auto-equal   the same with --policy equal: Pollux's setting, every worker the same share
#   fixed-B      --global-batch B with the balanced split, lr scaled linearly from 128 (Goyal et al.), for B in BATCHES
# Usage: bench/adaptive_batch.sh [OUT] [system...]   (default: auto fixed-128 auto-equal fixed-64 fixed-256 fixed-512)
#   SEEDS="1 2 3"  seeds (data order and weights)      TARGET=0.88   BUDGET=s  per run (default 600)
#   TEST=n         test images evaluated (default 2000)  LR=x  SGD step at B=128 (default 0.05, momentum 0.9)
#   EVAL_SAMPLES=n evaluate about every n samples at the starting B (default 1280)   FLAGS="..." more train flags
# Results: OUT/<system>-s<seed>/ (run directories), OUT/<system>-s<seed>.log, OUT/adaptive_batch.md (medians and
# spreads over seeds, the ratios the issue's targets ask for), OUT/adaptive_batch.json. Exit 2 on bad input, 1 when
# a run failed (the others still run).
set -euo pipefail
cd "$(dirname "$0")/.."
VARS="SEEDS TARGET BUDGET TEST LR EVAL_SAMPLES FLAGS"
overrides=""
for v in $VARS; do
  [ -z "${!v:-}" ] || overrides+="$v=$(printf %q "${!v}") "
done
command="${overrides}bench/adaptive_batch.sh $*"
SEEDS=${SEEDS:-1 2 3}
TARGET=${TARGET:-0.88}
BUDGET=${BUDGET:-600}
TEST=${TEST:-2000}
LR=${LR:-0.05}
EVAL_SAMPLES=${EVAL_SAMPLES:-1280}
read -r -a EXTRA <<< "${FLAGS:-}"
for v in BUDGET TEST EVAL_SAMPLES; do
  [[ ${!v} =~ ^[1-9][0-9]*$ ]] || { echo "adaptive_batch: error: $v must be a positive whole number, not '${!v}'" >&2; exit 2; }
done
for s in $SEEDS; do
  [[ $s =~ ^[0-9]+$ ]] || { echo "adaptive_batch: error: SEEDS must be whole numbers, not '$s'" >&2; exit 2; }
done
OUT=${1:-runs/adaptive-batch/$(date +%Y%m%d-%H%M%S)}
shift $(($# > 0 ? 1 : 0))
SYSTEMS=${*:-auto fixed-128 auto-equal fixed-64 fixed-256 fixed-512}
for s in $SYSTEMS; do
  [[ $s =~ ^(auto|auto-equal|fixed-[1-9][0-9]*)$ ]] ||
    { echo "adaptive_batch: error: unknown system '$s' (auto, auto-equal, fixed-B)" >&2; exit 2; }
done
. bench/lib/peers.sh   # PY
. bench/lib/testset.sh # make_data
BN=build/apps/balancenet
[ -x "$BN" ] || { echo "adaptive_batch: error: $BN not built (cmake --build build --target balancenet)" >&2; exit 2; }

COMMON=(--workers 4 --node-speed 100,100,100,25 --model cnn --momentum 0.9 --steps 1000000
  --stop-at-accuracy "$TARGET" --time-budget-s "$BUDGET" --progress-seconds 30)

# flags SYSTEM: B, policy, learning rate and evaluation cadence of one system (evaluations every EVAL_SAMPLES
# samples at the starting B; they are not counted as training time).
flags() {
  local every
  case $1 in
    auto) every=$(( (EVAL_SAMPLES + 127) / 128 ))
      echo --global-batch auto --lr "$LR" --eval-every "$every" ;;
    auto-equal) every=$(( (EVAL_SAMPLES + 127) / 128 ))
      echo --global-batch auto --policy equal --lr "$LR" --eval-every "$every" ;;
    fixed-*) local b=${1#fixed-}
      every=$(( (EVAL_SAMPLES + b - 1) / b ))
      echo --global-batch "$b" --lr "$("$PY" -c "print($LR * $b / 128)")" --eval-every "$every" ;;
  esac
}

failed=0
mkdir -p "$OUT"
: > "$OUT/runs.txt"
make_data "$OUT/data" "$TEST" "adaptive_batch: error: TEST" || exit 2
for seed in $SEEDS; do
  for s in $SYSTEMS; do
    dir=$OUT/$s-s$seed
    rm -rf "$dir" "$dir.log"
    echo "adaptive_batch: $s seed $seed ($(uptime | sed 's/.*load/load/'))" >&2
    start=$SECONDS rc=0
    # shellcheck disable=SC2046 # flags' words are meant to split
    timeout -k 10 $((BUDGET * 3 + 120)) "$BN" train "${COMMON[@]}" $(flags "$s") --seed "$seed" \
      --data-dir "$OUT/data" --run-dir "$dir" ${EXTRA[@]+"${EXTRA[@]}"} > "$dir.log" 2>&1 || rc=$?
    ((rc == 0)) || { echo "adaptive_batch: error: $s seed $seed failed (exit $rc), see $dir.log" >&2; failed=1; }
    echo "$s $seed $rc $((SECONDS - start))" >> "$OUT/runs.txt"
  done
done
"$PY" bench/adaptive_batch_summary.py "$OUT" "$TARGET" | tee "$OUT/adaptive_batch.md"
echo "$command" > "$OUT/command.txt"
echo "adaptive_batch: tables in $OUT/adaptive_batch.md; command: $command" >&2
exit $failed
