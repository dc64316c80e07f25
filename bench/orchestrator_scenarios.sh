#!/usr/bin/env bash
# The orchestrator issue's scenarios (docs/results.md), each as one `balancenet compare` run.
# Usage: bench/orchestrator_scenarios.sh [out-dir] [steps] [scenario...]
#   scenarios: h1 h1-bno h1-bnon h1r h1r-homo h2 homo (default: all, about an hour on 2 cores)
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${1:-runs/scenarios}
STEPS=${2:-200}
shift $(( $# > 2 ? 2 : $# )) || true
SCENARIOS=${*:-h1 h1-bno h1-bnon h1r h1r-homo h2 homo}
BN=build/apps/balancenet
COMMON=(--models cnn --steps "$STEPS" --eval-every 50 --threads 1 --target-accuracy 0.75)
for s in $SCENARIOS; do
  case $s in
    h1)   "$BN" compare "${COMMON[@]}" --policies equal,random,proportional,balanced --out "$OUT/h1" \
            --nodes 4 --node-speed 100,100,100,25 --global-batch 128 ;;
    # The paper's formula: raw (its effective global batch is several times B, so fewer steps) and normalised.
    h1-bno) "$BN" compare "${COMMON[@]}" --steps 40 --eval-every 20 --policies bno --out "$OUT/h1-bno" \
            --nodes 4 --node-speed 100,100,100,25 --global-batch 128 ;;
    h1-bnon) "$BN" compare "${COMMON[@]}" --policies bno --bno-normalize --out "$OUT/h1-bnon" \
            --nodes 4 --node-speed 100,100,100,25 --global-batch 128 ;;
    h1r)  "$BN" compare "${COMMON[@]}" --policies equal,bno,proportional,balanced --out "$OUT/h1r" \
            --nodes 2 --slowdown 1,4 --global-batch 256 ;;
    h1r-homo) "$BN" compare "${COMMON[@]}" --policies equal --out "$OUT/h1r-homo" --nodes 2 --global-batch 256 ;;
    h2)   "$BN" compare "${COMMON[@]}" --steps 300 --policies equal,proportional,balanced --out "$OUT/h2" \
            --nodes 4 --node-speed 100,100,100,100 --speed-schedule '100=100,100,100,25;200=100,100,100,100' \
            --global-batch 128 ;;
    homo) "$BN" compare "${COMMON[@]}" --policies equal,balanced --out "$OUT/homo" \
            --nodes 4 --global-batch 128 ;;
    *) echo "unknown scenario $s" >&2; exit 2 ;;
  esac
done
