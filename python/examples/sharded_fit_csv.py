"""Fit a sparse GP (VFE or kl-PAC-SGP) with ``fit_sharded`` on a Dask LocalCluster, from a
CSV too large to want in one process, then certify it on the whole sample (a measurement).

    python python/examples/sharded_fit_csv.py --data synth_1e6.csv.gz --method vfe \
        --inducing 500 --epsilon 0.5 --pretrain 20000 --max-iter 40 [--shards 8] [--workers 2]

The CSV (header row; ``--target`` names the target, default the last column; e.g. from
``scripts/make_synthetic.py --n 1000000 --d 8 --seed 0 --out synth_1e6.csv.gz``) is read in
``--shards`` row chunks, each scattered to a worker as soon as it is read, so the driver holds
one chunk at a time. The cluster has ``--workers`` worker processes of one thread each. After
the fit, the whole sample is read into this process once more and ``model_.certify`` computes
the certificate (for pac-sgp the bound the fit minimised, for vfe the ε-band Gibbs risk bound)
with the closed-form leave-one-out.

Prints the wall times (read and scatter, fit, certify), the optimiser's report (warm start on
the subsample, then all rows), the peak memory summed over this process and its children
(sampled every 0.5 s) and the certificate, as one JSON line at the end.
"""

import argparse
import json
import os
import threading
import time

import numpy as np
import pandas as pd
import psutil
from dask.distributed import Client, LocalCluster

from pacgp.distributed import fit_sharded


class PeakMemory:
    """The largest resident memory summed over this process and all its descendants, sampled
    every ``period`` seconds on a daemon thread."""

    def __init__(self, period=0.5):
        self.period, self.peak, self._stop = period, 0, threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self):
        me = psutil.Process(os.getpid())
        while not self._stop.is_set():
            total = 0
            for p in [me] + me.children(recursive=True):
                try:
                    total += p.memory_info().rss
                except psutil.Error:
                    pass
            self.peak = max(self.peak, total)
            self._stop.wait(self.period)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()


def read_shards(path, target, n_shards, rows, client):
    """The CSV in ``n_shards`` chunks of about ``rows / n_shards`` rows, each scattered to the
    cluster as a future ``(X, y)`` when read."""
    futures, chunk = [], -(-rows // n_shards)
    for frame in pd.read_csv(path, chunksize=chunk):
        y = frame.pop(target or frame.columns[-1]).to_numpy(np.float64)
        futures.append(client.scatter((frame.to_numpy(np.float64), y)))
    return futures


def count_rows(path):
    """Rows of a CSV with a header (one pass, in chunks)."""
    return sum(len(f) for f in pd.read_csv(path, chunksize=200_000, usecols=[0]))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", required=True)
    ap.add_argument("--target", default=None)
    ap.add_argument("--method", choices=["vfe", "pac-sgp"], default="vfe")
    ap.add_argument("--inducing", type=int, default=500)
    ap.add_argument("--epsilon", type=float, default=0.5)
    ap.add_argument("--pretrain", type=int, default=None)
    ap.add_argument("--max-iter", type=int, default=None)
    ap.add_argument("--shards", type=int, default=8)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--no-certify", action="store_true")
    a = ap.parse_args()

    with PeakMemory() as memory, LocalCluster(n_workers=a.workers, threads_per_worker=1,
                                              processes=True) as cluster, Client(cluster) as client:
        t0 = time.perf_counter()
        rows = count_rows(a.data)
        shards = read_shards(a.data, a.target, a.shards, rows, client)
        t_read = time.perf_counter() - t0
        print(f"read {rows} rows into {len(shards)} shards on {a.workers} workers: "
              f"{t_read:.1f} s", flush=True)
        t0 = time.perf_counter()
        est = fit_sharded(a.method, shards, n_inducing=a.inducing, epsilon=a.epsilon,
                          pretrain=a.pretrain, max_iter=a.max_iter, client=client)
        t_fit = time.perf_counter() - t0
        report = est.sharded_
        warm = {k: v for k, v in (report["pretraining"] or {}).items() if k != "params"}
        print(f"fit ({a.method}): {t_fit:.1f} s; warm start {warm or None}; "
              f"all rows {report['optimiser']}; objective {report['objective']:.10g}",
              flush=True)
        del shards
    certificate, t_cert = None, None
    if not a.no_certify:
        with PeakMemory() as cert_memory:
            frame = pd.read_csv(a.data)
            y = frame.pop(a.target or frame.columns[-1]).to_numpy(np.float64)
            X = frame.to_numpy(np.float64)
            del frame
            t0 = time.perf_counter()
            certificate = json.loads(est.model_.certify(X, y, delta=0.01, loo="approx"))[0]
            t_cert = time.perf_counter() - t0
        print(f"certify: {t_cert:.1f} s, peak {cert_memory.peak / 2**30:.2f} GiB", flush=True)
    print(json.dumps({
        "method": a.method, "rows": rows, "shards": a.shards, "workers": a.workers,
        "inducing": a.inducing, "epsilon": a.epsilon, "pretrain": a.pretrain,
        "max_iter": a.max_iter, "read_s": t_read, "fit_s": t_fit,
        "peak_gib_fit": memory.peak / 2**30, "pretraining": warm or None,
        "optimiser": report["optimiser"], "objective": report["objective"],
        "terms": report["terms"], "certify_s": t_cert, "certificate": certificate,
    }, default=float))


if __name__ == "__main__":
    main()
