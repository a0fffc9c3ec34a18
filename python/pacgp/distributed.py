"""Grids of certified fits on Dask (``dask.distributed``): ε/δ grids, hyperparameter grids,
repeated splits — one fit per task, run by Dask's scheduler, no scheduler of our own.

``certified_grid(estimator, grid, X, y)`` runs serially; with ``client=`` the same tasks go to
the cluster (the data are scattered once; each worker fits with ``n_threads`` threads, so the
results are identical to the serial run's).
"""

import json

import numpy as np
from sklearn.base import clone
from sklearn.model_selection import ParameterGrid

from ._pacgp import DEFAULT_DELTA


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


def _shard_threads(client):
    """Threads for one shard's sums: one on a worker (the workers are the parallelism), this
    process's whole pool when the shards are mapped here one after another. The sums are the
    same bits on any thread count."""
    return 1 if client is not None else None


def sharded_vfe(shards, kernel_spec, theta, noise, z, client=None):
    """Titsias' VFE bound and its gradient in ``[θ…, ln σ², vec(Z)]`` over data held in shards
    (a list of ``(X_s, y_s)``, or of Dask futures of such pairs on ``client``), map-reduce style
    (Gal, van der Wilk & Rasmussen 2014) in the whitened basis of the single-process objective:
    K_uu's Cholesky factor once here (its jitter policy), the workers' sums of ``V = L⁻¹K_uf``,
    one M×M step here, the workers' gradient parts, one more M×M step here
    (``pacgp::regression::sharded``). ``theta`` are the kernel's ln values."""
    from ._pacgp import (sparse_kuu_factor, vfe_global, vfe_gradient, vfe_shard_gradient,
                         vfe_shard_stats)

    theta = list(theta)
    z = np.ascontiguousarray(z, dtype=np.float64)
    l_uu, _ = sparse_kuu_factor(kernel_spec, theta, z)
    threads = _shard_threads(client)

    def stats(shard):
        x, y, zz, ll = _aligned([*shard, z, l_uu])
        return vfe_shard_stats(kernel_spec, theta, zz, ll, x, y, n_threads=threads)

    parts = _map(stats, shards, client)
    vv = sum(p[0] for p in parts)
    vy = sum(p[1] for p in parts)
    yy, gap, n = (sum(p[k] for p in parts) for k in (2, 3, 4))
    value, c, a, w, t_bar, pbar, ln_noise_grad = vfe_global(
        kernel_spec, theta, noise, z, l_uu, vv, vy, yy, gap, n
    )

    def grad(shard):
        x, y, zz, ll, cc, aa, ww = _aligned([*shard, z, l_uu, c, a, w])
        return vfe_shard_gradient(kernel_spec, theta, noise, zz, ll, x, y, cc, aa, ww, t_bar,
                                  n_threads=threads)

    pieces = _map(grad, shards, client)
    gradient = vfe_gradient(kernel_spec, theta, z, l_uu, pbar, ln_noise_grad,
                            sum(q[0] for q in pieces), sum(q[1] for q in pieces))
    return value, gradient


def pack(theta, noise, z):
    """The parameter vector ``[θ…, ln σ², vec(Z) row by row]`` of the sparse objectives."""
    z = np.asarray(z, dtype=np.float64)
    return np.concatenate([np.asarray(theta, dtype=np.float64), [np.log(noise)], z.ravel()])


def pac_sgp_settings(kernel_spec, d, m, epsilon, delta=DEFAULT_DELTA, bound="kl", alpha_s=1.0,
                     confidence_term="maurer", hyper_prior=None):
    """The sparse PAC-GP bound's settings as the module's sharded functions take them: kernel
    specification on ``d`` inputs, ``m`` inducing inputs, ε of the ε-band loss (on the shards'
    target scale), δ, ``bound`` (kl/sqrt), ``alpha_s`` (1 = FITC, 0 = VFE), the confidence
    term (maurer/sharp) and the hyperparameter prior (None = the paper's grid, or
    gaussian/uniform). The functions check them as a pac-sgp fit's options (the library's
    refusals, ``confidence_term`` for its ``xi``) and evaluate that spec's bound."""
    return {
        "kernel_spec": kernel_spec, "d": int(d), "m": int(m), "alpha_s": float(alpha_s),
        "epsilon": float(epsilon), "delta": float(delta), "bound": bound,
        "confidence_term": confidence_term, "hyper_prior": hyper_prior,
    }


