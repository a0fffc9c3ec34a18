"""``pacgp.report``: the HTML page of ``pacgp report`` written from Python, with the same
numbers as the estimator's ``certificate_`` and ``evaluate`` (read back from the elements'
``data-value``), self-contained (no address, script or external resource), and the refusals."""

import json
import re

import numpy as np
import pytest

import pacgp


def _value(page, element_id):
    """The exact number an element of the page carries in its ``data-value``."""
    m = re.search(r'id="%s"[^>]*data-value="([^"]+)"' % re.escape(element_id), page)
    if m is None:
        m = re.search(r'data-value="([^"]+)"[^>]*id="%s"' % re.escape(element_id), page)
    assert m is not None, f"no {element_id} in the page"
    return float(m.group(1))


def _self_contained(page):
    for needle in ("http://", "https://", "<script", "src=", "url("):
        assert needle not in page, needle
    assert page.startswith("<!DOCTYPE html>") and page.rstrip().endswith("</html>")
    ids = re.findall(r' id="([^"]+)"', page)
    assert len(ids) == len(set(ids)), sorted(i for i in set(ids) if ids.count(i) > 1)


def _split(X, y, n_train):
    return (X[:n_train], y[:n_train]), (X[n_train:], y[n_train:])


def test_classifier_report_shows_its_certificate_and_test_error(tmp_path):
    rng = np.random.default_rng(3)
    X = rng.standard_normal((90, 2))
    y = np.where(X[:, 0] - 0.6 * X[:, 1] + 0.5 * rng.standard_normal(90) > 0, "yes", "no")
    (Xa, ya), (Xt, yt) = _split(X, y, 60)
    est = pacgp.GPClassifier(method="laplace").fit(Xa, ya)
    path = pacgp.report(est, Xa, ya, tmp_path / "clf.html", X_test=Xt, y_test=yt)
    page = open(path, encoding="utf-8").read()
    _self_contained(page)
    assert _value(page, "certificate-value") == est.certificate_["bound"]
    assert _value(page, "deployed-value") == est.certificate_["deployed"]["value"]
    assert _value(page, "test-error-rate") == pytest.approx(
        est.evaluate(Xt, yt)["error_rate"], abs=0.0)


def test_regressor_report_shows_its_certificate(tmp_path):
    rng = np.random.default_rng(4)
    X = rng.uniform(-2, 2, size=(50, 2))
    y = np.sin(X[:, 0]) + 0.3 * X[:, 1] + 0.1 * rng.standard_normal(50)
    est = pacgp.GPRegressor(epsilon=0.3).fit(X, y)
    page = open(pacgp.report(est, X, y, tmp_path / "reg.html"), encoding="utf-8").read()
    _self_contained(page)
    assert _value(page, "certificate-value") == est.certificate_["bound"]


def test_multi_output_report_shows_every_output_and_the_joint_certificate(tmp_path):
    rng = np.random.default_rng(6)
    X = rng.uniform(-2, 2, size=(60, 2))
    Y = np.c_[np.sin(X[:, 0]), X[:, 1] - 0.5 * X[:, 0]] + 0.1 * rng.standard_normal((60, 2))
    (Xa, Ya), (Xt, Yt) = _split(X, Y, 45)
    est = pacgp.GPRegressor(epsilon=0.3).fit(Xa, Ya)
    path = pacgp.report(est, Xa, Ya, tmp_path / "both.html", X_test=Xt, y_test=Yt)
    page = open(path, encoding="utf-8").read()
    _self_contained(page)
    c = est.certificate_
    assert _value(page, "joint-mean-value") == c["joint"]["mean_bound"][0]
    for j in range(2):
        own = c["outputs"][j]["certificates"][0]["bound"]
        assert _value(page, f"output-{j + 1}-certificate-value") == own
        joint = c["joint"]["outputs"][j]["certificates"][0]["bound"]
        assert _value(page, f"joint-{j + 1}-value") == joint
        rmse = est.evaluate(Xt, Yt)[j]["rmse"]
        assert _value(page, f"output-{j + 1}-test-rmse") == pytest.approx(rmse, abs=0.0)
    with pytest.raises(ValueError, match="2 outputs"):
        pacgp.report(est, Xa, Ya[:, :1], tmp_path / "bad.html")


def test_report_refuses_half_a_test_sample_and_another_training_sample(tmp_path):
    rng = np.random.default_rng(5)
    X = rng.uniform(-2, 2, size=(40, 1))
    y = np.sin(X[:, 0])
    est = pacgp.GPRegressor(epsilon=0.3).fit(X, y)
    with pytest.raises(ValueError, match="both"):
        pacgp.report(est, X, y, tmp_path / "a.html", X_test=X)
    with pytest.raises(ValueError, match="training sample"):
        pacgp.report(est, X[:30], y[:30], tmp_path / "b.html")
    assert not (tmp_path / "b.html").exists()
