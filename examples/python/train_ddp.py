#!/usr/bin/env python3
"""A PyTorch DDP training script with balancenet's five lines (marked "bn:"): run it with

    balancenet launch --workers 3 --split 5,20,7 examples/python/train_ddp.py --steps 20

Each worker trains its share of every global batch; the synchronised gradient is the whole batch's. The
model is defined here with torch.nn; the data is a synthetic classification set (--data synthetic) or
Fashion-MNIST from Debian's dataset-fashion-mnist (--data fashion-mnist). --reference trains the same model
on the same global batches in this one process, without balancenet's runtime: the tests compare the two.
"""
import argparse
import os
import signal

import numpy as np
import torch
import torch.nn.functional as F

from example_data import datasets  # beside this script

import balancenet.torch as bn  # bn: 1 (balancenet launch puts the package on the path; docs/python.md)


def arguments():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--data", choices=["synthetic", "fashion-mnist"], default="synthetic")
    p.add_argument("--samples", type=int, default=2048, help="synthetic: training samples")
    p.add_argument("--hidden", type=int, default=64)
    p.add_argument("--global-batch", type=int, default=32)
    p.add_argument("--steps", type=int, default=20, help="optimiser steps (0: --epochs decides)")
    p.add_argument("--epochs", type=int, default=1)
    p.add_argument("--accumulate", type=int, default=1, help="global batches per optimiser step (no_sync)")
    p.add_argument("--max-pass", default="",
                   help="the most samples one forward and backward of a rank holds, one value for every rank or one "
                        "per rank (0: no limit): a rank's share in that many passes (bn.micro_batches), for a "
                        "worker short of memory")
    p.add_argument("--lr", type=float, default=0.1)
    p.add_argument("--momentum", type=float, default=0.9)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--device", default="cpu", help="where the model and the batches live: cpu, cuda or cuda:N "
                   "(DDP's buckets are then GPU tensors: balancenet's comm hook sums them through Gloo)")
    p.add_argument("--num-workers", type=int, default=0, help="loader processes per rank")
    p.add_argument("--precision", choices=["fp32", "bf16", "fp16"], default="fp32",
                   help="torch.autocast around the forward pass and loss; fp16 with torch.amp.GradScaler")
    p.add_argument("--grad-compress", default="none",
                   help="none, bf16, fp16, int8 or powersgd[:RANK]: the gradients cross the wire in fewer bits "
                        "(bn.attach's grad_compress, error feedback included); lossy, so off by default")
    p.add_argument("--eval-every", type=int, default=0, help="steps between test evaluations (0: at the end)")
    p.add_argument("--target-accuracy", type=float, default=0, help="stop once the test accuracy reaches it")
    p.add_argument("--trace", help="write the parameters after every step here (rank 0; torch.save)")
    p.add_argument("--out", help="write the final state_dict here (rank 0)")
    p.add_argument("--reference", action="store_true", help="one process on the whole batches, no balancenet")
    p.add_argument("--save-inputs", metavar="DIR",
                   help="write the training set as DIR/x.npy, DIR/y.npy and the initial model as DIR/model.pt "
                        "(TorchScript), for `balancenet train --model DIR/model.pt --data npy:DIR/x.npy,DIR/y.npy`, "
                        "and exit")
    p.add_argument("--kill-rank", type=int, default=-1, help=argparse.SUPPRESS)  # tests: this rank SIGKILLs
    p.add_argument("--kill-at", type=int, default=0, help=argparse.SUPPRESS)  # itself after this many steps
    return p.parse_args()


def per_rank(text, world):
    """--max-pass: "" or "16" (every rank) or "0,16" (one per rank), as integers; 0: no limit."""
    values = [int(v) for v in text.split(",")] if text else [0]
    if len(values) == 1:
        values *= world
    if len(values) != world or min(values) < 0:
        raise SystemExit(f"train_ddp.py: --max-pass needs one value >= 0 or one per rank ({world}), got {text!r}")
    return values


def make_model(inputs, hidden, seed):
    torch.manual_seed(seed)
    return torch.nn.Sequential(torch.nn.Linear(inputs, hidden), torch.nn.ReLU(), torch.nn.Linear(hidden, 10))


class Precision:
    """torch.autocast and, for fp16, torch.amp.GradScaler, as a PyTorch user adds them: balancenet's lines stay as
    they are (its comm hook sums the scaled fp32 gradients; the scaler unscales the sum)."""

    def __init__(self, name, device):
        self.device, self.low = device.type, {"bf16": torch.bfloat16, "fp16": torch.float16}.get(name)
        self.scaler = torch.amp.GradScaler(self.device) if name == "fp16" else None

    def autocast(self):
        return torch.autocast(self.device, dtype=self.low, enabled=self.low is not None)

    def backward(self, loss):
        (self.scaler.scale(loss) if self.scaler else loss).backward()

    def step(self, opt):
        if self.scaler:
            self.scaler.step(opt)  # skipped where the summed gradient overflowed
            self.scaler.update()
        else:
            opt.step()


def accuracy(model, test):
    device = next(model.parameters()).device
    with torch.no_grad():
        x, y = test.tensors
        return (model(x.to(device)).argmax(dim=1) == y.to(device)).float().mean().item()


