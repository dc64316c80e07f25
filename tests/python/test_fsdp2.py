"""FSDP2 (fully_shard) with balancenet's lines: unequal and changing shares reduce-scatter exactly the whole batch's
gradient (the parameters equal one unsharded process on the whole batches), with clipping and a DCP checkpoint
resumed (docs/fsdp2.md's commands). test_frameworks_extra.py has the rest (bf16 mixed precision, the plain script
under `balancenet launch` against torchrun), which CI leaves out for its time."""
import os
import textwrap

import torch

from bn_testing import (SOURCE, TempDirTest, alone, docs_commands, launch, main, read_csv, references, run_docs_command,
                        splits)

EXAMPLES = os.path.join(SOURCE, "examples", "python")
SCRIPT = os.path.join(EXAMPLES, "fsdp2_train.py")
SGD = ["--optimizer", "sgd", "--lr", "0.1"]  # the example's global batch: 16
FIXED = ["--steps", "6", *SGD]  # docs/fsdp2.md's
LIVE = ["--steps", "10", *SGD, "--clip", "0.5"]


class Fsdp2Test(TempDirTest):
    @classmethod
    def setUpClass(cls):
        # The one-process references, in one Python (each start costs torch's import).
        cls.refs = cls.shared_dir("fsdp2-refs-")
        references(SCRIPT, [["--reference", *FIXED, "--out", "reference.pt"],
                            ["--reference", *LIVE, "--out", "live.pt"]], cwd=cls.refs)

    def reference(self, name):
        return torch.load(os.path.join(self.refs, name))

    def launched(self, flags, args, name):
        out, run_dir = self.path(name), self.path(name + ".run")
        result = launch([*flags, "--run-dir", run_dir], SCRIPT, ["--balanced", *args, "--out", out])
        self.assertSucceeded(result)
        return torch.load(out), run_dir

    def test_the_docs_commands_train_unequal_shares_and_resume_exactly(self):
        # docs/fsdp2.md: 3 steps with a DCP checkpoint, the second worker paced 4 times slower; a new job resumes.
        first, second = docs_commands("fsdp2.md")
        first_dir = run_docs_command(self, first, self.tmp)
        resumed_dir = run_docs_command(self, second, self.tmp)
        self.assertResumedAt(first_dir, resumed_dir, 3)
        self.assertEqualToOneProcess(torch.load(self.path("model.pt")), self.reference("reference.pt"), 6)
        # The shares were unequal, and followed the speeds: the slow worker took fewer samples in every step.
        rows = read_csv(os.path.join(first_dir, "steps.csv")) + read_csv(os.path.join(resumed_dir, "steps.csv"))
        self.assertEqual(sorted({int(r["step"]) for r in rows}), list(range(6)))
        batches = {(int(r["step"]), int(r["rank"])): int(r["batch"]) for r in rows}
        self.assertTrue(all(batches[s, 1] < batches[s, 0] for s in range(2, 6)), batches)

    def test_changing_shares_with_clipping_equal_one_process(self):
        # Rank 1 at a third of the speed: the balanced policy moves samples away from it every 2 steps.
        flags = ["--workers", "2", "--policy", "balanced", "--rebalance-every", "2", "--slowdown", "1,3"]
        got, run_dir = self.launched(flags, LIVE, "live.pt")
        chosen = {tuple(batches) for _, batches in splits(run_dir)}
        self.assertGreater(len(chosen), 1, f"the split never changed: {chosen}")
        self.assertEqualToOneProcess(got, self.reference("live.pt"), 10)

    def test_a_block_instead_of_the_root_is_refused_in_one_line(self):
        script = self.path("block.py")
        with open(script, "w") as f:
            f.write(textwrap.dedent("""
                import torch
                from torch.distributed.fsdp import fully_shard
                import balancenet.torch as bn
                bn.init()
                model = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.Linear(4, 2))
                fully_shard(model[0])
                fully_shard(model)
                bn.attach(model[0])
                loader = bn.DataLoader(torch.utils.data.TensorDataset(torch.randn(8, 4)), global_batch=4)
                for (x,) in loader:
                    model(x).sum().backward()
            """))
        self.assertOneLine(alone(script, cwd=self.tmp), "give the root FSDP2 module")

    def test_elastic_is_refused_in_one_line(self):
        result = launch(["--workers", "1", "--elastic"], SCRIPT, ["--balanced", "--steps", "2"])
        self.assertOneLine(result, "an FSDP2 model cannot run under --elastic")


if __name__ == "__main__":
    main()
