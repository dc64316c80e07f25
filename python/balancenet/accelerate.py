"""balancenet.accelerate: an Accelerate script with each worker's live share of every global batch, in one call
after accelerator.prepare():

    model, optimizer = accelerator.prepare(model, optimizer)
    loader = balancenet.accelerate.balance(accelerator, model, optimizer, train_loader, global_batch=256)
    for x, y in loader:                                  # this rank's share, on accelerator.device
        with accelerator.accumulate(model):
            loss = F.cross_entropy(model(x), y); accelerator.backward(loss); optimizer.step(); optimizer.zero_grad()

started with `balancenet launch --workers 4 train.py`. The training DataLoader is the script's own, given to
balance() instead of to prepare(): Accelerate's would shard every batch equally. docs/accelerate.md has the rest.
"""
from accelerate.data_loader import DataLoaderDispatcher, DataLoaderShard
from accelerate.utils import send_to_device
from torch.nn.parallel import DistributedDataParallel

from . import _frameworks
from . import torch as bn

_frameworks.check_version("accelerate")


class _OnDevice:
    """The balanced loader, its batches moved to the accelerator's device as Accelerate's own loader does."""

    def __init__(self, loader, device):
        self.loader, self.device = loader, device

    def __len__(self):
        return len(self.loader)

    def __iter__(self):
        for batch in self.loader:
            yield send_to_device(batch, self.device, non_blocking=True)

    def state_dict(self):
        return self.loader.state_dict()

    def load_state_dict(self, state):
        self.loader.load_state_dict(state)


def balance(accelerator, model, optimizer, train_loader, global_batch=None, seed=0):
    """Gives the prepared DDP `model` balancenet's weighted all-reduce, ends a balancenet step after each real
    step of `optimizer` (Accelerate's skips the ones inside gradient accumulation), and returns `train_loader`
    (the script's torch DataLoader, not prepared) as this rank's share of every global batch of `global_batch`
    samples (None: its batch_size times the workers), on accelerator.device."""
    _frameworks.require_launched("balancenet.accelerate", accelerator.num_processes)
    session = bn.init()
    if session.elastic:
        raise bn.UsageError("balancenet.accelerate: --elastic is not available for Accelerate scripts yet")
    if isinstance(train_loader, (DataLoaderShard, DataLoaderDispatcher)):
        raise bn.UsageError("balancenet.accelerate.balance() takes the training DataLoader as the script made it, "
                            "not the one accelerator.prepare() returned (that one shards every batch equally)")
    if isinstance(model, DistributedDataParallel):
        bn.attach(model)
    elif bn.world_size() > 1:
        raise bn.UsageError(f"balancenet.accelerate runs on DDP, but accelerator.prepare() made a {type(model).__name__} "
                            f"(FSDP and DeepSpeed shard each worker's batch equally)")
    inner = getattr(optimizer, "optimizer", optimizer)  # Accelerate's AcceleratedOptimizer wraps the torch one
    inner.register_step_post_hook(lambda *_: bn.step_done())
    shared = _frameworks.share_loader(train_loader, global_batch, seed, "balancenet.accelerate")
    return _OnDevice(shared, accelerator.device)
