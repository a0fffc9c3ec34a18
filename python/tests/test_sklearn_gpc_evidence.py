"""``GPClassifier.log_marginal_likelihood`` (a binary Laplace model's ``ln q(y | X, θ)``)
against scikit-learn's ``GaussianProcessClassifier`` — whose Laplace approximation uses the
logistic likelihood — at the same kernel, and its gradient against central differences."""

import numpy as np
import pytest
from sklearn.gaussian_process import GaussianProcessClassifier
from sklearn.gaussian_process import kernels as K

import pacgp


def _data(n=40, seed=0):
    rng = np.random.RandomState(seed)
    X = rng.randn(n, 2) * np.array([1.0, 3.0]) + 1.0
    y = np.where(np.sin(X[:, 0]) + 0.1 * X[:, 1] + 0.3 * rng.randn(n) > 0, "yes", "no")
    return X, y


KERNELS = {
    "RBF": K.RBF(1.0),
    "C*RBF-ARD": K.ConstantKernel() * K.RBF([1.0, 1.0]),
    "C*Matern32+C": K.ConstantKernel() * K.Matern(nu=1.5) + K.ConstantKernel(0.1),
}


@pytest.mark.parametrize("name", list(KERNELS))
def test_lml_equals_scikit_learns_at_the_same_kernel(name):
    X, y = _data()
    est = pacgp.GPClassifier(kernel=KERNELS[name], likelihood="logistic").fit(X, y)
    theta = est.kernel_.theta
    assert est.log_marginal_likelihood(theta) == pytest.approx(
        est.log_marginal_likelihood_value_, rel=1e-9)
    assert est.log_marginal_likelihood() == est.log_marginal_likelihood_value_
    # Equal shifts in ln space keep an isotropic kernel's per-input length scales proportional.
    for moved in (theta, theta + 0.4, theta - 0.5):
        kernel = est.kernel_.clone_with_theta(moved)
        peer = GaussianProcessClassifier(kernel, optimizer=None).fit(X, y)
        np.testing.assert_allclose(est.log_marginal_likelihood(moved),
                                   peer.log_marginal_likelihood_value_, rtol=1e-6)


@pytest.mark.parametrize("likelihood", ["logistic", "probit"])
def test_lml_gradient_against_central_differences(likelihood):
    X, y = _data()
    est = pacgp.GPClassifier(kernel=K.ConstantKernel() * K.RBF([1.0, 1.0]),
                             likelihood=likelihood).fit(X, y)
    theta = est.kernel_.theta + 0.3
    value, grad = est.log_marginal_likelihood(theta, eval_gradient=True)
    assert value == est.log_marginal_likelihood(theta)
    h = 1e-4
    for i in range(len(theta)):
        e = np.zeros_like(theta)
        e[i] = h
        fd = (est.log_marginal_likelihood(theta + e)
              - est.log_marginal_likelihood(theta - e)) / (2 * h)
        np.testing.assert_allclose(grad[i], fd, rtol=1e-4, atol=1e-5)


def test_a_pacgp_kernel_string_takes_pacgps_theta():
    X, y = _data()
    est = pacgp.GPClassifier(kernel="se", select="ml2").fit(X, y)
    assert est.log_marginal_likelihood(est.theta_) == pytest.approx(
        est.log_marginal_likelihood_value_, rel=1e-9)
    value, grad = est.log_marginal_likelihood(est.theta_, eval_gradient=True)
    assert grad.shape == (len(est.theta_),)


def test_only_binary_laplace_models_have_an_evidence():
    X, y = _data()
    three = np.digitize(X[:, 0], [0.5, 1.5])
    assert not hasattr(pacgp.GPClassifier(kernel=K.RBF()).fit(X, three),
                       "log_marginal_likelihood")
    assert not hasattr(pacgp.GPClassifier(method="ep", kernel=K.RBF()).fit(X, y),
                       "log_marginal_likelihood")
    assert not hasattr(pacgp.GPClassifier(), "log_marginal_likelihood")
    held_out = pacgp.GPClassifier(kernel=K.RBF(), certify_holdout=0.25).fit(X, y)
    assert not hasattr(held_out, "log_marginal_likelihood")
