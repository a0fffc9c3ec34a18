"""``pacgp.report``: the self-contained HTML page of ``pacgp report`` for a fitted estimator,
rendered by the same code (``Model.report_html``): the certificates on the training sample,
leave-one-out, hyperparameters, data coding and, given a test sample, its metrics and figures."""

import os

import numpy as np

from sklearn.utils.validation import check_is_fitted


def report(estimator, X, y, path, X_test=None, y_test=None, title=None, loo="auto"):
    """Write the HTML report of a fitted pacgp ``estimator`` to ``path`` and return the path.

    ``X, y`` is the sample the estimator was fitted on (the certificate is computed on it, as
    ``certificate_``); ``X_test, y_test`` (both or neither) add test metrics and figures. A
    regressor fitted on several targets (``y`` of K columns) gets one page: all outputs
    certified at once (a union bound), then each output's report.
    """
    check_is_fitted(estimator, "model_")
    if (X_test is None) != (y_test is None):
        raise ValueError("a test sample needs both X_test and y_test")
    several = hasattr(estimator, "estimators_")
    sample = _output_sample if several else type(estimator)._model_sample
    x, target = sample(estimator, X, y)
    test = {}
    if X_test is not None:
        test["x_test"], test["y_test"] = sample(estimator, X_test, y_test)
    render = estimator.model_.report_outputs_html if several else estimator.model_.report_html
    page = render(
        x, target, title=title or type(estimator).__name__, loo=loo,
        n_threads=getattr(estimator, "_threads", None), **test,
    )
    with open(path, "w", encoding="utf-8") as f:
        f.write(page)
    return os.fspath(path)


def _output_sample(estimator, X, Y):
    """A multi-output regressor's sample as its model reads it: the coded inputs and the K
    target columns."""
    x, _rows = estimator._coded(X)
    Y = np.asarray(Y, dtype=np.float64)
    if Y.ndim != 2 or Y.shape[1] != estimator.n_outputs_:
        raise ValueError(f"y has shape {Y.shape}: the model has {estimator.n_outputs_} outputs")
    return np.ascontiguousarray(x, dtype=np.float64), np.ascontiguousarray(Y)
