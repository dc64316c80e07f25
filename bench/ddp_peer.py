#!/usr/bin/env python3
"""PyTorch DDP doing what `balancenet train` does, for side-by-side comparisons (bench/vs_ddp.sh, and with
--model resnet18 --data imagefolder:DIR, bench/resnet_imagefolder.sh); with --balancenet, the same script
with balancenet.torch's five lines (marked "bn:"), run by `balancenet launch` (bench/python_vs_ddp.sh).

Run with the project's torch (.venv/, the one balancenet links) under torchrun, e.g.
    .venv/bin/python -m torch.distributed.run --nproc_per_node 4 bench/ddp_peer.py \\
        --global-batch 128 --steps 200 --node-speed 100,100,100,25 --out ddp.json

Same model (the zoo's cnn: Keras mnist_cnn), same data (Fashion-MNIST IDX, same normalisation), same
SGD settings, an equal split of each global batch (DDP's only option), gloo over loopback, one thread
per worker. Heterogeneity is emulated with balancenet's semantics: --slowdown s makes a node's compute
last s times its real compute, --node-speed v makes it last at least b / v seconds. DDP starts its
all-reduce from backward hooks, so the sleep goes before backward, sized from the node's previous
step's compute (forward and backward up to its last gradient, not the sync DDP's backward waits for at
its end; the first step runs unslowed), scaled to this step's share. Writes a summary JSON in balancenet's
summary.json terms.

--device cuda (bench/gpu_hetero.sh): the model and each batch on cuda:LOCAL_RANK (modulo the GPUs this machine
has: ranks beyond them share), every step timed after torch.cuda.synchronize(). --backend auto takes NCCL where
every local rank has a GPU of its own and Gloo otherwise: NCCL refuses two ranks on one GPU ("Duplicate GPU
detected"), so ranks sharing a GPU all-reduce their CUDA gradients through Gloo, which copies them via the host.
--model gpt --data text:FILE: nanoGPT's model (bench/gpt_torch_step.py's, from tests/unit/models/gpt_reference.py)
on the file's bytes cut into windows of --context tokens as balancenet's text: source cuts them (docs/data.md);
--optimizer adam is AdamW with weight decay 0, balancenet's --optimizer adam. --preload decodes an image folder
once before training (not timed) instead of at every step on the worker's one thread.

--balancenet: bn.init() joins the job `balancenet launch` started, bn.attach() the weighted comm hook,
bn.DataLoader this rank's live share of each global batch (the same permutation, so the same samples per
step as the plain side), bn.step_done() after each step; the pacing above is the script's on both sides,
sized from the rank's current share (bn.split()[rank], which the policy changes between steps).
"""
import argparse
import contextlib
import gzip
import json
import os
import sys
import time

# One BLAS thread, as balancenet's workers use: torch.set_num_threads(1) leaves an OpenBLAS pool at the
# core count (measured), and OpenBLAS reads this variable only when it is loaded, i.e. at import torch.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np
import torch
import torch.distributed as dist
import torch.utils.checkpoint
from torch import nn

PIXEL_MEAN, PIXEL_STD = 0.2860, 0.3530  # balancenet's data/MnistDataset.h (Fashion-MNIST)


def read_idx(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        data = f.read()
    dims = data[3]
    shape = [int.from_bytes(data[4 + 4 * i:8 + 4 * i], "big") for i in range(dims)]
    return np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * dims).reshape(shape)


def load(data_dir, prefix):
    def find(base):
        for name in (base, base + ".gz"):
            if os.path.exists(os.path.join(data_dir, name)):
                return os.path.join(data_dir, name)
        raise SystemExit(f"ddp_peer: {base} not found in {data_dir}")
    images = read_idx(find(f"{prefix}-images-idx3-ubyte")).astype(np.float32) / 255.0
    labels = read_idx(find(f"{prefix}-labels-idx1-ubyte")).astype(np.int64)
    x = (torch.from_numpy(images) - PIXEL_MEAN) / PIXEL_STD
    return x.unsqueeze(1), torch.from_numpy(labels)


MASK64 = (1 << 64) - 1


def splitmix64(x):
    x = (x + 0x9E3779B97F4A7C15) & MASK64
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & MASK64
    return x ^ (x >> 31)