def pac_sgp_value_and_grad(settings, p, shards, client=None):
    """The sparse PAC-GP bound's ``(R_S, KL, bound)`` and gradient at ``p`` over ``shards``
    (pairs ``(X_s, y_s)``, or Dask futures of them on ``client``): K_uu's factor once here, then
    three map passes on the shards, each followed by one M×M step here
    (``pacgp::objective::pac_sgp_sharded``, whitened throughout)."""
    from ._pacgp import (pac_sgp_combine, pac_sgp_gradient, pac_sgp_kuu_factor,
                         pac_sgp_shard_gradient, pac_sgp_shard_risk, pac_sgp_shard_stats,
                         pac_sgp_state)

    p = [float(v) for v in p]
    l_uu, _ = pac_sgp_kuu_factor(settings, p)
    threads = _shard_threads(client)

    def stats(shard):
        x, y, ll = _aligned([*shard, l_uu])
        return pac_sgp_shard_stats(settings, p, ll, x, y, n_threads=threads)

    parts = _map(stats, shards, client)
    b, gamma = sum(q[0] for q in parts), sum(q[1] for q in parts)
    l_b, w, kl, n = pac_sgp_state(settings, p, b, gamma, sum(q[2] for q in parts))

    def risk(shard):
        x, y, ll, lb, ww = _aligned([*shard, l_uu, l_b, w])
        return pac_sgp_shard_risk(settings, p, ll, lb, ww, kl, n, x, y, n_threads=threads)

    parts = _map(risk, shards, client)
    terms, b_bar, gamma_bar, scale, psi, penalty_grad = pac_sgp_combine(
        settings, p, l_b, w, kl, n, sum(q[0] for q in parts), sum(q[1] for q in parts),
        sum(q[2] for q in parts),
    )

    def grad(shard):
        x, y, ll, lb, ww, bb, gb = _aligned([*shard, l_uu, l_b, w, b_bar, gamma_bar])
        return pac_sgp_shard_gradient(settings, p, ll, lb, ww, bb, gb, scale, x, y, n_threads=threads)

    pieces = _map(grad, shards, client)
    gradient = pac_sgp_gradient(settings, p, l_uu, psi, penalty_grad,
                                sum(q[0] for q in pieces), sum(q[1] for q in pieces))
    return terms, gradient


def sharded_pac_sgp(shards, kernel_spec, theta, noise, z, epsilon, delta=DEFAULT_DELTA, bound="kl",
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


_KMEANS_ITERATIONS = 20  # regression::inducing_init::KMEANS_ITERATIONS


def _shard_sums(shard):
    x, y = _aligned(shard)
    return len(y), x.sum(axis=0), float(y.sum())


def _shard_square_sums(shard, x_mean, y_mean):
    x, y = _aligned(shard)
    return ((x - x_mean) ** 2).sum(axis=0), float(((y - y_mean) ** 2).sum())


def _moments(shards, client):
    """Per-shard sizes, and the inputs' and targets' means and population standard deviations
    (two passes, as the library's scalers), from sums over the shards."""
    first = _map(_shard_sums, shards, client)
    sizes = [f[0] for f in first]
    n = sum(sizes)
    x_mean, y_mean = sum(f[1] for f in first) / n, sum(f[2] for f in first) / n
    second = _map(lambda s: _shard_square_sums(s, x_mean, y_mean), shards, client)
    x_sd = np.sqrt(sum(s[0] for s in second) / n)
    y_sd = float(np.sqrt(sum(s[1] for s in second) / n))
    return sizes, x_mean, x_sd, float(y_mean), y_sd


def _standardise(shard, x_mean, x_sd, y_mean, y_sd):
    x, y = _aligned(shard)
    return (x - x_mean) / x_sd, (y - y_mean) / y_sd


def _kmeans_sums(shard, centres, threads):
    """Lloyd's step on one shard, by the library's own (``regression::inducing_init::
    kmeans_sums``): per centre, the sum and count of the shard's points nearest to it."""
    from ._pacgp import kmeans_sums

    x, c = _aligned([_aligned(shard)[0], centres])
    return kmeans_sums(x, c, n_threads=threads)


def _rows_by_index(shards, sizes, wanted, client):
    """The rows ``wanted`` (indices into all N rows, shards in order) gathered from the
    shards: a dict from index to ``(x_i, y_i)``."""
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])

    def rows(shard, lo):
        x, y = _aligned(shard)
        return {i: (x[i - lo], y[i - lo]) for i in wanted if lo <= i < lo + len(y)}

    if client is None:
        found = [rows(s, lo) for s, lo in zip(shards, starts)]
    else:
        found = client.gather(client.map(rows, shards, list(starts), pure=False))
    return {i: r for part in found for i, r in part.items()}


