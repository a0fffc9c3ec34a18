#!/usr/bin/env python3
"""Write a seeded house-price-shaped table as CSV (issue 43, item 4): a wide, mixed table like
the Ames house prices (2 344 training rows, 74 columns, many categorical, 308 inputs once
coded), for timing the default fit on wide tables. Not committed data: the same seed gives the
same file.

    python3 scripts/make_house_table.py --n 2344 --seed 0 --out /tmp/house.csv
    /usr/bin/time -v pacgp fit --data /tmp/house.csv --target price --categorical auto \
        --out /tmp/house.json

Columns: 36 numeric (areas, counts, years; a few carry most of the signal), 37 categorical
with 2 to 25 levels (about 300 one-hot inputs in all; the neighbourhood and quality columns
shift the price) and the target `price` (in thousands, log-normal noise). Standard library
only.
"""
import argparse
import math
import random

N_NUMERIC = 36
LEVELS = [40, 28, 25, 15, 10, 10, 9, 8, 8, 8, 7, 7, 6, 6, 6, 6, 5, 5, 5, 5, 5, 4, 4, 4, 4, 4, 4, 3,
          3, 3, 3, 3, 3, 3, 2, 2, 2]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, required=True, help="number of rows")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", required=True, help="output .csv")
    a = ap.parse_args()
    if a.n < 1:
        ap.error("--n must be at least 1")
    rng = random.Random(a.seed)
    scale = [rng.choice([1.0, 10.0, 100.0, 1000.0]) for _ in range(N_NUMERIC)]
    effects = [[rng.gauss(0.0, 0.15 if c < 4 else 0.02) for _ in range(k)] for c, k in enumerate(LEVELS)]
    header = [f"num{j}" for j in range(N_NUMERIC)] + [f"cat{c}" for c in range(len(LEVELS))]
    with open(a.out, "w", newline="") as f:
        f.write(",".join(header + ["price"]) + "\n")
        for _ in range(a.n):
            quality = rng.gauss(0.0, 1.0)
            nums = [(rng.gauss(0.0, 1.0) + (0.8 * quality if j < 6 else 0.0)) for j in range(N_NUMERIC)]
            cats = [min(k - 1, int(rng.expovariate(1.5) * k / 3)) for k in LEVELS]
            log_price = 5.2 + 0.25 * quality + 0.1 * math.tanh(nums[0]) + 0.05 * nums[1]
            log_price += sum(effects[c][v] for c, v in enumerate(cats)) + rng.gauss(0.0, 0.08)
            cells = [f"{v * s:.1f}" for v, s in zip(nums, scale)]
            cells += [f"L{c}_{v}" for c, v in enumerate(cats)]
            f.write(",".join(cells + [f"{math.exp(log_price):.1f}"]) + "\n")


if __name__ == "__main__":
    main()
