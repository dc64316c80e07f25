#!/usr/bin/env python3
"""The tables of bench/partition_scenarios.sh from the runs it left in OUT (standard library only).

OUT/runs.txt: one 'scenario system expect seconds repetition' line per run; the run directory is
OUT/scenario/system for the first repetition and OUT/scenario/system.rK for the K-th. A system run several
times is shown by the median of its runs (each run's samples/s listed too); auto / system is the ratio of the
medians. OUT/skipped.txt: 'scenario why' for a scenario skipped. Per run that trained: samples/s over the steps from WARMUP on (the global batch over rank 0's update_ms, the
step's wall time); for auto runs, the planner's prediction (stage_times.csv: the partition in force longest,
its predicted step ms) and the measured/predicted ratio, and the prediction refreshed with the measured costs
(partitions.csv); for P2 and P2b, the steps from each speed change (C1, C2)
to the first move in partitions.csv, and samples/s between the changes. A refused run shows its error line.
Writes OUT/partition_scenarios.json and prints markdown tables.
"""
import csv
import json
import os
import sys


def fmt(value, spec):
    return "-" if value is None else format(value, spec)


def rank0_step_ms(path):
    ms = {}
    with open(os.path.join(path, "steps.csv")) as f:
        for row in csv.DictReader(f):
            if row["rank"] == "0":
                ms[int(row["step"])] = float(row["update_ms"])
    return ms


def rate(ms, batch, first, end=None):
    kept = [s for s in ms if s >= first and (end is None or s < end)]
    seconds = sum(ms[s] for s in kept) / 1000
    return len(kept) * batch / seconds if seconds > 0 else None


def predicted_step_ms(path):
    """The predicted step ms of the partition in force for the most steps (stage_times.csv)."""
    name = os.path.join(path, "stage_times.csv")
    if not os.path.exists(name):
        return None
    best = None
    with open(name) as f:
        for row in csv.DictReader(f):
            steps = int(row["last_step"]) - int(row["first_step"]) + 1
            if best is None or steps > best[0]:
                best = (steps, float(row["predicted_step_ms"]))
    return best[1] if best else None


def refreshed_step_ms(path):
    """The mean over decisions of the current placement's prediction with the costs rescaled by what was
    measured (partitions.csv's predicted_current_ms), the first decision left out (its window has the
    warm-up)."""
    name = os.path.join(path, "partitions.csv")
    if not os.path.exists(name):
        return None
    with open(name) as f:
        values = [float(row["predicted_current_ms"]) for row in csv.DictReader(f)][1:]
    return sum(values) / len(values) if values else None


def moves(path):
    name = os.path.join(path, "partitions.csv")
    if not os.path.exists(name):
        return []
    with open(name) as f:
        return [row for row in csv.DictReader(f) if row["moved"].strip().lower() in ("1", "true", "yes")]


def error_line(log):
    with open(log, errors="replace") as f:
        lines = [line.strip() for line in f if "error:" in line]
    return lines[0] if lines else "(no error line)"


def median(values):
    values = sorted(v for v in values if v is not None)
    if not values:
        return None
    mid = len(values) // 2
    return values[mid] if len(values) % 2 else (values[mid - 1] + values[mid]) / 2


def one_run(out, scenario, system, expect, seconds, path, warmup, c1, c2):
    r = {"scenario": scenario, "system": system, "seconds": int(seconds)}
    if expect == "refused":
        r["refused"] = error_line(path + ".log")
        return r
    with open(os.path.join(path, "summary.json")) as s:
        summary = json.load(s)
    batch = summary["global_batch"]
    ms = rank0_step_ms(path)
    r["samples_per_second"] = rate(ms, batch, warmup)
    r["partition"] = summary.get("pipeline", {}).get("partition")
    r["repartitions"] = summary.get("repartitions")
    pred = predicted_step_ms(path)
    r["predicted_samples_per_second"] = batch * 1000 / pred if pred else None
    refreshed = refreshed_step_ms(path)
    r["refreshed_samples_per_second"] = batch * 1000 / refreshed if refreshed else None
    if scenario.startswith("P2"):
        moved = [int(m["step"]) for m in moves(path)]
        r["moves"] = moved
        r["react_c1"] = next((s - c1 for s in moved if s >= c1), None)
        r["react_c2"] = next((s - c2 for s in moved if s >= c2), None)
        r["samples_per_second_slow_phase"] = rate(ms, batch, c1, c2)
    return r


