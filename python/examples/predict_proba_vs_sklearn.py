"""Time ``predict_proba`` of a binary GP classifier (Laplace, logistic) trained on N rows
(argument; 8 inputs) at 2000 test rows: pacgp's ``GPClassifier(method="laplace")`` against
scikit-learn's ``GaussianProcessClassifier`` (a fixed kernel, ``optimizer=None``: only
predict is timed), alternating, three rounds, the least of each; both need the latent mean
and variance at every test row. pacgp's fit is stopped after 2 s (``time_limit``): the
hyperparameters do not change predict's cost. Also prints the flop bound of the variances
(N²·n flops at the DGEMM rate given as a second argument, GFLOP/s; default 104).

    python python/examples/predict_proba_vs_sklearn.py 5000
"""
import sys
import time

import numpy as np
import pacgp
from sklearn.gaussian_process import GaussianProcessClassifier
from sklearn.gaussian_process.kernels import RBF, ConstantKernel

N = int(sys.argv[1]); n = 2000; d = 8
peak = float(sys.argv[2]) if len(sys.argv) > 2 else 104.0
rng = np.random.default_rng(0)
X = rng.uniform(-2, 2, (N, d))
y = (np.sin(X).sum(1) + 0.3 * rng.standard_normal(N) > 0).astype(int)
Xs = rng.uniform(-2, 2, (n, d))
kernel = ConstantKernel(1.0) * RBF(np.ones(d))
t = time.perf_counter()
est = pacgp.GPClassifier(method="laplace", likelihood="logistic", kernel=kernel, select="ml2",
                         certify=False, loo="none", time_limit=2, n_threads=2).fit(X, y)
print(f"pacgp fit (time-limited) {time.perf_counter()-t:.1f}s", flush=True)
t = time.perf_counter()
sk = GaussianProcessClassifier(kernel, optimizer=None).fit(X, y)
print(f"scikit-learn fit {time.perf_counter()-t:.1f}s", flush=True)
def once(f):
    t = time.perf_counter(); f(); return time.perf_counter() - t
rows = {"pacgp predict_proba": [], "sklearn predict_proba": []}
for _ in range(3):
    rows["pacgp predict_proba"].append(once(lambda: est.predict_proba(Xs)))
    rows["sklearn predict_proba"].append(once(lambda: sk.predict_proba(Xs)))
for k, v in rows.items():
    print(f"N={N} {k:22s} min {min(v)*1e3:9.1f} ms  (runs {', '.join(f'{x*1e3:.1f}' for x in v)})")
best = {k: min(v) for k, v in rows.items()}
print(f"N={N} ratio (scikit-learn / pacgp) {best['sklearn predict_proba'] / best['pacgp predict_proba']:.2f}; "
      f"flop bound N²·n / {peak:g} GFLOP/s = {N * N * n / peak / 1e6:.0f} ms")
