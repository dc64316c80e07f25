"""What bench/memory_capped_summary.py and bench/sharded_state_summary.py (issue 53) both read and write: a worker's
share and passes over a run's second half, the peak resident memory per rank, the JSON written atomically."""
import csv
import json
import os
import statistics


def worker_passes(run_dir, rank=3):
    """Median share and micro-steps of `rank` over the second half of steps.csv's steps."""
    rows = [r for r in csv.DictReader(open(os.path.join(run_dir, "steps.csv"))) if int(r["rank"]) == rank]
    half = rows[len(rows) // 2:]
    return statistics.median(int(r["batch"]) for r in half), statistics.median(int(r["micro_batches"]) for r in half)


def share_cell(run, rank):
    """A run's `worker<rank>_share` and `_passes` as a table cell ("-" for a run without them: DDP's)."""
    key = f"worker{rank}_"
    return f"{run[key + 'share']:g}, {run[key + 'passes']:g}" if key + "share" in run else "-"


def peaks_text(peaks):
    """summary.json's peak_memory_mb per rank as a table cell."""
    return ", ".join(f"{p:.0f}" for p in peaks or []) or "-"


def write_json(path, value):
    """`value` as JSON at `path`, through a temporary file: never half written."""
    with open(path + ".tmp", "w") as f:
        json.dump(value, f, indent=2)
    os.replace(path + ".tmp", path)
