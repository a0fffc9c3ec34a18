#!/usr/bin/env python3
"""GPflow's SVGP beside `pacgp reproduce svgp-real` (docs/reproduce/svgp-real.md).

    svgp_real_peers.py csvs --data-dir data --out DIR
    svgp_real_peers.py gpflow --peers PEERS [--iso] [--median-start] SVGP_CLF_ARGS...

`csvs` writes the experiment's binary tables as CSVs with a `label` column (standard library
only): kin40k and pol labelled 1 where `y > median(y of the training file)`, else 0; MNIST 2
vs 3 with the pool's rows not in the official test set (`t10k_index == -1`) as training file,
`t10k_index` dropped, label 2 or 3.

`gpflow` runs the peer harness's `svgp_clf.py` (in the folder PEERS, e.g. ../shared/peers;
run with its venv's Python) with every argument after the options, its RBF-ARD kernel
replaced: `--iso` gives one lengthscale (pacgp's `se`), `--median-start` starts the
lengthscales at the median distance between the z-scored training rows (over a seeded
subsample of 1000 rows), where pacgp's svgp starts them on more than 20 inputs, instead of 1.
"""

import csv
import gzip
import os
import statistics
import sys


def _rows(path):
    with gzip.open(path, "rt") as f:
        r = csv.reader(f)
        return next(r), list(r)


def _write(path, header, rows):
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(header)
        w.writerows(rows)


def csvs(data_dir, out):
    """The six CSVs of the three binary tables."""
    os.makedirs(out, exist_ok=True)
    for name in ["kin40k", "pol"]:
        h, tr = _rows(f"{data_dir}/{name}/{name}_train.csv.gz")
        _, te = _rows(f"{data_dir}/{name}/{name}_test.csv.gz")
        t = statistics.median(float(r[-1]) for r in tr)
        lab = lambda r: r[:-1] + ["1" if float(r[-1]) > t else "0"]  # noqa: E731
        _write(f"{out}/{name}_train.csv", h[:-1] + ["label"], [lab(r) for r in tr])
        _write(f"{out}/{name}_test.csv", h[:-1] + ["label"], [lab(r) for r in te])
        print(f"{name}: threshold {t}", file=sys.stderr)
    h, tr = _rows(f"{data_dir}/mnist-2v3/mnist_rsvd_2v3.csv.gz")
    _, te = _rows(f"{data_dir}/mnist-2v3/mnist_test_2v3.csv.gz")
    i = h.index("t10k_index")
    drop = lambda r: r[:i] + r[i + 1 :]  # noqa: E731
    _write(f"{out}/mnist_train.csv", drop(h), [drop(r) for r in tr if r[i] == "-1"])
    _write(f"{out}/mnist_test.csv", drop(h), [drop(r) for r in te])


def gpflow(peers, iso, median_start, args):
    """svgp_clf.main() on `args` with the kernel's lengthscales as asked."""
    sys.path.insert(0, peers)
    sys.argv = [f"{peers}/svgp_clf.py"] + args
    import svgp_clf  # first: --threads acts before numpy loads

    import gpflow as gf
    import numpy as np

    se, start, run = gf.kernels.SquaredExponential, {"l": 1.0}, svgp_clf.run_gpflow

    def median_distance(x, seed=0, rows=1000):
        s = x[np.random.default_rng(seed).permutation(x.shape[0])[:rows]]
        sq = (s * s).sum(1)
        d2 = np.maximum(sq[:, None] + sq[None, :] - 2 * s @ s.T, 0.0)
        return float(np.median(np.sqrt(d2[np.triu_indices(len(s), 1)])))

    def run_gpflow(Xtr, ytr01, Xte, Z0, a):
        if median_start:
            start["l"] = median_distance(Xtr)
            print(f"lengthscales started at {start['l']:.4f}", file=sys.stderr)
        return run(Xtr, ytr01, Xte, Z0, a)

    def kernel(variance, lengthscales):
        ls = start["l"] if iso else start["l"] * np.ones_like(lengthscales)
        return se(variance=variance, lengthscales=ls)

    svgp_clf.run_gpflow = run_gpflow
    gf.kernels.SquaredExponential = kernel
    svgp_clf.main()


def main():
    argv = sys.argv[1:]
    if argv[:1] == ["csvs"]:
        opt = dict(zip(argv[1::2], argv[2::2]))
        csvs(opt.get("--data-dir", "data"), opt["--out"])
    elif argv[:1] == ["gpflow"] and argv[1:2] == ["--peers"]:
        rest = argv[3:]
        flags = {f: f in rest for f in ("--iso", "--median-start")}
        rest = [a for a in rest if a not in flags]
        gpflow(argv[2], flags["--iso"], flags["--median-start"], rest)
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
