#!/usr/bin/env bash
# BLAS and the machine's peak, side by side in one run (docs/benchmarks.md, "BLAS and the machine's peak"):
#   1. cnn, one worker, one thread, B=128: Debian's reference BLAS against the optimised one balancenet's
#      binaries load (OpenBLAS, by their RPATH), in alternating pairs;
#   2. balancenet's single-worker step against PyTorch's own (bench/ddp_peer.py, world size 1: Debian's
#      python3-torch), same BLAS (OpenBLAS), one thread on both sides, in alternating pairs;
#   (with Debian's BLIS installed, libblis4-pthread, a third arm: BLIS, preloaded the same way;)
#   3. every zoo model at its default width, one worker, one thread: the achieved fraction of the
#      one-thread sgemm peak (summary.json's "workers").
# Usage: bench/blas.sh [out-dir]     REPS=n pairs (default 3), STEPS=n for 1 and 2 (default 60),
#        ZOO_STEPS=n and ZOO_BATCH=b for 3 (default 4 and 32). About 5 minutes on the 2-core machine.
# The reference BLAS is put in front by LD_PRELOAD (a preloaded libblas.so.3 satisfies libtorch's
# dependency by soname, before any RPATH): nothing on the system is switched.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${1:-runs/blas/$(date +%Y%m%d-%H%M%S)}
REPS=${REPS:-3}; STEPS=${STEPS:-60}; ZOO_STEPS=${ZOO_STEPS:-4}; ZOO_BATCH=${ZOO_BATCH:-32}
SOURCE_DATA=${DATA_DIR:-/usr/share/datasets/fashion-mnist}
PY=/usr/bin/python3   # Debian's python3-torch; a python earlier on PATH may have no torch
BN=build/apps/balancenet
LIB=/usr/lib/$(gcc -print-multiarch)
REFERENCE="$LIB/blas/libblas.so.3:$LIB/lapack/liblapack.so.3"
OPENBLAS="$LIB/openblas-pthread/libblas.so.3:$LIB/openblas-pthread/liblapack.so.3"
BLIS="$LIB/blis-pthread/libblas.so.3"
for f in ${REFERENCE//:/ } ${OPENBLAS//:/ }; do
  [ -e "$f" ] || { echo "blas: $f missing (apt-get install libblas3 liblapack3 libopenblas0-pthread)" >&2; exit 2; }
done
[ -x "$BN" ] || { echo "blas: $BN not built (cmake --build build --target balancenet)" >&2; exit 2; }
mkdir -p "$OUT"

# The runs' data: the training set, and the first 256 test images (a run always evaluates at its end; the
# full 10,000 would take resnet50 minutes, and evaluation is no part of the measured training time).
DATA=$OUT/data
mkdir -p "$DATA"
for f in train-images-idx3-ubyte.gz train-labels-idx1-ubyte.gz; do ln -sf "$SOURCE_DATA/$f" "$DATA/$f"; done
"$PY" - "$SOURCE_DATA" "$DATA" <<'PY'
import gzip, struct, sys
for name in ("t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"):
    data = gzip.open(f"{sys.argv[1]}/{name}.gz").read()
    dims = data[3]
    shape = list(struct.unpack(f">{dims}I", data[4:4 + 4 * dims]))
    item = 1
    for d in shape[1:]:
        item *= d
    shape[0] = 256
    header = data[:4] + struct.pack(f">{dims}I", *shape)
    open(f"{sys.argv[2]}/{name}", "wb").write(header + data[4 + 4 * dims:4 + 4 * dims + 256 * item])
PY

train() {  # run-dir preload args...
  local dir=$1 preload=$2
  shift 2
  rm -rf "$dir"
  LD_PRELOAD=$preload "$BN" train --nodes 1 --threads 1 --progress-seconds 0 --log-level warn --eval-every 0 \
    --data-dir "$DATA" --run-dir "$dir" "$@" > "$dir.log" 2>&1 || { echo "blas: balancenet failed, see $dir.log" >&2; exit 1; }
}

free_port() { "$PY" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

pytorch() {  # out.json args...  (one process: torchrun's environment set by hand, as bench/vs_ddp.sh does)
  local out=$1
  shift
  LD_PRELOAD=$OPENBLAS OPENBLAS_NUM_THREADS=1 RANK=0 LOCAL_RANK=0 WORLD_SIZE=1 LOCAL_WORLD_SIZE=1 \
    MASTER_ADDR=127.0.0.1 MASTER_PORT=$(free_port) "$PY" bench/ddp_peer.py --out "$out" "$@" > "$out.log" 2>&1 \
    || { echo "blas: PyTorch failed, see $out.log" >&2; exit 1; }
}

cnn=(--model cnn --global-batch 128 --steps "$STEPS")
for ((i = 1; i <= REPS; i++)); do
  echo "blas: pair $i/$REPS ($(uptime | sed 's/.*load/load/'))" >&2
  train "$OUT/reference-$i" "$REFERENCE" "${cnn[@]}"
  train "$OUT/openblas-$i" "" "${cnn[@]}"
  [ ! -e "$BLIS" ] || train "$OUT/blis-$i" "$BLIS" "${cnn[@]}"
  if "$PY" -c 'import torch.distributed' 2>/dev/null; then
    pytorch "$OUT/pytorch-$i.json" --global-batch 128 --steps "$STEPS" --data-dir "$DATA"
  fi
done
for model in $("$BN" models | awk 'NR > 1 && /^[a-z]/ {print $1}'); do
  echo "blas: zoo $model" >&2
  train "$OUT/zoo-$model" "" --model "$model" --global-batch "$ZOO_BATCH" --steps "$ZOO_STEPS"
done
"$PY" bench/blas_summary.py "$OUT"
