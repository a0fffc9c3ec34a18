"""Bad input is a ValueError (from scikit-learn's validation or the library's typed errors),
input layouts numpy allows are accepted, and pacgp's own exception is exported."""

import json

import numpy as np
import pytest

import pacgp
from pacgp import _pacgp


@pytest.fixture(scope="module")
def data():
    rng = np.random.RandomState(0)
    X = rng.randn(40, 3)
    y = np.sin(X[:, 0]) + 0.1 * rng.randn(40)
    return X, y


def test_pacgp_error_is_a_runtime_error():
    assert issubclass(pacgp.PacgpError, RuntimeError)
    assert not issubclass(pacgp.PacgpError, ValueError)


@pytest.mark.parametrize(
    "make",
    [
        lambda: pacgp.GPRegressor(kernel="no-such-kernel"),
        lambda: pacgp.GPRegressor(epsilon=-1.0),
        lambda: pacgp.SparseGPRegressor(method="dtc-typo"),
        lambda: pacgp.SparseGPRegressor(n_inducing=0),
        lambda: pacgp.PACGPRegressor(epsilon=1.0, bound="tight"),
        lambda: pacgp.PACGPRegressor(epsilon=1.0, delta=1.5),
        lambda: pacgp.GreedySparseRegressor(n_basis=1000),
        lambda: pacgp.GPRegressor(epsilon=1.0, loo="sometimes"),
    ],
)
def test_bad_regression_options_are_value_errors(make, data):
    with pytest.raises(ValueError):
        make().fit(*data)


@pytest.mark.parametrize(
    "make",
    [
        lambda: pacgp.GPClassifier(method="svm-typo"),
        lambda: pacgp.GPClassifier(method="ep", likelihood="logistic"),
        lambda: pacgp.GPClassifier(kernel="se", select="bound"),  # the menu takes no kernel
        lambda: pacgp.GPClassifier(method="sogp", select="ml2"),
        lambda: pacgp.GPClassifier(kappa=0.1),  # mean-field only
        lambda: pacgp.GPClassifier(active_set=5),  # ivm / sogp only
        # The split prior (issue 15): bound and prior_scale only with it, laplace/pac-gpc only.
        lambda: pacgp.GPClassifier(prior="split:1.5"),
        lambda: pacgp.GPClassifier(method="ep", prior="split:0.5"),
        lambda: pacgp.GPClassifier(bound="catoni"),
        lambda: pacgp.GPClassifier(method="pac-gpc", prior_scale="auto"),
        lambda: pacgp.GPClassifier(prior="split:0.5", bound="maurer"),
        lambda: pacgp.GPClassifier(prior="split:0.5", prior_scale=0.0),
        lambda: pacgp.GPClassifier(prior="split:0.5", prior_scale="big"),
        lambda: pacgp.GPClassifier(prior="split:0.5", select="ml2"),
        lambda: pacgp.GPClassifier(prior="split:0.5", likelihood="logistic"),
        lambda: pacgp.SVMClassifier(slack="cubic"),
        lambda: pacgp.SVMClassifier(C=-1.0),
    ],
)
def test_bad_classifier_options_are_value_errors(make, data):
    X, y = data
    with pytest.raises(ValueError):
        make().fit(X, y > 0)


def test_bad_arrays_are_value_errors(data):
    X, y = data
    bad = X.copy()
    bad[3, 1] = np.nan
    with pytest.raises(ValueError):
        pacgp.GPRegressor().fit(bad, y)
    with pytest.raises(ValueError):
        pacgp.GPRegressor().fit(X, y[:-1])
    with pytest.raises(ValueError):
        pacgp.GPRegressor().fit(X, np.ones_like(y))  # constant target: the library refuses
    model = pacgp.GPRegressor().fit(X, y)
    with pytest.raises(ValueError):
        model.predict(X[:, :2])
    with pytest.raises(ValueError):  # one class only (three classes are one-vs-rest)
        pacgp.GPClassifier().fit(X, np.zeros(len(X)))


