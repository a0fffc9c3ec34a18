"""scikit-learn estimators over the Rust library (``pacgp._pacgp``).

Each estimator validates its input the scikit-learn way, calls one of the library's fitting
entry points (the same ones ``pacgp fit`` calls), keeps the fitted library model in ``model_``
and exposes its parts as attributes with a trailing underscore. Nothing numerical happens
here: predictions, certificates and leave-one-out figures are the library's.

``n_threads`` (every estimator): ``None`` uses every core; ``k ≥ 1`` a private pool of k worker
threads; ``-1`` all cores, ``-2`` all but one, as scikit-learn's ``n_jobs``; ``0`` and more than
four threads per available core raise ValueError (the library's rule, the same as the CLI's
``--threads``). Results do not depend on it.

Tables: every estimator also fits on a pandas DataFrame with text columns, an array of objects
or strings, or (with ``missing`` set) an array with NaN cells. Their cells go to the library as
text and are coded as ``pacgp fit`` codes a CSV file: ``categorical`` "auto" (text columns,
default), a list of column names, or None; ``missing`` None (a missing cell is an error),
"drop", "zero" or "mean" (the training mean); ``na_values`` the text cells read as missing, as
``pacgp fit --na-values`` (None: "", "?", "NA", "N/A", "na", "NaN", "nan"; a list: those and
None/NaN cells, so ``na_values=[]`` keeps a category named "NA"); ``unknown_category`` "error"
or "ignore". The
coding is stored in the model (``model_.to_json()``), so ``predict`` codes later tables the
same way and ``pacgp predict`` reads the model file with a CSV of the same columns.
``input_notes_`` says what the coding did.

``certificate_["deployed"]`` bounds what ``predict`` returns (a binary classifier's or the
SVM's label, a one-vs-rest model's most probable class, a regressor's mean within ε), not the
Gibbs predictor of ``certificate_["bound"]``: by default the derandomised PAC-Bayes bound from
the same posterior and training sample (``"bound": "derandomised"``; the softmax model and
split priors have none yet).
``certify_holdout`` (every estimator): a fraction F in (0, 1) of the rows kept out of the fit
(chosen by the seed before fitting, as ``pacgp fit --certify-holdout F``); ``certificate_``'s
``"deployed"`` entry is then the test-set bound from the held-out rows
(``"bound": "binomial_tail"``), and its Gibbs bound is on the fit rows; each at δ/2.
``model_.certify(X, y)`` takes the whole sample the estimator was fitted on.

``time_limit`` (every estimator): seconds after which the optimiser stops at its best point so
far, as ``pacgp fit --time-limit``; the model is completed at those hyperparameters, and
``stopped_early_`` (``None`` for a fit that ran to its end) records why and after how many
iterations, with a ``ConvergenceWarning``. ``certificate_`` is exact for the hyperparameters
reached, which are not the optimum.

``random_state`` (every estimator with a random choice: k-means or subset inducing inputs,
restarts, the split prior's split, SOGP's order, greedy selection's subset): an int is the
library's seed itself (the same fit as ``pacgp fit --seed`` with that int; the default 0 is the
CLI's default, so a default fit is reproducible), a ``numpy.random.RandomState`` or None (numpy's
global one) draws the seed, as scikit-learn's ``check_random_state`` does.
"""

import json
import warnings

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin, clone
from sklearn.exceptions import ConvergenceWarning, DataConversionWarning
from sklearn.utils._available_if import available_if
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from . import _pacgp
from ._pacgp import DEFAULT_DELTA
from ._gp_api import (
    ClassifierEvidenceAPI,
    EvidenceAPI,
    PredictionSets,
    PriorPredictiveAPI,
    RegressionAPI,
    SVMDualAPI,
    seed_of,
)
from ._kernels import from_fitted, is_sklearn_kernel, prior_params_of, to_spec


def _behaved(a):
    """float64 and aligned, as the binding reads arrays in place (copies only if needed:
    float32 input, or a buffer unpickled at an odd address as Dask's transfers can give)."""
    return np.require(a, dtype=np.float64, requirements=["A"])


def _fit(estimator, X, y, method, labels=None, classes=None, names=None, **options):
    """The library's one fit: ``options`` by the library's option names (``None``: not given),
    checked by the library; its errors name the estimator's parameters (``names`` maps the
    library's names to them where they differ). A binary classifier's ``y`` is −1/+1 with
    ``labels`` (negative, positive); a multi-class one's is the class index with ``classes``.
    A scikit-learn kernel object is translated to pacgp's kernel expression (``_kernels``); a
    regressor's or classifier's ``intervals`` and ``interval_score`` and every estimator's
    ``certify_holdout`` go with every fit."""
    if is_sklearn_kernel(options.get("kernel")):
        options["kernel"] = to_spec(options["kernel"])
    options.setdefault("certify_holdout", estimator.certify_holdout)
    if hasattr(estimator, "intervals"):
        options.setdefault("intervals", estimator.intervals)
        options.setdefault("interval_score", estimator.interval_score)
    if np.ndim(y) == 2:
        # Several real targets: one regressor per output (``pacgp fit --target a,b``).
        return _pacgp.fit_outputs(X, y, method, options, names=names,
                                  n_threads=estimator._threads,
                                  time_limit=getattr(estimator, "time_limit", None))
    return _pacgp.fit(X, y, method, options, labels=labels, classes=classes, names=names,
                      n_threads=estimator._threads,
                      time_limit=getattr(estimator, "time_limit", None))


def _members(model):
    """The K binary models of a one-vs-rest model, as their JSON objects (none otherwise)."""
    return json.loads(model.to_json())["task"].get("members", [])


def _loo_of(certificate):
    """The leave-one-out figures that ``certify`` puts beside the bound, as their own dict."""
    if certificate is None:
        return None
    keys = ("loo_error", "loo_estimator", "loo_exact_error", "loo_log_predictive", "loo_rmse")
    return {k[len("loo_"):]: certificate.get(k) for k in keys if k in certificate}


# "stalled": the stall rule of ML-II on wide inputs (the objective fell by less than its
# amount over its window), a convergence test like the other two.
_CONVERGED = ("gradient_tolerance", "cost_tolerance", "stalled")


def _warn_unconverged(optimiser, who):
    """A ``ConvergenceWarning`` when the optimiser stopped on its iteration limit, a failed line
    search or anything but a convergence test (the library reports it; it never prints)."""
    if optimiser is None or optimiser.get("termination") in _CONVERGED + ("stopped",):
        # Stopped early: the fit's own warning says so (``stopped_early_``).
        return
    why = {"max_iterations": "hit its iteration limit",
           "line_search_failed": "stopped on a failed line search"}.get(
        optimiser.get("termination"), "stopped without a convergence test passing")
    warnings.warn(
        f"{who}: the optimiser {why} after {optimiser.get('iterations')} iterations "
        f"({optimiser.get('evaluations')} evaluations; {optimiser.get('message')}): the "
        "parameters may not be at an optimum",
        ConvergenceWarning, stacklevel=3,
    )


def _check_samples(X):
    """A GP needs two points to learn from (one is a constant target or a single class)."""
    if X.shape[0] < 2:
        raise ValueError(f"pacgp needs at least 2 samples, got n_samples = {X.shape[0]}")


# ---- Tables: a pandas DataFrame or an array of objects, coded by the library ----

