"""GPU workers in the Python package (ctest label gpu): a DDP script whose model and batches are on a GPU, with
balancenet's five lines, trains exactly like one process on the same GPU. DDP's buckets are GPU tensors, and the
comm hook sums them over the engine's group, whose process group takes GPU tensors through Gloo. Without a GPU
every case skips, saying so (ctest reports the test skipped)."""
import os
import unittest

import torch

from bn_testing import EXAMPLE, TempDirTest, launch, main, read_csv

STEPS = ["--steps", "8", "--global-batch", "32", "--device", "cuda:0"]


@unittest.skipUnless(torch.cuda.is_available(), "no GPU here: runs on a GPU machine (scripts/gpu-check.sh)")
class GpuScript(TempDirTest):
    def test_unequal_shares_on_a_gpu_equal_one_process_there(self):
        trace, run_dir = self.path("trace.pt"), self.path("run")
        result = launch(["--workers", "2", "--split", "20,12", "--policy", "static", "--run-dir", run_dir], EXAMPLE,
                        [*STEPS, "--trace", trace])
        self.assertSucceeded(result)
        self.assertTracesEqual(torch.load(trace), self.reference_trace(STEPS))
        rows = read_csv(os.path.join(run_dir, "steps.csv"))
        self.assertEqual(sorted({int(r["batch"]) for r in rows}), [12, 20])


if __name__ == "__main__":
    main()
