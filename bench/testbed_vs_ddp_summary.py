#!/usr/bin/env python3
"""The table of bench/testbed_vs_ddp.sh from the runs it left in OUT (standard library only).

Per system of a scenario: samples/s over the steps after the first WARMUP (rank 0's step times, read as
bench/vs_ddp_summary.py reads them), the ideal, the fraction of it, the ratio to DDP's samples/s, and,
where the scenario has a target, the training seconds until the first evaluation at or above it.
The ideal is the sum over the hosts of what each host trains alone at its quota (OUT/alone/qQ-bB, one
worker, the scenario's global batch). Where a host's quota changed during a run (OUT/S/SYSTEM.changes:
"STEPS_DONE QUOTA" lines, written when the change was made), the ideal is that of the quotas in force at
each step, combined as a time would be: (steps) / sum over the steps of 1 / ideal(step).
Writes OUT/testbed_vs_ddp.csv and prints a markdown table.
"""
import csv
import os
import sys

from vs_ddp_summary import balancenet_run, ddp_run, fmt, time_to

SYSTEMS = [("bn-balanced", "balancenet, balanced"), ("bn-nooffload", "balancenet, balanced, --offload-below 0"),
           ("bn-flat", "balancenet, balanced, --comm flat"),
           ("bn-equal", "balancenet, --policy equal"), ("ddp", "PyTorch DDP")]


def alone_rate(out, quota, batch, warmup):
    run_dir = os.path.join(out, "alone", f"q{quota}-b{batch}")
    if not os.path.isdir(run_dir):
        sys.exit(f"testbed_vs_ddp_summary: no alone measurement at {quota} cores, B={batch} ({run_dir})")
    return balancenet_run(run_dir, warmup)["samples_per_second"]


def ideal(out, quotas, batch, changed_host, changes_file, steps, warmup):
    """The ideal samples/s over steps [warmup, steps) with the quotas in force at each step."""
    changes = []
    if changed_host is not None and os.path.exists(changes_file):
        with open(changes_file) as f:
            changes = sorted((int(line.split()[0]), line.split()[1]) for line in f if line.strip())
    seconds_per_sample = 0.0
    for step in range(warmup, steps):
        in_force = list(quotas)
        for done, quota in changes:  # a change seen after DONE steps acts from step index DONE on
            if step >= done:
                in_force[changed_host] = quota
        seconds_per_sample += 1 / sum(alone_rate(out, q, batch, warmup) for q in in_force)
    return (steps - warmup) / seconds_per_sample if seconds_per_sample > 0 else None


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: testbed_vs_ddp_summary.py OUT WARMUP_STEPS  "
                 "(OUT/scenarios.txt: 'name batch quotas target changed-host rates changes' a line, - for none)")
    out, warmup = sys.argv[1], int(sys.argv[2])
    with open(os.path.join(out, "scenarios.txt")) as f:
        scenarios = [line.split() for line in f if line.strip()]
    rows = []
    for name, batch, quotas, target, changed, rates, changes in scenarios:
        conditions = quotas.replace(",", "/") + " cores"
        if rates != "-":
            conditions += "".join(f", host {i}'s link {r} Mbit/s" for i, r in enumerate(rates.split(",")) if r != "0")
        if changes != "-":
            conditions += f", host {changed}: " + ", ".join(
                f"{q} after {float(f):.0%} of the steps" for f, q in (c.split("=") for c in changes.split(",")))
        quotas, target = quotas.split(","), None if target == "-" else float(target)
        changed = None if changed == "-" else int(changed)
        runs = {}
        for system, _ in SYSTEMS:
            path = os.path.join(out, name, system + (".json" if system == "ddp" else ""))
            if not os.path.exists(path if system == "ddp" else os.path.join(path, "summary.json")):
                continue  # not run (SYSTEMS), or stopped before its end
            run = ddp_run(path, warmup) if system == "ddp" else balancenet_run(path, warmup)
            run["ideal"] = ideal(out, quotas, batch, changed, os.path.join(out, name, system + ".changes"),
                                 run["steps"], warmup)
            runs[system] = run
        if not runs:
            sys.exit(f"testbed_vs_ddp_summary: {name}: no run in {os.path.join(out, name)}")
        ddp_rate = runs["ddp"]["samples_per_second"] if "ddp" in runs else None
        for system, label in SYSTEMS:
            if system not in runs:
                continue
            r = runs[system]
            rate = r["samples_per_second"]
            during = len(r["evaluations"]) > 1  # time to target needs evaluations during training, not at the end only
            rows.append({
                "scenario": name, "system": label, "hosts": len(quotas), "conditions": conditions,
                "global_batch": int(batch), "steps": r["steps"], "samples_per_second": rate,
                "ideal_samples_per_second": r["ideal"],
                "fraction_of_ideal": rate / r["ideal"] if rate and r["ideal"] else None,
                "ratio_to_ddp": rate / ddp_rate if rate and ddp_rate else None,
                "target_accuracy": target,
                "evaluations": len(r["evaluations"]),
                "seconds_to_target": time_to(r["evaluations"], target) if target and during else None,
                "final_accuracy": r["evaluations"][-1]["accuracy"] if r["evaluations"] else None,
            })

    with open(os.path.join(out, "testbed_vs_ddp.csv.tmp"), "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
        writer.writeheader()
        writer.writerows(rows)
    os.replace(os.path.join(out, "testbed_vs_ddp.csv.tmp"), os.path.join(out, "testbed_vs_ddp.csv"))

    print("| scenario | hosts | B | system | samples/s | ideal | fraction of ideal | ratio to DDP "
          "| s to target | final acc. |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        to_target = "" if r["target_accuracy"] is None or r["evaluations"] < 2 else \
            f"{fmt(r['seconds_to_target'], '.1f')} (to {r['target_accuracy']:.0%})"
        print(f"| {r['scenario']} | {r['conditions']} | {r['global_batch']} | {r['system']} "
              f"| {fmt(r['samples_per_second'], '.1f')} | {fmt(r['ideal_samples_per_second'], '.1f')} "
              f"| {fmt(r['fraction_of_ideal'], '.2f')} | {fmt(r['ratio_to_ddp'], '.2f')} | {to_target} "
              f"| {fmt(r['final_accuracy'], '.2%')} |")


if __name__ == "__main__":
    main()
