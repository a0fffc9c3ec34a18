"""Grids of certified fits on Dask (``dask.distributed``): ε/δ grids, hyperparameter grids,
repeated splits — one fit per task, run by Dask's scheduler, no scheduler of our own.

``certified_grid(estimator, grid, X, y)`` runs serially; with ``client=`` the same tasks go to
the cluster (the data are scattered once; each worker fits with ``n_threads`` threads, so the
results are identical to the serial run's).
"""

import numpy as np
from sklearn.base import clone
from sklearn.model_selection import ParameterGrid


def certified_fit(estimator, params, X, y):
    """Fit a clone of ``estimator`` with ``params`` and return what a grid compares: the
    parameters, the certificate, the leave-one-out figures and the training score."""
    fitted = clone(estimator).set_params(**params).fit(X, y)
    return {
        "params": params,
        "certificate": fitted.certificate_,
        "loo": fitted.loo_,
        "train_score": float(fitted.score(X, y)),
    }


def certified_grid(estimator, grid, X, y, client=None, n_threads=1):
    """Certified fits of ``estimator`` over every point of ``grid`` (a dict of lists or a list
    of dicts, as scikit-learn's ParameterGrid), in grid order; on ``client`` if given."""
    estimator = clone(estimator).set_params(n_threads=n_threads)
    points = list(ParameterGrid(grid))
    if client is None:
        return [certified_fit(estimator, p, X, y) for p in points]
    X_remote, y_remote = client.scatter([X, y], broadcast=True)
    futures = client.map(
        certified_fit, [estimator] * len(points), points,
        X=X_remote, y=y_remote, pure=False,
    )
    return client.gather(futures)


def sharded_vfe(shards, kernel_spec, theta, noise, z, client=None):
    """Titsias' VFE bound and its gradient in ``[θ…, ln σ², vec(Z)]`` over data held in shards
    (a list of ``(X_s, y_s)``, or of Dask futures of such pairs on ``client``), map-reduce style
    (Gal, van der Wilk & Rasmussen 2014): the workers compute their shards' sums, one M×M step
    here, then the workers their gradient parts. ``theta`` are the kernel's ln values."""
    from ._pacgp import vfe_global, vfe_shard_gradient, vfe_shard_stats

    theta = list(theta)
    z = np.ascontiguousarray(z, dtype=np.float64)

    def aligned(arrays):
        # Arrays that arrive by Dask's transfers may sit at odd addresses: copy those only.
        return [np.require(a, dtype=np.float64, requirements=["A"]) for a in arrays]

    def stats(shard):
        x, y, zz = aligned([*shard, z])
        return vfe_shard_stats(kernel_spec, theta, zz, x, y, n_threads=1)

    if client is None:
        parts = [stats(s) for s in shards]
    else:
        parts = client.gather(client.map(stats, shards, pure=False))
    a = sum(p[0] for p in parts)
    b = sum(p[1] for p in parts)
    yy, trace, n = (sum(p[k] for p in parts) for k in (2, 3, 4))
    value, a_bar, b_bar, t_bar, gradient = vfe_global(
        kernel_spec, theta, noise, z, a, b, yy, trace, n
    )

    def grad(shard):
        x, y, zz, ab, bb = aligned([*shard, z, a_bar, b_bar])
        return vfe_shard_gradient(kernel_spec, theta, zz, x, y, ab, bb, t_bar, n_threads=1)

    if client is None:
        pieces = [grad(s) for s in shards]
    else:
        pieces = client.gather(client.map(grad, shards, pure=False))
    return value, gradient + sum(pieces)
