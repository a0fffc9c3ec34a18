"""``pacgp.report``: the self-contained HTML page of ``pacgp report`` for a fitted estimator,
rendered by the same code (``Model.report_html``): the certificates on the training sample,
leave-one-out, hyperparameters, data coding and, given a test sample, its metrics and figures."""

import os

from sklearn.utils.validation import check_is_fitted


def report(estimator, X, y, path, X_test=None, y_test=None, title=None, loo="auto"):
    """Write the HTML report of a fitted pacgp ``estimator`` to ``path`` and return the path.

    ``X, y`` is the sample the estimator was fitted on (the certificate is computed on it, as
    ``certificate_``); ``X_test, y_test`` (both or neither) add test metrics and figures.
    """
    check_is_fitted(estimator, "model_")
    if (X_test is None) != (y_test is None):
        raise ValueError("a test sample needs both X_test and y_test")
    x, target = estimator._model_sample(X, y)
    test = {}
    if X_test is not None:
        test["x_test"], test["y_test"] = estimator._model_sample(X_test, y_test)
    page = estimator.model_.report_html(
        x, target, title=title or type(estimator).__name__, loo=loo,
        n_threads=getattr(estimator, "_threads", None), **test,
    )
    with open(path, "w", encoding="utf-8") as f:
        f.write(page)
    return os.fspath(path)
