#!/usr/bin/env python3
"""bench/recompute_capped.sh's table: samples/s of every run after the warm-up (vs_ddp_summary's measures), the
capped worker's share and passes over the second half, and the ratios the issue asks for (recomputation and
passes over the one-pass shares and the uncapped run, against DDP doing the same). Writes
OUT/recompute_capped.json. Usage: recompute_capped_summary.py OUT WARMUP CAP_MIB"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from memory_bench import share_cell, worker_passes, write_json  # noqa: E402
from vs_ddp_summary import ddp_run, steady_rate  # noqa: E402  (the same measures as bench/vs_ddp.sh)

BN_RUNS = ("bn-uncapped", "bn-one-pass", "bn-accumulate", "bn-recompute")
DDP_RUNS = ("ddp", "ddp-accumulate", "ddp-recompute")


def main():
    out, warmup, cap = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
    result = {"cap_mib": cap, "warmup_steps": warmup, "runs": {}}
    for name in BN_RUNS:
        run_dir = os.path.join(out, name)
        rate, steps = steady_rate(run_dir, warmup)
        share, passes = worker_passes(run_dir, rank=1)
        result["runs"][name] = {"samples_per_second": rate, "steps": steps, "worker1_share": share,
                                "worker1_passes": passes}
    for name in DDP_RUNS:
        result["runs"][name] = {"samples_per_second": ddp_run(os.path.join(out, name + ".json"), warmup)[
            "samples_per_second"]}
    rate = {k: v["samples_per_second"] for k, v in result["runs"].items()}
    ratios = {
        "recompute_over_one_pass": rate["bn-recompute"] / rate["bn-one-pass"],
        "accumulate_over_one_pass": rate["bn-accumulate"] / rate["bn-one-pass"],
        "recompute_over_uncapped": rate["bn-recompute"] / rate["bn-uncapped"],
        "accumulate_over_uncapped": rate["bn-accumulate"] / rate["bn-uncapped"],
        "recompute_over_ddp_recompute": rate["bn-recompute"] / rate["ddp-recompute"],
        "accumulate_over_ddp_accumulate": rate["bn-accumulate"] / rate["ddp-accumulate"],
        "uncapped_over_ddp": rate["bn-uncapped"] / rate["ddp"],
    }
    result.update(ratios)
    write_json(os.path.join(out, "recompute_capped.json"), result)
    print("| run | samples/s | worker 1: share, passes (median, 2nd half) |")
    print("|---|---|---|")
    for name, r in result["runs"].items():
        print(f"| {name} | {r['samples_per_second']:.1f} | {share_cell(r, 1)} |")
    print(f"over the one-pass shares: recompute {ratios['recompute_over_one_pass']:.2f}x, accumulate "
          f"{ratios['accumulate_over_one_pass']:.2f}x (target >= 1.3x); over uncapped: recompute "
          f"{ratios['recompute_over_uncapped']:.2f}, accumulate {ratios['accumulate_over_uncapped']:.2f} (target >= "
          f"0.90); against DDP doing the same: recompute {ratios['recompute_over_ddp_recompute']:.2f}x, accumulate "
          f"{ratios['accumulate_over_ddp_accumulate']:.2f}x; uncapped / DDP {ratios['uncapped_over_ddp']:.2f}x")


if __name__ == "__main__":
    main()
