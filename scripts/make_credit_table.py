#!/usr/bin/env python3
"""Write a seeded credit-default-shaped table as CSV (issue 43, item 5): the shape on which the
sparse online GP once failed. Not committed data: the same seed gives the same file.

    python3 scripts/make_credit_table.py --n 8000 --seed 0 --out /tmp/credit.csv

Columns: `student` (Yes/No), `balance` (≈ 0 to 2 700, in the thousands), `income` (≈ 700 to
74 000) and `default` (Yes/No) drawn from a logistic model in balance (rare positives, about
3%, as in ISLR's Default table). Standard library only.
"""
import argparse
import math
import random


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, required=True, help="number of rows")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", required=True, help="output .csv")
    a = ap.parse_args()
    if a.n < 1:
        ap.error("--n must be at least 1")
    rng = random.Random(a.seed)
    with open(a.out, "w", newline="") as f:
        f.write("student,balance,income,default\n")
        for _ in range(a.n):
            student = rng.random() < 0.3
            balance = max(0.0, rng.gauss(1000.0 if student else 800.0, 480.0))
            income = max(700.0, rng.gauss(18000.0 if student else 40000.0, 9000.0))
            eta = -10.65 + 0.0055 * balance - 0.6 * student
            default = rng.random() < 1.0 / (1.0 + math.exp(-eta))
            yes = lambda b: "Yes" if b else "No"
            f.write(f"{yes(student)},{balance:.2f},{income:.2f},{yes(default)}\n")


if __name__ == "__main__":
    main()
