"""Duplicated rows (issue 43 item 7): a fit on copied rows raises a ``UserWarning`` saying the
guarantees assume independent rows, and exposes the count the library made (``duplicates_``,
``certificate_["duplicates"]``, counted here by hand); a sample without copies fits without
the warning; the count survives pickling."""

import pickle
import warnings

import numpy as np
import pytest

import pacgp


def _sample(n=40, seed=4):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-3, 3, size=(n, 2))
    y = np.sin(X[:, 0]) + 0.3 * X[:, 1] + 0.1 * rng.standard_normal(n)
    return X, y


def test_copies_warn_and_are_counted():
    X, y = _sample()
    X3, y3 = np.vstack([X] * 3), np.concatenate([y] * 3)
    with pytest.warns(UserWarning, match=r"80 of the 120 rows .* assume independent rows"):
        reg = pacgp.PACGPRegressor(epsilon=0.5).fit(X3, y3)
    want = {"n": 120, "rows": 80, "groups": 40, "same_inputs": 80}
    for got in (reg.duplicates_, reg.certificate_["duplicates"]):
        assert {k: got[k] for k in want} == want
        assert got["share"] == pytest.approx(80 / 120, rel=1e-15)
    assert pickle.loads(pickle.dumps(reg)).duplicates_ == reg.duplicates_


def test_jackknife_plus_on_copies_is_not_collapsed():
    X, y = _sample(60, seed=5)
    X_new, _ = _sample(20, seed=6)
    one = pacgp.GPRegressor(intervals="jackknife+").fit(X, y)
    with pytest.warns(UserWarning, match="independent rows"):
        four = pacgp.GPRegressor(intervals="jackknife+").fit(np.vstack([X] * 4),
                                                            np.concatenate([y] * 4))
    a, b = one.predict_interval(X_new, alpha=0.1), four.predict_interval(X_new, alpha=0.1)
    assert np.mean(b.upper - b.lower) > 0.5 * np.mean(a.upper - a.lower)
    assert "duplicates" not in a.statement
    iv = b
    assert iv.statement["duplicates"]["rows"] == 180
    assert "independent rows" in iv.statement["statement"]


def test_no_copies_no_warning():
    X, y = _sample()
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        reg = pacgp.PACGPRegressor(epsilon=0.5).fit(X, y)
    assert reg.duplicates_["rows"] == 0 and reg.certificate_["duplicates"]["rows"] == 0
