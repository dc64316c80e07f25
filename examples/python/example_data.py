"""The examples' data: Fashion-MNIST from Debian's dataset-fashion-mnist (the IDX files, gzip'd), as TensorDatasets of
flattened images in [0, 1] and their labels, read without a download; or a synthetic classification set."""
import gzip

import numpy as np
import torch
from torch.utils.data import TensorDataset

FASHION_MNIST = "/usr/share/datasets/fashion-mnist"


def idx_images(path):
    with gzip.open(path) as f:
        data = np.frombuffer(f.read(), dtype=np.uint8, offset=16)
    return torch.from_numpy(data.reshape(-1, 784).astype(np.float32) / 255.0)


def idx_labels(path):
    with gzip.open(path) as f:
        return torch.from_numpy(np.frombuffer(f.read(), dtype=np.uint8, offset=8).astype(np.int64))


def fashion_mnist(part):
    """`part`: "train" (60,000 samples) or "t10k" (10,000)."""
    return TensorDataset(idx_images(f"{FASHION_MNIST}/{part}-images-idx3-ubyte.gz"),
                         idx_labels(f"{FASHION_MNIST}/{part}-labels-idx1-ubyte.gz"))


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
