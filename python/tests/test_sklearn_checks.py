"""scikit-learn's own estimator checks (`parametrize_with_checks`), every one of them.

No check is expected to fail. The classifiers take any number of classes (more than two:
one-vs-rest, so scikit-learn's multi-class checks run too). `decision_function`: the SVM's
`Σ yᵢαᵢ k(x, xᵢ) + b` for two classes, and for more than two classes every classifier's ln
scores whose softmax is `predict_proba`; a binary GP classifier has none (ranking by the latent
mean differs from ranking by the probabilities, which also depend on the variance;
`predict_latent` gives the mean).
Every estimator is also checked as constructed with no argument (`DEFAULTS`, each class once,
PACGPRegressor full and sparse: its default ε is Φ⁻¹(3/4) standardised units); the others use
few inducing points / basis points and isotropic kernels only to keep the run short.
"""

from sklearn.gaussian_process.kernels import RBF, ConstantKernel, WhiteKernel
from sklearn.utils.estimator_checks import parametrize_with_checks

import pacgp

#: Every estimator as constructed with no argument (PACGPRegressor also sparse).
DEFAULTS = [
    pacgp.GPRegressor(),
    pacgp.SparseGPRegressor(),
    pacgp.PACGPRegressor(),
    pacgp.PACGPRegressor(sparse=True),
    pacgp.GreedySparseRegressor(),
    pacgp.GPClassifier(),
    pacgp.SVMClassifier(),
    pacgp.SparseGPClassifier(),
]

ESTIMATORS = DEFAULTS + [
    pacgp.GPRegressor(epsilon=0.5, kernel="matern52"),
    pacgp.SparseGPRegressor(n_inducing=5),
    pacgp.SparseGPRegressor(method="fitc", n_inducing=5, epsilon=0.5),
    pacgp.PACGPRegressor(epsilon=0.5, kernel="se"),
    pacgp.PACGPRegressor(epsilon=0.5, kernel="se", sparse=True),
    pacgp.PACGPRegressor(epsilon=0.5, kernel="se", prior="split:auto"),
    pacgp.PACGPRegressor(epsilon=0.5, kernel="se", hyper_prior="gaussian", xi="sharp"),
    pacgp.GreedySparseRegressor(n_basis=5, kernel="se", epsilon=0.5),
    pacgp.GPClassifier(method="ep", select="ml2", kernel="se"),
    pacgp.GPClassifier(method="ivm", active_set=10),
    pacgp.GPClassifier(method="pac-gpc"),
    pacgp.SparseGPClassifier(objective="bound", n_inducing=5, kernel="se"),
    # scikit-learn's GP API (kernel objects, intervals, a classifier's kernel).
    pacgp.GPRegressor(kernel=ConstantKernel() * RBF() + WhiteKernel()),
    pacgp.GPRegressor(intervals="jackknife+", interval_score="gp-std"),
    pacgp.SparseGPRegressor(n_inducing=5, intervals="split-conformal"),
    pacgp.GPClassifier(kernel=RBF()),
]


@parametrize_with_checks(ESTIMATORS)
def test_sklearn_compatible(estimator, check):
    check(estimator)
