//! The parallel kernel Adatron (seed 001 §17.7; Anlauf & Biehl 1989, extended to kernels by
//! Frieß, Cristianini & Campbell 1998): all α move at once along the dual gradient,
//!
//! `α_i ← clip(α_i + η_i (1 − y_i F_i), 0, C)`, `F = k(y∘α)`, `η_i = η/k_ii`,
//!
//! i.e. projected (diagonally preconditioned) gradient ascent on `W(α)`. With a bias the
//! projection is onto `{0 ≤ α ≤ C, Σ y_i α_i = 0}` in the `diag(k)` metric:
//! `α_i = clip(z_i − λ y_i/k_ii, 0, C)` with the multiplier λ found by bisection on the
//! monotone `Σ y_i α_i(λ)` (then a secant step on the final linear piece). The rate is
//! `η = 1/L`, `L = λ_max(D^{-½} k D^{-½})` by power iteration, so every sweep increases W
//! (descent lemma). Stops when `max_i (δα_i/η_i)² < tol`: the seed's ftol on `max δα²` for
//! the unit rate `η_i = 1/k_ii`, measured as the squared projected gradient (a KKT
//! violation) so that it does not depend on the rate; or, with the linear slack and no bias,
//! when the relative duality gap `(P − W)/max(1, |W|)` falls below `tol` (the primal
//! `P = ½αᵀQα + C Σ max(0, 1 − y_iF_i)` of the same α; Cristianini & Shawe-Taylor 2000
//! §7.2.2): with a large C the projected steps stay large long after W has settled. At most
//! `max_iter` sweeps ([`DEFAULT_SWEEPS`] in a fit); stopping there is reported with a
//! note giving the violation and the gap reached. `O(N²)` per sweep; `k` is held in memory.
//!
//! Optionally (`SvmConfig::adatron_momentum`, not in the seed) the sweep is taken from a
//! Nesterov/FISTA extrapolation of the last two iterates, restarted whenever the step opposes
//! the direction of travel (O'Donoghue & Candès 2015); the fixed point is the same.

use faer::Mat;

use super::{report, KernelRows, SvmConfig};
use crate::error::{Error, Result};
use crate::inference::ConvergenceReport;

/// The sweep cap a fit pipeline gives the Adatron (`SvmConfig::max_iter` counts its sweeps;
/// its default, 10⁷, is sized for SMO's pair steps). Plain gradient ascent needs `O(κ)`
/// sweeps, κ the condition number of the scaled kernel, which a large C leaves unbounded; a
/// fit sweeps with momentum, `O(√κ)`: C = 10⁶ on ripley stops on its KKT test after
/// ≈ 1.6·10⁵ sweeps.
pub const DEFAULT_SWEEPS: usize = 300_000;

/// The relative duality gap `(P − W)/max(1, |W|)` of a bias-free linear-slack SVM at a
/// feasible α, `F = k(y∘α)`: `P − W = Σ α_i(y_iF_i − 1) + C Σ max(0, 1 − y_iF_i) ≥ 0`.
fn relative_gap(alpha: &[f64], f: &[f64], y: &[f64], c: f64) -> f64 {
    let (mut gap, mut w) = (0.0, 0.0);
    for i in 0..alpha.len() {
        let g = y[i] * f[i] - 1.0;
        gap += alpha[i] * g + c * (-g).max(0.0);
        w += alpha[i] - 0.5 * alpha[i] * y[i] * f[i];
    }
    gap / w.abs().max(1.0)
}

/// The dense unsigned kernel `k` (with the slack's diagonal shift), allocated fallibly.
fn dense(rows: &dyn KernelRows) -> Result<Mat<f64>> {
    let n = rows.n();
    let all: Vec<usize> = (0..n).collect();
    let mut k = crate::memory::try_zeros(n, n, "the Adatron's kernel matrix")?;
    let mut r = vec![0.0; n];
    for j in 0..n {
        rows.fill_row(j, &all, &mut r);
        for i in 0..n {
            k[(i, j)] = r[i];
        }
    }
    Ok(k)
}

/// `λ_max(D^{-½} k D^{-½})` by 60 power iterations, padded by 2% (an underestimate would
/// only slow the ascent, an overestimate by more than 2× could make it diverge).
fn lipschitz(k: &Mat<f64>, d: &[f64]) -> f64 {
    let n = d.len();
    let s: Vec<f64> = d.iter().map(|v| 1.0 / v.sqrt()).collect();
    let mut x = vec![1.0 / (n as f64).sqrt(); n];
    let mut lam = 0.0;
    for _ in 0..60 {
        let u: Vec<f64> = (0..n).map(|i| s[i] * x[i]).collect();
        let ku = crate::linalg::mat_vec(k, &u);
        let w: Vec<f64> = (0..n).map(|i| s[i] * ku[i]).collect();
        let norm = w.iter().map(|v| v * v).sum::<f64>().sqrt();
        if !(norm > 0.0) {
            break;
        }
        lam = norm;
        x = w.iter().map(|v| v / norm).collect();
    }
    1.02 * lam.max(f64::MIN_POSITIVE)
}

/// `α(λ) = clip(z − λ y/d, 0, C)` and `Σ y α(λ)`.
fn shifted(z: &[f64], y: &[f64], d: &[f64], c: f64, lam: f64, out: &mut [f64]) -> f64 {
    let mut s = 0.0;
    for i in 0..z.len() {
        out[i] = (z[i] - lam * y[i] / d[i]).clamp(0.0, c);
        s += y[i] * out[i];
    }
    s
}

