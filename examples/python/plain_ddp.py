#!/usr/bin/env python3
# plain_ddp.py: an ordinary PyTorch DDP training script (no balancenet import): what `balancenet launch` and
# torchrun both run unchanged. A small MLP on synthetic data from a fixed seed; rank 0 writes the final
# state_dict. `--reference N` trains the same model in one process on the same global batches an N-rank run
# takes (the union of the ranks' DistributedSampler batches), which is what DDP's averaged gradient equals.
#
#   balancenet launch --workers 2 examples/python/plain_ddp.py --out final.pt
#   .venv/bin/python examples/python/plain_ddp.py --reference 2 --out reference.pt
import argparse
import os

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def parse_args():
    p = argparse.ArgumentParser(description="A plain PyTorch DDP run (or its one-process reference).")
    p.add_argument("--steps", type=int, default=6, help="SGD steps")
    p.add_argument("--batch-size", type=int, default=16, help="samples per rank and step")
    p.add_argument("--lr", type=float, default=0.1)
    p.add_argument("--seed", type=int, default=0, help="seed of the data, the weights and the sampler")
    p.add_argument("--samples", type=int, default=256, help="size of the synthetic data set")
    p.add_argument("--out", required=True, help="where rank 0 writes the final state_dict (torch.save)")
    p.add_argument("--reference", type=int, metavar="N", default=0,
                   help="no process group: one process on the global batches of an N-rank run")
    return p.parse_args()


def synthetic_data(samples, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(samples, 16, generator=g)
    teacher = torch.randn(16, 4, generator=g)
    return TensorDataset(x, (x @ teacher).argmax(dim=1))


def make_model(seed):
    torch.manual_seed(seed)
    return nn.Sequential(nn.Linear(16, 32), nn.Tanh(), nn.Linear(32, 4))


def save_atomically(state_dict, path):
    tmp = f"{path}.tmp.{os.getpid()}"
    torch.save(state_dict, tmp)
    os.replace(tmp, path)


def batches(loader, sampler, steps):
    """`steps` batches, over as many epochs as it takes (DistributedSampler reshuffles per epoch)."""
    done, epoch = 0, 0
    while True:
        sampler.set_epoch(epoch)
        for batch in loader:
            if done == steps:
                return
            yield batch
            done += 1
        epoch += 1


def main():
    args = parse_args()
    torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", "1")))
    data = synthetic_data(args.samples, args.seed)
    model = make_model(args.seed)
    if args.reference:
        rank, world = 0, 1
        # One replica: the sampler's permutation is the one every rank of the N-rank run slices, and
        # N x batch-size consecutive positions of it are the union of the ranks' batches at each step.
        sampler = DistributedSampler(data, num_replicas=1, rank=0, shuffle=True, seed=args.seed)
        batch_size = args.batch_size * args.reference
        net = model
    else:
        dist.init_process_group("gloo")  # env://: RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT
        rank, world = dist.get_rank(), dist.get_world_size()
        sampler = DistributedSampler(data, shuffle=True, seed=args.seed)
        batch_size = args.batch_size
        net = DistributedDataParallel(model)
    loader = DataLoader(data, batch_size=batch_size, sampler=sampler)
    opt = torch.optim.SGD(net.parameters(), lr=args.lr)
    loss_fn = nn.CrossEntropyLoss()
    for step, (x, y) in enumerate(batches(loader, sampler, args.steps)):
        opt.zero_grad()
        loss = loss_fn(net(x), y)
        loss.backward()
        opt.step()
        if rank == 0:
            print(f"step {step} loss {loss.item():.4f} (world {world})", flush=True)
    if rank == 0:
        save_atomically(model.state_dict(), args.out)
    if not args.reference:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
