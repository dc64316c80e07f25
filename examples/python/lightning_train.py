#!/usr/bin/env python3
"""A PyTorch Lightning script: a LightningModule and a LightningDataModule as people write them, trained by
`L.Trainer`. With --balanced its strategy is balancenet's (the one line marked "bn:"); without it, Lightning's own
"ddp". Run it with

    balancenet launch --workers 2 --node-speed 100,25 examples/python/lightning_train.py --balanced --steps 40

The data is a synthetic classification set (--data synthetic) or Fashion-MNIST from Debian's
dataset-fashion-mnist (--data fashion-mnist). --reference trains the same model on the same global batches in one
process with Lightning alone (no balancenet runtime): the tests compare the two.
"""
import argparse
import os

import lightning.pytorch as L
import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader

from example_data import datasets  # beside this script


def arguments():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--balanced", action="store_true", help="BalancedStrategy instead of Lightning's ddp")
    p.add_argument("--reference", action="store_true", help="one process on the whole global batches")
    p.add_argument("--data", choices=["synthetic", "fashion-mnist"], default="synthetic")
    p.add_argument("--samples", type=int, default=2048, help="synthetic: training samples")
    p.add_argument("--hidden", type=int, default=64)
    p.add_argument("--global-batch", type=int, default=32, help="samples per global batch (all workers)")
    p.add_argument("--steps", type=int, default=20, help="max_steps (optimizer steps)")
    p.add_argument("--epochs", type=int, default=-1, help="max_epochs (-1: --steps decides)")
    p.add_argument("--accumulate", type=int, default=1, help="accumulate_grad_batches")
    p.add_argument("--clip", type=float, default=None, help="gradient_clip_val")
    p.add_argument("--precision", default="32-true", help="Lightning's precision (32-true, bf16-mixed, ...)")
    p.add_argument("--lr", type=float, default=0.1)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--num-workers", type=int, default=0, help="loader processes per rank")
    p.add_argument("--val-every", type=int, default=0, help="validate every N steps (0: never)")
    p.add_argument("--checkpoint-every", type=int, default=0, help="ModelCheckpoint every N steps into --ckpt-dir")
    p.add_argument("--ckpt-dir", default="checkpoints")
    p.add_argument("--resume", help="a checkpoint to resume from (Trainer.fit's ckpt_path)")
    p.add_argument("--out", help="write the final state_dict here (rank 0)")
    return p.parse_args()


class Classifier(L.LightningModule):
    def __init__(self, inputs, hidden, lr):
        super().__init__()
        self.save_hyperparameters()
        self.net = torch.nn.Sequential(torch.nn.Linear(inputs, hidden), torch.nn.ReLU(), torch.nn.Linear(hidden, 10))

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = F.cross_entropy(self.net(x), y)
        self.log("train_loss", loss)
        return loss

    def validation_step(self, batch, batch_idx):
        x, y = batch
        accuracy = (self.net(x).argmax(dim=1) == y).float().mean()
        self.log("val_accuracy", accuracy, sync_dist=True)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=self.hparams.lr, momentum=0.9)


class Data(L.LightningDataModule):
    def __init__(self, args, batch_size, batch_sampler=None):
        super().__init__()
        self.args, self.batch_size, self.batch_sampler = args, batch_size, batch_sampler
        self.train, self.test = datasets(args.data, args.samples)

    def train_dataloader(self):
        if self.batch_sampler is not None:  # the reference: the engine's global batches, in order
            return DataLoader(self.train, batch_sampler=self.batch_sampler, num_workers=self.args.num_workers)
        return DataLoader(self.train, batch_size=self.batch_size, shuffle=True, num_workers=self.args.num_workers)

    def val_dataloader(self):
        return DataLoader(self.test, batch_size=256)


class GlobalBatches(torch.utils.data.Sampler):
    """The reference's batches: global batch s is positions [s B, (s + 1) B) of the engine's permutation."""

    def __init__(self, size, batch, seed):
        self.size, self.batch, self.seed, self.next = size, batch, seed, 0

    def __len__(self):
        return self.size // self.batch

    def __iter__(self):
        from balancenet.torch import global_indices
        for _ in range(len(self)):
            yield global_indices(self.size, self.seed, self.next * self.batch, self.batch)
            self.next += 1


def main():
    args = arguments()
    L.seed_everything(args.seed, verbose=False)
    workers = int(os.environ.get("LOCAL_WORLD_SIZE", "1"))  # the processes on this host, as torchrun starts them
    nodes = int(os.environ.get("WORLD_SIZE", "1")) // workers
    if args.reference:
        data = Data(args, args.global_batch)
        data.batch_sampler = GlobalBatches(len(data.train), args.global_batch, args.seed)
        strategy, workers, nodes = "auto", 1, 1
    elif args.balanced:
        from balancenet.lightning import BalancedStrategy
        data = Data(args, args.global_batch // (workers * nodes))
        strategy = BalancedStrategy(global_batch=args.global_batch, seed=args.seed)  # bn: the one line
    else:
        data = Data(args, args.global_batch // (workers * nodes))
        strategy = "ddp" if workers * nodes > 1 else "auto"
    model = Classifier(data.train[0][0].numel(), args.hidden, args.lr)
    callbacks = []
    if args.checkpoint_every:
        callbacks.append(L.callbacks.ModelCheckpoint(dirpath=args.ckpt_dir, every_n_train_steps=args.checkpoint_every,
                                                     save_top_k=-1))
    trainer = L.Trainer(accelerator="cpu", devices=workers, num_nodes=nodes, strategy=strategy,
                        max_steps=args.steps if args.epochs < 0 else -1, max_epochs=args.epochs,
                        accumulate_grad_batches=args.accumulate, gradient_clip_val=args.clip,
                        precision=args.precision, callbacks=callbacks, logger=False,
                        enable_checkpointing=bool(args.checkpoint_every), enable_progress_bar=False,
                        enable_model_summary=False, num_sanity_val_steps=0,
                        val_check_interval=args.val_every or None, check_val_every_n_epoch=None if args.val_every else 1,
                        limit_val_batches=1.0 if args.val_every else 0)
    trainer.fit(model, data, ckpt_path=args.resume)
    if args.out and trainer.is_global_zero:
        torch.save(model.state_dict(), args.out)


if __name__ == "__main__":
    main()
