"""scikit-learn's GP and SVM API over a fitted pacgp model: the joint predictive covariance
and draws from it, the log marginal likelihood at any hyperparameters, distribution-free
prediction intervals, and an SVM's decision function and dual. Mixins of the estimators in
``_estimators``; every number comes from the library (``pacgp._pacgp.Model``)."""

import json
from collections import namedtuple

import numpy as np
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_array, check_is_fitted

from . import _pacgp
from ._kernels import (
    evidence_params_of,
    is_sklearn_kernel,
    prior_params_of,
    theta_jacobian,
    to_spec,
)

#: Prediction intervals at level 1 − α: ``lower`` and ``upper`` bounds and the ``statement``
#: (a dict: ``method``, ``score``, ``level``, ``n_scores``, ``guaranteed_coverage`` and the
#: guarantee in words, as ``pacgp predict --interval`` prints it).
PredictionIntervals = namedtuple("PredictionIntervals", ["lower", "upper", "statement"])

#: A classifier's prediction sets at level 1 − α: ``sets``, a boolean array (n_samples,
#: n_classes) with column j for ``classes_[j]``, and the ``statement`` (as for intervals).
PredictionSets = namedtuple("PredictionSets", ["sets", "statement"])

# Seeds the library's generator takes (u64); a RandomState is asked for one below 2**63.
_SEED_BOUND = 2**63 - 1


def seed_of(random_state):
    """A seed for the library's ChaCha8 generator from scikit-learn's ``random_state``: an
    int is the seed itself; a RandomState (or None: numpy's global one) draws it."""
    if isinstance(random_state, (int, np.integer)) and not isinstance(random_state, bool):
        if random_state < 0:
            raise ValueError(f"random_state must be non-negative, got {random_state}")
        return int(random_state)
    return int(check_random_state(random_state).randint(_SEED_BOUND, dtype=np.int64))


class RegressionAPI:
    """scikit-learn's ``GaussianProcessRegressor`` prediction API and conformal intervals."""

    def predict(self, X, return_std=False, return_cov=False):
        """Predictive mean at X; with ``return_std`` also the standard deviation of a new
        observation (latent variance plus noise), with ``return_cov`` instead their joint
        covariance (noise on the diagonal), in the target's units. Asking for both is an
        error, as in scikit-learn."""
        if return_std and return_cov:
            raise RuntimeError("At most one of return_std or return_cov can be requested.")
        check_is_fitted(self, "model_")
        X, _rows = self._coded(X)
        if hasattr(self, "estimators_"):
            return _stacked([e.predict(X, return_std, return_cov) for e in self.estimators_])
        if return_cov:
            return self.model_.predict_regression_cov(X, n_threads=self._threads)
        if not return_std:
            # The mean alone: O(N·n), without the variances' O(N²·n) solves.
            return self.model_.predict_mean(X, n_threads=self._threads)
        mean, _latent_var, noisy_var = self.model_.predict_regression(X, n_threads=self._threads)
        return mean, np.sqrt(noisy_var)

    def sample_y(self, X, n_samples=1, random_state=0):
        """``n_samples`` joint draws of new observations at X (shape ``(len(X), n_samples)``)
        from the predictive of ``predict(X, return_cov=True)``; ``random_state`` an int seed,
        a RandomState or None, as in scikit-learn (the draws are the library's, seeded)."""
        check_is_fitted(self, "model_")
        n_samples = int(n_samples)
        if n_samples < 1:
            raise ValueError(f"n_samples must be at least 1, got {n_samples}")
        X, _rows = self._coded(X)
        seed = seed_of(random_state)
        if hasattr(self, "estimators_"):
            # Output j draws with seed + j: the first output's are those of its fit alone.
            return np.stack([e.sample_y(X, n_samples, (seed + j) % (_SEED_BOUND + 1))
                             for j, e in enumerate(self.estimators_)], axis=1)
        draws, _jitter = self.model_.sample_regression(
            X, n_samples, seed, n_threads=self._threads
        )
        return draws

    def predict_interval(self, X, alpha=0.1):
        """Prediction intervals of level 1 − ``alpha`` at X by the interval method the model
        was fitted with (``intervals=`` "jackknife+", "cv+[:K]" or "split-conformal[:F]"; an
        exact GP fitted without one has jackknife+ with the "gp-std" score, its leave-one-out
        being free): a ``PredictionIntervals(lower, upper, statement)``, the statement naming
        the method and its finite-sample coverage guarantee (1 − 2α for jackknife+ and CV+,
        1 − α for split conformal)."""
        check_is_fitted(self, "model_")
        X, _rows = self._coded(X)
        if hasattr(self, "estimators_"):
            parts = [e.predict_interval(X, alpha) for e in self.estimators_]
            return PredictionIntervals(np.stack([p.lower for p in parts], axis=1),
                                       np.stack([p.upper for p in parts], axis=1),
                                       parts[0].statement)
        lower, upper, statement = self.model_.predict_intervals(
            X, float(alpha), n_threads=self._threads
        )
        return PredictionIntervals(lower, upper, json.loads(statement))


