#!/usr/bin/env python3
"""The table of bench/torch_upgrade.sh from the runs it left in OUT (standard library only).

samples/s: rank 0's step times after the first step (bench/vs_ddp_summary.py's rule, on both sides); the
new/old ratio is taken within each pair (back to back), then the median of the pairs, so a busy machine
moves both sides of a ratio alike. Writes OUT/torch_upgrade.json and prints the table.
"""
import glob
import json
import os
import re
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from vs_ddp_summary import balancenet_run  # noqa: E402

WARMUP = 1


def blas(run_dir):
    with open(os.path.join(run_dir, "summary.json")) as f:
        return json.load(f).get("blas", "?")


def main(out):
    names = sorted({re.sub(r"^(old|new)-(.*)-\d+$", r"\2", os.path.basename(d))
                    for d in glob.glob(os.path.join(out, "new-*")) if os.path.isdir(d)},
                   key=["cnn", "resnet18", "gpt", "demo"].index)
    rows = []
    for name in names:
        pairs = []
        for new_dir in sorted(glob.glob(os.path.join(out, f"new-{name}-*"))):
            if not os.path.isdir(new_dir):
                continue
            old_dir = new_dir.replace(f"{os.sep}new-", f"{os.sep}old-")
            old = balancenet_run(old_dir, WARMUP)["samples_per_second"]
            new = balancenet_run(new_dir, WARMUP)["samples_per_second"]
            pairs.append((old, new, new / old))
        rows.append({"model": name, "old": statistics.median(p[0] for p in pairs),
                     "new": statistics.median(p[1] for p in pairs),
                     "ratio": statistics.median(p[2] for p in pairs), "pairs": len(pairs),
                     "ratios": [round(p[2], 3) for p in pairs]})
    first = sorted(glob.glob(os.path.join(out, "new-cnn-*")))[0]
    print(f"old BLAS: {blas(first.replace(os.sep + 'new-', os.sep + 'old-'))}; new BLAS: {blas(first)}")
    print(f"{'job':10} {'old s/s':>9} {'new s/s':>9} {'new/old':>8}  pairs")
    for r in rows:
        print(f"{r['model']:10} {r['old']:9.1f} {r['new']:9.1f} {r['ratio']:7.2f}x  {r['ratios']}")
    tmp = os.path.join(out, "torch_upgrade.json.tmp")
    with open(tmp, "w") as f:
        json.dump(rows, f, indent=1)
    os.replace(tmp, os.path.join(out, "torch_upgrade.json"))


if __name__ == "__main__":
    main(sys.argv[1])
