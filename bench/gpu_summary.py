#!/usr/bin/env python3
"""Rates and tables of the GPU benchmarks (bench/gpu_hetero.sh, gpu_mixed.sh, gpu_overhead.sh) and the one table of
scripts/gpu-check.sh. Standard library only.

Usage:
  gpu_summary.py rate RUN_DIR WARMUP        balancenet's samples/s: the samples of every rank over rank 0's
                                            update_ms after the first WARMUP steps (steps.csv), else summary.json's
  gpu_summary.py ddp-rate JSON WARMUP       bench/ddp_peer.py's samples/s after the first WARMUP steps
  gpu_summary.py torch-rate LOG WARMUP BATCH   bench/gpt_torch_step.py's samples/s (its step_seconds line)
  gpu_summary.py bench OUT                  a bench's table from OUT/results.txt ("MODEL SYSTEM RATE [NOTE]" lines,
                                            RATE a number or 'failed') and OUT/meta.txt (key=value: kind, mode, ...);
                                            writes OUT/summary.json
  gpu_summary.py check STATE                gpu-check's table: STATE/phases.tsv (name, status, seconds, detail),
                                            STATE/ctest.xml (ctest --output-junit), STATE/<bench>/results.txt
"""
import csv
import json
import os
import re
import statistics
import sys
import xml.etree.ElementTree as ET

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from vs_ddp_summary import steady_rate  # noqa: E402  (bench/ is no package)

# The targets: name -> (numerator, denominator, at least)
TARGETS = {
    "hetero": [("balanced", "ddp", 1.5), ("balanced", "ideal", 0.85)],
    "mixed": [("balanced", "gpu-alone", 0.95)],
    "overhead": [("balancenet", "pytorch", 0.95)],
}
INFO = {  # ratios printed without a target
    "hetero": [("balanced", "equal"), ("alone-slow", "alone-fast")],
    "mixed": [("equal", "gpu-alone")],
    "overhead": [],
}


def balancenet_rate(run_dir, warmup):
    if os.path.exists(os.path.join(run_dir, "steps.csv")):
        rate, _ = steady_rate(run_dir, warmup)
        if rate is not None:
            return rate
    with open(os.path.join(run_dir, "summary.json")) as f:
        summary = json.load(f)
    return summary.get("samples_per_second", summary.get("samplesPerSecond"))


def ddp_rate(path, warmup):
    with open(path) as f:
        summary = json.load(f)
    steps = summary["step_seconds"][warmup:]
    return len(steps) * summary["global_batch"] / sum(steps)


def torch_rate(log, warmup, batch):
    with open(log) as f:
        for line in f:
            if line.startswith("step_seconds"):
                steps = [float(v) for v in line.split()[1:]][warmup:]
                return len(steps) * batch / sum(steps)
    raise SystemExit(f"gpu_summary: no step_seconds line in {log}")


def read_meta(out):
    meta = {}
    path = os.path.join(out, "meta.txt")
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                if "=" in line:
                    key, value = line.rstrip("\n").split("=", 1)
                    meta[key] = value
    return meta


def bench_results(out):
    """{model: {system: mean rate or None (failed)}}, in the order the runs came, and the notes."""
    results, notes = {}, []
    path = os.path.join(out, "results.txt")
    if not os.path.exists(path):
        return results, notes
    runs = {}
    with open(path) as f:
        for line in f:
            words = line.split()
            if len(words) < 3:
                continue
            model, system, rate = words[:3]
            runs.setdefault(model, {}).setdefault(system, [])
            try:
                runs[model][system].append(float(rate))
            except ValueError:
                notes.append(f"{model} {system}: {' '.join(words[2:])}")
    for model, systems in runs.items():
        results[model] = {s: (statistics.mean(v) if v else None) for s, v in systems.items()}
    return results, notes


