#!/usr/bin/env python3
"""The CPU time one all-reduce of a model's gradient costs each rank: the c_h of bench/testbed_vs_ddp.sh's limit.

One rank per process, started with torchrun's environment (RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT; on the
testbed GLOO_SOCKET_IFNAME=eth0), as bench/lib/peers.sh's run_peers starts them. Every rank all-reduces one
float32 tensor of the model's parameter count (the model of bench/ddp_peer.py, which is the zoo's: --comm
flat's single all-reduce) through c10d's ProcessGroupGloo, the ring that balancenet's default exchange and
DDP run, ITERATIONS times after one untimed call. The cost is the process's CPU time (every thread, Gloo's
included; time.process_time) over the timed calls, divided by ITERATIONS: waiting for a peer costs no CPU, so
it is the rank's own work whatever its peers' speed. Rank 0 writes OUT: {"parameters", "iterations",
"cpu_seconds": [one per rank]}, atomically.
"""
import argparse
import json
import os
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import torch
import torch.distributed as dist

import ddp_peer


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--model", default="cnn", choices=["cnn", "resnet18"])
    p.add_argument("--width", type=float, default=1.0)
    p.add_argument("--iterations", type=int, default=10)
    p.add_argument("--out", required=True)
    a = p.parse_args()
    if a.iterations < 1 or not a.width > 0:
        raise SystemExit("allreduce_cpu: --iterations must be >= 1 and --width > 0")
    torch.set_num_threads(1)
    parameters = sum(t.numel() for t in ddp_peer.make_model(a.model, 28, a.width).parameters())
    dist.init_process_group("gloo")
    gradient = torch.ones(parameters)
    dist.all_reduce(gradient)  # connects the pairs and warms the buffers: not part of one step's cost
    dist.barrier()
    start = time.process_time()
    for _ in range(a.iterations):
        dist.all_reduce(gradient)
    cost = torch.tensor([(time.process_time() - start) / a.iterations], dtype=torch.float64)
    costs = [torch.zeros(1, dtype=torch.float64) for _ in range(dist.get_world_size())]
    dist.all_gather(costs, cost)
    if dist.get_rank() == 0:
        with open(a.out + ".tmp", "w") as f:
            json.dump({"parameters": parameters, "iterations": a.iterations,
                       "cpu_seconds": [c.item() for c in costs]}, f, indent=2)
        os.replace(a.out + ".tmp", a.out)
    dist.barrier()
    os._exit(0)  # as ddp_peer.py: no interpreter teardown while a Gloo thread may still hold the GIL's attention


if __name__ == "__main__":
    main()
