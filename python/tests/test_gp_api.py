"""scikit-learn's GP API over pacgp's models: the joint predictive covariance and draws from it
(against the marginal variances and sample moments), the log marginal likelihood (against
scikit-learn's GaussianProcessRegressor at the same hyperparameters and central differences),
kernel objects (translated expressions, and fits equal to the string's), a kernel on a
classifier implying ML-II, prediction intervals, and the SVM's decision function and dual
(signs against predict, support vectors against the training rows)."""

import numpy as np
import pytest
from sklearn.gaussian_process import GaussianProcessRegressor
from sklearn.gaussian_process.kernels import (
    RBF,
    ConstantKernel,
    DotProduct,
    ExpSineSquared,
    Matern,
    RationalQuadratic,
    WhiteKernel,
)

import pacgp
from pacgp._kernels import to_spec


def _regression(n=40, d=2, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-2, 2, size=(n, d))
    y = np.sin(X[:, 0]) + 0.3 * X[:, 1] + 0.1 * rng.standard_normal(n)
    return X, y


def _classification(n=60, seed=1):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 2))
    y = np.where(X[:, 0] + 0.5 * X[:, 1] + 0.4 * rng.standard_normal(n) > 0.3, "b", "a")
    return X, y


# ---- predict(return_cov), sample_y ----

def test_return_cov_diagonal_is_return_std_squared():
    X, y = _regression()
    m = pacgp.GPRegressor().fit(X, y)
    Xt = _regression(7, seed=3)[0]
    mean, std = m.predict(Xt, return_std=True)
    mean_c, cov = m.predict(Xt, return_cov=True)
    np.testing.assert_allclose(mean_c, mean, rtol=1e-12)
    np.testing.assert_allclose(np.diag(cov), std**2, rtol=1e-9)
    np.testing.assert_allclose(cov, cov.T, atol=1e-12)
    assert np.linalg.eigvalsh(cov).min() > 0
    with pytest.raises(RuntimeError, match="At most one of return_std or return_cov"):
        m.predict(Xt, return_std=True, return_cov=True)


def test_sample_y_is_seeded_and_has_the_predictive_moments():
    X, y = _regression()
    m = pacgp.SparseGPRegressor(n_inducing=10).fit(X, y)
    Xt = _regression(3, seed=4)[0]
    mean, cov = m.predict(Xt, return_cov=True)
    draws = m.sample_y(Xt, n_samples=20000, random_state=7)
    assert draws.shape == (3, 20000)
    np.testing.assert_array_equal(draws, m.sample_y(Xt, 20000, random_state=7))
    assert not np.array_equal(draws, m.sample_y(Xt, 20000, random_state=8))
    # Sample mean within 5 standard errors; sample covariance within 5% of the largest entry.
    se = np.sqrt(np.diag(cov) / draws.shape[1])
    assert np.all(np.abs(draws.mean(axis=1) - mean) < 5 * se)
    np.testing.assert_allclose(np.cov(draws), cov, atol=0.05 * np.abs(cov).max())
    one = m.sample_y(Xt, 1, random_state=np.random.RandomState(0))
    assert one.shape == (3, 1)
    with pytest.raises(ValueError, match="n_samples"):
        m.sample_y(Xt, 0)


# ---- log marginal likelihood ----

def test_log_marginal_likelihood_matches_scikit_learn_at_the_same_hyperparameters():
    X, y = _regression(30, d=2)
    # pacgp standardises inputs (population sd); give it standardised inputs so both libraries
    # see the same X. Targets: both standardise (scikit-learn's normalize_y=True).
    X = (X - X.mean(axis=0)) / X.std(axis=0)
    m = pacgp.GPRegressor(kernel="se").fit(X, y)
    names = m.evidence_theta_names_
    assert names[-1] == "ln_noise_variance"
    theta = dict(zip(names, m.evidence_theta_))
    ln_l = next(v for k, v in theta.items() if "length" in k)
    ln_s2 = next(v for k, v in theta.items() if "signal" in k or "variance" in k and "noise" not in k)
    kernel = (ConstantKernel(np.exp(ln_s2)) * RBF(np.exp(ln_l))
              + WhiteKernel(np.exp(theta["ln_noise_variance"])))
    ref = GaussianProcessRegressor(kernel, alpha=0.0, optimizer=None, normalize_y=True).fit(X, y)
    np.testing.assert_allclose(m.log_marginal_likelihood_value_,
                               ref.log_marginal_likelihood_value_, rtol=1e-8)
    assert m.log_marginal_likelihood() == m.log_marginal_likelihood_value_


