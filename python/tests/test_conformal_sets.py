"""A classifier's conformal prediction sets (``intervals="split-conformal[:F]"``,
``predict_set``) against an independent numpy computation: part A's model read back from the
model file, its class probabilities at the new points, the calibration scores stored beside
it, the threshold taken by sorting and the LAC / APS sets written out here; coverage on
held-out rows; the CLI's ``predict --set`` column equal to ``predict_set``; the refusals."""

import io
import json
import math
import os
import subprocess

import numpy as np
import pytest

import pacgp
from pacgp import _pacgp

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")


def iris():
    import pandas as pd

    t = pd.read_csv(os.path.join(ROOT, "data", "iris", "iris.csv"))
    return t.drop(columns="species").to_numpy(), t["species"].to_numpy()


def ripley():
    import pandas as pd

    t = pd.read_csv(os.path.join(ROOT, "data", "ripley-synth", "synth_tr.csv"))
    return t[["xs", "ys"]].to_numpy(), np.where(t["yc"].to_numpy() == 1, "yes", "no")


def part_a_probabilities(clf, X):
    """Part A's class probabilities at X, from its own model in the estimator's file, in the
    order of ``classes_`` (binary: [1 - p, p])."""
    record = json.loads(clf.model_.to_json())["sets"]
    part_a = _pacgp.Model.from_json(json.dumps(record["part_a"]))
    if len(clf.classes_) > 2:
        return part_a.predict_classes(X)[0], np.array(record["scores"])
    p, _mean, _var = part_a.predict_classification(X)
    return np.column_stack([1 - p, p]), np.array(record["scores"])


def brute_force_sets(p, scores, alpha, score):
    rank = math.ceil((1 - alpha) * (len(scores) + 1) - 1e-9)
    q = np.sort(scores)[rank - 1]
    if score == "lac":
        s = 1 - p
    else:  # APS: the probability of every label at least as likely as y
        s = np.array([[row[row >= row[y]].sum() for y in range(len(row))] for row in p])
    return s <= q


@pytest.mark.parametrize("data, score", [(iris, "lac"), (iris, "aps"), (ripley, "lac")])
def test_sets_match_numpy(data, score):
    X, y = data()
    clf = pacgp.GPClassifier(intervals="split-conformal:0.6", interval_score=score,
                             random_state=2, certify=False).fit(X, y)
    p, scores = part_a_probabilities(clf, X)
    assert len(scores) == len(y) - round(0.6 * len(y))
    for alpha in (0.05, 0.1, 0.3):
        out = clf.predict_set(X, alpha=alpha)
        assert out.sets.dtype == bool and out.sets.shape == (len(y), len(clf.classes_))
        np.testing.assert_array_equal(out.sets, brute_force_sets(p, scores, alpha, score))
        assert out.statement["guaranteed_coverage"] == pytest.approx(1 - alpha)
        assert out.statement["n_scores"] == len(scores)


def test_held_out_coverage_and_labels_in_order():
    X, y = ripley()
    rng = np.random.default_rng(0)
    perm = rng.permutation(len(y))
    train, test = perm[:150], perm[150:]
    clf = pacgp.SVMClassifier(intervals="split-conformal", certify=False).fit(X[train], y[train])
    sets = clf.predict_set(X[test], alpha=0.2).sets
    covered = sets[np.arange(len(test)), np.searchsorted(clf.classes_, y[test])]
    # 100 test rows, 75 calibration scores: coverage ≥ 0.8 in expectation; 4 sd below.
    assert covered.mean() >= 0.8 - 4 * math.sqrt(0.8 * 0.2 / 100)


def test_cli_predict_set_column_equals_predict_set(tmp_path):
    cli = os.environ.get("PACGP_CLI")
    if not cli:
        pytest.skip("PACGP_CLI not set")
    X, y = iris()
    clf = pacgp.GPClassifier(intervals="split-conformal:0.5", random_state=1,
                             certify=False).fit(X, y)
    model = tmp_path / "m.json"
    model.write_text(clf.model_.to_json())
    data = tmp_path / "x.csv"
    import pandas as pd

    names = json.loads(clf.model_.to_json())["feature_names"]
    pd.DataFrame(X, columns=names).to_csv(data, index=False)
    out = subprocess.run([cli, "predict", "--model", str(model), "--data", str(data),
                          "--set", "0.9"], capture_output=True, text=True, check=True)
    assert "holds its label with probability ≥ 0.9000" in out.stderr
    column = pd.read_csv(io.StringIO(out.stdout), keep_default_na=False)["set"]
    sets = clf.predict_set(X, alpha=0.1).sets
    want = ["|".join(clf.classes_[row]) for row in sets]
    assert list(column) == want


