//! Sparse online Gaussian processes (Csató & Opper, "Sparse on-line Gaussian processes",
//! Neural Computation 14(3), 2002; seed 003 §3.2, §3.3.2, App. A).
//!
//! Assumed-density filtering in the function view: after the points seen so far, the
//! approximate posterior process is
//!
//! $$\mu(x) = k(x,B)^\top \alpha, \qquad k_{post}(x,x') = k(x,x') + k(x,B)^\top C\, k(x',B),$$
//!
//! over a basis set `B` of training inputs ("basis vectors"). A point `(x, y)` is absorbed
//! by moment matching (seed 003 eqs. 6–7): with `k = k(B,x)`, the marginal at `x` is
//! `N(kᵀα, k(x,x) + kᵀCk)`; `q = ∂ln Z/∂μ`, `r = ∂²ln Z/∂μ²` are the tilted-moment
//! derivatives of the likelihood (`r ≤ 0`; seed 003's `g` and `−ν`), and
//!
//! - **full update** (the basis grows by `x`): `s = [Ck; 1]`, `α ← [α; 0] + q s`,
//!   `C ← [C 0; 0 0] + r s sᵀ`, and `Q = K_B⁻¹` grows by
//!   `Q ← [Q 0; 0 0] + γ⁻¹ (ê − e)(ê − e)ᵀ` with `ê = [Qk; 0]`, `e` the new unit vector;
//! - **reduced update** (seed 003 §3.3.2) when the novelty `γ = k(x,x) − kᵀQk` is small (`x`
//!   lies, in feature space, nearly in the span of the basis): `k(·,x)` is replaced by its
//!   projection `k(·,B)ᵀê`, `ê = Qk`, and `s = Ck + ê`, `α ← α + q s`, `C ← C + r s sᵀ`;
//! - **deletion** (seed 003 eq. 8) when the basis exceeds `max_basis`: the basis vector with
//!   the smallest score `|α_i| / Q_ii` is removed and its weight projected on the rest:
//!   `α ← α⁽ᵈ⁾ − α* Q*/q*`, `C ← C⁽ᵈ⁾ + c* Q*Q*ᵀ/q*² − (Q*C*ᵀ + C*Q*ᵀ)/q*`,
//!   `Q ← Q⁽ᵈ⁾ − Q*Q*ᵀ/q*` (so `Q` stays `K_B⁻¹` of the smaller basis).
//!
//! **Sweeps.** Several sweeps over the data are plain repeated ADF sweeps: every visit
//! multiplies the likelihood term in again (no EP-style site removal), so later sweeps
//! sharpen the posterior and may overfit (seed 003 §3.3.2 warns of this). One sweep is ADF.
//!
//! **Stable projection.** The novelty `γ` and the projection `ê = K_B⁻¹k` are computed from a
//! Cholesky factor `L` of `K_B` kept alongside (`l = L⁻¹k`, `γ = k(x,x) − lᵀl`,
//! `ê = L⁻ᵀl`; a full update appends the row `[lᵀ, √γ]`, a deletion is a rank-one update of
//! the trailing block), not as `kᵀQk` and `Qk` from the incrementally updated `Q`: `Q`'s
//! round-off grows with `cond K_B` at every step, and through `ê` and `1/γ` fed back into
//! `α`, `C` and `Q` it ran away (issue 43: a credit table's marginal mean reached 10²⁷⁶).
//! `Q` is still kept for the deletion scores and formulas.
//!
//! **Novelty tolerance.** `novelty_tol` is relative to the prior variance: a point is in the
//! span when `γ ≤ max(novelty_tol, 16·M·ε)·k(x,x)`; the floor `16·M·ε` keeps a numerically
//! zero novelty (an exact duplicate) from entering `Q` as `1/γ ≈ 10¹⁶` even with tolerance 0.
//!
//! **Result.** The fit ends as the shared [`GaussianPosterior`] over the basis vectors with
//! mean weights `α` and the dense covariance form ([`Covariance::Dense`]) of
//! `Σ_B = K_B + K_B C K_B` (the posterior covariance of `f_B`; seed 003 eq. 3 with
//! `K⁻¹ΣK⁻¹ − K⁻¹ = C`). Cost: `O(M²)` per point, `O(N·M²·sweeps)` in all, plus `O(M³)` to
//! factor `K_B` and `Σ_B` once at the end.

