"""What the Python package's tests share: starting `balancenet launch` and the example script, reading runs."""
import csv
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

import torch

BINARY = os.environ["BALANCENET_BINARY"]
SOURCE = os.environ["BALANCENET_SOURCE_DIR"]
PYTHON = sys.executable  # the project's Python (.venv/), which runs these tests
EXAMPLE = os.path.join(SOURCE, "examples", "python", "train_ddp.py")
TIMEOUT = 180  # a hung job fails the test instead of the suite's timeout
# Float32 rounding units of the largest magnitude in play that one step of reordered sums may move a parameter by:
# the C++ tests' bound (tests/testing/FloatBound.cpp derives it), so that no CPU's kernel blocking fails a run.
REORDERED_STEP_ULPS = 256


def exactness_bound(reference, steps):
    """The largest |difference| that float32 summation order explains between a run and `reference` after `steps`
    steps (FloatBound.h's exactnessBound); a gradient weighted wrongly, dropped or repeated moves more."""
    return REORDERED_STEP_ULPS * torch.finfo(torch.float32).eps * max(steps, 1) * max(1.0, reference.abs().max().item())


def max_difference(a, b):
    """The largest |difference| between two state_dicts' tensors."""
    return max((a[k].float() - b[k].float()).abs().max().item() for k in a)


def run(argv, env=None, timeout=TIMEOUT):
    merged = dict(os.environ, **(env or {}))
    return subprocess.run(argv, capture_output=True, text=True, timeout=timeout, env=merged)


def launch(flags, script, args=(), env=None):
    """`balancenet launch FLAGS script ARGS`."""
    return run([BINARY, "launch", *flags, script, *args], env=env)


