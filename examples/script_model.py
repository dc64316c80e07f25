#!/usr/bin/env python3
"""Scripts a PyTorch model for balancenet (any torch 2.x; scripts/setup.sh puts one in .venv/).

    python3 examples/script_model.py tiny_cnn.pt
    balancenet train --nodes 2 --model tiny_cnn.pt --steps 500 --export trained.pt
    # back in Python: model.load_state_dict(torch.load("trained.pt"))

Any nn.Module that maps [N, 1, 28, 28] images to [N, 10] logits works, via torch.jit.script or
torch.jit.trace. tests/fixtures/tiny_cnn.pt was made with this script.
"""
import sys

import torch
from torch import nn


class TinyCnn(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 4, 3)
        self.pool = nn.MaxPool2d(2)
        self.fc = nn.Linear(4 * 13 * 13, 10)

    def forward(self, x):
        x = self.pool(torch.relu(self.conv(x)))
        return self.fc(torch.flatten(x, 1))


def main():
    torch.manual_seed(0)
    torch.jit.script(TinyCnn()).save(sys.argv[1] if len(sys.argv) > 1 else "tiny_cnn.pt")


if __name__ == "__main__":
    main()
