#!/usr/bin/env bash
# Pipeline parallelism against data parallelism on 4 workers of this machine (issue 16): per model, one
# data-parallel run (`--policy equal`) and one pipelined run per schedule and micro-batch count
# (`--pipeline-stages 4 --schedule gpipe|1f1b --micro-batches M`), all with the same global batch, steps,
# data, SGD settings and one thread per worker. The pipelined runs also write pipeline.csv; each of them gets
# `balancenet report`'s page (report.html, with the schedule's picture) in its run directory.
# Usage: bench/pipeline_vs_dp.sh [out-dir] [model...]   models: vgg16 resnet18 (default: both)
#   SYSTEMS="..."  run only these of dp gpipe 1f1b (default: all; a second call with the same out-dir adds
#                  runs to the table, which shows every run found there)
#   MICROS="..."   micro-batch counts of the pipelined runs (default: 4 8 16)
#   BATCH=n        global batch (default 128: a multiple of every M; at M = 16 a micro-batch has 8 samples)
#   STEPS=n        steps of every run (default 30; the first, the warm-up, is left out of samples/s)
#   QUICK=1        a smoke run: 3 steps, M = 4 only (about 2 minutes)
#   RUN_TIMEOUT=s  a run still going after s seconds fails (default 600)
# Every run evaluates once, at the end, on the first 1000 test images (accuracy is not what is measured).
# Results: OUT/<model>/<run>/ (run directories), OUT/pipeline_vs_dp.csv and OUT/pipeline_vs_dp.md (the
# table: samples/s, measured and analytical bubble, largest worker's peak memory, stage 0's activations).
# Time: a data-parallel run of 6 steps took 21 s (vgg16) and 22 s (resnet18) here, about 15 s of it start-up
# and the final evaluation, with the machine 4 times oversubscribed by other builds; counting a pipelined
# step at up to 3 times a data-parallel one, the 14 runs of the defaults take at most about 25 minutes.
# Exit 2 on bad input, 1 when a run fails (the message names its log).
set -euo pipefail
cd "$(dirname "$0")/.."
overrides="" # the command line to repeat this run, for the results
for v in SYSTEMS MICROS BATCH STEPS QUICK RUN_TIMEOUT; do
  [ -z "${!v:-}" ] || overrides+="$v=$(printf %q "${!v}") "
done
command="${overrides}bench/pipeline_vs_dp.sh $*"
for v in BATCH STEPS RUN_TIMEOUT; do
  [ -z "${!v:-}" ] || [[ ${!v} =~ ^[1-9][0-9]*$ ]] ||
    { echo "pipeline_vs_dp: error: $v must be a positive whole number, not '${!v}'" >&2; exit 2; }
done
OUT=${1:-runs/pipeline-vs-dp/$(date +%Y%m%d-%H%M%S)}
shift $(($# > 0 ? 1 : 0))
MODELS=${*:-vgg16 resnet18}
. bench/lib/peers.sh   # PY
. bench/lib/testset.sh # make_data
BN=build/apps/balancenet
WORKERS=4
STAGES=4
WARMUP=1 # steps left out of samples/s (one-time allocations, the first micro-batches' buffers)
ALL_SYSTEMS="dp gpipe 1f1b"
SYSTEMS=${SYSTEMS:-$ALL_SYSTEMS}
MICROS=${MICROS:-4 8 16}
BATCH=${BATCH:-128}
STEPS=${STEPS:-30}
RUN_TIMEOUT=${RUN_TIMEOUT:-600}
if [ "${QUICK:-0}" = 1 ]; then
  STEPS=3
  MICROS=4
fi

# name -> the width it trains at: small enough for the 2-core machine (a data-parallel step of B = 128 takes
# about a second at either width 0.5 here).
width() {
  case $1 in
    vgg16) echo 0.5 ;;
    resnet18) echo 0.5 ;;
    *) echo "pipeline_vs_dp: error: unknown model '$1' (vgg16 resnet18)" >&2; exit 2 ;;
  esac
}

[ -x "$BN" ] || { echo "pipeline_vs_dp: error: $BN not built (cmake --build build --target balancenet)" >&2; exit 2; }
for m in $MODELS; do width "$m" > /dev/null; done # an unknown name fails here, before any run
for system in $SYSTEMS; do
  [[ " $ALL_SYSTEMS " == *" $system "* ]] ||
    { echo "pipeline_vs_dp: error: unknown system '$system' in SYSTEMS ($ALL_SYSTEMS)" >&2; exit 2; }
done
for m in $MICROS; do
  [[ $m =~ ^[1-9][0-9]*$ ]] && ((BATCH % m == 0)) ||
    { echo "pipeline_vs_dp: error: MICROS: '$m' is not a positive divisor of BATCH=$BATCH" >&2; exit 2; }
done

# run NAME DIR FLAGS...: one `balancenet train` on WORKERS local workers, its log beside DIR.
run() {
  local name=$1 dir=$2 rc=0
  shift 2
  rm -rf "$dir" "$dir.log"
  mkdir -p "$(dirname "$dir")"
  echo "pipeline_vs_dp: $name ($(uptime | sed 's/.*load/load/'))" >&2
  local start=$SECONDS
  timeout -k 10 "$RUN_TIMEOUT" "$BN" train --nodes "$WORKERS" --threads 1 --progress-seconds 0 --log-level warn \
    --global-batch "$BATCH" --steps "$STEPS" --eval-every 0 --data-dir "$OUT/data" --run-dir "$dir" "$@" \
    > "$dir.log" 2>&1 || rc=$?
  local why=""
  ((rc != 124)) || why=": over RUN_TIMEOUT=${RUN_TIMEOUT}s"
  ((rc == 0)) || { echo "pipeline_vs_dp: error: $name failed (exit $rc$why), see $dir.log" >&2; exit 1; }
  echo "pipeline_vs_dp: $name took $((SECONDS - start)) s" >&2
}

mkdir -p "$OUT"
make_data "$OUT/data" 1000 || { echo "pipeline_vs_dp: error: could not write the test set into $OUT/data" >&2; exit 1; }
touch "$OUT/runs.txt"
for model in $MODELS; do
  w=$(width "$model")
  for system in $SYSTEMS; do
    if [ "$system" = dp ]; then
      run "$model dp" "$OUT/$model/dp" --model "$model" --width "$w" --policy equal
      echo "$model $w dp - $model/dp" >> "$OUT/runs.txt"
      continue
    fi
    for m in $MICROS; do
      dir=$OUT/$model/$system-m$m
      run "$model $system M=$m" "$dir" --model "$model" --width "$w" --policy equal \
        --pipeline-stages "$STAGES" --schedule "$system" --micro-batches "$m"
      echo "$model $w $system $m $model/$system-m$m" >> "$OUT/runs.txt"
      if [ -f "$dir/pipeline.csv" ]; then
        "$BN" report "$dir" --out "$dir/report.html" 2> "$dir.report.log" ||
          { echo "pipeline_vs_dp: error: balancenet report failed, see $dir.report.log" >&2; exit 1; }
      fi
    done
  done
done
# runs.txt holds a line per run ever made in OUT (a run made again repeats its line): the last one counts.
"$PY" bench/pipeline_vs_dp_summary.py "$OUT" "$WARMUP" "$STAGES" | tee "$OUT/pipeline_vs_dp.md"
echo "$command" > "$OUT/command.txt"
echo "pipeline_vs_dp: rows in $OUT/pipeline_vs_dp.csv, table in $OUT/pipeline_vs_dp.md; command: $command" >&2
