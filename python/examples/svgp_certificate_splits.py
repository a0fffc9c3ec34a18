"""Certificates of the sparse variational GP classifier on seeded splits (a measurement): for
each seed, N training rows drawn from a large CSV, the ELBO-trained (svgp) and the
bound-trained (pac-svgp) models fitted with their defaults at M inducing inputs, each
certificate set beside the model's error on a held-out test CSV.

    python python/examples/svgp_certificate_splits.py --data synth_clf_large_n100000.csv \
        --test synth_clf_large_test.csv --n 10000 --splits 10 --inducing 100

(the sets from ``../shared/peers/make_data.py --large``). Prints one row per split and method —
the certificate (the kl PAC-Bayes bound on the latent Gibbs classifier's error, δ = 0.01), the
test Gibbs error it bounds, their ratio, the test error of ``predict``, the certificate on that
deployed predictor (derandomised PAC-Bayes, or with ``--holdout F`` the exact binomial-tail
bound on a seeded fraction F kept out of the fit) and its ratio to that test error, and
whether both held (certificate ≥ the test error it bounds) — then a summary per method, and
with ``--json`` one JSON line per row.
"""

import argparse
import json
import time
import warnings

import numpy as np
import pandas as pd
from sklearn.exceptions import ConvergenceWarning

from pacgp import SparseGPClassifier


def split_rows(n_pool, n, seed):
    """The seeded draw of ``n`` training rows out of ``n_pool``."""
    return np.sort(np.random.default_rng(seed).choice(n_pool, size=n, replace=False))


def one_fit(objective, X, y, X_test, y_test, m, seed, holdout):
    t0 = time.perf_counter()
    est = SparseGPClassifier(objective=objective, n_inducing=m, random_state=seed,
                             certify_holdout=holdout).fit(X, y)
    fit_s = time.perf_counter() - t0
    coded = np.where(y_test == est.classes_[1], 1.0, -1.0)
    evaluation = json.loads(est.model_.evaluate(X_test, coded))
    cert = est.certificate_
    deployed = cert["deployed"]
    return {
        "objective": objective, "seed": seed, "n": len(y), "m": m, "fit_s": fit_s,
        "certificate": cert["bound"], "kl": cert["kl"], "train_gibbs": cert["empirical_risk"],
        "test_gibbs": evaluation["gibbs_risk"], "test_error": evaluation["error_rate"],
        "ratio": cert["bound"] / evaluation["gibbs_risk"],
        "held": cert["bound"] >= evaluation["gibbs_risk"],
        "deployed_bound": deployed["bound"], "deployed": deployed["value"],
        "deployed_ratio": deployed["value"] / evaluation["error_rate"],
        "deployed_held": deployed["value"] >= evaluation["error_rate"],
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", required=True)
    ap.add_argument("--test", required=True)
    ap.add_argument("--target", default="label")
    ap.add_argument("--n", type=int, default=10000)
    ap.add_argument("--splits", type=int, default=10)
    ap.add_argument("--inducing", type=int, default=100)
    ap.add_argument("--methods", default="svgp,pac-svgp",
                    help="comma-separated: svgp (the ELBO), pac-svgp (the bound)")
    ap.add_argument("--holdout", type=float, default=None,
                    help="certify the deployed predictor on this seeded fraction kept out of the fit")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()

    pool = pd.read_csv(a.data)
    y_pool = pool.pop(a.target).to_numpy()
    X_pool = pool.to_numpy(np.float64)
    test = pd.read_csv(a.test)
    y_test = test.pop(a.target).to_numpy()
    X_test = test.to_numpy(np.float64)
    rows = []
    print(f"{'method':9} {'seed':>4} {'cert':>7} {'test Gibbs':>10} {'ratio':>6} "
          f"{'test err':>8} {'deployed':>8} {'ratio':>6} {'KL':>7} {'fit s':>6} held")
    for seed in range(a.splits):
        pick = split_rows(len(y_pool), a.n, seed)
        for objective, name in [("elbo", "svgp"), ("bound", "pac-svgp")]:
            if name not in a.methods.split(","):
                continue
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ConvergenceWarning)
                r = one_fit(objective, X_pool[pick], y_pool[pick], X_test, y_test,
                            a.inducing, seed, a.holdout)
            rows.append(dict(r, method=name))
            print(f"{name:9} {seed:>4} {r['certificate']:7.4f} {r['test_gibbs']:10.4f} "
                  f"{r['ratio']:6.2f} {r['test_error']:8.4f} {r['deployed']:8.4f} "
                  f"{r['deployed_ratio']:6.2f} {r['kl']:7.1f} {r['fit_s']:6.1f} "
                  f"{'yes' if r['held'] and r['deployed_held'] else 'NO'}", flush=True)
            if a.json:
                print(json.dumps(dict(r, method=name)), flush=True)
    for name in ("svgp", "pac-svgp"):
        mine = [r for r in rows if r["method"] == name]
        if not mine:
            continue
        ratios = [r["ratio"] for r in mine]
        dep = [r["deployed_ratio"] for r in mine]
        print(f"{name}: held on {sum(r['held'] for r in mine)}/{len(mine)} splits; "
              f"certificate / test Gibbs error {np.mean(ratios):.2f} "
              f"(min {np.min(ratios):.2f}, max {np.max(ratios):.2f}); mean test error "
              f"{np.mean([r['test_error'] for r in mine]):.4f}; deployed "
              f"({mine[0]['deployed_bound']}) held on {sum(r['deployed_held'] for r in mine)}/"
              f"{len(mine)}, / test error {np.mean(dep):.2f} (min {np.min(dep):.2f}, "
              f"max {np.max(dep):.2f})")


if __name__ == "__main__":
    main()