use faer::linalg::triangular_solve;
use faer::{Mat, MatMut, MatRef, Par};
use rand::seq::SliceRandom;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use super::{check_classification, ClassifierFit, ConvergenceReport, ConvergenceStatus};
use crate::error::{Error, Result};
use crate::kernel::Kernel;
use crate::likelihood::Likelihood;
use crate::linalg::{Cholesky, JitterPolicy};
use crate::posterior::{Covariance, GaussianPosterior};

mod dense;
mod method;
use dense::{back_solve_transposed, cholesky_without, dot, forward_solve, grow, mat_vec, rank_one};

mod sweep;
pub use method::{SogpMethod, SogpSpec};
use sweep::sweep_orders;
pub use sweep::SweepOrder;

/// Settings of [`sogp`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SogpConfig {
    /// Memory limit: the most basis vectors kept (≥ 1). Beyond it one is deleted.
    pub max_basis: usize,
    /// Relative novelty below which a point takes the reduced update (≥ 0): reduced when
    /// `γ ≤ max(novelty_tol, 16·M·ε)·k(x,x)`.
    pub novelty_tol: f64,
    /// Sweeps over the data (≥ 1); sweeps after the first are plain repeated ADF sweeps.
    pub sweeps: usize,
    /// Jitter policy for the final Cholesky factors of `K_B` and `Σ_B`.
    pub jitter: JitterPolicy,
}

impl Default for SogpConfig {
    /// 100 basis vectors, relative novelty tolerance 1e-6, one sweep, default jitter.
    fn default() -> Self {
        Self {
            max_basis: 100,
            novelty_tol: 1e-6,
            sweeps: 1,
            jitter: JitterPolicy::default(),
        }
    }
}

impl SogpConfig {
    /// Reject a zero memory limit, zero sweeps and a negative or non-finite tolerance.
    pub fn validate(&self) -> Result<()> {
        if self.max_basis == 0 {
            return Err(Error::InvalidParameter {
                name: "max_basis",
                value: 0.0,
                reason: "the SOGP memory limit must be at least 1",
            });
        }
        if self.sweeps == 0 {
            return Err(Error::InvalidParameter {
                name: "sweeps",
                value: 0.0,
                reason: "SOGP needs at least one sweep over the data",
            });
        }
        if !(self.novelty_tol >= 0.0 && self.novelty_tol.is_finite()) {
            return Err(Error::InvalidParameter {
                name: "novelty_tol",
                value: self.novelty_tol,
                reason: "must be finite and ≥ 0",
            });
        }
        Ok(())
    }
}

/// What one call of [`Sogp::update`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UpdateKind {
    /// The point became a basis vector.
    Full,
    /// The point was projected on the basis (reduced update); the basis is unchanged.
    Reduced,
    /// The point became a basis vector and then basis vector `deleted` (position in the
    /// basis before deletion) was removed to respect the memory limit.
    FullThenDeleted {
        /// Position (in the basis before deletion) of the removed basis vector.
        deleted: usize,
    },
    /// Skipped: `k(x,x) ≤ 0` with an empty basis, so the point carries no direction.
    Skipped,
}

/// Counters of one SOGP run.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct SogpStats {
    /// Full updates (points that became basis vectors, including later-deleted ones).
    pub full_updates: usize,
    /// Reduced (projected) updates.
    pub reduced_updates: usize,
    /// Basis-vector deletions.
    pub deletions: usize,
    /// Points skipped for a zero prior variance with an empty basis.
    pub skipped: usize,
    /// `Σ ln Z_t` over all updates so far (the ADF evidence estimate after one sweep).
    pub sum_ln_z: f64,
}

/// The online state `(B, α, C, Q = K_B⁻¹)` of a sparse online GP (Csató–Opper 2002).
#[derive(Clone, Debug)]
pub struct Sogp {
    kernel: Kernel,
    lik: Likelihood,
    cfg: SogpConfig,
    basis: Vec<Vec<f64>>,
    basis_indices: Vec<usize>,
    alpha: Vec<f64>,
    c: Mat<f64>,
    q: Mat<f64>,
    /// Lower Cholesky factor of `K_B` (`L Lᵀ = K_B`), grown and downdated with the basis.
    chol: Mat<f64>,
    stats: SogpStats,
}

