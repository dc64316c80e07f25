#!/usr/bin/env python3
"""The tables of bench/federated.sh from the runs it left in OUT (standard library only).

OUT/runs.txt: one 'alpha system exit-code seconds' line per run; the run directory is OUT/alpha-<alpha>/<system>
(summary.json, rounds.csv: federated/RoundLog.h). Per alpha: each system's wall time and round to 80% test
accuracy, final accuracy, rounds, client idle share; then the issue's targets: balanced reaches 80% at least
2x sooner than fedavg-wait-all at no worse final accuracy, and (alpha 0.1) sooner than every other system;
and FedNova against FedAvg with the same drawn local steps. A system that never reached 80% counts as
reaching it after its whole run (so a ratio against it is a lower bound, marked '>'). The same for 70%: on
alpha 0.1 a budget of minutes may end before any system reaches 80%, and "ahead" then means sooner to 70% at
a higher final accuracy.
Writes OUT/federated.json and prints markdown.
"""
import json
import os
import sys

TARGETS = ("0.70", "0.80")


def fmt(value, spec):
    return "-" if value is None else format(value, spec)


def load(out, alpha, system, rc):
    path = os.path.join(out, f"alpha-{alpha}", system)
    return load_run(path, system, rc, f"{path}.log")


def load_run(path, system, rc, log):
    """One run's results from its run directory `path` (also bench/federated_real_summary.py's)."""
    r = {"system": system, "exit": rc}
    if rc != 0 or not os.path.exists(os.path.join(path, "summary.json")):
        r["failed"] = f"exit {rc}, see {log}"
        return r
    with open(os.path.join(path, "summary.json")) as f:
        s = json.load(f)
    for target in TARGETS:
        reached = (s.get("time_to_accuracy") or {}).get(target)
        r["seconds_to_" + target] = reached["seconds"] if reached else None
        r["round_to_" + target] = reached["round"] if reached else None
    r.update({
        "final_accuracy": s.get("final_accuracy"),
        "rounds": s.get("rounds"),
        "wall_seconds": s.get("wall_seconds"),
        "client_idle_fraction": s.get("client_idle_fraction"),
    })
    return r


def seconds_or_run(r, target):
    """Time to `target`, or the whole run when it never got there (a lower bound); None for a failed run."""
    if "failed" in r:
        return None, False
    if r["seconds_to_" + target] is not None:
        return r["seconds_to_" + target], True
    return r["wall_seconds"], False


def ratio_text(slow, fast, target="0.80"):
    """How many times sooner `fast` reached `target` than `slow`."""
    (ts, slow_reached), (tf, fast_reached) = seconds_or_run(slow, target), seconds_or_run(fast, target)
    if ts is None or tf is None or not fast_reached or tf <= 0:
        return None, "-"
    return ts / tf, ("" if slow_reached else ">") + format(ts / tf, ".2f") + "x"


def verdict(ok):
    return "met" if ok else "NOT met"


