"""balancenet.transformers: Hugging Face's Trainer with each worker's live share of every global batch.

    from balancenet.transformers import BalancedTrainer
    trainer = BalancedTrainer(model=model, args=TrainingArguments(...), train_dataset=data, global_batch=64)
    trainer.train()

started with `balancenet launch --workers 4 train.py`. The same TrainingArguments as for Trainer; the batch of a
step is `global_batch` samples over all workers (per_device_train_batch_size only sets it when global_batch is
not given: that times the workers), times gradient_accumulation_steps. docs/transformers.md has the rest.

How the gradient stays exactly the whole batch's: Trainer divides each rank's summed loss by the number of items
(tokens, or labels) in the whole step (num_items_in_batch, counted across workers when
average_tokens_across_devices, which BalancedTrainer keeps on) and multiplies it by the world size for DDP's
average; such a loss is right whatever the split, and the buckets are summed with the world size divided out
("global" weighting). A model whose loss is a mean over its own batch (it takes no loss kwargs, or takes them and
averages anyway) gets each rank's share as its weight instead.
"""
import json
import os
import sys
from functools import partial

import torch
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader
from transformers import Trainer, TrainerCallback
from transformers.trainer_utils import PREFIX_CHECKPOINT_DIR, get_last_checkpoint, seed_worker

from . import _frameworks
from . import torch as bn

_frameworks.check_version("transformers")

_LOOP_FILE = "balancenet_loop.json"  # beside Trainer's own files in each checkpoint folder


class _StepDone(TrainerCallback):
    """Trainer's optimizer step is balancenet's step: its timings go to the orchestrator, which may re-split."""

    def on_step_end(self, args, state, control, **kwargs):
        bn.step_done()