def _initial_inducing(shards, sizes, m, seed, client):
    """The in-process fits' start (regression::inducing_init::initial_inducing, k-means): the first
    ``m`` rows of the library's seeded permutation of all N rows, then Lloyd's iterations,
    each a map over the shards; an empty cluster keeps its centre."""
    from ._pacgp import permutation_head

    head = permutation_head(sum(sizes), m, seed)
    threads = _shard_threads(client)
    picked = _rows_by_index(shards, sizes, head, client)
    centres = np.array([picked[i][0] for i in head])
    for _ in range(_KMEANS_ITERATIONS):
        parts = _map(lambda s, c=centres: _kmeans_sums(s, c, threads), shards, client)
        sums, counts = sum(p[0] for p in parts), sum(p[1] for p in parts)
        filled = counts > 0
        centres = centres.copy()
        centres[filled] = sums[filled] / counts[filled, None]
    return centres


def _wide_start(spec, shards, sizes, d, client):
    """The in-process fit's start on wide inputs (``pacgp::kernel::start``): the rows whose
    median distance it takes (``spec.wide_start_rows``: the library's seeded subsample of at
    most 1 000 rows, or all) gathered from the standardised ``shards`` into this process in
    their order, and the spec's kernel started there (``spec.start_wide``). Returns the
    in-process fit's note, or None where nothing is gathered (20 inputs or fewer, pac-sgp)."""
    n = sum(sizes)
    wanted = spec.wide_start_rows(n, d)
    if not wanted:
        return None
    picked = _rows_by_index(shards, sizes, wanted, client)
    return spec.start_wide(n, np.array([picked[i][0] for i in wanted], dtype=np.float64))


def _subsample(shards, sizes, rows, seed, client):
    """The library's seeded subsample (``data::split::subsample``: the first ``rows`` of the
    seeded permutation, in increasing order) gathered into this process as one shard, or
    None when it would be the whole sample."""
    from ._pacgp import permutation_head

    n = sum(sizes)
    if rows >= n:
        return None
    wanted = sorted(permutation_head(n, rows, seed))
    picked = _rows_by_index(shards, sizes, wanted, client)
    return (np.array([picked[i][0] for i in wanted]), np.array([picked[i][1] for i in wanted]))


