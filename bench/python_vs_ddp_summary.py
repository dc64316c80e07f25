#!/usr/bin/env python3
"""The table of bench/python_vs_ddp.sh: bench/ddp_peer.py with --balancenet against plain DDP, per scenario
(standard library only).

Both sides' summary JSONs are ddp_peer.py's, read as bench/vs_ddp_summary.py reads DDP's: samples/s over rank
0's steps after the first WARMUP, training seconds (evaluation excluded) until the first evaluation at or
above the scenario's target. Ratios: samples/s balancenet / DDP, time to target DDP / balancenet (above 1:
balancenet is faster). Writes OUT/python_vs_ddp.json and prints a markdown table with the issue's targets.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from vs_ddp_summary import ddp_run, fmt, time_to, write_json  # noqa: E402  (the same reading as issue 7's table)

TARGETS = {"h1": 2.5, "homo": 0.97}  # issue 28: the least ratio, on samples/s and on time to 85%


def ratio(num, den):
    return num / den if num and den else None


def loads(folder):
    """side -> 'before/after' 1-minute load averages."""
    path = os.path.join(folder, "loads.txt")
    if not os.path.exists(path):
        return {}
    with open(path) as f:
        return {w[0]: f"{w[1]}/{w[2]}" for w in (line.split() for line in f) if len(w) == 3}


def times(value):
    return fmt(value, ".2f") + ("x" if value is not None else "")


def verdict(value, least):
    if value is None or least is None:
        return "n/r"
    return "met" if value >= least else "**not met**"


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: python_vs_ddp_summary.py OUT WARMUP_STEPS  (OUT/scenarios.txt: 'name target' a line)")
    out, warmup = sys.argv[1], int(sys.argv[2])
    with open(os.path.join(out, "scenarios.txt")) as f:
        scenarios = [(line.split()[0], float(line.split()[1])) for line in f if line.strip()]
    results = {}
    for name, target in scenarios:
        folder = os.path.join(out, name)
        r = {"target_accuracy": target, "warmup_steps": warmup, "loads": loads(folder)}
        for side in ("balancenet", "ddp"):
            run = ddp_run(os.path.join(folder, f"{side}.json"), warmup)
            r[side] = {"samples_per_second": run["samples_per_second"], "steps": run["steps"],
                       "seconds_to_target": time_to(run["evaluations"], target) if target > 0 else None,
                       "final_accuracy": run["evaluations"][-1]["accuracy"] if run["evaluations"] else None}
        r["samples_per_second_ratio"] = ratio(r["balancenet"]["samples_per_second"], r["ddp"]["samples_per_second"])
        r["time_to_target_ratio"] = ratio(r["ddp"]["seconds_to_target"], r["balancenet"]["seconds_to_target"])
        results[name] = r
    write_json(os.path.join(out, "python_vs_ddp.json"), results)

    print("| scenario | bn samples/s | DDP samples/s | ratio | bn s to target | DDP s to target | ratio | target "
          "| steps bn / DDP | final acc. bn / DDP | load bn / DDP |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for name, r in results.items():
        b, d, least = r["balancenet"], r["ddp"], TARGETS.get(name)
        print(f"| {name} | {fmt(b['samples_per_second'], '.1f')} | {fmt(d['samples_per_second'], '.1f')} "
              f"| {times(r['samples_per_second_ratio'])} "
              f"| {fmt(b['seconds_to_target'], '.1f')} | {fmt(d['seconds_to_target'], '.1f')} "
              f"| {times(r['time_to_target_ratio'])} "
              f"| >= {times(least)} at {r['target_accuracy']:.0%}: {verdict(r['samples_per_second_ratio'], least)}"
              f", {verdict(r['time_to_target_ratio'], least)} "
              f"| {b['steps']} / {d['steps']} | {fmt(b['final_accuracy'], '.2%')} / {fmt(d['final_accuracy'], '.2%')} "
              f"| {r['loads'].get('balancenet', '?')} / {r['loads'].get('ddp', '?')} |")


if __name__ == "__main__":
    main()