def alone(script, args=(), env=None, cwd=None):
    """The script in one process, without a launcher."""
    clean = {k: v for k, v in os.environ.items()
             if k not in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT", "BALANCENET_JOB_CONFIG")}
    clean.update(env or {})
    return subprocess.run([PYTHON, script, *args], capture_output=True, text=True, timeout=TIMEOUT, env=clean,
                          cwd=cwd)


def error_lines(result):
    return [line for line in result.stderr.splitlines() if "balancenet: error:" in line]


def read_csv(path):
    with open(path) as f:
        return list(csv.DictReader(f))


def splits(run_dir):
    """splits.csv as [(step, [batch of rank 0, rank 1, ...])], in step order."""
    by_step = {}
    for row in read_csv(os.path.join(run_dir, "splits.csv")):
        by_step.setdefault(int(row["step"]), {})[int(row["rank"])] = int(row["batch"])
    return [(step, [ranks[r] for r in sorted(ranks)]) for step, ranks in sorted(by_step.items())]


class TempDirTest(unittest.TestCase):
    @classmethod
    def shared_dir(cls, prefix):
        """A folder for the whole class (its references), removed after its last test."""
        folder = tempfile.mkdtemp(prefix=f"bn-python-{prefix}-")
        cls.addClassCleanup(shutil.rmtree, folder, ignore_errors=True)
        return folder

    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory(prefix="bn-python-test-")
        self.tmp = self._tmp.name

    def tearDown(self):
        self._tmp.cleanup()

    def path(self, name):
        return os.path.join(self.tmp, name)

    def assertSucceeded(self, result):
        self.assertEqual(result.returncode, 0, f"exit {result.returncode}\nstdout:\n{result.stdout}\nstderr:\n"
                                               f"{result.stderr[-4000:]}")

    _references = {}  # one reference run per argument list and test file: each costs a Python start (torch: 3 s)

    def reference_trace(self, args):
        """The parameters after every step of the example's one-process reference run."""
        key = tuple(args)
        if key not in TempDirTest._references:
            trace = self.path("reference.pt")
            self.assertSucceeded(alone(EXAMPLE, ["--reference", "--trace", trace, *args]))
            TempDirTest._references[key] = torch.load(trace)
        return TempDirTest._references[key]

    def assertOneLine(self, result, words):
        """Bad input: exit 2 and balancenet's one error line, which says `words`; no traceback."""
        self.assertEqual(result.returncode, 2, result.stderr[-3000:])
        lines = error_lines(result)
        self.assertTrue(lines, result.stderr[-3000:])
        self.assertIn(words, lines[0])
        self.assertNotIn("Traceback", result.stderr)

    def assertEqualToOneProcess(self, got, want, steps):
        """Two state_dicts after `steps` steps, within the float bound of the largest reference value."""
        largest = torch.cat([v.flatten().float() for v in want.values()])
        diff, bound = max_difference(got, want), exactness_bound(largest, steps)
        self.assertLess(diff, bound, f"the parameters differ by {diff} (float bound {bound})")

    def assertResumedAt(self, run_dir, resumed_dir, step):
        """The resumed run went on from `step` (its steps.csv starts there) with the split in force at the checkpoint
        (the orchestrator's state came back: splits.csv's 'resumed from a checkpoint' rows)."""
        rows = read_csv(os.path.join(resumed_dir, "steps.csv"))
        self.assertEqual(min(int(r["step"]) for r in rows), step, f"the resumed run did not go on from step {step}")
        in_force = [split for s, split in splits(run_dir) if s < step][-1]  # that of the last step done
        restored = {int(r["rank"]): int(r["batch"]) for r in read_csv(os.path.join(resumed_dir, "splits.csv"))
                    if r["note"].startswith("resumed from a checkpoint") and int(r["step"]) == step}
        self.assertEqual([restored.get(rank) for rank in range(len(in_force))], in_force)

    def assertTracesEqual(self, got, want):
        self.assertEqual(len(got), len(want), "a different number of steps")
        for step, (g, w) in enumerate(zip(got, want)):
            diff, bound = (g - w).abs().max().item(), exactness_bound(w, step + 1)
            self.assertLess(diff, bound, f"parameters differ by {diff} after step {step + 1} (float bound {bound})")


def main():
    unittest.main(argv=[sys.argv[0], "-v", *sys.argv[1:]])


def docs_commands(page):
    """The commands of docs/PAGE's ```sh blocks that start balancenet, in order: the tests run them as written."""
    with open(os.path.join(SOURCE, "docs", page)) as f:
        blocks = f.read().split("```sh\n")[1:]
    lines = [line.split("#")[0].strip() for block in blocks for line in block.split("```", 1)[0].splitlines()]
    return [line for line in lines if line.startswith("build/apps/balancenet ")]


def run_docs_command(test, line, cwd):
    """One of docs_commands() as written, in `cwd`, which holds build/ and examples/ as the repository root does
    (links to this build and the source's examples), so that what the command writes stays in the test's folder."""
    for name, target in (("build", os.path.dirname(os.path.dirname(BINARY))), ("examples", os.path.join(SOURCE, "examples"))):
        if not os.path.exists(os.path.join(cwd, name)):
            os.symlink(target, os.path.join(cwd, name))
    result = subprocess.run(["bash", "-c", line], cwd=cwd, capture_output=True, text=True, timeout=TIMEOUT,
                            env=dict(os.environ, PYTHONWARNINGS="ignore"))
    test.assertEqual(result.returncode, 0, f"{line}\n{result.stderr[-3000:]}")
    found = [l for l in (result.stdout + result.stderr).splitlines() if l.startswith("balancenet: done; results in ")]
    test.assertTrue(found, result.stderr[-3000:])
    return os.path.join(cwd, found[-1].removeprefix("balancenet: done; results in "))


_MANY = """
import json, os, runpy, sys
script = sys.argv[1]
sys.path.insert(0, os.path.dirname(script))
for argv in json.loads(sys.argv[2]):
    sys.argv = [script, *argv]
    runpy.run_path(script, run_name="__main__")
"""


def references(script, runs, cwd):
    """Several one-process runs of `script` (each argument list, with its own --out) in one Python, so that the
    framework's import (5 to 7 s of CPU) is paid once; each run is the script's main() as from the command line."""
    import json
    result = subprocess.run([PYTHON, "-c", _MANY, script, json.dumps(runs)], capture_output=True, text=True,
                            timeout=TIMEOUT * 2, cwd=cwd, env={k: v for k, v in os.environ.items() if k not in (
                                "RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT",
                                "BALANCENET_JOB_CONFIG")} | {"PYTHONWARNINGS": "ignore"})
    if result.returncode != 0:
        raise AssertionError(f"the reference runs failed:\n{result.stderr[-3000:]}")


def extra_tests_wanted():
    """The framework tests CI leaves out for its time (BALANCENET_EXTRA_TESTS=1 runs them; otherwise skipped)."""
    return os.environ.get("BALANCENET_EXTRA_TESTS") == "1"
