"""balancenet.transformers against real transformers: BalancedTrainer's unequal shares train a small GPT-2 (random
weights from a GPT2Config) exactly as one Trainer process on the whole global batches, for causal language
modelling on padded sequences (the loss normalised by the step's token count across workers) and for sequence
classification (a model that averages its own loss), with gradient accumulation and clipping, under a live split
and across a resumed checkpoint; a plain Trainer script runs under `balancenet launch` as under torchrun."""
import os

import torch

from bn_testing import (PYTHON, SOURCE, TempDirTest, alone, docs_commands, launch, main, max_difference, read_csv,
                        run, run_docs_command, splits)

SCRIPT = os.path.join(SOURCE, "examples", "python", "hf_train.py")
QUIET = {"PYTHONWARNINGS": "ignore", "TRANSFORMERS_VERBOSITY": "error"}
STEPS = 6
# Clips every step (the gradient norms here are 0.6 to 15): the norm is the whole batch's only if the gradient is.
COMMON = ["--global-batch", "16", "--accumulate", "2", "--max-grad-norm", "0.3"]



class TransformersTest(TempDirTest):
    def balanced(self, flags, args, out):
        run_dir = self.path("run-" + out)
        result = launch(["--workers", "2", "--run-dir", run_dir, *flags], SCRIPT,
                        ["--balanced", "--output-dir", self.path("hf"), *args, "--out", self.path(out)], env=QUIET)
        self.assertSucceeded(result)
        return torch.load(self.path(out)), run_dir

    def reference(self, args):
        out = self.path("reference.pt")
        self.assertSucceeded(alone(SCRIPT, ["--reference", "--output-dir", self.path("hf-ref"), *args, "--out", out],
                                   env=QUIET, cwd=self.tmp))
        return torch.load(out)

    def test_causal_lm_on_padded_sequences_with_a_fixed_split_equals_one_process(self):
        args = ["--steps", str(STEPS), *COMMON]
        got, run_dir = self.balanced(["--split", "12,4"], args, "causal.pt")
        self.assertEqualToOneProcess(got, self.reference(args), STEPS)
        self.assertEqual({tuple(split) for _, split in splits(run_dir)}, {(12, 4)})

    def test_classification_with_a_fixed_split_equals_one_process(self):
        args = ["--steps", str(STEPS), "--task", "classify", *COMMON]
        got, _ = self.balanced(["--split", "12,4"], args, "classify.pt")
        self.assertEqualToOneProcess(got, self.reference(args), STEPS)

    def test_live_split_and_its_resumed_checkpoint_equal_one_process(self):
        steps = 8
        flags = ["--node-speed", "400,100", "--rebalance-every", "2"]
        args = ["--steps", str(steps), *COMMON]
        whole, run_dir = self.balanced(flags, args, "whole.pt")
        self.assertEqualToOneProcess(whole, self.reference(args), steps)
        seen = [split for _, split in splits(run_dir)]
        self.assertGreater(len({tuple(s) for s in seen}), 1, f"the split never changed: {seen}")
        # The same job stopped after 4 steps (a checkpoint there), then train(resume_from_checkpoint=...).
        _, first = self.balanced(flags, [*args, "--stop-after", "4", "--save-every", "4"], "first.pt")
        saved = os.path.join(self.path("hf"), "checkpoint-4")
        self.assertTrue(os.path.exists(os.path.join(saved, "balancenet_loop.json")))
        resumed, second = self.balanced(flags, [*args, "--resume", saved], "resumed.pt")
        self.assertEqualToOneProcess(resumed, whole, steps)
        rows = read_csv(os.path.join(second, "steps.csv"))
        self.assertEqual(min(int(r["step"]) for r in rows), 4, "the resumed run did not go on from step 4")
        in_force = [split for step, split in splits(first) if step <= 4][-1]
        self.assertEqual(dict(splits(second)).get(4), in_force, splits(second))

    def test_plain_trainer_script_under_launch_equals_torchrun(self):
        ours, theirs = self.path("launch.pt"), self.path("torchrun.pt")
        args = ["--steps", "4", "--output-dir", self.path("plain")]
        self.assertSucceeded(launch(["--workers", "2"], SCRIPT, [*args, "--out", ours], env=QUIET))
        self.assertSucceeded(run([PYTHON, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", "2",
                                  SCRIPT, *args, "--out", theirs], env={"OMP_NUM_THREADS": "1", **QUIET}))
        self.assertEqual(max_difference(torch.load(ours), torch.load(theirs)), 0.0)

    def test_balanced_trainer_started_by_torchrun_says_what_to_run(self):
        result = run([PYTHON, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", "2", SCRIPT,
                      "--balanced", "--steps", "1", "--output-dir", self.path("x")],
                     env={"OMP_NUM_THREADS": "1", **QUIET})
        self.assertNotEqual(result.returncode, 0)
        self.assertIn("balancenet: error: BalancedTrainer: these 2 processes were not started by `balancenet launch`: "
                      "run `balancenet launch --workers 2", result.stderr)

    def test_the_docs_command_runs_as_written(self):
        lines = [line for line in docs_commands("transformers.md") if "hf_train.py" in line]
        self.assertEqual(len(lines), 1, lines)
        run_docs_command(self, lines[0])


if __name__ == "__main__":
    main()
