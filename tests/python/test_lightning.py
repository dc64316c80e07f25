"""balancenet.lightning against real Lightning: BalancedStrategy's unequal shares train exactly as one Lightning
process on the whole global batches (fixed and live splits, gradient accumulation, clipping, a resumed
ModelCheckpoint), a plain Lightning script runs under `balancenet launch` as under torchrun, and what cannot be
honoured is one line and exit 2."""
import json
import os
import textwrap

import torch

from bn_testing import (PYTHON, SOURCE, TempDirTest, alone, docs_commands, launch, main, max_difference, read_csv,
                        run, run_docs_command, splits)

SCRIPT = os.path.join(SOURCE, "examples", "python", "lightning_train.py")
STEPS = 6




class LightningTest(TempDirTest):
    def balanced(self, flags, args, out="balanced.pt"):
        run_dir = self.path("run-" + out)
        result = launch(["--workers", "2", "--run-dir", run_dir, *flags], SCRIPT,
                        ["--balanced", *args, "--out", self.path(out)], env={"PYTHONWARNINGS": "ignore"})
        self.assertSucceeded(result)
        return torch.load(self.path(out)), run_dir

    def reference(self, args, out="reference.pt"):
        self.assertSucceeded(alone(SCRIPT, ["--reference", *args, "--out", self.path(out)], cwd=self.tmp))
        return torch.load(self.path(out))

    def test_fixed_split_with_accumulation_and_clipping_equals_one_process(self):
        # --clip 0.05 clips every step: the norm is the whole batch's only if the gradient is.
        args = ["--steps", str(STEPS), "--global-batch", "16", "--accumulate", "2", "--clip", "0.05"]
        got, run_dir = self.balanced(["--split", "12,4"], args)
        self.assertEqualToOneProcess(got, self.reference(args), STEPS)
        self.assertEqual({tuple(split) for _, split in splits(run_dir)}, {(12, 4)})
        self.assertEqual(len(read_csv(os.path.join(run_dir, "steps.csv"))), 2 * STEPS)  # a row per rank and step

    def test_live_split_and_its_resumed_checkpoint_equal_one_process(self):
        steps = 8
        args = ["--global-batch", "32", "--accumulate", "2"]
        flags = ["--node-speed", "400,100", "--rebalance-every", "2"]
        whole, run_dir = self.balanced(flags, ["--steps", str(steps), *args], out="whole.pt")
        self.assertEqualToOneProcess(whole, self.reference(["--steps", str(steps), *args]), steps)
        seen = [split for _, split in splits(run_dir)]
        self.assertGreater(len({tuple(s) for s in seen}), 1, f"the split never changed: {seen}")
        self.assertGreater(seen[-1][0], seen[-1][1], f"the 4x faster worker does not take more: {seen[-1]}")
        # The same job in two runs: 4 steps and a ModelCheckpoint, then Trainer.fit(ckpt_path=...) to 8 (mid-pass).
        ckpt = self.path("ckpt")
        _, first = self.balanced(flags, ["--steps", "4", "--checkpoint-every", "4", "--ckpt-dir", ckpt, *args],
                                 out="first.pt")
        saved = os.path.join(ckpt, sorted(os.listdir(ckpt))[-1])
        resumed, second = self.balanced(flags, ["--steps", str(steps), "--resume", saved, *args], out="resumed.pt")
        self.assertEqualToOneProcess(resumed, whole, steps)
        rows = read_csv(os.path.join(second, "steps.csv"))
        self.assertEqual(min(int(r["step"]) for r in rows), 4, "the resumed run did not go on from step 4")
        # The split in force at the checkpoint is the resumed run's at step 4 (the orchestrator's state came back).
        in_force = [split for step, split in splits(first) if step <= 4][-1]
        self.assertEqual(dict(splits(second)).get(4), in_force, splits(second))

    def test_bf16_mixed_trains_close_to_one_process(self):
        args = ["--steps", str(STEPS), "--global-batch", "16", "--precision", "bf16-mixed"]
        got, _ = self.balanced(["--split", "12,4"], args)
        want = self.reference(args)
        # bf16 matrix products round at 2^-8 of their operands, and the two sides multiply different row blocks:
        # no float32 bound holds, but a wrong weighting (4x or 1/3 of a gradient) moves the weights far more.
        self.assertLess(max_difference(got, want), 0.02)
        self.assertTrue(all(torch.isfinite(v).all() for v in got.values()))

    def test_plain_lightning_script_under_launch_equals_torchrun(self):
        ours, theirs = self.path("launch.pt"), self.path("torchrun.pt")
        args = ["--steps", "4", "--global-batch", "16"]
        self.assertSucceeded(launch(["--workers", "2"], SCRIPT, [*args, "--out", ours]))
        self.assertSucceeded(run([PYTHON, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", "2",
                                  SCRIPT, *args, "--out", theirs], env={"OMP_NUM_THREADS": "1"}))
        self.assertEqual(max_difference(torch.load(ours), torch.load(theirs)), 0.0)

    def test_the_docs_command_runs_as_written(self):
        lines = [line for line in docs_commands("lightning.md") if "lightning_train.py" in line]
        self.assertEqual(len(lines), 1, lines)
        run_docs_command(self, lines[0])


