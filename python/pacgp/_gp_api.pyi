"""Type stub of ``pacgp._gp_api``: scikit-learn's GP and SVM API mixins of the estimators."""

from typing import Any, Dict, Literal, NamedTuple, Optional, Tuple, Union, overload

import numpy as np
from numpy.typing import ArrayLike, NDArray

_F64 = NDArray[np.float64]
_RandomState = Union[int, np.integer, np.random.RandomState, None]

class PredictionIntervals(NamedTuple):
    """Prediction intervals at level 1 − α and the guarantee (``statement``)."""

    lower: _F64
    upper: _F64
    statement: Dict[str, Any]

class PredictionSets(NamedTuple):
    """A classifier's prediction sets at level 1 − α: a boolean (n_samples, n_classes) array
    and the guarantee (``statement``)."""

    sets: NDArray[np.bool_]
    statement: Dict[str, Any]

def seed_of(random_state: _RandomState) -> int: ...

class RegressionAPI:
    @overload
    def predict(
        self, X: Any, return_std: Literal[False] = False, return_cov: Literal[False] = False
    ) -> _F64: ...
    @overload
    def predict(
        self, X: Any, return_std: Literal[True], return_cov: Literal[False] = False
    ) -> Tuple[_F64, _F64]: ...
    @overload
    def predict(
        self, X: Any, return_std: Literal[False] = False, *, return_cov: Literal[True]
    ) -> Tuple[_F64, _F64]: ...
    @overload
    def predict(
        self, X: Any, return_std: bool = False, return_cov: bool = False
    ) -> Union[_F64, Tuple[_F64, _F64]]: ...
    def sample_y(self, X: Any, n_samples: int = 1, random_state: _RandomState = 0) -> _F64: ...
    def predict_interval(self, X: Any, alpha: float = 0.1) -> PredictionIntervals: ...

class PriorPredictiveAPI:
    """Before ``fit``: ``predict`` and ``sample_y`` of the GP prior (RegressionAPI's
    signatures; outputs per ``n_targets``)."""

    def predict(
        self, X: Any, return_std: bool = False, return_cov: bool = False
    ) -> Union[NDArray[np.float64], Tuple[NDArray[np.float64], NDArray[np.float64]]]: ...
    def sample_y(
        self, X: Any, n_samples: int = 1, random_state: _RandomState = 0
    ) -> NDArray[np.float64]: ...

class EvidenceAPI:
    evidence_theta_: _F64
    evidence_theta_names_: list[str]
    log_marginal_likelihood_value_: float
    @overload
    def log_marginal_likelihood(
        self,
        theta: Optional[ArrayLike] = None,
        eval_gradient: Literal[False] = False,
        clone_kernel: bool = True,
    ) -> float: ...
    @overload
    def log_marginal_likelihood(
        self, theta: Optional[ArrayLike], eval_gradient: Literal[True], clone_kernel: bool = True
    ) -> Tuple[float, _F64]: ...
    @overload
    def log_marginal_likelihood(
        self, theta: Optional[ArrayLike] = None, *, eval_gradient: Literal[True],
        clone_kernel: bool = True,
    ) -> Tuple[float, _F64]: ...

class ClassifierEvidenceAPI(EvidenceAPI): ...

class SVMDualAPI:
    support_: NDArray[np.int32]
    support_vectors_: _F64
    dual_coef_: _F64
    intercept_: _F64
    n_support_: NDArray[np.int32]
    def decision_function(self, X: Any) -> _F64: ...
    def predict_latent(self, X: Any) -> Tuple[_F64, _F64]: ...
