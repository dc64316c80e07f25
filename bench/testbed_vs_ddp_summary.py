#!/usr/bin/env python3
"""The table of bench/testbed_vs_ddp.sh from the runs it left in OUT (standard library only).

Per system of a scenario: samples/s over the steady steps (rank 0's step times from the scenario's STEADY_FROM
on, read as bench/vs_ddp_summary.py reads them; the same steps for every system, so that auto's first steps,
which try the modes, and the policy's first splits are left out of every row alike; the CSV also has the
rate over every step after the first WARMUP), the ideal and the limit (bench/testbed_limit.py), the fraction
of each, the ratio to DDP's samples/s, and, where the scenario has a target, the training seconds until the
first evaluation at or above it. Per scenario the best single --comm mode (auto aside) is marked and auto's
ratio to it is given.
The ideal is the sum over the hosts of what each host trains alone at its quota (OUT/alone/[MODEL-]qQ-bB,
one worker, the scenario's global batch, samples/s after its first WARMUP steps). The limit adds what one
all-reduce of the model costs each host in CPU (OUT/S/allreduce-cpu.json, bench/allreduce_cpu.py); without
that file the limit is left empty. Where a host's quota changed during a run (OUT/S/SYSTEM.changes:
"STEPS_DONE QUOTA" lines, written when the change was made), both are those of the quotas in force at each
step, combined as a time would be: (steps) / sum over the steps of 1 / rate(step).
OUT/scenarios.txt: one scenario a line, "name batch quotas target changed-host rates changes [model steady]"
(- for none; model cnn and steady WARMUP when absent, as bench/testbed_vs_ddp.sh wrote it before issue 30).
Writes OUT/testbed_vs_ddp.csv and prints a markdown table.
"""
import csv
import json
import os
import re
import sys

from testbed_limit import ideal, limit
from vs_ddp_summary import balancenet_run, ddp_run, fmt, time_to

MODE_ORDER = ["allreduce", "flat", "hd", "a2a", "auto"]  # --comm modes in the table's order
FIRST = [("bn-balanced", "balancenet, balanced (the default --comm)"),
         ("bn-nooffload", "balancenet, balanced, --offload-below 0")]
LAST = [("bn-equal", "balancenet, --policy equal"), ("ddp", "PyTorch DDP"),
        ("lightning-balanced", "Lightning, balancenet's BalancedStrategy"), ("lightning-ddp", 'Lightning, strategy "ddp"')]


def wire_label(wire):
    """bf16, powersgd, powersgd4 as --grad-compress takes them: powersgd4 is powersgd:4."""
    return re.sub(r"^powersgd(\d+)$", r"powersgd:\1", wire)


def fewer_bits(found):
    """Issue 54's systems among `found`, in the table's order: balanced with each --grad-compress, auto with lossy
    exchanges allowed, then DDP with each of its own hooks."""
    wires = sorted(n[len("bn-gc-"):] for n in found if n.startswith("bn-gc-"))
    hooks = sorted(n[len("ddp-"):] for n in found if n.startswith("ddp-"))
    hook_names = {"bf16": "bf16_compress_hook", "fp16": "fp16_compress_hook"}
    return ([("bn-gc-" + w, f"balancenet, balanced, --grad-compress {wire_label(w)}", None) for w in wires] +
            ([("bn-auto-lossy", "balancenet, --comm auto --allow-lossy-comm", None)]
             if "bn-auto-lossy" in found else []) +
            [("ddp-" + h, "PyTorch DDP, " + hook_names.get(h, f"PowerSGD hook, rank {wire_label(h)[9:] or 1}"), None)
             for h in hooks])


