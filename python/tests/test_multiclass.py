"""Multi-class classifiers from Python: `classes_`, `predict_proba` with one column per class
summing to 1, `decision_function` whose argmax is `predict`, the certificate the CLI gives on
the same data (one-vs-rest and softmax), pickling, and the binary path unchanged."""

import json
import os
import pickle
import subprocess

import numpy as np
import pytest

import pacgp

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")


def iris():
    data = np.genfromtxt(os.path.join(ROOT, "data", "iris", "iris.csv"), delimiter=",",
                         skip_header=1, dtype=str)
    return data[:, :4].astype(float), data[:, 4]


def wine():
    data = np.loadtxt(os.path.join(ROOT, "data", "wine", "wine.csv"), delimiter=",", skiprows=1)
    return data[:, :-1], data[:, -1].astype(int)


@pytest.mark.parametrize("make", [lambda: pacgp.GPClassifier(), lambda: pacgp.SVMClassifier(),
                                  lambda: pacgp.GPClassifier(method="ep")])
def test_three_classes_give_three_columns(make):
    X, y = iris()
    est = make().fit(X, y)
    assert list(est.classes_) == ["setosa", "versicolor", "virginica"]
    p = est.predict_proba(X)
    assert p.shape == (150, 3)
    np.testing.assert_allclose(p.sum(axis=1), 1.0, atol=1e-12)
    pred = est.predict(X)
    assert set(pred) <= set(est.classes_)
    np.testing.assert_array_equal(pred, est.classes_[p.argmax(axis=1)])
    d = est.decision_function(X)
    assert d.shape == (150, 3)
    np.testing.assert_array_equal(d.argmax(axis=1), p.argmax(axis=1))
    mean, var = est.predict_latent(X)
    assert mean.shape == (150, 3) and (var >= 0).all()
    c = est.certificate_
    assert c["bound"] > c["empirical_risk"] and "argmax_k" in c["predictor"]
    assert est.loo_["error"] is not None
    assert est.model_.multiclass == "one-vs-rest"
    e = est.evaluate(X, y)
    assert e["n"] == 150 and abs(e["gibbs_risk"] - c["empirical_risk"]) < 1e-12
    # predict's class is the Gibbs classifier's majority vote, certified beside it: its
    # training errors are predict's, and its bound is at most twice the Gibbs bound at ln 3 more.
    d = c["deployed"]
    assert d["predictor"] == "predicted_class" and d["bound"] == "derandomised"
    assert d["errors"] == int((pred != np.asarray(y)).sum())
    parts = d["derandomised"]
    assert parts["form"] in ("first_order", "disagreement", "tandem") and parts["grid"] == 3
    assert d["error_rate"] <= d["value"] <= 1.0
    if parts["form"] == "first_order":
        assert d["value"] == min(1.0, 2.0 * parts["risk_bound"])


def test_softmax_certificate_is_sampled_with_its_sites_leave_one_out():
    X, y = wine()
    est = pacgp.GPClassifier(multiclass="softmax", random_state=2).fit(X, y)
    assert list(est.classes_) == [0, 1, 2]
    assert est.model_.multiclass == "softmax"
    c = est.certificate_
    # Seeded by the sample (the model file records it), not by random_state.
    seed = json.loads(est.model_.to_json())["task"]["sampling_seed"]
    assert c["sampled_risk"]["seed"] == seed != 2 and c["sampled_risk"]["draws_per_point"] == 1000
    assert c["majority_rate"] == 1 - np.bincount(y).max() / len(y)
    assert 0.0 <= est.loo_["error"] < 0.1
    assert c.get("deployed") is None  # its predictive is not its Gibbs classifier's vote
    p = est.predict_proba(X)
    np.testing.assert_allclose(p.sum(axis=1), 1.0, atol=1e-12)
    assert (est.predict(X) == y).mean() > 0.9
    with pytest.raises(ValueError, match="multiclass"):
        pacgp.GPClassifier(method="ep", multiclass="softmax").fit(X, y)
    # An exact one is refused in Python's words, not the command line's.
    with pytest.raises(ValueError, match="mode again") as e:
        est.model_.certify(np.asarray(X, dtype=float), np.asarray(y, dtype=float), loo="exact")
    assert "--loo" not in str(e.value)
    # A split prior's model has none: asked for one, the refusal names Python's way out (a
    # binary model certifies ±1 labels).
    Xb, yb = np.asarray(X, dtype=float)[y != 2], np.asarray(y, dtype=float)[y != 2]
    split = pacgp.GPClassifier(prior="split:0.5").fit(Xb, yb)
    with pytest.raises(ValueError, match="no leave-one-out estimate") as e:
        split.model_.certify(Xb, 2.0 * yb - 1.0, loo="approx")
    assert "loo='none'" in str(e.value) and "--loo" not in str(e.value)