def fit_sharded(method, shards, kernel="se-ard", n_inducing=None, epsilon=None, delta=DEFAULT_DELTA,
                bound=None, confidence_term=None, seed=0, max_iter=None, z_init=None,
                pretrain=None, batch_size=None, likelihood=None, client=None):
    """Train one sparse GP on data held in shards (pairs ``(X_s, y_s)``, or Dask futures of
    them on ``client``), map-reduce style: ``method`` "vfe" (Titsias' bound, as
    :class:`~pacgp.SparseGPRegressor`) or "pac-sgp" (the sparse PAC-GP bound, FITC form, as
    ``PACGPRegressor(sparse=True)``; ``epsilon`` in target units is required, ``bound`` "kl"
    (default) or "sqrt" — or ``method`` "pac-sgp-sqrt" —, ``confidence_term`` "maurer"
    (default) or "sharp"); or a classifier of two classes or more, "svgp" (the sparse
    variational GP classifier trained by its evidence lower bound) or "pac-svgp" (by its
    PAC-Bayes bound), as :class:`~pacgp.SparseGPClassifier` — see
    :func:`_fit_sharded_classifier` (``batch_size`` and ``likelihood``, "probit" or
    "logistic", are the classifier's).
    ``n_inducing`` defaults to the library's (100; for a classifier at most N).

    The options are checked by the library as the fit spec of that method (the same refusals,
    in these parameters' names, as the in-process estimators'), and the fit is the library's
    plan for that spec (``pacgp::fit::sharded``): inputs and targets standardised with the
    training moments; the kernel at its initial values (vfe on more than 20 inputs: the
    lengthscales at the in-process fit's median distance, from its seeded subsample of at most
    1 000 rows gathered here; ``sharded_["start"]`` holds its note), σ² = the spec's start
    (vfe) or 1 (pac-sgp), Z by the library's seeded k-means (as map-reduce steps; ``z_init``,
    M×D standardised inputs, replaces it); the parameters minimised by the library's driver
    (L-BFGS-B with the in-process fit's boxes, budget — ``max_iter``, default 300 for vfe and
    1000 for pac-sgp —, vfe's stall rule on more than 20 inputs, and grid snap of θ), each
    evaluation a map-reduce pass over the shards.
    ``pretrain`` (rows, at least 2) warm-starts as the in-process ``pretrain=`` does: the
    library's seeded subsample of that many rows is gathered into this process and the
    driver first minimises the same objective on it here, with all of this process's threads;
    the certificate charges nothing for it. A subsample as large as the sample is no warm start.

    Returns the fitted estimator, whose model is the file the library writes for these
    parameters (``model::sparse_model_from_parts``): predict, pickle, and ``model_.certify``
    on the training sample work. ``certificate_`` is None (the data are not in this process);
    ``sharded_`` holds the parameters, the objective at the snapped θ (for pac-sgp also its
    ``(R_S, KL, bound)``, which the certificate on the training sample reproduces) and the
    optimiser's report."""
    from . import PACGPRegressor, SparseGPRegressor
    from ._pacgp import ShardedFitSpec, posterior_shard_stats

    options = dict(kernel=kernel, inducing=n_inducing, seed=seed, delta=delta, bound=bound,
                   xi=confidence_term, max_iter=max_iter, pretrain=pretrain,
                   epsilon=None if epsilon is None else float(epsilon), batch_size=batch_size,
                   likelihood=likelihood)
    spec = ShardedFitSpec(method, options,
                          names={"inducing": "n_inducing", "xi": "confidence_term"})
    shards = list(shards)
    if spec.method in _CLASSIFIERS:
        return _fit_sharded_classifier(spec, options, shards, z_init, client)
    sizes, x_mean, x_sd, y_mean, y_sd = _moments(shards, client)
    if np.any(x_sd <= 0) or y_sd <= 0:
        raise ValueError("a constant input column or target: drop it before a sharded fit")
    d, m = len(x_mean), spec.n_inducing
    if m > sum(sizes):
        raise ValueError(f"n_inducing must lie in 1..N = {sum(sizes)}, got {m}")
    scale = dict(x_mean=x_mean, x_sd=x_sd, y_mean=y_mean, y_sd=y_sd)
    if client is None:
        data = [_standardise(s, **scale) for s in shards]
    else:
        data = client.map(_standardise, shards, **scale, pure=False)  # stays on the workers
    if z_init is None:
        z0 = _initial_inducing(data, sizes, m, seed, client)
    else:
        z0 = np.array(z_init, dtype=np.float64).reshape(m, d)
    start = _wide_start(spec, data, sizes, d, client)
    kernel = spec.kernel
    settings = spec.pac_sgp_settings(d, y_sd)

    def objective(p):
        p = np.asarray(p)
        if settings is None:
            k = len(p) - 1 - m * d
            value, grad = sharded_vfe(data, kernel, p[:k], np.exp(p[k]),
                                      p[k + 1:].reshape(m, d), client=client)
            return -float(value), (-np.asarray(grad, dtype=np.float64)).tolist()  # maximised
        terms, grad = pac_sgp_value_and_grad(settings, p, data, client)
        return float(terms[2]), np.asarray(grad, dtype=np.float64).tolist()

    warm = {}
    if pretrain is not None:
        sub = _subsample(data, sizes, int(pretrain), seed, client)
        if sub is not None:
            warm = dict(zip(("warm_x", "warm_y"), _aligned(sub)), rows=sum(sizes))
    params, report, pretrained = spec.minimise(y_sd, np.ascontiguousarray(z0), objective,
                                               **{"rows": sum(sizes), **warm})
    p = np.asarray(params)
    if settings is None:
        value, terms = -objective(p)[0], None
    else:
        terms = tuple(pac_sgp_value_and_grad(settings, p, data, client)[0])
        value = terms[2]
    plist, threads, alpha_s = [float(v) for v in p], _shard_threads(client), spec.alpha_s
    parts = _map(lambda s: posterior_shard_stats(kernel, plist, m, alpha_s, *_aligned(s),
                                                 n_threads=threads), data, client)
    model = spec.model(
        plist, sum(q[0] for q in parts), sum(q[1] for q in parts), sum(q[2] for q in parts),
        list(x_mean), list(x_sd), y_mean, y_sd, objective=value, optimiser=report,
    )
    if method == "vfe":
        estimator = SparseGPRegressor(method="vfe", n_inducing=m, kernel=kernel,
                                      epsilon=epsilon, random_state=seed)
    else:
        estimator = PACGPRegressor(epsilon=epsilon, sparse=True, n_inducing=m, delta=delta,
                                   bound="sqrt" if spec.method == "pac-sgp-sqrt" else "kl",
                                   xi=confidence_term or "maurer", kernel=kernel,
                                   random_state=seed)
    estimator._set_model(model)
    estimator.n_features_in_ = d
    estimator.noise_variance_ = model.noise_variance
    estimator.certificate_, estimator.loo_ = None, None
    _, final, iterations, evaluations, termination, message = report
    pretraining = None
    if pretrained is not None:
        rows, of, (warm_params, _, nit, nfev, warm_termination, warm_message) = pretrained
        pretraining = {"rows": rows, "of": of, "iterations": nit, "evaluations": nfev,
                       "termination": warm_termination, "message": warm_message,
                       "params": np.asarray(warm_params)}
    estimator.sharded_ = {
        "params": p, "objective": value, "terms": terms, "z_init": z0,
        "pretraining": pretraining, "start": start,
        "optimiser": {"iterations": iterations, "evaluations": evaluations,
                      "termination": termination, "message": message, "value": final},
        "x_mean": x_mean, "x_sd": x_sd, "y_mean": y_mean, "y_sd": y_sd,
    }
    return estimator