def systems_in(scenario_dir):
    """(system, label, --comm mode or None) of every run in the folder, complete or not, in the table's order."""
    names = set(os.listdir(scenario_dir)) if os.path.isdir(scenario_dir) else set()
    found = {n for n in names  # bn-flat.host1: another host's run folder of bn-flat
             if n.startswith("bn-") and "." not in n and os.path.isdir(os.path.join(scenario_dir, n))}
    found |= {n[:-len(".json")] for n in names if re.fullmatch(r"(ddp(-[a-z0-9]+)?|lightning-[a-z]+)\.json", n)}
    fixed = {system for system, _ in FIRST + LAST}
    bits = fewer_bits(found)
    modes = sorted((n[3:] for n in found - fixed - {s for s, _, _ in bits} if n.startswith("bn-")),
                   key=lambda m: (MODE_ORDER.index(m) if m in MODE_ORDER else len(MODE_ORDER), m))
    return ([(s, label, None) for s, label in FIRST if s in found] +
            [("bn-" + m, f"balancenet, --comm {m}", m) for m in modes] + bits +
            [(s, label, None) for s, label in LAST if s in found])


def alone_rate(out, model, quota, batch, warmup):
    name = ("" if model == "cnn" else model + "-") + f"q{quota}-b{batch}"
    run_dir = os.path.join(out, "alone", name)
    if not os.path.isdir(run_dir):
        sys.exit(f"testbed_vs_ddp_summary: no alone measurement at {quota} cores, B={batch} ({run_dir})")
    return balancenet_run(run_dir, warmup)["samples_per_second"]


def bounds(out, model, quotas, batch, cpu, changed_host, changes_file, first, steps, warmup):
    """The ideal and the limit in samples/s over steps [first, steps) with the quotas in force at each step
    (the limit None without the all-reduce costs cpu)."""
    changes = []
    if changed_host is not None and os.path.exists(changes_file):
        with open(changes_file) as f:
            changes = sorted((int(line.split()[0]), line.split()[1]) for line in f if line.strip())
    per_sample = [0.0, 0.0]  # seconds per sample summed over the steps: ideal, limit
    for step in range(first, steps):
        in_force = list(quotas)
        for done, quota in changes:  # a change seen after DONE steps acts from step index DONE on
            if step >= done:
                in_force[changed_host] = quota
        rates = [alone_rate(out, model, q, batch, warmup) for q in in_force]
        per_sample[0] += 1 / ideal(rates)
        if cpu:
            per_sample[1] += 1 / limit(rates, cpu, [float(q) for q in in_force], int(batch))
    n = steps - first
    return tuple(n / t if t > 0 else None for t in per_sample)


def allreduce_cpu(out, name, hosts):
    path = os.path.join(out, name, "allreduce-cpu.json")
    if not os.path.exists(path):
        return None
    with open(path) as f:
        cpu = json.load(f)["cpu_seconds"]
    if len(cpu) != hosts:
        sys.exit(f"testbed_vs_ddp_summary: {path} has {len(cpu)} hosts' costs, the scenario {hosts} hosts")
    return cpu


def scenario_rows(out, fields, warmup):
    """The rows of one scenario line of scenarios.txt."""
    name, batch, quotas, target, changed, rates, changes = fields[:7]
    model, steady = (fields[7], int(fields[8])) if len(fields) > 7 else ("cnn", warmup)
    conditions = quotas.replace(",", "/") + " cores"
    if rates != "-" and len(set(rates.split(","))) == 1 and rates.split(",")[0] != "0":
        conditions += f", every link {rates.split(',')[0]} Mbit/s"
    elif rates != "-":
        conditions += "".join(f", host {i}'s link {r} Mbit/s" for i, r in enumerate(rates.split(",")) if r != "0")
    if changes != "-":
        conditions += f", host {changed}: " + ", ".join(
            f"{q} after {float(f):.0%} of the steps" for f, q in (c.split("=") for c in changes.split(",")))
    quotas, target = quotas.split(","), None if target == "-" else float(target)
    changed = None if changed == "-" else int(changed)
    cpu = allreduce_cpu(out, name, len(quotas))
    runs = {}
    for system, label, mode in systems_in(os.path.join(out, name)):
        ddp = system.startswith(("ddp", "lightning"))  # a Python side's summary JSON (ddp_peer.py's format)
        path = os.path.join(out, name, system + (".json" if ddp else ""))
        if not os.path.exists(path if ddp else os.path.join(path, "summary.json")):
            continue  # stopped before its end
        read = ddp_run if ddp else balancenet_run
        run = read(path, steady)
        run["all_steps"] = read(path, warmup)["samples_per_second"]
        run["ideal"], run["limit"] = bounds(out, model, quotas, batch, cpu, changed,
                                            os.path.join(out, name, system + ".changes"), steady, run["steps"], warmup)
        runs[system] = (label, mode, run)
    if not runs:
        sys.exit(f"testbed_vs_ddp_summary: {name}: no run in {os.path.join(out, name)}")
    ddp_rate = runs["ddp"][2]["samples_per_second"] if "ddp" in runs else None
    singles = {m: r["samples_per_second"] for _, m, r in runs.values()
               if m and m != "auto" and r["samples_per_second"]}
    best = max(singles, key=singles.get) if singles else None
    rows = []
    for system, (label, mode, r) in runs.items():
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
            "model": model, "steady_from": steady, "samples_per_second_all_steps": r["all_steps"],
            "limit_samples_per_second": r["limit"],
            "fraction_of_limit": rate / r["limit"] if rate and r["limit"] else None,
            "allreduce_cpu_ms": "/".join(f"{c * 1000:.1f}" for c in cpu) if cpu else None,
            "best_mode": mode is not None and mode == best,
            "ratio_to_best_mode": rate / singles[best] if mode == "auto" and rate and best else None,
        })
    return rows


