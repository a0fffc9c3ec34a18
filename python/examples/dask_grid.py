"""A grid of certified PAC-GP fits on boston (ε × kernel), on a Dask LocalCluster of two worker
processes, checked against the serial run.

    python python/examples/dask_grid.py [--scheduler tcp://host:8786]

With --scheduler the same code runs on an existing Dask cluster (the workers need pacgp
installed); without it a LocalCluster of two processes is started here.
"""

import argparse
import pathlib
import sys
import time

import numpy as np
from dask.distributed import Client, LocalCluster

import pacgp
from pacgp.distributed import certified_grid

ROOT = pathlib.Path(__file__).resolve().parents[2]


def boston():
    data = np.loadtxt(ROOT / "data" / "boston-housing" / "boston.csv", delimiter=",", skiprows=1)
    return data[:, :-1], data[:, -1]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scheduler", help="address of a running Dask scheduler")
    args = parser.parse_args()
    X, y = boston()
    grid = {"epsilon": [1.0, 2.0, 3.0, 5.0], "kernel": ["se", "matern52"]}
    estimator = pacgp.PACGPRegressor(epsilon=1.0)
    t0 = time.perf_counter()
    serial = certified_grid(estimator, grid, X, y)
    t_serial = time.perf_counter() - t0
    if args.scheduler:
        client = Client(args.scheduler)
    else:
        client = Client(LocalCluster(n_workers=2, threads_per_worker=1, processes=True))
    with client:
        t0 = time.perf_counter()
        remote = certified_grid(estimator, grid, X, y, client=client)
        t_dask = time.perf_counter() - t0
    for row in remote:
        c = row["certificate"]
        print(f"{row['params']}: bound {c['bound']:.4f}, train Gibbs risk "
              f"{c['empirical_risk']:.4f}, LOO ε-band error {row['loo']['error']:.4f}")
    same = remote == serial
    print(f"{len(remote)} fits: serial {t_serial:.1f} s, Dask {t_dask:.1f} s; "
          f"identical to the serial run: {same}")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
