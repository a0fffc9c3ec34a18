"""The shared table of bad fit options (crates/pacgp/tests/fixtures/bad_specs.json, also read by
the command line's test): the Python module refuses each with a ValueError before using the
data, with the library's words for the problem and the option's Python name; an estimator
words it with its own parameter name."""

import json
from pathlib import Path

import numpy as np
import pytest

import pacgp
from pacgp import _pacgp

TABLE = json.loads(
    (Path(__file__).parents[2] / "crates/pacgp/tests/fixtures/bad_specs.json").read_text()
)


@pytest.mark.parametrize("case", TABLE["cases"], ids=lambda c: f"{c['method']}-{c['option']}")
def test_bad_spec_is_refused_with_the_option_named(case):
    # Data the fit would refuse too (a NaN): the spec must be checked first.
    X, y = np.full((4, 2), np.nan), np.zeros(4)
    with pytest.raises(ValueError) as e:
        _pacgp.fit(X, y, case["method"], case["options"])
    message = str(e.value)
    assert case["says"] in message
    assert case["option"] in message
    assert "non-finite" not in message


def test_estimators_word_errors_with_their_own_parameters():
    X = np.linspace(0, 1, 20)[:, None]
    y = np.sin(3 * X[:, 0])
    with pytest.raises(ValueError, match="n_inducing 0"):
        pacgp.SparseGPRegressor(n_inducing=0).fit(X, y)
    with pytest.raises(ValueError, match="invalid C -1"):
        pacgp.SVMClassifier(C=-1).fit(X, y > 0)
    with pytest.raises(ValueError, match="invalid epsilon -1"):
        pacgp.PACGPRegressor(epsilon=-1).fit(X, y)
