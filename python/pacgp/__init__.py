"""pacgp: Gaussian-process learning with PAC-Bayes certificates, as scikit-learn estimators.

The numerical core is the Rust library ``pacgp`` (``crates/pacgp``), bound by ``pacgp._pacgp``;
the estimators fit the same models as the ``pacgp fit`` command and read and write its model
files (``Model.to_json`` / ``Model.from_json``).
"""

from ._pacgp import Model, PacgpError
from ._report import report
from ._estimators import (
    GPClassifier,
    GPRegressor,
    GreedySparseRegressor,
    PACGPRegressor,
    SparseGPClassifier,
    SparseGPRegressor,
    SVMClassifier,
)

__all__ = [
    "GPClassifier",
    "GPRegressor",
    "GreedySparseRegressor",
    "Model",
    "PACGPRegressor",
    "PacgpError",
    "SparseGPClassifier",
    "SparseGPRegressor",
    "SVMClassifier",
    "report",
]
