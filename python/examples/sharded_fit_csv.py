"""Fit a sparse GP (VFE or kl-PAC-SGP regression, or the svgp / pac-svgp classifier) with
``fit_sharded`` on a Dask LocalCluster, from a CSV too large to want in one process, then
certify it on the whole sample (a measurement).

    python python/examples/sharded_fit_csv.py --data synth_1e6.csv.gz --method vfe \
        --inducing 500 --epsilon 0.5 --pretrain 20000 --max-iter 40 [--shards 8] [--workers 2]
    python python/examples/sharded_fit_csv.py --data synth_clf_large_n1000000.csv \
        --method svgp --inducing 500 --test synth_clf_large_test.csv

A classifier (svgp, pac-svgp) takes the labels as they are (two classes, or one-vs-rest), trains
by the in-process default (Adam on minibatches of 1024 rows above N·M² = 3·10⁸, or
``--batch-size``), is certified on the labels coded as the model codes them, and with
``--test`` reports the test error and the test Gibbs error.

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


CLASSIFIERS = ("svgp", "pac-svgp")


def read_shards(path, target, n_shards, rows, client):
    """The CSV in ``n_shards`` chunks of about ``rows / n_shards`` rows, each scattered to the
    cluster as a future ``(X, y)`` when read."""
    futures, chunk = [], -(-rows // n_shards)
    for frame in pd.read_csv(path, chunksize=chunk):
        y = frame.pop(target or frame.columns[-1]).to_numpy()
        futures.append(client.scatter((frame.to_numpy(np.float64), y)))
    return futures


def count_rows(path):
    """Rows of a CSV with a header (one pass, in chunks)."""
    return sum(len(f) for f in pd.read_csv(path, chunksize=200_000, usecols=[0]))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", required=True)
    ap.add_argument("--target", default=None)
    ap.add_argument("--method", choices=["vfe", "pac-sgp", "svgp", "pac-svgp"], default="vfe")
    ap.add_argument("--batch-size", type=int, default=None)
    ap.add_argument("--test", default=None, help="a test CSV (classifiers)")
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
        if a.method in CLASSIFIERS:
            est = fit_sharded(a.method, shards, n_inducing=a.inducing, max_iter=a.max_iter,
                              batch_size=a.batch_size, client=client)
        else:
            est = fit_sharded(a.method, shards, n_inducing=a.inducing, epsilon=a.epsilon,
                              pretrain=a.pretrain, max_iter=a.max_iter, client=client)
        t_fit = time.perf_counter() - t0
        report = est.sharded_
        warm = {k: v for k, v in (report.get("pretraining") or {}).items() if k != "params"}
        print(f"fit ({a.method}): {t_fit:.1f} s; warm start {warm or None}; "
              f"optimiser {report.get('optimiser')}; objective {report.get('objective')}",
              flush=True)
        del shards
    certificate, t_cert = None, None
    if not a.no_certify:
        with PeakMemory() as cert_memory:
            frame = pd.read_csv(a.data)
            y = frame.pop(a.target or frame.columns[-1]).to_numpy()
            X = frame.to_numpy(np.float64)
            del frame
            t0 = time.perf_counter()
            if a.method in CLASSIFIERS:
                certificate = json.loads(est.model_.certify(X, coded(est, y), loo="none"))[0]
            else:
                certificate = json.loads(est.model_.certify(X, y.astype(np.float64), delta=0.01,
                                                            loo="approx"))[0]
            t_cert = time.perf_counter() - t0
        print(f"certify: {t_cert:.1f} s, peak {cert_memory.peak / 2**30:.2f} GiB", flush=True)
    test = None
    if a.test and a.method in CLASSIFIERS:
        frame = pd.read_csv(a.test)
        y_test = frame.pop(a.target or frame.columns[-1]).to_numpy()
        X_test = frame.to_numpy(np.float64)
        proba = est.predict_proba(X_test)
        index = np.searchsorted(est.classes_, y_test)
        p_true = np.clip(proba[np.arange(len(index)), index], 1e-300, 1.0)
        evaluation = json.loads(est.model_.evaluate(X_test, coded(est, y_test)))
        test = {"error": float(np.mean(est.predict(X_test) != y_test)),
                "log_loss": float(-np.mean(np.log(p_true))), "evaluation": evaluation}
        print(f"test: {test}", flush=True)
    print(json.dumps({
        "method": a.method, "rows": rows, "shards": a.shards, "workers": a.workers,
        "inducing": a.inducing, "epsilon": a.epsilon, "pretrain": a.pretrain,
        "max_iter": a.max_iter, "read_s": t_read, "fit_s": t_fit,
        "peak_gib_fit": memory.peak / 2**30, "pretraining": warm or None,
        "optimiser": report.get("optimiser"), "objective": report.get("objective"),
        "terms": report.get("terms"), "certify_s": t_cert, "certificate": certificate,
        "test": test,
    }, default=float))


def coded(est, y):
    """Labels as a classifier's model reads them: ±1 for two classes, else class indices."""
    index = np.searchsorted(est.classes_, y)
    return np.where(index == 1, 1.0, -1.0) if len(est.classes_) == 2 else index.astype(float)


if __name__ == "__main__":
    main()
