"""Pickling goes through the model file's JSON: a round trip predicts bit for bit the same
mean and class probabilities and keeps the certificate; the JSON is what `pacgp fit` writes
(same format tag). Site-form posteriors (exact GP) are stored as site precisions and their
factor is recomputed on load, so predictive variances agree to rounding (1e-12), not bits."""

import json
import pickle

import numpy as np
import pytest

import pacgp


@pytest.fixture(scope="module")
def data():
    rng = np.random.RandomState(1)
    X = rng.randn(60, 2)
    y = np.cos(2 * X[:, 0]) + 0.2 * rng.randn(60)
    return X, y


REGRESSORS = [
    pacgp.GPRegressor(epsilon=0.5),
    pacgp.SparseGPRegressor(n_inducing=8, epsilon=0.5),
    pacgp.PACGPRegressor(epsilon=0.5, kernel="se"),
    pacgp.PACGPRegressor(epsilon=0.5, kernel="se", sparse=True, n_inducing=8),
    pacgp.GreedySparseRegressor(n_basis=10, epsilon=0.5),
]


@pytest.mark.parametrize("estimator", REGRESSORS, ids=lambda e: type(e).__name__)
def test_regressor_round_trip(estimator, data):
    X, y = data
    fitted = estimator.fit(X, y)
    back = pickle.loads(pickle.dumps(fitted))
    mean, std = fitted.predict(X, return_std=True)
    mean2, std2 = back.predict(X, return_std=True)
    np.testing.assert_array_equal(mean, mean2)
    np.testing.assert_allclose(std, std2, rtol=1e-12)
    assert back.certificate_ == fitted.certificate_
    assert back.get_params() == fitted.get_params()
    assert json.loads(fitted.model_.to_json())["format"] == "pacgp-model/2"


@pytest.mark.parametrize(
    "estimator",
    [pacgp.GPClassifier(), pacgp.GPClassifier(method="sogp", active_set=10), pacgp.SVMClassifier()],
    ids=lambda e: type(e).__name__,
)
def test_classifier_round_trip(estimator, data):
    X, y = data
    labels = np.where(y > 0.3, "high", "low")
    fitted = estimator.fit(X, labels)
    back = pickle.loads(pickle.dumps(fitted))
    np.testing.assert_array_equal(back.predict_proba(X), fitted.predict_proba(X))
    np.testing.assert_array_equal(back.predict(X), fitted.predict(X))
    assert list(back.classes_) == ["high", "low"]
    assert back.certificate_ == fitted.certificate_


def test_the_raw_model_pickles_and_is_not_refitted(data):
    X, y = data
    model = pacgp.GPRegressor(epsilon=0.5).fit(X, y).model_
    back = pickle.loads(pickle.dumps(model))
    assert back.to_json() == model.to_json()
    np.testing.assert_array_equal(back.predict_regression(X)[0], model.predict_regression(X)[0])
