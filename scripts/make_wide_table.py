#!/usr/bin/env python3
"""Write a seeded wide mixed table as training and test CSVs (issue 43, item 4): 40 numeric
and 35 text columns of 2 to 25 levels (341 inputs once one-hot coded) with a target that
depends on a few of them, for measuring the default fit on wide tables before and after a
change. Not committed data: the same seed gives the same files.

    python3 scripts/make_wide_table.py --n 2300 --n-test 500 --seed 0 \
        --out /tmp/wide_train.csv --test-out /tmp/wide_test.csv
    pacgp fit --data /tmp/wide_train.csv --target price --categorical auto --out /tmp/wide.json
    pacgp evaluate --model /tmp/wide.json --data /tmp/wide_test.csv

Columns: `num0`…`num39` (Gaussian, on scales from 1 to 1000; `num0`…`num3` carry the signal,
`num0` through a nonlinearity), `cat0`…`cat34` (levels drawn with a skew towards the first,
so some are rare; `cat0` and `cat1` shift the target, the rest do not) and `price` (positive,
log-normal noise). Training and test rows come from one stream, so they share the levels'
codes. Standard library only.
"""
import argparse
import math
import random

N_NUMERIC = 40
# 35 text columns of 2 to 25 levels: 29 one-hot coded (295 inputs) and 6 of two levels (one
# ±1 input each), 341 inputs with the 40 numeric columns.
LEVELS = [25, 25, 22, 20, 18, 16, 15, 14, 12, 12, 10, 10, 9, 8, 8, 7, 7, 6, 6, 5, 5, 5, 5, 5, 4,
          4, 4, 4, 4, 2, 2, 2, 2, 2, 2]


def inputs():
    """How many inputs the table becomes: one per numeric column, one per two-level column,
    one per level of a wider column (one-hot)."""
    return N_NUMERIC + sum(1 if k == 2 else k for k in LEVELS)


def row(rng, scale, effects):
    """One row's cells and its target."""
    nums = [rng.gauss(0.0, 1.0) for _ in range(N_NUMERIC)]
    cats = [min(k - 1, int(rng.expovariate(1.2) * k / 3)) for k in LEVELS]
    log_price = 5.0 + 0.3 * math.sin(1.5 * nums[0]) + 0.2 * nums[1] - 0.15 * nums[2]
    log_price += 0.1 * nums[3] * nums[1] + effects[0][cats[0]] + effects[1][cats[1]]
    log_price += rng.gauss(0.0, 0.1)
    cells = [f"{v * s:.3f}" for v, s in zip(nums, scale)]
    cells += [f"L{c}_{v}" for c, v in enumerate(cats)]
    return cells + [f"{math.exp(log_price):.2f}"]


def write(path, header, rows):
    """Write a CSV with a header line."""
    with open(path, "w", newline="") as f:
        f.write(",".join(header) + "\n")
        for r in rows:
            f.write(",".join(r) + "\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=2300, help="training rows")
    ap.add_argument("--n-test", type=int, default=500, help="test rows")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", required=True, help="training .csv")
    ap.add_argument("--test-out", help="test .csv (none if absent)")
    a = ap.parse_args()
    if a.n < 1 or a.n_test < 0:
        ap.error("--n must be at least 1 and --n-test at least 0")
    rng = random.Random(a.seed)
    scale = [rng.choice([1.0, 10.0, 100.0, 1000.0]) for _ in range(N_NUMERIC)]
    effects = [[rng.gauss(0.0, 0.2) for _ in range(k)] for k in LEVELS[:2]]
    header = [f"num{j}" for j in range(N_NUMERIC)] + [f"cat{c}" for c in range(len(LEVELS))]
    header.append("price")
    rows = [row(rng, scale, effects) for _ in range(a.n + a.n_test)]
    write(a.out, header, rows[:a.n])
    if a.test_out:
        write(a.test_out, header, rows[a.n:])


if __name__ == "__main__":
    main()
