"""``time_limit`` (issue 43, item 2): the optimiser stops at its best point so far, the model is
completed at the hyperparameters reached and says so (``stopped_early_``, a
``ConvergenceWarning``, the certificate's ``stopped_early``); a limit of zero has passed when
the fit starts, so nothing here depends on timing."""

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

import pacgp


def _data():
    rng = np.random.RandomState(0)
    X = rng.randn(40, 2)
    y = np.sin(X[:, 0]) + 0.1 * rng.randn(40)
    return X, y


def test_a_zero_time_limit_stops_early_and_certifies():
    X, y = _data()
    with pytest.warns(ConvergenceWarning, match="stopped early by time_limit=0s"):
        est = pacgp.GPRegressor(epsilon=0.5, time_limit=0).fit(X, y)
    assert est.stopped_early_ == {"reason": "time_limit", "seconds": 0.0, "iterations": 0}
    assert est.certificate_["stopped_early"]["iterations"] == 0
    assert "exact for the hyperparameters reached" in est.model_.stopped_early
    full = pacgp.GPRegressor(epsilon=0.5).fit(X, y)
    assert full.stopped_early_ is None and full.model_.stopped_early is None
    assert "stopped_early" not in full.certificate_


def test_a_negative_time_limit_is_a_value_error():
    X, y = _data()
    with pytest.raises(ValueError, match="time_limit"):
        pacgp.GPRegressor(time_limit=-1.0).fit(X, y)
