"""balancenet.lightning against real Lightning: BalancedStrategy's unequal shares train exactly as one Lightning
process on the whole global batches (a live split with gradient accumulation; a run resumed from its
ModelCheckpoint), and what cannot be honoured is one line and exit 2. The docs' two commands are these runs, as
written. test_frameworks_extra.py has the rest (a fixed split over two hosts with clipping, bf16, plain scripts under
`balancenet launch` against torchrun), which CI leaves out for its time."""
import json
import os
import textwrap

import torch

from bn_testing import SOURCE, TempDirTest, alone, docs_commands, main, references, run_docs_command, splits

SCRIPT = os.path.join(SOURCE, "examples", "python", "lightning_train.py")
STEPS = 6
FIXED = ["--steps", str(STEPS), "--global-batch", "16", "--accumulate", "2", "--clip", "0.05"]  # clips every step
LIVE = ["--accumulate", "2", "--steps", "10"]  # the docs' runs, with the example's defaults otherwise


class LightningTest(TempDirTest):
    @classmethod
    def setUpClass(cls):
        """The reference, once for the file."""
        cls.refs = cls.shared_dir("lightning-ref")
        references(SCRIPT, [["--reference", *LIVE, "--out", "live.pt"]], cls.refs)

    def reference(self, name):
        return torch.load(os.path.join(self.refs, name))

    def test_the_docs_live_split_and_its_resumed_checkpoint_equal_one_process(self):
        """docs/lightning.md's two commands as written: a live split (one worker 4x slower), a ModelCheckpoint every 5
        steps, and Trainer.fit(ckpt_path=...) from the one of step 5 (mid-pass) to the same end."""
        first, second = docs_commands("lightning.md")
        run_dir = run_docs_command(self, first, self.tmp)
        whole = torch.load(self.path("model.pt"))
        self.assertEqualToOneProcess(whole, self.reference("live.pt"), 10)
        seen = [split for _, split in splits(run_dir)]
        self.assertGreater(len({tuple(s) for s in seen}), 1, f"the split never changed: {seen}")
        self.assertGreater(seen[-1][0], seen[-1][1], f"the 4x faster worker does not take more: {seen[-1]}")
        resumed_dir = run_docs_command(self, second, self.tmp)
        self.assertEqualToOneProcess(torch.load(self.path("resumed.pt")), whole, 10)
        self.assertResumedAt(run_dir, resumed_dir, 5)


class LightningBadInput(TempDirTest):
    def script(self, loader):
        """A Lightning job whose training DataLoader is `loader` (an expression over `train`, the dataset)."""
        path = self.path("script.py")
        with open(path, "w") as f:
            f.write(textwrap.dedent(f"""
                import sys
                sys.path.insert(0, {os.path.dirname(SCRIPT)!r})
                import torch
                from torch.utils.data import DataLoader
                import lightning.pytorch as L
                from balancenet.lightning import BalancedStrategy
                import lightning_train as example

                class Data(L.LightningDataModule):
                    def train_dataloader(self):
                        train = example.datasets("synthetic", 256)[0]
                        return {loader}

                trainer = L.Trainer(accelerator="cpu", devices=int(sys.argv[1]), max_steps=2, logger=False,
                                    strategy=BalancedStrategy(global_batch=int(sys.argv[2])),
                                    enable_checkpointing=False, enable_progress_bar=False)
                model = example.Classifier(20, 8, 0.1)
                trainer.fit(model, Data())
                """))
        return path

    def test_what_a_rebuilt_loader_cannot_honour(self):
        """The rules of _frameworks.share_loader, which every integration rebuilds its training loader with, and of
        require_launched, in one process (a job of one): each refusal is one UsageError line; a plain loader keeps
        how it reads."""
        path = self.path("rules.py")
        with open(path, "w") as f:
            f.write(textwrap.dedent("""
                import json, os, sys
                import torch
                from torch.utils.data import (DataLoader, DistributedSampler, IterableDataset, TensorDataset,
                                              WeightedRandomSampler)
                import balancenet.torch as bn
                from balancenet import _frameworks

                class Stream(IterableDataset):
                    def __iter__(self):
                        return iter([])

                bn.init(run_dir=sys.argv[1])
                train = TensorDataset(torch.arange(64.0))
                cases = {
                    "iterable": DataLoader(Stream(), batch_size=8),
                    "weighted": DataLoader(train, batch_size=8, sampler=WeightedRandomSampler(torch.ones(64), 64)),
                    "replacement": DataLoader(train, batch_size=8, sampler=torch.utils.data.RandomSampler(
                        train, replacement=True)),
                    "batch_sampler": DataLoader(train, batch_sampler=[[0, 1], [2, 3]]),
                    "own_distributed": DataLoader(train, batch_size=8, sampler=DistributedSampler(
                        train, num_replicas=1, rank=0)),
                }
                said = {}
                for name, loader in cases.items():
                    try:
                        _frameworks.share_loader(loader, 16, 0, "Test", refuse_distributed_sampler=True)
                        said[name] = None
                    except bn.UsageError as error:
                        said[name] = str(error)
                try:  # torchrun's processes: WORLD_SIZE set, no job of balancenet's
                    _frameworks.require_launched("Test", 2)
                except bn.UsageError as error:
                    said["torchrun"] = str(error)
                kept = _frameworks.share_loader(DataLoader(train, batch_size=8, shuffle=True, num_workers=1,
                                                           pin_memory=True, prefetch_factor=3), None, 0, "Test")
                said["kept"] = [kept._torch_args.get(k) for k in ("num_workers", "pin_memory", "prefetch_factor")]
                said["global_batch"] = kept.global_batch
                print(json.dumps(said))
                """))
        result = alone(path, [self.path("run")], cwd=self.tmp)
        self.assertSucceeded(result)
        said = json.loads(result.stdout.strip().splitlines()[-1])
        self.assertIn("IterableDataset", said["iterable"])
        self.assertIn("WeightedRandomSampler) cannot be honoured", said["weighted"])
        self.assertIn("RandomSampler) cannot be honoured", said["replacement"])
        self.assertIn("batch_sampler of its own", said["batch_sampler"])
        self.assertIn("fights the per-worker shares", said["own_distributed"])
        self.assertIn("not started by `balancenet launch`: run `balancenet launch --workers 2", said["torchrun"])
        for name in ("iterable", "weighted", "replacement", "batch_sampler", "own_distributed", "torchrun"):
            self.assertEqual(len(said[name].splitlines()), 1, said[name])
        self.assertEqual(said["kept"], [1, True, 3])
        self.assertEqual(said["global_batch"], 8)  # batch_size x the one worker: what DDP would train

    def test_started_by_lightnings_own_launcher(self):
        path = self.script("DataLoader(train, batch_size=8)")
        result = alone(path, ["2", "16"], env={"PYTHONWARNINGS": "ignore"}, cwd=self.tmp)
        self.assertOneLine(result, "balancenet launch --workers 2")


if __name__ == "__main__":
    main()
