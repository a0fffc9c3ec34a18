"""The sparse variational GP classifier trained over data shards (``fit_sharded("svgp" |
"pac-svgp", ...)``): its objective summed over uneven shards equals the objective on the whole
sample in one piece to 1e-10; on a Dask LocalCluster and serially the fit reaches identical
parameters and model files; the model certifies on the training sample with the bound the
bound-trained fit computed; and the fit is the in-process ``SparseGPClassifier``'s (the same
start, driver, boxes and grid), up to the rounding of the sums."""

import json
import pickle

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

import pacgp
from pacgp.distributed import fit_sharded, svgp_value_and_grad

N, D, M = 400, 2, 8


@pytest.fixture(scope="module")
def sample():
    rng = np.random.RandomState(5)
    X = rng.uniform(-2, 2, size=(N, D)) * [1.0, 3.0] + [0.0, 5.0]
    latent = np.sin(1.5 * X[:, 0]) - (X[:, 1] - 5.0) / 3.0 + 0.4 * rng.randn(N)
    y = np.where(latent > 0, "yes", "no")
    cuts = [0, 90, 91, N]
    return X, y, [(X[a:b], y[a:b]) for a, b in zip(cuts, cuts[1:])]


def coded(estimator, X, y):
    s = estimator.sharded_
    return (X - s["x_mean"]) / s["x_sd"], np.where(y == "yes", 1.0, -1.0)