def bench_summary(out):
    meta = read_meta(out)
    kind = meta.get("kind", os.path.basename(out.rstrip("/")))
    results, notes = bench_results(out)
    summary = {"kind": kind, "meta": meta, "models": {}, "notes": notes}
    for model, rates in results.items():
        if kind == "hetero" and rates.get("alone-fast") and rates.get("alone-slow"):
            rates["ideal"] = rates["alone-fast"] + rates["alone-slow"]
        ratios = []
        for num, den, target in TARGETS.get(kind, []):
            value = rates[num] / rates[den] if rates.get(num) and rates.get(den) else None
            ratios.append({"ratio": f"{num}/{den}", "value": value, "target": target,
                           "met": None if value is None else value >= target})
        for num, den in INFO.get(kind, []):
            value = rates[num] / rates[den] if rates.get(num) and rates.get(den) else None
            ratios.append({"ratio": f"{num}/{den}", "value": value, "target": None, "met": None})
        summary["models"][model] = {"samples_per_second": rates, "ratios": ratios}
    return summary


def fmt_rate(value):
    return "failed" if value is None else f"{value:.1f}"


def fmt_ratio(r):
    if r["value"] is None:
        text = f"{r['ratio']} n/a"
    else:
        text = f"{r['ratio']} {r['value']:.2f}"
    if r["target"] is not None:
        verdict = "n/a" if r["met"] is None else ("met" if r["met"] else "MISSED")
        text += f" (target >= {r['target']}: {verdict})"
    return text


def describe(summary):
    meta = summary["meta"]
    bits = [f"{k}={v}" for k, v in meta.items() if k != "kind"]
    return ", ".join(bits)


def print_bench(summary):
    print(f"### {summary['kind']}" + (f" ({describe(summary)})" if describe(summary) else ""))
    print()
    print("| model | system | samples/s |")
    print("|---|---|---|")
    for model, m in summary["models"].items():
        for system, rate in m["samples_per_second"].items():
            print(f"| {model} | {system} | {fmt_rate(rate)} |")
    print()
    for model, m in summary["models"].items():
        for r in m["ratios"]:
            print(f"{model}: {fmt_ratio(r)}")
    for note in summary["notes"]:
        print(f"note: {note}")


def write_json(path, value):
    with open(path + ".tmp", "w") as f:
        json.dump(value, f, indent=2)
    os.replace(path + ".tmp", path)


def skip_reason(out):
    """gtest's reason for a skip: the line after '...: Skipped'."""
    lines = out.splitlines()
    for i, line in enumerate(lines):
        if line.rstrip().endswith("Skipped") and i + 1 < len(lines) and lines[i + 1].strip():
            return lines[i + 1].strip()[:120]
    return ""


def ctest_counts(state):
    """{passed, failed, skipped, notrun, total, failing: [names], skipping: [name (reason)]} from ctest's JUnit
    file, else from ctest.log. Not run: ctest could not start it (its executable missing)."""
    xml = os.path.join(state, "ctest.xml")
    if os.path.exists(xml):
        try:
            root = ET.parse(xml).getroot()
            c = {"passed": 0, "failed": 0, "skipped": 0, "notrun": 0, "failing": [], "skipping": []}
            for case in root.iter("testcase"):
                name, status = case.get("name"), case.get("status", "run")
                out = "".join(e.text or "" for e in case.iter("system-out"))
                skipped = case.find("skipped")
                message = skipped.get("message", "") if skipped is not None else ""
                if status == "fail" or case.find("failure") is not None:
                    c["failed"] += 1
                    c["failing"].append(name)
                elif "Unable to find" in message or "Unable to find executable" in out:
                    c["notrun"] += 1
                    c["failing"].append(name + " (not built)")
                elif status in ("notrun", "disabled") or skipped is not None or (
                        "[  SKIPPED ]" in out and "[  PASSED  ]" not in out):
                    c["skipped"] += 1
                    reason = skip_reason(out)
                    c["skipping"].append(name + (f" ({reason})" if reason else ""))
                else:
                    c["passed"] += 1
            c["total"] = c["passed"] + c["failed"] + c["skipped"] + c["notrun"]
            return c
        except ET.ParseError:
            pass
    log = os.path.join(state, "ctest.log")
    if os.path.exists(log):  # no JUnit file (ctest stopped at its budget): the tests it finished
        text = open(log, errors="replace").read()
        c = {"passed": 0, "failed": 0, "skipped": 0, "notrun": 0, "failing": [], "skipping": []}
        for name, result in re.findall(r"Test\s+#\d+: (\S+) \.*\s*(?:\*+)?([A-Za-z][A-Za-z ]*?)\s+[\d.]+ sec", text):
            if result == "Passed":
                c["passed"] += 1
            elif result == "Skipped":
                c["skipped"] += 1
                c["skipping"].append(name)
            elif result.startswith("Not Run"):
                c["notrun"] += 1
                c["failing"].append(name + " (not run)")
            else:
                c["failed"] += 1
                c["failing"].append(f"{name} ({result.strip()})")
        c["total"] = c["passed"] + c["failed"] + c["skipped"] + c["notrun"]
        if c["total"]:
            return c
    return None


