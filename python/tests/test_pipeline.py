"""The issue's "done when": PACGPRegressor on boston inside a Pipeline with a StandardScaler,
its certificate, pickling with identical predictions, and GridSearchCV over ε with n_jobs=2
(worker processes, which receive the estimators by pickle, and threads)."""

import pickle

import joblib
import numpy as np
from sklearn.model_selection import GridSearchCV, KFold
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import StandardScaler

import pacgp


def pipeline(epsilon):
    return Pipeline(
        [("scale", StandardScaler()), ("gp", pacgp.PACGPRegressor(epsilon=epsilon, kernel="se"))]
    )


def test_pipeline_certificate_and_pickle(boston):
    X, y = boston
    model = pipeline(3.0).fit(X, y)
    certificate = model[-1].certificate_
    assert 0.0 < certificate["bound"] < 1.0
    assert certificate["epsilon"] == 3.0
    assert certificate["n"] == len(y)
    # The bound is kl⁻¹ of the training Gibbs risk: it lies above it.
    assert certificate["bound"] > certificate["empirical_risk"]
    assert model[-1].loo_["error"] is not None
    back = pickle.loads(pickle.dumps(model))
    np.testing.assert_array_equal(back.predict(X), model.predict(X))
    assert model.score(X, y) > 0.7


def test_grid_search_over_epsilon(boston):
    X, y = boston
    grid = {"gp__epsilon": [2.0, 4.0]}
    cv = KFold(3, shuffle=True, random_state=0)
    searches = []
    for backend in ("loky", "threading"):
        with joblib.parallel_backend(backend):
            search = GridSearchCV(pipeline(3.0), grid, cv=cv, n_jobs=2).fit(X, y)
        searches.append(search)
    processes, threads = searches
    # Same folds, same deterministic fits (one thread each is not needed: the fits are
    # compared to the scores' precision).
    np.testing.assert_allclose(
        processes.cv_results_["mean_test_score"], threads.cv_results_["mean_test_score"],
        rtol=1e-6,
    )
    assert processes.best_params_["gp__epsilon"] in grid["gp__epsilon"]
    assert processes.best_estimator_[-1].certificate_["epsilon"] == processes.best_params_[
        "gp__epsilon"
    ]
