"""Type stub of ``pacgp._estimators``: the scikit-learn estimators (see the module's and each
class's docstring for what the parameters mean)."""

from typing import Any, Dict, List, Optional, Sequence, Tuple, TypeVar, Union

import numpy as np
from numpy.typing import NDArray
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin

from ._gp_api import (
    ClassifierEvidenceAPI,
    EvidenceAPI,
    PredictionSets,
    PriorPredictiveAPI,
    RegressionAPI,
    SVMDualAPI,
    _RandomState,
)
from ._pacgp import Model

_F64 = NDArray[np.float64]
_Self = TypeVar("_Self", bound="_PacgpEstimator")

#: A pacgp kernel in words ("se-ard", "matern52+linear", ...) or a scikit-learn kernel object.
_Kernel = Any
#: ``categorical``: "auto", a list of column names, or None.
_Categorical = Union[str, Sequence[str], None]

class _PacgpEstimator(BaseEstimator):
    model_: Model
    kernel_: Any
    theta_: List[float]
    theta_names_: List[str]
    fit_report_: Dict[str, Any]
    stopped_early_: Optional[Dict[str, Any]]
    duplicates_: Optional[Dict[str, Any]]
    certificate_: Optional[Dict[str, Any]]
    loo_: Optional[Dict[str, Any]]
    n_features_in_: int
    feature_names_in_: NDArray[np.object_]
    input_notes_: List[str]
    n_iter_: int

class _Regressor(RegressionAPI, RegressorMixin, _PacgpEstimator):
    #: One output: its σ²; several: one per output.
    noise_variance_: Union[Optional[float], List[Optional[float]]]
    #: Several outputs (``y`` of K columns): each output's fitted estimator and kernel.
    n_outputs_: int
    estimators_: List[Any]
    kernels_: List[Any]
    def fit(self: _Self, X: Any, y: Any) -> _Self: ...
    def evaluate(
        self, X: Any, y: Any, epsilon: Optional[float] = None
    ) -> Union[Dict[str, Any], List[Dict[str, Any]]]: ...

class GPRegressor(PriorPredictiveAPI, EvidenceAPI, _Regressor):
    def __init__(
        self,
        kernel: _Kernel = "se-ard",
        epsilon: Optional[float] = None,
        restarts: int = 0,
        snap: bool = True,
        random_state: _RandomState = 0,
        certify: bool = True,
        delta: float = 0.01,
        loo: str = "auto",
        categorical: _Categorical = "auto",
        missing: Optional[str] = None,
        na_values: Optional[Union[str, Sequence[str]]] = None,
        unknown_category: str = "error",
        n_threads: Optional[int] = None,
        intervals: Optional[str] = None,
        interval_score: Optional[str] = None,
        certify_holdout: Optional[float] = None,
        time_limit: Optional[float] = None,
        optimizer: Any = "fmin_l_bfgs_b",
        n_restarts_optimizer: Optional[int] = None,
        normalize_y: bool = True,
        n_targets: Optional[int] = None,
        alpha: Optional[Union[float, Sequence[float], Any]] = None,
        shared_kernel: bool = True,
    ) -> None: ...

class SparseGPRegressor(_Regressor):
    def __init__(
        self,
        method: str = "vfe",
        n_inducing: Optional[int] = None,
        kernel: _Kernel = "se-ard",
        epsilon: Optional[float] = None,
        random_state: _RandomState = 0,
        inducing_init: str = "kmeans",
        certify: bool = True,
        delta: float = 0.01,
        loo: str = "auto",
        categorical: _Categorical = "auto",
        missing: Optional[str] = None,
        na_values: Optional[Union[str, Sequence[str]]] = None,
        unknown_category: str = "error",
        n_threads: Optional[int] = None,
        intervals: Optional[str] = None,
        interval_score: Optional[str] = None,
        pretrain: Optional[int] = None,
        max_iter: Optional[int] = None,
        certify_holdout: Optional[float] = None,
        time_limit: Optional[float] = None,
    ) -> None: ...

class PACGPRegressor(EvidenceAPI, _Regressor):
    def __init__(
        self,
        epsilon: Optional[float] = None,
        bound: str = "kl",
        sparse: bool = False,
        n_inducing: Optional[int] = None,
        delta: float = 0.01,
        kernel: _Kernel = "se-ard",
        random_state: _RandomState = 0,
        inducing_init: Optional[str] = None,
        prior: Optional[str] = None,
        hyper_prior: Optional[str] = None,
        xi: str = "maurer",
        certify: bool = True,
        loo: str = "auto",
        categorical: _Categorical = "auto",
        missing: Optional[str] = None,
        na_values: Optional[Union[str, Sequence[str]]] = None,
        unknown_category: str = "error",
        n_threads: Optional[int] = None,
        intervals: Optional[str] = None,
        interval_score: Optional[str] = None,
        pretrain: Optional[int] = None,
        max_iter: Optional[int] = None,
        certify_holdout: Optional[float] = None,
        time_limit: Optional[float] = None,
    ) -> None: ...

