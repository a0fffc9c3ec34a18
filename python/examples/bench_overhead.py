"""Python overhead against the CLI, and two Python threads fitting at once (a benchmark, not a test).

    python python/examples/bench_overhead.py --cli target/release/pacgp \
        --data synth_reg_n2000.csv [--repeats 3] [--threads 1] [--parallel-n 1000] [--global-pool]

1. `pacgp --threads T fit --method gpr --json` against `GPRegressor(certify=False,
   n_threads=T).fit` on the same CSV, alternately; the CLI's time is the wall time of the
   process (reading the CSV, fitting, writing the model file) and its own `fit_seconds`; the
   Python time is the wall time of `fit` (validation, copying the arrays, the fit). The build
   of the module and of the CLI must match (both release) for the comparison to mean anything.
2. Two fits of GPRegressor with one rayon thread each (`n_threads=1`) on the first
   `--parallel-n` rows: one after the other, then in two Python threads at once; the ratio
   parallel/serial is ≈ 0.5 if the GIL is released during the fits, ≈ 1 if not.
"""

import argparse
import json
import subprocess
import tempfile
import threading
import time

import numpy as np

import pacgp


def read(path):
    data = np.loadtxt(path, delimiter=",", skiprows=1)
    return data[:, :-1], data[:, -1]


def cli_fit(cli, data, threads):
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        out = subprocess.run(
            [cli, "--threads", str(threads), "fit", "--data", data, "--method", "gpr",
             "--out", f"{tmp}/m.json", "--json"],
            check=True, capture_output=True, text=True,
        )
        wall = time.perf_counter() - t0
    summary = json.loads(out.stdout)
    return wall, summary["fit_seconds"], summary["evaluations"]


def python_fit(X, y, threads):
    t0 = time.perf_counter()
    est = pacgp.GPRegressor(certify=False, n_threads=threads).fit(X, y)  # None: global pool
    return time.perf_counter() - t0, est.fit_report_["optimiser"]["evaluations"]


def overhead(args):
    X, y = read(args.data)
    rows = []
    for _ in range(args.repeats):
        c_wall, c_fit, c_evals = cli_fit(args.cli, args.data, args.threads)
        p_wall, p_evals = python_fit(X, y, None if args.global_pool else args.threads)
        rows.append((c_wall, c_fit, p_wall))
        print(f"CLI wall {c_wall:.2f} s (fit {c_fit:.2f} s, {c_evals} evaluations); "
              f"Python fit {p_wall:.2f} s ({p_evals} evaluations)", flush=True)
    c_wall, c_fit, p_wall = np.median(np.array(rows), axis=0)
    print(f"median over {args.repeats}: Python / CLI wall = {p_wall / c_wall:.3f}, "
          f"Python / CLI fit_seconds = {p_wall / c_fit:.3f}")


def parallel(args):
    X, y = read(args.data)
    X, y = X[: args.parallel_n], y[: args.parallel_n]

    def fit():
        pacgp.GPRegressor(certify=False, n_threads=1).fit(X, y)

    for _ in range(args.repeats):
        t0 = time.perf_counter()
        fit()
        fit()
        serial = time.perf_counter() - t0
        threads = [threading.Thread(target=fit) for _ in range(2)]
        t0 = time.perf_counter()
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        both = time.perf_counter() - t0
        print(f"N = {len(y)}: two fits serial {serial:.2f} s, in two threads {both:.2f} s, "
              f"ratio {both / serial:.3f}", flush=True)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--cli", required=True)
    p.add_argument("--data", required=True)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--parallel-n", type=int, default=1000)
    p.add_argument("--skip-overhead", action="store_true")
    p.add_argument("--skip-parallel", action="store_true")
    p.add_argument(
        "--global-pool", action="store_true",
        help="fit in the global rayon pool on this thread, as the CLI does (set "
             "RAYON_NUM_THREADS to --threads): the same optimiser path as the CLI, evaluation "
             "for evaluation; a private pool's worker thread can end on a slightly different path",
    )
    args = p.parse_args()
    if not args.skip_overhead:
        overhead(args)
    if not args.skip_parallel:
        parallel(args)


if __name__ == "__main__":
    main()
