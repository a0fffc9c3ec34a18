"""One VFE objective + gradient over 10⁶ synthetic points held in shards by two Dask worker
processes, against the same computation in this process on all the data (a measurement).

    python python/examples/sharded_vfe_1e6.py [--n 1000000] [--shards 8] [--m 100]

Data: x ~ U(-2, 2)^8, y = Σ_j sin(x_j) + 0.1·N(0, 1) (as shared/peers/make_data.py), each
shard drawn on its worker from its own seed; Z = 100 points of shard 0; SE-ARD at unit values,
σ² = 0.01. Prints both times and the largest relative difference of value and gradient.
"""

import argparse
import time

import numpy as np
from dask.distributed import Client, LocalCluster, wait

from pacgp.distributed import sharded_vfe

D = 8


def shard(seed, n):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-2.0, 2.0, size=(n, D))
    return X, np.sin(X).sum(axis=1) + 0.1 * rng.standard_normal(n)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--n", type=int, default=1_000_000)
    p.add_argument("--shards", type=int, default=8)
    p.add_argument("--m", type=int, default=100)
    args = p.parse_args()
    per = args.n // args.shards
    z = shard(0, per)[0][: args.m] + 0.01
    theta = [0.0] * (D + 1)
    cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                           dashboard_address=None)
    with cluster, Client(cluster) as client:
        held = client.map(shard, range(args.shards), n=per)  # drawn on the workers
        wait(held)
        t0 = time.perf_counter()
        value, grad = sharded_vfe(held, "se-ard", theta, 0.01, z, client=client)
        t_dask = time.perf_counter() - t0
    parts = [shard(s, per) for s in range(args.shards)]
    X, y = np.vstack([a for a, _ in parts]), np.concatenate([b for _, b in parts])
    del parts
    t0 = time.perf_counter()
    v1, g1 = sharded_vfe([(X, y)], "se-ard", theta, 0.01, z)
    t_one = time.perf_counter() - t0
    rel_v = abs(value - v1) / abs(v1)
    rel_g = np.max(np.abs(grad - g1)) / np.max(np.abs(g1))
    print(f"N = {len(y)}, M = {args.m}, D = {D}, {args.shards} shards: VFE = {v1:.6f}; "
          f"one process, one shard {t_one:.2f} s; Dask, 2 worker processes {t_dask:.2f} s; "
          f"relative difference: value {rel_v:.1e}, gradient {rel_g:.1e}")


if __name__ == "__main__":
    main()
