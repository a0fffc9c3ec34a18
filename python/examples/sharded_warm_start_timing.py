"""The warm start of ``fit_sharded`` on a subsample (VFE, SE-ARD, M inducing inputs from the
library's k-means): scipy's L-BFGS-B over the map-reduce functions (``sharded_vfe`` on one
shard, how the warm start ran before) against the library's single-process objective and
L-BFGS-B (``minimise_in_process``, how it runs now), from the same start, alternating; prints
the time per evaluation and the ELBO each reached (a measurement).

    python python/examples/sharded_warm_start_timing.py SUBSAMPLE.csv[.gz] [M] [ITERATIONS]

The CSV's last column is the target; e.g. 20 000 rows of ``scripts/make_synthetic.py``'s data.
"""
import sys
import time

import numpy as np
import pandas as pd
from scipy.optimize import minimize

from pacgp._pacgp import initial_inducing_kmeans, kernel_init_params, minimise_in_process
from pacgp.distributed import _LN_NOISE_BOX, _THETA_BOX, pack, sharded_vfe

frame = pd.read_csv(sys.argv[1])
y = frame.pop(frame.columns[-1]).to_numpy(float)
X = frame.to_numpy(float)
X, y = (X - X.mean(0)) / X.std(0), (y - y.mean()) / y.std()
m = int(sys.argv[2]) if len(sys.argv) > 2 else 500
iterations = int(sys.argv[3]) if len(sys.argv) > 3 else 40
d = X.shape[1]
theta0 = kernel_init_params("se-ard", d)
nk = len(theta0)
p0 = pack(theta0, 0.1, initial_inducing_kmeans(X, m, 0))
bounds = [_THETA_BOX] * nk + [_LN_NOISE_BOX] + [(None, None)] * (m * d)


def negative_elbo(p):
    value, grad = sharded_vfe([(X, y)], "se-ard", p[:nk], np.exp(p[nk]), p[nk + 1:].reshape(m, d))
    return -value, -grad


for _ in range(2):
    t = time.perf_counter()
    r = minimize(negative_elbo, p0, jac=True, method="L-BFGS-B", bounds=bounds,
                 options={"maxiter": iterations})
    dt = time.perf_counter() - t
    print(f"scipy over the map-reduce functions: {dt:.1f} s, {r.nfev} evaluations, "
          f"{dt / r.nfev:.3f} s each, ELBO {-r.fun:.6f}", flush=True)
    t = time.perf_counter()
    p, nit, nfev, termination, _ = minimise_in_process("vfe", "se-ard", m, list(p0), X, y,
                                                        bounds, iterations)
    dt = time.perf_counter() - t
    print(f"the library in process:              {dt:.1f} s, {nfev} evaluations, "
          f"{dt / nfev:.3f} s each, ELBO {-negative_elbo(np.asarray(p))[0]:.6f} ({termination})",
          flush=True)
