"""The classifier split prior (issue 15): ``GPClassifier(prior="split:…", bound="catoni",
prior_scale="auto")`` is certified on part B, ``certificate_`` is the bound the fit stored,
Catoni's at the λ fixed on part A, and it survives pickling and the model file's JSON."""

import csv
import json
import math
import pathlib
import pickle

import numpy as np
import pytest

import pacgp


def test_split_prior_certificate_is_the_fitted_bound(breast_cancer):
    X, labels = breast_cancer
    X, y = X[:200], labels[:200].astype(int)
    clf = pacgp.GPClassifier(method="pac-gpc", prior="split:0.5", bound="catoni",
                             prior_scale="auto", random_state=4).fit(X, y)
    cert = clf.certificate_
    record = clf.fit_report_
    assert cert is not None and clf.loo_["error"] is None
    np.testing.assert_allclose(cert["bound"], record["objective"], rtol=0, atol=1e-9)
    assert cert["n"] == 100  # part B of a 0.5 split of 200 rows
    term = cert["confidence_term"]
    lam = term["catoni"]["lambda"]
    # Catoni's closed form at that λ (docs/math.md §9.1), from the certificate's parts.
    c = (cert["kl"] + cert["penalty"] + math.log(1 / 0.01)) / cert["n"]
    want = (1 - math.exp(-lam * cert["empirical_risk"] - c)) / (1 - math.exp(-lam))
    np.testing.assert_allclose(cert["bound"], want, rtol=1e-12)
    # The model file keeps the split: certify on the JSON reload (rows reversed) agrees, and a
    # larger δ gives a lower bound with the same KL and risk.
    model = pacgp.Model.from_json(clf.model_.to_json())
    signs = np.where(y == clf.classes_[1], 1.0, -1.0)
    again = json.loads(model.certify(X[::-1], signs[::-1], loo="none"))[0]
    np.testing.assert_allclose(again["bound"], cert["bound"], rtol=0, atol=1e-12)
    loose = json.loads(model.certify(X, signs, delta=0.05, loo="none"))[0]
    assert loose["kl"] == cert["kl"] and loose["bound"] < cert["bound"]
    restored = pickle.loads(pickle.dumps(clf))
    assert restored.score(X, y) == clf.score(X, y) and clf.score(X, y) > 0.9


def _crabs():
    """Leptograpsus crabs: the five measurements, species B / O."""
    path = pathlib.Path(__file__).resolve().parents[2] / "data" / "crabs" / "crabs.csv"
    with open(path, newline="") as f:
        rows = list(csv.reader(f))[1:]
    X = np.array([[float(v) for v in r[:5]] for r in rows])
    return X, np.array([r[7] for r in rows])


def test_both_directions_and_prior_kernel_are_recorded_and_recertified():
    """``prior_kernel="auto"`` and ``both_directions=True`` (the CLI's ``--prior-kernel auto
    --both-directions``): the certificate is the fitted bound, its penalty the direction's
    ``ln 2``; the model file records the menu of 2, the direction and the mean scale, and
    certify on its JSON reload reproduces the bound (rows reversed); flipping the recorded
    direction makes certify refuse the sample; the options without a split prior are errors."""
    X, y = _crabs()
    clf = pacgp.GPClassifier(method="pac-gpc", prior="split:0.5", bound="catoni",
                             prior_kernel="auto", both_directions=True, random_state=5).fit(X, y)
    cert = clf.certificate_
    np.testing.assert_allclose(cert["bound"], clf.fit_report_["objective"], rtol=0, atol=1e-9)
    np.testing.assert_allclose(cert["penalty"], math.log(2), rtol=1e-12)
    doc = json.loads(clf.model_.to_json())
    record = doc["task"]["split_prior"]
    assert record["menu"] == 2 and record["mean_scale"] == 1.0
    signs = np.where(y == clf.classes_[1], 1.0, -1.0)
    model = pacgp.Model.from_json(clf.model_.to_json())
    again = json.loads(model.certify(X[::-1], signs[::-1], loo="none"))[0]
    np.testing.assert_allclose(again["bound"], cert["bound"], rtol=0, atol=1e-12)
    record["swapped"] = not record["swapped"]
    with pytest.raises(ValueError):
        pacgp.Model.from_json(json.dumps(doc)).certify(X, signs, loo="none")
    for bad in (dict(both_directions=True), dict(prior_kernel="auto"),
                dict(prior="split:0.5", prior_kernel="iso")):
        with pytest.raises(ValueError):
            pacgp.GPClassifier(method="pac-gpc", **bad).fit(X, y)