@pytest.mark.parametrize("method", ["svgp", "pac-svgp"])
def test_the_objective_over_shards_is_the_objective_on_the_whole_sample(sample, method):
    X, y, _ = sample
    with pytest.warns(ConvergenceWarning):
        est = fit_sharded(method, [(X, y)], n_inducing=M, max_iter=5)
    Xs, ys = coded(est, X, y)
    options = dict(kernel="se-ard", inducing=M, seed=0, delta=0.01, bound=None, xi=None,
                   max_iter=5, pretrain=None, epsilon=None, batch_size=None, likelihood=None)
    p = est.sharded_["params"]
    whole = svgp_value_and_grad(method, options, N, D, p, [(Xs, ys)])
    cuts = [0, 13, 13, 250, N]
    parts = [(Xs[a:b], ys[a:b]) for a, b in zip(cuts, cuts[1:])]
    split = svgp_value_and_grad(method, options, N, D, p, parts)
    np.testing.assert_allclose(split[0], whole[0], rtol=1e-10)
    np.testing.assert_allclose(split[1], whole[1], rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(est.sharded_["terms"], whole[0], rtol=1e-10)


def test_pac_svgp_cluster_equals_serial_and_certifies(sample, dask_client):
    X, y, shards = sample
    options = dict(n_inducing=M, delta=0.05, max_iter=15)
    with pytest.warns(ConvergenceWarning, match="iteration limit"):
        serial = fit_sharded("pac-svgp", shards, **options)
    held = dask_client.scatter(shards)
    with pytest.warns(ConvergenceWarning):
        remote = fit_sharded("pac-svgp", held, **options, client=dask_client)
    np.testing.assert_array_equal(remote.sharded_["params"], serial.sharded_["params"])
    assert remote.sharded_["terms"] == serial.sharded_["terms"]
    assert remote.model_.to_json() == serial.model_.to_json()
    assert isinstance(serial, pacgp.SparseGPClassifier)
    assert serial.model_.method == "pac-svgp"
    assert list(serial.classes_) == ["no", "yes"]
    # θ on the grid (two decimals), and the optimiser moved Z from its k-means start.
    theta = serial.sharded_["params"][:D + 1]
    np.testing.assert_array_equal(np.round(theta, 2), theta)
    # The model certifies on the training sample with the bound the training computed:
    # the empirical Gibbs risk, the KL and the kl-bound (dense posterior against whitened
    # marginals: equal to rounding).
    _, ys = coded(serial, X, y)
    certificate = json.loads(serial.model_.certify(X, ys, loo="none"))[0]
    risk, kl, bound = serial.sharded_["terms"]
    np.testing.assert_allclose(certificate["empirical_risk"], risk, rtol=1e-9)
    np.testing.assert_allclose(certificate["kl"], kl, rtol=1e-9)
    np.testing.assert_allclose(certificate["bound"], bound, rtol=1e-9)
    assert certificate["delta"] == 0.05 and 0 < bound < 1
    # certificate_ was computed over the shards (each summed its Gibbs loss; the bound was
    # assembled from the total): the one certify gives on the whole sample, here and on Dask.
    for fitted in (serial, remote):
        on_shards = fitted.certificate_
        for key in ("bound", "empirical_risk"):
            np.testing.assert_allclose(on_shards[key], certificate[key], rtol=1e-12)
        for key in ("kl", "penalty", "n", "delta", "predictor"):
            assert on_shards[key] == certificate[key], key
        assert on_shards.get("loo_error") is None and not any(fitted.loo_.values())
    loaded = pickle.loads(pickle.dumps(serial))
    np.testing.assert_array_equal(loaded.predict(X), serial.predict(X))
    assert (serial.predict(X) == y).mean() > 0.85


def test_the_sharded_fit_is_the_in_process_fit(sample):
    """A short run (an unconverged one's path is chaotic in the last bits, and a θ near a
    grid midpoint may snap either way after many iterations)."""
    X, y, shards = sample
    for method, objective in [("svgp", "elbo"), ("pac-svgp", "bound")]:
        with pytest.warns(ConvergenceWarning):
            sharded = fit_sharded(method, shards, n_inducing=M, seed=3, max_iter=10)
            local = pacgp.SparseGPClassifier(objective=objective, n_inducing=M,
                                             random_state=3, max_iter=10).fit(X, y)
        np.testing.assert_allclose(sharded.theta_, local.theta_, rtol=0, atol=1e-12)
        np.testing.assert_allclose(sharded.predict_proba(X), local.predict_proba(X),
                                   rtol=0, atol=1e-8)
        a, b = sharded.fit_report_["objective"], local.fit_report_["objective"]
        assert abs(a - b) < 1e-6 * abs(b), f"{method}: objective {a} sharded, {b} in process"


def test_a_wide_sharded_fit_starts_where_the_in_process_fit_starts():
    """On more than 20 inputs the sparse variational classifier starts the lengthscales at
    the median distance between all the standardised rows (300, fewer than the 1 000 of the
    subsample), gathered from the shards: the note is the in-process fit's, and so is θ on the
    grid after a short run."""
    rng = np.random.RandomState(13)
    n, d = 300, 24
    X = rng.randn(n, d)
    y = np.where(np.sin(1.5 * X[:, 0]) + 0.5 * X[:, 1] + 0.2 * rng.randn(n) > 0, "yes", "no")
    shards = [(X[a:b], y[a:b]) for a, b in [(0, 100), (100, 101), (101, n)]]
    with pytest.warns(ConvergenceWarning):
        sharded = fit_sharded("svgp", shards, n_inducing=M, seed=3, max_iter=10)
        local = pacgp.SparseGPClassifier(objective="elbo", n_inducing=M, random_state=3,
                                         max_iter=10).fit(X, y)
    start = sharded.sharded_["start"]
    assert start.startswith("lengthscales started at "), start
    assert start in local.fit_report_["notes"], local.fit_report_["notes"]
    np.testing.assert_allclose(sharded.theta_, local.theta_, rtol=0, atol=1e-12)


def test_the_sharded_minibatch_fit_is_the_in_process_minibatch_fit(sample, dask_client):
    """With ``batch_size`` the library's Adam run draws the in-process fit's seeded rows; each
    shard sums its own share: the same parameters up to the rounding of the sums, serially and
    on the cluster (identical there)."""
    X, y, shards = sample
    for method, objective in [("svgp", "elbo"), ("pac-svgp", "bound")]:
        options = dict(n_inducing=M, seed=2, max_iter=60, batch_size=50)
        serial = fit_sharded(method, shards, **options)
        remote = fit_sharded(method, dask_client.scatter(shards), **options,
                             client=dask_client)
        local = pacgp.SparseGPClassifier(objective=objective, n_inducing=M, random_state=2,
                                         max_iter=60, batch_size=50).fit(X, y)
        np.testing.assert_array_equal(remote.sharded_["params"], serial.sharded_["params"])
        np.testing.assert_allclose(serial.theta_, local.theta_, rtol=0, atol=1e-12)
        np.testing.assert_allclose(serial.predict_proba(X), local.predict_proba(X),
                                   rtol=0, atol=1e-10)
        report = serial.fit_report_["optimiser"]
        assert report["iterations"] == 60 and "minibatches of 50 rows" in report["message"]
        assert serial.model_.to_json() == remote.model_.to_json()


def test_an_exception_in_a_minibatch_gradient_stops_the_fit_and_is_raised(sample):
    from pacgp._pacgp import ShardedFitSpec

    spec = ShardedFitSpec("svgp", dict(inducing=M, batch_size=10, max_iter=5))
    calls = []

    def broken(p, rows):
        calls.append(len(rows))
        raise RuntimeError("the worker holding shard 2 is gone")

    def objective(p):
        return 0.0, [0.0] * len(p)

    with pytest.raises(RuntimeError, match="shard 2 is gone"):
        spec.minimise(1.0, np.ones((M, D)) * np.arange(M)[:, None], objective, rows=N,
                      batch_gradient=broken)
    assert calls == [10]
    with pytest.raises(ValueError, match="batch_gradient"):
        spec.minimise(1.0, np.ones((M, D)) * np.arange(M)[:, None], objective, rows=N)


def test_more_classes_over_shards_are_the_in_process_one_vs_rest_fit(dask_client):
    """Three classes: one sharded fit per class against the rest, joined into the model the
    in-process one-vs-rest fit writes (the same spec and member labels); its probabilities
    and the multi-class certificate on the training sample equal the in-process fit's."""
    rng = np.random.RandomState(1)
    n = 450
    X = rng.uniform(-2, 2, (n, 2))
    scores = np.column_stack([X[:, 0], X[:, 1], -X[:, 0] - X[:, 1]]) + 0.3 * rng.randn(n, 3)
    y = np.array(["a", "b", "c"])[np.argmax(scores, axis=1)]
    shards = [(X[a:b], y[a:b]) for a, b in [(0, 100), (100, 101), (101, n)]]
    for method, objective in [("svgp", "elbo"), ("pac-svgp", "bound")]:
        # A class's fit that stops on its iteration limit warns, in process and over shards.
        with pytest.warns(ConvergenceWarning, match="iteration limit"):
            sharded = fit_sharded(method, shards, n_inducing=M, max_iter=10, seed=1)
        with pytest.warns(ConvergenceWarning):
            remote = fit_sharded(method, dask_client.scatter(shards), n_inducing=M,
                                 max_iter=10, seed=1, client=dask_client)
        with pytest.warns(ConvergenceWarning, match="iteration limit"):
            local = pacgp.SparseGPClassifier(objective=objective, n_inducing=M, max_iter=10,
                                             random_state=1).fit(X, y)
        assert remote.model_.to_json() == sharded.model_.to_json()
        assert list(sharded.classes_) == ["a", "b", "c"]
        assert len(sharded.sharded_["members"]) == 3
        np.testing.assert_allclose(sharded.predict_proba(X), local.predict_proba(X),
                                   rtol=0, atol=1e-9)
        ours, theirs = json.loads(sharded.model_.to_json()), json.loads(local.model_.to_json())
        assert ours["spec"] == theirs["spec"]
        assert [m["task"]["labels"] for m in ours["task"]["members"]] == \
            [m["task"]["labels"] for m in theirs["task"]["members"]]
        index = np.searchsorted(sharded.classes_, y).astype(float)
        certificate = json.loads(sharded.model_.certify(X, index, loo="none"))[0]
        np.testing.assert_allclose(certificate["bound"], local.certificate_["bound"],
                                   rtol=1e-9)
        assert sharded.n_iter_ == 10
        # The one-vs-rest certificate summed over the shards is certify's on the whole sample.
        for key in ("bound", "empirical_risk"):
            np.testing.assert_allclose(sharded.certificate_[key], certificate[key], rtol=1e-12)
        assert sharded.certificate_["kl"] == certificate["kl"]
        assert remote.certificate_ == sharded.certificate_


def test_the_logit_link_over_shards_is_the_in_process_logit_fit(sample):
    X, y, shards = sample
    with pytest.warns(ConvergenceWarning):
        sharded = fit_sharded("svgp", shards, n_inducing=M, max_iter=10, likelihood="logistic")
        local = pacgp.SparseGPClassifier(n_inducing=M, max_iter=10,
                                         likelihood="logistic").fit(X, y)
        probit = pacgp.SparseGPClassifier(n_inducing=M, max_iter=10).fit(X, y)
    assert json.loads(sharded.model_.to_json())["task"]["likelihood"] == {"likelihood": "logistic"}
    np.testing.assert_allclose(sharded.predict_proba(X), local.predict_proba(X),
                               rtol=0, atol=1e-8)
    assert np.max(np.abs(local.predict_proba(X) - probit.predict_proba(X))) > 1e-3


def test_fit_sharded_refuses_what_it_cannot_train_a_classifier_on(sample):
    X, y, shards = sample
    with pytest.raises(ValueError, match="two classes or more, got 1"):
        fit_sharded("svgp", [(X, np.full(N, "yes"))], n_inducing=M)
    with pytest.raises(ValueError, match="n_inducing"):
        fit_sharded("svgp", shards, n_inducing=10 * N)
    with pytest.raises(ValueError, match="epsilon"):
        fit_sharded("pac-svgp", shards, n_inducing=M, epsilon=0.5)
    with pytest.raises(ValueError, match="pretrain"):
        fit_sharded("svgp", shards, n_inducing=M, pretrain=100)
    with pytest.raises(ValueError, match="bound"):
        fit_sharded("pac-svgp", shards, n_inducing=M, bound="catoni")
    bad = [(np.where(X == X[0, 0], np.nan, X), y)]
    with pytest.raises(ValueError):
        fit_sharded("svgp", bad, n_inducing=M)
