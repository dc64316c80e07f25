#!/usr/bin/env python3
"""A PyTorch 2.x DDP script as people write them today: the device API (torch.accelerator,
torch.distributed.get_default_backend_for_device), a small GPT whose attention is
F.scaled_dot_product_attention, and optionally torch.compile. Plain, it runs the same under torchrun and
under balancenet launch (on a machine without a GPU: the CPU and gloo):

    balancenet launch --workers 2 examples/python/gpt_ddp.py --steps 20 --out final.pt
    .venv/bin/python -m torch.distributed.run --nproc_per_node 2 examples/python/gpt_ddp.py --steps 20 --out final.pt

With --balanced, balancenet's five lines (marked "bn:") give each worker its own share of every global batch,
and the synchronised gradient is still the whole batch's:

    balancenet launch --workers 2 --split 12,4 examples/python/gpt_ddp.py --balanced --global-batch 16

--reference trains the same model on the same global batches in this one process (the tests compare).
"""
import argparse
import math
import os

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch import nn
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def arguments():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    model_and_steps(p, "DDP")
    p.add_argument("--compile", action="store_true", help="torch.compile the model (inductor)")
    p.add_argument("--balanced", action="store_true", help="balancenet's per-worker shares (the five bn: lines)")
    p.add_argument("--reference", action="store_true", help="one process on --balanced's global batches")
    p.add_argument("--out", help="rank 0 writes the final state_dict here (torch.save)")
    return p.parse_args()


def model_and_steps(p, plain):
    """The model's shape, the steps and the optimiser: these flags, also fsdp2_train.py's."""
    p.add_argument("--steps", type=int, default=10, help="optimiser steps")
    p.add_argument("--batch-size", type=int, default=8, help=f"plain {plain}: sequences per rank and step")
    p.add_argument("--global-batch", type=int, default=16, help="--balanced and --reference: sequences per step")
    p.add_argument("--context", type=int, default=32, help="tokens per sequence")
    p.add_argument("--vocab", type=int, default=64)
    p.add_argument("--layers", type=int, default=2)
    p.add_argument("--heads", type=int, default=2)
    p.add_argument("--embed", type=int, default=64)
    p.add_argument("--lr", type=float, default=3e-3)
    p.add_argument("--optimizer", choices=["adamw", "sgd"], default="adamw")
    p.add_argument("--seed", type=int, default=0)


class Block(nn.Module):
    def __init__(self, embed, heads):
        super().__init__()
        self.heads = heads
        self.ln1, self.ln2 = nn.LayerNorm(embed), nn.LayerNorm(embed)
        self.qkv, self.proj = nn.Linear(embed, 3 * embed), nn.Linear(embed, embed)
        self.mlp = nn.Sequential(nn.Linear(embed, 4 * embed), nn.GELU(), nn.Linear(4 * embed, embed))

    def forward(self, x):
        b, t, c = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(c, dim=2)
        q, k, v = (z.view(b, t, self.heads, c // self.heads).transpose(1, 2) for z in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(y.transpose(1, 2).reshape(b, t, c))
        return x + self.mlp(self.ln2(x))


class GPT(nn.Module):
    def __init__(self, a):
        super().__init__()
        self.tokens, self.positions = nn.Embedding(a.vocab, a.embed), nn.Embedding(a.context, a.embed)
        self.blocks = nn.Sequential(*[Block(a.embed, a.heads) for _ in range(a.layers)])
        self.ln, self.head = nn.LayerNorm(a.embed), nn.Linear(a.embed, a.vocab, bias=False)

    def forward(self, idx):
        x = self.tokens(idx) + self.positions(torch.arange(idx.shape[1], device=idx.device))
        return self.head(self.ln(self.blocks(x)))


def token_data(a, sequences=512):
    """A learnable synthetic language: each token is a fixed function of the two before it, plus noise."""
    g = torch.Generator().manual_seed(1234)
    table = torch.randint(0, a.vocab, (a.vocab, a.vocab), generator=g)
    seq = torch.empty(sequences, a.context + 1, dtype=torch.long)
    seq[:, :2] = torch.randint(0, a.vocab, (sequences, 2), generator=g)
    for t in range(2, a.context + 1):
        noise = torch.rand(sequences, generator=g) < 0.1
        seq[:, t] = torch.where(noise, torch.randint(0, a.vocab, (sequences,), generator=g),
                                table[seq[:, t - 2], seq[:, t - 1]])
    return TensorDataset(seq[:, :-1], seq[:, 1:])


def make_model(a, device):
    torch.manual_seed(a.seed)
    return GPT(a).to(device)


def loss_of(model, x, y):
    logits = model(x)
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), y.reshape(-1))


