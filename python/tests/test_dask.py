"""A grid of certified fits on a Dask LocalCluster of two worker processes gives exactly the
serial run's certificates (the estimators and data travel by pickle, the models by JSON)."""

import numpy as np

import pacgp
from pacgp.distributed import certified_grid


def test_certified_grid_on_two_worker_processes_equals_serial(boston, dask_client):
    X, y = boston[0][:150], boston[1][:150]
    grid = {"epsilon": [2.0, 3.0, 5.0], "delta": [0.01, 0.05]}
    estimator = pacgp.PACGPRegressor(epsilon=1.0, kernel="se")
    serial = certified_grid(estimator, grid, X, y)
    remote = certified_grid(estimator, grid, X, y, client=dask_client)
    workers = dask_client.run(lambda: __import__("os").getpid())
    assert len(workers) == 2
    assert len(remote) == 6
    assert remote == serial  # bit-identical certificates, LOO figures and scores
    bounds = [r["certificate"]["bound"] for r in remote]
    assert all(0 < b < 1 for b in bounds)
    # A larger δ gives a smaller bound at the same ε (the confidence term shrinks).
    by = {(r["params"]["epsilon"], r["params"]["delta"]): r["certificate"]["bound"] for r in remote}
    assert all(by[(e, 0.05)] < by[(e, 0.01)] for e in grid["epsilon"])
    assert np.isfinite([r["train_score"] for r in remote]).all()