def combined(runs):
    """One row for a system from its repetitions: medians, each run's samples/s, the last run's partition."""
    if len(runs) == 1 or any("refused" in r for r in runs):
        return dict(runs[-1], runs=[r.get("samples_per_second") for r in runs])
    row = dict(runs[-1])
    for key in ("samples_per_second", "predicted_samples_per_second", "refreshed_samples_per_second",
                "samples_per_second_slow_phase"):
        row[key] = median(r.get(key) for r in runs)
    row["runs"] = [r.get("samples_per_second") for r in runs]
    row["partitions"] = [r.get("partition") for r in runs]
    return row


def main():
    if len(sys.argv) != 5:
        sys.exit("usage: partition_scenarios_summary.py OUT WARMUP C1 C2")
    out, warmup, c1, c2 = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
    by_system = {}
    with open(os.path.join(out, "runs.txt")) as f:
        for line in f:
            if not line.strip():
                continue
            scenario, system, expect, seconds, *rest = line.split()
            repetition = int(rest[0]) if rest else 1
            path = os.path.join(out, scenario, system + ("" if repetition == 1 else f".r{repetition}"))
            by_system.setdefault(scenario, {}).setdefault(system, []).append(
                one_run(out, scenario, system, expect, seconds, path, warmup, c1, c2))
    results = {scenario: {system: combined(runs) for system, runs in systems.items()}
               for scenario, systems in by_system.items()}
    skipped = {}
    if os.path.exists(os.path.join(out, "skipped.txt")):
        with open(os.path.join(out, "skipped.txt")) as f:
            for line in f:
                if line.strip():
                    scenario, why = line.strip().split(" ", 1)
                    skipped[scenario] = why
                    results.setdefault(scenario, {})["skipped"] = why
    with open(os.path.join(out, "partition_scenarios.json.tmp"), "w") as f:
        json.dump(results, f, indent=1)
    os.replace(os.path.join(out, "partition_scenarios.json.tmp"), os.path.join(out, "partition_scenarios.json"))

    for scenario in sorted(results):
        runs = results[scenario]
        print(f"\n### {scenario}\n")
        if scenario in skipped:
            print(f"skipped: {skipped[scenario]}")
            continue
        if scenario.startswith("P2"):
            print("| system | samples/s | samples/s between the changes | moves (steps) | "
                  "steps to react after C1 / C2 |")
            print("|---|---|---|---|---|")
            for system, r in runs.items():
                print(f"| {system} | {fmt(r.get('samples_per_second'), '.1f')} "
                      f"| {fmt(r.get('samples_per_second_slow_phase'), '.1f')} "
                      f"| {' '.join(map(str, r.get('moves', []))) or '-'} "
                      f"| {fmt(r.get('react_c1'), 'd')} / {fmt(r.get('react_c2'), 'd')} |")
            if "auto" in runs and "keep" in runs and runs["keep"].get("samples_per_second"):
                a, k = runs["auto"], runs["keep"]
                print(f"\nauto / keep: {a['samples_per_second'] / k['samples_per_second']:.2f}x over the run, "
                      f"{fmt(a['samples_per_second_slow_phase'] / k['samples_per_second_slow_phase'], '.2f')}x "
                      "between the changes")
            continue
        base = runs.get("auto", {}).get("samples_per_second")
        print("| system | samples/s | auto / system | each run | predicted, first plan | measured / predicted "
              "| predicted, refreshed | measured / refreshed | partition |")
        print("|---|---|---|---|---|---|---|---|---|")
        for system, r in runs.items():
            if "refused" in r:
                print(f"| {system} | refused: `{r['refused']}` | - | - | - | - | - | - | - |")
                continue
            sps, pred = r["samples_per_second"], r["predicted_samples_per_second"]
            fresh = r["refreshed_samples_per_second"]
            each = " ".join(fmt(v, ".1f") for v in r.get("runs", []))
            print(f"| {system} | {fmt(sps, '.1f')} | {fmt(base / sps if base and sps else None, '.2f')} | {each} "
                  f"| {fmt(pred, '.1f')} | {fmt(sps / pred if sps and pred else None, '.2f')} "
                  f"| {fmt(fresh, '.1f')} | {fmt(sps / fresh if sps and fresh else None, '.2f')} "
                  f"| {' / '.join(sorted(set(p for p in r.get('partitions', [r.get('partition')]) if p))) or '-'} |")


if __name__ == "__main__":
    main()
