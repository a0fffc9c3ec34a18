"""Type stub of the extension module ``pacgp._pacgp`` (crates/pacgp-py, PyO3).

``Model``, ``PacgpError`` and the functions the estimators call are typed here; the sharded
map-reduce helpers that ``pacgp.distributed`` wraps are left to the module ``__getattr__``
below (``Any``): call them through ``pacgp.distributed``.
"""

from typing import Any, Mapping, Optional, Sequence, Tuple, final

import numpy as np
from numpy.typing import ArrayLike, NDArray

_F64 = NDArray[np.float64]

DEFAULT_DELTA: float
"""δ's default, the library's ``pacgp::bounds::DEFAULT_DELTA``: the estimators' ``delta=``."""

class PacgpError(RuntimeError):
    """A numerical failure in pacgp (a matrix not positive definite even after jitter, a
    non-finite objective)."""

@final
class Model:
    """A fitted pacgp model (any family), immutable."""

    def predict_mean(self, x: ArrayLike, n_threads: Optional[int] = None) -> _F64: ...
    def predict_regression(
        self, x: ArrayLike, n_threads: Optional[int] = None
    ) -> Tuple[_F64, _F64, _F64]: ...
    def predict_intervals(
        self, x: ArrayLike, alpha: float, n_threads: Optional[int] = None
    ) -> Tuple[_F64, _F64, str]: ...
    def predict_sets(
        self, x: ArrayLike, alpha: float, n_threads: Optional[int] = None
    ) -> Tuple[NDArray[np.bool_], int, str]: ...
    def predict_labels(self, x: ArrayLike, n_threads: Optional[int] = None) -> _F64: ...
    def predict_classification(
        self, x: ArrayLike, n_threads: Optional[int] = None
    ) -> Tuple[_F64, _F64, _F64]: ...
    def predict_regression_cov(
        self, x: ArrayLike, n_threads: Optional[int] = None
    ) -> Tuple[_F64, _F64]: ...
    def sample_regression(
        self, x: ArrayLike, n_samples: int, seed: int, n_threads: Optional[int] = None
    ) -> Tuple[_F64, float]: ...
    @property
    def evidence_params(self) -> Tuple[list[float], list[str]]: ...
    def log_evidence(
        self,
        params: Optional[Sequence[float]] = None,
        gradient: bool = False,
        n_threads: Optional[int] = None,
    ) -> Tuple[float, Optional[list[float]]]: ...
    def classifier_log_evidence(
        self,
        x: ArrayLike,
        y: ArrayLike,
        theta: Optional[Sequence[float]] = None,
        gradient: bool = False,
        n_threads: Optional[int] = None,
    ) -> Tuple[float, Optional[list[float]]]: ...
    def svm_decision(self, x: ArrayLike, n_threads: Optional[int] = None) -> _F64: ...
    def svm_dual(self, x_train: ArrayLike) -> Tuple[list[int], list[float], float]: ...
    @property
    def svm_scale_bias(self) -> Optional[Tuple[float, float]]: ...
    def predict_classes(
        self, x: ArrayLike, n_threads: Optional[int] = None
    ) -> Tuple[_F64, _F64, NDArray[np.uintp], _F64, _F64]: ...
    @property
    def classes(self) -> Optional[list[str]]: ...
    @property
    def multiclass(self) -> Optional[str]: ...
    def evaluate(
        self,
        x: ArrayLike,
        y: ArrayLike,
        epsilon: Optional[float] = None,
        n_threads: Optional[int] = None,
    ) -> str: ...
    def certify(
        self,
        x: ArrayLike,
        y: ArrayLike,
        epsilons: Sequence[float] = ...,
        delta: Optional[float] = None,
        term: Optional[str] = None,
        predictor: Optional[str] = None,
        loo: str = "auto",
        n_threads: Optional[int] = None,
    ) -> str: ...
    def certify_outputs(
        self,
        x: ArrayLike,
        y: ArrayLike,
        epsilons: Sequence[float] = ...,
        delta: Optional[float] = None,
        term: Optional[str] = None,
        loo: str = "auto",
        n_threads: Optional[int] = None,
    ) -> str: ...
    @property
    def outputs(self) -> Optional[list[Model]]: ...
    def report_html(
        self,
        x: ArrayLike,
        y: ArrayLike,
        x_test: Optional[ArrayLike] = None,
        y_test: Optional[ArrayLike] = None,
        title: str = "model",
        loo: str = "auto",
        n_threads: Optional[int] = None,
    ) -> str: ...
    def report_outputs_html(
        self,
        x: ArrayLike,
        y: ArrayLike,
        x_test: Optional[ArrayLike] = None,
        y_test: Optional[ArrayLike] = None,
        title: str = "model",
        loo: str = "auto",
        n_threads: Optional[int] = None,
    ) -> str: ...
    def gibbs_risk_sum(
        self,
        x: ArrayLike,
        y: ArrayLike,
        delta: Optional[float] = None,
        term: Optional[str] = None,
        predictor: Optional[str] = None,
        n_threads: Optional[int] = None,
    ) -> Tuple[float, int]: ...
    def certify_risk_sum(
        self,
        loss: float,
        rows: int,
        delta: Optional[float] = None,
        term: Optional[str] = None,
        predictor: Optional[str] = None,
    ) -> str: ...
    def with_input_coding(self, coding_json: str) -> Model: ...
    @property
    def has_input_coding(self) -> bool: ...
    @property
    def table_columns(self) -> list[str]: ...
    def encode_table(
        self,
        columns: Sequence[Sequence[str]],
        names: Sequence[str],
        unknown_category: Optional[str] = None,
    ) -> Tuple[_F64, list[int]]: ...
    def to_json(self) -> str: ...
    @staticmethod
    def from_json(text: str) -> Model: ...
    def __reduce__(self) -> Tuple[Any, Tuple[str]]: ...
    @property
    def method(self) -> str: ...
    @property
    def spec_json(self) -> str: ...
    @property
    def n_train(self) -> int: ...
    @property
    def n_features(self) -> int: ...
    @property
    def is_classifier(self) -> bool: ...
    @property
    def kernel(self) -> str: ...
    @property
    def kernel_params(self) -> Tuple[list[float], list[str]]: ...
    @property
    def kernel_json(self) -> str: ...
    @property
    def input_scale(self) -> list[float]: ...
    @property
    def noise_variance(self) -> Optional[float]: ...
    @property
    def epsilon(self) -> Optional[float]: ...
    @property
    def report_json(self) -> str: ...
    @property
    def duplicates_json(self) -> str: ...
    @property
    def duplicate_warning(self) -> Optional[str]: ...
    @property
    def stopped_early(self) -> Optional[str]: ...