def _cell(v):
    """A table cell as text, as the library reads a CSV cell: "" for a missing value (None,
    NaN, pandas' NA), numbers in round-trip form."""
    if v is None or type(v).__name__ in ("NAType", "NaTType"):
        return ""
    if isinstance(v, bytes):
        return v.decode()
    if isinstance(v, (bool, np.bool_)):
        return str(bool(v))
    if isinstance(v, (int, np.integer)):
        return str(int(v))
    if isinstance(v, (float, np.floating)):
        return "" if np.isnan(v) else repr(float(v))
    return str(v)


def _numeric_dtype(dtype):
    """Whether a DataFrame column holds numbers (a boolean column is a category)."""
    from pandas.api.types import is_bool_dtype, is_numeric_dtype

    return is_numeric_dtype(dtype) and not is_bool_dtype(dtype)


def _table(X, force=False):
    """``(columns, names)`` of text cells if X is a table — a pandas DataFrame with a column
    that is not numeric, or an array of objects or strings — or any X when ``force``; else
    None (X goes the numeric way)."""
    if hasattr(X, "columns") and hasattr(X, "dtypes") and hasattr(X, "iloc"):
        if not force and all(_numeric_dtype(t) for t in X.dtypes):
            return None
        names = [str(c) for c in X.columns]
        columns = [[_cell(v) for v in X.iloc[:, j].tolist()] for j in range(X.shape[1])]
        return columns, names
    if not force and not isinstance(X, (np.ndarray, list, tuple)):
        return None
    a = np.asarray(X, dtype=object if force else None)
    if a.ndim != 2 or not (force or a.dtype.kind in "OUS"):
        return None
    names = [f"x{j}" for j in range(a.shape[1])]
    columns = [[_cell(v) for v in a[:, j].tolist()] for j in range(a.shape[1])]
    return columns, names


class _PacgpEstimator(BaseEstimator):
    """Shared parts: fitted attributes, pickling through the model file's JSON, evaluation."""

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        # Text cells are read, as categories (the library's input coding).
        tags.input_tags.string = True
        return tags

    @property
    def _threads(self):
        """The worker threads every library call runs on: ``n_threads``, or scikit-learn's
        ``n_jobs`` on an estimator that takes it (the same counts: −1 all cores); both given
        and different is an error."""
        n_jobs = getattr(self, "n_jobs", None)
        if n_jobs is None:
            return self.n_threads
        if self.n_threads not in (None, n_jobs):
            raise ValueError(
                f"n_threads={self.n_threads!r} and n_jobs={n_jobs!r} are the same setting: "
                "give one of them"
            )
        return n_jobs

    def _certifiable(self):
        """Whether the fitted model has a certificate with these hyperparameters."""
        return True

    def _fit_inputs(self, X):
        """The numeric inputs to fit on and the rows kept (None: all), with the input coding
        to store in the model (None for numeric X). A table (a DataFrame with text columns, an
        array of objects, or any X with ``missing`` set) is coded by the library, as
        ``pacgp fit --categorical … --missing …`` codes a CSV file."""
        table = _table(X, force=getattr(self, "missing", None) is not None)
        if table is None:
            return None
        columns, names = table
        categorical = getattr(self, "categorical", "auto")
        if isinstance(categorical, str):
            categorical = [categorical]
        na_values = getattr(self, "na_values", None)
        if isinstance(na_values, str):
            na_values = [na_values]
        Xn, rows, coding, notes = _pacgp.fit_input_coding(
            columns, names, categorical=categorical, missing=getattr(self, "missing", None),
            unknown_category=getattr(self, "unknown_category", "error"),
            na_values=None if na_values is None else [str(v) for v in na_values],
        )
        self.n_features_in_ = len(names)
        if hasattr(X, "columns"):
            self.feature_names_in_ = np.asarray(names, dtype=object)
        self.input_notes_ = list(notes)
        return _behaved(Xn), np.asarray(rows, dtype=np.intp), coding

    def _coded(self, X, allow_dropped=False):
        """Inputs of a fitted model: a model fitted on a table codes X (any table with its
        columns) with its stored coding; rows its ``missing="drop"`` leaves out are an error
        unless ``allow_dropped`` (then they are skipped). The inputs and the rows kept."""
        if not self.model_.has_input_coding:
            X = _behaved(validate_data(self, X, reset=False, dtype=np.float64))
            return X, None
        columns, names = _table(X, force=True)
        Xn, rows = self.model_.encode_table(columns, names)
        if not allow_dropped and len(rows) < len(columns[0] if columns else []):
            raise ValueError(
                f"{len(columns[0]) - len(rows)} rows have a missing cell, and the model leaves "
                "such rows out (missing='drop'): fill them, or fit with missing='mean' or 'zero'"
            )
        return _behaved(Xn), np.asarray(rows, dtype=np.intp)

    def _certify_sample(self, X, y):
        """``certificate_`` and ``loo_`` from the library's ``certify`` on the training sample."""
        certificate = None
        if self.certify and self._certifiable():
            reports = self.model_.certify(
                X, y, delta=self.delta, loo=self.loo, n_threads=self._threads,
                **self._certify_options(),
            )
            certificate = json.loads(reports)[0]
        self.certificate_ = certificate
        self.loo_ = _loo_of(certificate)

    def _certify_options(self):
        return {}

    def _set_model(self, model, warn_duplicates=True):
        self.model_ = model
        self.kernel_ = self._fitted_kernel(model)
        self.theta_, self.theta_names_ = model.kernel_params
        self.fit_report_ = json.loads(model.report_json)
        # Rows that repeat an earlier row: the certificate and the intervals assume
        # independent rows, so above the library's threshold the fit warns.
        self.duplicates_ = json.loads(model.duplicates_json)
        if warn_duplicates and model.duplicate_warning is not None:
            warnings.warn(f"{type(self).__name__}: {model.duplicate_warning}", UserWarning,
                          stacklevel=3)
        # A time limit stopped the optimiser at its best point so far: the model and its
        # certificate are exact for the hyperparameters reached, which are not the optimum.
        self.stopped_early_ = self.fit_report_.get("stopped_early")
        if self.stopped_early_ is not None:
            warnings.warn(f"{type(self).__name__}: {model.stopped_early}", ConvergenceWarning,
                          stacklevel=3)
        optimiser = self.fit_report_.get("optimiser")
        if hasattr(self, "max_iter") and optimiser is not None:
            # scikit-learn's convention beside max_iter: the iterations the fit took (the
            # optimiser's over all rows, after any warm start on a subsample).
            self.n_iter_ = optimiser["iterations"]
        elif hasattr(self, "max_iter") and model.classes is not None:
            # One-vs-rest: the most iterations any class's fit took; a warning for the first
            # class whose optimiser did not converge.
            reports = [m["report"].get("optimiser") for m in _members(model)]
            self.n_iter_ = max((r["iterations"] for r in reports if r), default=0)
            optimiser = next((r for r in reports if r is not None
                              and r.get("termination") not in _CONVERGED), None)
        _warn_unconverged(optimiser, type(self).__name__)

    def _fitted_kernel(self, model):
        """The fitted kernel in the form ``kernel`` was given: a scikit-learn kernel object
        of the same structure with the fitted values (``_kernels.from_fitted``; not for a
        one-vs-rest model, whose classes each have their own), else pacgp's kernel in words
        (values on standardised inputs)."""
        given = getattr(self, "kernel", None)
        if not is_sklearn_kernel(given) or model.classes is not None:
            return model.kernel
        return from_fitted(given, json.loads(model.kernel_json), model.input_scale,
                           model.noise_variance)

    def __getstate__(self):
        # A copy: `object.__getstate__` returns the live __dict__ itself.
        state = dict(super().__getstate__())
        model = state.pop("model_", None)
        if model is not None:
            # The model travels as the JSON `pacgp fit` writes; it reloads bit for bit.
            state["_model_json"] = model.to_json()
        return state

    def __setstate__(self, state):
        text = state.pop("_model_json", None)
        if text is not None:
            state["model_"] = _pacgp.Model.from_json(text)
        super().__setstate__(state)


