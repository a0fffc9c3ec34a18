"""SparseGPClassifier (the sparse variational GP classifier, `pacgp fit --method svgp` /
`pac-svgp`): both objectives classify held-out data, certify the latent Gibbs classifier
(both with their sites' leave-one-out estimate), keep the certificate through a model file,
take more than two classes one-vs-rest, give jackknife+ prediction sets, and refuse bad
settings with the estimator's parameter names."""

import json

import numpy as np
import pytest

import pacgp


def moons(n, seed):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-2, 2, size=(n, 2))
    y = np.where(np.sin(1.5 * X[:, 0]) - X[:, 1] > 0, "up", "down")
    flip = rng.uniform(size=n) < 0.1
    y[flip] = np.where(y[flip] == "up", "down", "up")
    return X, y


@pytest.mark.parametrize("objective", ["elbo", "bound"])
def test_both_objectives_classify_and_certify(objective):
    X, y = moons(300, 0)
    Xt, yt = moons(500, 1)
    est = pacgp.SparseGPClassifier(objective=objective, n_inducing=15).fit(X, y)
    assert list(est.classes_) == ["down", "up"]
    assert np.mean(est.predict(Xt) == yt) > 0.8
    p = est.predict_proba(Xt)
    assert p.shape == (500, 2) and np.allclose(p.sum(axis=1), 1.0)
    cert = est.certificate_
    assert cert["empirical_risk"] < cert["bound"] < 1.0
    assert cert["loo_estimator"] == "inducing_sites"
    assert 0.0 < cert["loo_error"] < 0.3
    again = pacgp.Model.from_json(est.model_.to_json())
    assert again.to_json() == est.model_.to_json()
    assert est.model_.method == ("svgp" if objective == "elbo" else "pac-svgp")


def test_more_classes_are_one_vs_rest_and_certified_together():
    rng = np.random.default_rng(3)
    X = np.vstack([rng.normal(c, 0.6, size=(60, 2)) for c in ((0, 0), (3, 0), (0, 3))])
    y = np.repeat(["a", "b", "c"], 60)
    est = pacgp.SparseGPClassifier(n_inducing=10).fit(X, y)
    assert est.predict_proba(X).shape == (180, 3)
    assert np.mean(est.predict(X) == y) > 0.9
    assert est.certificate_["bound"] < 1.0


def test_jackknife_sets_cover_held_out_labels():
    """``intervals="jackknife+"`` (either objective): ``predict_set`` gives one row of class
    memberships per input, holding at least 75% of 500 held-out labels at α = 0.1 (its
    guarantee is 1 − 2α = 0.8 on average over samples, approximate here) and stating
    jackknife+; with a split prior the bound-trained classifier refuses it naming
    split-conformal."""
    X, y = moons(300, 0)
    Xt, yt = moons(500, 1)
    for objective in ["elbo", "bound"]:
        est = pacgp.SparseGPClassifier(objective=objective, n_inducing=15,
                                       intervals="jackknife+").fit(X, y)
        sets, statement = est.predict_set(Xt, 0.1)
        assert sets.shape == (500, 2)
        covered = sets[np.arange(500), np.searchsorted(est.classes_, yt)]
        assert np.mean(covered) >= 0.75, objective
        assert "jackknife+" in json.dumps(statement)
    with pytest.raises(ValueError, match="split-conformal"):
        pacgp.SparseGPClassifier(objective="bound", prior="split:0.5",
                                 intervals="jackknife+").fit(X, y)


def test_bad_settings_name_the_parameter():
    X, y = moons(40, 2)
    with pytest.raises(ValueError, match="objective"):
        pacgp.SparseGPClassifier(objective="evidence").fit(X, y)
    with pytest.raises(Exception, match="n_inducing"):
        pacgp.SparseGPClassifier(n_inducing=0).fit(X, y)


def test_the_split_prior_certifies_the_other_part():
    """``prior="split:0.5"`` (``--prior split:0.5``): θ, Z and q_A(u) by the ELBO on half the
    rows, q(u) by the bound on the other half; the certificate is on that half (150 rows), its
    KL a few nats against part A's posterior, and the ELBO-trained model takes no prior."""
    X, y = moons(300, 0)
    est = pacgp.SparseGPClassifier(objective="bound", prior="split:0.5", n_inducing=10)
    cert = est.fit(X, y).certificate_
    assert cert["n"] == 150
    assert 0.0 <= cert["kl"] < 20.0
    assert cert["empirical_risk"] < cert["bound"] < 1.0
    Xt, yt = moons(500, 1)
    assert np.mean(est.predict(Xt) == yt) > 0.8
    with pytest.raises(Exception, match="prior"):
        pacgp.SparseGPClassifier(objective="elbo", prior="split:0.5").fit(X, y)
