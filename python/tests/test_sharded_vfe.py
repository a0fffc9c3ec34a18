"""One sparse GP's VFE bound and gradient over shards held by Dask workers (map-reduce) equal
the single-process values to 1e-10. (`crates/pacgp/tests/sharded_vfe.rs` checks the sharded
sums against the library's own VFE objective; here the Dask route against one local shard.)"""

import numpy as np

from pacgp.distributed import sharded_vfe


def test_sharded_vfe_on_two_worker_processes_equals_one_shard(dask_client):
    rng = np.random.RandomState(5)
    n, d, m = 3000, 4, 20
    X = rng.uniform(-2, 2, size=(n, d))
    y = np.sin(X).sum(axis=1) + 0.1 * rng.randn(n)
    z = X[rng.choice(n, m, replace=False)] + 0.01
    theta = np.log([0.7, 1.2, 0.9, 1.5, 1.3]).tolist()  # the SE-ARD kernel's five ln values
    single_value, single_grad = sharded_vfe([(X, y)], "se-ard", theta, 0.05, z)
    cuts = [0, 500, 1700, 2200, n]
    shards = [(X[a:b], y[a:b]) for a, b in zip(cuts, cuts[1:])]
    held = dask_client.scatter(shards)  # the data live on the workers
    value, grad = sharded_vfe(held, "se-ard", theta, 0.05, z, client=dask_client)
    assert np.isfinite(single_value)
    assert grad.shape == (len(theta) + 1 + m * d,)
    np.testing.assert_allclose(value, single_value, rtol=1e-10)
    np.testing.assert_allclose(grad, single_grad, rtol=1e-10, atol=1e-10 * np.abs(single_grad).max())
