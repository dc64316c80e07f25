#!/usr/bin/env bash
# Issue 5's communication benchmark: for each model and network, one `balancenet compare` run with
# every communication mode side by side (weight-update time, exposed sync time, bytes per step).
# Usage: bench/comm_modes.sh [out-dir] [steps] [models] [networks]
#   models:   comma list (default cnn,alexnet,vgg16; alexnet and vgg16 at compare's width 0.25)
#   networks: loopback slow (default both); slow = 2 ms latency and 400 Mbit/s per node, emulated
#   GLOBAL_BATCH (environment, default 32): samples per step over the 4 nodes
# Modes: no-overlap and overlapped bucketed all-reduce, hybrid (SFB for FC layers where it moves fewer
# bytes), parameter servers synchronous (BSP) and stale-synchronous (SSP, staleness 2).
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${1:-runs/comm-modes}
STEPS=${2:-40}
MODELS=${3:-cnn,alexnet,vgg16}
NETWORKS=${4:-loopback slow}
GLOBAL_BATCH=${GLOBAL_BATCH:-32}
BN=build/apps/balancenet
# 4 nodes, 8 samples each by default: small per-node batches, where Poseidon's hybrid choice matters. Buckets of
# 1 MB: the scaled models hold 1-6 MB of gradients, so DDP's 25 MB would make one bucket of everything.
COMMON=(--models "$MODELS" --policies equal --steps "$STEPS" --eval-every 0 --nodes 4 --global-batch "$GLOBAL_BATCH"
        --threads 1 --bucket-mb 1 --dropout 0 --target-accuracy 0.5)
VARIANTS=(--variant "no-overlap=--comm allreduce --no-overlap"
          --variant "overlap=--comm allreduce"
          --variant "hybrid=--comm hybrid"
          --variant "ps-bsp=--comm ps --ps 2"
          --variant "ps-ssp=--comm ps --ps 2 --staleness 2")
for net in $NETWORKS; do
  case $net in
    loopback) NETFLAGS=() ;;
    slow) NETFLAGS=(--net-delay-ms 2,2,2,2 --net-bandwidth-mbps 400,400,400,400) ;;
    *) echo "unknown network $net (loopback, slow)" >&2; exit 2 ;;
  esac
  "$BN" compare "${COMMON[@]}" "${VARIANTS[@]}" "${NETFLAGS[@]}" --out "$OUT/$net"
done