def test_log_marginal_likelihood_gradient_against_central_differences():
    X, y = _regression(25)
    m = pacgp.GPRegressor().fit(X, y)
    theta = m.evidence_theta_ + 0.1
    value, grad = m.log_marginal_likelihood(theta, eval_gradient=True)
    assert value == m.log_marginal_likelihood(theta)
    h = 1e-5
    for i in range(len(theta)):
        e = np.zeros_like(theta)
        e[i] = h
        fd = (m.log_marginal_likelihood(theta + e) - m.log_marginal_likelihood(theta - e)) / (2 * h)
        np.testing.assert_allclose(grad[i], fd, rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match="evidence parameters"):
        m.log_marginal_likelihood(theta[:-1])


def test_models_without_an_evidence_have_no_value():
    X, y = _regression()
    m = pacgp.SparseGPRegressor(n_inducing=5).fit(X, y)
    assert not hasattr(m, "log_marginal_likelihood_value_")
    assert not hasattr(m, "log_marginal_likelihood")


# ---- kernel objects ----

@pytest.mark.parametrize("kernel, spec", [
    (RBF(), "se"),
    (RBF([1.0, 2.0]), "se-ard"),
    (Matern(nu=0.5), "matern12"),
    (Matern([1.0, 1.0], nu=1.5), "matern32-ard"),
    (ConstantKernel() * Matern(nu=2.5) + WhiteKernel(), "matern52"),
    (DotProduct(), "linear + const"),
    (ConstantKernel() * (RBF() + DotProduct()), "se + linear + const"),
    (RBF() * Matern(nu=1.5) + ConstantKernel(), "se*matern32 + const"),
])
def test_kernel_objects_translate_to_pacgp_expressions(kernel, spec):
    assert to_spec(kernel) == spec


@pytest.mark.parametrize("kernel, match", [
    (RationalQuadratic(), "RationalQuadratic has no pacgp counterpart"),
    (ExpSineSquared(), "ExpSineSquared"),
    (Matern(nu=2.0), "nu is 0.5, 1.5 or 2.5"),
    (RBF() * WhiteKernel(), "WhiteKernel inside a product"),
    (WhiteKernel(), "only noise"),
    (RBF() ** 2, "Exponentiation"),
])
def test_other_kernel_objects_are_refused_clearly(kernel, match):
    X, y = _regression()
    with pytest.raises(ValueError, match=match):
        pacgp.GPRegressor(kernel=kernel).fit(X, y)


def test_a_kernel_object_fits_as_its_expression():
    X, y = _regression()
    a = pacgp.GPRegressor(kernel=ConstantKernel() * RBF([1.0, 1.0]) + WhiteKernel()).fit(X, y)
    b = pacgp.GPRegressor(kernel="se-ard").fit(X, y)
    np.testing.assert_array_equal(a.predict(X), b.predict(X))
    assert a.log_marginal_likelihood_value_ == b.log_marginal_likelihood_value_


def test_a_kernel_on_a_classifier_implies_ml2():
    X, y = _classification()
    a = pacgp.GPClassifier(kernel=RBF()).fit(X, y)
    b = pacgp.GPClassifier(kernel="se", select="ml2").fit(X, y)
    np.testing.assert_array_equal(a.predict_proba(X), b.predict_proba(X))
    assert a.score(X, y) > 0.8


# ---- prediction intervals ----

