"""Median fit times on Wisconsin (683×9, z-scored): LIBSVM's svm_train (C = 1, γ = 1/D, ε = 1e-3,
shrinking, 200 MB cache), scikit-learn's SVC, pacgp's SVMClassifier with the same C and
lengthscale (certified and not) and its default menu; alternating rounds (a measurement).

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 RAYON_NUM_THREADS=1 python python/examples/svm_certified_timing.py \
        data/breast-cancer-wisconsin/breast_cancer_wisconsin_complete683.csv [ROUNDS]

Needs scikit-learn and LIBSVM's official binding (``pip install libsvm-official``). That
binding is built with OpenMP: without ``OMP_NUM_THREADS=1`` its ``svm_train`` uses every core.
"""
import statistics, sys, time
import numpy as np, pandas as pd
from libsvm.svmutil import svm_problem, svm_parameter, svm_train
from sklearn.svm import SVC
from pacgp import SVMClassifier

df = pd.read_csv(sys.argv[1]).drop(columns=["sample_code_number"])
y = np.where(df.pop("class").to_numpy() == 4, 1.0, -1.0)
X = df.to_numpy(float)
Xs = (X - X.mean(0)) / X.std(0)
d = X.shape[1]
ell = (d / 2) ** 0.5  # gamma = 1/D = 1/(2 l^2)
rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 21
prob = svm_problem(y.tolist(), Xs.tolist())
param = svm_parameter(f"-s 0 -t 2 -c 1 -g {1/d} -e 0.001 -m 200 -h 1 -q")

def libsvm():
    svm_train(prob, param)

def sklearn():
    SVC(C=1.0, gamma=1 / d).fit(Xs, y)

def ours(certify, menu=False):
    if menu:
        return lambda: SVMClassifier(n_threads=1).fit(X, y)
    return lambda: SVMClassifier(C=1.0, lengthscale=ell, certify=certify, n_threads=1).fit(X, y)

tools = {"libsvm svm_train": libsvm, "sklearn SVC": sklearn,
         "pacgp SVMClassifier(C, l), certify=False": ours(False),
         "pacgp SVMClassifier(C, l), certified": ours(True),
         "pacgp SVMClassifier() default menu, certified": ours(True, menu=True)}
times = {k: [] for k in tools}
for f in tools.values():
    f()  # warm-up
for _ in range(rounds):
    for k, f in tools.items():
        t0 = time.perf_counter(); f(); times[k].append(time.perf_counter() - t0)
base = statistics.median(times["libsvm svm_train"])
for k, v in times.items():
    m = statistics.median(v)
    print(f"{k:48s} {1e3*m:8.2f} ms   {m/base:6.2f}x LIBSVM")
est = SVMClassifier(C=1.0, lengthscale=ell, n_threads=1).fit(X, y)
print("certified bound", est.certificate_["bound"], "support vectors", len(est.support_))
