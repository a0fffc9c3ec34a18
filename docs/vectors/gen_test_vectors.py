"""Regenerate the derived test vectors of docs/test-vectors.md with mpmath alone.

Every number here is computed from its definition in docs/math.md at 40 significant digits
(no library code of pacgp is used): the kl-inverse table and its derivatives (§1, §2), the
normal-tail values (§3), the grid penalties (§4), the four-point regression vector, full and
sparse (§5, §6), and the PAC-Bayes bounds of the third-party boston rows (§7).

Run from the repo root:  python3 docs/vectors/gen_test_vectors.py   (mpmath ≥ 1.2; ~2 s)
"""
import mpmath as mp

mp.mp.dps = 40


def kl(q, p):
    """Binary KL divergence kl(q‖p) (math.md §1.1)."""
    q, p = mp.mpf(q), mp.mpf(p)
    a = 0 if q == 0 else q * mp.log(q / p)
    b = 0 if q == 1 else (1 - q) * mp.log((1 - q) / (1 - p))
    return a + b


def kl_inv(q, c):
    """Upper inverse max{p ≥ q : kl(q‖p) ≤ c} by bisection to 1e-35 (math.md §1.2)."""
    lo, hi = mp.mpf(q), mp.mpf(1)
    for _ in range(130):
        mid = (lo + hi) / 2
        if kl(q, mid) > c:
            hi = mid
        else:
            lo = mid
    return lo


def kl_inv_grad(q, c):
    """(∂kl⁻¹/∂q, ∂kl⁻¹/∂c), paper eqs. (12)–(13) (math.md §1.4)."""
    p = kl_inv(q, c)
    dc = p * (1 - p) / (p - q)
    return p, dc * mp.log(p * (1 - q) / (q * (1 - p))), dc


def ncdf(x):
    return mp.ncdf(x)


def se(a, b, var=1, ls=1):
    return var * mp.exp(-((a - b) ** 2) / (2 * ls**2))


def band_risk(y, m, v, eps):
    """ε-band Gibbs risk of one point (math.md §4.1)."""
    s = mp.sqrt(v)
    return ncdf(-(y + eps - m) / s) + ncdf((y - eps - m) / s)


def fmt(x, d=8):
    return mp.nstr(x, d + 2, strip_zeros=False) if abs(x) >= 1 else f"{float(x):.{d}f}"


def section(title):
    print(f"\n## {title}")


LN_L = mp.log(1201)


def bounds(kl_value, rs, n, delta, penalty):
    c = (kl_value + penalty + mp.log(2 * mp.sqrt(n) / delta)) / n
    return c, kl_inv(rs, c), rs + mp.sqrt(c / 2)


