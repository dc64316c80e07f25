#!/usr/bin/env python3
"""The memory model against the measured (issue 53): the training memory one more sample costs, as
`balancenet models` estimates it (train MB/sample) and, for recomputation, as recompute/RecomputeMemory counts it
from `balancenet models --blocks`, against glibc's bytes in use (mallinfo2: the allocator's live blocks, not the
resident set, which keeps freed memory) at its peak over one forward and backward of bench/ddp_peer.py's copy of the
zoo's model (the same layers: BenchPeers checks resnet18's parameters; torchvision's ReLUs are in place), sampled as
backward reaches each parameter.
The slope between two batch sizes takes out what does not grow with the batch (parameters, gradients, the runtime).
Usage: memory_estimate.py BALANCENET [OUT.json]   Prints a table; writes OUT.json atomically when given."""
import ctypes
import os
import subprocess
import sys

import torch
import torch.utils.checkpoint

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ddp_peer  # noqa: E402
from memory_bench import write_json  # noqa: E402

SMALL, LARGE = 8, 32  # the two batches of the slope
CASES = [("cnn", 1.0, False), ("resnet18", 0.25, False), ("resnet18", 0.25, True)]


class _MallInfo2(ctypes.Structure):
    _fields_ = [(n, ctypes.c_size_t) for n in ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks",
                                              "uordblks", "fordblks", "keepcost")]


_libc = ctypes.CDLL("libc.so.6")
_libc.mallinfo2.restype = _MallInfo2


def in_use():
    """Bytes in live malloc blocks: the small ones and the mmap'd ones."""
    m = _libc.mallinfo2()
    return m.uordblks + m.hblkhd


def peak_of_a_pass(model, n):
    """The peak bytes in use over one forward and backward of `n` samples, above what was in use before it (the
    gradients already allocated by a first pass, so that they do not count)."""
    x, y = torch.randn(n, 1, 28, 28), torch.randint(10, (n,))
    torch.nn.functional.cross_entropy(model(x), y).backward()
    peak = [0]

    def sample(*_):
        peak[0] = max(peak[0], in_use())

    hooks = [p.register_hook(sample) for p in model.parameters()]  # as backward reaches each parameter
    base = in_use()
    loss = torch.nn.functional.cross_entropy(model(x), y)
    sample()
    loss.backward()
    sample()
    for h in hooks:
        h.remove()
    return peak[0] - base


def estimates(binary, name, width):
    """(train MB/sample of `balancenet models`, the recomputed MB/sample from its blocks)."""
    table = subprocess.run([binary, "models", "--width", str(width)], check=True, capture_output=True, text=True).stdout
    whole = next(float(line.split()[3]) for line in table.splitlines() if line.split()[:1] == [name])
    blocks = subprocess.run([binary, "models", "--blocks", name, "--width", str(width)], check=True,
                            capture_output=True, text=True).stdout.splitlines()
    kept, peak = 0.0, 0.0
    for line in blocks[1:]:
        cols = line.split()
        if len(cols) != 7 or not cols[0].isdigit() or cols[1] == "blocks":  # a block row, not the count
            continue
        elements = 1
        for d in cols[5].split("x"):
            elements *= int(d)
        peak = max(peak, kept + float(cols[6]) * 1e3)  # KB to bytes
        kept += 4 * elements
    return whole, max(peak, kept) / 1e6


def main():
    binary, out = sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else None
    torch.set_num_threads(1)
    rows = []
    for name, width, recompute in CASES:
        torch.manual_seed(0)
        model = ddp_peer.make_model(name, 28, width)
        if recompute:
            model = ddp_peer.recompute_blocks(model)
        measured = (peak_of_a_pass(model, LARGE) - peak_of_a_pass(model, SMALL)) / (LARGE - SMALL) / 1e6
        whole, recomputed = estimates(binary, name, width)
        estimate = recomputed if recompute else whole
        rows.append({"model": name, "width": width, "recompute": recompute, "estimate_mb_per_sample": estimate,
                     "measured_mb_per_sample": measured, "estimate_over_measured": estimate / measured})
    print("| model | width | recompute | estimate, MB/sample | measured, MB/sample | estimate / measured |")
    print("|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['model']} | {r['width']:g} | {'blocks' if r['recompute'] else 'none'} | "
              f"{r['estimate_mb_per_sample']:.3f} | {r['measured_mb_per_sample']:.3f} | "
              f"{r['estimate_over_measured']:.2f} |")
    if out:
        write_json(out, {"batches": [SMALL, LARGE], "rows": rows})


if __name__ == "__main__":
    main()
