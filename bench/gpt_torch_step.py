#!/usr/bin/env python3
"""PyTorch's own training step on balancenet's gpt (nanoGPT's model: tests/unit/models/gpt_reference.py), the
peer of `balancenet train --model gpt --data text:FILE` in bench/gpt_vs_torch.sh.

Usage: .venv/bin/python gpt_torch_step.py TEXT LAYERS HEADS EMBED CONTEXT BATCH STEPS THREADS LR
Character level (bytes as tokens, vocabulary 256), random windows of CONTEXT bytes, AdamW (weight decay 0:
the same update as balancenet's --optimizer adam --weight-decay 0), dropout 0. Prints each step's seconds
(data + forward + loss + backward + optimiser) as "step_seconds s1 s2 ..." and the mean loss of the last step.
"""
import os
import sys
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", sys.argv[8] if len(sys.argv) > 8 else "1")

import numpy as np
import torch
from torch.nn import functional as F

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "unit", "models"))
from gpt_reference import GPT  # noqa: E402  (the model the gpt's exactness test checks against)


def main():
    if len(sys.argv) != 10:
        sys.exit(__doc__)
    text, layers, heads, embed, context, batch, steps, threads = sys.argv[1], *map(int, sys.argv[2:9])
    lr = float(sys.argv[9])
    torch.set_num_threads(threads)
    torch.manual_seed(1)
    data = torch.from_numpy(np.fromfile(text, dtype=np.uint8).astype(np.int64))
    model = GPT(256, context, layers, heads, embed)
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.0)
    seconds = []
    for _ in range(steps):
        start = time.perf_counter()
        at = torch.randint(len(data) - context - 1, (batch,))
        x = torch.stack([data[i:i + context] for i in at])
        y = torch.stack([data[i + 1:i + 1 + context] for i in at])
        opt.zero_grad(set_to_none=True)
        loss = F.cross_entropy(model(x).view(-1, 256), y.view(-1))
        loss.backward()
        opt.step()
        seconds.append(time.perf_counter() - start)
    print("step_seconds " + " ".join(f"{s:.4f}" for s in seconds))
    print(f"last_loss {loss.item():.4f}")


if __name__ == "__main__":
    main()
