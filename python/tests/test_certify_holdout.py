"""``certify_holdout=F`` (issue 42; ``pacgp fit --certify-holdout F``): a seeded fraction of
the rows is kept out of the fit and ``certificate_["deployed"]`` bounds the deployed
predictor's risk on them by the test-set bound (binomial tail inversion) at δ/2, beside the
Gibbs certificate on the fit rows at δ/2. The bound is checked here against the binomial CDF
summed with exact binomial coefficients; another sample and an edited split are refused."""

import json
import math
import pickle

import numpy as np
import pytest

import pacgp


def _binomial_cdf(k, n, p):
    """P(Binomial(n, p) ≤ k) with exact coefficients (math.comb)."""
    return sum(math.comb(n, i) * p**i * (1 - p) ** (n - i) for i in range(k + 1))


def _check_test_set_bound(d):
    """``value`` is the largest p at which ``errors`` or fewer of ``n`` have probability δ."""
    k, n, delta, value = d["errors"], d["n"], d["delta"], d["value"]
    assert d["bound"] == "binomial_tail"
    assert d["error_rate"] == k / n and value >= k / n
    if k == n:
        assert value == 1.0
        return
    assert abs(_binomial_cdf(k, n, value) - delta) <= 1e-9 * delta
    assert _binomial_cdf(k, n, value * (1 + 1e-6)) < delta


def test_classifier_certifies_its_label_on_the_held_out_rows(breast_cancer):
    X, labels = breast_cancer
    X, y = X[:200], labels[:200].astype(int)
    clf = pacgp.GPClassifier(certify_holdout=0.25, random_state=2).fit(X, y)
    cert = clf.certificate_
    d = cert["deployed"]
    assert d["predictor"] == "posterior_mean_sign"
    assert d["n"] == 50 and cert["n"] == 150
    # The union bound's price: δ/2 each.
    assert d["delta"] == 0.005 and cert["delta"] == 0.005 and d["joint_delta"] == 0.01
    _check_test_set_bound(d)
    # The model file keeps the split: certify on its JSON reload (rows reversed) agrees.
    model = pacgp.Model.from_json(clf.model_.to_json())
    signs = np.where(y == clf.classes_[1], 1.0, -1.0)
    again = json.loads(model.certify(X[::-1], signs[::-1], loo="none"))[0]
    assert again["deployed"] == d and again["bound"] == cert["bound"]
    restored = pickle.loads(pickle.dumps(clf))
    assert restored.certificate_ == cert
    # Another sample: the rows less one, or the fit rows alone, are refused.
    with pytest.raises(ValueError, match="training"):
        model.certify(X[1:], signs[1:], loo="none")
    # An edited split is refused.
    edited = json.loads(clf.model_.to_json())
    edited["holdout"]["seed"] = 7
    with pytest.raises(ValueError, match="holdout record"):
        pacgp.Model.from_json(json.dumps(edited)).certify(X, signs, loo="none")


def test_regressor_certifies_its_mean_within_epsilon():
    rng = np.random.default_rng(3)
    X = rng.uniform(-3, 3, size=(80, 1))
    y = np.sin(X[:, 0]) + 0.2 * rng.standard_normal(80)
    reg = pacgp.GPRegressor(kernel="se", epsilon=0.3, certify_holdout=0.25).fit(X, y)
    d = reg.certificate_["deployed"]
    assert d["predictor"] == "posterior_mean" and d["epsilon"] == 0.3 and d["n"] == 20
    assert reg.certificate_["n"] == 60
    _check_test_set_bound(d)


def test_svm_certifies_its_sign_and_keeps_its_dual(breast_cancer):
    X, labels = breast_cancer
    X, y = X[:120], labels[:120].astype(int)
    svm = pacgp.SVMClassifier(C=1.0, lengthscale=3.0, certify_holdout=0.5).fit(X, y)
    d = svm.certificate_["deployed"]
    assert d["predictor"] == "svm_sign" and d["n"] == 60
    _check_test_set_bound(d)
    # The support vectors are rows of X (fit rows only).
    np.testing.assert_array_equal(svm.support_vectors_, X[svm.support_])


def test_a_fraction_out_of_range_names_the_keyword(breast_cancer):
    X, labels = breast_cancer
    for f in (0.0, 1.5):
        with pytest.raises(ValueError, match="certify_holdout"):
            pacgp.GPClassifier(certify_holdout=f).fit(X[:60], labels[:60].astype(int))


def test_without_a_holdout_the_deployed_certificate_is_derandomised(breast_cancer):
    X, labels = breast_cancer
    X, y = X[:100], labels[:100].astype(int)
    cert = pacgp.GPClassifier().fit(X, y).certificate_
    assert cert["delta"] == 0.01
    d = cert["deployed"]
    assert d["bound"] == "derandomised" and d["predictor"] == "posterior_mean_sign"
    assert d["value"] >= d["error_rate"] and d["derandomised"]["form"] in ("disagreement", "divided")
