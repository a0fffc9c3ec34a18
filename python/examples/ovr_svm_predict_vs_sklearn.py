"""Time ``predict_proba`` of a 3-class one-vs-rest GP classifier (Laplace, logistic, a fixed
kernel: scikit-learn's ``optimizer=None``, pacgp's fit stopped after 2 s) and ``predict`` of an
SVM, pacgp against scikit-learn, trained on N rows (argument; 8 inputs) at 2000 test rows;
alternating, three rounds, the least of each. The SVMs are not the same model: pacgp's
chooses its kernel and slack from its menu, scikit-learn's is ``SVC(C=1)`` with the RBF
kernel; both predict from their support vectors, whose counts are printed.

    python python/examples/ovr_svm_predict_vs_sklearn.py 5000
"""
import sys, time
import numpy as np
import pacgp
from sklearn.gaussian_process import GaussianProcessClassifier
from sklearn.gaussian_process.kernels import RBF, ConstantKernel
from sklearn.svm import SVC

N = int(sys.argv[1]); n = 2000; d = 8
rng = np.random.default_rng(0)
X = rng.uniform(-2, 2, (N, d)); Xs = rng.uniform(-2, 2, (n, d))
s = np.sin(X).sum(1) + 0.3 * rng.standard_normal(N)
y3 = np.digitize(s, np.quantile(s, [1/3, 2/3]))
kernel = ConstantKernel(1.0) * RBF(np.ones(d))
ovr = pacgp.GPClassifier(method="laplace", likelihood="logistic", kernel=kernel, select="ml2",
                         certify=False, loo="none", time_limit=2, n_threads=2).fit(X, y3)
sk = GaussianProcessClassifier(kernel, optimizer=None).fit(X, y3)
y2 = (s > 0).astype(int)
svm = pacgp.SVMClassifier(certify=False, n_threads=2).fit(X, y2)
sksvm = SVC(kernel="rbf", C=1.0).fit(X, y2)
def once(f):
    t = time.perf_counter(); f(); return time.perf_counter() - t
rows = {k: [] for k in ["pacgp ovr predict_proba", "sklearn ovr predict_proba",
                        "pacgp svm predict", "sklearn svc predict"]}
for _ in range(3):
    rows["pacgp ovr predict_proba"].append(once(lambda: ovr.predict_proba(Xs)))
    rows["sklearn ovr predict_proba"].append(once(lambda: sk.predict_proba(Xs)))
    rows["pacgp svm predict"].append(once(lambda: svm.predict(Xs)))
    rows["sklearn svc predict"].append(once(lambda: sksvm.predict(Xs)))
for k, v in rows.items():
    print(f"N={N} {k:26s} min {min(v)*1e3:9.1f} ms  (runs {', '.join(f'{x*1e3:.1f}' for x in v)})")
b = {k: min(v) for k, v in rows.items()}
print(f"N={N} ovr ratio {b['sklearn ovr predict_proba']/b['pacgp ovr predict_proba']:.2f}; "
      f"svm ratio {b['sklearn svc predict']/b['pacgp svm predict']:.2f}; "
      f"pacgp svm support vectors {len(svm.support_) if hasattr(svm, 'support_') else '?'}, sklearn {len(sksvm.support_)}")