_CLASSIFIERS = {"svgp": "elbo", "pac-svgp": "bound"}


def _labels_of(shard):
    return np.unique(np.asarray(shard[1]))


def _input_sums(shard):
    x = _aligned([shard[0]])[0]
    return len(x), x.sum(axis=0)


def _input_square_sums(shard, x_mean):
    x = _aligned([shard[0]])[0]
    return ((x - x_mean) ** 2).sum(axis=0)


def _coded(shard, positive, x_mean, x_sd):
    """A shard's standardised inputs and its labels coded +1 (``positive``) and −1."""
    x = _aligned([shard[0]])[0]
    y = np.asarray(shard[1])
    return (x - x_mean) / x_sd, np.where(y == positive, 1.0, -1.0)


def _svgp_sums(method, options, n, p, threads):
    """The map step of the sparse variational classifier's objective on one shard."""
    from ._pacgp import svgp_shard_sums

    def sums(shard):
        x, y = _aligned(shard)
        return svgp_shard_sums(method, options, n, p, x, y, n_threads=threads)

    return sums


def _svgp_batch_sums(method, options, n, p, threads):
    """The map step of the minibatch objective: one shard's sums on its rows ``picks``."""
    from ._pacgp import svgp_shard_sums

    def sums(shard, picks):
        x, y = _aligned(shard)
        return svgp_shard_sums(method, options, n, p, np.ascontiguousarray(x[picks]),
                               np.ascontiguousarray(y[picks]), n_threads=threads, batch=True)

    return sums


def _svgp_batch_gradient(method, options, sizes, d, shards, client):
    """``gradient(p, rows)``: the minibatch objective's gradient on the rows ``rows`` (indices
    into all N rows, shards in order), each shard summing its own (one map pass)."""
    from ._pacgp import svgp_combine

    n, starts = sum(sizes), np.concatenate([[0], np.cumsum(sizes)])
    threads = _shard_threads(client)

    def gradient(p, rows):
        rows = np.sort(np.asarray(rows, dtype=np.int64))
        cuts = np.searchsorted(rows, starts)
        picks = [rows[cuts[i]:cuts[i + 1]] - starts[i] for i in range(len(sizes))]
        fn = _svgp_batch_sums(method, options, n, [float(v) for v in p], threads)
        if client is None:
            parts = [fn(s, k) for s, k in zip(shards, picks)]
        else:
            parts = client.gather(client.map(fn, shards, picks, pure=False))
        total = [sum(q[k] for q in parts) for k in range(6)]
        return list(svgp_combine(method, options, n, d, list(p), *total)[1])

    return gradient


