# Shared by the benchmarks that evaluate on part of Fashion-MNIST's test set (bench/testbed_vs_ddp.sh,
# bench/pipeline_vs_dp.sh): a data directory with the whole training set and the first N test images.
# Source it from the repository root, after bench/lib/peers.sh (for $PY).
FULL_DATA=/usr/share/datasets/fashion-mnist

# make_data DIR N [WHAT]: DIR gets links to the training set and the first N test images (IDX files, as
# MNIST's). WHAT starts the message when N is out of range (default "make_data: error: N").
make_data() {
  mkdir -p "$1"
  ln -sf "$(realpath "$FULL_DATA")"/train-* "$1/"
  "$PY" - "$FULL_DATA" "$1" "$2" "${3:-make_data: error: N}" <<'PYEOF'
import gzip, os, sys
src, dst, n, what = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
for name, item in (("t10k-images-idx3-ubyte", 28 * 28), ("t10k-labels-idx1-ubyte", 1)):
    with gzip.open(os.path.join(src, name + ".gz")) as f:
        data = f.read()
    dims = data[3]
    if not 0 < n <= int.from_bytes(data[4:8], "big"):
        sys.exit(f"{what} must be 1..{int.from_bytes(data[4:8], 'big')}, not {n}")
    header = bytearray(data[:4 + 4 * dims])
    header[4:8] = n.to_bytes(4, "big")
    with open(os.path.join(dst, name + ".tmp"), "wb") as f:
        f.write(bytes(header) + data[4 + 4 * dims:4 + 4 * dims + n * item])
    os.replace(os.path.join(dst, name + ".tmp"), os.path.join(dst, name))
PYEOF
}
