#!/usr/bin/env python3
"""Write the seeded tables that docs/performance.md's cost-model rows use beside
`../shared/peers/make_data.py`'s sets (`synth_*.csv`). Not committed data: the same seed
gives the same file. numpy only.

    python3 scripts/make_cost_tables.py --out /tmp/cost

- `reg_n20000.csv`: make_data.py's regression, sum sin(x_t) + 0.1 N(0, 1), inputs uniform on
  [-2, 2]^8, 20 000 rows drawn at once (seed 1); `ivm_n10000.csv`: make_data.py's
  `synth_reg_n10000.csv` with `label` = y > 0.
- `clf_n3000.csv`, `clf_n50000.csv`: make_data.py's classification, `label` = sum sin(x_t) +
  0.3 N(0, 1) > 0, drawn at once at each size (seed 3).

- `multi3_n2000.csv`: three classes, `class` = the tercile band of sum sin(x_t) + 0.3 N(0, 1)
  (seed 7); `multi5_n1000.csv`: five classes by quintile bands (seed 11). Inputs uniform on
  [-2, 2]^8.
- `iv_n1500.csv`, `iv_n3000.csv`: y = sin(x1) + x2^2/2 + x3 x4 + 0.2 N(0, 1), inputs uniform on
  [-2, 2]^6 (seeds 1 and 2).
- `mo_n3000.csv`: targets a = sin(x1) + x2 x3, b = x4^2/2 + cos(x5), c = sin(x6) x1, each plus
  0.2 N(0, 1), inputs uniform on [-2, 2]^6 (seed 1).
"""
import argparse
import os

import numpy as np


def write(path, x, cols, names):
    header = ",".join([f"x{t + 1}" for t in range(x.shape[1])] + names)
    np.savetxt(path, np.column_stack([x] + cols), delimiter=",", header=header, comments="",
               fmt="%.10g")


def reg(seed, n):
    """make_data.py's regression table: n rows drawn at once with `seed`."""
    rng = np.random.default_rng(seed)
    x = rng.uniform(-2.0, 2.0, size=(n, 8))
    return x, np.sin(x).sum(axis=1) + 0.1 * rng.standard_normal(n)


def clf(seed, n):
    """make_data.py's classification table: n rows drawn at once with `seed`."""
    rng = np.random.default_rng(seed)
    x = rng.uniform(-2.0, 2.0, size=(n, 8))
    f = np.sin(x).sum(axis=1) + 0.3 * rng.standard_normal(n)
    return x, (f > 0).astype(float)


def bands(f, k):
    """Class of each value of f: the index of its band among the k quantile bands of f."""
    edges = np.quantile(f, np.arange(1, k) / k)
    return np.searchsorted(edges, f).astype(float)


def classes(seed, n, k):
    rng = np.random.default_rng(seed)
    x = rng.uniform(-2.0, 2.0, size=(n, 8))
    f = np.sin(x).sum(axis=1) + 0.3 * rng.standard_normal(n)
    return x, bands(f, k)


def interval_table(seed, n):
    rng = np.random.default_rng(seed)
    x = rng.uniform(-2.0, 2.0, size=(n, 6))
    y = np.sin(x[:, 0]) + x[:, 1] ** 2 / 2 + x[:, 2] * x[:, 3] + 0.2 * rng.standard_normal(n)
    return x, y


def three_targets(seed, n):
    rng = np.random.default_rng(seed)
    x = rng.uniform(-2.0, 2.0, size=(n, 6))
    noise = 0.2 * rng.standard_normal((n, 3))
    a = np.sin(x[:, 0]) + x[:, 1] * x[:, 2] + noise[:, 0]
    b = x[:, 3] ** 2 / 2 + np.cos(x[:, 4]) + noise[:, 1]
    c = np.sin(x[:, 5]) * x[:, 0] + noise[:, 2]
    return x, [a, b, c]


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", required=True, help="folder to write the CSVs into")
    a = p.parse_args()
    os.makedirs(a.out, exist_ok=True)
    x, y = reg(1, 20000)
    write(os.path.join(a.out, "reg_n20000.csv"), x, [y], ["y"])
    x, y = reg(1, 40000)  # make_data.py's draw; synth_reg_n10000.csv is its first 10 000 rows
    write(os.path.join(a.out, "ivm_n10000.csv"), x[:10000], [(y[:10000] > 0).astype(float)],
          ["label"])
    for n in (3000, 50000):
        x, y = clf(3, n)
        write(os.path.join(a.out, f"clf_n{n}.csv"), x, [y], ["label"])
    x, y = classes(7, 2000, 3)
    write(os.path.join(a.out, "multi3_n2000.csv"), x, [y], ["class"])
    x, y = classes(11, 1000, 5)
    write(os.path.join(a.out, "multi5_n1000.csv"), x, [y], ["class"])
    for seed, n in ((1, 1500), (2, 3000)):
        x, y = interval_table(seed, n)
        write(os.path.join(a.out, f"iv_n{n}.csv"), x, [y], ["y"])
    x, ys = three_targets(1, 3000)
    write(os.path.join(a.out, "mo_n3000.csv"), x, ys, ["a", "b", "c"])
    print(f"wrote the cost-model tables to {a.out}")


if __name__ == "__main__":
    main()
