"""A Python worker killed under `balancenet launch --elastic`: the survivors re-form, take the step again, and
the job ends with every sample trained once and the parameters of the undisturbed run."""
import json
import os

import torch

from bn_testing import EXAMPLE, TempDirTest, launch, main, splits


class Elastic(TempDirTest):
    def test_killed_worker_the_job_goes_on_with_every_sample_trained(self):
        args = ["--steps", "16", "--global-batch", "30"]
        trace, run_dir = self.path("trace.pt"), self.path("run")
        result = launch(["--workers", "3", "--elastic", "--run-dir", run_dir], EXAMPLE,
                        [*args, "--trace", trace, "--kill-rank", "1", "--kill-at", "6"])
        self.assertSucceeded(result)
        self.assertIn("re-forming the group", result.stderr)
        with open(os.path.join(run_dir, "summary.json")) as f:
            summary = json.load(f)
        self.assertEqual(summary["steps"], 16)
        self.assertEqual(summary["nodes"], 2)
        self.assertEqual(summary["samples_trained"], 16 * 30)
        # The split log goes on with the two survivors.
        self.assertEqual(len(splits(run_dir)[-1][1]), 2)
        self.assertTracesEqual(torch.load(trace), self.reference_trace(args))


if __name__ == "__main__":
    main()