def svgp_value_and_grad(method, options, n, d, p, shards, client=None):
    """The sparse variational classifier's objective ``(data_term, KL, value)`` and gradient in
    ``p = [θ…, vec(Z), m, vech(L_q)]`` over ``shards`` (pairs of standardised inputs and ±1
    labels, or Dask futures of them) of ``n`` rows and ``d`` inputs: one map pass
    (``pacgp::svgp::SvgpAssembly::shard_sums``), the sums added here, then one M×M step
    (``combine``). ``method`` "svgp" or "pac-svgp" with ``options`` by the library's option
    names; equal to the in-process objective to rounding."""
    from ._pacgp import svgp_combine

    p = [float(v) for v in p]
    parts = _map(_svgp_sums(method, options, n, p, _shard_threads(client)), shards, client)
    total = [sum(q[k] for q in parts) for k in range(6)]
    return svgp_combine(method, options, n, d, p, *total)


def _fit_sharded_classifier(spec, options, shards, z_init, client):
    """:func:`fit_sharded` of "svgp" / "pac-svgp" (labels any values; with two classes the
    larger in sorted order is coded +1, as :class:`~pacgp.SparseGPClassifier` codes them; with
    more, one model per class against the rest, one after another, as the in-process
    one-vs-rest fit).
    Inputs standardised with the training moments; Z by the library's seeded k-means over the
    shards (or ``z_init``, M×D standardised), q(v) at the prior, θ at the kernel's start (on
    more than 20 inputs the lengthscales at the in-process fit's median distance, from its
    seeded subsample of at most 1 000 rows gathered here; ``sharded_["start"]``); θ, Z,
    m and L_q minimised as the in-process fit minimises them: on all rows by the library's
    driver (L-BFGS with the in-process fit's boxes, budget — ``max_iter``, default 1000 — and
    grid snap of θ), each evaluation one map pass over the shards; or, with ``batch_size`` or
    by default above N·M² = 3·10⁸, by the library's Adam run on the in-process fit's seeded
    minibatches (``max_iter`` steps, default 2000), each step one map pass over the drawn
    rows' shards. The options are checked as the in-process fit's (``inducing_init`` other
    than k-means is in-process only). The fitted
    :class:`~pacgp.SparseGPClassifier`'s model is the one an in-process fit writes for these
    parameters: predict, pickle, and ``model_.certify`` on the training sample work.
    ``certificate_`` is the certificate computed over the shards (each sums its Gibbs loss,
    the driver assembles the bound: the one ``certify`` gives on the whole sample, binary or
    one-vs-rest, without leave-one-out). ``sharded_`` holds the parameters, the objective's terms
    ``(data_term, KL, value)`` (for pac-svgp the empirical Gibbs risk, KL and the bound that
    ``certify`` on the training sample reproduces) and the optimiser's report — per class
    under ``"members"`` for more than two classes."""
    from . import SparseGPClassifier
    from ._estimators import _loo_of

    classes = np.unique(np.concatenate(_map(_labels_of, shards, client)))
    if len(classes) < 2:
        raise ValueError(f"a sharded {spec.method} fit needs two classes or more, got "
                         f"{len(classes)}")
    first = _map(_input_sums, shards, client)
    sizes = [f[0] for f in first]
    n = sum(sizes)
    x_mean = sum(f[1] for f in first) / n
    x_sd = np.sqrt(sum(_map(lambda s: _input_square_sums(s, x_mean), shards, client)) / n)
    if np.any(x_sd <= 0):
        raise ValueError("a constant input column: drop it before a sharded fit")
    d = len(x_mean)
    m = spec.n_inducing if options["inducing"] is not None else min(spec.n_inducing, n)
    if m > n:
        raise ValueError(f"n_inducing must lie in 1..N = {n}, got {m}")
    options = dict(options, inducing=m)
    # Two classes: one model, classes[1] coded +1; more: class k against the rest.
    positives = classes[1:] if len(classes) == 2 else classes
    z0, members, start = None, [], None
    for positive in positives:
        scale = dict(positive=positive, x_mean=x_mean, x_sd=x_sd)
        if client is None:
            data = [_coded(s, **scale) for s in shards]
        else:
            data = client.map(_coded, shards, **scale, pure=False)  # stays on the workers
        if not members:  # the inputs, and so the start, are every member's
            start = _wide_start(spec, data, sizes, d, client)
        if z0 is None and z_init is None:
            z0 = _initial_inducing(data, sizes, m, options["seed"], client)
        elif z0 is None:
            z0 = np.array(z_init, dtype=np.float64).reshape(m, d)
        labels = (str(classes[0]), str(classes[1])) if len(classes) == 2 else ("rest", "class")
        members.append(_sharded_svgp(spec, options, data, sizes, d, z0, labels, client,
                                     (list(x_mean), list(x_sd))))
    if len(classes) == 2:
        model = members[0][0]
    else:
        model = spec.one_vs_rest_model([mm[0] for mm in members], [str(c) for c in classes], n)
    estimator = SparseGPClassifier(
        objective=_CLASSIFIERS[spec.method], n_inducing=m, kernel=spec.kernel,
        bound=options["bound"], max_iter=options["max_iter"], delta=options["delta"],
        batch_size=options["batch_size"], likelihood=options["likelihood"] or "probit",
        random_state=options["seed"],
    )
    estimator.classes_ = classes
    estimator._set_model(model)
    estimator.n_features_in_ = d
    # The certificate summed over the shards (map) and assembled here (reduce).
    estimator.certificate_ = _certificate_on_shards(model, shards, classes, client)
    estimator.loo_ = _loo_of(estimator.certificate_)
    fitted = [record for _, record in members]
    estimator.sharded_ = dict(fitted[0] if len(classes) == 2 else {"members": fitted},
                              z_init=z0, x_mean=x_mean, x_sd=x_sd, start=start)
    return estimator


