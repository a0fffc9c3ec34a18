"""The sharded VFE and PAC-SGP objectives on two Dask worker processes at points where
cond(K_uu) is 1.2e9 and 1e10 (D = 4, M = 50, σ_f² = e⁶, lengthscales ≈ e² and e^2.4), against
the extended-precision complex-step reference of ``crates/pacgp/tests/fixtures/
vfe_ill_conditioned.json`` (gen_vfe_ill_conditioned.py) and the single-process objective.
The first sharded VFE formed K_ZX K_XZ unwhitened and was off by hundreds of nats here."""

import json
import pathlib

import numpy as np
import pytest

from pacgp.distributed import pac_sgp_objective, sharded_pac_sgp, sharded_vfe

FIXTURE = (pathlib.Path(__file__).resolve().parents[2] / "crates" / "pacgp" / "tests"
           / "fixtures" / "vfe_ill_conditioned.json")
D = 4


@pytest.fixture(scope="module")
def reference():
    with open(FIXTURE) as f:
        ref = json.load(f)
    X, y = np.array(ref["x"]), np.array(ref["y"])
    return ref, X, y


def parts(point, m):
    p = np.array(point["params"])
    return list(p[:D + 1]), float(np.exp(p[D + 1])), p[D + 2:].reshape(m, D)


def condition(theta, z):
    ell2 = np.exp(2 * np.array(theta[1:]))
    d2 = (((z[:, None, :] - z[None, :, :]) ** 2) / ell2).sum(axis=2)
    ev = np.linalg.eigvalsh(np.exp(theta[0]) * np.exp(-d2 / 2) + 1e-6 * np.eye(len(z)))
    return ev[-1] / ev[0]


def rel(a, b):
    return np.linalg.norm(np.asarray(a) - np.asarray(b)) / np.linalg.norm(b)


def shards_of(X, y, cuts=(0, 300, 301, 1700, 2000)):
    return [(X[a:b], y[a:b]) for a, b in zip(cuts, cuts[1:])]


def test_sharded_vfe_on_dask_matches_the_extended_precision_reference(reference, dask_client):
    ref, X, y = reference
    held = dask_client.scatter(shards_of(X, y), hash=False)
    for point in ref["points"]:
        theta, noise, z = parts(point, ref["m"])
        assert condition(theta, z) > 1e9
        value, grad = sharded_vfe(held, "se-ard", theta, noise, z, client=dask_client)
        want = float(point["value"])
        # The value's double-precision floor at the first point is ~1.4e-9 (the trace term).
        assert abs(value - want) <= 1e-8 * abs(want)
        assert rel(grad, np.array(point["gradient"], dtype=float)) <= 1e-8


def test_sharded_pac_sgp_on_dask_matches_the_reference_and_the_single_process_bound(
        reference, dask_client):
    ref, X, y = reference
    held = dask_client.scatter(shards_of(X, y), hash=False)
    for point in ref["pac_sgp"]:
        theta, noise, z = parts(point, ref["m"])
        cond = condition(theta, z)
        assert cond > 1e9
        options = dict(alpha_s=point["alpha_s"], delta=0.05)
        terms, grad = sharded_pac_sgp(held, "se-ard", theta, noise, z, point["epsilon"],
                                      client=dask_client, return_terms=True, **options)
        np.testing.assert_allclose(terms[0], float(point["risk"]), rtol=1e-8)
        np.testing.assert_allclose(terms[1], float(point["kl"]), rtol=1e-10)
        single_terms, single_grad = pac_sgp_objective(X, y, "se-ard", theta, noise, z,
                                                      point["epsilon"], **options)
        np.testing.assert_allclose(terms, single_terms, rtol=1e-10)
        # Both at the double-precision floor: ≤ 1e-9 at cond 1.2e9, 1–3.5e-8 at 1e10.
        assert rel(grad, single_grad) <= (1e-8 if cond < 2e9 else 5e-8)
