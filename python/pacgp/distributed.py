"""Grids of certified fits on Dask (``dask.distributed``): ε/δ grids, hyperparameter grids,
repeated splits — one fit per task, run by Dask's scheduler, no scheduler of our own.

``certified_grid(estimator, grid, X, y)`` runs serially; with ``client=`` the same tasks go to
the cluster (the data are scattered once; each worker fits with ``n_threads`` threads, so the
results are identical to the serial run's).
"""

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