def test_the_raw_binding_reports_library_errors_as_value_errors(data):
    X, y = data
    with pytest.raises(ValueError, match="non-finite"):
        _pacgp.fit(np.full_like(X, np.inf), y, "gpr", {})
    with pytest.raises(ValueError, match="shape"):
        _pacgp.fit(X, y[:10], "gpr", {})
    with pytest.raises(ValueError, match="unknown fit option 'epsilonn'"):
        _pacgp.fit(X, y, "gpr", {"epsilonn": 0.3})
    model = _pacgp.fit(X, y, "gpr", {"epsilon": 0.3})
    with pytest.raises(ValueError, match="training sample"):
        model.certify(X[:-1], y[:-1])
    with pytest.raises(ValueError, match="model JSON"):
        _pacgp.Model.from_json("{}")
    broken = json.loads(model.to_json())
    broken["task"]["noise_variance"] = -1.0
    with pytest.raises(ValueError, match="noise variance"):
        _pacgp.Model.from_json(json.dumps(broken))
    classifier = _pacgp.fit(X, np.where(y > 0, 1.0, -1.0), "laplace", {}, labels=("a", "b"))
    with pytest.raises(ValueError, match="classifier"):
        classifier.predict_regression(X)


def test_float32_and_non_contiguous_inputs_give_the_float64_results(data):
    # One thread each: with several, the parallel reductions may differ in the last bits.
    X, y = data
    reference = pacgp.GPRegressor(n_threads=1).fit(X, y)
    wide = np.zeros((40, 6))
    wide[:, ::2] = X
    strided = wide[:, ::2]
    assert not strided.flags.c_contiguous
    fortran = np.asfortranarray(X)
    for X_view in (strided, fortran):
        fitted = pacgp.GPRegressor(n_threads=1).fit(X_view, y)
        np.testing.assert_array_equal(fitted.predict(X_view), reference.predict(X))
    X32 = X.astype(np.float32)
    fitted = pacgp.GPRegressor(n_threads=1).fit(X32, y.astype(np.float32))
    np.testing.assert_array_equal(
        fitted.predict(X32),
        pacgp.GPRegressor(n_threads=1).fit(X32.astype(np.float64), y.astype(np.float32).astype(np.float64))
        .predict(X32.astype(np.float64)),
    )
    # The binding itself reads strided views in place.
    np.testing.assert_array_equal(
        reference.model_.predict_regression(strided)[0], reference.predict(X)
    )


def misaligned(a):
    """A copy of `a` at an odd address (as a buffer unpickled by Dask can be)."""
    raw = np.zeros(a.nbytes + 1, dtype=np.uint8)
    raw[1:] = np.frombuffer(a.tobytes(), dtype=np.uint8)
    out = np.frombuffer(raw.data, dtype=np.float64, offset=1, count=a.size).reshape(a.shape)
    assert not out.flags.aligned
    return out


def test_misaligned_arrays_are_refused_by_the_binding_and_copied_by_the_estimators(data):
    X, y = data
    with pytest.raises(ValueError, match="aligned"):
        _pacgp.fit(misaligned(X), y, "gpr", {})
    with pytest.raises(ValueError, match="aligned"):
        _pacgp.fit(X, misaligned(y), "gpr", {})
    reference = pacgp.GPRegressor(n_threads=1).fit(X, y)
    fitted = pacgp.GPRegressor(n_threads=1).fit(misaligned(X), misaligned(y))
    np.testing.assert_array_equal(fitted.predict(misaligned(X)), reference.predict(X))


def test_n_threads_follows_n_jobs_and_refuses_zero_and_absurd_counts(data):
    # -1 is every core (scikit-learn's n_jobs): the same fit as one thread (to the ML-II
    # optimiser's tolerance); 0 and more than four
    # threads per core are refused by the library with the CLI's wording.
    X, y = data
    one = pacgp.GPRegressor(n_threads=1).fit(X, y)
    every = pacgp.GPRegressor(n_threads=-1).fit(X, y)
    np.testing.assert_allclose(every.predict(X), one.predict(X), rtol=1e-6, atol=1e-9)
    pacgp.SparseGPRegressor(n_inducing=5, n_threads=-2).fit(X, y)
    with pytest.raises(ValueError, match="cannot run 0 worker threads.*give at least 1"):
        pacgp.GPRegressor(n_threads=0).fit(X, y)
    with pytest.raises(ValueError, match="cannot run 100000 worker threads on .* at most 4 per core"):
        pacgp.GPRegressor(n_threads=100000).fit(X, y)
    with pytest.raises(ValueError, match="cannot run -100000 worker threads"):
        pacgp.GPRegressor(n_threads=-100000).fit(X, y)
    with pytest.raises(ValueError, match="cannot run 0 worker threads"):
        one.model_.predict_regression(X, n_threads=0)
