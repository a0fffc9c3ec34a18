"""The estimators fit the model `pacgp fit` fits: same data, same options, one thread each
(the library's fits are then deterministic) → predictions and certificates agree to 1e-10.

Both run the fit on the process's main thread with a one-thread global rayon pool
(`pacgp --threads 1`; Python in a subprocess with RAYON_NUM_THREADS=1): the library's results
depend in the last bits on the thread that runs the fit (a fit inside a private pool, on one of
its worker threads, ends 1e-9 away in the ML-II optimum), which the optimisers of gpr, vfe, fitc,
pac-sgp and greedy-sparse amplify to 1e-8 in the predictions.

The CLI reads the data from a CSV file written with `repr` (exact round trip of every f64),
its model file is read back by `pacgp.Model.from_json`, and its `certify --json` output is
compared field by field with the estimator's `certificate_`.
"""

import json
import os
import pickle
import subprocess
import sys

import numpy as np
import pytest

import pacgp

TOL = dict(rtol=1e-10, atol=1e-10)


def write_csv(path, X, y, labels=None):
    """A CSV the CLI reads back exactly: inputs x0..x{D-1}, then the target `y`."""
    with open(path, "w") as f:
        f.write(",".join([f"x{j}" for j in range(X.shape[1])] + ["y"]) + "\n")
        for row, target in zip(X, y):
            f.write(",".join([repr(float(v)) for v in row] + [str(target)]) + "\n")


def cli(binary, *args):
    """Run `pacgp --threads 1 ARGS --json` and parse its one JSON object."""
    out = subprocess.run(
        [str(binary), "--threads", "1", *args, "--json"],
        check=True, capture_output=True, text=True,
    )
    return json.loads(out.stdout)


FIT_SCRIPT = """
import pickle, sys
with open(sys.argv[1], "rb") as f:
    estimator, X, y = pickle.load(f)
estimator.fit(X, y)
with open(sys.argv[1], "wb") as f:
    pickle.dump(estimator, f)
"""


def python_fit(estimator, X, y, tmp_path):
    """`estimator.fit(X, y)` in a fresh interpreter with a one-thread global rayon pool, on its
    main thread as the CLI fits; the fitted estimator comes back by pickle (the model's JSON)."""
    path = tmp_path / "estimator.pickle"
    path.write_bytes(pickle.dumps((estimator, X, y)))
    env = dict(os.environ, RAYON_NUM_THREADS="1")
    subprocess.run([sys.executable, "-c", FIT_SCRIPT, str(path)], check=True, env=env)
    return pickle.loads(path.read_bytes())


def cli_model(binary, tmp_path, X, y, args):
    data = tmp_path / "train.csv"
    write_csv(data, X, y)
    out = tmp_path / "model.json"
    cli(binary, "fit", "--data", str(data), "--target", "y", *args, "--out", str(out))
    certificate = cli(binary, "certify", "--model", str(out), "--data", str(data))
    return pacgp.Model.from_json(out.read_text()), certificate


def assert_same_certificate(ours, theirs):
    """Equal keys, floats to TOL, nested objects (the deployed certificate) likewise."""
    assert ours is not None
    for key, value in theirs.items():
        if isinstance(value, float):
            np.testing.assert_allclose(ours[key], value, **TOL, err_msg=key)
        elif isinstance(value, dict):
            assert_same_certificate(ours[key], value)
        else:
            assert ours[key] == value, key


REGRESSION = [
    ("gpr", ["--method", "gpr", "--epsilon", "3"], lambda: pacgp.GPRegressor(epsilon=3.0)),
    (
        "vfe",
        ["--method", "vfe", "--inducing", "15", "--epsilon", "3", "--seed", "4"],
        lambda: pacgp.SparseGPRegressor(n_inducing=15, epsilon=3.0, random_state=4),
    ),
    (
        "vfe",
        ["--method", "vfe", "--inducing", "12", "--inducing-init", "subset", "--epsilon", "3"],
        lambda: pacgp.SparseGPRegressor(n_inducing=12, inducing_init="subset", epsilon=3.0),
    ),
    (
        "fitc",
        ["--method", "fitc", "--inducing", "15", "--epsilon", "3"],
        lambda: pacgp.SparseGPRegressor(method="fitc", n_inducing=15, epsilon=3.0),
    ),
    (
        "pac-gp",
        ["--method", "pac-gp", "--kernel", "se", "--epsilon", "3"],
        lambda: pacgp.PACGPRegressor(epsilon=3.0, kernel="se"),
    ),
    (
        "pac-sgp-sqrt",
        ["--method", "pac-sgp-sqrt", "--kernel", "se", "--inducing", "10", "--epsilon", "3"],
        lambda: pacgp.PACGPRegressor(epsilon=3.0, kernel="se", sparse=True, n_inducing=10,
                                     bound="sqrt"),
    ),
    # The tighter-bounds levers (issue 15).
    (
        "pac-gp",
        ["--method", "pac-gp", "--kernel", "se", "--epsilon", "3", "--prior", "split:auto",
         "--seed", "2"],
        lambda: pacgp.PACGPRegressor(epsilon=3.0, kernel="se", prior="split:auto", random_state=2),
    ),
    (
        "pac-gp",
        ["--method", "pac-gp", "--kernel", "se", "--epsilon", "3", "--hyper-prior", "gaussian"],
        lambda: pacgp.PACGPRegressor(epsilon=3.0, kernel="se", hyper_prior="gaussian"),
    ),
    (
        "pac-sgp",
        ["--method", "pac-sgp", "--kernel", "se", "--inducing", "10", "--epsilon", "3",
         "--xi", "sharp", "--hyper-prior", "uniform"],
        lambda: pacgp.PACGPRegressor(epsilon=3.0, kernel="se", sparse=True, n_inducing=10,
                                     xi="sharp", hyper_prior="uniform"),
    ),
    (
        "greedy-sparse",
        ["--method", "greedy-sparse", "--inducing", "20", "--epsilon", "3"],
        lambda: pacgp.GreedySparseRegressor(n_basis=20, epsilon=3.0),
    ),
]