class _Regressor(RegressionAPI, RegressorMixin, _PacgpEstimator):
    """A regression estimator: ``fit``, ``predict(return_std=..., return_cov=...)``,
    ``sample_y``, ``predict_interval`` (given ``intervals``), ``score`` (R²).

    ``intervals`` prepares distribution-free prediction intervals when fitting (as
    ``pacgp fit --intervals``): "jackknife+" (from the closed-form leave-one-out, no refits;
    coverage ≥ 1 − 2α), "cv+[:K]" (K refits) or "split-conformal[:F]" (coverage ≥ 1 − α);
    ``interval_score`` "absolute" (default) or "gp-std" (J+GP: residuals over the GP's std)."""

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        # A y of K columns fits one regressor per output (``_fit_outputs``).
        tags.target_tags.multi_output = self._multi_output()
        return tags

    def _multi_output(self):
        """Whether a ``y`` of several columns can be fitted."""
        return True

    def _targets(self, y):
        """``y`` as fitted: one column is one target (with scikit-learn's warning where the
        estimator takes one target only), several are refused where they cannot be fitted."""
        if y.ndim != 2 or (y.shape[1] > 1 and self._multi_output()):
            return y
        if y.shape[1] > 1:
            raise ValueError(
                f"{type(self).__name__} trains on the ε-band loss: with several targets give "
                "its epsilon (one ε, in every target's units)"
            )
        if not self._multi_output():
            warnings.warn("A column-vector y was passed when a 1d array was expected. Please "
                          "change the shape of y to (n_samples, ), for example using ravel().",
                          DataConversionWarning, stacklevel=3)
        return y[:, 0]

    def fit(self, X, y):
        """Fit on inputs X (N×D, or a table: a DataFrame with text columns, an array of
        objects, or any X with ``missing`` set) and real targets y (N, or N × K for K outputs:
        one regressor per output, see ``_fit_outputs``); returns self."""
        coded = self._fit_inputs(X)
        if coded is None:
            X, y = validate_data(self, X, y, dtype=np.float64, y_numeric=True,
                                 multi_output=True)
        else:
            X, rows, coding = coded
            y = np.asarray(y, dtype=np.float64)[rows]
        y = self._targets(y)
        _check_samples(X)
        X, y = _behaved(X), _behaved(y)
        model = self._fit_model(X, y)
        model = model if coded is None else model.with_input_coding(coding)
        if y.ndim == 2:
            return self._fit_outputs(model, X, y)
        self._set_model(model)
        self.noise_variance_ = self.model_.noise_variance
        if isinstance(self, EvidenceAPI) and self._has_evidence():
            self._set_evidence()
        self._certify_sample(X, y)
        return self

    def _fit_outputs(self, model, X, Y):
        """Several outputs (``Y`` N × K): the library fitted one regressor per output
        (``model.outputs``); each becomes a fitted estimator of this class in ``estimators_``
        (its ``kernel_``, noise, evidence, leave-one-out), whose predictions ``predict``,
        ``sample_y`` and ``predict_interval`` stack as scikit-learn's multi-output shapes
        ((n, K), covariances (n, n, K), draws (n, K, n_samples)). ``kernel_`` and ``theta_``
        are the first output's, each output's are in ``kernels_``;
        ``log_marginal_likelihood`` is the sum over the outputs, as scikit-learn's for a
        multi-output ``y``. ``certificate_`` holds each output's certificate at δ
        (``"outputs"``) and all of them at once at δ/K each (``"joint"``, a union bound)."""
        self.model_ = model
        self.n_outputs_ = Y.shape[1]
        self.fit_report_ = json.loads(model.report_json)
        self.duplicates_ = json.loads(model.duplicates_json)
        if model.duplicate_warning is not None:
            warnings.warn(f"{type(self).__name__}: {model.duplicate_warning}", UserWarning,
                          stacklevel=3)
        self.estimators_ = [self._output_estimator(m, X, Y[:, j])
                            for j, m in enumerate(model.outputs)]
        first = self.estimators_[0]
        self.kernel_, self.theta_, self.theta_names_ = (
            first.kernel_, first.theta_, first.theta_names_)
        self.kernels_ = [e.kernel_ for e in self.estimators_]
        self.noise_variance_ = [e.noise_variance_ for e in self.estimators_]
        self.stopped_early_ = self.fit_report_.get("stopped_early")
        if isinstance(self, EvidenceAPI) and self._has_evidence():
            self.log_marginal_likelihood_value_ = float(
                sum(e.log_marginal_likelihood_value_ for e in self.estimators_))
        certificate = None
        if self.certify and self._certifiable():
            certificate = json.loads(model.certify_outputs(
                X, Y, delta=self.delta, loo=self.loo, n_threads=self._threads))
            for e, own in zip(self.estimators_, certificate["outputs"]):
                e.certificate_ = own["certificates"][0]
                e.loo_ = _loo_of(e.certificate_)
        self.certificate_ = certificate
        self.loo_ = [e.loo_ for e in self.estimators_]
        return self

    def _output_estimator(self, model, X, y):
        """One output's fitted estimator: a clone of this one around the output's model."""
        est = clone(self)
        est.n_features_in_ = X.shape[1]
        # The rows are the model's: its own fit has warned of copies once.
        est._set_model(model, warn_duplicates=False)
        est.noise_variance_ = model.noise_variance
        if isinstance(est, EvidenceAPI) and est._has_evidence():
            est._set_evidence()
        est.certificate_, est.loo_ = None, None
        return est

    def evaluate(self, X, y, epsilon=None):
        """The library's test metrics (RMSE, MAE, NLPD, coverage, ε-band risks) as a dict;
        with several outputs, a list of one dict per output."""
        if hasattr(self, "estimators_"):
            X, _rows = self._coded(X)
            Y = np.asarray(y, dtype=np.float64)
            return [e.evaluate(X, Y[:, j], epsilon) for j, e in enumerate(self.estimators_)]
        X, y = self._model_sample(X, y)
        return json.loads(self.model_.evaluate(X, y, epsilon))

    def _model_sample(self, X, y):
        """(inputs, targets) as the model reads them: X coded as at fit, y as reals."""
        check_is_fitted(self, "model_")
        if self.model_.has_input_coding:
            X, rows = self._coded(X, allow_dropped=True)
            y = np.asarray(y, dtype=np.float64)[rows]
        else:
            X, y = validate_data(self, X, y, reset=False, dtype=np.float64, y_numeric=True)
        return _behaved(X), _behaved(y)

    def _certify_options(self):
        return {}


