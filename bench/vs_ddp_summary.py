#!/usr/bin/env python3
"""Ratios of balancenet to PyTorch DDP from the runs bench/vs_ddp.sh left in OUT (standard library only).

Per run: samples/s over the steps after the first WARMUP (rank 0's step times: balancenet's steps.csv
update_ms, ddp_peer.py's step_seconds), and the training seconds (evaluation excluded, every step
counted) until the first evaluation at or above the scenario's target accuracy. Per scenario: the median of each
side, and the median over the back-to-back pairs of the per-pair ratios (samples/s: balancenet / DDP;
time to target: DDP / balancenet, so above 1 means balancenet is faster on both).
Writes OUT/vs_ddp.csv (one row per run) and OUT/vs_ddp.json (per scenario) and prints a table.
"""
import csv
import json
import os
import statistics
import sys


def steady_rate(run_dir, warmup):
    """balancenet's samples/s over the steps after the first `warmup` (rank 0's update_ms in steps.csv), and the
    steps the run took: (None, steps) when no time was counted. bench/gpu_summary.py reads runs the same way."""
    batches, rank0_ms = {}, {}
    with open(os.path.join(run_dir, "steps.csv")) as f:
        for row in csv.DictReader(f):
            step = int(row["step"])
            batches[step] = batches.get(step, 0) + int(row["batch"])
            if row["rank"] == "0":
                rank0_ms[step] = float(row["update_ms"])
    kept = [s for s in rank0_ms if s >= warmup]
    seconds = sum(rank0_ms[s] for s in kept) / 1000
    return (sum(batches[s] for s in kept) / seconds if seconds > 0 else None), len(rank0_ms)


def balancenet_run(run_dir, warmup):
    with open(os.path.join(run_dir, "summary.json")) as f:
        summary = json.load(f)
    rate, steps = steady_rate(run_dir, warmup)
    return {"samples_per_second": rate, "steps": steps, "evaluations": summary.get("evaluations", [])}


def ddp_run(path, warmup):
    with open(path) as f:
        summary = json.load(f)
    steps = summary["step_seconds"][warmup:]
    seconds = sum(steps)
    return {"samples_per_second": len(steps) * summary["global_batch"] / seconds if seconds > 0 else None,
            "steps": len(summary["step_seconds"]), "evaluations": summary.get("evaluations", [])}


def time_to(evaluations, target):
    for e in evaluations:
        if e["accuracy"] >= target:
            return e["train_seconds"]
    return None


def median(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def write_json(path, value):
    """Atomically: a reader never sees half a file."""
    with open(path + ".tmp", "w") as f:
        json.dump(value, f, indent=2)
    os.replace(path + ".tmp", path)


def fmt(value, spec):
    return "n/r" if value is None else format(value, spec)


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: vs_ddp_summary.py OUT WARMUP_STEPS  (OUT/scenarios.txt: one 'name target-accuracy' a line)")
    out, warmup = sys.argv[1], int(sys.argv[2])
    with open(os.path.join(out, "scenarios.txt")) as f:
        scenarios = [(line.split()[0], float(line.split()[1])) for line in f if line.strip()]
    rows, results = [], {}
    for name, target in scenarios:
        folder = os.path.join(out, name)
        pairs = []
        for rep in range(1, 1000):
            bn_dir, ddp_json = os.path.join(folder, f"bn-{rep}"), os.path.join(folder, f"ddp-{rep}.json")
            if not (os.path.isdir(bn_dir) and os.path.exists(ddp_json)):
                break
            pair = {"balancenet": balancenet_run(bn_dir, warmup), "ddp": ddp_run(ddp_json, warmup)}
            for side, run in pair.items():
                run["time_to_target"] = time_to(run["evaluations"], target)
                run["final_accuracy"] = run["evaluations"][-1]["accuracy"] if run["evaluations"] else None
                rows.append([name, rep, side, run["samples_per_second"], run["time_to_target"], run["final_accuracy"]])
            pairs.append(pair)
        if not pairs:
            sys.exit(f"vs_ddp_summary: no complete balancenet/DDP pair in {folder}")

        def side(key, who):
            return median([p[who][key] for p in pairs])

        def pair_ratio(key, num, den):
            return median([p[num][key] / p[den][key] for p in pairs if p[num][key] and p[den][key]])

        results[name] = {
            "pairs": len(pairs), "target_accuracy": target, "warmup_steps": warmup,
            "balancenet_samples_per_second": side("samples_per_second", "balancenet"),
            "ddp_samples_per_second": side("samples_per_second", "ddp"),
            "samples_per_second_ratio": pair_ratio("samples_per_second", "balancenet", "ddp"),
            "balancenet_seconds_to_target": side("time_to_target", "balancenet"),
            "ddp_seconds_to_target": side("time_to_target", "ddp"),
            "time_to_target_speedup": pair_ratio("time_to_target", "ddp", "balancenet"),
            "balancenet_final_accuracy": side("final_accuracy", "balancenet"),
            "ddp_final_accuracy": side("final_accuracy", "ddp"),
        }

    with open(os.path.join(out, "vs_ddp.csv.tmp"), "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["scenario", "rep", "framework", "samples_per_second", "seconds_to_target", "final_accuracy"])
        writer.writerows(rows)
    os.replace(os.path.join(out, "vs_ddp.csv.tmp"), os.path.join(out, "vs_ddp.csv"))
    write_json(os.path.join(out, "vs_ddp.json"), results)

    print("| scenario | pairs | balancenet samples/s | DDP samples/s | ratio | target | balancenet s to target "
          "| DDP s to target | speed-up | final acc. bn / DDP |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for name, r in results.items():
        print(f"| {name} | {r['pairs']} | {fmt(r['balancenet_samples_per_second'], '.1f')} "
              f"| {fmt(r['ddp_samples_per_second'], '.1f')} | {fmt(r['samples_per_second_ratio'], '.2f')}{'x' * bool(r['samples_per_second_ratio'])} "
              f"| {r['target_accuracy']:.0%} "
              f"| {fmt(r['balancenet_seconds_to_target'], '.1f')} | {fmt(r['ddp_seconds_to_target'], '.1f')} "
              f"| {fmt(r['time_to_target_speedup'], '.2f')}{'x' * bool(r['time_to_target_speedup'])} "
              f"| {fmt(r['balancenet_final_accuracy'], '.2%')} / {fmt(r['ddp_final_accuracy'], '.2%')} |")


if __name__ == "__main__":
    main()