def optimizer(a, params):
    return torch.optim.AdamW(params, lr=a.lr) if a.optimizer == "adamw" else torch.optim.SGD(params, lr=a.lr)


def save(state_dict, path):
    """Atomically: a reader never sees half a file."""
    torch.save(state_dict, path + ".tmp")
    os.replace(path + ".tmp", path)


def the_device():
    """The 2.x device API: the local rank's accelerator where there is one, else the CPU."""
    accelerator = torch.accelerator.current_accelerator(check_available=True)
    if accelerator is None:
        return torch.device("cpu")
    index = int(os.environ.get("LOCAL_RANK", "0"))
    torch.accelerator.set_device_index(index)
    return torch.device(accelerator.type, index)


def reference(a, data):
    """--balanced's steps in one process: global batch s is the engine's positions [s*B, (s+1)*B)."""
    import balancenet.torch as bn
    model = make_model(a, "cpu")
    opt = optimizer(a, model.parameters())
    for step in range(a.steps):
        x, y = data[bn.global_indices(len(data), a.seed, step * a.global_batch, a.global_batch)]
        loss_of(model, x, y).backward()
        opt.step()
        opt.zero_grad()
    if a.out:
        save(model.state_dict(), a.out)
    print(f"reference: {a.steps} steps, last loss {loss_of(model, x, y).item():.4f}")


def start(arguments, reference, train):
    """The script's flags, then --reference's one process or the training on this rank's device (also
    fsdp2_train.py's)."""
    a = arguments()
    torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", "1")))
    if a.reference:
        return reference(a, token_data(a))
    return train(a, token_data(a), the_device())


def train(a, data, device):
    if a.balanced:
        import balancenet.torch as bn  # bn: 1
        bn.init()  # bn: 2 (instead of init_process_group)
    else:
        dist.init_process_group(backend=dist.get_default_backend_for_device(device))
    rank, world = dist.get_rank(), dist.get_world_size()
    model = make_model(a, device)
    net = DistributedDataParallel(model)
    opt = optimizer(a, net.parameters())
    if a.balanced:
        bn.attach(net, opt)  # bn: 3
        loader = bn.DataLoader(data, global_batch=a.global_batch, seed=a.seed)  # bn: 4
    else:
        sampler = DistributedSampler(data, shuffle=True, seed=a.seed)
        loader = DataLoader(data, batch_size=a.batch_size, sampler=sampler)
    step_fn = torch.compile(net) if a.compile else net
    step, epoch = 0, 0
    while step < a.steps:
        if not a.balanced:
            sampler.set_epoch(epoch)
        for x, y in loader:
            x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)
            loss = loss_of(step_fn, x, y)
            loss.backward()
            opt.step()
            opt.zero_grad()
            if a.balanced and not bn.step_done(loss):  # bn: 5 (False: a worker died, the step is taken again)
                continue
            step += 1
            if rank == 0 and (step % 5 == 0 or step == a.steps):
                print(f"step {step} loss {loss.item():.4f} perplexity {math.exp(loss.item()):.1f} "
                      f"(world {world}, {device})", flush=True)
            if step == a.steps:
                break
        epoch += 1
    if rank == 0 and a.out:
        save(model.state_dict(), a.out)
    if a.balanced:
        bn.finish()
    else:
        dist.destroy_process_group()


if __name__ == "__main__":
    start(arguments, reference, train)