class GPRegressor(PriorPredictiveAPI, EvidenceAPI, _Regressor):
    """Exact GP regression, hyperparameters by ML-II (``pacgp fit --method gpr``).

    θ is snapped onto the PAC grid (``snap=True``) so that, given ``epsilon`` (target units),
    ``certificate_`` bounds the ε-band Gibbs risk; without ``epsilon`` there is no certificate.
    Before ``fit``, ``predict`` and ``sample_y`` are the GP prior's, as scikit-learn's
    (``PriorPredictiveAPI``).

    scikit-learn's ``GaussianProcessRegressor`` parameters, where pacgp has their meaning:

    - the noise: with a pacgp kernel string σ² is fitted by ML-II (pacgp's way), and
      ``alpha`` (a number, or one per row) adds known noise variances on top. A scikit-learn
      kernel object means what it means in scikit-learn: σ² is fitted only where the kernel
      has a top-level ``WhiteKernel``, else σ² is 0 and ``alpha`` (default 1e-10,
      scikit-learn's) is the noise on every row, or row by row (with a ``WhiteKernel``,
      ``alpha`` defaults to none: the fitted σ² is at least 1e-6);
    - ``optimizer=None`` keeps a scikit-learn kernel object's values (``kernel=None``: its
      default ``1.0 * RBF(1.0)``) and the ``WhiteKernel``'s noise: nothing is fitted, the
      inputs are not standardised (a kernel fixed in advance must not depend on the sample's
      spread) and the certificate prices nothing for θ; ``optimizer`` "fmin_l_bfgs_b" (the
      default) is the library's L-BFGS; a callable is refused;
    - ``n_restarts_optimizer`` is ``restarts`` (the library's seeded ML-II restarts; give one
      of the two);
    - ``normalize_y=True`` (the default here) standardises the targets; ``False`` fits them as
      given (prior mean 0), as scikit-learn does;
    - a ``y`` of K columns fits one GP per output (``estimators_``, see
      ``_Regressor._fit_outputs``), all at one θ and σ² that maximise the sum of their log
      marginal likelihoods, as scikit-learn's (``shared_kernel=False``: each output its own
      kernel, which a holdout or CV+ and split-conformal intervals need); ``n_targets`` is
      checked against K, and before ``fit`` gives the prior's shapes.

    The noise variances are on the scale the targets are fitted on (standardised with
    ``normalize_y``), as in scikit-learn; predicted standard deviations leave them out
    (scikit-learn's too) and a certificate is about the posterior they give.
    """

    def __init__(self, kernel="se-ard", epsilon=None, restarts=0, snap=True, random_state=0,
                 certify=True, delta=DEFAULT_DELTA, loo="auto", categorical="auto", missing=None,
                 na_values=None,
                 unknown_category="error", n_threads=None, intervals=None,
                 interval_score=None, certify_holdout=None, time_limit=None,
                 optimizer="fmin_l_bfgs_b", n_restarts_optimizer=None, normalize_y=True,
                 n_targets=None, alpha=None, shared_kernel=True):
        self.kernel = kernel
        self.shared_kernel = shared_kernel
        self.alpha = alpha
        self.epsilon = epsilon
        self.restarts = restarts
        self.optimizer = optimizer
        self.n_restarts_optimizer = n_restarts_optimizer
        self.normalize_y = normalize_y
        self.n_targets = n_targets
        self.snap = snap
        self.random_state = random_state
        self.certify = certify
        self.delta = delta
        self.loo = loo
        self.categorical = categorical
        self.missing = missing
        self.na_values = na_values
        self.unknown_category = unknown_category
        self.n_threads = n_threads
        self.certify_holdout = certify_holdout
        self.time_limit = time_limit
        self.intervals = intervals
        self.interval_score = interval_score

    def fit(self, X, y):
        """Fit as every regressor does (see ``_Regressor.fit``); a ``y`` with more columns
        than ``n_targets`` is refused first, with scikit-learn's message."""
        shape = np.shape(np.asarray(y))
        columns = shape[1] if len(shape) == 2 else 1
        if self.n_targets is not None and columns != self.n_targets:
            raise ValueError(
                f"The number of targets seen in `y` is different from the parameter "
                f"`n_targets`. Got {columns} != {self.n_targets}."
            )
        return super().fit(X, y)

    def _certifiable(self):
        return self.epsilon is not None and self.snap

    def _has_evidence(self):
        return True

    def _fit_model(self, X, y):
        _check_sklearn_gpr_params(self)
        kernel = self._given_kernel()
        return _fit(self, X, y, "gpr", names={"restarts": _restarts_name(self)},
                    kernel=kernel, restarts=_restarts_of(self),
                    seed=seed_of(self.random_state), epsilon=self.epsilon, snap=self.snap,
                    delta=self.delta, shared_kernel=_shared_kernel_of(self, y),
                    **_gpr_noise_options(self, kernel, X))

    def _given_kernel(self):
        """The kernel as given; with ``optimizer=None`` and no kernel, scikit-learn's
        default ``1.0 * RBF(1.0)``, whose values are kept."""
        if self.optimizer is None and self.kernel is None:
            from sklearn.gaussian_process.kernels import RBF, ConstantKernel
            return ConstantKernel(1.0) * RBF(1.0)
        return self.kernel

    def _fitted_kernel(self, model):
        if self.optimizer is None and is_sklearn_kernel(self._given_kernel()):
            # Nothing was fitted: scikit-learn's kernel_ is a clone of the kernel kept.
            return clone(self._given_kernel())
        return super()._fitted_kernel(model)


def _check_sklearn_gpr_params(est):
    """scikit-learn's ``GaussianProcessRegressor`` parameters pacgp does not have, refused
    with the reason (see ``GPRegressor``'s doc) rather than fitted as something else."""
    if est.optimizer not in ("fmin_l_bfgs_b", None):
        raise ValueError(
            f"optimizer={est.optimizer!r}: pacgp fits the kernel's hyperparameters by ML-II "
            "with its own L-BFGS (optimizer='fmin_l_bfgs_b'), snapped onto the PAC grid with "
            "snap=True, or keeps a scikit-learn kernel's values (optimizer=None); a custom "
            "optimizer is not supported"
        )
    if est.optimizer is None and est.kernel is not None and not is_sklearn_kernel(est.kernel):
        raise ValueError(
            f"optimizer=None keeps the values of a scikit-learn kernel object; the pacgp kernel "
            f"string {est.kernel!r} has none: give kernel as a scikit-learn kernel (e.g. "
            "ConstantKernel(1.0) * RBF(1.0)), or leave optimizer at 'fmin_l_bfgs_b'"
        )
    if est.normalize_y not in (True, False):
        raise ValueError(f"normalize_y={est.normalize_y!r}: True or False")
    if est.shared_kernel not in (True, False):
        raise ValueError(f"shared_kernel={est.shared_kernel!r}: True or False")
    if est.n_targets is not None and not (isinstance(est.n_targets, (int, np.integer))
                                          and est.n_targets >= 1):
        raise ValueError(f"n_targets={est.n_targets!r}: None or a number of outputs (≥ 1)")


def _shared_kernel_of(est, y):
    """The library's ``shared_kernel`` of a ``GPRegressor``: asked for only with several
    targets (one target has nothing to share)."""
    return bool(est.shared_kernel) if np.ndim(y) == 2 else None


