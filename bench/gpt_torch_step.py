#!/usr/bin/env python3
"""PyTorch's own training step on balancenet's gpt (nanoGPT's model: tests/unit/models/gpt_reference.py), the
peer of `balancenet train --model gpt --data text:FILE` in bench/gpt_vs_torch.sh.

Usage: .venv/bin/python gpt_torch_step.py TEXT LAYERS HEADS EMBED CONTEXT BATCH STEPS THREADS LR [DEVICE]
Character level (bytes as tokens, vocabulary 256), random windows of CONTEXT bytes, AdamW (weight decay 0:
the same update as balancenet's --optimizer adam --weight-decay 0), dropout 0. Prints each step's seconds
(data + forward + loss + backward + optimiser) as "step_seconds s1 s2 ..." and the mean loss of the last step.
DEVICE: cpu (default) or cuda[:N] (bench/gpu_overhead.sh): the model there, each batch cut on the CPU and copied
over, and every step's time taken after torch.cuda.synchronize() (the GPU's work done, not only queued).
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


class DeviceGPT(GPT):
    """gpt_reference's GPT with its positions made on the input's device (the reference makes them on the CPU,
    which a model on a GPU refuses). The same parameters, names and arithmetic."""

    def forward(self, idx):
        pos = torch.arange(0, idx.size(1), dtype=torch.long, device=idx.device)
        x = self.transformer.wte(idx) + self.transformer.wpe(pos)
        for block in self.transformer.h:
            x = block(x)
        return self.lm_head(self.transformer.ln_f(x))


def main():
    if len(sys.argv) not in (10, 11):
        sys.exit(__doc__)
    text, layers, heads, embed, context, batch, steps, threads = sys.argv[1], *map(int, sys.argv[2:9])
    lr = float(sys.argv[9])
    device = torch.device(sys.argv[10] if len(sys.argv) == 11 else "cpu")
    cuda = device.type == "cuda"
    if cuda:
        torch.cuda.set_device(device)
    torch.set_num_threads(threads)
    torch.manual_seed(1)
    data = torch.from_numpy(np.fromfile(text, dtype=np.uint8).astype(np.int64))
    model = (DeviceGPT if cuda else GPT)(256, context, layers, heads, embed).to(device)
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.0)
    seconds = []
    for _ in range(steps):
        start = time.perf_counter()
        at = torch.randint(len(data) - context - 1, (batch,))
        x = torch.stack([data[i:i + context] for i in at]).to(device)
        y = torch.stack([data[i + 1:i + 1 + context] for i in at]).to(device)
        opt.zero_grad(set_to_none=True)
        loss = F.cross_entropy(model(x).view(-1, 256), y.view(-1))
        loss.backward()
        opt.step()
        if cuda:
            torch.cuda.synchronize(device)
        seconds.append(time.perf_counter() - start)
    print("step_seconds " + " ".join(f"{s:.4f}" for s in seconds))
    print(f"last_loss {loss.item():.4f}")


if __name__ == "__main__":
    main()
