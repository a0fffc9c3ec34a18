"""``kernel_`` in the form ``kernel=`` was given, checked against scikit-learn itself.

A regressor fitted from a scikit-learn kernel object returns a scikit-learn kernel object of
the same structure with the fitted values. scikit-learn's ``GaussianProcessRegressor`` with
that kernel, ``optimizer=None`` (no refit of the values) and ``normalize_y=True`` (pacgp fits
on standardised targets) on the same data must give pacgp's predictive means and standard
deviations and its log marginal likelihood to 1e-8: scikit-learn evaluates the kernel object
on the raw inputs with its own code, so this checks the translation of every value back to
the inputs' units (length scales times the inputs' standard deviations, amplitudes, noise).
"""

import numpy as np
import pytest
from sklearn.gaussian_process import GaussianProcessRegressor
from sklearn.gaussian_process import kernels as K

import pacgp


def _data(standardised=False, n=40, seed=0):
    """Inputs with different spreads and offsets per column (or standardised exactly), and a
    smooth target with noise."""
    rng = np.random.RandomState(seed)
    X = rng.randn(n, 3) * np.array([0.5, 3.0, 20.0]) + np.array([1.0, -4.0, 100.0])
    y = np.sin(X[:, 0] * 2) + 0.1 * X[:, 1] + 0.01 * X[:, 2] + 0.1 * rng.randn(n)
    if standardised:
        X = (X - X.mean(axis=0)) / X.std(axis=0)
    Xt = X[:10] + 0.3 * rng.randn(10, 3) * X.std(axis=0)
    return X, y, Xt


def _peer(kernel, X, y):
    return GaussianProcessRegressor(kernel=kernel, optimizer=None, normalize_y=True,
                                    alpha=1e-10).fit(X, y)


def _same_structure(given, fitted):
    """Same tree of Sum/Product nodes and the same base kernel classes, allowing a
    ConstantKernel put in front of a product term that had none."""
    if isinstance(given, (K.Sum, K.Product)) and type(fitted) is type(given):
        return _same_structure(given.k1, fitted.k1) and _same_structure(given.k2, fitted.k2)
    if isinstance(fitted, K.Product) and isinstance(fitted.k1, K.ConstantKernel):
        if not isinstance(given, K.ConstantKernel):
            return _same_structure(given, fitted.k2)
    if isinstance(given, K.Matern):
        return isinstance(fitted, K.Matern) and fitted.nu == given.nu
    return type(fitted) is type(given)


CASES = {
    "C*RBF(ard)+White": K.ConstantKernel() * K.RBF(length_scale=[1.0, 1.0, 1.0])
    + K.WhiteKernel(),
    "RBF(iso)+White": K.RBF() + K.WhiteKernel(),
    "C*Matern32+White": K.ConstantKernel() * K.Matern(nu=1.5) + K.WhiteKernel(),
    "sum": K.ConstantKernel() * K.RBF() + K.ConstantKernel() * K.Matern(nu=2.5)
    + K.WhiteKernel(),
    "product": K.ConstantKernel() * K.RBF() * K.Matern(nu=0.5) + K.WhiteKernel(),
    "RBF+Const+White": K.RBF(length_scale=[1.0, 1.0, 1.0]) + K.ConstantKernel()
    + K.WhiteKernel(),
}


@pytest.mark.parametrize("name", list(CASES))
def test_regressor_kernel_round_trip(name):
    given = CASES[name]
    X, y, Xt = _data()
    est = pacgp.GPRegressor(kernel=given).fit(X, y)
    fitted = est.kernel_
    assert isinstance(fitted, K.Kernel), fitted
    assert _same_structure(given, fitted), (given, fitted)
    peer = _peer(fitted, X, y)
    mean, std = est.predict(Xt, return_std=True)
    peer_mean, peer_std = peer.predict(Xt, return_std=True)
    np.testing.assert_allclose(mean, peer_mean, rtol=1e-8, atol=1e-8 * np.std(y))
    np.testing.assert_allclose(std, peer_std, rtol=1e-8)
    np.testing.assert_allclose(est.log_marginal_likelihood_value_,
                               peer.log_marginal_likelihood_value_, rtol=1e-8)


def test_dot_product_round_trip_on_standardised_inputs():
    """DotProduct comes back as ConstantKernel(v) * DotProduct(sigma_0): exact on standardised
    inputs, the scale pacgp's linear kernel lives on."""
    given = K.ConstantKernel() * K.RBF() + K.DotProduct() + K.WhiteKernel()
    X, y, Xt = _data(standardised=True)
    est = pacgp.GPRegressor(kernel=given).fit(X, y)
    fitted = est.kernel_
    dot = fitted.k1.k2
    assert isinstance(dot, K.Product) and isinstance(dot.k2, K.DotProduct), fitted
    peer = _peer(fitted, X, y)
    np.testing.assert_allclose(est.predict(Xt), peer.predict(Xt), rtol=1e-8, atol=1e-9)
    np.testing.assert_allclose(est.log_marginal_likelihood_value_,
                               peer.log_marginal_likelihood_value_, rtol=1e-8)


def test_string_kernel_stays_pacgp():
    X, y, _ = _data()
    est = pacgp.GPRegressor(kernel="se").fit(X, y)
    assert isinstance(est.kernel_, str) and "SE" in est.kernel_


def test_classifier_kernel_object():
    """A classifier's kernel_ is a scikit-learn object too: the latent amplitude and the
    length scale in the inputs' units (the fitted θ on standardised inputs times their
    standard deviation)."""
    X, _, _ = _data(n=60)
    y = (X[:, 0] > 1.0).astype(int)
    est = pacgp.GPClassifier(kernel=K.ConstantKernel() * K.RBF()).fit(X, y)
    fitted = est.kernel_
    assert isinstance(fitted, K.Product) and isinstance(fitted.k2, K.RBF), fitted
    theta = dict(zip(est.theta_names_, est.theta_))
    np.testing.assert_allclose(fitted.k1.constant_value, np.exp(theta["ln_signal_variance"]),
                               rtol=1e-12)
    np.testing.assert_allclose(fitted.k2.length_scale,
                               np.exp(theta["ln_lengthscale"]) * X.std(axis=0), rtol=1e-12)


def test_clone_keeps_the_given_kernel():
    """fit never changes the ``kernel`` parameter (scikit-learn's rule); kernel_ is new."""
    given = K.ConstantKernel() * K.RBF() + K.WhiteKernel()
    X, y, _ = _data()
    est = pacgp.GPRegressor(kernel=given).fit(X, y)
    assert est.kernel is given and est.kernel_ is not given
