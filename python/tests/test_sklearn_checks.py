"""scikit-learn's own estimator checks (`parametrize_with_checks`), every one of them.

No check is expected to fail. The classifiers take any number of classes (more than two:
one-vs-rest, so scikit-learn's multi-class checks run too). `decision_function`: the SVM's
`Σ yᵢαᵢ k(x, xᵢ) + b` for two classes, and for more than two classes every classifier's ln
scores whose softmax is `predict_proba`; a binary GP classifier has none (ranking by the latent
mean differs from ranking by the probabilities, which also depend on the variance;
`predict_latent` gives the mean).
Every estimator that needs no argument is also checked as constructed with none; the others
use few inducing points / basis points and isotropic kernels only to keep the run short.
(`PACGPRegressor()` needs `epsilon`: it has no default ε yet, so it is not in the list.)
"""

from sklearn.gaussian_process.kernels import RBF, ConstantKernel, WhiteKernel
from sklearn.utils.estimator_checks import parametrize_with_checks

import pacgp

ESTIMATORS = [
    pacgp.GPRegressor(),
    pacgp.GPRegressor(epsilon=0.5, kernel="matern52"),
    pacgp.SparseGPRegressor(n_inducing=5),
    pacgp.SparseGPRegressor(method="fitc", n_inducing=5, epsilon=0.5),
    pacgp.PACGPRegressor(epsilon=0.5, kernel="se"),
    pacgp.PACGPRegressor(epsilon=0.5, kernel="se", sparse=True),
    pacgp.PACGPRegressor(epsilon=0.5, kernel="se", prior="split:auto"),
    pacgp.PACGPRegressor(epsilon=0.5, kernel="se", hyper_prior="gaussian", xi="sharp"),
    pacgp.GreedySparseRegressor(n_basis=5, kernel="se", epsilon=0.5),
    pacgp.GPClassifier(),
    pacgp.GPClassifier(method="ep", select="ml2", kernel="se"),
    pacgp.GPClassifier(method="ivm", active_set=10),
    pacgp.GPClassifier(method="pac-gpc"),
    pacgp.SVMClassifier(),
    # Defaults, and scikit-learn's GP API (kernel objects, intervals, a classifier's kernel).
    pacgp.SparseGPRegressor(),
    pacgp.GreedySparseRegressor(),
    pacgp.GPRegressor(kernel=ConstantKernel() * RBF() + WhiteKernel()),
    pacgp.GPRegressor(intervals="jackknife+", interval_score="gp-std"),
    pacgp.SparseGPRegressor(n_inducing=5, intervals="split-conformal"),
    pacgp.GPClassifier(kernel=RBF()),
]


@parametrize_with_checks(ESTIMATORS)
def test_sklearn_compatible(estimator, check):
    check(estimator)