def fit(
    x: ArrayLike,
    y: ArrayLike,
    method: str,
    options: Mapping[str, Any],
    *,
    labels: Optional[Tuple[str, str]] = None,
    classes: Optional[Sequence[str]] = None,
    names: Optional[Mapping[str, str]] = None,
    n_threads: Optional[int] = None,
    time_limit: Optional[float] = None,
) -> Model: ...
def fit_outputs(
    x: ArrayLike,
    y: ArrayLike,
    method: str,
    options: Mapping[str, Any],
    *,
    names: Optional[Mapping[str, str]] = None,
    n_threads: Optional[int] = None,
    time_limit: Optional[float] = None,
) -> Model: ...
def option_words() -> dict[str, list[Tuple[str, str]]]: ...
def fit_input_coding(
    columns: Sequence[Sequence[str]],
    names: Sequence[str],
    *,
    categorical: Optional[Sequence[str]] = None,
    missing: Optional[str] = None,
    unknown_category: str = "error",
    na_values: Optional[Sequence[str]] = None,
) -> Tuple[_F64, list[int], str, list[str]]: ...
def kernel_tree(spec: str, d: int) -> str: ...
def prior_predictive(
    kernel_spec: Optional[str],
    theta: Optional[Sequence[float]],
    noise_variance: float,
    x: ArrayLike,
    full_cov: bool = False,
    n_threads: Optional[int] = None,
) -> Tuple[_F64, _F64]: ...
def prior_sample(
    kernel_spec: Optional[str],
    theta: Optional[Sequence[float]],
    noise_variance: float,
    x: ArrayLike,
    n_samples: int,
    seed: int,
    n_threads: Optional[int] = None,
) -> Tuple[_F64, float]: ...

# The sharded map-reduce helpers (sparse_kuu_factor, vfe_*, pac_sgp_*, svgp_*, kmeans_sums,
# ShardedFitSpec, ...): internal to pacgp.distributed.
def __getattr__(name: str) -> Any: ...
