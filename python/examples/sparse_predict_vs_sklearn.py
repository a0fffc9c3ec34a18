"""Time ``predict`` of a sparse GP regressor (VFE, M inducing inputs; pacgp's
``SparseGPRegressor``) trained on N rows (first argument; 8 inputs) at 2000 test rows, the
mean alone and with ``return_std``, against scikit-learn's exact ``GaussianProcessRegressor``
on the same rows (a fixed kernel, ``optimizer=None``: only predict is timed), which is what a
scikit-learn user has (scikit-learn has no sparse GP); alternating, three rounds, the least of
each. pacgp's fit is stopped after 2 s (``time_limit``): the hyperparameters do not change
predict's cost. Prints the ratios (scikit-learn's time ÷ pacgp's) and the flop bound of the
sparse variances (n·M² flops of one triangular solve, at the DGEMM rate given as the third
argument, GFLOP/s; default 104).

    python python/examples/sparse_predict_vs_sklearn.py 5000 [M=256] [GFLOP/s]
"""
import sys
import time

import numpy as np
import pacgp
from sklearn.gaussian_process import GaussianProcessRegressor
from sklearn.gaussian_process.kernels import RBF, ConstantKernel, WhiteKernel

N = int(sys.argv[1]); n = 2000; d = 8
M = int(sys.argv[2]) if len(sys.argv) > 2 else 256
peak = float(sys.argv[3]) if len(sys.argv) > 3 else 104.0
rng = np.random.default_rng(0)
X = rng.uniform(-2, 2, (N, d)); y = np.sin(X).sum(1) + 0.1 * rng.standard_normal(N)
Xs = rng.uniform(-2, 2, (n, d))
t = time.perf_counter()
est = pacgp.SparseGPRegressor(n_inducing=M, certify=False, loo="none", time_limit=2,
                              n_threads=2).fit(X, y)
print(f"pacgp vfe fit, M = {M} (time-limited) {time.perf_counter() - t:.1f}s", flush=True)
sk = GaussianProcessRegressor(ConstantKernel(1.0) * RBF(np.ones(d)) + WhiteKernel(0.01),
                              optimizer=None).fit(X, y)


def least(f):
    t = time.perf_counter(); f(); return time.perf_counter() - t


rows = {"pacgp mean": [], "pacgp mean+std": [], "sklearn mean": [], "sklearn mean+std": []}
for _ in range(3):
    rows["pacgp mean"].append(least(lambda: est.predict(Xs)))
    rows["sklearn mean"].append(least(lambda: sk.predict(Xs)))
    rows["pacgp mean+std"].append(least(lambda: est.predict(Xs, return_std=True)))
    rows["sklearn mean+std"].append(least(lambda: sk.predict(Xs, return_std=True)))
for k, v in rows.items():
    print(f"N={N} {k:18s} min {min(v) * 1e3:9.1f} ms  (runs {', '.join(f'{x * 1e3:.1f}' for x in v)})")
best = {k: min(v) for k, v in rows.items()}
print(f"N={N} M={M} ratio mean {best['sklearn mean'] / best['pacgp mean']:.1f}, "
      f"mean+std {best['sklearn mean+std'] / best['pacgp mean+std']:.1f}; "
      f"flop bound n·M² / {peak:g} GFLOP/s = {n * M * M / peak / 1e6:.2f} ms")
