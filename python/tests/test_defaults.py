"""Defaults a scikit-learn user relies on: PACGPRegressor's ε in standardised units, and
``random_state`` as scikit-learn takes it (an int is the library's seed; a RandomState or None
draws one)."""

import numpy as np
import pytest

import pacgp

# Φ⁻¹(3/4): the standard normal's upper quartile (scipy.stats.norm.ppf(0.75)).
UPPER_QUARTILE = 0.6744897501960817


def _regression(n=60, seed=0):
    rng = np.random.RandomState(seed)
    X = rng.randn(n, 2)
    y = 10.0 * np.sin(X[:, 0]) + 3.0 * X[:, 1] + rng.randn(n) + 50.0
    return X, y


def test_upper_quartile_constant():
    from scipy.stats import norm

    assert norm.cdf(UPPER_QUARTILE) == pytest.approx(0.75, abs=1e-15)


@pytest.mark.parametrize("sparse", [False, True])
def test_pac_regressor_default_epsilon_is_standardised(sparse):
    X, y = _regression()
    est = pacgp.PACGPRegressor(sparse=sparse, n_inducing=10 if sparse else None).fit(X, y)
    want = UPPER_QUARTILE * np.std(y)  # population sd, as pacgp standardises
    assert est.model_.epsilon == pytest.approx(want, rel=1e-12)
    assert est.certificate_["epsilon"] == pytest.approx(want, rel=1e-12)
    assert any("the default: 0.6745 standard deviations" in n
               for n in est.fit_report_["notes"]), est.fit_report_["notes"]
    # The same as giving that ε.
    given = pacgp.PACGPRegressor(sparse=sparse, n_inducing=10 if sparse else None,
                                 epsilon=want).fit(X, y)
    np.testing.assert_allclose(est.predict(X), given.predict(X), rtol=1e-12)
    # Scale-free: the same fit (in standardised units) for targets in other units.
    scaled = pacgp.PACGPRegressor(sparse=sparse, n_inducing=10 if sparse else None).fit(
        X, 1000.0 * y)
    assert scaled.certificate_["bound"] == pytest.approx(est.certificate_["bound"], rel=1e-6)


def test_random_state_int_is_the_seed():
    """An int gives the fit the library gives that seed (the old ``seed=``), through the
    seeded k-means start of the inducing inputs."""
    X, y = _regression(80)
    a = pacgp.SparseGPRegressor(n_inducing=8, random_state=7).fit(X, y)
    b = pacgp.SparseGPRegressor(n_inducing=8, random_state=7).fit(X, y)
    c = pacgp.SparseGPRegressor(n_inducing=8, random_state=8).fit(X, y)
    assert a.model_.to_json() == b.model_.to_json()
    spec = lambda e: __import__("json").loads(e.model_.to_json())["spec"]["seed"]  # noqa: E731
    assert spec(a) == 7 and spec(c) == 8
    assert a.get_params()["random_state"] == 7 and "seed" not in a.get_params()


def test_random_state_randomstate_and_none_draw_a_seed():
    X, y = _regression(80)
    seed = lambda e: __import__("json").loads(e.model_.to_json())["spec"]["seed"]  # noqa: E731
    a = pacgp.SparseGPRegressor(n_inducing=8, random_state=np.random.RandomState(3)).fit(X, y)
    b = pacgp.SparseGPRegressor(n_inducing=8, random_state=np.random.RandomState(3)).fit(X, y)
    assert seed(a) == seed(b)
    want = int(np.random.RandomState(3).randint(2**63 - 1, dtype=np.int64))
    assert seed(a) == want
    np.random.seed(11)
    c = pacgp.SparseGPRegressor(n_inducing=8, random_state=None).fit(X, y)
    np.random.seed(11)
    d = pacgp.SparseGPRegressor(n_inducing=8, random_state=None).fit(X, y)
    assert seed(c) == seed(d)
    with pytest.raises(ValueError, match="non-negative"):
        pacgp.SparseGPRegressor(random_state=-1).fit(X, y)


@pytest.mark.parametrize("cls", [pacgp.GPRegressor, pacgp.SparseGPRegressor,
                                 pacgp.PACGPRegressor, pacgp.GreedySparseRegressor,
                                 pacgp.GPClassifier])
def test_every_seeded_estimator_takes_random_state(cls):
    params = cls().get_params()
    assert params["random_state"] == 0 and "seed" not in params


def _delta_defaults():
    """Every ``delta=`` default of the estimators and of ``pacgp.distributed``'s functions."""
    import inspect

    import pacgp.distributed as dist

    found = {}
    for mod in (pacgp, dist):
        for name, obj in vars(mod).items():
            target = obj.__init__ if inspect.isclass(obj) else obj
            if not callable(target) or getattr(obj, "__module__", "").split(".")[0] != "pacgp":
                continue
            try:
                params = inspect.signature(target).parameters
            except (TypeError, ValueError):
                continue
            if "delta" in params and params["delta"].default is not inspect.Parameter.empty:
                found[f"{mod.__name__}.{name}"] = params["delta"].default
    return found


def test_delta_default_is_the_librarys():
    """δ's default is written once, in the Rust library (``DEFAULT_DELTA``, 0.01 as the
    CLI's ``--delta``): every Python default reads it."""
    found = _delta_defaults()
    assert len(found) >= 10, found  # 7 estimators, 3 distributed functions
    assert pacgp._pacgp.DEFAULT_DELTA == 0.01
    assert all(v == pacgp._pacgp.DEFAULT_DELTA for v in found.values()), found


def _stub_delta_defaults():
    """Every numeric ``delta`` default written in the package's type stubs (``*.pyi``), by
    name (``None``, "the model's own δ", is not a number to compare)."""
    import ast
    import pathlib

    found = {}
    for stub in sorted(pathlib.Path(pacgp.__file__).parent.glob("*.pyi")):
        for node in ast.walk(ast.parse(stub.read_text())):
            if not isinstance(node, ast.FunctionDef):
                continue
            args = node.args.args + node.args.kwonlyargs
            defaults = [None] * (len(node.args.args) - len(node.args.defaults)) + list(
                node.args.defaults) + list(node.args.kw_defaults)
            for arg, default in zip(args, defaults):
                value = None if default is None else ast.literal_eval(default)
                if arg.arg == "delta" and value is not None:
                    found[f"{stub.name}:{node.lineno} {node.name}"] = value
    return found


def test_stub_delta_defaults_are_the_librarys():
    """The stubs show δ's default as a number for editors; each must be the library's."""
    found = _stub_delta_defaults()
    assert len(found) >= 10, found  # the estimators' __init__ and distributed's functions
    assert all(v == pacgp._pacgp.DEFAULT_DELTA for v in found.values()), found
