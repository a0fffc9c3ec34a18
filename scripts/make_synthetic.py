#!/usr/bin/env python3
"""Write a seeded synthetic regression data set as CSV (gzip if the name ends in .gz), for the
large-N runs of the sparse methods (e.g. 10^6 points, docs/perf-notes-sparse.md). Not committed
data: the same seed gives the same file.

    python3 scripts/make_synthetic.py --n 1000000 --d 8 --seed 0 --out /tmp/synth_1e6.csv.gz

Inputs uniform on [-2, 2]^d; target y = sum_t sin(x_t) + 0.1 * N(0, 1). Standard library only.
"""
import argparse
import gzip
import math
import random


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, required=True, help="number of rows")
    ap.add_argument("--d", type=int, default=8, help="number of inputs")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--noise", type=float, default=0.1, help="noise standard deviation")
    ap.add_argument("--out", required=True, help="output .csv or .csv.gz")
    a = ap.parse_args()
    if a.n < 1 or a.d < 1:
        ap.error("--n and --d must be at least 1")
    rng = random.Random(a.seed)
    opener = gzip.open if a.out.endswith(".gz") else open
    with opener(a.out, "wt", newline="") as f:
        f.write(",".join([f"x{t}" for t in range(a.d)] + ["y"]) + "\n")
        for _ in range(a.n):
            x = [rng.uniform(-2.0, 2.0) for _ in range(a.d)]
            y = sum(math.sin(v) for v in x) + a.noise * rng.gauss(0.0, 1.0)
            f.write(",".join(f"{v:.6f}" for v in x) + f",{y:.6f}\n")


if __name__ == "__main__":
    main()
