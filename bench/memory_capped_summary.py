#!/usr/bin/env python3
"""bench/memory_capped.sh's table: samples/s of every run after the warm-up (vs_ddp_summary's measures), the
capped worker's share and passes over the second half, each rank's peak resident memory, and the ratios the issue
asks for (auto over one-pass shares, auto over the uncapped run, against DDP). Writes OUT/memory_capped.json.
Usage: memory_capped_summary.py OUT WARMUP CAP_MIB PASS MB_PER_SAMPLE"""
import csv
import json
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from memory_bench import peaks_text, share_cell, worker_passes, write_json  # noqa: E402
from vs_ddp_summary import ddp_run, steady_rate  # noqa: E402  (the same measures as bench/vs_ddp.sh)


def main():
    out, warmup, cap, passed, mb_per_sample = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4]), \
        float(sys.argv[5])
    result = {"cap_mib": cap, "pass_samples": passed, "warmup_steps": warmup, "runs": {}}
    for name in ("bn-uncapped", "bn-one-pass", "bn-auto"):
        run_dir = os.path.join(out, name)
        rate, steps = steady_rate(run_dir, warmup)
        share, passes = worker_passes(run_dir)
        summary = json.load(open(os.path.join(run_dir, "summary.json")))
        result["runs"][name] = {"samples_per_second": rate, "steps": steps, "worker3_share": share,
                                "worker3_passes": passes, "peak_memory_mb": summary.get("peak_memory_mb")}
    for name in ("ddp", "ddp-accumulate"):
        result["runs"][name] = {"samples_per_second": ddp_run(os.path.join(out, name + ".json"), warmup)[
            "samples_per_second"]}
    rate = {k: v["samples_per_second"] for k, v in result["runs"].items()}
    result["auto_over_one_pass"] = rate["bn-auto"] / rate["bn-one-pass"]
    result["auto_over_uncapped"] = rate["bn-auto"] / rate["bn-uncapped"]
    result["auto_over_ddp_accumulate"] = rate["bn-auto"] / rate["ddp-accumulate"]
    result["uncapped_over_ddp"] = rate["bn-uncapped"] / rate["ddp"]
    # The memory model's activations against the measured: in the auto run, an uncapped worker's one pass of its
    # share against worker 3's pass, both from peak RSS (the runtime's own memory cancels).
    auto = result["runs"]["bn-auto"]
    peaks = auto["peak_memory_mb"] or []
    if len(peaks) == 4:
        others = statistics.median(int(r["batch"]) for r in csv.DictReader(open(os.path.join(out, "bn-auto",
                                                                                      "steps.csv")))
                                   if int(r["rank"]) == 0)
        estimate = (others - passed) * mb_per_sample * 1e6 / 2**20
        result["rss_difference_mib"] = {"measured": peaks[0] - peaks[3], "estimated": estimate}
    write_json(os.path.join(out, "memory_capped.json"), result)
    print("| run | samples/s | worker 3: share, passes (median, 2nd half) | peak RSS per rank, MiB |")
    print("|---|---|---|---|")
    for name, r in result["runs"].items():
        print(f"| {name} | {r['samples_per_second']:.1f} | {share_cell(r, 3)} | {peaks_text(r.get('peak_memory_mb'))} |")
    print(f"auto / one-pass shares: {result['auto_over_one_pass']:.2f}x (target >= 1.3x); auto / uncapped: "
          f"{result['auto_over_uncapped']:.2f} (target >= 0.90); auto / DDP accumulating: "
          f"{result['auto_over_ddp_accumulate']:.2f}x; uncapped / DDP: {result['uncapped_over_ddp']:.2f}x")
    if "rss_difference_mib" in result:
        d = result["rss_difference_mib"]
        print(f"peak RSS, rank 0 minus rank 3 (auto): measured {d['measured']:.1f} MiB, the estimate's activations "
              f"{d['estimated']:.1f} MiB")


if __name__ == "__main__":
    main()
