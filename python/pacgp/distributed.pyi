"""Type stub of ``pacgp.distributed``: certified grids and sharded (map-reduce) fits on Dask."""

from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple, Union

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ._estimators import PACGPRegressor, SparseGPClassifier, SparseGPRegressor

_F64 = NDArray[np.float64]
#: The data of one shard, ``(X_s, y_s)``, or a Dask future of such a pair.
_Shard = Any
#: A ``dask.distributed.Client`` (Dask is an optional dependency).
_Client = Any

def certified_fit(
    estimator: Any, params: Mapping[str, Any], X: Any, y: Any
) -> Dict[str, Any]: ...
def certified_grid(
    estimator: Any,
    grid: Union[Mapping[str, Sequence[Any]], Sequence[Mapping[str, Sequence[Any]]]],
    X: Any,
    y: Any,
    client: Optional[_Client] = None,
    n_threads: Optional[int] = 1,
) -> List[Dict[str, Any]]: ...
def sharded_vfe(
    shards: Sequence[_Shard],
    kernel_spec: str,
    theta: Sequence[float],
    noise: float,
    z: ArrayLike,
    client: Optional[_Client] = None,
) -> Tuple[float, Any]: ...
def pack(theta: Sequence[float], noise: float, z: ArrayLike) -> _F64: ...
def pac_sgp_settings(
    kernel_spec: str,
    d: int,
    m: int,
    epsilon: float,
    delta: float = 0.01,
    bound: str = "kl",
    alpha_s: float = 1.0,
    confidence_term: str = "maurer",
    hyper_prior: Optional[str] = None,
) -> Dict[str, Any]: ...
def pac_sgp_value_and_grad(
    settings: Mapping[str, Any],
    p: Sequence[float],
    shards: Sequence[_Shard],
    client: Optional[_Client] = None,
) -> Tuple[Any, Any]: ...
def sharded_pac_sgp(
    shards: Sequence[_Shard],
    kernel_spec: str,
    theta: Sequence[float],
    noise: float,
    z: ArrayLike,
    epsilon: float,
    delta: float = 0.01,
    bound: str = "kl",
    alpha_s: float = 1.0,
    confidence_term: str = "maurer",
    hyper_prior: Optional[str] = None,
    client: Optional[_Client] = None,
    return_terms: bool = False,
) -> Tuple[Any, Any]: ...
def pac_sgp_objective(
    X: ArrayLike,
    y: ArrayLike,
    kernel_spec: str,
    theta: Sequence[float],
    noise: float,
    z: ArrayLike,
    epsilon: float,
    **options: Any,
) -> Tuple[Any, Any]: ...
def fit_sharded(
    method: str,
    shards: Sequence[_Shard],
    kernel: str = "se-ard",
    n_inducing: Optional[int] = None,
    epsilon: Optional[float] = None,
    delta: float = 0.01,
    bound: Optional[str] = None,
    confidence_term: Optional[str] = None,
    seed: int = 0,
    max_iter: Optional[int] = None,
    z_init: Optional[ArrayLike] = None,
    pretrain: Optional[int] = None,
    batch_size: Optional[int] = None,
    likelihood: Optional[str] = None,
    client: Optional[_Client] = None,
) -> Union[SparseGPRegressor, PACGPRegressor, SparseGPClassifier]: ...
def svgp_value_and_grad(
    method: str,
    options: Mapping[str, Any],
    n: int,
    d: int,
    p: Sequence[float],
    shards: Sequence[_Shard],
    client: Optional[_Client] = None,
) -> Tuple[Any, Any]: ...
