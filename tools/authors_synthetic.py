#!/usr/bin/python3
"""Synthetic least-squares data made the way the paper authors' generator makes it.

An independent NumPy re-implementation, written for PipeLens's tests from a description in
words of the authors' QuadraticObjective.synthetic (their src/objectives/quadratic.py); no code
of theirs is copied. It follows that description step by step, with every draw taken from one
rng = numpy.random.default_rng(seed):

  tridiagonal (rows >= dim):
    T = tridiag(-1, 2, -1) (dim x dim); mu = 0.01 unless --mu is given, or, with
    --condition-number kappa, mu = (l_max - kappa l_min) / (kappa - 1) where l_min, l_max come
    from numpy.linalg.eigvalsh(T); A = T + mu I; Lc = numpy.linalg.cholesky(A) (lower);
    first Z = rng.normal(size=(n, d)); Q, _ = numpy.linalg.qr(Z) (reduced, LAPACK's
    Householder signs kept as they are); X = sqrt(n) * Q @ Lc.T;
    then true_w = rng.normal(size=d); y = X @ true_w.
  simple:
    r = min(n, d); lambdas = linspace(1, r, r);
    first U, _ = qr(rng.normal(size=(n, r))); then V, _ = qr(rng.normal(size=(d, r)));
    X = sqrt(n) * U @ diag(sqrt(lambdas)) @ V.T; then true_w = rng.normal(size=d); y = X @ true_w.
  random:
    X = rng.normal(size=(n, d)); then true_w = rng.normal(size=d); y = X @ true_w.

In every kind, when --label-noise s > 0: y += s * rng.normal(size=n), drawn last.

Writes X.npy (n x d, float64, C order) and y.npy (n, float64) into --out.
Example: tools/authors_synthetic.py --kind tridiagonal --rows 600 --dim 512 --seed 0 --out /tmp/e3
"""

import argparse
import os
import sys

import numpy as np


def tridiagonal(rng, n, d, mu, condition_number):
    if n < d:
        raise ValueError(f"tridiagonal needs rows >= dim, got rows = {n}, dim = {d}")
    T = 2.0 * np.eye(d) - np.eye(d, k=1) - np.eye(d, k=-1)
    if condition_number is not None:
        eigenvalues = np.linalg.eigvalsh(T)
        l_min, l_max = eigenvalues[0], eigenvalues[-1]
        mu = (l_max - condition_number * l_min) / (condition_number - 1.0)
    A = T + mu * np.eye(d)
    Lc = np.linalg.cholesky(A)
    Z = rng.normal(size=(n, d))
    Q, _ = np.linalg.qr(Z)
    return np.sqrt(n) * Q @ Lc.T


def simple(rng, n, d):
    r = min(n, d)
    lambdas = np.linspace(1, r, r)
    U, _ = np.linalg.qr(rng.normal(size=(n, r)))
    V, _ = np.linalg.qr(rng.normal(size=(d, r)))
    return np.sqrt(n) * U @ np.diag(np.sqrt(lambdas)) @ V.T


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kind", required=True, choices=["simple", "tridiagonal", "random"])
    parser.add_argument("--rows", type=int, required=True)
    parser.add_argument("--dim", type=int, required=True)
    parser.add_argument("--seed", type=int, default=0)
    shift = parser.add_mutually_exclusive_group()
    shift.add_argument("--mu", type=float, default=0.01)
    shift.add_argument("--condition-number", type=float, default=None)
    parser.add_argument("--label-noise", type=float, default=0.0)
    parser.add_argument("--out", required=True)
    args = parser.parse_args(argv)

    rng = np.random.default_rng(args.seed)
    n, d = args.rows, args.dim
    if args.kind == "tridiagonal":
        X = tridiagonal(rng, n, d, args.mu, args.condition_number)
    elif args.kind == "simple":
        X = simple(rng, n, d)
    else:
        X = rng.normal(size=(n, d))
    true_w = rng.normal(size=d)
    y = X @ true_w
    if args.label_noise > 0:
        y = y + args.label_noise * rng.normal(size=n)

    os.makedirs(args.out, exist_ok=True)
    np.save(os.path.join(args.out, "X.npy"), np.ascontiguousarray(X, dtype=np.float64))
    np.save(os.path.join(args.out, "y.npy"), np.ascontiguousarray(y, dtype=np.float64))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
