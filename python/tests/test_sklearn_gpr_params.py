"""scikit-learn's ``GaussianProcessRegressor`` API on ``GPRegressor`` with a kernel object,
checked against scikit-learn itself: ``log_marginal_likelihood`` on scikit-learn's ``theta``
(value equal to scikit-learn's at the same kernel, gradient by central differences),
``n_restarts_optimizer`` as the library's restarts, ``alpha``, ``optimizer=None`` and
``normalize_y=False`` with scikit-learn's meaning (predictions and evidence equal to
scikit-learn's), the parameters pacgp refuses with their reason, the classifier's ``latent_mean_and_variance``, and an unfitted
regressor's prior predictive (equal to scikit-learn's unfitted regressor's)."""

import numpy as np
import pytest
from sklearn.gaussian_process import GaussianProcessRegressor
from sklearn.gaussian_process import kernels as K

import pacgp


def _data(n=30, d=1, seed=0):
    """Inputs with different spreads per column and a smooth noisy target."""
    rng = np.random.RandomState(seed)
    X = rng.randn(n, d) * np.linspace(1.0, 5.0, d) + 2.0
    y = np.sin(X[:, 0]) + 0.05 * X.sum(axis=1) + 0.1 * rng.randn(n)
    return X, y


def _peer_lml(est, kernel, X, y):
    """scikit-learn's log marginal likelihood of ``kernel`` on the same data, targets
    normalised as pacgp's are: the noise is the kernel's WhiteKernel, else ``alpha`` at
    scikit-learn's default (pacgp's defaults for a kernel object)."""
    white = any(isinstance(k, K.WhiteKernel) for k in _leaves(kernel))
    peer = GaussianProcessRegressor(kernel, alpha=0.0 if white else 1e-10, optimizer=None,
                                    normalize_y=True)
    return peer.fit(X, y).log_marginal_likelihood_value_


def _leaves(kernel):
    if isinstance(kernel, (K.Sum, K.Product)):
        return _leaves(kernel.k1) + _leaves(kernel.k2)
    return [kernel]


KERNELS = {
    "RBF": (K.RBF(1.0), 1),
    "C*RBF+C": (K.ConstantKernel() * K.RBF(1.0) + K.ConstantKernel(1e-3), 1),
    "C*Matern52+White": (K.ConstantKernel() * K.Matern(nu=2.5) + K.WhiteKernel(0.1), 1),
    "RBF-ARD": (K.RBF([1.0, 1.0]), 2),
    "RBF*Matern32": (K.RBF(1.0) * K.Matern(nu=1.5), 1),
}


@pytest.mark.parametrize("name", list(KERNELS))
def test_lml_on_kernel_theta_equals_scikit_learn_at_the_same_kernel(name):
    given, d = KERNELS[name]
    X, y = _data(d=d)
    est = pacgp.GPRegressor(kernel=given).fit(X, y)
    theta = est.kernel_.theta
    # The sample is rebuilt from the posterior's factor (y = Cα): rounding of 1e-16·cond(C).
    assert est.log_marginal_likelihood(theta) == pytest.approx(est.log_marginal_likelihood(),
                                                               rel=1e-12, abs=1e-10)
    moved = theta + np.linspace(-0.4, 0.3, len(theta))
    ours = est.log_marginal_likelihood(moved)
    peer = _peer_lml(est, est.kernel_.clone_with_theta(moved), X, y)
    np.testing.assert_allclose(ours, peer, rtol=1e-8)


@pytest.mark.parametrize("name", list(KERNELS))
def test_lml_gradient_on_theta_against_central_differences(name):
    given, d = KERNELS[name]
    X, y = _data(d=d)
    est = pacgp.GPRegressor(kernel=given).fit(X, y)
    theta = est.kernel_.theta + 0.2
    value, grad = est.log_marginal_likelihood(theta, eval_gradient=True)
    assert value == est.log_marginal_likelihood(theta)
    h = 1e-5
    for i in range(len(theta)):
        e = np.zeros_like(theta)
        e[i] = h
        fd = (est.log_marginal_likelihood(theta + e)
              - est.log_marginal_likelihood(theta - e)) / (2 * h)
        np.testing.assert_allclose(grad[i], fd, rtol=1e-5, atol=1e-6)


