#!/usr/bin/env python3
"""Splits an MNIST-layout (IDX) data set into per-client directories by Dirichlet(alpha) over the labels.

Usage: federated_split.py SRC DST CLIENTS ALPHA SEED
  SRC: a directory with train-images-idx3-ubyte, train-labels-idx1-ubyte and t10k-* (each plain or .gz).
  DST/c<i>/ (i = 1..CLIENTS) gets the four IDX files `balancenet ... --data idx:DST/c<i>` reads: client i's
  training samples, and as its held-out (t10k) split a share of the test set with the same label
  proportions as its training share (federated evaluation on the client's own distribution).
For each label, shares q ~ Dirichlet(alpha x 1) over the clients (numpy, seeded) cut that label's samples,
train and test alike; drawn again (the next draw of the same generator) until every client has at least
MIN_TRAIN training samples and one test sample. A client may lack labels (alpha 0.1: most do): `federate join`
builds the server's model, whose output size is the server's class count, whatever labels its shard has.
Prints a markdown table of the label counts per client.
"""
import gzip
import os
import sys

import numpy as np

MIN_TRAIN = 64  # a client needs a few local batches; alpha 0.1 otherwise leaves some nearly empty
MAX_DRAWS = 1000


def read_idx(directory, name):
    for path in (os.path.join(directory, name), os.path.join(directory, name + ".gz")):
        if os.path.exists(path):
            opener = gzip.open if path.endswith(".gz") else open
            with opener(path, "rb") as f:
                data = f.read()
            dims = data[3]
            shape = [int.from_bytes(data[4 + 4 * d:8 + 4 * d], "big") for d in range(dims)]
            return np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * dims).reshape(shape)
    sys.exit(f"federated_split: error: no {name}(.gz) in {directory}")


def write_idx(path, array):
    """Unsigned bytes, as MNIST: magic 0x0000 08 <dims>, then each dimension as a big-endian uint32."""
    header = bytes([0, 0, 8, array.ndim]) + b"".join(int(d).to_bytes(4, "big") for d in array.shape)
    with open(path + ".tmp", "wb") as f:
        f.write(header + np.ascontiguousarray(array, dtype=np.uint8).tobytes())
    os.replace(path + ".tmp", path)  # a reader never sees half a file


def cut(labels, shares, classes, rng):
    """Per label: its samples (shuffled) cut at the cumulative shares. Returns each client's indices."""
    clients = shares.shape[1]
    out = [[] for _ in range(clients)]
    for k in range(classes):
        idx = rng.permutation(np.flatnonzero(labels == k))
        bounds = (np.cumsum(shares[k])[:-1] * len(idx)).astype(int)
        for c, part in enumerate(np.split(idx, bounds)):
            out[c].extend(part.tolist())
    return [np.sort(np.array(o, dtype=np.int64)) for o in out]


def main():
    if len(sys.argv) != 6:
        sys.exit(__doc__.split("\n\n")[1].split("\n")[0])
    src, dst = sys.argv[1], sys.argv[2]
    try:
        clients, alpha, seed = int(sys.argv[3]), float(sys.argv[4]), int(sys.argv[5])
    except ValueError:
        sys.exit("federated_split: error: CLIENTS and SEED must be whole numbers, ALPHA a number")
    if clients < 1 or not alpha > 0:
        sys.exit("federated_split: error: CLIENTS must be at least 1 and ALPHA positive")
    train_x, train_y = read_idx(src, "train-images-idx3-ubyte"), read_idx(src, "train-labels-idx1-ubyte")
    test_x, test_y = read_idx(src, "t10k-images-idx3-ubyte"), read_idx(src, "t10k-labels-idx1-ubyte")
    classes = int(train_y.max()) + 1
    rng = np.random.default_rng(seed)
    for _ in range(MAX_DRAWS):
        shares = rng.dirichlet(np.full(clients, alpha), size=classes)  # [label, client]
        train = cut(train_y, shares, classes, rng)
        test = cut(test_y, shares, classes, rng)
        if min(len(t) for t in train) >= MIN_TRAIN and min(len(t) for t in test) >= 1:
            break
    else:
        sys.exit(f"federated_split: error: no draw in {MAX_DRAWS} gave every client {MIN_TRAIN} samples; "
                 "fewer clients or a larger alpha")
    print(f"Dirichlet(alpha={alpha}) split of {src} over {clients} clients (seed {seed}): training samples "
          "per label\n")
    print("| client | " + " | ".join(str(k) for k in range(classes)) + " | train | test |")
    print("|---" * (classes + 3) + "|")
    for c in range(clients):
        d = os.path.join(dst, f"c{c + 1}")
        os.makedirs(d, exist_ok=True)
        write_idx(os.path.join(d, "train-images-idx3-ubyte"), train_x[train[c]])
        write_idx(os.path.join(d, "train-labels-idx1-ubyte"), train_y[train[c]])
        write_idx(os.path.join(d, "t10k-images-idx3-ubyte"), test_x[test[c]])
        write_idx(os.path.join(d, "t10k-labels-idx1-ubyte"), test_y[test[c]])
        counts = np.bincount(train_y[train[c]], minlength=classes)
        print(f"| c{c + 1} | " + " | ".join(str(n) for n in counts) + f" | {len(train[c])} | {len(test[c])} |")


if __name__ == "__main__":
    main()