@pytest.mark.parametrize(
    "name,args,make", REGRESSION, ids=[f"{r[0]}-{i}" for i, r in enumerate(REGRESSION)]
)
def test_regression_matches_cli(name, args, make, boston, pacgp_cli, tmp_path):
    X, y = boston[0][:120], boston[1][:120]
    theirs, certificate = cli_model(pacgp_cli, tmp_path, X, y, args)
    ours = python_fit(make(), X, y, tmp_path)
    assert ours.model_.method == theirs.method == name
    X_test = boston[0][400:]
    mean, std = ours.predict(X_test, return_std=True)
    m, _latent, noisy = theirs.predict_regression(X_test)
    np.testing.assert_allclose(mean, m, **TOL)
    np.testing.assert_allclose(std, np.sqrt(noisy), **TOL)
    assert_same_certificate(ours.certificate_, certificate)


CLASSIFIERS = [
    ("laplace", ["--method", "laplace"], lambda: pacgp.GPClassifier()),
    ("ep", ["--method", "ep"], lambda: pacgp.GPClassifier(method="ep")),
    (
        "mean-field",
        ["--method", "mean-field", "--kappa", "0.02", "--input-noise", "0.3"],
        lambda: pacgp.GPClassifier(method="mean-field", kappa=0.02, input_noise=0.3),
    ),
    (
        "ivm",
        ["--method", "ivm", "--active-set", "25"],
        lambda: pacgp.GPClassifier(method="ivm", active_set=25),
    ),
    (
        "sogp",
        ["--method", "sogp", "--active-set", "25", "--seed", "3"],
        lambda: pacgp.GPClassifier(method="sogp", active_set=25, random_state=3),
    ),
    (
        "laplace-ml2",
        ["--method", "laplace", "--likelihood", "logistic", "--select", "ml2", "--kernel", "se"],
        lambda: pacgp.GPClassifier(likelihood="logistic", select="ml2", kernel="se"),
    ),
    ("svm", ["--method", "svm"], lambda: pacgp.SVMClassifier()),
    ("pac-gpc", ["--method", "pac-gpc"], lambda: pacgp.GPClassifier(method="pac-gpc")),
    (
        "svgp",
        ["--method", "svgp", "--inducing", "12", "--seed", "3"],
        lambda: pacgp.SparseGPClassifier(n_inducing=12, random_state=3),
    ),
    (
        "pac-svgp",
        ["--method", "pac-svgp", "--inducing", "12", "--kernel", "se"],
        lambda: pacgp.SparseGPClassifier(objective="bound", n_inducing=12, kernel="se"),
    ),
    # The split prior (issue 15): certified on part B, with Catoni's λ and the prior scale
    # fixed on part A.
    (
        "split-laplace",
        ["--method", "laplace", "--prior", "split:0.5", "--seed", "1"],
        lambda: pacgp.GPClassifier(prior="split:0.5", random_state=1),
    ),
    (
        "split-pac-gpc-catoni",
        ["--method", "pac-gpc", "--prior", "split:auto", "--bound", "catoni", "--prior-scale",
         "auto", "--seed", "2"],
        lambda: pacgp.GPClassifier(method="pac-gpc", prior="split:auto", bound="catoni",
                                   prior_scale="auto", random_state=2),
    ),
]


@pytest.mark.parametrize("name,args,make", CLASSIFIERS, ids=[c[0] for c in CLASSIFIERS])
def test_classifier_matches_cli(name, args, make, breast_cancer, pacgp_cli, tmp_path):
    X, labels = breast_cancer
    X, y = X[:150], labels[:150].astype(int)
    theirs, certificate = cli_model(pacgp_cli, tmp_path, X, y, args)
    ours = python_fit(make(), X, y, tmp_path)
    assert list(ours.classes_) == [2, 4]
    X_test = X[-100:]
    p, mean, _var = theirs.predict_classification(breast_cancer[0][500:])
    np.testing.assert_allclose(ours.predict_proba(breast_cancer[0][500:])[:, 1], p, **TOL)
    np.testing.assert_allclose(ours.predict_latent(breast_cancer[0][500:])[0], mean, **TOL)
    assert_same_certificate(ours.certificate_, certificate)
    assert ours.score(X_test, y[-100:]) > 0.9