def test_lml_on_the_given_kernels_theta_is_that_kernel():
    """A theta as long as the given kernel's (RBF and the noise: a length scale and a noise
    level) is that kernel, unit variance and all."""
    X, y = _data()
    est = pacgp.GPRegressor(kernel=K.RBF(1.0) + K.WhiteKernel(0.1)).fit(X, y)
    assert len(est.kernel_.theta) == 3 and len(est.kernel.theta) == 2
    theta = np.log([0.7, 0.05])
    peer = _peer_lml(est, K.ConstantKernel(1.0, "fixed") * K.RBF(0.7) + K.WhiteKernel(0.05),
                     X, y)
    np.testing.assert_allclose(est.log_marginal_likelihood(theta), peer, rtol=1e-8)


def test_lml_errors_and_clone_kernel():
    X, y = _data()
    est = pacgp.GPRegressor(kernel=K.ConstantKernel() * K.RBF()).fit(X, y)
    with pytest.raises(ValueError, match="theta!=None"):
        est.log_marginal_likelihood(eval_gradient=True)
    with pytest.raises(ValueError, match="theta has 3 values"):
        est.log_marginal_likelihood(np.zeros(3))
    before = est.predict(X)
    ones = np.ones_like(est.kernel_.theta)
    est.log_marginal_likelihood(ones)
    assert not np.allclose(est.kernel_.theta, ones)
    est.log_marginal_likelihood(ones, clone_kernel=False)
    np.testing.assert_allclose(est.kernel_.theta, ones)
    np.testing.assert_array_equal(est.predict(X), before)


def test_an_isotropic_kernel_refuses_per_input_length_scales():
    """One length scale on standardised inputs is one per input in their units; a theta that
    breaks that proportion has no pacgp counterpart."""
    X, y = _data(d=2)
    est = pacgp.GPRegressor(kernel=K.ConstantKernel() * K.RBF(1.0)).fit(X, y)
    theta = est.kernel_.theta
    assert len(theta) == 3  # the length scale came back as one per input
    assert np.isfinite(est.log_marginal_likelihood(theta))
    with pytest.raises(ValueError, match="isotropic"):
        est.log_marginal_likelihood(theta + np.array([0.0, 0.5, 0.0]))


def test_dot_product_theta_is_refused():
    X, y = _data()
    est = pacgp.GPRegressor(kernel=K.RBF() + K.DotProduct()).fit(X, y)
    with pytest.raises(ValueError, match="DotProduct"):
        est.log_marginal_likelihood(est.kernel_.theta)


def test_n_restarts_optimizer_is_the_librarys_restarts():
    X, y = _data(n=25, d=2)
    kernel = K.ConstantKernel() * K.RBF([1.0, 1.0]) + K.WhiteKernel()
    a = pacgp.GPRegressor(kernel=kernel, n_restarts_optimizer=2, random_state=3).fit(X, y)
    b = pacgp.GPRegressor(kernel=kernel, restarts=2, random_state=3).fit(X, y)
    np.testing.assert_array_equal(a.kernel_.theta, b.kernel_.theta)
    np.testing.assert_array_equal(a.predict(X), b.predict(X))
    assert a.fit_report_["optimiser"] == b.fit_report_["optimiser"]
    with pytest.raises(ValueError, match="same setting"):
        pacgp.GPRegressor(kernel=kernel, restarts=1, n_restarts_optimizer=2).fit(X, y)