def mt19937_64(seed):
    """std::mt19937_64's output sequence (the C++ standard fixes it)."""
    n, m = 312, 156
    state = [seed & MASK64]
    for i in range(1, n):
        state.append((6364136223846793005 * (state[-1] ^ (state[-1] >> 62)) + i) & MASK64)
    while True:
        for i in range(n):
            x = (state[i] & 0xFFFFFFFF80000000) | (state[(i + 1) % n] & 0x7FFFFFFF)
            state[i] = state[(i + m) % n] ^ (x >> 1) ^ (0xB5026F5AA96619E9 if x & 1 else 0)
        for y in state:
            y ^= (y >> 29) & 0x5555555555555555
            y ^= (y << 17) & 0x71D67FFFEDA60000
            y ^= (y << 37) & 0xFFF7EEE000000000
            yield y ^ (y >> 43)


def epoch_permutation(size, seed, epoch):
    """balancenet's GlobalPermutationSampler: the same samples in the same order, epoch by epoch."""
    gen = mt19937_64(splitmix64(seed ^ splitmix64(epoch)))
    perm = list(range(size))
    for i in range(size - 1, 0, -1):
        bound = i + 1
        threshold = (-bound) % (1 << 64) % bound
        r = next(gen)
        while r < threshold:
            r = next(gen)
        j = r % bound
        perm[i], perm[j] = perm[j], perm[i]
    return torch.tensor(perm)


def cnn():
    return nn.Sequential(nn.Conv2d(1, 32, 3), nn.ReLU(), nn.Conv2d(32, 64, 3), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Dropout(0.25), nn.Flatten(), nn.Linear(9216, 128), nn.ReLU(), nn.Dropout(0.5),
                         nn.Linear(128, 10))


def resnet18(channels, size, width=1.0):
    """The zoo's resnet18 (models/ResNet.cpp): torchvision's, with the CIFAR stem (3x3, stride 1, no max-pool)
    below 64 pixels, `channels` input channels, every stage's channels times `width` (the zoo's --width,
    rounded as its ModelOptions::scaled rounds)."""
    from torchvision.models import resnet18 as tv_resnet18
    from torchvision.models.resnet import BasicBlock
    model = tv_resnet18(num_classes=10)
    scaled = lambda c: max(1, int(c * width + 0.5))  # llround of a positive number
    stem = scaled(64)
    if size < 64:
        model.conv1, model.maxpool = nn.Conv2d(channels, stem, 3, 1, 1, bias=False), nn.Identity()
    else:
        model.conv1 = nn.Conv2d(channels, stem, 7, 2, 3, bias=False)
    if width != 1.0:  # torchvision fixes the stages at 64..512: rebuilt with its own builder at the scaled sizes
        model.bn1, model.inplanes = nn.BatchNorm2d(stem), stem
        model.layer1 = model._make_layer(BasicBlock, scaled(64), 2)
        model.layer2 = model._make_layer(BasicBlock, scaled(128), 2, stride=2)
        model.layer3 = model._make_layer(BasicBlock, scaled(256), 2, stride=2)
        model.layer4 = model._make_layer(BasicBlock, scaled(512), 2, stride=2)
        model.fc = nn.Linear(scaled(512), 10)
        for m in model.modules():  # torchvision's initialisation, which the rebuilt layers missed
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
            elif isinstance(m, nn.BatchNorm2d):
                nn.init.constant_(m.weight, 1)
                nn.init.constant_(m.bias, 0)
    return model


class Checkpointed(nn.Module):
    """torch.utils.checkpoint around one block, as a DDP user trades compute for memory (the non-reentrant form,
    the one DDP takes without static_graph)."""

    def __init__(self, block):
        super().__init__()
        self.block = block

    def forward(self, x):
        return torch.utils.checkpoint.checkpoint(self.block, x, use_reentrant=False)


def recompute_blocks(model):
    """resnet18's residual blocks checkpointed one by one: the zoo's blocks, as --recompute blocks cuts them."""
    for layer in (model.layer1, model.layer2, model.layer3, model.layer4):
        for i in range(len(layer)):
            layer[i] = Checkpointed(layer[i])
    return model


