#!/usr/bin/env python3
"""The table of bench/pipeline_vs_dp.sh from the runs it left in OUT (standard library only).

OUT/runs.txt: one 'model width system micro-batches run-dir' line per run (system dp, gpipe or 1f1b; - for
no micro-batches; run-dir relative to OUT); a run made twice counts once, its last line. Per run:
samples/s over the steps after the first WARMUP (the global batch over rank 0's update_ms: in a pipelined
run every stage's row counts the samples of its micro-batches, so rows are not summed), its ratio to the
model's data-parallel run, summary.json's "bubble_fraction" (a number, or a list per rank: its mean) beside
the analytical (S-1)/(M+S-1) of a flushed pipeline of equal stages, "peak_memory_mb_max" (the largest
worker's peak resident set) and stage 0's entry (rank 0) of "activation_peak_mb" where the summary has it.
Writes OUT/pipeline_vs_dp.csv and prints a markdown table.
"""
import csv
import json
import os
import sys

LABELS = {"dp": "data parallel", "gpipe": "GPipe", "1f1b": "1F1B"}


def fmt(value, spec):
    return "-" if value is None else format(value, spec)


def mean_of(value):
    """A number, or the mean of a list of them; None for anything else."""
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, list) and value and all(isinstance(v, (int, float)) for v in value):
        return sum(value) / len(value)
    return None


def run_row(out, model, width, system, micros, run_dir, warmup, stages):
    path = os.path.join(out, run_dir)
    with open(os.path.join(path, "summary.json")) as f:
        summary = json.load(f)
    rank0_ms = {}
    with open(os.path.join(path, "steps.csv")) as f:
        for row in csv.DictReader(f):
            if row["rank"] == "0":
                rank0_ms[int(row["step"])] = float(row["update_ms"])
    kept = [s for s in rank0_ms if s >= warmup]
    seconds = sum(rank0_ms[s] for s in kept) / 1000
    rate = len(kept) * summary["global_batch"] / seconds if seconds > 0 else None
    m = None if micros == "-" else int(micros)
    activations = summary.get("activation_peak_mb")
    return {
        "model": model, "width": float(width), "system": LABELS.get(system, system),
        "micro_batches": m, "global_batch": summary["global_batch"], "steps": len(rank0_ms),
        "samples_per_second": rate, "ratio_to_dp": None,
        "bubble_fraction": mean_of(summary.get("bubble_fraction")),
        "analytical_bubble": (stages - 1) / (m + stages - 1) if m else None,
        "peak_memory_mb_max": summary.get("peak_memory_mb_max"),
        "activation_peak_mb_stage0": activations[0] if isinstance(activations, list) and activations else None,
        "run_dir": run_dir,
    }


def main():
    if len(sys.argv) != 4:
        sys.exit("usage: pipeline_vs_dp_summary.py OUT WARMUP_STEPS STAGES  "
                 "(OUT/runs.txt: 'model width system micro-batches run-dir' a line)")
    out, warmup, stages = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    runs = {}
    with open(os.path.join(out, "runs.txt")) as f:
        for line in f:
            if line.strip():
                model, width, system, micros, run_dir = line.split()
                runs[run_dir] = (model, width, system, micros)
    if not runs:
        sys.exit(f"pipeline_vs_dp_summary: no run in {os.path.join(out, 'runs.txt')}")
    rows = [run_row(out, *spec, run_dir, warmup, stages) for run_dir, spec in runs.items()]
    order = {"data parallel": 0, "GPipe": 1, "1F1B": 2}
    rows.sort(key=lambda r: (r["model"], order.get(r["system"], 3), r["micro_batches"] or 0))
    dp_rate = {r["model"]: r["samples_per_second"] for r in rows if r["system"] == "data parallel"}
    for r in rows:
        base = dp_rate.get(r["model"])
        r["ratio_to_dp"] = r["samples_per_second"] / base if base and r["samples_per_second"] else None

    tmp = os.path.join(out, "pipeline_vs_dp.csv.tmp")
    with open(tmp, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
        writer.writeheader()
        writer.writerows(rows)
    os.replace(tmp, os.path.join(out, "pipeline_vs_dp.csv"))

    print("| model | system | M | B | samples/s | ratio to DP | bubble | (S-1)/(M+S-1) | peak memory, largest "
          "worker (MB) | stage 0 activations (MB) |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['model']} (width {r['width']:g}) | {r['system']} | {fmt(r['micro_batches'], 'd')} "
              f"| {r['global_batch']} | {fmt(r['samples_per_second'], '.1f')} | {fmt(r['ratio_to_dp'], '.2f')} "
              f"| {fmt(r['bubble_fraction'], '.2f')} | {fmt(r['analytical_bubble'], '.2f')} "
              f"| {fmt(r['peak_memory_mb_max'], '.0f')} | {fmt(r['activation_peak_mb_stage0'], '.1f')} |")


if __name__ == "__main__":
    main()
