"""Multi-output regression in Python: a ``y`` of K columns fits one regressor per output.
Checked against scikit-learn's multi-output ``GaussianProcessRegressor`` at a kernel kept
fixed (mean, std, covariance, log marginal likelihood summed over the outputs) and at the
kernel both fit for all outputs at once (θ by the summed evidence), against pacgp's own
single-target fits (each output's model and certificate, one kernel per output), and the
joint certificate's union bound (each output at δ/K, the mean of the bounds)."""

import pickle

import numpy as np
import pytest
from sklearn.gaussian_process import GaussianProcessRegressor
from sklearn.gaussian_process import kernels as K

import pacgp


def _data(n=35, seed=1):
    """Two inputs and three targets of different scales."""
    rng = np.random.RandomState(seed)
    X = rng.uniform(0, 4, (n, 2))
    Y = np.c_[np.sin(X[:, 0]), X[:, 0] - 2 * X[:, 1], 30 * np.cos(X[:, 1])]
    return X, Y + 0.1 * rng.randn(n, 3)


def test_a_kept_kernel_predicts_as_scikit_learns_multi_output_regressor():
    X, Y = _data()
    Xt = np.linspace(0, 4, 14).reshape(7, 2)
    kernel = K.ConstantKernel(2.0) * K.RBF([1.0, 1.5]) + K.WhiteKernel(0.01)
    ours = pacgp.GPRegressor(kernel=kernel, optimizer=None, normalize_y=False).fit(X, Y)
    peer = GaussianProcessRegressor(kernel, optimizer=None, normalize_y=False, alpha=0.0)
    peer.fit(X, Y)
    mean, std = ours.predict(Xt, return_std=True)
    pmean, pstd = peer.predict(Xt, return_std=True)
    assert mean.shape == std.shape == (7, 3)
    np.testing.assert_allclose(mean, pmean, rtol=1e-7, atol=1e-8)
    np.testing.assert_allclose(std, pstd, rtol=1e-6, atol=1e-8)
    _, cov = ours.predict(Xt, return_cov=True)
    _, pcov = peer.predict(Xt, return_cov=True)
    assert cov.shape == pcov.shape == (7, 7, 3)
    np.testing.assert_allclose(cov, pcov, rtol=1e-6, atol=1e-8)
    # The evidence of a multi-output y is the sum over the outputs, at the kept θ and others.
    theta = peer.kernel_.theta
    np.testing.assert_allclose(ours.log_marginal_likelihood(theta),
                               peer.log_marginal_likelihood(theta), rtol=1e-8)
    np.testing.assert_allclose(ours.log_marginal_likelihood(theta + 0.3),
                               peer.log_marginal_likelihood(theta + 0.3), rtol=1e-8)
    np.testing.assert_allclose(ours.log_marginal_likelihood_value_,
                               peer.log_marginal_likelihood_value_, rtol=1e-8)
    draws = ours.sample_y(Xt, n_samples=5, random_state=0)
    assert draws.shape == (7, 3, 5)
    alone = pacgp.GPRegressor(kernel=kernel, optimizer=None, normalize_y=False).fit(X, Y[:, 0])
    np.testing.assert_array_equal(draws[:, 0, :], alone.sample_y(Xt, 5, random_state=0))


def test_each_output_is_its_single_target_fit_and_the_joint_certificate_pays_ln_k():
    X, Y = _data()
    est = pacgp.GPRegressor(epsilon=0.5, shared_kernel=False).fit(X, Y)
    assert est.n_outputs_ == 3 and len(est.estimators_) == 3 and len(est.kernels_) == 3
    c = est.certificate_
    assert c["joint"]["delta"] == 0.01
    n = len(X)
    for j in range(3):
        alone = pacgp.GPRegressor(epsilon=0.5).fit(X, Y[:, j])
        np.testing.assert_array_equal(est.predict(X)[:, j], alone.predict(X))
        own = c["outputs"][j]["certificates"][0]
        assert own["bound"] == alone.certificate_["bound"]
        assert est.estimators_[j].certificate_ == own
        joint = c["joint"]["outputs"][j]["certificates"][0]
        assert joint["delta"] == pytest.approx(0.01 / 3)
        assert (joint["complexity"] - own["complexity"]) * n == pytest.approx(np.log(3))
    mean = np.mean([o["certificates"][0]["bound"] for o in c["joint"]["outputs"]])
    assert c["joint"]["mean_bound"][0] == pytest.approx(mean, rel=1e-15)
    lower, upper = est.predict_interval(X[:4], 0.1)[:2]
    assert lower.shape == (4, 3) and np.all(lower < upper)
    metrics = est.evaluate(X, Y)
    assert len(metrics) == 3 and metrics[2]["rmse"] > metrics[0]["rmse"]
    assert 0.9 < est.score(X, Y) <= 1.0
    back = pickle.loads(pickle.dumps(est))
    np.testing.assert_array_equal(back.predict(X), est.predict(X))


def test_a_bound_trained_regressor_needs_its_epsilon_with_several_targets():
    X, Y = _data()
    with pytest.raises(ValueError, match="epsilon"):
        pacgp.PACGPRegressor().fit(X, Y)
    est = pacgp.PACGPRegressor(epsilon=1.0).fit(X, Y[:, :2])
    assert est.predict(X).shape == (len(X), 2)
    assert len(est.certificate_["joint"]["outputs"]) == 2


def test_a_shared_kernel_is_scikit_learns_fit_of_all_outputs():
    """By default the outputs share θ and σ², the maximiser of their summed evidence, as in
    scikit-learn: without the grid snap both land on the same kernel and evidence."""
    X, Y = _data()
    kernel = K.ConstantKernel(1.0) * K.RBF([1.0, 1.0]) + K.WhiteKernel(0.1)
    ours = pacgp.GPRegressor(kernel=kernel, snap=False).fit(X, Y)
    peer = GaussianProcessRegressor(kernel, normalize_y=True, n_restarts_optimizer=3,
                                    random_state=0).fit(X, Y)
    np.testing.assert_allclose(ours.kernel_.theta, peer.kernel_.theta, atol=1e-4)
    np.testing.assert_allclose(ours.log_marginal_likelihood_value_,
                               peer.log_marginal_likelihood_value_, rtol=1e-8)
    assert all(np.array_equal(k.theta, ours.kernel_.theta) for k in ours.kernels_)
    Xt = np.linspace(0, 4, 14).reshape(7, 2)
    np.testing.assert_allclose(ours.predict(Xt), peer.predict(Xt), rtol=1e-4, atol=1e-4)
    # One kernel per output is another model: some output's own θ is elsewhere.
    own = pacgp.GPRegressor(kernel=kernel, snap=False, shared_kernel=False).fit(X, Y)
    assert any(np.abs(k.theta - ours.kernel_.theta).max() > 0.1 for k in own.kernels_)
    # Certified with the snap, each output and all at once; a holdout needs its own kernels.
    snapped = pacgp.GPRegressor(epsilon=0.5).fit(X, Y)
    assert len(snapped.certificate_["joint"]["outputs"]) == 3
    with pytest.raises(ValueError, match="held out"):
        pacgp.GPRegressor(epsilon=0.5, certify_holdout=0.3).fit(X, Y)
    pacgp.GPRegressor(epsilon=0.5, certify_holdout=0.3, shared_kernel=False).fit(X, Y)
