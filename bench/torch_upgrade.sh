#!/usr/bin/env bash
# Per-worker speed, old libtorch against new, in one run (docs/results.md, "Per-worker speed"): two balancenet
# programs, OLD (built against Debian's libtorch 1.13 with OpenBLAS) and NEW (this tree, PyPI's torch with MKL
# and oneDNN), in alternating pairs on the same machine:
#   cnn (B=128), resnet18 (B=32, Fashion-MNIST's 28 pixels) and gpt (tokens of English text, B=16, context 128):
#   one worker, THREADS intra-op threads (default 2: the whole machine);
#   the demo (scripts/demo.sh's job: 2 workers, split 80,48), DEMO_STEPS steps.
# Usage: OLD=/path/to/old/balancenet bench/torch_upgrade.sh [out-dir]   (NEW defaults to build/apps/balancenet;
#        REPS pairs, default 3; STEPS per model run, default 30; DEMO_STEPS, default 100). ~12 min a pair on 2
#        cores, most of it resnet18's final evaluation (the 10,000 test images).
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${1:-runs/torch-upgrade/$(date +%Y%m%d-%H%M%S)}
OLD=${OLD:?OLD=path of the balancenet program built against the old libtorch}
NEW=${NEW:-build/apps/balancenet}
REPS=${REPS:-3}; STEPS=${STEPS:-30}; DEMO_STEPS=${DEMO_STEPS:-100}; THREADS=${THREADS:-2}
PY="${BALANCENET_PYTHON:-$PWD/.venv/bin/python}"
for b in "$OLD" "$NEW"; do [ -x "$b" ] || { echo "torch_upgrade: $b is not built" >&2; exit 2; }; done
mkdir -p "$OUT"
"$PY" examples/fortunes_to_text.py "$OUT/fortunes.txt" > /dev/null

run() {  # side name flags...
  local side=$1 name=$2 bin
  shift 2
  [ "$side" = old ] && bin=$OLD || bin=$NEW
  rm -rf "$OUT/$side-$name"
  "$bin" train --progress-seconds 0 --log-level warn --eval-every 0 --run-dir "$OUT/$side-$name" "$@" \
    > "$OUT/$side-$name.log" 2>&1 || { echo "torch_upgrade: $side $name failed, see $OUT/$side-$name.log" >&2; exit 1; }
}

one=(--workers 1 --threads "$THREADS" --steps "$STEPS")
for ((i = 1; i <= REPS; i++)); do
  echo "torch_upgrade: pair $i/$REPS ($(uptime | sed 's/.*load/load/'))" >&2
  for side in old new; do
    run "$side" "cnn-$i" "${one[@]}" --model cnn --global-batch 128
    run "$side" "resnet18-$i" "${one[@]}" --model resnet18 --global-batch 32
    run "$side" "gpt-$i" "${one[@]}" --model gpt --data "text:$OUT/fortunes.txt" --context 128 --layers 4 \
      --heads 4 --embed 128 --global-batch 16 --optimizer adamw --lr 0.002
    run "$side" "demo-$i" --workers 2 --model cnn --global-batch 128 --split 80,48 --steps "$DEMO_STEPS" \
      --lr 0.05 --momentum 0.9
  done
done
"$PY" bench/torch_upgrade_summary.py "$OUT"
