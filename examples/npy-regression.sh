#!/usr/bin/env bash
# A regression from NumPy files: y = sin(x1) + x2^2 + noise (examples/make_regression_npy.py), an mlp
# trained with --loss mse on 2 workers. The final test mse is in $RUN_DIR/summary.json; the noise
# variance (0.01) is the least it can reach, the variance of y (about 2.0) what predicting the mean gives.
# Usage: examples/npy-regression.sh [train flags...]   (STEPS, ROWS, OUT, RUN_DIR, BALANCENET: see common.sh)
set -euo pipefail
source "$(dirname "$0")/common.sh"
STEPS=${STEPS:-1500}
[ -f "$OUT/Y.npy" ] || "$PYTHON" "$ROOT/examples/make_regression_npy.py" "$OUT" --rows "${ROWS:-20000}"
"$BALANCENET" train --data "npy:$OUT/X.npy,$OUT/Y.npy" --model mlp --loss mse --workers 2 --global-batch 128 \
  --optimizer adam --lr 0.003 --warmup-steps 50 --lr-decay cosine --lr-min 0.0001 --steps "$STEPS" \
  --eval-every 500 --run-dir "$RUN_DIR" "$@"