/// The projection of `k(·, x)` on the basis: `ê = K_B⁻¹k`, the novelty `γ = k(x,x) − kᵀK_B⁻¹k`
/// and `l = L⁻¹k`, the new row of `L` should `x` join the basis.
struct Projection {
    e_hat: Vec<f64>,
    gamma: f64,
    l: Vec<f64>,
}

/// Marginal of the current posterior at one input, with the quantities the update reuses.
struct Probe {
    k: Vec<f64>,
    kxx: f64,
    ck: Vec<f64>,
    mean: f64,
    var: f64,
}

impl Sogp {
    /// An empty state (the prior) after validating `cfg` and the likelihood (it must have
    /// closed-form tilted moments: probit or Gaussian).
    pub fn new(kernel: &Kernel, lik: &Likelihood, cfg: &SogpConfig) -> Result<Self> {
        cfg.validate()?;
        lik.tilted_moments(1.0, 0.0, 1.0)?; // rejects the logistic likelihood
        Ok(Self {
            kernel: kernel.clone(),
            lik: *lik,
            cfg: *cfg,
            basis: Vec::new(),
            basis_indices: Vec::new(),
            alpha: Vec::new(),
            c: Mat::zeros(0, 0),
            q: Mat::zeros(0, 0),
            chol: Mat::zeros(0, 0),
            stats: SogpStats::default(),
        })
    }

    /// Number of basis vectors M.
    pub fn n_basis(&self) -> usize {
        self.alpha.len()
    }

    /// Training-row indices of the basis vectors, in basis order.
    pub fn basis_indices(&self) -> &[usize] {
        &self.basis_indices
    }

    /// Mean weights `α`.
    pub fn alpha(&self) -> &[f64] {
        &self.alpha
    }

