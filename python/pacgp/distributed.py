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


def _aligned(arrays):
    # Arrays that arrive by Dask's transfers may sit at odd addresses: copy those only.
    return [np.require(a, dtype=np.float64, requirements=["A"]) for a in arrays]


def _map(fn, shards, client):
    """``fn`` on every shard: here, or on the workers that hold them."""
    if client is None:
        return [fn(s) for s in shards]
    return client.gather(client.map(fn, shards, pure=False))


def sharded_vfe(shards, kernel_spec, theta, noise, z, client=None):
    """Titsias' VFE bound and its gradient in ``[θ…, ln σ², vec(Z)]`` over data held in shards
    (a list of ``(X_s, y_s)``, or of Dask futures of such pairs on ``client``), map-reduce style
    (Gal, van der Wilk & Rasmussen 2014): the workers compute their shards' sums, one M×M step
    here, then the workers their gradient parts. ``theta`` are the kernel's ln values."""
    from ._pacgp import vfe_global, vfe_shard_gradient, vfe_shard_stats

    theta = list(theta)
    z = np.ascontiguousarray(z, dtype=np.float64)

    def stats(shard):
        x, y, zz = _aligned([*shard, z])
        return vfe_shard_stats(kernel_spec, theta, zz, x, y, n_threads=1)

    parts = _map(stats, shards, client)
    a = sum(p[0] for p in parts)
    b = sum(p[1] for p in parts)
    yy, trace, n = (sum(p[k] for p in parts) for k in (2, 3, 4))
    value, a_bar, b_bar, t_bar, gradient = vfe_global(
        kernel_spec, theta, noise, z, a, b, yy, trace, n
    )

    def grad(shard):
        x, y, zz, ab, bb = _aligned([*shard, z, a_bar, b_bar])
        return vfe_shard_gradient(kernel_spec, theta, zz, x, y, ab, bb, t_bar, n_threads=1)

    pieces = _map(grad, shards, client)
    return value, gradient + sum(pieces)


def pack(theta, noise, z):
    """The parameter vector ``[θ…, ln σ², vec(Z) row by row]`` of the sparse objectives."""
    z = np.asarray(z, dtype=np.float64)
    return np.concatenate([np.asarray(theta, dtype=np.float64), [np.log(noise)], z.ravel()])


def pac_sgp_settings(kernel_spec, d, m, epsilon, delta=0.01, bound="kl", alpha_s=1.0,
                     confidence_term="maurer", hyper_prior=None):
    """The sparse PAC-GP bound's settings as the module's sharded functions take them: kernel
    specification on ``d`` inputs, ``m`` inducing inputs, ε of the ε-band loss (on the shards'
    target scale), δ, ``bound`` (kl/sqrt), ``alpha_s`` (1 = FITC, 0 = VFE), the confidence
    term (maurer/seeger/sharp) and the hyperparameter prior (None = the paper's grid)."""
    return {
        "kernel_spec": kernel_spec, "d": int(d), "m": int(m), "alpha_s": float(alpha_s),
        "epsilon": float(epsilon), "delta": float(delta), "bound": bound,
        "confidence_term": confidence_term, "hyper_prior": hyper_prior,
    }


def pac_sgp_value_and_grad(settings, p, shards, client=None):
    """The sparse PAC-GP bound's ``(R_S, KL, bound)`` and gradient at ``p`` over ``shards``
    (pairs ``(X_s, y_s)``, or Dask futures of them on ``client``): three map passes on the
    shards, each followed by one M×M step here (``pacgp::objective::pac_sgp_sharded``)."""
    from ._pacgp import (pac_sgp_combine, pac_sgp_shard_gradient, pac_sgp_shard_risk,
                         pac_sgp_shard_stats, pac_sgp_state)

    p = [float(v) for v in p]

    def stats(shard):
        x, y = _aligned(shard)
        return pac_sgp_shard_stats(settings, p, x, y, n_threads=1)

    parts = _map(stats, shards, client)
    b, gamma = sum(q[0] for q in parts), sum(q[1] for q in parts)
    l_b, e, kl, n = pac_sgp_state(settings, p, b, gamma, sum(q[2] for q in parts))

    def risk(shard):
        x, y, lb, ee = _aligned([*shard, l_b, e])
        return pac_sgp_shard_risk(settings, p, lb, ee, kl, n, x, y, n_threads=1)

    parts = _map(risk, shards, client)
    terms, c, c_bar, scale, gradient = pac_sgp_combine(
        settings, p, l_b, e, kl, n, sum(q[0] for q in parts), sum(q[1] for q in parts),
        sum(q[2] for q in parts),
    )

    def grad(shard):
        x, y, lb, ee, cc, cb = _aligned([*shard, l_b, e, c, c_bar])
        return pac_sgp_shard_gradient(settings, p, lb, ee, cc, cb, scale, x, y, n_threads=1)

    return terms, gradient + sum(_map(grad, shards, client))


def sharded_pac_sgp(shards, kernel_spec, theta, noise, z, epsilon, delta=0.01, bound="kl",
                    alpha_s=1.0, confidence_term="maurer", hyper_prior=None, client=None,
                    return_terms=False):
    """The sparse PAC-GP bound (seed 004, FITC or VFE posterior) and its gradient in
    ``[θ…, ln σ², vec(Z)]`` over data held in shards, map-reduce style as :func:`sharded_vfe`;
    ε on the targets' scale. ``return_terms`` gives ``(R_S, KL, bound)`` instead of the bound."""
    z = np.ascontiguousarray(z, dtype=np.float64)
    settings = pac_sgp_settings(kernel_spec, z.shape[1], z.shape[0], epsilon, delta, bound,
                                alpha_s, confidence_term, hyper_prior)
    terms, gradient = pac_sgp_value_and_grad(settings, pack(theta, noise, z), shards, client)
    return (terms if return_terms else terms[2]), gradient


def pac_sgp_objective(X, y, kernel_spec, theta, noise, z, epsilon, **options):
    """The single-process sparse PAC-GP objective (``PacSgpObjective``) on ``(X, y)``:
    ``((R_S, KL, bound), gradient)``; ``options`` as :func:`pac_sgp_settings`."""
    from ._pacgp import pac_sgp_objective as objective

    z = np.ascontiguousarray(z, dtype=np.float64)
    settings = pac_sgp_settings(kernel_spec, z.shape[1], z.shape[0], epsilon, **options)
    X, y = _aligned([X, y])
    return objective(settings, list(pack(theta, noise, z)), X, y)
