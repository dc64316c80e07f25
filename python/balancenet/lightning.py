"""balancenet.lightning: PyTorch Lightning's Trainer with each worker's live share of every global batch.

    from balancenet.lightning import BalancedStrategy
    trainer = L.Trainer(strategy=BalancedStrategy(global_batch=256), accelerator="cpu", devices=4)
    trainer.fit(model, datamodule)                     # your LightningModule and DataModule, unchanged

started with `balancenet launch --workers 4 train.py`. The strategy is Lightning's DDPStrategy with balancenet's
three parts put where Lightning has its own: the weighted all-reduce as the DDP module's comm hook, the training
DataLoader rebuilt as this rank's share (bn.DataLoader around the user's dataset and collate_fn), and the step's
timings to the orchestrator after each optimizer step, which may re-split the next. docs/lightning.md has the rest.
"""
import torch
from lightning.pytorch.strategies import DDPStrategy
from lightning.pytorch.trainer.states import RunningStage, TrainerFn

from . import _frameworks
from . import torch as bn

_frameworks.check_version("lightning")

# What Lightning's DDPStrategy takes that balancenet's hook replaces.
_HOOK_ARGUMENTS = ("ddp_comm_hook", "ddp_comm_state", "ddp_comm_wrapper", "model_averaging_period")


class BalancedStrategy(DDPStrategy):
    """DDP whose workers each train their measured share of every global batch of `global_batch` samples (None:
    the training DataLoader's batch_size times the workers, what plain DDP trains), the gradient exactly the
    whole batch's. `seed` orders the samples (one permutation per pass). Other arguments go to DDPStrategy
    (find_unused_parameters, static_graph, timeout, ...), except the comm hook's, which balancenet's takes."""

    strategy_name = "balanced"

    def __init__(self, global_batch=None, seed=0, **ddp_arguments):
        taken = [name for name in _HOOK_ARGUMENTS if ddp_arguments.get(name) is not None]
        if taken:
            raise bn.UsageError(f"BalancedStrategy: {taken[0]} cannot be given: balancenet's weighted all-reduce is the "
                                f"DDP module's comm hook")
        if global_batch is not None and (isinstance(global_batch, bool) or not isinstance(global_batch, int)
                                         or global_batch < 1):
            raise bn.UsageError(f"BalancedStrategy: global_batch must be a positive integer, got {global_batch!r}")
        super().__init__(**ddp_arguments)
        self._global_batch = global_batch
        self._seed = seed
        self._loader = None  # the rebuilt training loader

    def setup_distributed(self):
        # balancenet's session first: it joins the job `balancenet launch` started and initialises torch's default
        # group from the same environment, which Lightning then finds formed.
        _frameworks.require_launched("BalancedStrategy", self.num_nodes * self.num_processes)
        session = bn.init()
        if session.elastic:
            raise bn.UsageError("BalancedStrategy: --elastic is not available under Lightning yet (its loop cannot "
                                "take a step again); leave --elastic out")
        super().setup_distributed()

    def configure_ddp(self):
        super().configure_ddp()  # Lightning's DistributedDataParallel (its own hooks only on GPUs, and none given)
        bn.attach(self.model)

    def process_dataloader(self, dataloader):
        trainer = self.lightning_module.trainer
        if trainer.state.fn != TrainerFn.FITTING or trainer.state.stage != RunningStage.TRAINING:
            return dataloader  # validation, test and prediction keep Lightning's own loaders
        if self._loader is not None:  # reload_dataloaders_every_n_epochs: the same data goes on in the same stream
            if getattr(dataloader, "dataset", None) is not self._loader.dataset:
                raise bn.UsageError("BalancedStrategy: the reloaded training DataLoader has another dataset; one "
                                    "dataset per fit")
            return self._loader
        if not isinstance(dataloader, torch.utils.data.DataLoader):
            raise bn.UsageError(f"BalancedStrategy: the training data must be a torch DataLoader, got "
                                f"{type(dataloader).__name__}")
        use_distributed = trainer._accelerator_connector.use_distributed_sampler
        self._loader = _frameworks.share_loader(dataloader, self._global_batch, self._seed, "BalancedStrategy",
                                                refuse_distributed_sampler=not use_distributed)
        return self._loader

    def optimizer_step(self, optimizer, closure, model=None, **kwargs):
        output = super().optimizer_step(optimizer, closure, model, **kwargs)
        # The step's timings to the orchestrator (its loss: the closure's, this rank's); the next step may be split
        # otherwise. Every optimizer step of Lightning's loop is one of balancenet's.
        bn.step_done(output if isinstance(output, torch.Tensor) else None)
        return output
