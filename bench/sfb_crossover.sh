#!/usr/bin/env bash
# Per fully connected layer, bytes per node and step of all-reduce vs sufficient factors (SFB) at per-node
# batch K, from one-step runs of the real binary on 4 nodes (docs/communication.md, "Sufficient factors").
# Usage: bench/sfb_crossover.sh [out-dir] [model...]   (default models: alexnet vgg16, --width 0.25)
# Each run: --comm hybrid --explain-comm (the decision table) and the run's layers.csv (what was counted).
# The data is the first 512 training and 64 test images of Fashion-MNIST, so a run takes seconds.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${1:-runs/sfb-crossover}
shift $(( $# > 1 ? 1 : $# )) || true
MODELS=${*:-alexnet vgg16}
BN=build/apps/balancenet
NODES=4
mkdir -p "$OUT/data"
python3 - "$OUT/data" <<'PY'
import gzip, struct, sys
src, dst = "/usr/share/datasets/fashion-mnist", sys.argv[1]
for prefix, n in (("train", 512), ("t10k", 64)):
    for kind, item in (("images-idx3-ubyte", 784), ("labels-idx1-ubyte", 1)):
        raw = gzip.open(f"{src}/{prefix}-{kind}.gz").read()
        dims = raw[3]
        header = bytearray(raw[:4 + 4 * dims])
        header[4:8] = struct.pack(">I", n)
        open(f"{dst}/{prefix}-{kind}", "wb").write(bytes(header) + raw[4 + 4 * dims:4 + 4 * dims + n * item])
PY
for model in $MODELS; do
  for k in 1 2 4 8 16 32 64; do
    run="$OUT/$model-k$k"
    echo "== $model, $NODES nodes, per-node batch K=$k"
    table=$("$BN" train --nodes "$NODES" --model "$model" --width 0.25 --global-batch $((NODES * k)) \
      --policy equal --steps 1 --comm hybrid --explain-comm --progress-seconds 0 --threads 1 \
      --data-dir "$OUT/data" --run-dir "$run" 2>&1 | sed -n 's/^\[rank 0\]   \(layer\)/\1/p')
    echo "$table"
    echo "   measured for the chosen method (layers.csv, step 0, rank 0, sent + received):"
    fc=$(echo "$table" | awk 'NR > 1 { printf "%s ", $1 }')
    awk -F, -v fc=" $fc" '$1 == 0 && $2 == 0 && index(fc, " " $3 " ") {
      printf "   %-12s %-10s %d\n", $3, $4, $5 + $6 }' \
      "$run/layers.csv"
  done
done