class GreedySparseRegressor(_Regressor):
    def __init__(
        self,
        n_basis: Optional[int] = None,
        kernel: _Kernel = "se-ard",
        epsilon: Optional[float] = None,
        random_state: _RandomState = 0,
        certify: bool = True,
        delta: float = 0.01,
        loo: str = "auto",
        categorical: _Categorical = "auto",
        missing: Optional[str] = None,
        na_values: Optional[Union[str, Sequence[str]]] = None,
        unknown_category: str = "error",
        n_threads: Optional[int] = None,
        intervals: Optional[str] = None,
        interval_score: Optional[str] = None,
        certify_holdout: Optional[float] = None,
        time_limit: Optional[float] = None,
    ) -> None: ...

class _Classifier(ClassifierMixin, _PacgpEstimator):
    classes_: NDArray[Any]
    def fit(self: _Self, X: Any, y: Any) -> _Self: ...
    def predict_proba(self, X: Any) -> _F64: ...
    def predict_set(self, X: Any, alpha: float = 0.1) -> PredictionSets: ...
    def predict(self, X: Any) -> NDArray[Any]: ...
    def decision_function(self, X: Any) -> _F64: ...
    def predict_latent(self, X: Any) -> Tuple[_F64, _F64]: ...
    def evaluate(self, X: Any, y: Any) -> Dict[str, Any]: ...

class GPClassifier(ClassifierEvidenceAPI, _Classifier):
    def __init__(
        self,
        method: str = "laplace",
        likelihood: Optional[str] = None,
        select: Optional[str] = None,
        kernel: Optional[_Kernel] = None,
        active_set: Optional[int] = None,
        kappa: Optional[float] = None,
        input_noise: Optional[float] = None,
        delta: float = 0.01,
        random_state: _RandomState = 0,
        predictor: Optional[str] = None,
        certify: bool = True,
        loo: str = "auto",
        prior: Optional[str] = None,
        bound: Optional[str] = None,
        prior_scale: Union[str, float, None] = None,
        prior_kernel: Optional[str] = None,
        both_directions: bool = False,
        multiclass: Optional[str] = None,
        categorical: _Categorical = "auto",
        missing: Optional[str] = None,
        na_values: Optional[Union[str, Sequence[str]]] = None,
        unknown_category: str = "error",
        n_threads: Optional[int] = None,
        certify_holdout: Optional[float] = None,
        time_limit: Optional[float] = None,
        intervals: Optional[str] = None,
        interval_score: Optional[str] = None,
        n_jobs: Optional[int] = None,
        restarts: int = 0,
        n_restarts_optimizer: Optional[int] = None,
        optimizer: Any = "fmin_l_bfgs_b",
    ) -> None: ...
    def latent_mean_and_variance(self, X: Any) -> Tuple[_F64, _F64]: ...

class SparseGPClassifier(_Classifier):
    def __init__(
        self,
        objective: str = "elbo",
        n_inducing: Optional[int] = None,
        kernel: _Kernel = "se-ard",
        inducing_init: str = "kmeans",
        bound: Optional[str] = None,
        likelihood: str = "probit",
        max_iter: Optional[int] = None,
        batch_size: Optional[int] = None,
        delta: float = 0.01,
        random_state: _RandomState = 0,
        certify: bool = True,
        loo: str = "auto",
        categorical: _Categorical = "auto",
        missing: Optional[str] = None,
        na_values: Optional[Union[str, Sequence[str]]] = None,
        unknown_category: str = "error",
        n_threads: Optional[int] = None,
        certify_holdout: Optional[float] = None,
        time_limit: Optional[float] = None,
        intervals: Optional[str] = None,
        interval_score: Optional[str] = None,
        prior: Optional[str] = None,
    ) -> None: ...

class SVMClassifier(SVMDualAPI, _Classifier):
    def __init__(
        self,
        kernel: Optional[_Kernel] = None,
        lengthscale: Optional[float] = None,
        slack: str = "linear",
        C: Optional[float] = None,
        input_noise: Optional[float] = None,
        solver: str = "smo",
        bias: bool = False,
        delta: float = 0.01,
        certify: bool = True,
        loo: str = "auto",
        categorical: _Categorical = "auto",
        missing: Optional[str] = None,
        na_values: Optional[Union[str, Sequence[str]]] = None,
        unknown_category: str = "error",
        n_threads: Optional[int] = None,
        certify_holdout: Optional[float] = None,
        time_limit: Optional[float] = None,
        intervals: Optional[str] = None,
        interval_score: Optional[str] = None,
    ) -> None: ...