def test_softmax_jackknife_sets_hold_held_out_labels():
    """``intervals="jackknife+"`` on the softmax model (its rows' sites removed): one row of
    class memberships per input, holding at least 75% of 60 held-out iris labels at α = 0.1
    (guarantee 1 − 2α = 0.8 on average, approximate here), stating jackknife+."""
    X, y = iris()
    order = np.random.default_rng(3).permutation(len(y))
    fit, test = order[:60], order[60:120]
    est = pacgp.GPClassifier(multiclass="softmax", intervals="jackknife+").fit(X[fit], y[fit])
    sets, statement = est.predict_set(X[test], 0.1)
    assert sets.shape == (60, 3)
    covered = sets[np.arange(60), np.searchsorted(est.classes_, y[test])]
    assert np.mean(covered) >= 0.75
    assert "jackknife+" in json.dumps(statement)


def test_two_classes_stay_binary_unless_asked():
    X, y = iris()
    keep = y != "setosa"
    est = pacgp.GPClassifier().fit(X[keep], y[keep])
    assert est.model_.classes is None
    assert not hasattr(est, "decision_function")
    assert est.predict_proba(X[keep]).shape == (100, 2)
    sm = pacgp.GPClassifier(multiclass="softmax").fit(X[keep], y[keep])
    assert sm.model_.classes == ["versicolor", "virginica"]
    d = sm.decision_function(X[keep])
    assert d.shape == (100,)
    np.testing.assert_array_equal(sm.predict(X[keep]), sm.classes_[(d > 0).astype(int)])
    with pytest.raises(ValueError, match="at least 2 classes"):
        pacgp.GPClassifier().fit(X[:10], y[:10])


def test_pickle_keeps_the_classes_and_the_predictions():
    X, y = wine()
    est = pacgp.SVMClassifier().fit(X, y)
    back = pickle.loads(pickle.dumps(est))
    np.testing.assert_array_equal(back.predict_proba(X), est.predict_proba(X))
    np.testing.assert_array_equal(back.classes_, est.classes_)


def test_the_cli_certifies_the_same_one_vs_rest_model(tmp_path):
    binary = os.environ.get("PACGP_CLI")
    if not binary:
        pytest.skip("PACGP_CLI names the pacgp binary (scripts/test.sh sets it)")
    X, y = iris()
    data = os.path.join(ROOT, "data", "iris", "iris.csv")
    model = tmp_path / "m.json"
    run = lambda *a: json.loads(subprocess.run([binary, "--threads", "1", *a, "--json"],
                                               check=True, capture_output=True, text=True).stdout)
    run("fit", "--data", data, "--method", "laplace", "--out", str(model))
    theirs = run("certify", "--model", str(model), "--data", data)
    env_model = pacgp.Model.from_json(model.read_text())
    ours = pacgp.GPClassifier().fit(X, y).certificate_
    for key in ("bound", "kl", "penalty", "empirical_risk", "loo_error"):
        np.testing.assert_allclose(ours[key], theirs[key], rtol=1e-8, atol=1e-10, err_msg=key)
    assert env_model.classes == ["setosa", "versicolor", "virginica"]