def save(obj, path):
    """Atomically: a reader never sees half a file."""
    torch.save(obj, path + ".tmp")
    os.replace(path + ".tmp", path)


def snapshot(model):
    return torch.cat([p.detach().reshape(-1).cpu() for p in model.parameters()])


def reference(args, train, test):
    """The same steps in one process: global batch s is the engine's positions [s*B, (s+1)*B)."""
    model = make_model(train.tensors[0].shape[1], args.hidden, args.seed).to(args.device)
    opt = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=args.momentum)
    precision = Precision(args.precision, torch.device(args.device))
    trace, B = [], args.global_batch
    steps = args.steps or args.epochs * (len(train) // B) // args.accumulate
    for step in range(steps):
        for k in range(args.accumulate):
            idx = bn.global_indices(len(train), args.seed, (step * args.accumulate + k) * B, B)
            x, y = train[idx]
            with precision.autocast():
                loss = F.cross_entropy(model(x.to(args.device)), y.to(args.device)) / args.accumulate
            precision.backward(loss)
        precision.step(opt)
        opt.zero_grad()
        trace.append(snapshot(model))
    if args.trace:
        save(trace, args.trace)
    if args.out:
        save(model.state_dict(), args.out)
    print(f"reference: {steps} steps, test accuracy {accuracy(model, test):.4f}")


def save_inputs(args, train):
    """The same data and initial weights for the C++ trainer: it trains them as this script does."""
    os.makedirs(args.save_inputs, exist_ok=True)
    x, y = train.tensors
    np.save(os.path.join(args.save_inputs, "x.npy"), x.numpy())
    np.save(os.path.join(args.save_inputs, "y.npy"), y.numpy())
    model = make_model(x.shape[1], args.hidden, args.seed)
    torch.jit.trace(model, x[:2]).save(os.path.join(args.save_inputs, "model.pt"))


def main():
    args = arguments()
    train, test = datasets(args.data, args.samples)
    if args.save_inputs:
        return save_inputs(args, train)
    if args.reference:
        return reference(args, train, test)
    bn.init()  # bn: 2
    device = torch.device(args.device)
    model = make_model(train.tensors[0].shape[1], args.hidden, args.seed).to(device)
    ddp = torch.nn.parallel.DistributedDataParallel(model, device_ids=[device] if device.type == "cuda" else None)
    opt = torch.optim.SGD(ddp.parameters(), lr=args.lr, momentum=args.momentum)
    # bn: 3 (the optimizer: under --elastic an interrupted step is taken again)
    bn.attach(ddp, opt, grad_compress=args.grad_compress)
    precision = Precision(args.precision, device)
    loader = bn.DataLoader(train, global_batch=args.global_batch, num_workers=args.num_workers,
                           seed=args.seed)  # bn: 4
    steps = args.steps or args.epochs * len(loader) // args.accumulate
    trace, pending = [], 0
    max_pass = per_rank(args.max_pass, bn.world_size())[bn.rank()] or None
    passes_seen = set()  # (share, pass) pairs: printed at the end, the tests read them
    step = 0
    while step < steps:
        for x, y in loader:
            x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)
            pending += 1
            last = pending == args.accumulate
            loss = 0.0
            # This rank's share in passes its memory holds: the gradient is summed once, at the last pass of the
            # step's last batch; before it, no_sync() keeps it local.
            for m in bn.micro_batches((x, y), max_pass):  # bn: 6 (optional: a rank short of memory)
                with m.sync(ddp) if last else ddp.no_sync():
                    with precision.autocast():
                        part = F.cross_entropy(ddp(m.batch[0]), m.batch[1]) * m.scale / args.accumulate
                    precision.backward(part)
                loss = loss + part.detach()
                passes_seen.add((x.shape[0], m.samples))
            if not last:
                continue
            precision.step(opt)
            opt.zero_grad()
            pending = 0
            if not bn.step_done(loss * args.accumulate):  # bn: 5 (False: a worker died, the step is taken again)
                continue
            step = bn.steps_done()
            del trace[step - 1:]
            trace.append(snapshot(model))
            if bn.rank() == args.kill_rank and step == args.kill_at:
                os.kill(os.getpid(), signal.SIGKILL)
            if args.eval_every and step % args.eval_every == 0 or step == steps:
                acc = accuracy(model, test)
                bn.record_eval(acc)
                if bn.rank() == 0:
                    print(f"step {step}: test accuracy {acc:.4f} split {bn.split()}", flush=True)
                if args.target_accuracy and acc >= args.target_accuracy:
                    steps = step  # every rank evaluates the same model: all stop together
            if step >= steps:
                break
    if bn.rank() == 0 and args.trace:
        save(trace, args.trace)
    if bn.rank() == 0 and args.out:
        save(model.state_dict(), args.out)
    if max_pass:
        print(f"rank {bn.rank()}: passes of at most {max_pass}: {sorted(passes_seen)}", flush=True)
    print(f"rank {bn.rank()}: done, results in {bn.finish()}", flush=True)


if __name__ == "__main__":
    main()