def make_model(name, size, width=1.0):
    """--model: the zoo's cnn (at width 1 only, as bench scripts run it) or resnet18 at --width."""
    if name == "cnn":
        if width != 1.0:
            raise SystemExit("ddp_peer: --width applies to resnet18 only")
        return cnn()
    return resnet18(1, size, width)


class FolderImages:
    """x[idx] of an image folder, decoded when indexed (on this worker's thread, as balancenet's loader with
    one thread): torchvision's ImageFolder, gray images kept one-channel as balancenet keeps them."""

    def __init__(self, root, transform):
        from PIL import Image
        from torchvision import datasets
        self.set = datasets.ImageFolder(root, transform, loader=lambda path: Image.open(path).convert("L"))
        self.targets = torch.tensor(self.set.targets)

    def __len__(self):
        return len(self.set)

    def __getitem__(self, idx):
        if isinstance(idx, int):  # one sample (bn.DataLoader's reads)
            return self.set[idx][0]
        indices = range(*idx.indices(len(self))) if isinstance(idx, slice) else idx.tolist()
        return torch.stack([self.set[i][0] for i in indices])


def image_folder(root, size, split, augment, preload=False):
    """--data imagefolder:DIR: DIR/<split>, resized to size, with --augment crop,flip's transforms (padding 4);
    with preload, every image decoded now into one tensor (no augmentation then)."""
    from torchvision import transforms
    steps = [transforms.Resize(size)]
    if augment:
        steps += [transforms.RandomCrop(size, padding=4), transforms.RandomHorizontalFlip()]
    steps += [transforms.ToTensor(), transforms.Normalize([PIXEL_MEAN], [PIXEL_STD])]
    x = FolderImages(os.path.join(root, split), transforms.Compose(steps))
    if preload:
        return x[0:len(x)], x.targets
    return x, x.targets


def text_windows(path, context):
    """--data text:FILE: the bytes as tokens, sample i the window [i*T, i*T + T) and its targets the next bytes
    (balancenet's text: source, docs/data.md; no held-out part: these runs evaluate nothing)."""
    data = torch.from_numpy(np.fromfile(path, dtype=np.uint8).astype(np.int64))
    n = (len(data) - 1) // context
    return data[:n * context].view(n, context), data[1:n * context + 1].view(n, context)


def gpt(context, layers, heads, embed):
    """--model gpt: bench/gpt_torch_step.py's DeviceGPT (nanoGPT's, vocabulary 256, dropout 0)."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from gpt_torch_step import DeviceGPT
    return DeviceGPT(256, context, layers, heads, embed)


def pick_device(name):
    """--device: cpu, cuda (cuda:LOCAL_RANK, modulo the GPUs here) or cuda:N."""
    if name == "cpu":
        return torch.device("cpu")
    if not torch.cuda.is_available():
        raise SystemExit(f"ddp_peer: --device {name}, and torch sees no GPU")
    if name == "cuda":
        return torch.device("cuda", int(os.environ.get("LOCAL_RANK", "0")) % torch.cuda.device_count())
    return torch.device(name)


def pick_backend(name, device):
    """--backend auto: NCCL where every local rank has a GPU of its own, else Gloo (NCCL refuses two ranks on one
    GPU; Gloo all-reduces CUDA tensors through host copies)."""
    if name != "auto":
        return name
    local_world = int(os.environ.get("LOCAL_WORLD_SIZE", "1"))
    return "nccl" if device.type == "cuda" and local_world <= torch.cuda.device_count() else "gloo"


class Samples(torch.utils.data.Dataset):
    """(x[i], y[i]): the map-style dataset bn.DataLoader reads one sample at a time."""

    def __init__(self, x, y):
        self.x, self.y = x, y

    def __len__(self):
        return len(self.y)

    def __getitem__(self, i):
        return self.x[i], self.y[i]


def per_node(text, world):
    values = [float(v) for v in text.split(",")] if text else []
    if values and len(values) != world:
        raise SystemExit(f"ddp_peer: {len(values)} values for {world} nodes")
    return values


def schedule(base, changes, world):
    """balancenet's STEP=v1,v2;... schedules: the factors in force at each step."""
    points = [(0, per_node(base, world))]
    for change in filter(None, (changes or "").split(";")):
        step, values = change.split("=")
        points.append((int(step), per_node(values, world)))
    points.sort()
    return lambda step: [v for s, v in points if s <= step][-1]