@pytest.mark.parametrize("estimator", [
    pacgp.GPRegressor(intervals="jackknife+"),
    pacgp.GPRegressor(intervals="jackknife+", interval_score="gp-std"),
    pacgp.SparseGPRegressor(n_inducing=10, intervals="cv+:5"),
    pacgp.GPRegressor(intervals="split-conformal:0.5"),
])
def test_predict_interval_states_its_guarantee_and_covers(estimator):
    X, y = _regression(120, seed=5)
    Xt, yt = _regression(400, seed=6)
    m = estimator.fit(X, y)
    iv = m.predict_interval(Xt, alpha=0.1)
    assert iv.lower.shape == iv.upper.shape == (400,)
    assert np.all(iv.lower <= iv.upper)
    method = estimator.intervals.split(":")[0]
    assert iv.statement["method"].startswith(method)
    assert iv.statement["level"] == pytest.approx(0.9)
    guarantee = iv.statement["guaranteed_coverage"]
    assert 0.7 < guarantee <= 0.9
    # One split: the coverage of 400 test points is within 3 standard errors of the guarantee
    # or above it (the guarantee is marginal over training and test draws).
    covered = np.mean((iv.lower <= yt) & (yt <= iv.upper))
    assert covered >= guarantee - 3 * np.sqrt(guarantee * (1 - guarantee) / 400)


def test_exact_gp_has_jackknife_plus_intervals_by_default():
    X, y = _regression()
    default = pacgp.GPRegressor().fit(X, y).predict_interval(X[:20])
    asked = pacgp.GPRegressor(intervals="jackknife+", interval_score="gp-std").fit(X, y)
    want = asked.predict_interval(X[:20])
    np.testing.assert_array_equal(default.lower, want.lower)
    np.testing.assert_array_equal(default.upper, want.upper)


def test_predict_interval_without_intervals_says_how_to_get_them():
    X, y = _regression()
    m = pacgp.SparseGPRegressor(n_inducing=10).fit(X, y)
    with pytest.raises(ValueError, match="needs intervals.*refit with one"):
        m.predict_interval(X)


# ---- the SVM's decision function and dual ----

@pytest.mark.parametrize("params", [{}, {"bias": True, "C": 1.0}, {"bias": True, "C": 10.0}])
def test_svm_decision_and_latent_signs_are_predicts(params):
    X, y = _classification(80)
    m = pacgp.SVMClassifier(**params).fit(X, y)
    Xt = _classification(200, seed=9)[0]
    labels = m.predict(Xt)
    d = m.decision_function(Xt)
    mean, var = m.predict_latent(Xt)
    np.testing.assert_array_equal(m.classes_[(d > 0).astype(int)], labels)
    np.testing.assert_array_equal(m.classes_[(mean > 0).astype(int)], labels)
    assert np.all(var >= 0)


def test_svm_dual_attributes_are_scikit_learns():
    X, y = _classification(80)
    m = pacgp.SVMClassifier(bias=True, C=1.0).fit(X, y)
    assert m.support_.dtype == np.int32 and m.n_support_.dtype == np.int32
    np.testing.assert_array_equal(m.support_vectors_, X[m.support_])
    assert m.dual_coef_.shape == (1, len(m.support_))
    assert m.intercept_.shape == (1,)
    assert m.n_support_.sum() == len(m.support_)
    # Ordered by class, then by row; the coefficients y_i α_i carry the class's sign.
    pos = y[m.support_] == m.classes_[1]
    assert np.all(np.diff(pos.astype(int)) >= 0)
    assert np.all(np.sign(m.dual_coef_[0]) == np.where(pos, 1, -1))
    assert m.n_support_[1] == pos.sum()


# ---- predict without return_std: the mean alone ----


def test_predict_without_std_is_the_mean_of_predict_with_std():
    X, y = _regression(n=60)
    Xs = np.random.default_rng(7).uniform(-2, 2, size=(25, 2))
    for est in (pacgp.GPRegressor(), pacgp.SparseGPRegressor(n_inducing=8)):
        est.fit(X, y)
        mean, std = est.predict(Xs, return_std=True)
        assert np.array_equal(est.predict(Xs), mean)
        assert std.shape == mean.shape