def test_refusals():
    X, y = ripley()
    clf = pacgp.GPClassifier(intervals="split-conformal", certify=False).fit(X, y)
    for alpha in (0.0, 1.0, 1.5, 1e-4):
        with pytest.raises(ValueError, match="level"):
            clf.predict_set(X, alpha=alpha)
    plain = pacgp.GPClassifier(certify=False).fit(X, y)
    with pytest.raises(ValueError, match="needs intervals.*refit with one"):
        plain.predict_set(X)
    with pytest.raises(ValueError, match="interval_score"):
        pacgp.GPClassifier(intervals="split-conformal", interval_score="gp-std").fit(X, y)
    with pytest.raises(ValueError, match="split-conformal"):
        pacgp.GPClassifier(intervals="cv+").fit(X, y)
    assert not hasattr(pacgp.GPRegressor(), "predict_set")


def test_jackknife_plus_sets():
    """laplace's jackknife+ sets: the statement names the method and its 1 − 2α over all N
    training rows, and the sets of held-out rows cover at least 1 − 2α less Monte Carlo slack."""
    X, y = ripley()
    rng = np.random.default_rng(0)
    perm = rng.permutation(len(y))
    train, test = perm[:150], perm[150:]
    clf = pacgp.GPClassifier(intervals="jackknife+", random_state=0,
                             certify=False).fit(X[train], y[train])
    out = clf.predict_set(X[test], alpha=0.1)
    assert out.statement["method"] == "jackknife+"
    assert out.statement["n_scores"] == 150
    assert out.statement["guaranteed_coverage"] == pytest.approx(0.8)
    assert out.sets.shape == (len(test), len(clf.classes_))
    held = [out.sets[i, list(clf.classes_).index(y[t])] for i, t in enumerate(test)]
    assert np.mean(held) >= 0.75


def assert_ripley_jackknife_covers(clf, seed):
    """Fit `clf` (with jackknife+ sets) on 150 seeded rows of Ripley's set: the statement names
    the method, its 150 scores and its 1 − 2α, and the other rows' sets at α = 0.1 cover at
    least 1 − 2α less Monte Carlo slack."""
    X, y = ripley()
    perm = np.random.default_rng(seed).permutation(len(y))
    train, test = perm[:150], perm[150:]
    clf.fit(X[train], y[train])
    out = clf.predict_set(X[test], alpha=0.1)
    assert out.statement["method"] == "jackknife+"
    assert out.statement["n_scores"] == 150
    assert out.statement["guaranteed_coverage"] == pytest.approx(0.8)
    held = [out.sets[i, list(clf.classes_).index(y[t])] for i, t in enumerate(test)]
    assert np.mean(held) >= 0.75


def test_svm_jackknife_plus_sets():
    """The binary SVM's jackknife+ sets (its linear-response leave-one-out): the statement
    names the method and its 1 − 2α, and the held-out rows' sets cover at least 1 − 2α less
    Monte Carlo slack."""
    assert_ripley_jackknife_covers(pacgp.SVMClassifier(intervals="jackknife+"), seed=1)


def test_mean_field_jackknife_plus_sets():
    """Naive mean field's jackknife+ sets (its linear-response leave-one-out at any input): the
    statement names the method and its 1 − 2α, and the held-out rows' sets cover at least
    1 − 2α less Monte Carlo slack."""
    clf = pacgp.GPClassifier(method="mean-field", intervals="jackknife+", certify=False)
    assert_ripley_jackknife_covers(clf, seed=2)


def test_one_vs_rest_svm_jackknife_plus_sets():
    """One-vs-rest SVMs on iris (3 classes): jackknife+ sets over the three classes from the
    members' linear-response leave-one-out, combined by their vote; the held-out rows' sets
    cover at least 1 − 2α less Monte Carlo slack."""
    X, y = iris()
    rng = np.random.default_rng(3)
    perm = rng.permutation(len(y))
    train, test = perm[:100], perm[100:]
    clf = pacgp.SVMClassifier(intervals="jackknife+").fit(X[train], y[train])
    out = clf.predict_set(X[test], alpha=0.1)
    assert out.statement["method"] == "jackknife+"
    assert out.statement["n_scores"] == 100
    assert out.sets.shape == (len(test), 3)
    held = [out.sets[i, list(clf.classes_).index(y[t])] for i, t in enumerate(test)]
    assert np.mean(held) >= 0.75
