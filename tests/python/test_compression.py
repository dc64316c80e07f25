"""bn.attach(..., grad_compress=): the DDP hook's buckets summed in fewer bits by the engine's own compressed
exchanges (session/CompressedBuckets.h over comm/compressed/), with unequal shares, against one process."""
import os
import sys

import torch

from bn_testing import EXAMPLE, TempDirTest, error_lines, exactness_bound, launch, main

STEPS = ["--steps", "12", "--global-batch", "32"]
STATIC = ["--policy", "static"]
# bf16's eps, 2^-7; int8's codes (a half step of max/127 each way) fit within it (docs/communication.md).
WIRE_EPS = {"bf16": 2.0 ** -7, "int8": 2.0 ** -7}
# PowerSGD adds three rounded products per matrix and a normalisation to each step's reordered sums: four times the
# float32 bound (tests/multirank/CompressedSyncTest.cpp's kPowerSgdStepUlps).
POWERSGD_STEP_FACTOR = 4


class CompressedHook(TempDirTest):
    def launched_trace(self, split, wire, name):
        trace = self.path(f"{name}.pt")
        result = launch(["--workers", str(len(split.split(","))), "--split", split, *STATIC, "--run-dir",
                         self.path(name)], EXAMPLE, [*STEPS, "--grad-compress", wire, "--trace", trace])
        self.assertSucceeded(result)
        return torch.load(trace), result

    def start(self):
        sys.path.insert(0, os.path.dirname(EXAMPLE))
        from example_data import datasets
        from train_ddp import make_model
        train, _ = datasets("synthetic", 2048)  # the example's defaults: its input width, hidden 64, seed 0
        return torch.cat([p.detach().reshape(-1) for p in make_model(train.tensors[0].shape[1], 64, 0).parameters()])

    def test_casts_and_int8_with_unequal_shares_stay_within_their_wire_bound_of_one_process(self):
        """Weighted first, then compressed, the error fed back: within 8 wire eps of the largest movement of a
        weight from its start (testing/FloatBound.cpp's fewer-bits bound), and farther than float32 explains."""
        want = self.reference_trace(STEPS)
        moved = (want[-1] - self.start()).abs().max().item()
        for wire, eps in WIRE_EPS.items():
            got, result = self.launched_trace("24,8", wire, wire)
            self.assertIn(f"gradients cross the wire as {wire}", result.stderr)
            diff, bound = (got[-1] - want[-1]).abs().max().item(), 8 * eps * moved
            print(f"{wire}: launched 24,8 vs one fp32 process {diff:.3g} (bound {bound:.3g})")
            self.assertEqual(len(got), len(want))
            self.assertLess(diff, bound, f"{wire}: the parameters differ by {diff} (bound {bound})")
            self.assertGreater(diff, exactness_bound(want[-1], len(want)), f"{wire}: nothing was compressed")

    def test_powersgd_with_unequal_shares_trains_as_with_equal_ones(self):
        """P = M Q and Q' are linear in the gradient and each rank keeps its own share's residual, so the split does
        not change what PowerSGD sends in sum (DDP's own PowerSGD hook averages the ranks equally: with 24,8 that is
        not the batch's gradient); far from the exact exchange all the same."""
        unequal, _ = self.launched_trace("24,8", "powersgd:2", "unequal")
        equal, _ = self.launched_trace("16,16", "powersgd:2", "equal")
        diff = (unequal[-1] - equal[-1]).abs().max().item()
        bound = POWERSGD_STEP_FACTOR * exactness_bound(equal[-1], len(equal))
        lossy = (equal[-1] - self.reference_trace(STEPS)[-1]).abs().max().item()
        print(f"powersgd:2: split 24,8 vs 16,16 {diff:.3g} (bound {bound:.3g}); vs the exact process {lossy:.3g}")
        self.assertLess(diff, bound)
        self.assertGreater(lossy, 100 * diff, "the factors dropped nothing: this is not PowerSGD")

    def test_a_compression_the_model_cannot_take_is_one_line(self):
        for wire, words in [("powersgd:1000", "factors no matrix of this model"), ("zip", "must be none, bf16")]:
            result = launch(["--workers", "2", "--run-dir", self.path(wire)], EXAMPLE,
                            [*STEPS, "--grad-compress", wire])
            self.assertEqual(result.returncode, 2, result.stderr[-3000:])
            lines = error_lines(result)
            self.assertTrue(lines and words in lines[0], result.stderr[-3000:])
            self.assertNotIn("Traceback", result.stderr)


if __name__ == "__main__":
    main()