def _gpr_noise_options(est, kernel, X):
    """The library's noise options of a ``GPRegressor`` (see its doc): ``noise`` (σ² kept),
    ``alpha`` (known variances), ``kernel_params`` (θ kept, with ``optimizer=None``) and
    ``normalize_y``."""
    options = {"normalize_y": bool(est.normalize_y)}
    alpha = est.alpha
    if is_sklearn_kernel(kernel):
        if est.optimizer is None:
            tree = json.loads(_pacgp.kernel_tree(to_spec(kernel), np.shape(X)[1]))
            theta, white = prior_params_of(kernel, tree)
            options["kernel_params"] = [float(t) for t in theta]
            options["noise"] = float(white)
        elif not _has_white(kernel):
            options["noise"] = 0.0
        if alpha is None and not _has_white(kernel):
            alpha = 1e-10  # scikit-learn's default: the only noise of a kernel without one
    if alpha is not None:
        options["alpha"] = [float(a) for a in np.ravel(np.asarray(alpha, dtype=float))]
    return options


def _has_white(kernel):
    """Whether a scikit-learn kernel's top-level sum has a ``WhiteKernel`` (its noise)."""
    from sklearn.gaussian_process.kernels import Sum, WhiteKernel

    if isinstance(kernel, WhiteKernel):
        return True
    if isinstance(kernel, Sum):
        return _has_white(kernel.k1) or _has_white(kernel.k2)
    return False


def _restarts_of(est):
    """The library's ML-II restarts: ``n_restarts_optimizer`` (scikit-learn's name) or
    ``restarts``; both given and different is an error."""
    if est.n_restarts_optimizer is None:
        return est.restarts
    if est.restarts not in (0, est.n_restarts_optimizer):
        raise ValueError(
            f"restarts={est.restarts!r} and n_restarts_optimizer={est.n_restarts_optimizer!r} "
            "are the same setting: give one of them"
        )
    return est.n_restarts_optimizer


def _restarts_name(est):
    """The parameter the library's ``restarts`` came from, for its error messages."""
    return "restarts" if est.n_restarts_optimizer is None else "n_restarts_optimizer"


class SparseGPRegressor(_Regressor):
    """Sparse GP regression by its own objective: ``method`` "vfe" (Titsias) or "fitc", with
    ``n_inducing`` inducing inputs (default min(100, N)) initialised by ``inducing_init``
    ("kmeans", "subset" or "greedy"), seeded. On large data, ``pretrain`` (rows) optimises
    first on a seeded subsample of that many rows and then on all rows from there;
    ``max_iter`` caps the optimiser's iterations over all rows (default 300; a fit that stops
    there raises a ``ConvergenceWarning``)."""

    def __init__(self, method="vfe", n_inducing=None, kernel="se-ard", epsilon=None, random_state=0,
                 inducing_init="kmeans", certify=True, delta=DEFAULT_DELTA, loo="auto",
                 categorical="auto", missing=None, na_values=None,
                 unknown_category="error", n_threads=None, intervals=None,
                 interval_score=None, pretrain=None, max_iter=None, certify_holdout=None,
                 time_limit=None):
        self.method = method
        self.n_inducing = n_inducing
        self.inducing_init = inducing_init
        self.pretrain = pretrain
        self.max_iter = max_iter
        self.kernel = kernel
        self.epsilon = epsilon
        self.random_state = random_state
        self.certify = certify
        self.delta = delta
        self.loo = loo
        self.categorical = categorical
        self.missing = missing
        self.na_values = na_values
        self.unknown_category = unknown_category
        self.n_threads = n_threads
        self.certify_holdout = certify_holdout
        self.time_limit = time_limit
        self.intervals = intervals
        self.interval_score = interval_score

    def _certifiable(self):
        return self.epsilon is not None

    def _fit_model(self, X, y):
        if self.method not in ("vfe", "fitc", "dtc"):
            raise ValueError(f"method must be 'vfe', 'fitc' or 'dtc', got {self.method!r}")
        return _fit(self, X, y, self.method, names={"inducing": "n_inducing"},
                    inducing=self.n_inducing, kernel=self.kernel,
                    seed=seed_of(self.random_state), epsilon=self.epsilon,
                    inducing_init=self.inducing_init, delta=self.delta,
                    pretrain=self.pretrain, max_iter=self.max_iter)


class PACGPRegressor(EvidenceAPI, _Regressor):
    """PAC-GP (Reeb et al. 2018): a GP trained by minimising the PAC-Bayes bound on the ε-band
    risk (``bound`` "kl" or "sqrt"); full, or sparse (FITC form, ``n_inducing`` points) with
    ``sparse=True``. ``epsilon`` is in the target's units; ``delta`` is the bound's δ.

    ``epsilon=None`` (the default) takes ε = Φ⁻¹(3/4) ≈ 0.674 standard deviations of the
    training targets (the library's ``DEFAULT_EPSILON_SD``; ``pacgp fit`` without
    ``--epsilon`` does the same, with a note). The loss is the ε-band 0-1 loss
    ``1{|y − f(x)| > ε}`` on standardised targets, where the prior mean predicts the mean ȳ:
    at this ε the mean misses exactly half of Gaussian targets (Φ⁻¹(3/4) is a standard
    normal's median absolute deviation), so the certified risk reads on a scale from 0 (every
    target within ε) to ½ (no better than the mean), where a Bernoulli loss is most
    informative. A larger ε certifies little (at ε = 1 the mean already scores 0.32), a smaller
    one leaves the bound near 1 on small samples. The ε used is ``model_.epsilon`` and the
    fit report's notes say it.

    The tighter-bounds levers (issue 15), as ``pacgp fit``'s flags: ``prior`` "split:F" or
    "split:auto" (the data-dependent split prior, full kl PAC-GP only, split seeded by
    ``random_state``), ``hyper_prior`` "gaussian" or "uniform" (a coarse prior over θ instead of the
    paper's grid; not with ``prior``) and ``xi`` "sharp" (the exact ξ(N) instead of Maurer's
    2√N; the certificate then uses it too).

    With ``sparse=True`` on large data, ``pretrain`` and ``max_iter`` act as in
    ``SparseGPRegressor`` (``max_iter`` default 1000)."""

    def _multi_output(self):
        # Its default ε is one target's; several targets need one ε given for all.
        return self.epsilon is not None

    def __init__(self, epsilon=None, bound="kl", sparse=False, n_inducing=None, delta=DEFAULT_DELTA,
                 kernel="se-ard", random_state=0, inducing_init=None, prior=None, hyper_prior=None,
                 xi="maurer", certify=True, loo="auto", categorical="auto", missing=None,
                 na_values=None,
                 unknown_category="error", n_threads=None, intervals=None,
                 interval_score=None, pretrain=None, max_iter=None, certify_holdout=None,
                 time_limit=None):
        self.epsilon = epsilon
        self.bound = bound
        self.sparse = sparse
        self.n_inducing = n_inducing
        self.pretrain = pretrain
        self.max_iter = max_iter
        self.inducing_init = inducing_init
        self.delta = delta
        self.kernel = kernel
        self.random_state = random_state
        self.prior = prior
        self.hyper_prior = hyper_prior
        self.xi = xi
        self.certify = certify
        self.loo = loo
        self.categorical = categorical
        self.missing = missing
        self.na_values = na_values
        self.unknown_category = unknown_category
        self.n_threads = n_threads
        self.certify_holdout = certify_holdout
        self.time_limit = time_limit
        self.intervals = intervals
        self.interval_score = interval_score

    def _certify_options(self):
        return {"term": self.xi}

    def _has_evidence(self):
        # The split prior's posterior is fitted on part B with θ from part A: no one evidence.
        return not self.sparse and self.prior is None

    def _fit_model(self, X, y):
        method = "pac-sgp" if self.sparse else "pac-gp"
        return _fit(self, X, y, method, names={"inducing": "n_inducing"},
                    epsilon=None if self.epsilon is None else float(self.epsilon),
                    delta=self.delta, bound=self.bound, kernel=self.kernel,
                    seed=seed_of(self.random_state), prior=self.prior,
                    hyper_prior=self.hyper_prior, xi=self.xi, inducing=self.n_inducing,
                    inducing_init=self.inducing_init, pretrain=self.pretrain,
                    max_iter=self.max_iter)