/// Projection onto `{0 ≤ α ≤ C, Σ y α = 0}` in the `diag(d)` metric.
fn project_equality(z: &[f64], y: &[f64], d: &[f64], c: f64, out: &mut [f64]) {
    let h = |lam: f64, out: &mut [f64]| shifted(z, y, d, c, lam, out);
    let mut step = 1.0;
    let (mut lo, mut hi) = (0.0, 0.0);
    // Bracket: h is non-increasing in λ.
    if h(0.0, out) > 0.0 {
        while h(hi, out) > 0.0 && step < 1e300 {
            lo = hi;
            hi += step;
            step *= 2.0;
        }
    } else {
        while h(lo, out) < 0.0 && step < 1e300 {
            hi = lo;
            lo -= step;
            step *= 2.0;
        }
    }
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if mid <= lo || mid >= hi {
            break;
        }
        if h(mid, out) > 0.0 {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    // Secant step on the final linear piece.
    let (hl, hh) = (h(lo, out), h(hi, out));
    let lam = if hl > hh {
        lo + hl * (hi - lo) / (hl - hh)
    } else {
        0.5 * (lo + hi)
    };
    h(lam, out);
}

/// Run the parallel Adatron; returns `(α, F = k(y∘α), report)`.
pub(crate) fn solve(
    rows: &dyn KernelRows,
    y: &[f64],
    cfg: &SvmConfig,
    alpha0: Option<&[f64]>,
) -> Result<(Vec<f64>, Vec<f64>, ConvergenceReport)> {
    let n = y.len();
    let c = cfg.slack.upper();
    let k = dense(rows)?;
    let d: Vec<f64> = (0..n).map(|i| k[(i, i)]).collect();
    if let Some(i) = d.iter().position(|v| !(*v > 0.0)) {
        return Err(Error::InvalidParameter {
            name: "SVM kernel diagonal k_ii",
            value: d[i],
            reason: "the Adatron needs k_ii > 0 at every training point",
        });
    }
    let eta = 1.0 / lipschitz(&k, &d);
    let mut alpha: Vec<f64> = alpha0.map_or(vec![0.0; n], |a| {
        a.iter().map(|v| v.clamp(0.0, c)).collect()
    });
    let mut z = vec![0.0; n];
    let mut next = vec![0.0; n];
    let field = |a: &[f64]| {
        let ya: Vec<f64> = (0..n).map(|i| y[i] * a[i]).collect();
        crate::linalg::mat_vec(&k, &ya)
    };
    // Nesterov/FISTA extrapolation point w (= α without momentum) and its field.
    let mut w = alpha.clone();
    let mut f = field(&w);
    let mut t_k = 1.0f64;
    let mut restarts = 0usize;
    let mut change = f64::INFINITY;
    let gap_applies = c.is_finite() && !cfg.bias;
    let mut gap = f64::INFINITY;
    let mut it = 0;
    while it < cfg.max_iter {
        it += 1;
        for i in 0..n {
            z[i] = w[i] + eta / d[i] * (1.0 - y[i] * f[i]); // seed 001 §17.7 Adatron step
        }
        if cfg.bias {
            project_equality(&z, y, &d, c, &mut next);
        } else {
            for i in 0..n {
                next[i] = z[i].clamp(0.0, c);
            }
        }
        // (δα_i/η_i)²: the projected dual gradient, independent of the rate
        change = (0..n)
            .map(|i| ((next[i] - w[i]) * d[i] / eta).powi(2))
            .fold(0.0, f64::max);
        if !change.is_finite() {
            return Err(Error::Numerical {
                what: "kernel Adatron",
                message: format!("non-finite update at sweep {it}"),
            });
        }
        if cfg.adatron_momentum {
            // Gradient restart (O'Donoghue & Candès 2015): drop the momentum when the step
            // from w opposes the direction of travel.
            let dot: f64 = (0..n)
                .map(|i| (next[i] - w[i]) * (next[i] - alpha[i]))
                .sum();
            let t_next = if dot < 0.0 {
                restarts += 1;
                1.0
            } else {
                0.5 * (1.0 + (1.0 + 4.0 * t_k * t_k).sqrt())
            };
            let beta = (t_k - 1.0) / t_next;
            for i in 0..n {
                w[i] = (next[i] + beta * (next[i] - alpha[i])).clamp(0.0, c);
            }
            t_k = t_next;
        } else {
            w.copy_from_slice(&next);
        }
        std::mem::swap(&mut alpha, &mut next);
        if change < cfg.tol {
            break;
        }
        f = field(&w);
        if gap_applies {
            // Without momentum w = α, so F(α) is at hand; with it, one more product.
            gap = if cfg.adatron_momentum {
                relative_gap(&alpha, &field(&alpha), y, c)
            } else {
                relative_gap(&alpha, &f, y, c)
            };
            if gap < cfg.tol {
                break;
            }
        }
    }
    let f = field(&alpha);
    let converged = change < cfg.tol || gap < cfg.tol;
    let mut notes = vec![format!("kernel Adatron: rate eta = {eta:.4e} (1/L)")];
    if cfg.adatron_momentum {
        notes.push(format!("Nesterov momentum, {restarts} restarts"));
    }
    if !converged {
        notes.push(format!(
            "kernel Adatron stopped at its cap of {it} sweeps short of tolerance {:e}: squared \
             KKT violation {change:.3e}{}; the solution is approximate (the SMO solver is exact)",
            cfg.tol,
            if gap_applies {
                format!(", relative duality gap {gap:.3e}")
            } else {
                String::new()
            }
        ));
    }
    Ok((alpha, f, report(converged, it, change, notes)))
}
