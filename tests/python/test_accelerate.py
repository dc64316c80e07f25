"""balancenet.accelerate against real Accelerate: an Accelerate script with the one call after prepare() trains its
unequal shares exactly as one Accelerate process on the whole global batches (a fixed split with gradient
accumulation and clipping; a live split; save_state/load_state across a stop), and a loader that prepare() already
sharded is refused with one line. The docs' two commands are two of these runs, as written."""
import os
import textwrap

import torch

from bn_testing import (SOURCE, TempDirTest, docs_commands, error_lines, launch, main, read_csv, references,
                        run_docs_command, splits)

SCRIPT = os.path.join(SOURCE, "examples", "python", "accelerate_train.py")
QUIET = {"PYTHONWARNINGS": "ignore"}
STEPS = 6
FIXED = ["--steps", str(STEPS), "--global-batch", "16", "--accumulate", "2", "--clip", "0.05"]  # clips every step
LIVE = ["--accumulate", "2", "--steps", "10"]  # the docs' runs


class AccelerateTest(TempDirTest):
    @classmethod
    def setUpClass(cls):
        """Both references in one process: one Accelerate import."""
        cls.refs = cls.shared_dir("accelerate-ref")
        references(SCRIPT, [["--reference", *FIXED, "--out", "fixed.pt"], ["--reference", *LIVE, "--out", "live.pt"]],
                   cls.refs)

    def reference(self, name):
        return torch.load(os.path.join(self.refs, name))

    def test_fixed_split_with_accumulation_and_clipping_equals_one_process(self):
        run_dir = self.path("run")
        self.assertSucceeded(launch(["--workers", "2", "--split", "12,4", "--run-dir", run_dir], SCRIPT,
                                    ["--balanced", *FIXED, "--out", self.path("a.pt")], env=QUIET))
        self.assertEqualToOneProcess(torch.load(self.path("a.pt")), self.reference("fixed.pt"), STEPS)
        self.assertEqual({tuple(split) for _, split in splits(run_dir)}, {(12, 4)})
        self.assertEqual(len(read_csv(os.path.join(run_dir, "steps.csv"))), 2 * STEPS)  # a step per optimizer step

    def test_the_docs_live_split_and_its_resumed_state_equal_one_process(self):
        """docs/transformers.md's two Accelerate commands as written: a live split, save_state() after step 5, and a
        run that load_state()s it and goes on to the same end."""
        first, second = [line for line in docs_commands("transformers.md") if "accelerate_train.py" in line]
        run_dir = run_docs_command(self, first, self.tmp)
        whole = torch.load(self.path("model.pt"))
        self.assertEqualToOneProcess(whole, self.reference("live.pt"), 10)
        seen = [split for _, split in splits(run_dir)]
        self.assertGreater(len({tuple(s) for s in seen}), 1, f"the split never changed: {seen}")
        resumed_dir = run_docs_command(self, second, self.tmp)
        self.assertEqualToOneProcess(torch.load(self.path("resumed.pt")), whole, 10)
        self.assertResumedAt(run_dir, resumed_dir, 5)

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
        result = launch(["--workers", "1", "--run-dir", self.path("run")], path, env=QUIET)
        self.assertEqual(result.returncode, 2, result.stderr[-3000:])
        self.assertIn("not the one accelerator.prepare() returned", error_lines(result)[0])


if __name__ == "__main__":
    main()
