#!/usr/bin/env python3
"""Regenerate the tables of the guide's reproduce pages from `pacgp reproduce … --json`.

    scripts/reproduce_tables.py [--pacgp BINARY] [--json-dir DIR] [PAGE …]

Each page `docs/reproduce/EXPERIMENT.md` holds its tables between a marker naming the run and
an end marker:

    <!-- table: pac-sgp-inducing --quick -->
    … (replaced) …
    <!-- /table -->

For each marker the script runs `pacgp reproduce pac-sgp-inducing --quick --json --out DIR`
(the release binary by default) and writes the experiment's table between the markers. With
`--json-dir DIR` it reads `DIR/pac-sgp-inducing_--quick.json` (the run's arguments joined by
`_`) where that file exists, instead of running. `PAGE` names the pages to redo (default: all).
The markers name runs of minutes at most; the pages give the tables of longer runs as
measured, with their commands. Only the Python standard library is used.
"""

import argparse
import json
import pathlib
import re
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[1]
PAGES = ROOT / "docs" / "reproduce"
MARKER = re.compile(r"<!-- table: (?P<run>[^>]*?) -->\n(?P<body>.*?)<!-- /table -->", re.S)


def fmt(v, digits=3):
    """A cell: numbers to `digits` decimals, None as —."""
    if v is None:
        return "—"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if v != 0 and (abs(v) < 10 ** -digits or abs(v) >= 1e6):
            return f"{v:.2e}"
        return f"{v:.{digits}f}"
    return str(v)


def table(header, rows):
    """A Markdown table; numeric columns right-aligned."""
    numeric = [all(isinstance(r[i], (int, float)) and not isinstance(r[i], bool) for r in rows)
               for i in range(len(header))]
    out = ["| " + " | ".join(header) + " |",
           "| " + " | ".join("---:" if n else "---" for n in numeric) + " |"]
    out += ["| " + " | ".join(fmt(c) for c in r) + " |" for r in rows]
    return "\n".join(out) + "\n"


def columns(rows, spec):
    """Rows of dicts as a table: `spec` is a list of (key, header)."""
    return table([h for _, h in spec], [[r.get(k) for k, _ in spec] for r in rows])


# One renderer per experiment: the `--json` object → Markdown.

def pac_gp_epsilon(d):
    return columns(d["summary"], [
        ("method", "method"), ("epsilon", "ε (standardised)"), ("bound", "bound"),
        ("train_gibbs", "train Gibbs"), ("test_gibbs", "test Gibbs"), ("test_mse", "test MSE"),
        ("kl_over_n", "KL/N"), ("noise_variance", "σ²")])


def pac_gp_snelson(d):
    return columns(d["summary"], [
        ("label", "model"), ("epsilon", "ε (standardised)"), ("bound", "bound"),
        ("noise_variance", "σ²"), ("kl_over_n", "KL/N")])


def pac_sgp_inducing(d):
    return columns(d["rows"], [
        ("dataset", "data"), ("m", "M"), ("method", "method"), ("bound", "bound"),
        ("train_gibbs", "train Gibbs"), ("test_gibbs", "test Gibbs"), ("test_mse", "test MSE"),
        ("kl_over_n", "KL/N"), ("noise_variance", "σ²")])


def ivm_uci(d):
    return columns(d["summary"], [
        ("dataset", "data"), ("method", "method"), ("bound", "bound"),
        ("train_gibbs", "train Gibbs"), ("test_gibbs", "test Gibbs"),
        ("test_error", "test 0-1"), ("kl", "KL"), ("bound_holds", "bound ≥ test Gibbs"),
        ("non_vacuous", "bound < ½"), ("reps", "draws")])


def ivm_mnist_grid(d):
    rows = []
    for name in ("best_by_bound", "best_by_validation"):
        r = dict(d[name], chosen=name.replace("_", " "))
        rows.append(r)
    return columns(rows, [
        ("chosen", "cell"), ("w", "w"), ("c", "C"), ("bound", "bound"),
        ("train_gibbs", "train Gibbs"), ("test_gibbs", "test Gibbs"),
        ("train_error", "train 0-1"), ("test_error", "test 0-1"), ("kl", "KL")])


def ivm_selection_2d(d):
    return table(["method", "points kept", "first ten (row indices)"],
                 [[m["method"], len(m["selected"]), " ".join(map(str, m["selected"][:10]))]
                  for m in d["methods"]])


def risk_coverage(d):
    at = [0.25, 0.5, 0.75, 1.0]
    keys = []
    for r in d["rows"]:
        k = (r["dataset"], r["ordering"])
        if k not in keys:
            keys.append(k)
    risk = {(r["dataset"], r["ordering"], round(r["coverage"], 4)): r["risk"] for r in d["rows"]}
    rows = [[ds, order] + [fmt(risk.get((ds, order, c)), 4) for c in at] for ds, order in keys]
    return table(["data", "ordering"] + [f"risk at coverage {c}" for c in at], rows)


def opper_winther(d):
    rows = [dict(r, cv=f"{r['cv_errors']}/683 = {r['cv_error']:.4f}",
                 approx=f"{r['loo_approx']:.4f}",
                 exact=f"{round(r['loo_exact'] * r['n_train'])}/{r['n_train']} = {r['loo_exact']:.4f}",
                 lv=f"{r['lengthscale']:g}, {r['input_noise']:g} ({r['kappa']:g})")
            for r in d["table"]]
    return columns(rows, [
        ("algorithm", "algorithm"), ("lv", "l, v (κ)"), ("exact", "exact LOO"),
        ("approx", "approximate LOO"), ("cv", "10-fold CV"), ("iterations", "iterations")])


