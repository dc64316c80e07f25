"""balancenet.transformers against real transformers: BalancedTrainer's unequal shares train a small GPT-2 (random
weights from a GPT2Config) exactly as one Trainer process on the whole global batches: causal language modelling on
padded sequences with a fixed split (the loss normalised by the step's token count across workers), and sequence
classification (a model that averages its own loss) under a live split and across a resumed checkpoint, each with
gradient accumulation and clipping. The docs' two commands are two of these runs, as written."""
import os

import torch

from bn_testing import SOURCE, TempDirTest, docs_commands, launch, main, references, run_docs_command, splits

SCRIPT = os.path.join(SOURCE, "examples", "python", "hf_train.py")
QUIET = {"PYTHONWARNINGS": "ignore", "TRANSFORMERS_VERBOSITY": "error"}
STEPS = 6
# Clips every step (the gradient norms here are 0.6 to 15): the norm is the whole batch's only if the gradient is.
FIXED = ["--steps", str(STEPS), "--global-batch", "16", "--accumulate", "2", "--max-grad-norm", "0.3"]
LIVE = ["--task", "classify", "--accumulate", "2", "--steps", "10"]  # the docs' runs (default max_grad_norm 1.0)


class TransformersTest(TempDirTest):
    @classmethod
    def setUpClass(cls):
        """Both references in one process: one transformers import."""
        cls.refs = cls.shared_dir("transformers-ref")
        references(SCRIPT, [["--reference", *FIXED, "--output-dir", "a", "--out", "fixed.pt"],
                            ["--reference", *LIVE, "--output-dir", "b", "--out", "live.pt"]], cls.refs)

    def reference(self, name):
        return torch.load(os.path.join(self.refs, name))

    def test_causal_lm_on_padded_sequences_with_a_fixed_split_equals_one_process(self):
        run_dir = self.path("run")
        self.assertSucceeded(launch(["--workers", "2", "--split", "12,4", "--run-dir", run_dir], SCRIPT,
                                    ["--balanced", *FIXED, "--output-dir", self.path("hf"), "--out", self.path("a.pt")],
                                    env=QUIET))
        self.assertEqualToOneProcess(torch.load(self.path("a.pt")), self.reference("fixed.pt"), STEPS)
        self.assertEqual({tuple(split) for _, split in splits(run_dir)}, {(12, 4)})

    def test_the_docs_classification_live_split_and_its_resumed_checkpoint_equal_one_process(self):
        """docs/transformers.md's two Trainer commands as written: a live split (one worker 4x slower), a checkpoint
        every 5 steps, and train(resume_from_checkpoint=...) from the one of step 5 to the same end."""
        first, second = [line for line in docs_commands("transformers.md") if "hf_train.py" in line]
        run_dir = run_docs_command(self, first, self.tmp)
        whole = torch.load(self.path("model.pt"))
        self.assertEqualToOneProcess(whole, self.reference("live.pt"), 10)
        seen = [split for _, split in splits(run_dir)]
        self.assertGreater(len({tuple(s) for s in seen}), 1, f"the split never changed: {seen}")
        self.assertTrue(os.path.exists(self.path("hf-output/checkpoint-5/balancenet_loop.json")))
        resumed_dir = run_docs_command(self, second, self.tmp)
        self.assertEqualToOneProcess(torch.load(self.path("resumed.pt")), whole, 10)
        self.assertResumedAt(run_dir, resumed_dir, 5)


if __name__ == "__main__":
    main()
