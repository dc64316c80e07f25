#!/usr/bin/env python3
"""An Accelerate script as its docs write one: Accelerator, prepare(), accumulate(), backward(), clip_grad_norm_(),
save_state()/load_state(). With --balanced, one call after prepare() (marked "bn:") gives each worker its share of
every global batch. Run it with

    balancenet launch --workers 2 --node-speed 100,25 examples/python/accelerate_train.py --balanced --steps 40

An MLP classifies a synthetic set (--data synthetic) or Fashion-MNIST from Debian's dataset-fashion-mnist
(--data fashion-mnist). --reference trains the same model on the same global batches in one process with
Accelerate alone: the tests compare the two.
"""
import argparse

import torch
import torch.nn.functional as F
from accelerate import Accelerator
from torch.utils.data import DataLoader

from example_data import datasets  # beside this script


def arguments():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--balanced", action="store_true", help="balancenet.accelerate.balance() after prepare()")
    p.add_argument("--reference", action="store_true", help="one process on the whole global batches")
    p.add_argument("--data", choices=["synthetic", "fashion-mnist"], default="synthetic")
    p.add_argument("--samples", type=int, default=2048)
    p.add_argument("--hidden", type=int, default=64)
    p.add_argument("--global-batch", type=int, default=32)
    p.add_argument("--steps", type=int, default=20, help="optimizer steps")
    p.add_argument("--accumulate", type=int, default=1, help="Accelerator(gradient_accumulation_steps=)")
    p.add_argument("--clip", type=float, default=0, help="accelerator.clip_grad_norm_ (0: none)")
    p.add_argument("--lr", type=float, default=0.1)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--save-at", type=int, default=0, help="accelerator.save_state(--state-dir) after this step")
    p.add_argument("--stop-after", type=int, default=0, help="end after this many steps, as if the job stopped")
    p.add_argument("--state-dir", default="accelerate-state")
    p.add_argument("--resume", action="store_true", help="accelerator.load_state(--state-dir) first")
    p.add_argument("--out", help="write the final state_dict here (rank 0)")
    return p.parse_args()


class Progress:
    """Optimizer steps done: saved and restored with the rest by save_state()/load_state()."""

    def __init__(self):
        self.done = 0

    def state_dict(self):
        return {"done": self.done}

    def load_state_dict(self, state):
        self.done = state["done"]


def main():
    args = arguments()
    torch.manual_seed(args.seed)
    accelerator = Accelerator(gradient_accumulation_steps=args.accumulate, cpu=True)
    data = datasets(args.data, args.samples)[0]
    model = torch.nn.Sequential(torch.nn.Linear(data[0][0].numel(), args.hidden), torch.nn.ReLU(),
                                torch.nn.Linear(args.hidden, 10))
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9)
    if args.reference:  # the engine's global batches in order, in one process
        from balancenet.torch import global_indices
        n, b = len(data), args.global_batch
        loader = DataLoader(data, batch_sampler=[global_indices(n, args.seed, s * b, b) for s in range(n // b)])
        model, optimizer, loader = accelerator.prepare(model, optimizer, loader)
    elif args.balanced:
        model, optimizer = accelerator.prepare(model, optimizer)
        loader = DataLoader(data, batch_size=args.global_batch // accelerator.num_processes, shuffle=True)
        import balancenet.accelerate  # bn: the import
        loader = balancenet.accelerate.balance(accelerator, model, optimizer, loader,  # bn: the call
                                               global_batch=args.global_batch, seed=args.seed)
    else:
        loader = DataLoader(data, batch_size=args.global_batch // accelerator.num_processes, shuffle=True)
        model, optimizer, loader = accelerator.prepare(model, optimizer, loader)
    progress = Progress()
    accelerator.register_for_checkpointing(progress)
    if args.balanced:
        accelerator.register_for_checkpointing(loader)  # its place in the stream and the split, with the rest
    if args.resume:
        accelerator.load_state(args.state_dir)
    while progress.done < args.steps:
        for x, y in loader:
            with accelerator.accumulate(model):
                loss = F.cross_entropy(model(x), y)
                accelerator.backward(loss)
                if args.clip and accelerator.sync_gradients:
                    accelerator.clip_grad_norm_(model.parameters(), args.clip)
                optimizer.step()
                optimizer.zero_grad()
            if accelerator.sync_gradients:
                progress.done += 1
                if progress.done == args.save_at:
                    accelerator.save_state(args.state_dir)
                if progress.done in (args.steps, args.stop_after):
                    break
        if progress.done == args.stop_after:
            break
    if args.out and accelerator.is_main_process:
        torch.save(accelerator.unwrap_model(model).state_dict(), args.out)


if __name__ == "__main__":
    main()
