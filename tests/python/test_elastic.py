"""A Python worker killed under `balancenet launch --elastic`: the survivors re-form, take the step again, and
the job ends with every sample trained once and the parameters of the undisturbed run."""
import json
import os

import torch

from bn_testing import EXAMPLE, TempDirTest, launch, main, read_csv, splits


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

    def test_restarted_worker_rejoins_and_the_job_ends_with_every_worker(self):
        # Paced steps (10 samples at 100/s: 0.1 s) leave the restarted process time to start and be admitted.
        args = ["--steps", "80", "--global-batch", "30"]
        trace, run_dir = self.path("trace.pt"), self.path("run")
        flags = ["--workers", "3", "--elastic", "--max-restarts", "1", "--node-speed", "100,100,100", "--run-dir",
                 run_dir]
        result = launch(flags, EXAMPLE, [*args, "--trace", trace, "--kill-rank", "1", "--kill-at", "5"])
        self.assertSucceeded(result)
        self.assertIn("restarted worker rank 1", result.stderr)
        with open(os.path.join(run_dir, "summary.json")) as f:
            summary = json.load(f)
        self.assertEqual(summary["nodes"], 3)
        self.assertEqual(summary["samples_trained"], 80 * 30)
        notes = {row["note"] for row in read_csv(os.path.join(run_dir, "splits.csv"))}
        self.assertIn("membership change: 3 -> 2 workers", notes)
        self.assertIn("membership change: 2 -> 3 workers", notes)
        self.assertTracesEqual(torch.load(trace), self.reference_trace(args))


if __name__ == "__main__":
    main()