class GradientClock:
    """When this step's backward computed its last gradient. DDP's backward() also waits for the gradient
    all-reduce at its end: that wait is not compute (counted as compute, a fast rank's wait for a slow one
    would shorten its own pacing sleep, and the balancenet side's policy would see it as speed)."""

    def __init__(self, model, sync_device=None):
        self.last = 0.0
        self.sync_device = sync_device  # a GPU's gradients are done when its queue is, not when they are queued
        for parameter in model.parameters():
            parameter.register_hook(self.mark)

    def mark(self, grad):
        if self.sync_device is not None:
            torch.cuda.synchronize(self.sync_device)
        self.last = time.perf_counter()


def join(use_balancenet, backend="gloo"):
    """The job: torch.distributed's default group, or with --balancenet balancenet's session (bn.init() sets up
    the default group too). Returns the balancenet.torch module or None."""
    if not use_balancenet:
        dist.init_process_group(backend)
        return None
    import balancenet.torch as bn  # bn: 1 (`balancenet launch` puts the package on the path)
    bn.init()  # bn: 2
    return bn


def equal_shares(x, y, global_batch, seed, rank, world):
    """DDP's batches: this rank's equal slice of each global batch of balancenet's sample stream, and its size."""
    local = global_batch // world
    epoch, position = 0, 0
    order = epoch_permutation(len(x), seed, epoch)
    while True:
        if position + global_batch > len(order):  # the stream goes on into the next epoch's order
            epoch += 1
            order = torch.cat([order[position:], epoch_permutation(len(x), seed, epoch)])
            position = 0
        idx = order[position + rank * local:position + (rank + 1) * local]
        position += global_batch
        yield x[idx], y[idx], local


def balanced_shares(bn, x, y, global_batch, seed, rank):
    """balancenet's batches: this rank's live share of each global batch of the same stream, and its size."""
    loader = bn.DataLoader(Samples(x, y), global_batch=global_batch, seed=seed)  # bn: 4
    while True:  # one pass per iteration of the loader; the stream goes on
        for xs, ys in loader:
            yield xs, ys, bn.split()[rank]  # the split the policy chose for this step


def evaluate(model, x_test, y_test, rank, world, device=torch.device("cpu"), reduce_on=torch.device("cpu")):
    """Test accuracy, sharded over the ranks like balancenet's evaluation."""
    model.eval()
    begin, end = len(x_test) * rank // world, len(x_test) * (rank + 1) // world
    with torch.no_grad():
        correct = sum((model.module(x_test[i:min(i + 1000, end)].to(device)).argmax(1).cpu()
                       == y_test[i:min(i + 1000, end)]).sum().item() for i in range(begin, end, 1000))
    model.train()
    total = torch.tensor([float(correct)], device=reduce_on)
    dist.all_reduce(total)
    return total.item() / len(x_test)


