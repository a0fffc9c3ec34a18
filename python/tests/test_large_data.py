"""The sparse methods' options for large samples: ``pretrain`` (a warm start on a seeded
subsample, reported in the fit's notes) and ``max_iter`` (a cap on the iterations over all
rows, never silent: a ``ConvergenceWarning``), as ``pacgp fit --pretrain/--max-iter``; and the
estimate a fit announces before it starts when it is long, as ``pacgp fit`` prints it."""

import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

import pacgp


def _data(n=300, seed=0):
    rng = np.random.RandomState(seed)
    X = rng.uniform(-2, 2, size=(n, 2))
    y = np.sin(X[:, 0]) + 0.5 * X[:, 1] + 0.1 * rng.randn(n)
    return X, y


def test_a_warm_start_is_reported_and_reaches_the_plain_fit():
    X, y = _data()
    plain = pacgp.SparseGPRegressor(n_inducing=10, kernel="se").fit(X, y)
    warm = pacgp.SparseGPRegressor(n_inducing=10, kernel="se", pretrain=80).fit(X, y)
    notes = warm.fit_report_.get("notes", [])
    assert any("subsample of 80 of the 300 rows" in n for n in notes)
    assert not any("subsample" in n for n in plain.fit_report_.get("notes", []))
    a, b = plain.fit_report_["objective"], warm.fit_report_["objective"]
    assert abs(a - b) < 1e-2 * abs(a)


@pytest.mark.parametrize("make", [
    lambda: pacgp.SparseGPRegressor(n_inducing=8, kernel="se", max_iter=2),
    lambda: pacgp.PACGPRegressor(sparse=True, n_inducing=8, kernel="se", max_iter=2),
])
def test_an_iteration_cap_warns(make):
    X, y = _data(120)
    with pytest.warns(ConvergenceWarning, match="iteration limit after 2 iterations"):
        est = make().fit(X, y)
    assert est.fit_report_["optimiser"]["termination"] == "max_iterations"
    assert est.n_iter_ == 2


def test_the_options_are_refused_where_they_do_not_apply():
    X, y = _data(60)
    with pytest.raises(ValueError, match="max_iter 0: must be at least 1"):
        pacgp.SparseGPRegressor(n_inducing=5, max_iter=0).fit(X, y)
    with pytest.raises(ValueError, match="pretrain"):
        pacgp.PACGPRegressor(sparse=True, n_inducing=5, prior="split:auto", pretrain=30).fit(X, y)
    # A subsample as large as the sample is no warm start.
    whole = pacgp.SparseGPRegressor(n_inducing=5, kernel="se", pretrain=10_000).fit(X, y)
    assert not any("subsample" in n for n in whole.fit_report_.get("notes", []))


def test_a_fit_estimated_long_warns_with_the_estimate_before_it_starts():
    """The library's estimate for VFE on 20 000 rows, M = 200, on one thread is well above
    30 s (the CLI prints the same sentence); ``time_limit=0`` stops the optimiser at once, so
    the test itself is short. A small fit gives no such warning."""
    rng = np.random.RandomState(0)
    X = rng.randn(20000, 8)
    y = X[:, 0] + 0.1 * rng.randn(20000)
    with pytest.warns(UserWarning) as caught:
        pacgp.SparseGPRegressor(n_inducing=200, n_threads=1, time_limit=0).fit(X, y)
    long = [str(w.message) for w in caught if str(w.message).startswith("fitting vfe")]
    assert len(long) == 1, [str(w.message) for w in caught]
    assert "fitting vfe on 20000 points: about " in long[0]
    assert " on 1 thread (" in long[0] and "of memory" in long[0]
    with warnings.catch_warnings(record=True) as small:
        warnings.simplefilter("always")
        pacgp.SparseGPRegressor(n_inducing=20, n_threads=1).fit(*_data())
    assert not [w for w in small if str(w.message).startswith("fitting ")]