def main():
    section("1 kl⁻¹(q, c) table")
    cs = [0.001, 0.01, 0.05, 0.1, 0.5, 1.0]
    for q in ["0.00", "0.01", "0.05", "0.10", "0.20", "0.30", "0.50"]:
        print(q, " ".join(f"{float(kl_inv(mp.mpf(q), mp.mpf(c))):.6f}" for c in cs))

    section("2 kl⁻¹ derivative spot checks")
    for q, c in [("0.1", "0.05"), ("0.3", "0.2")]:
        p, dq, dc = kl_inv_grad(mp.mpf(q), mp.mpf(c))
        print(f"(q, c) = ({q}, {c}): p* = {float(p):.7f}, ∂q = {float(dq):.7f}, ∂c = {float(dc):.7f}")

    section("3 normal tails and other constants")
    print("ln Φ(−40)          =", mp.nstr(mp.log(ncdf(-40)), 17))
    print("ln Φ(−10)          =", mp.nstr(mp.log(ncdf(-10)), 17))
    print("ln Φ(10)           =", mp.nstr(mp.log1p(-ncdf(-10)), 17))
    print("φ(−50)/Φ(−50)      =", mp.nstr(mp.npdf(-50) / ncdf(-50), 17))
    print("Φ⁻¹(0.975)         =", mp.nstr(mp.sqrt(2) * mp.erfinv(mp.mpf("0.95")), 17))
    print("σ(2) = 1/(1+e⁻²)   =", mp.nstr(1 / (1 + mp.exp(-2)), 17))
    print("ln 1e5             =", mp.nstr(mp.log(mp.mpf(10) ** 5), 17))

    section("4 grid penalties T·ln 1201")
    for t in [2, 9, 14, 27]:
        print(f"T = {t}: {float(t * LN_L):.6f}")

    section("5 four-point full GP (X = 0..3, SE(1, 1), σ² = 0.1, ε = 0.2, δ = 0.01)")
    xs = [mp.mpf(i) for i in range(4)]
    y = mp.matrix([mp.mpf(v) for v in ["0.5", "-0.2", "0.3", "0.9"]])
    s2, eps, delta = mp.mpf("0.1"), mp.mpf("0.2"), mp.mpf("0.01")
    k = mp.matrix(4, 4)
    for i in range(4):
        for j in range(4):
            k[i, j] = se(xs[i], xs[j])
    c_inv = (k + s2 * mp.eye(4)) ** -1
    mu = k * c_inv * y
    cov = k - k * c_inv * k
    kl_full = (
        mp.log(mp.det(mp.eye(4) + k / s2)) / 2
        - sum((k * c_inv)[i, i] for i in range(4)) / 2
        + (y.T * c_inv * k * c_inv * y)[0] / 2
    )
    rs = sum(band_risk(y[i], mu[i], cov[i, i], eps) for i in range(4)) / 4
    c, bkl, bsq = bounds(kl_full, rs, 4, delta, 2 * LN_L)
    print("μ  =", [fmt(mu[i]) for i in range(4)])
    print("v  =", [fmt(cov[i, i]) for i in range(4)])
    print(f"KL = {fmt(kl_full)}, R_S = {fmt(rs)}, C = {fmt(c)}, B_kl = {fmt(bkl)}, B_sqrt = {fmt(bsq)}")

    section("6 four-point sparse GP, Z = (0.5, 2.5), no jitter")
    zs = [mp.mpf("0.5"), mp.mpf("2.5")]
    kuu = mp.matrix(2, 2)
    kuf = mp.matrix(2, 4)
    for a in range(2):
        for b in range(2):
            kuu[a, b] = se(zs[a], zs[b])
        for i in range(4):
            kuf[a, i] = se(zs[a], xs[i])
    kuu_inv = kuu**-1
    qff = kuf.T * kuu_inv * kuf
    for alpha_s in [0, 1]:
        lam = mp.matrix(4, 4)
        for i in range(4):
            lam[i, i] = 1 / (s2 + alpha_s * (1 - qff[i, i]))
        inner = (kuu + kuf * lam * kuf.T) ** -1
        sigma = kuu * inner * kuu
        a = kuu * inner * kuf * lam * y
        kl_sparse = (
            sum((kuu_inv * sigma)[i, i] for i in range(2))
            + (a.T * kuu_inv * a)[0]
            - 2
            + mp.log(mp.det(kuu))
            - mp.log(mp.det(sigma))
        ) / 2
        w = kuu_inv * kuf
        mean = w.T * a
        var = [1 - (kuf[:, i].T * kuu_inv * (kuu - sigma) * kuu_inv * kuf[:, i])[0] for i in range(4)]
        rs = sum(band_risk(y[i], mean[i], var[i], eps) for i in range(4)) / 4
        name = "VFE form (α_s = 0)" if alpha_s == 0 else "FITC form (α_s = 1)"
        print(f"{name}: KL = {fmt(kl_sparse)}, R_S = {fmt(rs)}, μ = {[fmt(mean[i]) for i in range(4)]}")

    section("7 third-party boston rows: (KL, R_S) → (B_kl, B_sqrt), N = 404, δ = 0.01, 2 ln 1201")
    rows = [
        ("VFE 20", "69.647707", "0.071136"),
        ("VFE 40", "86.492905", "0.050645"),
        ("VFE 60", "103.735985", "0.036916"),
        ("VFE 80", "124.244217", "0.025626"),
        ("FITC 20", "71.965028", "0.120503"),
        ("FITC 40", "103.322943", "0.100206"),
        ("FITC 60", "122.023825", "0.091884"),
        ("FITC 80", "140.128382", "0.087382"),
    ]
    for name, kl_value, rs in rows:
        c, bkl, bsq = bounds(mp.mpf(kl_value), mp.mpf(rs), 404, delta, 2 * LN_L)
        print(f"{name}: C = {float(c):.6f}, B_kl = {float(bkl):.6f}, B_sqrt = {float(bsq):.6f}")


if __name__ == "__main__":
    main()
