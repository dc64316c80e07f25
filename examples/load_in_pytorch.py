#!/usr/bin/env python3
"""Loads weights trained by balancenet into a PyTorch model (any torch 2.x; scripts/setup.sh puts one in .venv/).

    balancenet train --model mlp --dropout 0 --steps 500 --export mlp.pt
    python3 examples/load_in_pytorch.py mlp.pt

The zoo's models keep their layers in one Sequential called `layers`, so a PyTorch model with the same
layers under the same name takes the file in one call: model.load_state_dict(torch.load(path)).
Prints {name: [shape, sum]} of what the PyTorch model now holds, as JSON.
"""
import json
import sys

import torch
from torch import nn


class Mlp(nn.Module):
    """balancenet's mlp at --width 1 without dropout: flatten, 256, relu, 128, relu, 10."""

    def __init__(self):
        super().__init__()
        self.layers = nn.Sequential(nn.Flatten(), nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 128), nn.ReLU(),
                                    nn.Linear(128, 10))

    def forward(self, x):
        return self.layers(x)


def main():
    model = Mlp()
    model.load_state_dict(torch.load(sys.argv[1]))  # strict: every name and shape must match
    print(json.dumps({k: [list(v.shape), float(v.double().sum())] for k, v in model.state_dict().items()}))


if __name__ == "__main__":
    main()