def zhang_sparse(d):
    curves = d["curves"]
    names = [n for n in ("greedy", "kappa-greedy", "random") if n in curves]
    rows = [[k] + [curves[n]["mean_delta_r"][k] for n in names]
            + [curves["greedy"]["theorem_3_1_bound"][k]] for k in (10, 50, 100, 200)]
    head = (f"R(ŵ) = {d['r_hat']['mean']:.3f} ± {d['r_hat']['sd']:.3f}, "
            f"ΔR(0) = {d['delta_r0']['mean']:.3f} ± {d['delta_r0']['sd']:.3f} "
            f"(mean ± sd over {len(d['instances'])} data seeds)\n\n")
    return head + table(["k"] + [f"ΔR(k), {n}" for n in names] + ["Theorem 3.1 bound"], rows)


def zhang_kin40k(d):
    return columns(d["rows"], [
        ("m", "M"), ("method", "method"), ("test_rmse", "test RMSE"), ("bound", "bound"),
        ("train_gibbs", "train Gibbs"), ("test_gibbs", "test Gibbs"), ("kl_over_n", "KL/N")])


def _pm(r, key):
    """`mean ± standard error` of a summary field with its `_se` companion."""
    return f"{r[key]:.4f} ± {r[key + '_se']:.4f}"


def _rounded(r):
    """KL and penalty to 2 decimals, the certificate's sample size N to a whole number."""
    return dict(r, kl=f"{r['kl']:.2f}", penalty=f"{r['penalty']:.2f}", n_bound=f"{r['n_bound']:.0f}")


def tighter_bounds(d):
    rows = [dict(_rounded(r), bound_=_pm(r, "bound"), test_=_pm(r, "test_gibbs"),
                 rel_=f"{100 * r['rel_to_reference']:+.1f}%", kernel_=str(r["kernel"]))
            for r in d.get("summary") or []]
    out = columns(rows, [
        ("dataset", "data"), ("kernel_", "kernel"), ("lever", "lever"), ("bound_", "bound"),
        ("rel_", "rel"), ("test_", "test Gibbs"), ("test_mse", "test MSE"), ("kl", "KL"),
        ("penalty", "penalty"), ("n_bound", "N"),
        ("worst_test_lower_minus_bound", "worst lower − bound")]) if rows else ""
    classifiers = (d.get("classifiers") or {}).get("summary") or []
    if classifiers:
        rows = [dict(_rounded(r), bound_=_pm(r, "bound"), test_=_pm(r, "test_gibbs"),
                     rel_=f"{100 * r['rel_to_reference']:+.1f}%") for r in classifiers]
        out += "\n" + columns(rows, [
            ("dataset", "data"), ("method", "method"), ("bound_", "bound"), ("rel_", "rel"),
            ("test_", "test Gibbs"), ("test_error", "test error"), ("kl", "KL"),
            ("penalty", "penalty"), ("n_bound", "N"),
            ("worst_test_lower_minus_bound", "worst lower − bound")])
    return out


RENDER = {
    "pac-gp-epsilon": pac_gp_epsilon, "pac-gp-snelson": pac_gp_snelson,
    "pac-sgp-inducing": pac_sgp_inducing, "ivm-uci": ivm_uci, "ivm-mnist-grid": ivm_mnist_grid,
    "ivm-selection-2d": ivm_selection_2d, "risk-coverage": risk_coverage,
    "opper-winther": opper_winther, "zhang-sparse": zhang_sparse, "zhang-kin40k": zhang_kin40k,
    "tighter-bounds": tighter_bounds,
}


def result(run, args):
    """The `--json` object of `pacgp reproduce RUN`: from --json-dir, or by running it."""
    words = run.split()
    if args.json_dir:
        path = pathlib.Path(args.json_dir) / ("_".join(words) + ".json")
        if path.exists():
            return json.loads(path.read_text())
    with tempfile.TemporaryDirectory() as out:
        cmd = [args.pacgp, "reproduce", *words, "--json", "--out", out, "--data-dir",
               str(ROOT / "data")]
        print("running", " ".join(cmd), file=sys.stderr)
        done = subprocess.run(cmd, check=True, capture_output=True, text=True)
    return json.loads(done.stdout)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--pacgp", default=str(ROOT / "target" / "release" / "pacgp"))
    p.add_argument("--json-dir", help="read RUN.json files here instead of running")
    p.add_argument("pages", nargs="*", help="experiments to redo (default: all pages)")
    args = p.parse_args()
    names = args.pages or sorted(f.stem for f in PAGES.glob("*.md") if f.stem in RENDER)
    for name in names:
        page = PAGES / f"{name}.md"
        text = page.read_text()

        def fill(m):
            run = m.group("run")
            render = RENDER[run.split()[0]]
            return f"<!-- table: {run} -->\n{render(result(run, args))}<!-- /table -->"

        new = MARKER.sub(fill, text)
        if new != text:
            page.write_text(new)
            print("updated", page.relative_to(ROOT), file=sys.stderr)


if __name__ == "__main__":
    main()
