#!/usr/bin/env python3
"""bench/sharded_state.sh's table: per run its exit status, samples/s after the warm-up (vs_ddp_summary's measure),
the slices it logged, worker 3's share and passes over the second half and each rank's peak resident memory; a
refused run's one line. Writes OUT/sharded_state.json. Usage: sharded_state_summary.py OUT WARMUP CAPS"""
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from memory_bench import peaks_text, worker_passes, write_json  # noqa: E402
from vs_ddp_summary import steady_rate  # noqa: E402  (the same measure as bench/vs_ddp.sh)

RUNS = ("replicated", "sharded-equal", "replicated-capped", "sharded-capped", "pipeline-capped")


def main():
    out, warmup, caps = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    result = {"caps_mib": caps, "warmup_steps": warmup, "runs": {}}
    for name in RUNS:
        rc = int(open(os.path.join(out, name + ".rc")).read())
        log = open(os.path.join(out, name + ".log")).read()
        run = {"exit": rc}
        if rc != 0:
            lines = [line for line in log.splitlines() if "error" in line]
            run["error"] = lines[-1] if lines else log.strip().splitlines()[-1:]
        else:
            run_dir = os.path.join(out, name)
            run["samples_per_second"], run["steps"] = steady_rate(run_dir, warmup)
            slices = re.search(r"in slices of ([0-9, ]+)", log)
            run["slices"] = [int(s) for s in slices.group(1).split(",")] if slices else None
            run["worker3_share"], run["worker3_passes"] = worker_passes(run_dir)
            run["peak_memory_mb"] = json.load(open(os.path.join(run_dir, "summary.json"))).get("peak_memory_mb")
        result["runs"][name] = run
    runs = result["runs"]
    if runs["replicated"]["exit"] == 0 and runs["sharded-equal"]["exit"] == 0:
        result["sharded_over_replicated"] = (runs["sharded-equal"]["samples_per_second"]
                                             / runs["replicated"]["samples_per_second"])
    if runs["sharded-capped"]["exit"] == 0 and runs["pipeline-capped"]["exit"] == 0:
        result["sharded_over_pipeline"] = (runs["sharded-capped"]["samples_per_second"]
                                           / runs["pipeline-capped"]["samples_per_second"])
    write_json(os.path.join(out, "sharded_state.json"), result)
    print("| run | exit | samples/s | slices | worker 3: share, passes | peak RSS per rank, MiB |")
    print("|---|---|---|---|---|---|")
    for name, r in runs.items():
        if r["exit"] != 0:
            print(f"| {name} | {r['exit']} | refused: {r['error']} | | | |")
            continue
        slices = ", ".join(str(s) for s in r["slices"]) if r["slices"] else "-"
        print(f"| {name} | 0 | {r['samples_per_second']:.1f} | {slices} | {r['worker3_share']:g}, "
              f"{r['worker3_passes']:g} | {peaks_text(r['peak_memory_mb'])} |")
    if "sharded_over_replicated" in result:
        print(f"sharded / replicated where both fit: {result['sharded_over_replicated']:.2f}x (target >= 0.9x)")
    if "sharded_over_pipeline" in result:
        print(f"sharded / pipeline stages under the caps: {result['sharded_over_pipeline']:.2f}x")


if __name__ == "__main__":
    main()
