#!/usr/bin/env bash
# resnet18 on a Fashion-MNIST image folder (examples/fashion_mnist_to_imagefolder.py --limit), 2 workers, one
# slowed 3x (--slowdown 1,3): balancenet --policy balanced and --policy equal against PyTorch DDP
# (bench/ddp_peer.py --model resnet18 --data imagefolder:DIR: torchvision's ImageFolder and transforms), the
# same data, sample order, augmentation (crop with padding 4, flip), global batch, SGD, one thread per worker.
# Usage: bench/resnet_imagefolder.sh [out-dir]   LIMIT (500 images per split), BATCH (16), STEPS (15),
#        SIZE (28), REPS (1) override. samples/s over the steps after the first WARMUP (2) of each run.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${1:-runs/resnet-imagefolder/$(date +%Y%m%d-%H%M%S)}
. bench/lib/peers.sh  # PY, require_torch, free_port, run_ddp
. bench/lib/rates.sh  # step_rate, ddp_rate, load1, rate_table
LIMIT=${LIMIT:-500} BATCH=${BATCH:-16} STEPS=${STEPS:-15} SIZE=${SIZE:-28} REPS=${REPS:-1} WARMUP=2
BN=build/apps/balancenet
require_torch resnet_imagefolder
[ -x "$BN" ] || { echo "resnet_imagefolder: $BN not built" >&2; exit 2; }
mkdir -p "$OUT"
DIR=$OUT/fashion-folder
[ -d "$DIR/train" ] || "$PY" examples/fashion_mnist_to_imagefolder.py "$DIR" --limit "$LIMIT" > "$OUT/convert.log"
on_this_machine() { # run_ddp's runner: every DDP rank here, over loopback
  local r=$1
  shift
  LOCAL_RANK=$r LOCAL_WORLD_SIZE=2 exec "$@"
}
common=(--global-batch "$BATCH" --steps "$STEPS" --slowdown 1,3 --lr 0.05 --momentum 0.9)
data=(--data "imagefolder:$DIR" --image-size "$SIZE" --augment crop,flip)
begin_results "$OUT" "$0" "$@" "LIMIT=$LIMIT" "BATCH=$BATCH" "STEPS=$STEPS" "SIZE=$SIZE"
for ((i = 1; i <= REPS; i++)); do
  for system in balanced equal ddp; do
    before=$(load1)
    if [ "$system" = ddp ]; then
      run_ddp on_this_machine 2 127.0.0.1 "$(free_port)" "$OUT/ddp-$i.json" --model resnet18 "${data[@]}" \
        "${common[@]}" > "$OUT/ddp-$i.log" 2>&1 || { echo "resnet_imagefolder: DDP failed, see $OUT/ddp-$i.log" >&2; exit 1; }
      rate=$(ddp_rate "$OUT/ddp-$i.json" "$WARMUP")
    else
      rm -rf "$OUT/$system-$i"
      "$BN" train --nodes 2 --threads 1 --policy "$system" --model resnet18 "${data[@]}" "${common[@]}" \
        --progress-seconds 0 --log-level warn --run-dir "$OUT/$system-$i" > "$OUT/$system-$i.log" 2>&1 \
        || { echo "resnet_imagefolder: $system failed, see $OUT/$system-$i.log" >&2; exit 1; }
      rate=$(step_rate "$OUT/$system-$i" "$WARMUP")
    fi
    echo "$system $i $rate $before $(load1)" | tee -a "$OUT/results.txt" >&2
  done
done
rate_table "$OUT/results.txt" samples/s balanced/ddp balanced/equal equal/ddp | tee "$OUT/table.md"
