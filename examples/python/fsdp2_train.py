#!/usr/bin/env python3
"""An FSDP2 script in pytorch/examples' style: the model built on the meta device, every block and the root sharded
with torch.distributed.fsdp.fully_shard, the device API (torch.accelerator, get_default_backend_for_device),
optionally a MixedPrecisionPolicy, gradient clipping over the sharded gradients and DCP checkpoints. Plain, it runs
the same under torchrun and under balancenet launch (on a machine without a GPU: the CPU and gloo):

    balancenet launch --workers 2 examples/python/fsdp2_train.py --steps 20

With --balanced, balancenet's five lines (marked "bn:") give each worker its own share of every global batch, and
the reduce-scattered gradient is still the whole batch's:

    balancenet launch --workers 2 --split 12,4 examples/python/fsdp2_train.py --balanced --global-batch 16

The model is gpt_ddp.py's GPT. --reference trains it on --balanced's global batches in this one process, unsharded
(the tests compare).
"""
import argparse
import math

import torch
import torch.distributed as dist
from torch.distributed.checkpoint.state_dict import (StateDictOptions, get_model_state_dict, get_state_dict,
                                                     set_model_state_dict, set_state_dict)
from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard
from torch.utils.data import DataLoader, DistributedSampler

from gpt_ddp import GPT, loss_of, make_model, model_and_steps, optimizer, save, start  # beside this script


def arguments():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    model_and_steps(p, "FSDP2")
    p.add_argument("--mixed-precision", choices=["bf16"], help="MixedPrecisionPolicy: bf16 parameters in the "
                   "forward and backward, gradients reduced in fp32")
    p.add_argument("--clip", type=float, default=0, help="clip_grad_norm_ to this norm (0: no clipping)")
    p.add_argument("--checkpoint", help="a DCP checkpoint folder, written every --save-every steps")
    p.add_argument("--save-every", type=int, default=0)
    p.add_argument("--resume", action="store_true", help="go on from --checkpoint")
    p.add_argument("--stop-after", type=int, default=0, help="stop after this many steps (an interrupted run)")
    p.add_argument("--balanced", action="store_true", help="balancenet's per-worker shares (the five bn: lines)")
    p.add_argument("--reference", action="store_true", help="one process on --balanced's global batches")
    p.add_argument("--out", help="rank 0 writes the final (whole) state_dict here (torch.save)")
    return p.parse_args()


def sharded_model(a, device):
    """The model on the meta device, sharded block by block and at the root, then given its initial weights: every
    rank makes them from the seed (small models; a large one loads rank 0's with broadcast_from_rank0=True)."""
    with torch.device("meta"):
        model = GPT(a)
    policy = MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=torch.float32) \
        if a.mixed_precision == "bf16" else MixedPrecisionPolicy()
    for block in model.blocks:
        fully_shard(block, mp_policy=policy)
    fully_shard(model, mp_policy=policy)
    model.to_empty(device=device)
    set_model_state_dict(model, make_model(a, "cpu").state_dict(), options=StateDictOptions(full_state_dict=True))
    return model


def train_step(a, model, opt, x, y):
    if a.mixed_precision == "bf16" and a.reference:
        with torch.autocast("cpu", dtype=torch.bfloat16):
            loss = loss_of(model, x, y)
    else:
        loss = loss_of(model, x, y)
    loss.backward()
    if a.clip:
        torch.nn.utils.clip_grad_norm_(model.parameters(), a.clip)
    opt.step()
    opt.zero_grad()
    return loss


def reference(a, data):
    """--balanced's steps in one process: global batch s is the engine's positions [s*B, (s+1)*B)."""
    import balancenet.torch as bn
    model = make_model(a, "cpu")
    opt = optimizer(a, model.parameters())
    for step in range(a.steps):
        x, y = data[bn.global_indices(len(data), a.seed, step * a.global_batch, a.global_batch)]
        loss = train_step(a, model, opt, x, y)
    if a.out:
        save(model.state_dict(), a.out)
    print(f"reference: {a.steps} steps, last loss {loss.item():.4f}")


class Checkpoint:
    """DCP: each rank writes its shards of the model and the optimizer state, and the loader's position."""

    def __init__(self, a, model, opt, loader):
        self.a, self.model, self.opt, self.loader = a, model, opt, loader

    def save(self, step):
        import torch.distributed.checkpoint as dcp  # here: its import costs every process 1-2 s
        model_state, optim_state = get_state_dict(self.model, self.opt)
        state = {"model": model_state, "optim": optim_state, "step": step}
        if self.a.balanced:
            state["loader"] = self.loader.state_dict()
        dcp.save(state, checkpoint_id=self.a.checkpoint)

    def load(self):
        import torch.distributed.checkpoint as dcp
        model_state, optim_state = get_state_dict(self.model, self.opt)
        state = {"model": model_state, "optim": optim_state, "step": 0}
        if self.a.balanced:
            state["loader"] = self.loader.state_dict()
        dcp.load(state, checkpoint_id=self.a.checkpoint)
        set_state_dict(self.model, self.opt, model_state_dict=state["model"], optim_state_dict=state["optim"])
        if self.a.balanced:
            self.loader.load_state_dict(state["loader"])
        return state["step"]


def train(a, data, device):
    dist.init_process_group(backend=dist.get_default_backend_for_device(device))
    if a.balanced:
        import balancenet.torch as bn  # bn: 1
        bn.init()  # bn: 2 (joins the job; torch's group above is FSDP2's)
    rank, world = dist.get_rank(), dist.get_world_size()
    model = sharded_model(a, device)
    opt = optimizer(a, model.parameters())
    if a.balanced:
        bn.attach(model)  # bn: 3
        loader = bn.DataLoader(data, global_batch=a.global_batch, seed=a.seed)  # bn: 4
    else:
        sampler = DistributedSampler(data, shuffle=True, seed=a.seed)
        loader = DataLoader(data, batch_size=a.batch_size, sampler=sampler)
    checkpoint = Checkpoint(a, model, opt, loader)
    step = checkpoint.load() if a.resume else 0
    epoch = step // len(loader)
    last = min(a.steps, a.stop_after or a.steps)
    while step < last:
        if not a.balanced:
            sampler.set_epoch(epoch)
        for x, y in loader:
            loss = train_step(a, model, opt, x.to(device, non_blocking=True), y.to(device, non_blocking=True))
            if a.balanced and not bn.step_done(loss):  # bn: 5
                continue
            step += 1
            if a.checkpoint and a.save_every and step % a.save_every == 0:
                checkpoint.save(step)
            if rank == 0 and (step % 5 == 0 or step == last):
                print(f"step {step} loss {loss.item():.4f} perplexity {math.exp(loss.item()):.1f} "
                      f"(world {world}, {device}, FSDP2)", flush=True)
            if step == last:
                break
        epoch += 1
    whole = get_model_state_dict(model, options=StateDictOptions(full_state_dict=True, cpu_offload=True))
    if rank == 0 and a.out:
        save(whole, a.out)
    if a.balanced:
        bn.finish()
    dist.destroy_process_group()


if __name__ == "__main__":
    start(arguments, reference, train)
