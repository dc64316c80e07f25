#!/usr/bin/env python3
"""Tables of bench/adaptive_batch.sh: time to the target accuracy per system (median and spread over seeds),
samples to it, the B it ended at, and the ratios issue 32's targets ask for.
Usage: adaptive_batch_summary.py OUT TARGET   (writes OUT/adaptive_batch.json, prints markdown)"""
import csv
import json
import os
import statistics
import sys


def load(run):
    with open(os.path.join(run, "summary.json")) as f:
        summary = json.load(f)
    per_step = {}
    with open(os.path.join(run, "steps.csv")) as f:
        for row in csv.DictReader(f):
            step = int(row["step"])
            per_step[step] = per_step.get(step, 0) + int(row["batch"])
    samples_before, total = {}, 0  # samples trained before each step
    for step in sorted(per_step):
        samples_before[step] = total
        total += per_step[step]
    samples_before[max(per_step) + 1 if per_step else 0] = total
    evals = [(e["step"], e["accuracy"], e["train_seconds"], samples_before.get(e["step"], total))
             for e in summary.get("evaluations", []) if e.get("accuracy") is not None]
    return summary, evals, per_step


def first_reach(evals, target):
    for step, acc, seconds, samples in evals:
        if acc >= target - 1e-9:
            return seconds, step, samples
    return None


def accuracy_at(evals, samples):
    """The accuracy of the last evaluation at or before `samples` samples (None before the first)."""
    best = None
    for step, acc, seconds, s in evals:
        if s <= samples:
            best = acc
    return best


def main():
    out, target = sys.argv[1], float(sys.argv[2])
    runs = {}
    for name in sorted(os.listdir(out)):
        path = os.path.join(out, name)
        if not os.path.isdir(path) or "-s" not in name or not os.path.exists(os.path.join(path, "summary.json")):
            continue
        system, seed = name.rsplit("-s", 1)
        summary, evals, per_step = load(path)
        reach = first_reach(evals, target)
        runs.setdefault(system, []).append({
            "seed": int(seed), "evals": evals, "reached": reach is not None,
            "seconds": reach[0] if reach else None, "step": reach[1] if reach else None,
            "samples": reach[2] if reach else None, "train_seconds": summary.get("train_seconds"),
            "final_accuracy": summary.get("final_accuracy"), "samples_per_second": summary.get("samples_per_second"),
            "final_batch": summary.get("final_global_batch"), "noise": summary.get("gradient_noise_scale"),
            "stopped_by": summary.get("stopped_by"),
            "batches": sorted(set(per_step.values()))})

    def med(values):
        values = [v for v in values if v is not None]
        return statistics.median(values) if values else None

    rows, medians = [], {}
    order = sorted(runs, key=lambda s: (not s.startswith("auto"), s))
    print(f"Time to {target:.0%} test accuracy (training seconds; evaluations excluded), median over seeds [min-max]\n")
    print("| system | seeds reached | seconds to target | samples to target | samples/s | final B | noise scale at end | stopped by |")
    print("|---|---|---|---|---|---|---|---|")
    for system in order:
        rs = runs[system]
        secs = [r["seconds"] for r in rs if r["reached"]]
        m = med(secs) if len(secs) == len(rs) else None  # a median only where every seed reached
        medians[system] = m
        spread = f" [{min(secs):.0f}-{max(secs):.0f}]" if secs else ""
        shown = f"{m:.0f}{spread}" if m is not None else (f"not all reached{spread}" if secs else "not reached")
        samples = med([r["samples"] for r in rs])
        rate = med([r["samples_per_second"] for r in rs])
        final_b = med([r["final_batch"] for r in rs])
        noise = med([r["noise"] for r in rs])
        stops = ",".join(sorted({str(r["stopped_by"]) for r in rs}))
        print(f"| {system} | {len(secs)}/{len(rs)} | {shown} | {samples if samples is None else f'{samples:.0f}'} | "
              f"{rate if rate is None else f'{rate:.0f}'} | {final_b if final_b is None else f'{final_b:.0f}'} | "
              f"{noise if noise is None else f'{noise:.3g}'} | {stops} |")
        rows.append({"system": system, "runs": [{k: v for k, v in r.items() if k != "evals"} for r in rs],
                     "median_seconds": m})

    print("\nTargets")
    ratios = {}
    auto = medians.get("auto")
    if auto:
        if medians.get("fixed-128"):
            ratios["fixed128_over_auto"] = medians["fixed-128"] / auto
            print(f"- auto vs fixed B=128: {ratios['fixed128_over_auto']:.2f}x sooner (target >= 1.3x)")
        fixed = {s: v for s, v in medians.items() if s.startswith("fixed-") and v}
        if fixed:
            best = min(fixed, key=fixed.get)
            ratios["best_fixed_over_auto"] = fixed[best] / auto
            print(f"- auto vs the best fixed B in hindsight ({best}, {fixed[best]:.0f} s): "
                  f"{ratios['best_fixed_over_auto']:.2f}x (target >= 0.95x)")
        if medians.get("auto-equal"):
            ratios["equal_over_auto"] = medians["auto-equal"] / auto
            print(f"- per-worker shares vs equal shares under auto: {ratios['equal_over_auto']:.2f}x (target >= 1.5x)")
        elif "auto-equal" in runs:
            worst = max(r["train_seconds"] or 0 for r in runs["auto-equal"])
            print(f"- per-worker shares vs equal shares under auto: auto-equal did not reach the target in "
                  f"{worst:.0f} s on every seed: at least {worst / auto:.2f}x (target >= 1.5x)")
    # Accuracy after the same samples: auto's at the samples fixed-128 needed for the target, per seed.
    if "auto" in runs and "fixed-128" in runs:
        pairs = []
        for r in runs["fixed-128"]:
            mate = next((a for a in runs["auto"] if a["seed"] == r["seed"]), None)
            if mate and r["reached"]:
                pairs.append((r["seed"], r["samples"], accuracy_at(r["evals"], r["samples"]),
                              accuracy_at(mate["evals"], r["samples"])))
        for seed, samples, fixed_acc, auto_acc in pairs:
            shown = "no evaluation yet" if auto_acc is None else f"{auto_acc:.2%}"
            print(f"- seed {seed}, after {samples} samples (fixed-128's {target:.0%}): fixed-128 {fixed_acc:.2%}, auto {shown}")
        ratios["same_samples"] = pairs
    with open(os.path.join(out, "adaptive_batch.json"), "w") as f:
        json.dump({"target": target, "systems": rows, "ratios": ratios}, f, indent=1)


if __name__ == "__main__":
    main()