    /// `C` (M×M): `k_post(x,x') = k(x,x') + k(x,B)ᵀ C k(x',B)`.
    pub fn c(&self) -> MatRef<'_, f64> {
        self.c.as_ref()
    }

    /// `Q`, the incrementally maintained `K_B⁻¹` (M×M).
    pub fn q(&self) -> MatRef<'_, f64> {
        self.q.as_ref()
    }

    /// Counters so far.
    pub fn stats(&self) -> SogpStats {
        self.stats
    }

    /// `ê`, `γ` and `l` of [`Projection`] by two triangular solves with `L` (`O(M²)`).
    fn project(&self, p: &Probe) -> Projection {
        let l = forward_solve(self.chol.as_ref(), &p.k);
        let e_hat = back_solve_transposed(self.chol.as_ref(), &l);
        Projection {
            gamma: p.kxx - dot(&l, &l),
            e_hat,
            l,
        }
    }

    fn probe(&self, x: &[f64]) -> Probe {
        let m = self.n_basis();
        let k: Vec<f64> = self.basis.iter().map(|b| self.kernel.eval(b, x)).collect();
        let kxx = self.kernel.eval(x, x);
        let ck = mat_vec(self.c.as_ref(), &k);
        let mean = dot(&k, &self.alpha);
        // seed 003 §3.2: k_post(x,x) = k(x,x) + kᵀCk.
        let var = (kxx + dot(&k, &ck)).max(0.0);
        debug_assert_eq!(ck.len(), m);
        Probe {
            k,
            kxx,
            ck,
            mean,
            var,
        }
    }

    /// Latent marginal `(μ(x), v(x))` of the current posterior process at one input.
    pub fn marginal(&self, x: &[f64]) -> (f64, f64) {
        let p = self.probe(x);
        (p.mean, p.var)
    }

    /// Tilted-moment derivatives `(ln Z, q, r)` of the likelihood at the marginal.
    fn moments(&mut self, y: f64, p: &Probe) -> Result<(f64, f64)> {
        let t = self.lik.tilted_moments(y, p.mean, p.var)?;
        if !(t.ln_z.is_finite() && t.d1.is_finite() && t.d2.is_finite()) {
            return Err(moments_breakdown(p, t.ln_z, t.d1, t.d2));
        }
        self.stats.sum_ln_z += t.ln_z;
        Ok((t.d1, t.d2))
    }

    /// Absorb the point `(x, y)` (training row `row`): a full update if it is novel, else a
    /// reduced one; then a deletion if the basis exceeds `max_basis`.
    pub fn update(&mut self, x: &[f64], y: f64, row: usize) -> Result<UpdateKind> {
        let p = self.probe(x);
        let m = self.n_basis();
        let pr = self.project(&p); // novelty γ, Csató–Opper 2002 §3
        let floor = self.cfg.novelty_tol.max(16.0 * m as f64 * f64::EPSILON);
        if m > 0 && pr.gamma <= floor * p.kxx {
            let (q, r) = self.moments(y, &p)?;
            self.apply_reduced(&p, &pr.e_hat, q, r);
            return Ok(UpdateKind::Reduced);
        }
        if pr.gamma <= 0.0 {
            self.stats.skipped += 1;
            return Ok(UpdateKind::Skipped);
        }
        let (q, r) = self.moments(y, &p)?;
        self.apply_full(x, row, &p, &pr, q, r);
        if self.n_basis() > self.cfg.max_basis {
            let j = self.deletion_candidate();
            self.delete(j)?;
            return Ok(UpdateKind::FullThenDeleted { deleted: j });
        }
        Ok(UpdateKind::Full)
    }

    /// Force a full update with `(x, y)` (the basis grows by `x`; no deletion), whatever its
    /// novelty. Errors if the novelty is not positive (`x` would make `K_B` singular).
    pub fn full_update(&mut self, x: &[f64], y: f64, row: usize) -> Result<()> {
        let p = self.probe(x);
        let pr = self.project(&p);
        if !(pr.gamma > 0.0) {
            return Err(Error::Numerical {
                what: "SOGP full update",
                message: format!("novelty γ = {:.4e} is not positive", pr.gamma),
            });
        }
        let (q, r) = self.moments(y, &p)?;
        self.apply_full(x, row, &p, &pr, q, r);
        Ok(())
    }

    /// Force a reduced (projected) update with `(x, y)`, whatever its novelty.
    pub fn reduced_update(&mut self, x: &[f64], y: f64) -> Result<()> {
        let p = self.probe(x);
        let pr = self.project(&p);
        let (q, r) = self.moments(y, &p)?;
        self.apply_reduced(&p, &pr.e_hat, q, r);
        Ok(())
    }

    /// seed 003 §3.3.2: `s = Ck + ê`, `α ← α + q s`, `C ← C + r s sᵀ`.
    fn apply_reduced(&mut self, p: &Probe, e_hat: &[f64], q: f64, r: f64) {
        let s: Vec<f64> = p.ck.iter().zip(e_hat).map(|(a, b)| a + b).collect();
        for (a, si) in self.alpha.iter_mut().zip(&s) {
            *a += q * si;
        }
        rank_one(&mut self.c, r, &s);
        self.stats.reduced_updates += 1;
    }

    /// seed 003 eq. 7 for `α`, `C`; Csató–Opper 2002 §3 for `Q = K_B⁻¹`; `L` gains the row
    /// `[lᵀ, √γ]`.
    fn apply_full(&mut self, x: &[f64], row: usize, p: &Probe, pr: &Projection, q: f64, r: f64) {
        let m = self.n_basis();
        let s: Vec<f64> = p.ck.iter().copied().chain(std::iter::once(1.0)).collect();
        // α ← [α; 0] + q s.
        self.alpha.push(0.0);
        for (a, si) in self.alpha.iter_mut().zip(&s) {
            *a += q * si;
        }
        // C ← [C 0; 0 0] + r s sᵀ.
        let mut c = grow(self.c.as_ref());
        rank_one(&mut c, r, &s);
        self.c = c;
        // Q ← [Q 0; 0 0] + γ⁻¹(ê − e)(ê − e)ᵀ.
        let d: Vec<f64> = pr
            .e_hat
            .iter()
            .copied()
            .chain(std::iter::once(-1.0))
            .collect();
        let mut qm = grow(self.q.as_ref());
        rank_one(&mut qm, 1.0 / pr.gamma, &d);
        self.q = qm;
        let mut chol = grow(self.chol.as_ref());
        for (j, lj) in pr.l.iter().enumerate() {
            chol[(m, j)] = *lj;
        }
        chol[(m, m)] = pr.gamma.sqrt();
        self.chol = chol;
        debug_assert_eq!(self.q.nrows(), m + 1);
        self.basis.push(x.to_vec());
        self.basis_indices.push(row);
        self.stats.full_updates += 1;
    }

    /// Position of the basis vector with the smallest score `|α_i| / Q_ii` (seed 003
    /// §3.3.2); ties go to the lowest position.
    pub fn deletion_candidate(&self) -> usize {
        let mut best = (0, f64::INFINITY);
        for i in 0..self.n_basis() {
            let score = self.alpha[i].abs() / self.q[(i, i)];
            if score < best.1 {
                best = (i, score);
            }
        }
        best.0
    }

    /// Delete basis vector `j` and project its weight on the others (seed 003 eq. 8 and
    /// the three updates below it). An out-of-range `j` is an error.
    pub fn delete(&mut self, j: usize) -> Result<()> {
        let m = self.n_basis();
        if j >= m {
            return Err(Error::InvalidParameter {
                name: "basis position to delete",
                value: j as f64,
                reason: "must be below the number of basis vectors",
            });
        }
        let keep: Vec<usize> = (0..m).filter(|&i| i != j).collect();
        let q_star: Vec<f64> = keep.iter().map(|&i| self.q[(i, j)]).collect();
        let c_star: Vec<f64> = keep.iter().map(|&i| self.c[(i, j)]).collect();
        let (qs, cs, a_star) = (self.q[(j, j)], self.c[(j, j)], self.alpha[j]);
        let n = keep.len();
        self.alpha = keep
            .iter()
            .zip(&q_star)
            .map(|(&i, qi)| self.alpha[i] - a_star * qi / qs)
            .collect();
        self.c = Mat::from_fn(n, n, |a, b| {
            self.c[(keep[a], keep[b])] + cs * q_star[a] * q_star[b] / (qs * qs)
                - (q_star[a] * c_star[b] + c_star[a] * q_star[b]) / qs
        });
        self.q = Mat::from_fn(n, n, |a, b| {
            self.q[(keep[a], keep[b])] - q_star[a] * q_star[b] / qs
        });
        self.chol = cholesky_without(self.chol.as_ref(), j);
        self.basis.remove(j);
        self.basis_indices.remove(j);
        self.stats.deletions += 1;
        Ok(())
    }

    /// The basis inputs as an M×D matrix.
    pub fn basis_matrix(&self) -> Mat<f64> {
        let d = self.basis.first().map_or(0, Vec::len);
        Mat::from_fn(self.n_basis(), d, |i, j| self.basis[i][j])
    }

    /// The shared posterior: `α` and `Σ_B = K_B + K_B C K_B` in the dense form.
    pub fn posterior(&self) -> Result<GaussianPosterior> {
        if self.n_basis() == 0 {
            return Err(Error::Empty {
                what: "SOGP basis (no point was absorbed)",
            });
        }
        let basis = self.basis_matrix();
        let kb = self.kernel.gram(basis.as_ref())?;
        let chol_kb = Cholesky::factor(kb.as_ref(), &self.cfg.jitter, "K_B (SOGP basis)")?;
        let kck = &kb * &self.c * &kb;
        let m = self.n_basis();
        // Symmetrised against round-off; only the lower triangle is read anyway.
        let sigma = Mat::from_fn(m, m, |i, j| kb[(i, j)] + 0.5 * (kck[(i, j)] + kck[(j, i)]));
        let chol_sigma =
            Cholesky::factor(sigma.as_ref(), &self.cfg.jitter, "Σ_B = K_B + K_B C K_B")?;
        Ok(GaussianPosterior::dense(
            self.kernel.clone(),
            basis,
            self.alpha.clone(),
            chol_kb,
            chol_sigma,
        ))
    }

    /// `max |Q K_B − I|`: how far the incrementally updated `Q` has drifted from `K_B⁻¹`.
    pub fn q_drift(&self) -> Result<f64> {
        let kb = self.kernel.gram(self.basis_matrix().as_ref())?;
        let prod = &self.q * &kb;
        let m = self.n_basis();
        let mut worst = 0.0f64;
        for j in 0..m {
            for i in 0..m {
                let e = if i == j { 1.0 } else { 0.0 };
                worst = worst.max((prod[(i, j)] - e).abs());
            }
        }
        Ok(worst)
    }
}

