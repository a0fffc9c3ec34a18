"""Time ``predict`` of an exact GP regressor trained on N rows (argument; 8 inputs) at 2000
test rows: pacgp's ``GPRegressor`` (the mean alone, and with ``return_std``) against
scikit-learn's ``GaussianProcessRegressor`` (a fixed kernel, ``optimizer=None``: only predict
is timed), alternating, three rounds, the least of each. pacgp's fit is stopped after 2 s
(``time_limit``): the hyperparameters do not change predict's cost. Also prints the ratios
(scikit-learn's time ÷ pacgp's) and the flop bound of the variances (N²·n flops at the
DGEMM rate given as a second argument, GFLOP/s; default 104).

    python python/examples/predict_vs_sklearn.py 5000
"""
import sys
import time

import numpy as np
import pacgp
from sklearn.gaussian_process import GaussianProcessRegressor
from sklearn.gaussian_process.kernels import RBF, ConstantKernel, WhiteKernel

N = int(sys.argv[1]); n = 2000; d = 8
peak = float(sys.argv[2]) if len(sys.argv) > 2 else 104.0
rng = np.random.default_rng(0)
X = rng.uniform(-2, 2, (N, d)); y = np.sin(X).sum(1) + 0.1 * rng.standard_normal(N)
Xs = rng.uniform(-2, 2, (n, d))
t = time.perf_counter()
est = pacgp.GPRegressor(certify=False, loo="none", time_limit=2, n_threads=2).fit(X, y)
print(f"pacgp fit (time-limited) {time.perf_counter()-t:.1f}s", flush=True)
sk = GaussianProcessRegressor(ConstantKernel(1.0) * RBF(np.ones(d)) + WhiteKernel(0.01), optimizer=None).fit(X, y)
def tm(f, reps=3):
    out = []
    for _ in range(reps):
        t = time.perf_counter(); f(); out.append(time.perf_counter() - t)
    return min(out)
rows = {"pacgp mean": [], "pacgp mean+std": [], "sklearn mean": [], "sklearn mean+std": []}
for _ in range(3):
    rows["pacgp mean"].append(tm(lambda: est.predict(Xs), 1))
    rows["sklearn mean"].append(tm(lambda: sk.predict(Xs), 1))
    rows["pacgp mean+std"].append(tm(lambda: est.predict(Xs, return_std=True), 1))
    rows["sklearn mean+std"].append(tm(lambda: sk.predict(Xs, return_std=True), 1))
for k, v in rows.items():
    print(f"N={N} {k:18s} min {min(v)*1e3:9.1f} ms  (runs {', '.join(f'{x*1e3:.1f}' for x in v)})")
best = {k: min(v) for k, v in rows.items()}
print(f"N={N} ratio mean {best['sklearn mean'] / best['pacgp mean']:.2f}, "
      f"mean+std {best['sklearn mean+std'] / best['pacgp mean+std']:.2f}; "
      f"flop bound N²·n / {peak:g} GFLOP/s = {N * N * n / peak / 1e6:.0f} ms")
