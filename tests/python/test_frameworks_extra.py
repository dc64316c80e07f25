"""What the framework tests also check, left out of CI for its time (each test here starts two or four processes that
import a framework: 5 to 7 s of CPU each): BALANCENET_EXTRA_TESTS=1 runs them, otherwise each is reported skipped.
A plain script of each framework (no balancenet line; FSDP2's too) has the same weights under `balancenet launch --workers 2` as
under torchrun; BalancedStrategy trains under precision="bf16-mixed" close to one bf16 process; BalancedTrainer
started by torchrun says in one line what to run instead."""
import os
import unittest

import torch

from bn_testing import PYTHON, SOURCE, TempDirTest, alone, extra_tests_wanted, launch, main, max_difference, run

EXAMPLES = os.path.join(SOURCE, "examples", "python")
QUIET = {"PYTHONWARNINGS": "ignore", "TRANSFORMERS_VERBOSITY": "error"}
TORCHRUN = [PYTHON, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", "2"]


@unittest.skipUnless(extra_tests_wanted(), "BALANCENET_EXTRA_TESTS=1 runs these (CI leaves them out for its time)")
class FrameworksExtra(TempDirTest):
    def assertLaunchEqualsTorchrun(self, script, args):
        ours, theirs = self.path("launch.pt"), self.path("torchrun.pt")
        self.assertSucceeded(launch(["--workers", "2"], script, [*args, "--out", ours], env=QUIET))
        self.assertSucceeded(run([*TORCHRUN, script, *args, "--out", theirs], env={"OMP_NUM_THREADS": "1", **QUIET}))
        # The same script, seeds, sampler and gloo ring: the launchers differ only in who starts the processes.
        self.assertEqual(max_difference(torch.load(ours), torch.load(theirs)), 0.0)

    def test_plain_lightning_script_under_launch_equals_torchrun(self):
        self.assertLaunchEqualsTorchrun(os.path.join(EXAMPLES, "lightning_train.py"), ["--steps", "4", "--global-batch", "16"])

    def test_plain_trainer_script_under_launch_equals_torchrun(self):
        self.assertLaunchEqualsTorchrun(os.path.join(EXAMPLES, "hf_train.py"),
                                        ["--steps", "4", "--output-dir", self.path("plain")])

    def test_plain_accelerate_script_under_launch_equals_torchrun(self):
        self.assertLaunchEqualsTorchrun(os.path.join(EXAMPLES, "accelerate_train.py"), ["--steps", "4", "--global-batch", "16"])

    def test_plain_fsdp2_script_under_launch_equals_torchrun(self):
        self.assertLaunchEqualsTorchrun(os.path.join(EXAMPLES, "fsdp2_train.py"), ["--steps", "4"])

    def test_bf16_mixed_trains_close_to_one_process(self):
        script = os.path.join(EXAMPLES, "lightning_train.py")
        args = ["--steps", "6", "--global-batch", "16", "--precision", "bf16-mixed"]
        self.assertSucceeded(launch(["--workers", "2", "--split", "12,4"], script,
                                    ["--balanced", *args, "--out", self.path("bf16.pt")], env=QUIET))
        self.assertSucceeded(alone(script, ["--reference", *args, "--out", self.path("ref.pt")], env=QUIET, cwd=self.tmp))
        got = torch.load(self.path("bf16.pt"))
        # bf16 products round at 2^-8 of their operands, and the two sides multiply different row blocks: no float32
        # bound holds, but a wrong weighting (4x or 1/3 of a gradient) moves the weights far more.
        self.assertLess(max_difference(got, torch.load(self.path("ref.pt"))), 0.02)
        self.assertTrue(all(torch.isfinite(v).all() for v in got.values()))

    def test_balanced_trainer_started_by_torchrun_says_what_to_run(self):
        result = run([*TORCHRUN, os.path.join(EXAMPLES, "hf_train.py"), "--balanced", "--steps", "1", "--output-dir",
                      self.path("x")], env={"OMP_NUM_THREADS": "1", **QUIET})
        self.assertNotEqual(result.returncode, 0)
        self.assertIn("balancenet: error: BalancedTrainer: these 2 processes were not started by `balancenet launch`: "
                      "run `balancenet launch --workers 2", result.stderr)


if __name__ == "__main__":
    main()