def print_table(rows):
    print("| scenario | hosts | B | system | samples/s | ideal | limit | of ideal | of limit | x DDP "
          "| s to target | final acc. |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        to_target = "" if r["target_accuracy"] is None or r["evaluations"] < 2 else \
            f"{fmt(r['seconds_to_target'], '.1f')} (to {r['target_accuracy']:.0%})"
        system = r["system"] + (" (best mode)" if r["best_mode"] else "") + \
            (f" ({r['ratio_to_best_mode']:.2f} of the best mode)" if r["ratio_to_best_mode"] else "")
        print(f"| {r['scenario']} | {r['conditions']} | {r['global_batch']} | {system} "
              f"| {fmt(r['samples_per_second'], '.1f')} | {fmt(r['ideal_samples_per_second'], '.1f')} "
              f"| {fmt(r['limit_samples_per_second'], '.1f')} | {fmt(r['fraction_of_ideal'], '.2f')} "
              f"| {fmt(r['fraction_of_limit'], '.2f')} | {fmt(r['ratio_to_ddp'], '.2f')} | {to_target} "
              f"| {fmt(r['final_accuracy'], '.2%')} |")
    print()
    for name in dict.fromkeys(r["scenario"] for r in rows):
        of = [r for r in rows if r["scenario"] == name]
        best = next((r for r in of if r["best_mode"]), None)
        auto = next((r for r in of if r["ratio_to_best_mode"]), None)
        print(f"{name}: steps {of[0]['steady_from']} on of {max(r['steps'] for r in of)}; "
              f"one all-reduce of {of[0]['model']} costs the hosts {of[0]['allreduce_cpu_ms'] or 'n/r'} CPU-ms; "
              f"best single mode: {best['system'] if best else 'n/r'}"
              + (f"; auto at {auto['ratio_to_best_mode']:.2f} of it "
                 f"({fmt(auto['samples_per_second_all_steps'], '.1f')} samples/s over all its steps)" if auto else ""))


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: testbed_vs_ddp_summary.py OUT WARMUP_STEPS  (OUT/scenarios.txt: 'name batch quotas target "
                 "changed-host rates changes [model steady-from]' a line, - for none)")
    out, warmup = sys.argv[1], int(sys.argv[2])
    with open(os.path.join(out, "scenarios.txt")) as f:
        rows = [row for line in f if line.strip() for row in scenario_rows(out, line.split(), warmup)]
    with open(os.path.join(out, "testbed_vs_ddp.csv.tmp"), "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
        writer.writeheader()
        writer.writerows(rows)
    os.replace(os.path.join(out, "testbed_vs_ddp.csv.tmp"), os.path.join(out, "testbed_vs_ddp.csv"))
    print_table(rows)


if __name__ == "__main__":
    main()
