"""The sparse PAC-GP bound and gradient over shards (map-reduce: on two Dask worker processes
and serially) equal the library's single-process objective (``PacSgpObjective``, checked by
finite differences in ``crates/pacgp/tests/pac_sgp.rs``) to 1e-10."""

import numpy as np
import pytest

from pacgp.distributed import pac_sgp_objective, sharded_pac_sgp

N, D, M = 2000, 4, 15


def problem(seed=5):
    rng = np.random.RandomState(seed)
    X = rng.uniform(-2, 2, size=(N, D))
    y = np.sin(X).sum(axis=1) + 0.1 * rng.randn(N)
    z = X[rng.choice(N, M, replace=False)] + 0.01
    theta = np.log([0.7, 1.2, 0.9, 1.5, 1.3]).tolist()  # SE-ARD: four lengthscales, variance
    return X, y, z, theta


def shards(X, y, cuts=(0, 300, 1100, 1101, N)):
    return [(X[a:b], y[a:b]) for a, b in zip(cuts, cuts[1:])]


def assert_same(terms, grad, single_terms, single_grad):
    np.testing.assert_allclose(terms, single_terms, rtol=1e-10)
    assert grad.shape == single_grad.shape == (5 + 1 + M * D,)
    scale = np.abs(single_grad).max()
    assert scale > 1e-6
    np.testing.assert_allclose(grad, single_grad, rtol=0, atol=1e-10 * scale)


def test_sharded_pac_sgp_on_two_worker_processes_and_serially_equals_single_process(dask_client):
    X, y, z, theta = problem()
    single_terms, single_grad = pac_sgp_objective(X, y, "se-ard", theta, 0.05, z, 0.3)
    assert 0 < single_terms[2] < 1
    serial = sharded_pac_sgp(shards(X, y), "se-ard", theta, 0.05, z, 0.3, return_terms=True)
    assert_same(*serial, single_terms, single_grad)
    held = dask_client.scatter(shards(X, y))  # the data live on the workers
    dask = sharded_pac_sgp(held, "se-ard", theta, 0.05, z, 0.3, client=dask_client,
                           return_terms=True)
    assert_same(*dask, single_terms, single_grad)


@pytest.mark.parametrize("options", [
    dict(alpha_s=0.0),
    dict(bound="sqrt", delta=0.05),
    dict(confidence_term="sharp", hyper_prior="gaussian"),
])
def test_sharded_pac_sgp_forms_equal_single_process(options):
    X, y, z, theta = problem(6)
    single = pac_sgp_objective(X, y, "se-ard", theta, 0.1, z, 0.4, **options)
    sharded = sharded_pac_sgp(shards(X, y), "se-ard", theta, 0.1, z, 0.4, return_terms=True,
                              **options)
    assert_same(*sharded, *single)


def test_unknown_bound_setting_is_a_value_error():
    X, y, z, theta = problem()
    with pytest.raises(ValueError, match="bound"):
        sharded_pac_sgp(shards(X, y), "se-ard", theta, 0.05, z, 0.3, bound="tight")
    with pytest.raises(ValueError):
        sharded_pac_sgp(shards(X[:, :3], y), "se-ard", theta, 0.05, z, 0.3)