def _stacked(parts):
    """Each output's ``predict`` stacked as scikit-learn's multi-output shapes: means and
    standard deviations (n, K), covariances (n, n, K)."""
    if isinstance(parts[0], tuple):
        return (np.stack([p[0] for p in parts], axis=1),
                np.stack([p[1] for p in parts], axis=-1))
    return np.stack(parts, axis=1)


class PriorPredictiveAPI:
    """Before ``fit``, ``predict`` and ``sample_y`` are the GP prior's, as in scikit-learn's
    ``GaussianProcessRegressor``: mean 0 and the covariance ``kernel(X)`` of new observations
    on the inputs as given (noise only from a top-level ``WhiteKernel``), from the library's
    kernel evaluation (``_pacgp.prior_predictive``). A scikit-learn kernel object is taken at
    its values; a pacgp kernel string at its starting values (every hyperparameter 1). With
    ``n_targets`` k > 1, every output has this prior: a mean and std of shape (n, k), a
    covariance (n, n, k) and draws (n, k, n_samples)."""

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        # predict works before fit (scikit-learn's GaussianProcessRegressor sets this too).
        tags.requires_fit = False
        return tags

    def predict(self, X, return_std=False, return_cov=False):
        if hasattr(self, "model_"):
            return super().predict(X, return_std=return_std, return_cov=return_cov)
        if return_std and return_cov:
            raise RuntimeError("At most one of return_std or return_cov can be requested.")
        spec, theta, noise, X = self._prior_at(X)
        mean, spread = _pacgp.prior_predictive(spec, theta, noise, X, full_cov=return_cov,
                                               n_threads=self._threads)
        mean = self._per_target(mean)
        if return_cov:
            return mean, self._per_target(spread)
        if return_std:
            return mean, self._per_target(np.sqrt(spread))
        return mean

    def sample_y(self, X, n_samples=1, random_state=0):
        if hasattr(self, "model_"):
            return super().sample_y(X, n_samples=n_samples, random_state=random_state)
        n_samples = int(n_samples)
        if n_samples < 1:
            raise ValueError(f"n_samples must be at least 1, got {n_samples}")
        spec, theta, noise, X = self._prior_at(X)
        k = self._prior_targets()
        draws, _jitter = _pacgp.prior_sample(spec, theta, noise, X, n_samples * k,
                                             seed_of(random_state), n_threads=self._threads)
        # Independent draws: k groups of n_samples columns, one group per output.
        return draws if k == 1 else draws.reshape(X.shape[0], k, n_samples)

    def _prior_at(self, X):
        """The kernel's specification, θ (None: its starting values) and noise variance for
        the prior at X, and X as numbers."""
        X = np.require(check_array(X, dtype=np.float64), requirements=["A"])
        if not is_sklearn_kernel(self.kernel):
            return self.kernel, None, 0.0, X
        spec = to_spec(self.kernel)
        tree = json.loads(_pacgp.kernel_tree(spec, X.shape[1]))
        theta, noise = prior_params_of(self.kernel, tree)
        return spec, theta, noise, X

    def _prior_targets(self):
        """The outputs the prior predicts: ``n_targets`` (1 when None)."""
        return 1 if self.n_targets is None else int(self.n_targets)

    def _per_target(self, a):
        """A one-output array repeated along a last axis of ``n_targets`` (> 1) outputs."""
        k = self._prior_targets()
        return a if k == 1 else np.repeat(a[..., np.newaxis], k, axis=-1)


