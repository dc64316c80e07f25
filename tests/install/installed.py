"""What the install tests share: the tiny 2-worker job, run with the build and source trees out of reach (all but
the Python environment whose torch the program was built against, which may live in the source tree: .venv/)."""
import json
import os
import subprocess
import unittest

BUILD_DIR = os.environ["BALANCENET_BUILD_DIR"]
SOURCE_DIR = os.environ["BALANCENET_SOURCE_DIR"]
TORCH_ENV = os.path.realpath(os.environ["BALANCENET_TORCH_ENV"])  # the venv (or prefix) of the build's torch
# A few steps of the mlp on the default data (dataset-fashion-mnist): seconds, and every stage of a step.
JOB = ["train", "--workers", "2", "--model", "mlp", "--global-batch", "32", "--steps", "3", "--threads", "1"]
HIDING = "bn-hidden"

# Tmpfs mounts in a private mount namespace hide the trees from the command alone (nothing else sees them);
# the longer path first, so a build directory inside the source tree is covered before its parent is. The torch
# environment ($1) is bind-mounted aside first and back in place after, alone in its emptied tree.
_HIDE_SCRIPT = """
keep=$1; shift
kept=$(mktemp -d)
mount --bind "$keep" "$kept" || exit 97
for dir in "$@"; do
  [ "$dir" = -- ] && break
  mount -t tmpfs -o size=1m,mode=0755 {name} "$dir" || exit 98
done
if [ ! -d "$keep" ]; then mkdir -p "$keep" && mount --bind "$kept" "$keep" || exit 97; fi
while [ "$1" != -- ]; do
  case "$keep/" in "$1"/*) top=${{keep#"$1"/}}; top=${{top%%/*}} ;; *) top= ;; esac
  [ ! -e "$1" ] || [ -z "$(ls -A "$1" | grep -vx "$top")" ] || {{ echo "$1 is still visible" >&2; exit 99; }}
  shift
done
shift
exec "$@"
""".format(name=HIDING)


def hidden(argv):
    """argv run where the build and source trees are empty directories, but for the torch environment."""
    trees = sorted({os.path.realpath(BUILD_DIR), os.path.realpath(SOURCE_DIR)}, key=len, reverse=True)
    return ["unshare", "--mount", "--propagation", "private", "sh", "-c", _HIDE_SCRIPT, "sh", TORCH_ENV, *trees,
            "--", *argv]


def run(argv, timeout=120, **kwargs):
    done = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=timeout, **kwargs)
    return done.returncode, done.stdout


def require_root():
    """Mount namespaces and dpkg need root: CI has it (.ci/run, BALANCENET_TESTBED_REQUIRED=1, where its lack is a
    failure); elsewhere a visible skip, never a pass."""
    if os.geteuid() == 0:
        return
    if os.environ.get("BALANCENET_TESTBED_REQUIRED") == "1":
        raise AssertionError("root is required (BALANCENET_TESTBED_REQUIRED=1)")
    raise unittest.SkipTest("needs root (mount namespaces, dpkg)")


def check_job(test, program, run_dir):
    """The tiny job under `program`, from the hidden trees: it trains 3 steps of 2 workers on the wheel's MKL."""
    rc, out = run(hidden([program, *JOB, "--run-dir", run_dir]))
    test.assertEqual(rc, 0, out)
    with open(os.path.join(run_dir, "summary.json")) as f:
        summary = json.load(f)
    test.assertEqual(summary["steps"], 3)
    test.assertEqual(summary["nodes"], 2)
    test.assertEqual(summary["samples_trained"], 96)
    test.assertGreater(summary["final_accuracy"], 0.0)
    # The RPATH survived the install: libtorch and its BLAS are the build's torch wheel's.
    test.assertIn(TORCH_ENV, os.path.realpath(summary["blas"].removeprefix("MKL in ")))
    with open(os.path.join(run_dir, "steps.csv")) as f:
        ranks = {line.split(",")[1] for line in f.read().splitlines()[1:]}
    test.assertEqual(ranks, {"0", "1"})
