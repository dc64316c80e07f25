#!/usr/bin/env python3
"""throttle_breakdown.py: where each rank's step time went on CPU-capped hosts (issue 30), from steps.csv.

Usage: .venv/bin/python bench/throttle_breakdown.py RUN_DIR [RUN_DIR ...]
Prints, per run and rank, the mean per step (step 0, the set-up, left out) of compute_ms, sync_ms, wait_ms,
throttled_ms, throttled_periods, comm_phases and sync_cpu_ms, then one line saying what dominates.
Runs from before these columns read 0 for them. Standard library only.
"""
import csv
import os
import sys

COLUMNS = ["compute_ms", "sync_ms", "wait_ms", "throttled_ms", "throttled_periods", "comm_phases", "sync_cpu_ms"]


def rank_means(path):
    """{rank: {column: mean over steps >= 1}} of a steps.csv; missing columns are 0."""
    sums, counts = {}, {}
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            if int(row["step"]) == 0:
                continue
            rank = int(row["rank"])
            acc = sums.setdefault(rank, dict.fromkeys(COLUMNS, 0.0))
            for c in COLUMNS:
                acc[c] += float(row.get(c) or 0)
            counts[rank] = counts.get(rank, 0) + 1
    return {r: {c: v / counts[r] for c, v in acc.items()} for r, acc in sums.items()}


def verdict(m):
    """One line: the largest part of the step, and what the quota and the phases say about the sync."""
    step = m["compute_ms"] + m["sync_ms"]
    if step <= 0:
        return "no steps"
    parts = {"compute": m["compute_ms"], "waiting for peers": m["wait_ms"],
             "moving bytes": m["sync_ms"] - m["wait_ms"]}
    top = max(parts, key=parts.get)
    line = f"{top} dominates ({100 * parts[top] / step:.0f}% of compute+sync)"
    if m["throttled_ms"] > 0:
        line += f"; the quota stalled this host {m['throttled_ms']:.1f} ms a step ({100 * m['throttled_ms'] / step:.0f}%)"
    if m["comm_phases"] > 0 and m["sync_ms"] > 0:
        line += f"; {m['sync_ms'] / m['comm_phases']:.2f} ms of sync per phase"
    if m["sync_cpu_ms"] > 0 and m["sync_ms"] > 0:
        line += f"; sync used {100 * m['sync_cpu_ms'] / m['sync_ms']:.0f}% of a core"
    return line


def main(argv):
    if len(argv) < 2:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    for run in argv[1:]:
        path = os.path.join(run, "steps.csv")
        if not os.path.isfile(path):
            print(f"throttle_breakdown: error: {path} not found", file=sys.stderr)
            return 2
        means = rank_means(path)
        print(f"{run}")
        print("  rank " + " ".join(f"{c:>17}" for c in COLUMNS))
        for rank in sorted(means):
            m = means[rank]
            print(f"  {rank:4d} " + " ".join(f"{m[c]:17.2f}" for c in COLUMNS))
            print(f"       {verdict(m)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