class EvidenceAPI:
    """``log_marginal_likelihood`` of an exact GP regressor, on the standardised targets it
    was fitted to (scikit-learn's ``normalize_y=True``). Its parameters are in the form
    ``kernel`` was given:

    - a pacgp kernel string: pacgp's ``[θ…, ln σ²]`` (``evidence_theta_``, names in
      ``evidence_theta_names_``), the ln values of the kernel's hyperparameters on
      standardised inputs and of the noise variance;
    - a scikit-learn kernel object: scikit-learn's ``theta``, the ln values of ``kernel_``'s
      free hyperparameters in its order (``kernel_.theta``), or of the given ``kernel``'s
      (``kernel.theta``, told apart by their number), in the inputs' units
      (``_kernels.evidence_params_of``). The noise variance is the WhiteKernel's when the
      kernel has one (fitted); without one σ² is kept at 0 and ``alpha`` is the noise, so
      the evidence is a function of θ alone."""

    def _set_evidence(self):
        """``log_marginal_likelihood_value_`` and the evidence's parameters after a fit."""
        theta, names = self.model_.evidence_params
        self.evidence_theta_ = np.asarray(theta)
        self.evidence_theta_names_ = list(names)
        self.log_marginal_likelihood_value_, _ = self.model_.log_evidence(
            n_threads=self._threads
        )

    def log_marginal_likelihood(self, theta=None, eval_gradient=False, clone_kernel=True):
        """``ln p(y | X, θ)`` at ``theta`` (default: the fitted hyperparameters) and, with
        ``eval_gradient``, its gradient with respect to ``theta``. With a scikit-learn kernel
        object, ``theta`` is scikit-learn's, a gradient needs ``theta`` (as in scikit-learn),
        and ``clone_kernel=False`` sets ``kernel_.theta`` to a ``theta`` of ``kernel_``'s
        form, as scikit-learn does (the fitted model and its predictions do not change).
        With a pacgp kernel string ``clone_kernel`` is accepted for the signature only.
        With several outputs, the sum over the outputs at the same ``theta`` (at each
        output's own fitted values by default), as scikit-learn's for a multi-output ``y``."""
        check_is_fitted(self, "model_")
        if hasattr(self, "estimators_"):
            parts = [e.log_marginal_likelihood(theta, eval_gradient, clone_kernel)
                     for e in self.estimators_]
            if eval_gradient:
                return (np.float64(sum(v for v, _ in parts)),
                        np.sum([g for _, g in parts], axis=0))
            return np.float64(sum(parts))
        if is_sklearn_kernel(self.kernel_):
            return self._sklearn_log_marginal_likelihood(theta, eval_gradient, clone_kernel)
        params = None if theta is None else [float(v) for v in np.ravel(theta)]
        value, gradient = self.model_.log_evidence(
            params, bool(eval_gradient), n_threads=self._threads
        )
        if eval_gradient:
            return value, np.asarray(gradient)
        return value

    def _sklearn_log_marginal_likelihood(self, theta, eval_gradient, clone_kernel):
        """``log_marginal_likelihood`` on scikit-learn's ``theta`` (see the class's doc)."""
        if theta is None:
            if eval_gradient:
                raise ValueError("Gradient can only be evaluated for theta!=None")
            return np.float64(self.log_marginal_likelihood_value_)
        theta = np.asarray(theta, dtype=float).ravel()
        form = self._theta_form(theta)
        params_of = self._params_of
        value, gradient = self._evidence_at(params_of(form.clone_with_theta(theta)),
                                            bool(eval_gradient))
        if not clone_kernel and form is self.kernel_:
            self.kernel_.theta = theta
        # A numpy float as scikit-learn returns: arithmetic with numpy scalars stays float64
        # (a Python float minus a float32 would round to float32).
        if not eval_gradient:
            return np.float64(value)
        jacobian = theta_jacobian(form, theta, params_of)
        return np.float64(value), jacobian.T @ np.asarray(gradient)

    def _evidence_at(self, params, gradient):
        """The library's log evidence at its parameters ``[θ…, ln σ²]`` and its gradient."""
        return self.model_.log_evidence(params, gradient, n_threads=self._threads)

    def _theta_form(self, theta):
        """The kernel object whose ``theta`` has as many values as ``theta``: ``kernel_``
        first, else the given ``kernel``."""
        for form in (self.kernel_, self.kernel):
            if len(form.theta) == len(theta):
                return form
        raise ValueError(
            f"theta has {len(theta)} values; kernel_.theta has {len(self.kernel_.theta)}, "
            f"the given kernel's theta {len(self.kernel.theta)}"
        )

    def _params_of(self, kernel):
        """The library's evidence parameters of a scikit-learn kernel object (without
        ``ln σ²`` where σ² was kept at 0: then the evidence is a function of θ alone)."""
        fitted_noise = "ln_noise_variance" in self.evidence_theta_names_
        params = evidence_params_of(kernel, json.loads(self.model_.kernel_json),
                                    self.model_.input_scale,
                                    self.model_.noise_variance if fitted_noise else 1.0)
        return params if fitted_noise else params[:-1]


