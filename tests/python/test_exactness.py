"""The synchronised gradient of a Python DDP loop with balancenet's lines is the whole global batch's: the
parameters after every step equal one process training on the whole batches (the example's --reference)."""
import os
import sys

import torch

from bn_testing import EXAMPLE, TempDirTest, alone, exactness_bound, launch, main, read_csv, splits

STEPS = ["--steps", "12", "--global-batch", "32"]


class Exactness(TempDirTest):
    def launched_trace(self, flags, args):
        trace, run_dir = self.path("trace.pt"), self.path("run")
        result = launch([*flags, "--run-dir", run_dir], EXAMPLE, [*args, "--trace", trace])
        self.assertSucceeded(result)
        return torch.load(trace), run_dir

    def test_unequal_split_equals_one_process(self):
        got, run_dir = self.launched_trace(["--workers", "3", "--split", "5,20,7", "--policy", "static"], STEPS)
        self.assertTracesEqual(got, self.reference_trace(STEPS))
        # The shares really were unequal: each rank trained its --split share in every step.
        rows = read_csv(os.path.join(run_dir, "steps.csv"))
        self.assertEqual(len(rows), 12 * 3)
        for row in rows:
            self.assertEqual(int(row["batch"]), [5, 20, 7][int(row["rank"])])

    def test_live_resplits_change_nothing_but_timing(self):
        # Rank 2 runs at a quarter of the speed: the balanced policy moves samples away from it every 2 steps,
        # and loader workers read ahead under the old split (guessed wrong, read again).
        flags = ["--workers", "3", "--policy", "balanced", "--rebalance-every", "2", "--slowdown", "1,1,4"]
        args = [*STEPS[:1], "16", *STEPS[2:], "--num-workers", "1", "--hidden", "256"]
        got, run_dir = self.launched_trace(flags, args)
        chosen = {tuple(batches) for _, batches in splits(run_dir)}
        self.assertGreater(len(chosen), 1, f"the split never changed: {chosen}")
        self.assertTracesEqual(got, self.reference_trace(args))

    def test_accumulation_with_no_sync_equals_one_process(self):
        args = [*STEPS, "--accumulate", "3"]
        got, _ = self.launched_trace(["--workers", "2", "--split", "10,22", "--policy", "static"], args)
        self.assertTracesEqual(got, self.reference_trace(args))

    def test_per_rank_micro_batches_equal_one_process(self):
        """A rank short of memory (--max-pass 0,5: rank 1 holds 5 samples a pass) takes its share of 22 in 5 passes
        (bn.micro_batches: 5, 5, 4, 4, 4; no_sync() but for the last), rank 0 its 10 in one."""
        args = [*STEPS, "--max-pass", "0,5"]
        trace, run_dir = self.path("trace.pt"), self.path("run")
        result = launch(["--workers", "2", "--split", "10,22", "--policy", "static", "--run-dir", run_dir], EXAMPLE,
                        [*args, "--trace", trace])
        self.assertSucceeded(result)
        output = result.stdout + result.stderr  # the workers' lines come through the launcher's
        self.assertIn("rank 1: passes of at most 5: [(22, 4), (22, 5)]", output)
        self.assertNotIn("rank 0: passes", output)
        self.assertTracesEqual(torch.load(trace), self.reference_trace(STEPS))

    def test_fp16_autocast_and_grad_scaler_with_unequal_shares_equal_one_fp16_process(self):
        """The script's own torch.autocast and GradScaler, balancenet's lines unchanged: within fp16's bound
        (testing/FloatBound.cpp: 8 fp16 eps of the largest movement of a weight from its start)."""
        args = [*STEPS, "--precision", "fp16"]
        got, _ = self.launched_trace(["--workers", "2", "--split", "24,8", "--policy", "static"], args)
        want = self.reference_trace(args)
        sys.path.insert(0, os.path.dirname(EXAMPLE))
        from example_data import datasets
        from train_ddp import make_model
        train, _ = datasets("synthetic", 2048)  # the example's defaults: its input width, hidden 64, seed 0
        start = torch.cat([p.detach().reshape(-1) for p in make_model(train.tensors[0].shape[1], 64, 0).parameters()])
        moved = (want[-1] - start).abs().max().item()
        diff, bound = (got[-1] - want[-1]).abs().max().item(), 8 * torch.finfo(torch.float16).eps * moved
        self.assertEqual(len(got), len(want))
        print(f"fp16: launched vs one process {diff:.3g} (bound {bound:.3g}, largest movement {moved:.3g})")
        self.assertLess(diff, bound, f"the parameters differ by {diff} (fp16 bound {bound}, largest movement {moved})")
        # Both sides did compute in fp16: farther from the fp32 process than float32's order explains.
        fp32 = self.reference_trace(STEPS)[-1]
        self.assertGreater((want[-1] - fp32).abs().max().item(), exactness_bound(fp32, len(want)))

    def test_running_alone_is_a_job_of_one(self):
        trace = self.path("trace.pt")
        result = alone(EXAMPLE, [*STEPS, "--trace", trace], cwd=self.tmp)
        self.assertSucceeded(result)
        self.assertTracesEqual(torch.load(trace), self.reference_trace(STEPS))
        # Its run directory (runs/<time>-<pid> where it ran) has the run's files.
        runs = os.listdir(self.path("runs"))
        self.assertEqual(len(runs), 1)
        self.assertEqual(len(read_csv(self.path(f"runs/{runs[0]}/steps.csv"))), 12)


if __name__ == "__main__":
    main()
