"""A PyTorch 2.x DDP script (examples/python/gpt_ddp.py: torch.accelerator, get_default_backend_for_device, SDPA)
runs unmodified under `balancenet launch` as under torch's own torchrun, and with balancenet's five lines its
unequal shares train exactly as one process on the whole batches. Its torch.compile run is in
test_frameworks_extra.py (inductor compiles C++ kernels in every worker: CI leaves it out for its time)."""
import os
import unittest

import torch

from bn_testing import PYTHON, SOURCE, TempDirTest, alone, launch, max_difference, run

SCRIPT = os.path.join(SOURCE, "examples", "python", "gpt_ddp.py")
STEPS = 6


def largest(state):
    return max(v.abs().max().item() for v in state.values())


class Torch2ScriptTest(TempDirTest):
    def test_plain_script_under_launch_equals_torchrun(self):
        ours, theirs = self.path("launch.pt"), self.path("torchrun.pt")
        args = ["--steps", str(STEPS)]
        result = launch(["--workers", "2"], SCRIPT, [*args, "--out", ours])
        self.assertSucceeded(result)
        self.assertIn("(world 2, cpu)", result.stdout + result.stderr)  # the launcher passes rank 0's lines on
        result = run([PYTHON, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", "2",
                      SCRIPT, *args, "--out", theirs], env={"OMP_NUM_THREADS": "1"})
        self.assertSucceeded(result)
        a, b = torch.load(ours), torch.load(theirs)
        self.assertEqual(a.keys(), b.keys())
        # The same script, seeds, sampler and gloo ring: the two launchers differ only in who starts the
        # processes, so the weights are the same bits.
        self.assertEqual(max_difference(a, b), 0.0)

    def test_balanced_shares_equal_one_process(self):
        got, want = self.path("balanced.pt"), self.path("reference.pt")
        args = ["--steps", str(STEPS), "--global-batch", "16", "--optimizer", "sgd", "--lr", "0.1"]
        self.assertSucceeded(launch(["--workers", "2", "--split", "12,4"], SCRIPT,
                                    ["--balanced", *args, "--out", got]))
        self.assertSucceeded(alone(SCRIPT, ["--reference", *args, "--out", want]))
        a, b = torch.load(got), torch.load(want)
        # Float error only: the weighted sum of two partial gradients instead of one batch's, each step moving
        # the weights by lr x gradient; bounded by a few float32 roundings of the largest weight per step.
        bound = 64 * torch.finfo(torch.float32).eps * STEPS * max(1.0, largest(b))
        self.assertLess(max_difference(a, b), bound)


if __name__ == "__main__":
    unittest.main()
