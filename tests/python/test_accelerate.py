"""balancenet.accelerate against real Accelerate: an Accelerate script with the one call after prepare() trains its
unequal shares exactly as one Accelerate process on the whole global batches (gradient accumulation, clipping, a
live split, save_state/load_state across a stop), a plain Accelerate script runs under `balancenet launch` as under
torchrun, and a loader that prepare() already sharded is refused with one line."""
import os
import textwrap

import torch

from bn_testing import (PYTHON, SOURCE, TempDirTest, alone, docs_commands, error_lines, launch, main,
                        max_difference, read_csv, run, run_docs_command, splits)

SCRIPT = os.path.join(SOURCE, "examples", "python", "accelerate_train.py")
QUIET = {"PYTHONWARNINGS": "ignore"}
STEPS = 6
COMMON = ["--global-batch", "16", "--accumulate", "2", "--clip", "0.05"]  # --clip 0.05 clips every step



class AccelerateTest(TempDirTest):
    def balanced(self, flags, args, out):
        run_dir = self.path("run-" + out)
        result = launch(["--workers", "2", "--run-dir", run_dir, *flags], SCRIPT,
                        ["--balanced", "--state-dir", self.path("state"), *args, "--out", self.path(out)], env=QUIET)
        self.assertSucceeded(result)
        return torch.load(self.path(out)), run_dir

    def reference(self, args):
        out = self.path("reference.pt")
        self.assertSucceeded(alone(SCRIPT, ["--reference", *args, "--out", out], env=QUIET, cwd=self.tmp))
        return torch.load(out)

    def test_fixed_split_with_accumulation_and_clipping_equals_one_process(self):
        args = ["--steps", str(STEPS), *COMMON]
        got, run_dir = self.balanced(["--split", "12,4"], args, "fixed.pt")
        self.assertEqualToOneProcess(got, self.reference(args), STEPS)
        self.assertEqual({tuple(split) for _, split in splits(run_dir)}, {(12, 4)})
        self.assertEqual(len(read_csv(os.path.join(run_dir, "steps.csv"))), 2 * STEPS)  # a step per optimizer step

    def test_live_split_and_a_resumed_state_equal_one_process(self):
        steps = 8
        flags = ["--node-speed", "400,100", "--rebalance-every", "2"]
        args = ["--steps", str(steps), *COMMON]
        whole, run_dir = self.balanced(flags, args, "whole.pt")
        self.assertEqualToOneProcess(whole, self.reference(args), steps)
        seen = [split for _, split in splits(run_dir)]
        self.assertGreater(len({tuple(s) for s in seen}), 1, f"the split never changed: {seen}")
        _, first = self.balanced(flags, [*args, "--save-at", "4", "--stop-after", "4"], "first.pt")
        resumed, second = self.balanced(flags, [*args, "--resume"], "resumed.pt")
        self.assertEqualToOneProcess(resumed, whole, steps)
        rows = read_csv(os.path.join(second, "steps.csv"))
        self.assertEqual(min(int(r["step"]) for r in rows), 4, "the resumed run did not go on from step 4")
        in_force = [split for step, split in splits(first) if step <= 4][-1]
        self.assertEqual(dict(splits(second)).get(4), in_force, splits(second))

    def test_plain_accelerate_script_under_launch_equals_torchrun(self):
        ours, theirs = self.path("launch.pt"), self.path("torchrun.pt")
        args = ["--steps", "4", "--global-batch", "16"]
        self.assertSucceeded(launch(["--workers", "2"], SCRIPT, [*args, "--out", ours], env=QUIET))
        self.assertSucceeded(run([PYTHON, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", "2",
                                  SCRIPT, *args, "--out", theirs], env={"OMP_NUM_THREADS": "1", **QUIET}))
        self.assertEqual(max_difference(torch.load(ours), torch.load(theirs)), 0.0)

    def test_a_prepared_loader_is_refused(self):
        path = self.path("prepared.py")
        with open(path, "w") as f:
            f.write(textwrap.dedent("""
                import torch
                from accelerate import Accelerator
                from torch.utils.data import DataLoader, TensorDataset
                import balancenet.accelerate

                accelerator = Accelerator(cpu=True)
                model = torch.nn.Linear(4, 2)
                optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
                loader = DataLoader(TensorDataset(torch.randn(64, 4)), batch_size=8)
                model, optimizer, loader = accelerator.prepare(model, optimizer, loader)
                balancenet.accelerate.balance(accelerator, model, optimizer, loader, global_batch=16)
                """))
        result = launch(["--workers", "2", "--run-dir", self.path("run")], path, env=QUIET)
        self.assertEqual(result.returncode, 2, result.stderr[-3000:])
        self.assertIn("not the one accelerator.prepare() returned", error_lines(result)[0])

    def test_the_docs_command_runs_as_written(self):
        lines = [line for line in docs_commands("transformers.md") if "accelerate_train.py" in line]
        self.assertEqual(len(lines), 1, lines)
        run_docs_command(self, lines[0])


if __name__ == "__main__":
    main()