class GreedySparseRegressor(_Regressor):
    """Zhang's sparse GP regression in the dual (seed 002): ``n_basis`` basis points chosen
    greedily, the DTC posterior on them; certified given ``epsilon``."""

    def __init__(self, n_basis=None, kernel="se-ard", epsilon=None, random_state=0, certify=True,
                 delta=DEFAULT_DELTA, loo="auto", categorical="auto", missing=None, na_values=None,
                 unknown_category="error", n_threads=None, intervals=None,
                 interval_score=None, certify_holdout=None, time_limit=None):
        self.n_basis = n_basis
        self.kernel = kernel
        self.epsilon = epsilon
        self.random_state = random_state
        self.certify = certify
        self.delta = delta
        self.loo = loo
        self.categorical = categorical
        self.missing = missing
        self.na_values = na_values
        self.unknown_category = unknown_category
        self.n_threads = n_threads
        self.certify_holdout = certify_holdout
        self.time_limit = time_limit
        self.intervals = intervals
        self.interval_score = interval_score

    def _certifiable(self):
        return self.epsilon is not None

    def _fit_model(self, X, y):
        return _fit(self, X, y, "greedy-sparse", names={"inducing": "n_basis"},
                    inducing=self.n_basis, kernel=self.kernel,
                    seed=seed_of(self.random_state),
                    epsilon=self.epsilon, delta=self.delta)


def _multiclass_fitted(estimator):
    """Whether the fitted model has K class columns (more than two classes, or a multi-class
    method on two)."""
    check_is_fitted(estimator, "model_")
    return estimator.model_.classes is not None


class _Classifier(ClassifierMixin, _PacgpEstimator):
    """A classifier with any labels: two classes are one binary model (``classes_[0]`` coded
    −1, ``classes_[1]`` +1); more (or ``multiclass`` given) are one model over K classes —
    one-vs-rest by default, whose ``certificate_`` bounds the multi-class Gibbs classifier
    ``argmax_k f_k(x)`` with the KL and prices of its K classes added up.

    ``intervals="split-conformal[:F]"`` prepares conformal prediction sets when fitting (as
    ``pacgp fit --intervals`` on a classifier): the estimator is refitted on a seeded fraction
    F of the sample (default 0.5) and calibrated on the rest, by ``interval_score`` "lac"
    (default: 1 − p(y|x), the smallest sets on average) or "aps" (the probability of the labels
    at least as likely as y, not randomised: larger sets where the model is unsure);
    ``predict_set(X, alpha)`` then gives sets that hold a new label with probability ≥ 1 − α."""

    def fit(self, X, y):
        """Fit on inputs X (N×D, or a table: a DataFrame with text columns, an array of
        objects, or any X with ``missing`` set) and labels y (any values, at least two
        distinct); returns self."""
        coded = self._fit_inputs(X)
        if coded is None:
            X, y = validate_data(self, X, y, dtype=np.float64)
        else:
            X, rows, coding = coded
            y = np.asarray(y)[rows]
        check_classification_targets(y)
        _check_samples(X)
        self.classes_, index = np.unique(y, return_inverse=True)
        if len(self.classes_) < 2:
            raise ValueError(
                f"pacgp's classifiers need at least 2 classes in y, got {len(self.classes_)} class"
            )
        X = _behaved(X)
        if len(self.classes_) > 2 or getattr(self, "multiclass", None) is not None:
            target = _behaved(index.astype(np.float64))
            model = self._fit_model(X, target, classes=[str(c) for c in self.classes_])
        else:
            target = np.where(index == 1, 1.0, -1.0)
            negative, positive = (str(c) for c in self.classes_)
            model = self._fit_model(X, target, labels=(negative, positive))
        self._set_model(model if coded is None else model.with_input_coding(coding))
        self._certify_sample(X, target)
        self._fitted_on(X, target)
        return self

    def _fitted_on(self, X, target):
        """After a fit: what a subclass reads off the model and its numeric training inputs X
        (rows as fitted) with the fitted targets (±1 for two classes, else class indices)."""

    def _certify_options(self):
        # None: the Gibbs classifier the model was fitted for.
        return {"predictor": getattr(self, "predictor", None)}

    def _class_predictions(self, X):
        """The library's K-class predictions: probabilities, ln scores, class indices, latent
        means and variances."""
        X, _rows = self._coded(X)
        return self.model_.predict_classes(X, n_threads=self._threads)

    def _positive_probability(self, X):
        check_is_fitted(self, "model_")
        X, _rows = self._coded(X)
        p, _mean, _var = self.model_.predict_classification(X, n_threads=self._threads)
        return p

    def predict_proba(self, X):
        """Class probabilities, columns in the order of ``classes_`` (each row sums to 1).
        Two classes: ``p(y = classes_[1] | x)`` of the binary model. K classes (one-vs-rest):
        the probability that the certified Gibbs classifier ``argmax_k f_k(x)`` says each
        class (its expected 0-1 loss is the Gibbs error the certificate bounds); the softmax
        Laplace: its predictive ``E[softmax f(x)]``."""
        check_is_fitted(self, "model_")
        if _multiclass_fitted(self):
            return self._class_predictions(X)[0]
        p = self._positive_probability(X)
        return np.column_stack([1.0 - p, p])

    def predict_set(self, X, alpha=0.1):
        """Conformal prediction sets of level 1 − ``alpha`` at X (the estimator fitted with
        ``intervals="split-conformal[:F]"``, or ``"jackknife+"`` for any classifier without
        a split prior; sogp's refits it without each training row): a
        ``PredictionSets(sets, statement)``, ``sets`` a boolean array of shape (n_samples,
        n_classes) whose column j says whether ``classes_[j]`` is in the row's set (MAPIE's
        layout, one level), ``statement`` a dict naming the method, the score and the
        guarantee: a new point's label is in its set with probability ≥ 1 − α (split
        conformal; jackknife+: ≥ 1 − 2α for exact leave-one-out models, approximate for the
        classifier's approximate leave-one-out). Split-conformal sets come from the model
        refitted on part A, so a set need not hold ``predict``'s label; any set may be empty."""
        check_is_fitted(self, "model_")
        X, _rows = self._coded(X)
        member, k, statement = self.model_.predict_sets(X, float(alpha), n_threads=self._threads)
        return PredictionSets(np.asarray(member).reshape(-1, k), json.loads(statement))

    def predict(self, X):
        """The most probable class (binary: the Bayes classifier ``sgn(μ + b)``)."""
        check_is_fitted(self, "model_")
        if _multiclass_fitted(self):
            return self.classes_[self._class_predictions(X)[2]]
        X, _rows = self._coded(X)
        positive = self.model_.predict_labels(X, n_threads=self._threads) > 0
        return self.classes_[positive.astype(int)]

    @available_if(_multiclass_fitted)
    def decision_function(self, X):
        """K-class models only: scores whose softmax is ``predict_proba`` (the ln
        probabilities before normalisation), columns in the order of ``classes_``; with
        two classes (a multi-class method on two) the difference of the two. Binary models
        have none (ranking by the latent mean differs from ranking by the probabilities;
        ``predict_latent`` gives the mean)."""
        scores = self._class_predictions(X)[1]
        if scores.shape[1] == 2:
            return scores[:, 1] - scores[:, 0]
        return scores

    def predict_latent(self, X):
        """The latent posterior's mean μ(x) (positive towards ``classes_[1]``) and variance;
        K-class models: N×K arrays, one column per class of ``classes_``.

        (Not ``decision_function``: ranking by μ differs from ranking by the probabilities,
        which also depend on the variance.)"""
        check_is_fitted(self, "model_")
        if _multiclass_fitted(self):
            p = self._class_predictions(X)
            return p[3], p[4]
        X, _rows = self._coded(X)
        _p, mean, var = self.model_.predict_classification(X, n_threads=self._threads)
        return mean, var

    def evaluate(self, X, y):
        """The library's test metrics (error rate, log loss, Gibbs and Bayes risks) as a dict."""
        X, target = self._model_sample(X, y)
        return json.loads(self.model_.evaluate(X, target))

    def _model_sample(self, X, y):
        """(inputs, targets) as the model reads them: X coded as at fit, the labels as the
        fit coded them (±1 for two classes, the index in ``classes_`` for more)."""
        check_is_fitted(self, "model_")
        if self.model_.has_input_coding:
            X, rows = self._coded(X, allow_dropped=True)
            y = np.asarray(y)[rows]
        else:
            X, y = validate_data(self, X, y, reset=False, dtype=np.float64)
        known = np.isin(y, self.classes_)
        if not known.all():
            raise ValueError(f"label {y[~known][0]!r} is not one of classes_ {self.classes_}")
        if _multiclass_fitted(self):
            target = np.searchsorted(self.classes_, y).astype(np.float64)
        else:
            target = np.where(y == self.classes_[1], 1.0, -1.0)
        return _behaved(X), _behaved(target)


