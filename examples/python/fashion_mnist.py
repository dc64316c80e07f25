"""Fashion-MNIST from Debian's dataset-fashion-mnist (the IDX files, gzip'd), as a TensorDataset of flattened
images in [0, 1] and their labels: the examples' real data, read without a download."""
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
