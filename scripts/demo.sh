#!/usr/bin/env bash
# Installs, builds the balancenet program and its Python package (scripts/test.sh also builds the tests), and
# trains the paper's CNN on Fashion-MNIST with 2 workers of unequal share.
# Extra arguments are passed to `balancenet train` (e.g. --steps 200).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_TESTS=OFF BUILD_BENCH=OFF scripts/setup.sh
exec build/apps/balancenet train --workers 2 --model cnn --global-batch 128 --split 80,48 \
  --steps 800 --lr 0.05 --momentum 0.9 --warmup-steps 50 --lr-decay cosine --eval-every 200 "$@"
