#!/usr/bin/env python3
"""balancenet.torch's cost per step with no model: bn.DataLoader's iteration + bn.step_done() against plain
iteration of a torch DataLoader over the same tiny TensorDataset, batches of the same size (issue 28).

    PYTHONPATH=build/python .venv/bin/python bench/python_step_overhead.py --run-dir /tmp/o1 --out o1.json
    build/apps/balancenet launch --workers 4 --threads 1 --policy equal --run-dir /tmp/o4 \\
        bench/python_step_overhead.py --out o4.json

Alone, bn.init() makes a job of this one process; under the launcher every rank measures, and the bn side's
steps include the orchestrator's gather every --rebalance-every steps (a collective: it also waits for the
slowest rank; --policy equal keeps the shares, so the plain side's batch size, fixed). The two sides
alternate in rounds so that a change in the machine's load falls on both. Rank 0 prints the medians and
means per step in microseconds for every rank and writes them to --out.
"""
import argparse
import json
import os
import statistics
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, TensorDataset

import balancenet.torch as bn


def forever(loader):
    while True:
        yield from loader


def timed(batches, steps, after=None):
    """Microseconds of each of `steps` steps: the next batch, then `after` (the bn side's step_done)."""
    times = []
    for _ in range(steps):
        start = time.perf_counter()
        next(batches)
        if after:
            after()
        times.append((time.perf_counter() - start) * 1e6)
    return times


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--samples", type=int, default=4096)
    p.add_argument("--global-batch", type=int, default=64)
    p.add_argument("--steps", type=int, default=500, help="steps per side and round")
    p.add_argument("--rounds", type=int, default=4)
    p.add_argument("--run-dir", default=None, help="alone: bn.init()'s run directory (launched: --run-dir's)")
    p.add_argument("--out", default="step_overhead.json")
    a = p.parse_args()

    torch.set_num_threads(1)
    bn.init(run_dir=a.run_dir)
    rank, world = bn.rank(), bn.world_size()
    g = torch.Generator().manual_seed(0)
    data = TensorDataset(torch.randn(a.samples, 8, generator=g), torch.randint(0, 10, (a.samples,), generator=g))
    balanced = forever(bn.DataLoader(data, global_batch=a.global_batch, seed=0))
    share = bn.split()[rank]  # the split exists once the DataLoader gave the job its global batch
    plain = forever(DataLoader(data, batch_size=share, shuffle=True, drop_last=True))
    timed(plain, 20), timed(balanced, 20, bn.step_done)  # warm-up: first batches, first decisions
    plain_us, bn_us = [], []
    for _ in range(a.rounds):
        plain_us += timed(plain, a.steps)
        bn_us += timed(balanced, a.steps, bn.step_done)
    if bn.split()[rank] != share:
        raise SystemExit(f"python_step_overhead: the split changed to {bn.split()}: launch with --policy equal")
    mine = {"rank": rank, "share": share, "steps": len(bn_us),
            "plain_median_us": statistics.median(plain_us), "bn_median_us": statistics.median(bn_us),
            "plain_mean_us": statistics.mean(plain_us), "bn_mean_us": statistics.mean(bn_us),
            "bn_p90_us": statistics.quantiles(bn_us, n=10)[-1]}
    mine["median_overhead_us"] = mine["bn_median_us"] - mine["plain_median_us"]
    mine["mean_overhead_us"] = mine["bn_mean_us"] - mine["plain_mean_us"]
    ranks = [None] * world
    dist.all_gather_object(ranks, mine)
    if rank == 0:
        print(f"world {world}, global batch {a.global_batch}, {len(bn_us)} steps per side (us per step)")
        print("| rank | share | plain median | bn median | overhead (median) | plain mean | bn mean "
              "| overhead (mean) | bn p90 |")
        print("|---|---|---|---|---|---|---|---|---|")
        for r in ranks:
            print(f"| {r['rank']} | {r['share']} | {r['plain_median_us']:.1f} | {r['bn_median_us']:.1f} "
                  f"| {r['median_overhead_us']:.1f} | {r['plain_mean_us']:.1f} | {r['bn_mean_us']:.1f} "
                  f"| {r['mean_overhead_us']:.1f} | {r['bn_p90_us']:.1f} |")
        result = {"world": world, "global_batch": a.global_batch, "ranks": ranks}
        with open(a.out + ".tmp", "w") as f:
            json.dump(result, f, indent=2)
        os.replace(a.out + ".tmp", a.out)
    bn.finish()


if __name__ == "__main__":
    main()