def _certificate_on_shards(model, shards, classes, client):
    """A classifier's certificate on its training sample held in ``shards`` (raw inputs and
    labels of the sorted ``classes``; two: the second coded +1, more: class indices): each
    shard sums its Gibbs loss (``FittedModel::gibbs_risk_sum``), the sums are added here and
    the certificate assembled from the total (``certify_risk_sum``): the one ``certify``
    gives on the whole sample, without leave-one-out."""
    threads = _shard_threads(client)

    def part(shard):
        x = _aligned([shard[0]])[0]
        labels = np.asarray(shard[1])
        if len(classes) == 2:
            y = np.where(labels == classes[1], 1.0, -1.0)
        else:
            y = np.searchsorted(classes, labels).astype(np.float64)
        return model.gibbs_risk_sum(x, y, n_threads=threads)

    sums = _map(part, shards, client)
    loss, rows = sum(q[0] for q in sums), sum(q[1] for q in sums)
    return json.loads(model.certify_risk_sum(loss, rows))


def _sharded_svgp(spec, options, data, sizes, d, z0, labels, client, scaler):
    """One binary sparse variational classifier over ``data`` (standardised inputs, ±1
    labels): its model (labels ``labels``) and the record for ``sharded_``."""
    n, method = sum(sizes), spec.method

    def objective(p):
        terms, grad = svgp_value_and_grad(method, options, n, d, p, data, client)
        return float(terms[2]), list(grad)

    gradient = _svgp_batch_gradient(method, options, sizes, d, data, client)
    params, report, _ = spec.minimise(1.0, np.ascontiguousarray(z0), objective, rows=n,
                                      batch_gradient=gradient)
    p = np.asarray(params)
    terms = tuple(svgp_value_and_grad(method, options, n, d, p, data, client)[0])
    model = spec.svgp_model([float(v) for v in p], n, terms, *scaler, labels, report)
    _, final, iterations, evaluations, termination, message = report
    return model, {
        "params": p, "objective": terms[2], "terms": terms,
        "optimiser": {"iterations": iterations, "evaluations": evaluations,
                      "termination": termination, "message": message, "value": final},
    }