def summarise_alpha(alpha, runs):
    lines = [f"\n### alpha {alpha}\n",
             "| system | time to 70% (s) | time to 80% (s) | round to 80% | final accuracy (%) | rounds "
             "| client idle (%) |",
             "|---|---|---|---|---|---|---|"]
    for r in runs.values():
        if "failed" in r:
            lines.append(f"| {r['system']} | failed ({r['failed']}) | - | - | - | - | - |")
            continue
        acc, idle = r["final_accuracy"], r["client_idle_fraction"]
        lines.append(f"| {r['system']} | {fmt(r['seconds_to_0.70'], '.1f')} | {fmt(r['seconds_to_0.80'], '.1f')} "
                     f"| {fmt(r['round_to_0.80'], 'd')} "
                     f"| {fmt(None if acc is None else 100 * acc, '.2f')} | {fmt(r['rounds'], 'd')} "
                     f"| {fmt(None if idle is None else 100 * idle, '.1f')} |")
    checks = {}
    lines.append("")
    bal, wait = runs.get("balanced"), runs.get("fedavg-wait-all")
    if bal and wait and "failed" not in bal and "failed" not in wait:
        x, text = ratio_text(wait, bal)
        x70, text70 = ratio_text(wait, bal, "0.70")
        no_worse = (bal["final_accuracy"] or 0) >= (wait["final_accuracy"] or 0)
        checks["balanced_vs_wait_all"] = {"sooner": x, "sooner_to_70": x70, "final_accuracy_no_worse": no_worse,
                                          "met": x is not None and x >= 2 and no_worse}
        lines.append(f"- balanced reaches 80% {text} sooner than fedavg-wait-all (target >= 2x), final accuracy "
                     f"{fmt(100 * (bal['final_accuracy'] or 0), '.2f')}% vs "
                     f"{fmt(100 * (wait['final_accuracy'] or 0), '.2f')}%: "
                     f"{verdict(checks['balanced_vs_wait_all']['met'])} (to 70%: {text70} sooner)")
    if bal and "failed" not in bal:
        others = {s: r for s, r in runs.items() if s != "balanced" and "failed" not in r}
        failed = [s for s, r in runs.items() if "failed" in r]
        ahead = {}
        for system, r in others.items():
            x, text = ratio_text(r, bal)
            x70, text70 = ratio_text(r, bal, "0.70")
            higher = (bal["final_accuracy"] or 0) > (r["final_accuracy"] or 0)
            # Sooner to 80%; or, when balanced never got there either, sooner to 70% and higher at the end.
            ahead[system] = (x is not None and x > 1) or (
                bal["seconds_to_0.80"] is None and x70 is not None and x70 > 1 and higher)
            if system != "fedavg-wait-all":  # its line is above
                lines.append(f"- balanced vs {system}: {text} sooner to 80%, {text70} sooner to 70%, final "
                             f"accuracy {100 * (bal['final_accuracy'] or 0):.2f}% vs "
                             f"{100 * (r['final_accuracy'] or 0):.2f}%")
        checks["balanced_ahead_of_all"] = all(ahead.values()) if ahead else None
        checks["not_compared"] = failed
        if alpha == "0.1":
            lines.append(f"- balanced ahead of every other system on alpha 0.1: "
                         f"{verdict(bool(checks['balanced_ahead_of_all']))}"
                         + (f" (failed, not compared: {', '.join(failed)})" if failed else ""))
    nova, drawn = runs.get("fednova"), runs.get("fedavg-drawn")
    if nova and drawn and "failed" not in nova and "failed" not in drawn:
        x, text = ratio_text(drawn, nova)
        checks["fednova_vs_fedavg_drawn"] = {"sooner": x, "final_accuracy_gain": round(
            (nova["final_accuracy"] or 0) - (drawn["final_accuracy"] or 0), 6)}
        lines.append(f"- fednova vs fedavg, both with drawn local steps: {text} sooner to 80%, final accuracy "
                     f"{100 * (nova['final_accuracy'] or 0):.2f}% vs {100 * (drawn['final_accuracy'] or 0):.2f}% "
                     "(FedNova's published direction: normalised >= plain)")
    return lines, checks


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: federated_summary.py OUT")
    out = sys.argv[1]
    results = {}
    with open(os.path.join(out, "runs.txt")) as f:
        for line in f:
            if not line.strip():
                continue
            alpha, system, rc, seconds = line.split()
            results.setdefault(alpha, {})[system] = load(out, alpha, system, int(rc))
            results[alpha][system]["run_seconds"] = int(seconds)
    report = {}
    for alpha, runs in results.items():
        lines, checks = summarise_alpha(alpha, runs)
        print("\n".join(lines))
        report[alpha] = {"runs": runs, "checks": checks}
    tmp = os.path.join(out, "federated.json.tmp")
    with open(tmp, "w") as f:
        json.dump(report, f, indent=1)
    os.replace(tmp, os.path.join(out, "federated.json"))


if __name__ == "__main__":
    main()