def _laplace_binary(estimator):
    """Whether the fitted classifier is one binary Laplace model fitted on every row it was
    given (it then has an evidence on that sample; a held-out fraction or a split prior leaves
    rows out of the fit)."""
    check_is_fitted(estimator, "model_")
    return (estimator.method == "laplace" and estimator.model_.classes is None
            and estimator.prior is None and estimator.certify_holdout is None)


class GPClassifier(ClassifierEvidenceAPI, _Classifier):
    """GP classification: ``method`` "laplace", "ep", "mean-field", "ivm", "sogp", or
    "pac-gpc" (the classifier trained by its PAC-Bayes bound, ``pacgp fit --method pac-gpc``).

    The kernel is chosen by the PAC-Bayes bound among nine fixed SE kernels
    (``select="bound"``, the default without ``kernel``) or by ML-II from ``kernel`` snapped
    onto the PAC grid (``select="ml2"``, the default when ``kernel`` is given to laplace, ep or
    ivm — a pacgp string or a scikit-learn kernel object; pac-gpc instead optimises θ from
    ``kernel`` on the grid); ``certificate_`` bounds the Gibbs error of ``predictor``
    ("latent", the default: ``sgn(f + b)``, or "noisy"). ``loo="auto"`` (the default) puts the
    fast leave-one-out estimate beside it where the model has one: pac-gpc's is the cavities
    of its bound-trained sites (the posterior without each row's site, not refitted), and
    ``loo="exact"`` is then an error.

    More than two classes are fitted one-vs-rest (``multiclass="one-vs-rest"``, the default
    then): class k against the rest by the method, certified together; ``multiclass="softmax"``
    (laplace only) fits the multi-class Laplace approximation with the softmax likelihood, whose
    coupled Gibbs risk is sampled and bounded at a share of δ (no leave-one-out estimate).
    ``classes_`` lists the labels; ``predict_proba`` has one column per class;
    ``decision_function`` gives their ln scores.

    The data-dependent split prior (issue 15; ``pacgp fit --prior``, ``--bound``,
    ``--prior-scale``): ``prior`` "split:F" or "split:auto" (laplace or pac-gpc; θ by ML-II on a
    seeded part A from ``kernel``, default SE-ARD, split seeded by ``random_state``; the certificate is on
    part B), ``bound`` "kl" (default) or "catoni" (Catoni's bound at a λ fixed on part A) and
    ``prior_scale`` "auto" or a number t > 0 (the prior's covariance ``t·k_A``),
    ``prior_kernel`` "kernel" or "auto" (SE iso or ``kernel``, chosen on a nested split of part
    A; ``--prior-kernel``) and ``both_directions`` (the parts also swapped, the lower
    certificate kept for ``ln 2`` more; ``--both-directions``). Its ``certificate_`` is the
    split certificate, with no leave-one-out estimate.

    ``n_jobs`` is scikit-learn's name for ``n_threads`` (the same counts; give one of the two):
    the worker threads of the fit and of every prediction; results do not depend on it.
    ``n_restarts_optimizer`` is ``restarts``: seeded random restarts of ML-II (laplace and ep
    with the kernel by ML-II; θ stays on the PAC grid, whose price covers any point of it);
    ``optimizer`` "fmin_l_bfgs_b" (the default) is the library's L-BFGS, and anything else is
    refused with the reason.
    """

    def __init__(self, method="laplace", likelihood=None, select=None, kernel=None,
                 active_set=None, kappa=None, input_noise=None, delta=DEFAULT_DELTA, random_state=0,
                 predictor=None, certify=True, loo="auto", prior=None, bound=None,
                 prior_scale=None, prior_kernel=None, both_directions=False, multiclass=None,
                 categorical="auto", missing=None,
                 na_values=None, unknown_category="error", n_threads=None,
                 certify_holdout=None, time_limit=None, intervals=None, interval_score=None,
                 n_jobs=None, restarts=0, n_restarts_optimizer=None, optimizer="fmin_l_bfgs_b"):
        self.n_jobs = n_jobs
        self.restarts = restarts
        self.n_restarts_optimizer = n_restarts_optimizer
        self.optimizer = optimizer
        self.intervals = intervals
        self.interval_score = interval_score
        self.method = method
        self.likelihood = likelihood
        self.select = select
        self.kernel = kernel
        self.active_set = active_set
        self.kappa = kappa
        self.input_noise = input_noise
        self.delta = delta
        self.random_state = random_state
        self.predictor = predictor
        self.certify = certify
        self.loo = loo
        self.prior = prior
        self.bound = bound
        self.prior_scale = prior_scale
        self.prior_kernel = prior_kernel
        self.both_directions = both_directions
        self.multiclass = multiclass
        self.categorical = categorical
        self.missing = missing
        self.na_values = na_values
        self.unknown_category = unknown_category
        self.n_threads = n_threads
        self.certify_holdout = certify_holdout
        self.time_limit = time_limit

    def _fit_model(self, X, y, **target):
        if self.optimizer != "fmin_l_bfgs_b":
            raise ValueError(
                f"optimizer={self.optimizer!r}: GPClassifier fits the kernel by ML-II with the "
                "library's L-BFGS (optimizer='fmin_l_bfgs_b'), snapped onto the PAC grid; "
                "keeping the kernel's values or a custom optimizer is not supported"
            )
        restarts = _restarts_of(self)
        return _fit(
            self, X, y, self.method, multiclass=self.multiclass, **target,
            names={"restarts": _restarts_name(self)},
            restarts=restarts if restarts else None,
            likelihood=self.likelihood, active_set=self.active_set, kappa=self.kappa,
            input_noise=self.input_noise, kernel=self.kernel, delta=self.delta,
            seed=seed_of(self.random_state), predictor=self.predictor, prior=self.prior,
            select=self.select, bound=self.bound, prior_scale=self.prior_scale,
            prior_kernel=self.prior_kernel,
            # A flag, as on the command line: False is the flag not given.
            both_directions=bool(self.both_directions) or None,
        )

    def _fitted_on(self, X, target):
        """A binary Laplace model keeps its sample for ``log_marginal_likelihood``."""
        if _laplace_binary(self):
            self._set_evidence(X, target)

    @available_if(_laplace_binary)
    def log_marginal_likelihood(self, theta=None, eval_gradient=False, clone_kernel=True):
        """A binary Laplace model's ``ln q(y | X, θ)`` (``ClassifierEvidenceAPI``); other
        models (other methods, K classes, a split prior) have none."""
        return super().log_marginal_likelihood(theta, eval_gradient, clone_kernel)

    def latent_mean_and_variance(self, X):
        """scikit-learn's name for a binary model's ``predict_latent``: the latent posterior's
        mean (positive towards ``classes_[1]``) and variance at X. A K-class model is refused,
        as scikit-learn refuses it (``predict_latent`` gives its N×K arrays)."""
        if _multiclass_fitted(self):
            raise ValueError(
                "Returning the mean and variance of the latent function f is only supported "
                "for binary classification; predict_latent gives each class's"
            )
        return self.predict_latent(X)



