"""Split-conformal and jackknife+ prediction sets of pacgp's GP classifier against scikit-learn's
GaussianProcessClassifier with split-conformal LAC, over 20 seeded splits of one shipped data
set (Ripley's synthetic set, train and test files together: 1250 rows, 2 inputs).

Each split: 300 rows to learn from, the other 950 to test. pacgp's laplace classifier with
``intervals="split-conformal:0.5"`` refits itself on a seeded half of the 300 and calibrates on
the other 150 (LAC and APS); with ``intervals="jackknife+"`` it fits all 300 and calibrates on
their leave-one-out scores (no refits); scikit-learn's classifier (its default 1.0 * RBF kernel, fitted
by its own marginal likelihood) is fitted on the same kind of half (a seeded half of the 300)
and calibrated here on the rest by the same LAC rule, written out in numpy. Prints the mean
coverage and mean set size at level 1 - alpha for each, as a markdown table.

    python python/examples/conformal_sets_vs_sklearn.py [--alpha 0.1] [--splits 20]
"""

import argparse
import math
import os

import numpy as np
import pandas as pd
from sklearn.gaussian_process import GaussianProcessClassifier

import pacgp

DATA = os.path.join(os.path.dirname(__file__), "..", "..", "data", "ripley-synth")


def load():
    frames = [pd.read_csv(os.path.join(DATA, f)) for f in ("synth_tr.csv", "synth_te.csv")]
    table = pd.concat(frames, ignore_index=True)
    return table[["xs", "ys"]].to_numpy(), table["yc"].to_numpy()


def lac_sets(p_cal, y_cal, p_test, alpha):
    """Split-conformal LAC: q = the ceil((1 - alpha)(n + 1))-th smallest 1 - p(y_i | x_i); the
    set is every label with 1 - p(y | x) <= q."""
    scores = 1.0 - p_cal[np.arange(len(y_cal)), y_cal]
    rank = math.ceil((1 - alpha) * (len(scores) + 1) - 1e-9)
    q = np.sort(scores)[rank - 1]
    return (1.0 - p_test) <= q


def summary(sets, y):
    return sets[np.arange(len(y)), y].mean(), sets.sum(axis=1).mean()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--alpha", type=float, default=0.1)
    parser.add_argument("--splits", type=int, default=20)
    args = parser.parse_args()
    x, y = load()
    rows = {f"pacgp laplace, {m}, {s}": [] for m in ("split-conformal", "jackknife+")
            for s in ("LAC", "APS")}
    rows["sklearn GPC, split-conformal, LAC"] = []
    for seed in range(args.splits):
        rng = np.random.default_rng(seed)
        perm = rng.permutation(len(y))
        fit_rows, test_rows = perm[:300], perm[300:]
        for method in ("split-conformal:0.5", "jackknife+"):
            for score in ("lac", "aps"):
                clf = pacgp.GPClassifier(method="laplace", intervals=method, interval_score=score,
                                         random_state=seed, certify=False)
                clf.fit(x[fit_rows], y[fit_rows])
                sets = clf.predict_set(x[test_rows], alpha=args.alpha).sets
                name = f"pacgp laplace, {method.split(':')[0]}, {score.upper()}"
                rows[name].append(summary(sets, y[test_rows]))
        part_a, part_b = fit_rows[:150], fit_rows[150:]
        gpc = GaussianProcessClassifier(random_state=seed).fit(x[part_a], y[part_a])
        sets = lac_sets(gpc.predict_proba(x[part_b]), y[part_b],
                        gpc.predict_proba(x[test_rows]), args.alpha)
        rows["sklearn GPC, split-conformal, LAC"].append(summary(sets, y[test_rows]))
    print(f"level 1 - alpha = {1 - args.alpha:.2f}, {args.splits} splits, "
          "300 rows to learn from (150 calibrate), 950 to test\n")
    print("| sets | mean coverage | sd over splits | mean set size |")
    print("|---|---|---|---|")
    for name, values in rows.items():
        cov = np.array([v[0] for v in values])
        size = np.array([v[1] for v in values])
        print(f"| {name} | {cov.mean():.4f} | {cov.std(ddof=1):.4f} | {size.mean():.3f} |")


if __name__ == "__main__":
    main()
