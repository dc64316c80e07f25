"""The examples' data: Fashion-MNIST from Debian's dataset-fashion-mnist (the IDX files, gzip'd), as TensorDatasets of
flattened images in [0, 1] and their labels, read without a download; or a synthetic classification set."""
import gzip
import os

import numpy as np
import torch
from torch.utils.data import TensorDataset

FASHION_MNIST = "/usr/share/datasets/fashion-mnist"


def read_idx(path):
    """An IDX file's bytes, gzip'd (Debian's) or not (a benchmark's cut of the test set)."""
    with (gzip.open(path) if path.endswith(".gz") else open(path, "rb")) as f:
        return f.read()


def idx_images(path):
    data = np.frombuffer(read_idx(path), dtype=np.uint8, offset=16)
    return torch.from_numpy(data.reshape(-1, 784).astype(np.float32) / 255.0)


def idx_labels(path):
    return torch.from_numpy(np.frombuffer(read_idx(path), dtype=np.uint8, offset=8).astype(np.int64))


def fashion_mnist(part, directory=FASHION_MNIST):
    """`part`: "train" (60,000 samples) or "t10k" (10,000), from `directory`'s IDX files, gzip'd or not (as
    balancenet's --data-dir takes them)."""
    def path(name):
        plain = os.path.join(directory, f"{part}-{name}")
        return plain if os.path.exists(plain) else plain + ".gz"
    return TensorDataset(idx_images(path("images-idx3-ubyte")), idx_labels(path("labels-idx1-ubyte")))


def datasets(kind, samples):
    """(train, test): "fashion-mnist", or "synthetic": `samples` points of 20 features, 10 classes by a linear rule,
    and 512 more to test on."""
    if kind == "fashion-mnist":
        return fashion_mnist("train"), fashion_mnist("t10k")
    g = torch.Generator().manual_seed(1234)
    x = torch.randn(samples + 512, 20, generator=g)
    w = torch.randn(20, 10, generator=g)
    y = (x @ w).argmax(dim=1)
    return TensorDataset(x[:samples], y[:samples]), TensorDataset(x[samples:], y[samples:])
