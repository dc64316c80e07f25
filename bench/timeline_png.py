#!/usr/bin/env python3
"""Draws a window of a balancenet --timeline trace as a PNG (one row per rank and lane), with gnuplot.

Usage: bench/timeline_png.py trace.json out.png [first-step] [steps] [title]
The window starts at rank 0's forward of `first-step` (default 5: after warm-up) and spans `steps` steps.
"""
import json
import subprocess
import sys
import tempfile

COLOURS = {"forward": "#4c72b0", "backward": "#55a868", "optimizer": "#8172b2", "wait": "#c44e52",
           "synchronize": "#dddddd", "message": "#dd8452"}


def kind(name):
    for k in ("forward", "backward", "optimizer", "synchronize"):
        if name.startswith(k):
            return k
    return "wait" if name.startswith("wait") else "message"


def main():
    trace, png = sys.argv[1], sys.argv[2]
    first = int(sys.argv[3]) if len(sys.argv) > 3 else 5
    steps = int(sys.argv[4]) if len(sys.argv) > 4 else 2
    title = sys.argv[5] if len(sys.argv) > 5 else trace
    events = [e for e in json.load(open(trace))["traceEvents"] if e.get("ph") == "X"]
    starts = sorted(e["ts"] for e in events if e["pid"] == 0 and e["name"] == "forward")
    if len(starts) < first + steps + 1:
        sys.exit(f"{trace}: only {len(starts)} steps recorded")
    t0, t1 = starts[first], starts[first + steps]
    ranks = sorted({e["pid"] for e in events})
    rows = {}  # (rank, lane) -> y
    for r in ranks:
        for lane in (0, 1):
            rows[(r, lane)] = len(rows)
    with tempfile.NamedTemporaryFile("w", suffix=".dat", delete=False) as data:
        for k in COLOURS:
            for e in events:
                if kind(e["name"]) != k or e["ts"] + e["dur"] < t0 or e["ts"] > t1:
                    continue
                a, b = max(e["ts"], t0) - t0, min(e["ts"] + e["dur"], t1) - t0
                y = rows[(e["pid"], e["tid"])]
                height = 0.2 if k == "synchronize" else 0.35
                data.write(f"{(a + b) / 2000:.3f} {y} {(b - a) / 2000:.3f} {height}\n")
            data.write("\n\n")
    labels = ", ".join(f'"rank {r} {"comm" if lane else "compute"}" {y}' for (r, lane), y in rows.items())
    plots = ", ".join(f'"{data.name}" index {i} with boxxyerror fs solid 0.9 border lc rgb "white" lc rgb "{c}" title "{k}"'
                      for i, (k, c) in enumerate(COLOURS.items()))
    script = f"""set terminal pngcairo size 1100,{160 + 45 * len(rows)} font 'sans,10'
set output "{png}"
set title "{title}"
set xlabel "ms"
set ytics ({labels})
set yrange [{len(rows) - 0.3}:-0.7]
set xrange [0:{(t1 - t0) / 1000:.1f}]
set key outside right
set grid x
plot {plots}
"""
    subprocess.run(["gnuplot"], input=script, text=True, check=True)


if __name__ == "__main__":
    main()