@pytest.mark.parametrize("kernel, params, match", [
    (K.RBF(), {"optimizer": lambda f, t, b: (t, f(t))}, "custom optimizer"),
    ("se-ard", {"optimizer": None}, "has none: give kernel as a scikit-learn kernel"),
    (K.RBF(), {"n_targets": 2}, "The number of targets seen in `y`"),
    (K.RBF(), {"alpha": np.ones(7)}, "alpha must be a scalar or an array with same number"),
    (K.RBF(), {"alpha": -1.0}, "alpha"),
])
def test_parameters_pacgp_does_not_have_are_refused(kernel, params, match):
    X, y = _data()
    with pytest.raises(ValueError, match=match):
        pacgp.GPRegressor(kernel=kernel, **params).fit(X, y)


PEER_CASES = {
    # A kernel object without a WhiteKernel: the noise is alpha alone, row by row.
    "RBF, alpha per row": (K.ConstantKernel(2.0) * K.RBF([0.7, 2.0]), np.linspace(0.01, 0.1, 30),
                           True),
    # With a WhiteKernel its level is kept, alpha added; targets as given.
    "RBF+White, normalize_y=False": (K.RBF(1.5) + K.WhiteKernel(0.05), 0.02, False),
    "Matern32, default alpha": (K.ConstantKernel(0.5) * K.Matern([1.0, 3.0], nu=1.5), None, True),
}