class LightningBadInput(TempDirTest):
    def script(self, loader):
        """A Lightning job whose training DataLoader is `loader` (an expression over `train`, the dataset)."""
        path = self.path("script.py")
        with open(path, "w") as f:
            f.write(textwrap.dedent(f"""
                import sys
                sys.path.insert(0, {os.path.dirname(SCRIPT)!r})
                import torch
                from torch.utils.data import DataLoader, DistributedSampler, IterableDataset, WeightedRandomSampler
                import lightning.pytorch as L
                from balancenet.lightning import BalancedStrategy
                import lightning_train as example

                class Stream(IterableDataset):
                    def __iter__(self):
                        return iter([(torch.zeros(20), 0)] * 64)

                class Data(L.LightningDataModule):
                    def train_dataloader(self):
                        train = example.datasets("synthetic", 256)[0]
                        return {loader}

                trainer = L.Trainer(accelerator="cpu", devices=int(sys.argv[1]), max_steps=2, logger=False,
                                    strategy=BalancedStrategy(global_batch=int(sys.argv[2])),
                                    use_distributed_sampler={"DistributedSampler" not in loader!r},
                                    enable_checkpointing=False,
                                    enable_progress_bar=False)
                model = example.Classifier(20, 8, 0.1)
                trainer.fit(model, Data())
                """))
        return path

    def launched(self, loader, global_batch=16):
        path = self.script(loader)
        return launch(["--workers", "2", "--run-dir", self.path("run")], path, ["2", str(global_batch)],
                      env={"PYTHONWARNINGS": "ignore"})

    def test_sampler_of_the_users_own_stops_the_job(self):
        self.assertOneLine(self.launched("DataLoader(train, batch_size=8, sampler=WeightedRandomSampler("
                                         "torch.ones(len(train)), len(train)))"), "cannot be honoured")

    def test_what_a_rebuilt_loader_cannot_honour(self):
        """The rules of _frameworks.share_loader, which every integration rebuilds its training loader with, in one
        process (a job of one): each refusal is one UsageError line; a plain loader keeps how it reads."""
        path = self.path("rules.py")
        with open(path, "w") as f:
            f.write(textwrap.dedent("""
                import json, sys
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
        for name in ("iterable", "weighted", "replacement", "batch_sampler", "own_distributed"):
            self.assertEqual(len(said[name].splitlines()), 1, said[name])
        self.assertEqual(said["kept"], [1, True, 3])
        self.assertEqual(said["global_batch"], 8)  # batch_size x the one worker: what DDP would train

    def test_global_batch_smaller_than_the_workers(self):
        self.assertOneLine(self.launched("DataLoader(train, batch_size=8)", global_batch=1), "smaller than the job's")

    def test_started_by_lightnings_own_launcher(self):
        path = self.script("DataLoader(train, batch_size=8)")
        result = alone(path, ["2", "16"], env={"PYTHONWARNINGS": "ignore"}, cwd=self.tmp)
        self.assertOneLine(result, "balancenet launch --workers 2")

    def test_started_by_torchrun(self):
        path = self.script("DataLoader(train, batch_size=8)")
        result = run([PYTHON, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", "2", path, "2", "16"],
                     env={"OMP_NUM_THREADS": "1", "PYTHONWARNINGS": "ignore"})
        self.assertNotEqual(result.returncode, 0)
        self.assertIn("balancenet launch --workers 2", result.stderr)


if __name__ == "__main__":
    main()
