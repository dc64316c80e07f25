"""A Python run leaves the run directory `balancenet train` does, so `report` and `compare` read it."""
import json
import os

from bn_testing import BINARY, EXAMPLE, TempDirTest, launch, main, read_csv, run, splits


# An exit handler registered before balancenet's runs after it (atexit runs the last registered first): it sees
# the session balancenet closed at exit, and a call after that refused in one line.
CLOSES_AT_EXIT = """import atexit


def after_balancenet():
    import balancenet.torch as bn
    print("closed at exit:", bn._state.session.closed, flush=True)
    try:
        bn.world_size()
    except bn.UsageError as e:
        print("after close:", e, flush=True)


atexit.register(after_balancenet)
import balancenet.torch as bn

bn.init()
"""


class Outputs(TempDirTest):
    def test_the_session_closes_at_exit(self):
        script = self.path("closes.py")
        with open(script, "w") as f:
            f.write(CLOSES_AT_EXIT)
        result = launch(["--workers", "2", "--run-dir", self.path("run")], script)
        self.assertSucceeded(result)
        output = result.stdout + result.stderr
        for rank in (0, 1):
            self.assertIn(f"[rank {rank}] closed at exit: True", output)
            self.assertIn(f"[rank {rank}] after close: bn.world_size(): the session closed at the interpreter's exit",
                          output)

    def test_run_directory_and_report(self):
        run_dir = self.path("run")
        result = launch(["--workers", "2", "--node-speed", "4000,1000", "--rebalance-every", "3", "--probe-peers", "1",
                         "--run-dir", run_dir], EXAMPLE, ["--steps", "9", "--global-batch", "40", "--eval-every", "3"])
        self.assertSucceeded(result)
        steps = read_csv(os.path.join(run_dir, "steps.csv"))
        self.assertEqual(len(steps), 9 * 2)
        # The CPU-quota columns (issue 30): throttling is measured here too; the sync is DDP's, so no phases.
        self.assertTrue(all(float(r["throttled_ms"]) >= 0 and r["comm_phases"] == "0" for r in steps), steps[0])
        for step in range(9):  # every step trains the whole global batch, however it is split
            self.assertEqual(sum(int(r["batch"]) for r in steps if int(r["step"]) == step), 40)
        with open(os.path.join(run_dir, "summary.json")) as f:
            summary = json.load(f)
        self.assertEqual(summary["driver"], "python")
        self.assertEqual(summary["model"], "Sequential")
        self.assertEqual(summary["samples_trained"], 9 * 40)
        self.assertEqual(len(summary["evaluations"]), 3)
        # The paced rank 1 (a quarter of rank 0's speed) ends with the smaller share.
        final = splits(run_dir)[-1][1]
        self.assertLess(final[1], final[0])
        # --probe-peers 1: each worker probed its peer, as under `balancenet train` (BalancingTest.cpp), and the last
        # decision carries both latencies (the session once probed all pairs and reported none under the flag).
        decisions = read_csv(os.path.join(run_dir, "splits.csv"))
        last = [row for row in decisions if row["step"] == decisions[-1]["step"]]
        self.assertEqual(len(last), 2)
        self.assertTrue(all(float(row["mean_latency_ms"]) > 0 for row in last), last)
        page = self.path("report.html")
        self.assertSucceeded(run([BINARY, "report", run_dir, "--out", page]))
        self.assertGreater(os.path.getsize(page), 1000)


if __name__ == "__main__":
    main()