def register_comm_hook(model, hook):
    """--comm-hook: one of DDP's shipped hooks on `model` (none: DDP's own float32 all-reduce)."""
    from torch.distributed.algorithms.ddp_comm_hooks import default_hooks, powerSGD_hook
    if hook == "none":
        return
    if hook in ("bf16", "fp16"):
        model.register_comm_hook(None, default_hooks.bf16_compress_hook if hook == "bf16"
                                 else default_hooks.fp16_compress_hook)
        return
    name, _, rank = hook.partition(":")
    if name != "powersgd" or (rank and not rank.isdigit()) or (rank and int(rank) < 1):
        raise SystemExit(f"ddp_peer: --comm-hook must be none, bf16, fp16 or powersgd[:RANK], not '{hook}'")
    state = powerSGD_hook.PowerSGDState(process_group=None, matrix_approximation_rank=int(rank or 1),
                                        start_powerSGD_iter=2)
    model.register_comm_hook(state, powerSGD_hook.powerSGD_hook)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--global-batch", type=int, default=128)
    p.add_argument("--steps", type=int, default=200)
    p.add_argument("--lr", type=float, default=0.05)
    p.add_argument("--momentum", type=float, default=0.9)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--slowdown", default="")
    p.add_argument("--slowdown-schedule", default="")
    p.add_argument("--node-speed", default="")
    p.add_argument("--speed-schedule", default="")
    p.add_argument("--eval-every", type=int, default=0)
    p.add_argument("--test-samples", type=int, default=0, help="evaluate on the first N test samples (0: all)")
    p.add_argument("--target-accuracy", type=float, default=0,
                   help="stop after the first evaluation at or above it (every rank sees the same accuracy)")
    p.add_argument("--data-dir", default="/usr/share/datasets/fashion-mnist")
    p.add_argument("--data", default="", help="imagefolder:DIR (DIR/train, DIR/val of gray images) instead of "
                   "--data-dir's IDX files, normalised with Fashion-MNIST's mean and std")
    p.add_argument("--image-size", type=int, default=28)
    p.add_argument("--augment", default="", help="crop,flip: RandomCrop(padding 4) and RandomHorizontalFlip")
    p.add_argument("--model", default="cnn", choices=["cnn", "resnet18", "gpt"])
    p.add_argument("--layers", type=int, default=6, help="gpt: blocks")
    p.add_argument("--heads", type=int, default=6, help="gpt: attention heads")
    p.add_argument("--embed", type=int, default=384, help="gpt: embedding width")
    p.add_argument("--context", type=int, default=0, help="gpt with --data text:FILE: tokens per window")
    p.add_argument("--optimizer", default="sgd", choices=["sgd", "adam"],
                   help="adam: AdamW with weight decay 0 (balancenet's --optimizer adam); sgd uses --momentum")
    p.add_argument("--device", default="cpu", help="cpu, cuda (cuda:LOCAL_RANK modulo the GPUs) or cuda:N")
    p.add_argument("--backend", default="auto", choices=["auto", "gloo", "nccl"],
                   help="auto: nccl where every local rank has a GPU of its own, else gloo")
    p.add_argument("--preload", action="store_true",
                   help="imagefolder: decode every image once before training (not timed; no --augment)")
    p.add_argument("--threads", type=int, default=1, help="torch's intra-op threads")
    p.add_argument("--precision", default="fp32", choices=["fp32", "bf16", "fp16"],
                   help="torch.autocast around the forward pass and loss in that type; fp16 with torch.amp.GradScaler "
                        "(what balancenet train --precision does; bench/precision_vs_torch.sh)")
    p.add_argument("--width", type=float, default=1.0, help="resnet18's channels times this (balancenet's --width)")
    p.add_argument("--balancenet", action="store_true",
                   help="balancenet.torch's five lines: live per-rank shares, the weighted comm hook (run under "
                   "`balancenet launch`)")
    p.add_argument("--comm-hook", default="none",
                   help="DDP's own gradient compression, the anchor a user picks: bf16, fp16 "
                        "(bf16_compress_hook, fp16_compress_hook) or powersgd[:RANK] (PowerSGD with error feedback "
                        "and warm start, rank 1 by default, compressing from the second step: its least "
                        "start_powerSGD_iter)")
    p.add_argument("--accumulate", type=int, default=1,
                   help="each rank's share in K micro-batches, DDP's no_sync before the last (cnn or resnet18, "
                        "fp32); paced, the sleep goes before the first pass, sized from the previous step's passes")
    p.add_argument("--recompute", action="store_true",
                   help="resnet18: every residual block under torch.utils.checkpoint (activations rebuilt in backward)")
    p.add_argument("--out", default="ddp.json")
    p.add_argument("--print-steps", action="store_true",
                   help="rank 0 prints 'step K/N' after every step (flushed), for scripts that act at a step")
    a = p.parse_args()
    if a.accumulate < 1 or (a.accumulate > 1 and (a.model == "gpt" or a.precision != "fp32" or a.balancenet)):
        raise SystemExit("ddp_peer: --accumulate K >= 1; above 1 only for the cnn or resnet18 in fp32, without "
                         "--balancenet")
    if a.recompute and a.model != "resnet18":
        raise SystemExit("ddp_peer: --recompute is for resnet18")

    torch.set_num_threads(a.threads)
    device = pick_device(a.device)
    if device.type == "cuda":
        torch.cuda.set_device(device)
    backend = pick_backend(a.backend, device)
    if a.model == "gpt" and not (a.data.startswith("text:") and a.context > 0):
        raise SystemExit("ddp_peer: --model gpt needs --data text:FILE and --context T")
    if a.model == "gpt" and a.eval_every:
        raise SystemExit("ddp_peer: --model gpt evaluates nothing (--eval-every 0)")
    if a.preload and a.augment:
        raise SystemExit("ddp_peer: --preload decodes once: no --augment")
    if a.balancenet and a.comm_hook != "none":
        raise SystemExit("ddp_peer: --comm-hook is DDP's own exchange; with --balancenet, balancenet's hook sums")
    bn = join(a.balancenet, backend)
    rank, world = dist.get_rank(), dist.get_world_size()
    if not bn and a.global_batch % world:
        raise SystemExit("ddp_peer: DDP splits the global batch equally: it must divide by the workers")
    slow = schedule(a.slowdown, a.slowdown_schedule, world) if a.slowdown else None
    pace = schedule(a.node_speed, a.speed_schedule, world) if a.node_speed else None

    if a.data.startswith("text:"):
        x_train, y_train = text_windows(a.data[len("text:"):], a.context)
        x_test, y_test = x_train[:0], y_train[:0]
    elif a.data.startswith("imagefolder:"):
        x_train, y_train = image_folder(a.data[len("imagefolder:"):], a.image_size, "train", bool(a.augment),
                                        a.preload)
        x_test, y_test = image_folder(a.data[len("imagefolder:"):], a.image_size, "val", False, a.preload)
    else:
        x_train, y_train = load(a.data_dir, "train")
        x_test, y_test = load(a.data_dir, "t10k")
    if a.test_samples:
        x_test, y_test = x_test[:a.test_samples], y_test[:a.test_samples]
    torch.manual_seed(a.seed)
    net = gpt(a.context, a.layers, a.heads, a.embed) if a.model == "gpt" else make_model(a.model, a.image_size, a.width)
    if a.recompute:
        net = recompute_blocks(net)
    cuda = device.type == "cuda"
    buckets = {}
    if a.comm_hook.startswith("powersgd"):
        # PowerSGD's hook starts its second all-reduce from the first one's callback, so with several buckets in
        # flight the ranks issue them in whatever order the callbacks complete; Gloo then pairs collectives of
        # different buckets ("Received data size doesn't match expected size" at its first compressed step, here).
        # One bucket (its first too: DDP's documented knob) keeps the order; the overlap with backward goes.
        dist._DEFAULT_FIRST_BUCKET_BYTES = 1 << 40
        buckets = {"bucket_cap_mb": 1 << 20}
    model = nn.parallel.DistributedDataParallel(net.to(device), device_ids=[device.index] if cuda else None,
                                                **buckets)
    register_comm_hook(model, a.comm_hook)
    if a.optimizer == "adam":
        opt = torch.optim.AdamW(model.parameters(), lr=a.lr, weight_decay=0.0)
    else:
        opt = torch.optim.SGD(model.parameters(), lr=a.lr, momentum=a.momentum)
    if bn:
        bn.attach(model, opt)  # bn: 3
        batches = balanced_shares(bn, x_train, y_train, a.global_batch, a.seed, rank)
    else:
        batches = equal_shares(x_train, y_train, a.global_batch, a.seed, rank, world)

    low = {"bf16": torch.bfloat16, "fp16": torch.float16}.get(a.precision)
    scaler = torch.amp.GradScaler(device.type) if a.precision == "fp16" else None
    evaluations, train_seconds, step_seconds = [], 0.0, []
    paced = cuda and bool(slow or pace)  # pacing needs the GPU's real compute: synchronised clocks
    gradients = GradientClock(model, device if paced else None)
    last_compute, last_share = 0.0, 1  # the previous step's real compute (no sleep, no sync) and its samples
    for step in range(a.steps):
        start = time.perf_counter()
        x, y, share = next(batches)
        x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)
        opt.zero_grad()
        if paced:
            torch.cuda.synchronize(device)
        forward_start = time.perf_counter()
        if a.accumulate == 1:  # (accumulated passes run their forwards below)
            with torch.autocast(device.type, dtype=low, enabled=low is not None):
                out = model(x)
                loss = nn.functional.cross_entropy(out.view(-1, out.size(-1)) if a.model == "gpt" else out,
                                                   y.view(-1) if a.model == "gpt" else y)
        if paced:
            torch.cuda.synchronize(device)
        forward = time.perf_counter() - forward_start
        compute = last_compute * share / last_share  # this step's real compute, estimated per sample
        if slow and last_compute > 0:
            time.sleep(max(0.0, (slow(step)[rank] - 1) * compute))
        elif pace and last_compute > 0:
            time.sleep(max(0.0, share / pace(step)[rank] - compute))
        backward_start = time.perf_counter()
        if a.accumulate > 1:
            # DDP's gradient accumulation: the share in passes, the all-reduce only from the last (no_sync before).
            loss = accumulate_share(model, x, y, a.accumulate)
        else:
            # DDP all-reduces from its hooks (a mean, or balancenet's weighted sum), waits at the end
            (scaler.scale(loss) if scaler else loss).backward()
        last_compute, last_share = forward + gradients.last - backward_start, share
        if scaler:
            scaler.step(opt)
            scaler.update()
        else:
            opt.step()
        if bn:
            bn.step_done(loss)  # bn: 5
        if cuda:
            torch.cuda.synchronize(device)  # the step's GPU work done, not only queued
        step_seconds.append(time.perf_counter() - start)
        train_seconds += step_seconds[-1]
        if a.print_steps and rank == 0:
            print(f"step {step + 1}/{a.steps}", flush=True)
        if a.eval_every and ((step + 1) % a.eval_every == 0 or step + 1 == a.steps):
            accuracy = evaluate(model, x_test, y_test, rank, world, device,
                                device if backend == "nccl" else torch.device("cpu"))  # not training time
            evaluations.append({"step": step + 1, "accuracy": accuracy, "train_seconds": train_seconds})
            if bn:
                bn.record_eval(accuracy)
            if a.target_accuracy and accuracy >= a.target_accuracy:
                break
    steps = len(step_seconds)
    if rank == 0:
        summary = {"framework": "balancenet.torch" if bn else "pytorch-ddp", "nodes": world, "steps": steps,
                   "device": str(device), "backend": backend, "model": a.model,
                   "global_batch": a.global_batch, "precision": a.precision, "train_seconds": train_seconds,
                   "samples_per_second": steps * a.global_batch / train_seconds,
                   "step_seconds": step_seconds,  # rank 0's wall time of each step (warm-up can be left out)
                   "evaluations": evaluations,
                   "final_accuracy": evaluations[-1]["accuracy"] if evaluations else None}
        if bn:
            summary.update(split=bn.split(), run_dir=bn.run_dir())
        with open(a.out + ".tmp", "w") as f:
            json.dump(summary, f, indent=2)
        os.replace(a.out + ".tmp", a.out)
    if bn:
        bn.finish()  # steps.csv, splits.csv, summary.json in the run directory (collective)
    dist.destroy_process_group()
    leave()


def accumulate_share(model, x, y, passes):
    """The share's mean loss as `passes` micro-batches whose gradients add up (each pass's summed loss over the
    share's size), DDP's all-reduce skipped (no_sync) for all but the last; returns the share's loss."""
    total = 0.0
    xs, ys = x.chunk(passes), y.chunk(passes)
    for i, (xi, yi) in enumerate(zip(xs, ys)):
        last = i == len(xs) - 1
        with (contextlib.nullcontext() if last else model.no_sync()):
            loss = nn.functional.cross_entropy(model(xi), yi, reduction="sum") / x.size(0)
            loss.backward()
        total += loss.detach()
    return total


def leave():
    """Everything is written: leave without the interpreter's teardown. torch 1.13 frees DDP's reducer with the
    GIL held, and the reducer's Gloo group joins its threads there; a Gloo thread still releasing a tensor that
    Python owns waits for the GIL: a hang at exit (seen once in the suite; on the testbed, 4 of T6's 8 ranks).
    Called at the end of main(), not after it: main()'s return frees the model, the reducer with it."""
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


if __name__ == "__main__":
    main()
