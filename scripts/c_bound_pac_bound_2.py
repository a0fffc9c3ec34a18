#!/usr/bin/env python3
"""PAC-Bound 1 against PAC-Bound 2 of Germain, Lacasse, Laviolette, Marchand & Roy (2015) at the
numbers of a pacgp certificate (issue 42, docs/reproduce/deployed.md).

    c_bound_pac_bound_2.py GIBBS DISAGREEMENT N KL PENALTY [--delta 0.01]

GIBBS, DISAGREEMENT and KL are a binary classifier's `risk`, `second_risk` and `kl` from the
`derandomised` part of `pacgp certify --json` (its disagreement form at a scale c); PENALTY is
the Gibbs certificate's `penalty` plus ln 56 (the deployed grid enlarged by the C-bound).

- PAC-Bound 1 (what `certificate::deployed` computes as the C-bound form): the Gibbs risk's
  kl-inverse from above with KL and the disagreement's from below with 2·KL, each at δ/2 with
  Maurer's `ln(2√N/(δ/2))`, in `1 − (1 − 2r)²/(1 − 2d)`.
- PAC-Bound 2: one bound on the pair (joint error e = r − d/2, disagreement d) of two draws,
  the trinomial `kl((ê, d̂) ‖ (e, d)) ≤ (2·KL + PENALTY + ln((ξ(N) + N)/δ))/N`, and the C-bound's
  largest value on that set (with `d ≤ 2(√e − e)`, `2e + d < 1`), found here on a 1501 × 1501
  grid of (e, d) — a lower estimate of the supremum, so PAC-Bound 2 is at least what it prints.

Needs numpy and scipy.
"""

import argparse
from math import log, sqrt

import numpy as np
from scipy.optimize import brentq
from scipy.special import gammaln


def kl(q, p):
    """KL divergence of two discrete distributions (lists of probabilities)."""
    return sum(a * log(a / b) for a, b in zip(q, p) if a > 0)


def kl_inverse(q, c, upper):
    """The p on the `upper` (or lower) side of q with kl(q‖p) = c, by Brent's method."""
    f = lambda p: kl([q, 1 - q], [p, 1 - p]) - c
    end = 1 - 1e-12 if upper else 1e-12
    if f(end) <= 0:
        return end
    return brentq(f, q, end) if upper else brentq(f, end, q)


def xi(n):
    """Maurer's ξ(N) = Σ_k C(N,k)(k/N)^k(1 − k/N)^(N−k)."""
    k = np.arange(1, n, 1.0)
    terms = gammaln(n + 1) - gammaln(k + 1) - gammaln(n - k + 1)
    terms += k * np.log(k / n) + (n - k) * np.log(1 - k / n)
    return 2.0 + np.exp(terms).sum()


def c_bound(r, d):
    """The C-bound of Gibbs risk r and disagreement d; 1 where r ≥ ½."""
    return 1.0 if r >= 0.5 else 1 - (1 - 2 * r) ** 2 / (1 - 2 * d)


def pac_bound_1(r, d, n, kl_qp, penalty, delta):
    confidence = log(2 * sqrt(n) / (delta / 2))
    r_up = kl_inverse(r, (kl_qp + penalty + confidence) / n, upper=True)
    d_low = kl_inverse(d, (2 * kl_qp + penalty + confidence) / n, upper=False)
    return c_bound(r_up, d_low)


def pac_bound_2(r, d, n, kl_qp, penalty, delta, points=1501):
    e_hat = r - d / 2
    budget = (2 * kl_qp + penalty + log((xi(n) + n) / delta)) / n
    e, dd = np.meshgrid(np.linspace(1e-6, 0.5, points), np.linspace(1e-6, 0.5, points))
    rest = 1 - e - dd
    ok = (dd <= 2 * (np.sqrt(e) - e)) & (2 * e + dd < 1) & (rest > 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        div = e_hat * np.log(e_hat / e) + d * np.log(d / dd)
        div += (1 - e_hat - d) * np.log((1 - e_hat - d) / rest)
        value = 1 - (1 - (2 * e + dd)) ** 2 / (1 - 2 * dd)
    inside = ok & (div <= budget)
    return float(value[inside].max()) if inside.any() else 1.0


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("gibbs", type=float)
    p.add_argument("disagreement", type=float)
    p.add_argument("n", type=int)
    p.add_argument("kl", type=float)
    p.add_argument("penalty", type=float)
    p.add_argument("--delta", type=float, default=0.01)
    a = p.parse_args()
    args = (a.gibbs, a.disagreement, a.n, a.kl, a.penalty, a.delta)
    print(f"PAC-Bound 1: {pac_bound_1(*args):.4f}")
    print(f"PAC-Bound 2: {pac_bound_2(*args):.4f} (at least)")


if __name__ == "__main__":
    main()
