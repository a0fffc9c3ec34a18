"""Training one sparse GP over data shards (``pacgp.distributed.fit_sharded``): on a Dask
LocalCluster of two worker processes and serially it reaches identical parameters; its final
objective is the library's single-process objective at those parameters; the returned model
certifies on the training sample with exactly the bound the training computed, and pickles."""

import json
import pickle

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

import pacgp
from pacgp.distributed import fit_sharded, pac_sgp_objective, sharded_vfe

N, D, M = 500, 2, 8


@pytest.fixture(scope="module")
def sample():
    rng = np.random.RandomState(3)
    X = rng.uniform(-2, 2, size=(N, D)) * [1.0, 3.0] + [0.0, 5.0]
    y = np.sin(X[:, 0]) + np.cos(X[:, 1] / 3) + 0.2 * rng.randn(N) + 3.0
    cuts = [0, 120, 121, N]
    return X, y, [(X[a:b], y[a:b]) for a, b in zip(cuts, cuts[1:])]


def standardised(estimator, X, y):
    s = estimator.sharded_
    return (X - s["x_mean"]) / s["x_sd"], (y - s["y_mean"]) / s["y_sd"]


def unpack(p):
    nk = D + 1  # SE-ARD: D lengthscales and the signal variance
    return list(p[:nk]), float(np.exp(p[nk])), p[nk + 1:].reshape(M, D)


def test_pac_sgp_sharded_training_cluster_equals_serial_and_certifies(sample, dask_client):
    X, y, shards = sample
    options = dict(n_inducing=M, epsilon=0.5, delta=0.05, max_iter=12)
    with pytest.warns(ConvergenceWarning, match="iteration limit"):
        serial = fit_sharded("pac-sgp", shards, **options)
    assert serial.sharded_["optimiser"]["termination"] == "max_iterations"
    assert serial.fit_report_["optimiser"]["termination"] == "max_iterations"
    held = dask_client.scatter(shards)
    with pytest.warns(ConvergenceWarning):
        remote = fit_sharded("pac-sgp", held, **options, client=dask_client)
    np.testing.assert_array_equal(remote.sharded_["params"], serial.sharded_["params"])
    assert remote.sharded_["terms"] == serial.sharded_["terms"]
    assert remote.model_.to_json() == serial.model_.to_json()
    # θ on the paper's grid (two decimals), and the optimiser did move from the start.
    theta, noise, z = unpack(serial.sharded_["params"])
    np.testing.assert_array_equal(np.round(theta, 2), theta)
    assert not np.allclose(z, serial.sharded_["z_init"])
    # The final objective is the single-process PacSgpObjective at those parameters.
    Xs, ys = standardised(serial, X, y)
    terms, _ = pac_sgp_objective(Xs, ys, "se-ard", theta, noise, z,
                                 0.5 / serial.sharded_["y_sd"], delta=0.05)
    np.testing.assert_allclose(serial.sharded_["terms"], terms, rtol=1e-10)
    # The model certifies on the training sample with the bound the training computed.
    certificate = json.loads(serial.model_.certify(X, y, delta=0.05))[0]
    np.testing.assert_allclose(certificate["bound"], terms[2], rtol=1e-10)
    np.testing.assert_allclose(certificate["kl"], terms[1], rtol=1e-10)
    assert 0 < certificate["bound"] < 1
    assert serial.model_.method == "pac-sgp"
    assert serial.fit_report_["objective"] == serial.sharded_["objective"]
    loaded = pickle.loads(pickle.dumps(serial))
    np.testing.assert_array_equal(loaded.predict(X), serial.predict(X))
    assert np.corrcoef(serial.predict(X), y)[0, 1] > 0.8


def test_vfe_sharded_training_cluster_equals_serial(sample, dask_client):
    X, y, shards = sample
    with pytest.warns(ConvergenceWarning):
        serial = fit_sharded("vfe", shards, n_inducing=M, max_iter=12)
        remote = fit_sharded("vfe", dask_client.scatter(shards), n_inducing=M, max_iter=12,
                             client=dask_client)
    np.testing.assert_array_equal(remote.sharded_["params"], serial.sharded_["params"])
    assert remote.model_.to_json() == serial.model_.to_json()
    theta, noise, z = unpack(serial.sharded_["params"])
    Xs, ys = standardised(serial, X, y)
    value, _ = sharded_vfe([(Xs, ys)], "se-ard", theta, noise, z)  # one shard: the whole sample
    np.testing.assert_allclose(serial.sharded_["objective"], value, rtol=1e-10)
    assert isinstance(serial, pacgp.SparseGPRegressor) and serial.model_.method == "vfe"
    mean, std = serial.predict(X[:50], return_std=True)
    assert np.all(std > 0) and np.corrcoef(mean, y[:50])[0, 1] > 0.8