class BalancedTrainer(Trainer):
    """transformers.Trainer whose workers each train their measured share of every global batch of
    `global_batch` samples (None: per_device_train_batch_size times the workers), ordered by `seed` (one
    permutation of the training set per pass). Started by `balancenet launch`; any other launcher of several
    processes is refused with one line. Everything else is Trainer's."""

    def __init__(self, *args, global_batch=None, seed=0, **kwargs):
        world = int(os.environ.get("WORLD_SIZE", "1"))
        _frameworks.require_launched("BalancedTrainer", world)
        session = bn.init()
        if session.elastic:
            raise bn.UsageError("BalancedTrainer: --elastic is not available under transformers' Trainer yet")
        super().__init__(*args, **kwargs)
        if self.is_deepspeed_enabled or self.is_fsdp_enabled:
            raise bn.UsageError("BalancedTrainer runs on DDP: DeepSpeed and FSDP shard each worker's batch equally; "
                                "leave --deepspeed/--fsdp out")
        if not self.args.average_tokens_across_devices:
            # Each rank's loss would be a mean over its own tokens: exact only for equal token counts per sample.
            print("balancenet: BalancedTrainer counts the step's items across workers "
                  "(average_tokens_across_devices=True), so that the loss is the whole batch's",
                  file=sys.stderr, flush=True)
            self.args.average_tokens_across_devices = True
        # Trainer's skip of trained batches would read the stream again; the loader's restored state knows where
        # it is (see get_train_dataloader).
        self.args.ignore_data_skip = True
        self._global_batch, self._seed = global_batch, seed
        self._loader, self._attached, self._resume_from = None, False, None
        self.add_callback(_StepDone())

    def train(self, resume_from_checkpoint=None, *args, **kwargs):
        if resume_from_checkpoint is True:
            resume_from_checkpoint = get_last_checkpoint(self.args.output_dir)
        self._resume_from = resume_from_checkpoint
        return super().train(resume_from_checkpoint, *args, **kwargs)

    def get_train_dataloader(self):
        if self._loader is not None:
            return self._loader
        if self.train_dataset is None:
            raise bn.UsageError("BalancedTrainer: training requires a train_dataset")
        args = self.args
        plain = DataLoader(self.train_dataset, batch_size=args.per_device_train_batch_size, shuffle=True,
                           collate_fn=self._get_collator_with_removed_columns(self.data_collator, "training"),
                           num_workers=args.dataloader_num_workers, pin_memory=args.dataloader_pin_memory,
                           persistent_workers=args.dataloader_persistent_workers and args.dataloader_num_workers > 0,
                           prefetch_factor=args.dataloader_prefetch_factor if args.dataloader_num_workers else None,
                           worker_init_fn=partial(seed_worker, num_workers=args.dataloader_num_workers,
                                                  rank=args.process_index))
        self._loader = _frameworks.share_loader(plain, self._global_batch, self._seed, "BalancedTrainer")
        if self._resume_from:
            self._restore_loop(self._resume_from)
        return self._loader

    def _restore_loop(self, checkpoint):
        path = os.path.join(checkpoint, _LOOP_FILE)
        if not os.path.exists(path):
            raise bn.UsageError(f"BalancedTrainer: {checkpoint} has no {_LOOP_FILE}: it was not written by "
                                f"BalancedTrainer, so where its data stream stood is unknown")
        with open(path) as f:
            self._loader.load_state_dict(json.load(f))
        # The random state as the uninterrupted run had it after that step (dropout), as Trainer does at an epoch's
        # start: with its data skip off, it would not.
        self._load_rng_state(checkpoint)

    def _load_optimizer_and_scheduler(self, checkpoint):
        # Trainer maps the optimizer's state to args.device, which Accelerate makes "cpu:0" on a CPU worker of a
        # job of several processes, a place torch.load cannot restore to ("don't know how to restore data location"):
        # plain Trainer fails to resume there alike. The same state, mapped to "cpu".
        device = self.args.device
        if device.type != "cpu" or device.index is None:
            return super()._load_optimizer_and_scheduler(checkpoint)
        self.args.__dict__["_setup_devices"] = torch.device("cpu")  # TrainingArguments.device's cached value
        try:
            return super()._load_optimizer_and_scheduler(checkpoint)
        finally:
            self.args.__dict__["_setup_devices"] = device

    def training_step(self, model, inputs, num_items_in_batch=None):
        if not self._attached:
            self._attach(model, num_items_in_batch, inputs)
        return super().training_step(model, inputs, num_items_in_batch)

    def _attach(self, model, num_items_in_batch, inputs):
        if isinstance(model, DistributedDataParallel):
            counted = num_items_in_batch is not None and (self.model_accepts_loss_kwargs or self.compute_loss_func)
            # Trainer multiplies a loss it counted the items of by the world size, for DDP's average.
            multiplier = self.accelerator.num_processes if counted and self.args.average_tokens_across_devices else 1
            globally = counted and self._loss_follows_the_count(model.module, inputs, num_items_in_batch)
            bn.attach(model, weighting="global" if globally else "share", loss_multiplier=multiplier)
        elif bn.world_size() > 1:
            raise bn.UsageError(f"BalancedTrainer runs on DDP, but Trainer prepared a {type(model).__name__}")
        self._attached = True

    def _loss_follows_the_count(self, module, inputs, count):
        """Whether the model divides its loss by num_items_in_batch. Trainer assumes so of every model whose forward
        takes **kwargs, but some take them and average on their own (GPT2ForSequenceClassification's mean cross
        entropy): the weights must follow what the loss is. Two forward passes of the first batch, in eval mode and
        on a copy of the random state, so that training goes on as it would have."""
        if self.compute_loss_func is not None:
            return True  # the user's loss function receives the count to divide by
        inputs = self._prepare_inputs(inputs)
        was_training = module.training
        with torch.random.fork_rng(devices=[]), torch.no_grad():
            module.eval()
            try:
                once = self.compute_loss(module, dict(inputs), num_items_in_batch=count)
                twice = self.compute_loss(module, dict(inputs), num_items_in_batch=count * 2)
            finally:
                module.train(was_training)
        return bool(torch.isclose(once, 2 * twice, rtol=1e-3))

    def _save_checkpoint(self, model, trial):
        super()._save_checkpoint(model, trial)
        if self.args.should_save:  # where the stream and the split stand, beside Trainer's own state
            folder = os.path.join(self._get_output_dir(trial=trial), f"{PREFIX_CHECKPOINT_DIR}-{self.state.global_step}")
            _frameworks.write_json_atomically(os.path.join(folder, _LOOP_FILE), self._loader.state_dict())
