#!/usr/bin/env python3
"""The table of bench/frameworks_vs_ddp.sh: per scenario and framework, samples/s of the balanced side against the
framework's own DDP (rank 0's steps after the first WARMUP, as bench/vs_ddp_summary.py reads them) and the
training seconds to the first evaluation at or above the target. Writes OUT/frameworks_vs_ddp.json and prints a
markdown table with the targets: >= 2.5x on h1, >= 0.97x on homo. The accuracy target is each run's own
(framework_peer.py writes it: transformers' is a next-token accuracy), else the command's TARGET."""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from vs_ddp_summary import ddp_run, fmt, time_to, write_json  # noqa: E402

TARGETS = {"h1": 2.5, "homo": 0.97}
NAMES = {"lightning": "Lightning", "transformers": "transformers Trainer", "accelerate": "Accelerate",
         "fsdp2": "FSDP2 (fully_shard)", "torch": "plain package (ddp_peer.py)"}


def main():
    # The first split decision comes at step 5: before it both sides train the equal split (QUICK runs leave 1 out).
    out, warmup = sys.argv[1], int(sys.argv[2])
    target = float(next((w.split("=")[1] for w in open(os.path.join(out, "command.txt")).read().split()
                         if w.startswith("TARGET=")), 0))
    rows, results = [], {}
    for scenario in sorted(os.listdir(out)):
        folder = os.path.join(out, scenario)
        if not os.path.isdir(folder):
            continue
        for framework in sorted(os.listdir(folder)):
            sides = {name: ddp_run(os.path.join(folder, framework, f"{name}.json"), warmup)
                     for name in ("balanced", "ddp")}
            rate = {name: run["samples_per_second"] for name, run in sides.items()}
            ratio = rate["balanced"] / rate["ddp"] if rate["balanced"] and rate["ddp"] else None
            aim = json.load(open(os.path.join(folder, framework, "balanced.json"))).get("target_accuracy", target)
            reach = {name: time_to(run["evaluations"], aim) if aim else None for name, run in sides.items()}
            gain = reach["ddp"] / reach["balanced"] if reach["ddp"] and reach["balanced"] else None
            least = TARGETS.get(scenario)
            met = "n/r" if ratio is None or least is None else ("met" if ratio >= least else "**not met**")
            results.setdefault(scenario, {})[framework] = {"samples_per_second": rate, "ratio": ratio, "target": aim,
                                                           "seconds_to_target": reach, "time_ratio": gain}
            rows.append(f"| {scenario} | {NAMES.get(framework, framework)} | {fmt(rate['balanced'], '.1f')} | "
                        f"{fmt(rate['ddp'], '.1f')} | **{fmt(ratio, '.2f')}x** | {fmt(reach['balanced'], '.1f')} | "
                        f"{fmt(reach['ddp'], '.1f')} | {fmt(gain, '.2f')}x | {fmt(aim, '.0%')} | >= {least}x: {met} |")
    write_json(os.path.join(out, "frameworks_vs_ddp.json"), results)
    print("| scenario | framework | balanced samples/s | its DDP samples/s | ratio | balanced s to target | "
          "DDP s to target | ratio | accuracy target | samples/s target |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    print("\n".join(rows))


if __name__ == "__main__":
    main()