def test_the_sharded_start_is_the_in_process_k_means_start(sample):
    from pacgp._pacgp import initial_inducing_kmeans

    X, y, shards = sample
    with pytest.warns(ConvergenceWarning):
        est = fit_sharded("vfe", shards, n_inducing=M, seed=4, max_iter=1)
    Xs, _ = standardised(est, X, y)
    z = initial_inducing_kmeans(Xs, M, 4)  # regression::inducing_init::initial_inducing, one process
    np.testing.assert_allclose(est.sharded_["z_init"], z, rtol=0, atol=1e-12)


def test_a_warm_start_on_the_seeded_subsample_reaches_the_plain_optimum(sample, dask_client):
    """``pretrain=``: the rows gathered from the shards are the library's seeded subsample
    (``data::split::subsample``, the same rows the in-process ``pretrain=`` draws), the
    warm-started sharded VFE reaches the plain fit's ELBO, on a cluster as serially, and a
    subsample as large as the sample is no warm start."""
    from pacgp._pacgp import permutation_head
    from pacgp.distributed import _moments, _standardise, _subsample

    X, y, shards = sample
    sizes, x_mean, x_sd, y_mean, y_sd = _moments(shards, None)
    data = [_standardise(s, x_mean, x_sd, y_mean, y_sd) for s in shards]
    xs, ys = _subsample(data, sizes, 60, 7, None)
    rows = np.sort(permutation_head(N, 60, 7))
    np.testing.assert_array_equal(xs, (X[rows] - x_mean) / x_sd)
    np.testing.assert_array_equal(ys, (y[rows] - y_mean) / y_sd)
    assert _subsample(data, sizes, N, 7, None) is None

    plain = fit_sharded("vfe", shards, n_inducing=M, seed=7)
    warm = fit_sharded("vfe", shards, n_inducing=M, seed=7, pretrain=60)
    remote = fit_sharded("vfe", dask_client.scatter(shards), n_inducing=M, seed=7, pretrain=60,
                         client=dask_client)
    record = warm.sharded_["pretraining"]
    assert (record["rows"], record["of"]) == (60, N) and record["evaluations"] > 0
    assert plain.sharded_["pretraining"] is None
    a, b = plain.sharded_["objective"], warm.sharded_["objective"]
    assert abs(a - b) < 1e-3 * abs(a), f"ELBO {a} without, {b} with the warm start"
    np.testing.assert_array_equal(remote.sharded_["params"], warm.sharded_["params"])
    whole = fit_sharded("vfe", shards, n_inducing=M, seed=7, pretrain=N)
    assert whole.sharded_["pretraining"] is None
    np.testing.assert_array_equal(whole.sharded_["params"], plain.sharded_["params"])
    for bad in (1, 2.5):
        with pytest.raises(ValueError, match="pretrain"):
            fit_sharded("vfe", shards, n_inducing=M, pretrain=bad)


def test_the_pac_sgp_warm_start_minimises_the_subsample_bound_in_process(sample):
    """The PAC-SGP warm start runs the library's single-process bound and L-BFGS-B on the
    seeded subsample: from the sharded fit's start it lowers that bound, stops on one of the
    library's terminations, and the sharded minimisation continues from its parameters."""
    from pacgp._pacgp import kernel_init_params
    from pacgp.distributed import _moments, _standardise, _subsample, pack

    X, y, shards = sample
    options = dict(n_inducing=M, epsilon=0.5, delta=0.05, max_iter=12, seed=7)
    with pytest.warns(ConvergenceWarning):
        warm = fit_sharded("pac-sgp", shards, pretrain=60, **options)
    record = warm.sharded_["pretraining"]
    assert record["termination"] in ("gradient_tolerance", "cost_tolerance", "max_iterations",
                                     "line_search_failed")
    assert 0 < record["iterations"] <= record["evaluations"]
    sizes, x_mean, x_sd, y_mean, y_sd = _moments(shards, None)
    data = [_standardise(s, x_mean, x_sd, y_mean, y_sd) for s in shards]
    xs, ys = _subsample(data, sizes, 60, 7, None)
    eps = 0.5 / warm.sharded_["y_sd"]
    start = unpack(pack(kernel_init_params("se-ard", D), 1.0, warm.sharded_["z_init"]))
    before, _ = pac_sgp_objective(xs, ys, "se-ard", *start, eps, delta=0.05)
    after, _ = pac_sgp_objective(xs, ys, "se-ard", *unpack(record["params"]), eps, delta=0.05)
    assert after[2] < before[2], f"bound {after[2]} after the warm start, {before[2]} before"


def test_the_sharded_sqrt_bound_is_labelled_as_fitted(sample):
    _, _, shards = sample
    for method, bound in (("pac-sgp-sqrt", None), ("pac-sgp", "sqrt")):
        with pytest.warns(ConvergenceWarning):
            est = fit_sharded(method, shards, n_inducing=M, epsilon=0.5, bound=bound, max_iter=2)
        assert est.get_params()["bound"] == "sqrt"
        assert est.model_.method == "pac-sgp-sqrt"