class ClassifierEvidenceAPI(EvidenceAPI):
    """``log_marginal_likelihood`` of a binary Laplace classifier: the Laplace approximation's
    ``ln q(y | X, θ)`` (GPML eq. 3.32), at θ in the form ``kernel`` was given (scikit-learn's
    ``theta`` of ``kernel_`` or of the given kernel after a kernel object, else pacgp's θ,
    ``theta_``); the likelihood (a probit's fitted λ and b too) stays at the fitted one. The
    posterior does not hold the labels, so the estimator keeps its training sample
    (``_evidence_sample``) as scikit-learn's keeps ``X_train_``."""

    def _set_evidence(self, X, target):
        """The training sample and ``log_marginal_likelihood_value_`` after a fit."""
        self._evidence_sample = (X, target)
        self.log_marginal_likelihood_value_, _ = self.model_.classifier_log_evidence(
            X, target, n_threads=self._threads
        )

    def log_marginal_likelihood(self, theta=None, eval_gradient=False, clone_kernel=True):
        """``ln q(y | X, θ)`` at ``theta`` (default: the fitted θ) and, with
        ``eval_gradient``, its gradient with respect to ``theta``; see the class's doc and
        ``EvidenceAPI.log_marginal_likelihood``."""
        check_is_fitted(self, "model_")
        if is_sklearn_kernel(self.kernel_):
            return self._sklearn_log_marginal_likelihood(theta, eval_gradient, clone_kernel)
        params = None if theta is None else [float(v) for v in np.ravel(theta)]
        value, gradient = self.model_.classifier_log_evidence(
            *self._evidence_sample, params, bool(eval_gradient), n_threads=self._threads
        )
        if eval_gradient:
            return np.float64(value), np.asarray(gradient)
        return np.float64(value)

    def _evidence_at(self, params, gradient):
        """The classifier's evidence at ``[θ…, ln σ²]`` (no noise: its entry's gradient is
        0)."""
        value, grad = self.model_.classifier_log_evidence(
            *self._evidence_sample, params[:-1], gradient, n_threads=self._threads
        )
        return value, None if grad is None else list(grad) + [0.0]

    def _params_of(self, kernel):
        """The library's parameters of a kernel object, with a placeholder noise entry."""
        return evidence_params_of(kernel, json.loads(self.model_.kernel_json),
                                  self.model_.input_scale, 1.0)


class SVMDualAPI:
    """scikit-learn's ``SVC`` attributes of a binary SVM: ``decision_function``, ``support_``,
    ``support_vectors_``, ``n_support_``, ``dual_coef_``, ``intercept_`` (support vectors
    ordered by class, then by training row, as libsvm orders them)."""

    def _set_dual(self, X, signs):
        """The dual's attributes from the fitted model and its numeric training inputs."""
        support, coef, intercept = self.model_.svm_dual(X)
        support, coef = np.asarray(support, dtype=np.int32), np.asarray(coef)
        order = np.lexsort((support, signs[support] > 0))
        self.support_ = support[order]
        self.support_vectors_ = X[self.support_]
        self.dual_coef_ = coef[order].reshape(1, -1)
        self.intercept_ = np.array([intercept])
        positive = int(np.sum(signs[self.support_] > 0))
        self.n_support_ = np.array([len(support) - positive, positive], dtype=np.int32)

    def decision_function(self, X):
        """The SVM's decision values ``f(x) = Σ_i y_iα_i k(x, x_i) + b``: positive towards
        ``classes_[1]``, their sign is ``predict``'s. More than two classes: the one-vs-rest
        scores of every classifier."""
        check_is_fitted(self, "model_")
        if self.model_.classes is not None:
            return super().decision_function(X)
        X, _rows = self._coded(X)
        return self.model_.svm_decision(X, n_threads=self._threads)

    def predict_latent(self, X):
        """The latent posterior's mean (with the bias: ``μ·f(x)``, positive towards
        ``classes_[1]``, the sign of ``predict``) and variance."""
        mean, var = super().predict_latent(X)
        if self.model_.svm_scale_bias is None:  # one-vs-rest: each class's own latent
            return mean, var
        mu, bias = self.model_.svm_scale_bias
        return mean + mu * bias, var