@pytest.mark.parametrize("name", list(PEER_CASES))
def test_kept_kernel_with_alpha_predicts_and_scores_as_scikit_learn(name):
    """optimizer=None: the kernel's values, its WhiteKernel's level and alpha are kept; the
    mean, std, covariance and log marginal likelihood equal scikit-learn's fitted the same way
    (nothing fitted in either), and kernel_ is the kernel given."""
    kernel, alpha, normalize = PEER_CASES[name]
    X, y = _data(d=2)
    Xs = _data(n=7, d=2, seed=4)[0]
    extra = {} if alpha is None else {"alpha": alpha}
    ours = pacgp.GPRegressor(kernel=kernel, optimizer=None, normalize_y=normalize,
                             **extra).fit(X, y)
    peer = GaussianProcessRegressor(kernel, optimizer=None, normalize_y=normalize,
                                    **extra).fit(X, y)
    for a, b in zip(ours.predict(Xs, return_std=True), peer.predict(Xs, return_std=True)):
        np.testing.assert_allclose(a, b, rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(ours.predict(Xs, return_cov=True)[1],
                               peer.predict(Xs, return_cov=True)[1], rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(ours.log_marginal_likelihood(),
                               peer.log_marginal_likelihood_value_, rtol=1e-9)
    assert repr(ours.kernel_) == repr(kernel)
    moved = kernel.theta + 0.2
    np.testing.assert_allclose(ours.log_marginal_likelihood(moved),
                               peer.log_marginal_likelihood(moved), rtol=1e-8)


def test_alpha_adds_known_noise_to_a_fitted_one():
    """A pacgp kernel string: σ² fitted by ML-II, alpha added on top (check_regressors_train
    sets alpha=0.01); a scikit-learn kernel without WhiteKernel interpolates as scikit-learn's
    does at its default alpha."""
    X, y = _data()
    est = pacgp.GPRegressor(alpha=0.01).fit(X, y)
    assert est.noise_variance_ > 0
    assert "alpha" in est.get_params()
    Xi = np.linspace(0, 10, 6)[:, None]
    yi = np.sin(Xi[:, 0]) * Xi[:, 0]
    interp = pacgp.GPRegressor(kernel=K.ConstantKernel() * K.RBF(1.0)).fit(Xi, yi)
    mean, cov = interp.predict(Xi, return_cov=True)
    np.testing.assert_allclose(mean, yi, atol=1e-6)
    np.testing.assert_allclose(np.diag(cov), 0.0, atol=1e-6)


def test_scikit_learns_defaults_fit_as_pacgp_does():
    X, y = _data()
    a = pacgp.GPRegressor(kernel=K.RBF(), optimizer="fmin_l_bfgs_b", normalize_y=True,
                          n_targets=1).fit(X, y[:, None])
    b = pacgp.GPRegressor(kernel=K.RBF()).fit(X, y)
    np.testing.assert_array_equal(a.predict(X), b.predict(X))


def test_latent_mean_and_variance_is_predict_latent():
    rng = np.random.RandomState(0)
    X = rng.randn(40, 2)
    y = (X[:, 0] + 0.3 * rng.randn(40) > 0).astype(int)
    est = pacgp.GPClassifier(kernel=K.RBF()).fit(X, y)
    mean, var = est.latent_mean_and_variance(X)
    ref_mean, ref_var = est.predict_latent(X)
    np.testing.assert_array_equal(mean, ref_mean)
    np.testing.assert_array_equal(var, ref_var)
    assert mean.shape == var.shape == (40,)
    three = pacgp.GPClassifier(kernel=K.RBF()).fit(X, np.digitize(X[:, 0], [-0.5, 0.5]))
    with pytest.raises(ValueError, match="only supported for binary classification"):
        three.latent_mean_and_variance(X)


PRIOR_KERNELS = [
    K.RBF(0.7),
    K.ConstantKernel(2.5) * K.RBF([0.5, 2.0]),
    K.ConstantKernel(0.3) * K.Matern(1.3, nu=1.5) + K.ConstantKernel(1e-2),
    K.RBF(1.1) + K.WhiteKernel(0.05),
]


@pytest.mark.parametrize("kernel", PRIOR_KERNELS, ids=repr)
def test_prior_predictive_before_fit_is_scikit_learns(kernel):
    """Before fit, mean, std, covariance equal scikit-learn's unfitted regressor's at the same
    kernel values (its ``kernel(X)``: an independent evaluation) to 1e-12."""
    X = _data(7, 2, seed=3)[0]
    ours, peer = pacgp.GPRegressor(kernel=kernel), GaussianProcessRegressor(kernel=kernel)
    np.testing.assert_array_equal(ours.predict(X), peer.predict(X))
    for kw in ({"return_std": True}, {"return_cov": True}):
        for got, want in zip(ours.predict(X, **kw), peer.predict(X, **kw)):
            np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    assert not hasattr(ours, "model_")


def test_prior_of_a_pacgp_kernel_string_is_at_its_starting_values():
    """A pacgp kernel (default ``se-ard``) before fit: every hyperparameter 1 on the inputs as
    given, i.e. scikit-learn's default ``ConstantKernel(1) * RBF(1)``."""
    X = _data(6, 3, seed=4)[0]
    mean, cov = pacgp.GPRegressor().predict(X, return_cov=True)
    want = K.ConstantKernel(1.0) * K.RBF([1.0, 1.0, 1.0])
    np.testing.assert_array_equal(mean, np.zeros(6))
    np.testing.assert_allclose(cov, want(X), rtol=1e-12, atol=1e-15)
    # kernel=None is the library's default kernel, before fit as at fit.
    none_mean, none_cov = pacgp.GPRegressor(kernel=None).predict(X, return_cov=True)
    np.testing.assert_array_equal(none_mean, mean)
    np.testing.assert_array_equal(none_cov, cov)
    draws = pacgp.GPRegressor(kernel=None).sample_y(X, n_samples=2, random_state=0)
    assert draws.shape == (6, 2)


def test_prior_sample_y_is_seeded_with_the_priors_moments():
    """Prior draws: the same seed the same draws, and 20,000 of them have the prior's mean and
    covariance to 5 standard errors; with n_targets the shapes are scikit-learn's."""
    kernel = K.ConstantKernel(2.0) * K.RBF(1.5) + K.WhiteKernel(0.1)
    X = _data(3, 1, seed=5)[0]
    est = pacgp.GPRegressor(kernel=kernel)
    draws = est.sample_y(X, n_samples=20000, random_state=1)
    np.testing.assert_array_equal(draws[:, :2], est.sample_y(X, 2, random_state=1))
    cov = kernel(X)
    n = draws.shape[1]
    assert np.all(np.abs(draws.mean(axis=1)) < 5 * np.sqrt(np.diag(cov) / n))
    se = np.sqrt((np.outer(np.diag(cov), np.diag(cov)) + cov**2) / n)
    assert np.all(np.abs(draws @ draws.T / n - cov) < 5 * se)
    many = pacgp.GPRegressor(kernel=kernel, n_targets=3)
    assert many.sample_y(X, n_samples=4).shape == (3, 3, 4)
    mean, std = many.predict(X, return_std=True)
    assert mean.shape == std.shape == (3, 3)
    assert many.predict(X, return_cov=True)[1].shape == (3, 3, 3)
    np.testing.assert_allclose(std[:, 2], np.sqrt(np.diag(cov)), rtol=1e-12)


def test_prior_refuses_what_it_cannot_evaluate():
    """Both std and cov, a kernel without a θ mapping, and a bad n_samples are errors."""
    X = _data(4, 1)[0]
    with pytest.raises(RuntimeError, match="At most one"):
        pacgp.GPRegressor().predict(X, return_std=True, return_cov=True)
    with pytest.raises(ValueError, match="DotProduct"):
        pacgp.GPRegressor(kernel=K.DotProduct()).predict(X)
    with pytest.raises(ValueError, match="n_samples"):
        pacgp.GPRegressor().sample_y(X, n_samples=0)


def test_classifier_n_jobs_is_n_threads():
    """GPClassifier's ``n_jobs`` (scikit-learn's name) runs on that many threads: the same
    probabilities as ``n_threads`` and as the default to the bit; both given and different
    is refused."""
    X, y = _data(40, 2, seed=6)
    labels = np.digitize(y, np.quantile(y, [1 / 3, 2 / 3]))
    kernel = K.RBF(1.0)
    base = pacgp.GPClassifier(kernel=kernel).fit(X, labels).predict_proba(X)
    jobs = pacgp.GPClassifier(kernel=kernel, n_jobs=2).fit(X, labels)
    assert jobs._threads == 2
    np.testing.assert_array_equal(jobs.predict_proba(X), base)
    np.testing.assert_array_equal(
        pacgp.GPClassifier(kernel=kernel, n_threads=2).fit(X, labels).predict_proba(X), base)
    with pytest.raises(ValueError, match="same setting"):
        pacgp.GPClassifier(n_jobs=2, n_threads=1).fit(X, labels)


def test_classifier_n_restarts_optimizer_is_the_librarys_restarts():
    """GPClassifier's ``n_restarts_optimizer`` is the library's seeded ML-II restarts (the same
    fit as ``restarts``; both given and different is refused); restarts where θ is not fitted
    by ML-II, and an optimizer other than the library's L-BFGS, are refused with the reason."""
    X, y = _data(40, 2, seed=6)
    labels = (y > np.median(y)).astype(int)
    kernel = K.RBF([1.0, 1.0])
    a = pacgp.GPClassifier(kernel=kernel, n_restarts_optimizer=2).fit(X, labels)
    b = pacgp.GPClassifier(kernel=kernel, restarts=2).fit(X, labels)
    one = pacgp.GPClassifier(kernel=kernel).fit(X, labels)
    np.testing.assert_array_equal(a.predict_proba(X), b.predict_proba(X))
    assert a.fit_report_["optimiser"] == b.fit_report_["optimiser"]
    assert a.fit_report_["optimiser"]["value"] <= one.fit_report_["optimiser"]["value"] + 1e-9
    with pytest.raises(ValueError, match="same setting"):
        pacgp.GPClassifier(kernel=kernel, restarts=1, n_restarts_optimizer=2).fit(X, labels)
    with pytest.raises(ValueError, match="n_restarts_optimizer"):
        pacgp.GPClassifier(method="mean-field", n_restarts_optimizer=2).fit(X, labels)
    with pytest.raises(ValueError, match="optimizer=None"):
        pacgp.GPClassifier(kernel=kernel, optimizer=None).fit(X, labels)
