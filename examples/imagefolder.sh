#!/usr/bin/env bash
# An image folder of PNG files made from Debian's Fashion-MNIST (examples/fashion_mnist_to_imagefolder.py,
# the first LIMIT images of each split), read with imagefolder: and trained with a small resnet18 (--width
# 0.25) on 2 workers, with torchvision's training augmentation: a random crop with 4 pixels of padding and a
# horizontal flip, drawn per (epoch, sample) so that the split between workers does not change it.
# Usage: examples/imagefolder.sh [train flags...]   (STEPS, LIMIT, OUT, RUN_DIR, BALANCENET: see common.sh)
set -euo pipefail
source "$(dirname "$0")/common.sh"
STEPS=${STEPS:-600}
[ -d "$OUT/images/val" ] || "$PYTHON" "$ROOT/examples/fashion_mnist_to_imagefolder.py" "$OUT/images" --limit "${LIMIT:-10000}"
"$BALANCENET" train --data "imagefolder:$OUT/images" --image-size 28 --augment crop,flip --model resnet18 --width 0.25 \
  --workers 2 --global-batch 64 --lr 0.05 --momentum 0.9 --warmup-steps 50 --lr-decay cosine \
  --steps "$STEPS" --eval-every 200 --run-dir "$RUN_DIR" "$@"
