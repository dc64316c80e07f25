"""What the framework integrations (balancenet.lightning, balancenet.transformers, balancenet.accelerate) share: the
version check at import, a framework's training DataLoader rebuilt as this rank's share of every global batch, and
the one line that says so. The weighting, the sampler and the timings stay balancenet.torch's: one copy of each."""
import json
import os
import sys
from importlib.metadata import PackageNotFoundError, version

from torch.utils.data import BatchSampler, IterableDataset, RandomSampler, SequentialSampler
from torch.utils.data.distributed import DistributedSampler

from . import torch as bn

# The releases the tests run (requirements-test.txt): another one may work, and is said to be untested.
TESTED = {"lightning": (2, 6), "transformers": (5, 17), "accelerate": (1, 15)}

# What a rebuilt loader keeps of the user's torch DataLoader: how it reads, never which samples.
_KEPT = ("num_workers", "collate_fn", "pin_memory", "timeout", "worker_init_fn", "multiprocessing_context",
         "prefetch_factor", "persistent_workers", "pin_memory_device", "in_order")


def _minor(text):
    parts = (text.split("+")[0].split(".") + ["0"])[:2]
    return tuple(int("".join(ch for ch in part if ch.isdigit()) or 0) for part in parts)


def check_version(package):
    """One line on stderr when the installed `package` is not the release balancenet was tested with."""
    try:
        found = version(package)
    except PackageNotFoundError:
        return
    tested = TESTED[package]
    if _minor(found) != tested:
        print(f"balancenet: {package} {found} is installed; balancenet.{package} is tested with {package} "
              f"{tested[0]}.{tested[1]}.x (requirements-test.txt): other releases are untested",
              file=sys.stderr, flush=True)


def _is_plain(sampler, dataset):
    """A sampler that only orders the whole dataset (torch's own, or the DistributedSampler a framework put in):
    replacing it loses nothing the user chose but the order."""
    if type(sampler) is RandomSampler:
        return not sampler.replacement and sampler.num_samples == len(dataset)
    return type(sampler) in (SequentialSampler, DistributedSampler)


def share_loader(loader, global_batch, seed, who, refuse_distributed_sampler=False):
    """The training `loader` (a torch DataLoader) as a bn.DataLoader over the same dataset: its collate_fn,
    num_workers, pin_memory and the rest kept, its batch_size and sampler replaced by this rank's share of each
    global batch (`global_batch`; None: the loader's batch_size times the workers, what DDP would train). A sampler
    or batch sampler of the user's own cannot be honoured and is refused with one line, as is an IterableDataset."""
    dataset = loader.dataset
    if isinstance(dataset, IterableDataset):
        raise bn.UsageError(f"{who}: the training data is an IterableDataset ({type(dataset).__name__}): it has no "
                            f"indices to share out between workers; give a map-style Dataset (__len__, __getitem__)")
    if loader.batch_size is None or type(loader.batch_sampler) is not BatchSampler:
        raise bn.UsageError(f"{who}: the training DataLoader has a batch_sampler of its own "
                            f"({type(loader.batch_sampler).__name__}), which cannot be honoured: balancenet draws "
                            f"each worker's share of every global batch itself; give batch_size instead")
    sampler = loader.sampler
    if refuse_distributed_sampler and type(sampler) is DistributedSampler:
        raise bn.UsageError(f"{who}: the training DataLoader has its own DistributedSampler (an equal shard per "
                            f"worker), which fights the per-worker shares: remove it (balancenet shares the samples "
                            f"out)")
    if not _is_plain(sampler, dataset):
        raise bn.UsageError(f"{who}: the training DataLoader's sampler ({type(sampler).__name__}) cannot be honoured: "
                            f"balancenet draws every global batch from one permutation of the dataset; express the "
                            f"selection in the Dataset (e.g. torch.utils.data.Subset) and drop the sampler")
    if global_batch is None:
        global_batch = loader.batch_size * bn.world_size()
    kept = {name: getattr(loader, name) for name in _KEPT if hasattr(loader, name)}
    if not kept.get("num_workers"):
        kept.pop("prefetch_factor", None)  # torch refuses it without worker processes
        kept.pop("persistent_workers", None)
    shared = bn.DataLoader(dataset, global_batch, seed=seed, **kept)
    if bn.rank() == 0:
        print(f"balancenet: {who}: the training DataLoader's batch_size={loader.batch_size} and "
              f"{type(sampler).__name__} are replaced by each worker's share of every global batch of "
              f"{global_batch} (seed {seed}); its dataset, collate_fn, num_workers={kept.get('num_workers', 0)} and "
              f"pin_memory={kept.get('pin_memory', False)} are kept", file=sys.stderr, flush=True)
    return shared


def require_launched(who, world_size):
    """A framework that started `world_size` processes itself (Lightning's launcher, torchrun) without balancenet's
    launcher: one line saying what to run instead."""
    if world_size > 1 and "BALANCENET_JOB_CONFIG" not in os.environ:
        raise bn.UsageError(f"{who}: these {world_size} processes were not started by `balancenet launch`: run "
                            f"`balancenet launch --workers {world_size} your_script.py ...` (each host: "
                            f"--nnodes, --node-rank) so that balancenet can share out the batches")


def write_json_atomically(path, value):
    """`value` as JSON at `path`, whole or not at all: a crash while writing leaves no half file to resume from."""
    partial = f"{path}.{os.getpid()}.tmp"
    with open(partial, "w") as f:
        json.dump(value, f)
        f.flush()
        os.fsync(f.fileno())
    os.replace(partial, path)
