#!/usr/bin/env python3
"""scikit-learn's multi-class classifiers on one split of `pacgp reproduce multiclass`.

    multiclass_peers.py --train TRAIN.csv --test TEST.csv --dataset NAME --seed S [--only PEER]

The CSVs are the ones `pacgp reproduce multiclass` writes for each split (inputs, then the
class index in the last column, one header row); `reproduce --peers PYTHON` runs this script
right after pacgp's own fits on the same split, so the two are timed alternately on the same
machine. Inputs are z-scored with the training mean and population standard deviation (as
pacgp does; a constant column is left unscaled). Two estimators, each fitted once:

- `sklearn-gpc-ovr`: `GaussianProcessClassifier(ConstantKernel(1.0) * RBF(1.0),
  multi_class="one_vs_rest", random_state=seed)` — Laplace, one binary classifier per class,
  hyperparameters by ML-II (L-BFGS-B, no restarts): pacgp's `laplace one-vs-rest ml2`;
- `sklearn-svc`: `SVC()` (RBF, C = 1, gamma = "scale"; libsvm's one-vs-one inside).

`--only sklearn-svc` runs SVC alone (`pacgp reproduce multiclass` does so on the digits splits
after the first: the GP classifier's ten ML-II fits on 1438 points take over 16 CPU-minutes per
split).

Prints one JSON line per estimator: dataset, peer, seed, held-out accuracy, fit seconds
(`time.perf_counter` around `fit`) and scikit-learn's version. Needs numpy and scikit-learn.
"""

import argparse
import json
import time

import numpy as np


def load(path):
    data = np.loadtxt(path, delimiter=",", skiprows=1, ndmin=2)
    return data[:, :-1], data[:, -1].astype(int)


def standardise(train, test):
    mean = train.mean(axis=0)
    sd = train.std(axis=0)
    sd[sd == 0] = 1.0
    return (train - mean) / sd, (test - mean) / sd


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--train", required=True)
    p.add_argument("--test", required=True)
    p.add_argument("--dataset", required=True)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--only", choices=["sklearn-gpc-ovr", "sklearn-svc"], default=None)
    a = p.parse_args()

    import sklearn
    from sklearn.gaussian_process import GaussianProcessClassifier
    from sklearn.gaussian_process.kernels import RBF, ConstantKernel
    from sklearn.svm import SVC

    xtr, ytr = load(a.train)
    xte, yte = load(a.test)
    xtr, xte = standardise(xtr, xte)
    peers = {
        "sklearn-gpc-ovr": lambda: GaussianProcessClassifier(
            ConstantKernel(1.0) * RBF(1.0), multi_class="one_vs_rest", random_state=a.seed
        ),
        "sklearn-svc": lambda: SVC(),
    }
    for name, make in peers.items():
        if a.only is not None and name != a.only:
            continue
        est = make()
        t0 = time.perf_counter()
        est.fit(xtr, ytr)
        seconds = time.perf_counter() - t0
        accuracy = float(np.mean(est.predict(xte) == yte))
        print(json.dumps({"dataset": a.dataset, "peer": name, "seed": a.seed, "accuracy": accuracy,
                          "fit_seconds": seconds, "version": sklearn.__version__}), flush=True)


if __name__ == "__main__":
    main()
