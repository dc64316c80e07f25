#!/usr/bin/env python3
"""The table of bench/blas.sh from the runs it left in OUT (standard library only).

samples/s: rank 0's step times after the first step (bench/vs_ddp_summary.py's rule, on both sides);
pair ratios are taken within one pair (back to back), then their median, so a busy machine moves both
sides of a ratio alike. The peak and the achieved fractions are summary.json's "workers" (the run's own
GEMM probe, best 256x256 sgemm with one thread and with all threads).
Writes OUT/blas.json and prints the tables.
"""
import glob
import json
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from vs_ddp_summary import balancenet_run, ddp_run  # noqa: E402

WARMUP = 1


def summary(run_dir):
    with open(os.path.join(run_dir, "summary.json")) as f:
        return json.load(f)


def worker0(run_dir):
    return summary(run_dir)["workers"][0]


def pairs(out):
    n = len(glob.glob(os.path.join(out, "openblas-*.log")))
    rows = []
    for i in range(1, n + 1):
        ref = balancenet_run(os.path.join(out, f"reference-{i}"), WARMUP)["samples_per_second"]
        opt = balancenet_run(os.path.join(out, f"openblas-{i}"), WARMUP)["samples_per_second"]
        blis_dir = os.path.join(out, f"blis-{i}")
        blis = balancenet_run(blis_dir, WARMUP)["samples_per_second"] if os.path.isdir(blis_dir) else None
        torch_json = os.path.join(out, f"pytorch-{i}.json")
        pt = ddp_run(torch_json, WARMUP)["samples_per_second"] if os.path.exists(torch_json) else None
        w = worker0(os.path.join(out, f"openblas-{i}"))
        rows.append({"pair": i, "reference": ref, "openblas": opt, "blis": blis, "pytorch": pt,
                     "blas": summary(os.path.join(out, f"openblas-{i}")).get("blas"),
                     "reference_blas": summary(os.path.join(out, f"reference-{i}")).get("blas"),
                     "peak_one_thread": w["peak_gflops_one_thread"],
                     "peak_all_threads": w["peak_gflops_all_threads"],
                     "fraction": w["fraction_of_peak"], "compute_fraction": w["compute_fraction_of_peak"],
                     "reference_peak_one_thread":
                         worker0(os.path.join(out, f"reference-{i}"))["peak_gflops_one_thread"]})
    return rows


def main(out):
    rows = pairs(out)
    med = lambda xs: statistics.median(xs) if xs else None  # noqa: E731
    print(f"BLAS (balancenet's binaries): {rows[0]['blas']}; reference: {rows[0]['reference_blas']}")
    print("pair  reference s/s  openblas s/s  ratio  blis s/s  pytorch s/s  bn/pytorch  peak 1t GF/s  "
          "peak all GF/s  fraction  compute fraction")
    for r in rows:
        pt = r["pytorch"]
        ratio = r["openblas"] / r["reference"]
        print(f"{r['pair']:>4}  {r['reference']:>13.1f}  {r['openblas']:>12.1f}  {ratio:>5.2f}  "
              f"{r['blis'] or 0:>8.1f}  {pt or 0:>11.1f}  {(r['openblas'] / pt) if pt else 0:>10.3f}  "
              f"{r['peak_one_thread']:>12.1f}  "
              f"{r['peak_all_threads']:>13.1f}  {r['fraction']:>8.3f}  {r['compute_fraction']:>16.3f}")
    result = {
        "pairs": rows,
        "median_openblas_over_reference": med([r["openblas"] / r["reference"] for r in rows]),
        "median_blis_over_openblas": med([r["blis"] / r["openblas"] for r in rows if r["blis"]]),
        "median_balancenet_over_pytorch": med([r["openblas"] / r["pytorch"] for r in rows if r["pytorch"]]),
        "median_fraction_of_one_thread_peak": med([r["fraction"] for r in rows]),
        "median_peak_one_thread_gflops": med([r["peak_one_thread"] for r in rows]),
        "median_reference_peak_one_thread_gflops": med([r["reference_peak_one_thread"] for r in rows]),
        "zoo": [],
    }
    print(f"medians: openblas/reference {result['median_openblas_over_reference']:.2f}x, "
          f"blis/openblas {result['median_blis_over_openblas'] or 0:.3f}, "
          f"balancenet/pytorch {result['median_balancenet_over_pytorch'] or 0:.3f}, "
          f"fraction of the one-thread peak {result['median_fraction_of_one_thread_peak']:.3f}")
    print("\nmodel      MFLOPs/sample  samples/s  GFLOP/s  fraction  compute fraction")
    for run in sorted(glob.glob(os.path.join(out, "zoo-*/"))):
        s = summary(run)
        w = s["workers"][0]
        model = os.path.basename(os.path.normpath(run))[len("zoo-"):]
        sps = balancenet_run(run, WARMUP)["samples_per_second"]
        mflops = w["achieved_gflops"] * 1e3 / 3 / s["samples_per_second"] if s["samples_per_second"] else 0
        result["zoo"].append({"model": model, "mflops_per_sample": mflops, "samples_per_second": sps,
                              "achieved_gflops": w["achieved_gflops"], "fraction": w["fraction_of_peak"],
                              "compute_fraction": w["compute_fraction_of_peak"]})
        print(f"{model:<10} {mflops:>13.2f}  {sps:>9.1f}  {w['achieved_gflops']:>7.1f}  {w['fraction_of_peak']:>8.3f}  "
              f"{w['compute_fraction_of_peak']:>16.3f}")
    with open(os.path.join(out, "blas.json"), "w") as f:
        json.dump(result, f, indent=2)


if __name__ == "__main__":
    main(sys.argv[1])
