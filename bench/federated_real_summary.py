#!/usr/bin/env python3
"""The table and chart of bench/federated_real.sh from the runs it left in OUT (standard library and gnuplot).

OUT/runs.txt: one 'system exit-code seconds' line per run; the server's run directory is OUT/<system>
(summary.json, rounds.csv: federated/RoundLog.h); OUT/setup.md and OUT/split.md: the testbed and the data.
Prints markdown: the setup, one row per system (time to 80% test accuracy, final accuracy, rounds, client
idle share), how much sooner balanced reached 80% than fedavg-wait-all and fedbuff, and FedAdam against
FedAvg (Reddi et al.'s direction on non-IID data: the adaptive server step reaches the target sooner).
A system that never reached 80% counts as reaching it after its whole run (a ratio against it is a lower
bound, marked '>'). Writes OUT/federated_real.json and OUT/accuracy.png (accuracy vs wall time, gnuplot).
"""
import json
import os
import subprocess
import sys

from federated_summary import fmt, load_run, ratio_text


def accuracy_curve(run_dir):
    """(wall seconds, test accuracy) of every evaluated round, from rounds.csv (one row per round and client)."""
    points = {}
    try:
        with open(os.path.join(run_dir, "rounds.csv")) as f:
            header = f.readline().strip().split(",")
            wall, acc, rnd = header.index("wall_s"), header.index("test_accuracy"), header.index("round")
            for line in f:
                cells = line.strip().split(",")
                if len(cells) == len(header) and cells[acc]:
                    points[int(cells[rnd])] = (float(cells[wall]), float(cells[acc]))
    except (OSError, ValueError):
        return []
    return [points[r] for r in sorted(points)]


def draw(out, curves):
    """accuracy.png: one line per system; nothing when gnuplot is missing or no run has points."""
    drawn = {s: c for s, c in curves.items() if c}
    if not drawn:
        return None
    data = os.path.join(out, "accuracy.dat")
    with open(data, "w") as f:
        for system, curve in drawn.items():
            f.write(f'"{system}"\n' + "".join(f"{t:.2f} {100 * a:.2f}\n" for t, a in curve) + "\n\n")
    plots = ", ".join(f"'{data}' index {i} using 1:2 with lines lw 2 title '{s}'" for i, s in enumerate(drawn))
    script = (f"set terminal pngcairo size 900,540\nset output '{os.path.join(out, 'accuracy.png')}'\n"
              "set xlabel 'wall time (s)'\nset ylabel 'test accuracy (%)'\nset grid\nset key bottom right\n"
              "set arrow from graph 0, first 80 to graph 1, first 80 nohead dt 2\n"
              f"plot {plots}\n")
    try:
        subprocess.run(["gnuplot"], input=script, text=True, check=True)
    except (OSError, subprocess.CalledProcessError) as e:
        print(f"federated_real_summary: no chart: {e}", file=sys.stderr)
        return None
    return os.path.join(out, "accuracy.png")


def compare(runs, fast, slow, what):
    a, b = runs.get(fast), runs.get(slow)
    if not a or not b or "failed" in a or "failed" in b:
        return None, None
    x, text = ratio_text(b, a)
    gain = 100 * ((a["final_accuracy"] or 0) - (b["final_accuracy"] or 0))
    reached = f"{fast} reaches 80% {text} sooner than {slow}" if x is not None else f"{fast} did not reach 80%"
    return {"sooner": x, "final_accuracy_gain_points": round(gain, 3)}, (
        f"- {what}: {reached}; final accuracy "
        f"{100 * (a['final_accuracy'] or 0):.2f}% vs {100 * (b['final_accuracy'] or 0):.2f}% ({gain:+.2f} points)")


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: federated_real_summary.py OUT")
    out = sys.argv[1]
    runs = {}
    with open(os.path.join(out, "runs.txt")) as f:
        for line in f:
            if line.strip():
                system, rc, seconds = line.split()
                path = os.path.join(out, system)
                runs[system] = load_run(path, system, int(rc), os.path.join(path, "server.log"))
                runs[system]["run_seconds"] = int(seconds)
    lines = []
    for name in ("setup.md", "split.md"):
        if os.path.exists(os.path.join(out, name)):
            with open(os.path.join(out, name)) as f:
                lines += [f.read().rstrip(), ""]
    lines += ["| system | time to 80% (s) | final accuracy (%) | rounds | client idle (%) |", "|---|---|---|---|---|"]
    for r in runs.values():
        if "failed" in r:
            lines.append(f"| {r['system']} | failed ({r['failed']}) | - | - | - |")
            continue
        acc, idle = r["final_accuracy"], r["client_idle_fraction"]
        lines.append(f"| {r['system']} | {fmt(r['seconds_to_0.80'], '.1f')} "
                     f"| {fmt(None if acc is None else 100 * acc, '.2f')} | {fmt(r['rounds'], 'd')} "
                     f"| {fmt(None if idle is None else 100 * idle, '.1f')} |")
    lines.append("")
    checks = {}
    for fast, slow, what in (("balanced", "fedavg-wait-all", "balanced vs waiting for all"),
                             ("balanced", "fedbuff", "balanced vs asynchronous"),
                             ("fedavg-adam", "fedavg" if "fedavg" in runs else "fedavg-wait-all",
                              "FedAdam vs FedAvg (server optimiser, same clients)"),
                             ("balanced-adam", "balanced", "FedAdam vs FedAvg on the server, under balanced")):
        check, text = compare(runs, fast, slow, what)
        if check is not None:
            checks[f"{fast}_vs_{slow}"] = check
            lines.append(text)
    chart = draw(out, {s: accuracy_curve(os.path.join(out, s)) for s, r in runs.items() if "failed" not in r})
    if chart:
        lines.append(f"\nAccuracy vs wall time: {chart}")
    print("\n".join(lines))
    tmp = os.path.join(out, "federated_real.json.tmp")
    with open(tmp, "w") as f:
        json.dump({"runs": runs, "checks": checks}, f, indent=1)
    os.replace(tmp, os.path.join(out, "federated_real.json"))


if __name__ == "__main__":
    main()