class SparseGPClassifier(_Classifier):
    """Sparse variational GP classification (probit; Hensman, Matthews & Ghahramani 2015): the
    kernel, ``n_inducing`` inducing inputs (default min(100, N), placed by ``inducing_init``:
    "kmeans", "subset" or "greedy", seeded by ``random_state``) and the whitened Gaussian q(u)
    trained together — by the evidence lower bound (``objective="elbo"``, ``pacgp fit --method
    svgp``) or by its own PAC-Bayes bound on the Gibbs error (``objective="bound"``,
    ``--method pac-svgp``; ``bound`` "kl", the default, or "sqrt"). One objective over row
    blocks: O(N·M²) time and O(M²) memory beyond the data per evaluation, on ``n_threads``
    threads. θ ends on the PAC grid and is priced there; ``certificate_`` bounds the latent Gibbs
    classifier's error, beside the leave-one-out estimate of its rows' sites removed from q(u)
    (docs/math.md eqs. 12.7–12.8; the bound's sites for ``objective="bound"``, none with a
    split prior), which ``intervals="jackknife+"`` also reads for its prediction sets. Small samples (N·M² ≤ 3·10⁸) train on all
    rows by L-BFGS (``max_iter`` iterations, default 1000); larger ones, or any with
    ``batch_size`` given, by Adam on seeded minibatches of ``batch_size`` rows (default 1024;
    ``max_iter`` steps, default 2000). ``likelihood`` "probit" (default) or "logistic": the
    link of the ELBO and of ``predict_proba`` (the bound is on the latent Gibbs classifier
    ``sgn f(x)``, whichever the link). More than two classes: one-vs-rest, certified together.
    ``prior`` "split:F" or "split:auto" (``objective="bound"``, binary): the data-dependent
    split prior (``--prior split:F``): θ, Z and q_A(u) by the ELBO on a part A of the sample
    (fraction F, seeded by ``random_state``), q(u) alone by the bound on the rest against part
    A's posterior; the certificate is on the rest and charges no price for θ."""

    def __init__(self, objective="elbo", n_inducing=None, kernel="se-ard",
                 inducing_init="kmeans", bound=None, likelihood="probit", max_iter=None,
                 batch_size=None, delta=DEFAULT_DELTA, random_state=0, certify=True, loo="auto",
                 categorical="auto", missing=None,
                 na_values=None, unknown_category="error", n_threads=None,
                 certify_holdout=None, time_limit=None, intervals=None, interval_score=None,
                 prior=None):
        self.prior = prior
        self.intervals = intervals
        self.interval_score = interval_score
        self.objective = objective
        self.likelihood = likelihood
        self.n_inducing = n_inducing
        self.kernel = kernel
        self.inducing_init = inducing_init
        self.bound = bound
        self.max_iter = max_iter
        self.batch_size = batch_size
        self.delta = delta
        self.random_state = random_state
        self.certify = certify
        self.loo = loo
        self.categorical = categorical
        self.missing = missing
        self.na_values = na_values
        self.unknown_category = unknown_category
        self.n_threads = n_threads
        self.certify_holdout = certify_holdout
        self.time_limit = time_limit

    def _fit_model(self, X, y, **target):
        methods = {"elbo": "svgp", "bound": "pac-svgp"}
        if self.objective not in methods:
            raise ValueError(f"objective must be 'elbo' or 'bound', got {self.objective!r}")
        return _fit(self, X, y, methods[self.objective], **target,
                    names={"inducing": "n_inducing"}, inducing=self.n_inducing,
                    kernel=self.kernel, inducing_init=self.inducing_init, bound=self.bound,
                    likelihood=self.likelihood, max_iter=self.max_iter,
                    batch_size=self.batch_size, delta=self.delta, prior=self.prior,
                    seed=seed_of(self.random_state))


class SVMClassifier(SVMDualAPI, _Classifier):
    """The SVM read as a GP's MAP (seed 001): kernel and slack chosen by the linear-response
    leave-one-out over fixed menus unless given; certified (bias in the prior) unless
    ``bias=True``. More than two classes: one SVM per class against the rest, certified
    together; the classes share one (kernel, slack) candidate, the one of fewest multi-class
    leave-one-out errors (priced once), and each chooses its scale μ."""

    def __init__(self, kernel=None, lengthscale=None, slack="linear", C=None, input_noise=None,
                 solver="smo", bias=False, delta=DEFAULT_DELTA, certify=True, loo="auto",
                 categorical="auto", missing=None, na_values=None,
                 unknown_category="error", n_threads=None, certify_holdout=None, time_limit=None,
                 intervals=None, interval_score=None):
        self.intervals = intervals
        self.interval_score = interval_score
        self.kernel = kernel
        self.lengthscale = lengthscale
        self.slack = slack
        self.C = C
        self.input_noise = input_noise
        self.solver = solver
        self.bias = bias
        self.delta = delta
        self.certify = certify
        self.loo = loo
        self.categorical = categorical
        self.missing = missing
        self.na_values = na_values
        self.unknown_category = unknown_category
        self.n_threads = n_threads
        self.certify_holdout = certify_holdout
        self.time_limit = time_limit

    def _certifiable(self):
        return not self.bias

    def _fitted_on(self, X, target):
        """A two-class SVM's dual (``support_`` …) from the model and the training inputs."""
        if len(self.classes_) == 2:
            self._set_dual(X, target)

    def _fit_model(self, X, y, **target):
        return _fit(self, X, y, "svm", **target, names={"c": "C"},
                    kernel=self.kernel, lengthscale=self.lengthscale, slack=self.slack,
                    c=self.C, input_noise=self.input_noise, solver=self.solver,
                    bias=self.bias, delta=self.delta)