/// Fit a sparse online GP classifier (or, with the Gaussian likelihood, regressor) by
/// `cfg.sweeps` ADF sweeps over `(x, y)` in `order`, and return the shared posterior over
/// the basis vectors (`basis_indices = Some(..)`).
///
/// `ln_evidence` is the ADF estimate `Σ_t ln Z_t` after one sweep (exact `ln p(y)` for the
/// Gaussian likelihood without deletions); `None` for several sweeps, which count every
/// likelihood term more than once. The report's `status` is `Converged` once all sweeps ran
/// (there is no stopping rule), `final_change` is the largest change of the posterior mean
/// at a training input over the last sweep, and `notes` give the basis size, full and
/// reduced updates, deletions and the drift of `Q` from `K_B⁻¹`.
pub fn sogp(
    kernel: &Kernel,
    lik: &Likelihood,
    x: MatRef<'_, f64>,
    y: &[f64],
    cfg: &SogpConfig,
    order: &SweepOrder,
) -> Result<ClassifierFit> {
    check_classification(x, y, lik)?;
    kernel.check_input_dim(x.ncols())?;
    let mut state = Sogp::new(kernel, lik, cfg)?;
    let orders = sweep_orders(order, x.nrows(), cfg.sweeps)?;
    let row = |i: usize| -> Vec<f64> { (0..x.ncols()).map(|j| x[(i, j)]).collect() };
    let rows: Vec<Vec<f64>> = (0..x.nrows()).map(row).collect();
    let mut before = vec![0.0; rows.len()];
    for (s, seq) in orders.iter().enumerate() {
        if s + 1 == orders.len() {
            before = rows.iter().map(|r| state.marginal(r).0).collect();
        }
        for &i in seq {
            state.update(&rows[i], y[i], i)?;
        }
    }
    let final_change = rows
        .iter()
        .zip(&before)
        .map(|(r, b)| (state.marginal(r).0 - b).abs())
        .fold(0.0, f64::max);
    let posterior = state.posterior()?;
    let jitter = match &posterior.cov {
        Covariance::Dense {
            chol_kb,
            chol_sigma,
        } => chol_kb.jitter().max(chol_sigma.jitter()),
        _ => 0.0,
    };
    let st = state.stats();
    let mut notes = vec![
        format!(
            "SOGP: {} basis vectors after {} sweep(s) (plain repeated ADF sweeps)",
            state.n_basis(),
            cfg.sweeps
        ),
        format!(
            "{} full updates, {} reduced updates, {} deletions",
            st.full_updates, st.reduced_updates, st.deletions
        ),
        format!("max |Q K_B − I| = {:.3e}", state.q_drift()?),
    ];
    if st.skipped > 0 {
        notes.push(format!(
            "{} points skipped for zero prior variance",
            st.skipped
        ));
    }
    Ok(ClassifierFit {
        posterior,
        ln_evidence: (cfg.sweeps == 1).then_some(st.sum_ln_z),
        basis_indices: Some(state.basis_indices().to_vec()),
        report: ConvergenceReport {
            status: ConvergenceStatus::Converged,
            iterations: cfg.sweeps,
            final_change,
            jitter_used: jitter,
            notes,
        },
    })
}

/// The error of tilted moments that are not finite: the marginal and the moments in short
/// scientific form (a drifting mean can be hundreds of digits long in plain form), and what to
/// try. It happens when the online updates have run away (an outlying input, a basis matrix
/// near singular), not because of an option's range.
fn moments_breakdown(p: &Probe, ln_z: f64, q: f64, r: f64) -> Error {
    Error::NumericalBreakdown {
        what: "SOGP tilted moments",
        message: format!(
            "at the latent marginal N({:.4e}, {:.4e}): ln Z = {ln_z:.4e}, q = {q:.4e}, r = {r:.4e}",
            p.mean, p.var
        ),
        advice: "the online updates ran away on these inputs; look for extreme values or outliers in the input columns (standardising keeps them far out), or use a batch classifier (laplace, ep), which does not depend on the visiting order",
    }
}

#[cfg(test)]
mod tests;
