#!/usr/bin/env python3
"""Fashion-MNIST's IDX files as an image folder: DIR/train/<class>/<i>.png and DIR/val/<class>/<i>.png.

Usage: .venv/bin/python examples/fashion_mnist_to_imagefolder.py DIR [--limit N] [--source SRC]
  --source  the four .gz files (default /usr/share/datasets/fashion-mnist, Debian's dataset-fashion-mnist)
  --limit   at most N images per split (at least 10), the first of each class, spread evenly over the ten
Then: balancenet train --data imagefolder:DIR --image-size 28 ...
Needs numpy and PIL: Debian's python3-numpy and python3-pil (call /usr/bin/python3, not a pyenv one).
"""
import argparse
import gzip
import os
import sys

import numpy as np
from PIL import Image

# Numbered so that sorting the folder names (as imagefolder and torchvision do) keeps Fashion-MNIST's labels.
CLASSES = ["0_tshirt_top", "1_trouser", "2_pullover", "3_dress", "4_coat",
           "5_sandal", "6_shirt", "7_sneaker", "8_bag", "9_ankle_boot"]


def read_idx(path, magic):
    with gzip.open(path, "rb") as f:
        data = f.read()
    if int.from_bytes(data[0:4], "big") != magic:
        sys.exit("%s: not an IDX file of unsigned bytes" % path)
    dims = [int.from_bytes(data[4 + 4 * i:8 + 4 * i], "big") for i in range(magic & 0xFF)]
    return np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * len(dims)).reshape(dims)


def quotas(limit):
    if limit is None:
        return [None] * len(CLASSES)
    return [limit // len(CLASSES) + (1 if c < limit % len(CLASSES) else 0) for c in range(len(CLASSES))]


def convert(source, prefix, out, limit):
    images = read_idx(os.path.join(source, prefix + "-images-idx3-ubyte.gz"), 0x803)
    labels = read_idx(os.path.join(source, prefix + "-labels-idx1-ubyte.gz"), 0x801)
    left = quotas(limit)
    written = 0
    for c in CLASSES:
        os.makedirs(os.path.join(out, c), exist_ok=True)
    for i, (image, label) in enumerate(zip(images, labels)):
        if left[label] is not None:
            if left[label] == 0:
                continue
            left[label] -= 1
        Image.fromarray(image, "L").save(os.path.join(out, CLASSES[label], "%d.png" % i))
        written += 1
    return written


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dir")
    parser.add_argument("--limit", type=int)
    parser.add_argument("--source", default="/usr/share/datasets/fashion-mnist")
    args = parser.parse_args()
    if args.limit is not None and args.limit < len(CLASSES):
        sys.exit("--limit %d: at least %d, one image per class" % (args.limit, len(CLASSES)))
    for split, prefix in (("train", "train"), ("val", "t10k")):
        n = convert(args.source, prefix, os.path.join(args.dir, split), args.limit)
        print("%s: %d images in %s" % (split, n, os.path.join(args.dir, split)))


if __name__ == "__main__":
    main()