def check(state):
    rows = []
    phases = []
    path = os.path.join(state, "phases.tsv")
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                parts = line.rstrip("\n").split("\t")
                if len(parts) >= 3:
                    phases.append((parts[0], parts[1], parts[2], parts[3] if len(parts) > 3 else ""))
    benches = {}
    for name, status, seconds, detail in phases:
        took = f"{seconds} s" if seconds not in ("0", "") else ""
        if name == "ctest":
            c = ctest_counts(state)
            if c:
                text = f"{c['passed']} passed, {c['failed']} failed, {c['skipped']} skipped"
                if c["notrun"]:
                    text += f", {c['notrun']} not run"
                text += f" of {c['total']}"
                extra = []
                if c["failing"]:
                    extra.append("failed: " + ", ".join(c["failing"][:6]) + (" ..." if len(c["failing"]) > 6 else ""))
                if c["skipping"]:
                    extra.append("skipped: " + ", ".join(c["skipping"][:4]) + (" ..." if len(c["skipping"]) > 4 else ""))
                detail = "; ".join(extra + ([detail] if detail else []))
                status = f"{status}: {text}"
        rows.append((name, status, took, detail))
        if name.startswith("bench-"):
            kind = name[len("bench-"):]
            out = os.path.join(state, kind)
            if os.path.isdir(out):
                benches[kind] = bench_summary(out)
                write_json(os.path.join(out, "summary.json"), benches[kind])
                for model, m in benches[kind]["models"].items():
                    rates = ", ".join(f"{s} {fmt_rate(v)}" for s, v in m["samples_per_second"].items())
                    ratios = "; ".join(fmt_ratio(r) for r in m["ratios"])
                    rows.append((f"  {kind} {model}", ratios or "no ratio", "", f"samples/s: {rates}"))
                for note in benches[kind]["notes"]:
                    rows.append((f"  {kind}", "note", "", note))
                if benches[kind]["meta"]:
                    rows.append((f"  {kind}", "setting", "", describe(benches[kind])))
    print("| check | result | time | detail |")
    print("|---|---|---|---|")
    for name, status, took, detail in rows:
        detail = detail.replace("|", "/")
        print(f"| {name} | {status} | {took} | {detail} |")
    write_json(os.path.join(state, "summary.json"), {"phases": phases, "benches": benches})


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    cmd = sys.argv[1]
    if cmd == "rate" and len(sys.argv) == 4:
        print("%.3f" % balancenet_rate(sys.argv[2], int(sys.argv[3])))
    elif cmd == "ddp-rate" and len(sys.argv) == 4:
        print("%.3f" % ddp_rate(sys.argv[2], int(sys.argv[3])))
    elif cmd == "torch-rate" and len(sys.argv) == 5:
        print("%.3f" % torch_rate(sys.argv[2], int(sys.argv[3]), int(sys.argv[4])))
    elif cmd == "bench" and len(sys.argv) == 3:
        summary = bench_summary(sys.argv[2])
        write_json(os.path.join(sys.argv[2], "summary.json"), summary)
        print_bench(summary)
    elif cmd == "check" and len(sys.argv) == 3:
        check(sys.argv[2])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
