#!/usr/bin/env python3
"""A regression data set as two NumPy files: y = sin(x1) + x2^2 + noise, for `--data npy:X.npy,Y.npy --loss mse`.

Usage: .venv/bin/python examples/make_regression_npy.py DIR [--rows N] [--noise SIGMA] [--seed S]
Writes DIR/X.npy (float32 [N, 2], x1 and x2 uniform in [-2, 2]) and DIR/Y.npy (float32 [N]).
Prints the noise variance: the mean squared error of the true function, the least any model can reach
on fresh rows, and the variance of Y, the error of a model that predicts the mean.
"""
import argparse
import os

import numpy as np


def save(path, array):
    # Written beside its final name and renamed, so a reader never sees half a file.
    with open(path + ".partial", "wb") as f:
        np.save(f, array)
    os.replace(path + ".partial", path)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dir")
    parser.add_argument("--rows", type=int, default=20000)
    parser.add_argument("--noise", type=float, default=0.1)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    x = rng.uniform(-2.0, 2.0, size=(args.rows, 2)).astype(np.float32)
    y = np.sin(x[:, 0]) + x[:, 1] ** 2 + rng.normal(0.0, args.noise, size=args.rows)
    os.makedirs(args.dir, exist_ok=True)
    save(os.path.join(args.dir, "X.npy"), x)
    save(os.path.join(args.dir, "Y.npy"), y.astype(np.float32))
    print("%s: %d rows; noise variance %.4f (the best mse), variance of Y %.4f (the mean's mse)"
          % (args.dir, args.rows, args.noise ** 2, float(np.var(y))))


if __name__ == "__main__":
    main()