def test_fit_sharded_refuses_what_it_cannot_train(sample):
    _, _, shards = sample
    with pytest.raises(ValueError, match="method"):
        fit_sharded("fitc", shards, n_inducing=M)
    with pytest.raises(ValueError, match="epsilon"):
        fit_sharded("pac-sgp", shards, n_inducing=M)
    with pytest.raises(ValueError, match="n_inducing"):
        fit_sharded("vfe", shards, n_inducing=10 * N)
    # The options are checked as the library's fit spec, in this function's parameter names.
    with pytest.raises(ValueError, match="bound"):
        fit_sharded("pac-sgp", shards, n_inducing=M, epsilon=0.5, bound="catoni")
    with pytest.raises(ValueError, match="confidence_term"):
        fit_sharded("pac-sgp", shards, n_inducing=M, epsilon=0.5, confidence_term="seeger")
    with pytest.raises(ValueError, match="n_inducing 0"):
        fit_sharded("vfe", shards, n_inducing=0)
    with pytest.raises(ValueError, match="confidence_term applies to pac-gp"):
        fit_sharded("vfe", shards, n_inducing=M, confidence_term="sharp")


def test_an_exception_in_the_sharded_objective_stops_the_fit_and_is_raised():
    """The driver minimises the objective Python evaluates over the shards; an exception there
    (a lost worker, an interrupt) ends the minimisation and is raised, not read as a bad point."""
    from pacgp._pacgp import ShardedFitSpec

    spec = ShardedFitSpec("vfe", dict(inducing=M))
    for fails_at in (1, 3):  # the first evaluation, or one inside a line search
        calls = []

        def broken(p):
            calls.append(1)
            if len(calls) == fails_at:
                raise RuntimeError("the worker holding shard 3 is gone")
            p = np.asarray(p)
            return float(p @ p), (2 * p).tolist()

        with pytest.raises(RuntimeError, match="shard 3 is gone"):
            spec.minimise(1.0, np.ones((M, D)), broken)
        assert len(calls) == fails_at  # not called again once it has raised


def test_the_sharded_fit_is_the_in_process_fit(sample):
    """The same spec, start, driver, boxes and grid snap as ``SparseGPRegressor`` and
    ``PACGPRegressor(sparse=True)``: the two fits reach the same objective and the same θ on
    the grid (the sums over shards round differently, so not the same bits)."""
    X, y, shards = sample
    pairs = [
        (fit_sharded("vfe", shards, n_inducing=M, seed=7),
         pacgp.SparseGPRegressor(n_inducing=M, random_state=7)),
        (fit_sharded("pac-sgp", shards, n_inducing=M, epsilon=0.5, seed=7, max_iter=300),
         pacgp.PACGPRegressor(epsilon=0.5, sparse=True, n_inducing=M, random_state=7,
                              max_iter=300)),
    ]
    for sharded, local in pairs:
        local.fit(X, y)
        a, b = sharded.sharded_["objective"], local.fit_report_["objective"]
        assert abs(a - b) < 1e-6 * abs(b), f"objective {a} sharded, {b} in process"
        np.testing.assert_allclose(sharded.theta_, local.theta_, rtol=0, atol=1e-12)


def test_a_wide_sharded_fit_starts_where_the_in_process_fit_starts():
    """On more than 20 inputs vfe starts the lengthscales at the median distance between the
    standardised rows of the library's seeded subsample (1 000 of the 1 100 rows here),
    gathered from the shards: the note is the in-process fit's, and so is θ on the grid after
    a short run; on 20 inputs nothing is gathered and the start stays."""
    import warnings

    rng = np.random.RandomState(11)
    n, d = 1100, 24
    X = rng.randn(n, d)
    y = np.sin(1.5 * X[:, 0]) + 0.5 * X[:, 1] + 0.05 * rng.randn(n)
    shards = [(X[a:b], y[a:b]) for a, b in [(0, 400), (400, 401), (401, n)]]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        sharded = fit_sharded("vfe", shards, n_inducing=M, seed=7, max_iter=10)
        local = pacgp.SparseGPRegressor(n_inducing=M, random_state=7, max_iter=10).fit(X, y)
        narrow = fit_sharded("vfe", [(X[:, :20], y)], n_inducing=M, seed=7, max_iter=2)
    start = sharded.sharded_["start"]
    assert start.startswith("lengthscales started at "), start
    assert start in local.fit_report_["notes"], local.fit_report_["notes"]
    np.testing.assert_allclose(sharded.theta_, local.theta_, rtol=0, atol=1e-12)
    assert narrow.sharded_["start"] is None


def test_every_estimator_warns_when_its_optimiser_did_not_converge():
    import warnings

    from pacgp._estimators import _warn_unconverged

    report = dict(iterations=300, evaluations=341, message="reached 300 iterations")
    for termination, words in [("max_iterations", "iteration limit"),
                               ("line_search_failed", "failed line search"),
                               ("other", "without a convergence test")]:
        with pytest.warns(ConvergenceWarning, match=words):
            _warn_unconverged(dict(report, termination=termination), "SparseGPRegressor")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _warn_unconverged(dict(report, termination="cost_tolerance"), "SparseGPRegressor")
        _warn_unconverged(dict(report, termination="stalled"), "GPRegressor")
        _warn_unconverged(None, "SVMClassifier")  # no optimiser, nothing to say
