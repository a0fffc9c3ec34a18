//! Sparse PAC-GP (kl-PAC-SGP / sqrt-PAC-SGP; seed 004, docs/math.md §3.2 and §5): minimise the
//! PAC-Bayes bound over kernel θ, the posterior noise σ² and the inducing inputs Z, with
//! Q in the FITC (`α_s = 1`, default) or VFE (`α_s = 0`) parametrisation of eq. (11).
//!
//! Written with `P = K_uu`, `F = K_uf`, `A = P + FΛ⁻¹Fᵀ`, `c = FΛ⁻¹y`, `e = A⁻¹c`:
//! `KL = ½[tr(PA⁻¹) + eᵀPe − M + ln det A − ln det P]`, `μ_i = F_iᵀe`,
//! `v_i = k_ii − F_iᵀP⁻¹F_i + F_iᵀA⁻¹F_i` (equal to docs/math.md §3.2's whitened forms); the gradient
//! is reverse-mode by hand through these M×M and M×N matrices, O(NM²) per evaluation.

use faer::{Mat, MatRef};
use rayon::prelude::*;

use crate::bounds::{BoundKind, BoundTarget, ConfidenceTerm, HyperGrid};
use crate::certificate::{Certificate, CertificateSpec, GibbsLoss, PenaltyTerm};
use crate::error::{Error, Result};
use crate::kernel::Kernel;
use crate::linalg;
use crate::loss::RegressionLoss;
use crate::optim::{self, boxes, GridSnap, LbfgsConfig, Objective, OptimReport, Restarts};
use crate::prior::{BoundLevers, HyperPrior, ThetaPenalty};
use crate::regression::sparse::{
    add_outer, initial_inducing_with_targets, sandwich_inv, whitened, InducingInit,
    NegSparseObjective, SparseGp, SparseMethod, Whitened,
};

/// The sparse PAC-GP bound over `[θ…, ln σ², vec(Z)]` on standardised data.
pub struct PacSgpObjective<'a> {
    kernel: Kernel,
    x: MatRef<'a, f64>,
    y: &'a [f64],
    m: usize,
    alpha_s: f64,
    loss: RegressionLoss,
    /// The bound minimised (δ, confidence term, form, the constant penalty).
    target: BoundTarget,
    /// A coarse hyperparameter prior's `−ln π(θ)` surrogate, added to the penalty.
    theta_prior: ThetaPenalty,
}

/// `(R_S, KL, bound)` of one evaluation.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PacSgpTerms {
    /// Empirical Gibbs risk.
    pub empirical_risk: f64,
    /// `KL(Q‖P_θ)`.
    pub kl: f64,
    /// The bound.
    pub bound: f64,
}

/// The checks PAC-SGP's bound needs of its settings (α_s ∈ [0, 1], ε > 0, a valid δ and
/// penalty), shared by the in-process and the sharded objective; the bound it minimises.
pub(crate) fn check_pac_sgp_setup(
    alpha_s: f64,
    loss: &RegressionLoss,
    delta: f64,
    penalty: f64,
    kind: BoundKind,
) -> Result<BoundTarget> {
    if !(0.0..=1.0).contains(&alpha_s) {
        return Err(Error::InvalidParameter {
            name: "alpha_s",
            value: alpha_s,
            reason: "must lie in [0, 1]",
        });
    }
    if !(loss.epsilon() > 0.0) {
        return Err(Error::InvalidParameter {
            name: "epsilon",
            value: loss.epsilon(),
            reason: "must be positive",
        });
    }
    BoundTarget::new(delta, ConfidenceTerm::Maurer, kind, penalty)
}

impl<'a> PacSgpObjective<'a> {
    /// The bound with `m` inducing inputs, posterior parametrisation `alpha_s`, loss, δ, ln|Θ|.
    pub fn new(
        kernel: &Kernel,
        x: MatRef<'a, f64>,
        y: &'a [f64],
        m: usize,
        alpha_s: f64,
        loss: RegressionLoss,
        delta: f64,
        penalty: f64,
        kind: BoundKind,
    ) -> Result<Self> {
        crate::regression::exact::check_regression_inputs(x, y)?;
        kernel.check_input_dim(x.ncols())?;
        if m == 0 || m > x.nrows() {
            return Err(Error::InvalidParameter {
                name: "number of inducing points M",
                value: m as f64,
                reason: "must lie in 1..=N",
            });
        }
        let target = check_pac_sgp_setup(alpha_s, &loss, delta, penalty, kind)?;
        Ok(Self {
            kernel: kernel.clone(),
            x,
            y,
            m,
            alpha_s,
            loss,
            target,
            theta_prior: ThetaPenalty::constant(0.0),
        })
    }

    /// The same objective with the smooth surrogate of `−ln π(θ)` (tighter-bounds spec §2.1)
    /// added to the constant penalty.
    pub fn with_hyper_prior(mut self, prior: HyperPrior) -> Result<Self> {
        self.theta_prior = self.theta_prior.with_prior(prior, &self.kernel)?;
        Ok(self)
    }

    /// The θ-dependent penalty at `p` (the prior's surrogate) and its gradient in θ.
    fn penalty_at(&self, p: &[f64]) -> (f64, Vec<f64>) {
        self.theta_prior.at(&p[..self.kernel.n_params()])
    }

    /// The same objective with another confidence constant (default Maurer's `ln(2√N/δ)`).
    pub fn with_confidence_term(mut self, term: ConfidenceTerm) -> Self {
        self.target.term = term;
        self
    }

    pub(crate) fn unpack(&self, p: &[f64]) -> Result<(Kernel, f64, Mat<f64>)> {
        NegSparseObjective::new(&self.kernel, SparseMethod::Fitc, self.x, self.y, self.m).unpack(p)
    }

    /// `(R_S, KL, bound)` at `p`.
    pub fn terms(&self, p: &[f64]) -> Result<PacSgpTerms> {
        let (v, _) = self.evaluate(p, false)?;
        Ok(v)
    }

    fn evaluate(&self, p: &[f64], with_grad: bool) -> Result<(PacSgpTerms, Vec<f64>)> {
        let (kernel, s2, z) = self.unpack(p)?;
        // Whitened factors: A = P + FΛ⁻¹Fᵀ = L B Lᵀ, c = FΛ⁻¹y = Lγ.
        let wh = whitened(&kernel, s2, self.alpha_s, self.x, z.as_ref(), self.y)?;
        let theta = &p[..self.kernel.n_params()];
        let (terms, grad, _) =
            self.evaluate_whitened(&kernel, s2, z.as_ref(), wh, theta, with_grad)?;
        Ok((terms, grad))
    }

    /// The terms at given whitened factors (any per-point `Λ`, as the heteroscedastic form
    /// builds them) and, with `with_grad`, the gradient in `[θ…, ln s2, vec(Z)]` and the
    /// adjoint `∂B/∂Λ_ii` per point.
    pub(crate) fn evaluate_whitened(
        &self,
        kernel: &Kernel,
        s2: f64,
        z: MatRef<'_, f64>,
        wh: Whitened,
        theta: &[f64],
        with_grad: bool,
    ) -> Result<(PacSgpTerms, Vec<f64>, Vec<f64>)> {
        let (x, y) = (self.x, self.y);
        let (n, m) = (x.nrows(), self.m);
        let nf = n as f64;
        let (l, lb, kd, q) = (&wh.l_uu, &wh.l_b, &wh.kdiag, &wh.q);
        // e = A⁻¹c = L⁻ᵀB⁻¹γ; tr(PA⁻¹) = tr B⁻¹, eᵀPe = ‖B⁻¹γ‖², ln det A − ln det P = ln det B.
        let bg = lb.solve_vec(&wh.gamma);
        let e = l.solve_upper_vec(&bg);
        let b_inv = lb.inverse();
        let tr_binv: f64 = (0..m).map(|a| b_inv[(a, a)]).sum();
        let kl = 0.5 * (tr_binv + linalg::dot(&bg, &bg) - m as f64 + lb.ln_det());
        let mu = linalg::mat_t_vec(&wh.v, &bg); // V_iᵀB⁻¹γ (= F_iᵀe, without e's cond(L))
                                                // s_i = F_iᵀA⁻¹F_i = ‖L_B⁻¹V_i‖².
        let mut yb = wh.v.clone();
        lb.solve_lower_in_place(yb.as_mut());
        let s = linalg::col_sq_norms(&yb);
        let var: Vec<f64> = (0..n).map(|i| (kd[i] - q[i] + s[i]).max(1e-12)).collect();
        let (mut risk, mut g_mu, mut g_v) = (0.0, vec![0.0; n], vec![0.0; n]);
        for i in 0..n {
            let r = self.loss.point_risk(y[i], mu[i], var[i]);
            risk += r.risk / nf;
            g_mu[i] = r.d_mean;
            g_v[i] = r.d_var;
        }
        let klc = kl.max(0.0);
        let (penalty, d_penalty) = self.penalty_at(theta);
        let b = self.target.at_with(risk, klc, n, penalty);
        let (bound, d_q, d_c) = (b.value, b.d_risk, b.d_complexity);
        let terms = PacSgpTerms {
            empirical_risk: risk,
            kl,
            bound,
        };
        if !with_grad {
            return Ok((terms, vec![], vec![]));
        }
        let (mut grad, lamb) = self.gradient(
            kernel, s2, z, wh, yb, &e, &bg, &b_inv, d_q, d_c, &g_mu, &g_v,
        );
        for (gt, dp) in grad.iter_mut().zip(&d_penalty) {
            *gt += d_c * dp / nf;
        }
        Ok((terms, grad, lamb))
    }

    /// Reverse mode through the module docs' formulas (adjoints of KL, μ, v first), with every
    /// M×N step a triangular solve or one product on contiguous columns:
    /// `Ā = KL̄·½(A⁻¹ − A⁻¹PA⁻¹ − ehᵀ − heᵀ) − ½(teᵀ + etᵀ) − A⁻¹F diag(v̄)FᵀA⁻¹`,
    /// `F̄ = eμ̄ᵀ + c̄(y/Λ)ᵀ + 2A⁻¹F diag(v̄) + 2ĀFΛ⁻¹ + 2P⁻¹F diag(q̄)`,
    /// `P̄ = KL̄·½(A⁻¹ + eeᵀ − P⁻¹) + Ā − P⁻¹F diag(q̄)FᵀP⁻¹`, with `A⁻¹F = L⁻ᵀL_B⁻ᵀL_B⁻¹V`
    /// and `P⁻¹F = L⁻ᵀV`. Every M×M adjoint is formed whitened (`C = LᵀĀL = B̄`,
    /// `P̄ = L⁻ᵀ[…]L⁻¹`, see [`super::pac_sgp_sharded`]), never as `A⁻¹ − P⁻¹`.
    fn gradient(
        &self,
        kernel: &Kernel,
        s2: f64,
        z: MatRef<'_, f64>,
        wh: Whitened,
        mut yb: Mat<f64>,
        e: &[f64],
        bg: &[f64],
        b_inv: &Mat<f64>,
        d_q: f64,
        d_c: f64,
        g_mu: &[f64],
        g_v: &[f64],
    ) -> (Vec<f64>, Vec<f64>) {
        let (x, y) = (self.x, self.y);
        let (n, m) = (x.nrows(), self.m);
        let nf = n as f64;
        let (l, lb, lam, kd, q) = (&wh.l_uu, &wh.l_b, &wh.lambda, &wh.kdiag, &wh.q);
        let klb = d_c / nf;
        let mub: Vec<f64> = g_mu.iter().map(|g| d_q * g / nf).collect();
        let vb: Vec<f64> = g_v.iter().map(|g| d_q * g / nf).collect();
        // Whitened adjoints (objective::pac_sgp_sharded's module doc): C = LᵀĀL = B̄ and
        // c̄ = L⁻ᵀγ̄ are formed from B⁻¹ and w = B⁻¹γ alone, never from A⁻¹ and P⁻¹, whose
        // difference loses all digits once cond(K_uu) ≳ 1e9.
        let h = lb.solve_vec(bg); // B⁻¹w
        let vmu = linalg::mat_vec(&wh.v, &mub); // Vμ̄
        let u = lb.solve_vec(&vmu);
        let b2 = b_inv * b_inv;
        let bvb = sandwich_inv(lb, linalg::weighted_gram(&yb, &vb)); // B⁻¹V diag(v̄)VᵀB⁻¹
        let sym = |x: &[f64], y: &[f64], a: usize, b: usize| 0.5 * (x[a] * y[b] + y[a] * x[b]);
        let c_mat = Mat::from_fn(m, m, |a, b| {
            klb * (0.5 * (b_inv[(a, b)] - b2[(a, b)]) - sym(&h, bg, a, b))
                - sym(&u, bg, a, b)
                - bvb[(a, b)]
        });
        let gbar: Vec<f64> = (0..m).map(|a| klb * h[a] + u[a]).collect();
        let cbar = l.solve_upper_vec(&gbar);
        let mut cv = &c_mat * &wh.v;
        let fa = linalg::col_dots(&wh.v, &cv);
        let ftc = linalg::mat_t_vec(&wh.v, &gbar); // F_iᵀc̄ = V_iᵀγ̄
        let lamb: Vec<f64> = (0..n)
            .map(|i| -(fa[i] + ftc[i] * y[i]) / (lam[i] * lam[i]))
            .collect();
        // Λ uses max(k − q, 0): no gradient flows where the clamp is active.
        let through_lam = |i: usize| {
            if kd[i] - q[i] >= 0.0 {
                self.alpha_s * lamb[i]
            } else {
                0.0
            }
        };
        let qb: Vec<f64> = (0..n).map(|i| -vb[i] - through_lam(i)).collect();
        let kb: Vec<f64> = (0..n).map(|i| vb[i] + through_lam(i)).collect();
        let s2b: f64 = lamb.iter().sum();
        // P̄ = KL̄·½[A⁻¹ + eeᵀ − P⁻¹] + Ā − L⁻ᵀ(V diag(q̄) Vᵀ)L⁻¹
        //   = L⁻ᵀ[KL̄·½(B⁻¹ − I + wwᵀ) + B̄ − V diag(q̄)Vᵀ]L⁻¹.
        let vqv = linalg::weighted_gram(&wh.v, &qb);
        let inner = Mat::from_fn(m, m, |a, b| {
            let id = if a == b { 1.0 } else { 0.0 };
            klb * 0.5 * (b_inv[(a, b)] - id + bg[a] * bg[b]) + c_mat[(a, b)] - vqv[(a, b)]
        });
        let pbar = sandwich_inv(l, inner);
        // F̄ = eμ̄ᵀ + c̄(y/Λ)ᵀ + L⁻ᵀ[2L_B⁻ᵀ(L_B⁻¹V diag(v̄)) + 2CVΛ⁻¹ + 2V diag(q̄)].
        linalg::scale_cols(&mut yb, &vb);
        lb.solve_upper_in_place(yb.as_mut());
        cv.par_col_iter_mut().enumerate().for_each(|(i, c)| {
            let c = c.try_as_col_major_mut().unwrap().as_slice_mut();
            let (vi, yi) = (wh.v.col_as_slice(i), yb.col_as_slice(i));
            for a in 0..m {
                c[a] = 2.0 * (yi[a] + c[a] / lam[i] + vi[a] * qb[i]);
            }
        });
        drop(yb);
        l.solve_upper_in_place(cv.as_mut());
        let yl: Vec<f64> = (0..n).map(|i| y[i] / lam[i]).collect();
        add_outer(&mut cv, e, &mub);
        add_outer(&mut cv, &cbar, &yl);
        let Whitened { kzx, .. } = wh;
        let (mut grad, dz_x) = kernel.cross_adjoint(z, x, kzx, &cv);
        let gp = kernel.gram_grad_contract(z, pbar.as_ref());
        let gd = kernel.diag_grad_contract(x, &kb);
        for (k, g) in grad.iter_mut().enumerate() {
            *g += gp[k] + gd[k];
        }
        grad.push(s2 * s2b);
        let dz = &dz_x + &kernel.gram_grad_z(z, pbar.as_ref());
        for a in 0..m {
            for t in 0..z.ncols() {
                grad.push(dz[(a, t)]);
            }
        }
        (grad, lamb)
    }
}

impl Objective for PacSgpObjective<'_> {
    fn dim(&self) -> usize {
        self.kernel.n_params() + 1 + self.m * self.x.ncols()
    }
    fn value_and_gradient(&self, p: &[f64]) -> Result<(f64, Vec<f64>)> {
        let (t, g) = self.evaluate(p, true)?;
        Ok((t.bound, g))
    }
}

/// A trained sparse PAC-GP at the snapped θ, with its certificate.
#[derive(Clone, Debug)]
pub struct PacSgpFit {
    /// The sparse GP (θ on the grid, σ² and Z as optimised).
    pub gp: SparseGp,
    /// `α_s` of the posterior that was trained and certified.
    pub alpha_s: f64,
    /// Certificate at the snapped θ, through the shared posterior (both bound forms).
    pub certificate: Certificate,
    /// Optimiser report.
    pub report: OptimReport,
}

/// Train kl-PAC-SGP / sqrt-PAC-SGP (θ boxed to the grid's range, then snapped), from Z placed
/// by `init` (the paper's: k-means; greedy: seed 002's ΔR selection under the initial θ, σ²).
pub fn fit_pac_sgp(
    kernel_init: &Kernel,
    noise_init: f64,
    x: MatRef<'_, f64>,
    y: &[f64],
    m: usize,
    alpha_s: f64,
    loss: RegressionLoss,
    delta: f64,
    kind: BoundKind,
    seed: u64,
    init: InducingInit,
    max_iter: usize,
) -> Result<PacSgpFit> {
    let settings = PacSgpSettings {
        m,
        alpha_s,
        loss,
        delta,
        kind,
        seed,
        init,
        max_iter,
    };
    fit_pac_sgp_with(
        kernel_init,
        noise_init,
        x,
        y,
        &settings,
        &BoundLevers::default(),
    )
}

/// The settings of [`fit_pac_sgp_with`] (those of [`fit_pac_sgp`], named).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PacSgpSettings {
    /// Number of inducing inputs M.
    pub m: usize,
    /// Posterior parametrisation: 1 = FITC, 0 = VFE.
    pub alpha_s: f64,
    /// Loss (standardised scale).
    pub loss: RegressionLoss,
    /// Confidence δ.
    pub delta: f64,
    /// kl or sqrt bound.
    pub kind: BoundKind,
    /// Seed of the initialisation of Z.
    pub seed: u64,
    /// How the inducing inputs start.
    pub init: InducingInit,
    /// L-BFGS iteration budget.
    pub max_iter: usize,
}

/// [`fit_pac_sgp`] with the tighter-bounds levers: the confidence constant and a coarse
/// hyperparameter prior (smooth surrogate while optimising, then θ snapped onto the prior's
/// grid and σ², Z re-optimised at the snapped θ; spec §2.1).
pub fn fit_pac_sgp_with(
    kernel_init: &Kernel,
    noise_init: f64,
    x: MatRef<'_, f64>,
    y: &[f64],
    st: &PacSgpSettings,
    levers: &BoundLevers,
) -> Result<PacSgpFit> {
    let grid = HyperGrid::default();
    let nk = kernel_init.n_params();
    let penalty = match levers.hyper_prior {
        None => grid.penalty(nk),
        Some(_) => 0.0,
    };
    let (m, alpha_s, loss, delta, kind) = (st.m, st.alpha_s, st.loss, st.delta, st.kind);
    let mut obj = PacSgpObjective::new(kernel_init, x, y, m, alpha_s, loss, delta, penalty, kind)?
        .with_confidence_term(levers.term);
    if let Some(prior) = levers.hyper_prior {
        obj = obj.with_hyper_prior(prior)?;
    }
    let z0 = initial_inducing_with_targets(kernel_init, noise_init, x, y, m, st.init, st.seed)?;
    let p0 = NegSparseObjective::pack(kernel_init, noise_init, z0.as_ref());
    let (lo, hi) = match levers.hyper_prior {
        None => (grid.min_log, grid.max_log),
        Some(p) => (p.min_log, p.max_log),
    };
    let mut bounds = vec![(boxes::LN_THETA.0.max(lo), boxes::LN_THETA.1.min(hi)); nk];
    bounds.push(boxes::LN_NOISE);
    bounds.extend(std::iter::repeat_n(boxes::FREE, m * x.ncols()));
    let lbfgs = LbfgsConfig {
        max_iter: st.max_iter,
        ..Default::default()
    };
    let snap = GridSnap { grid, n: nk };
    let min = optim::drive(
        &obj,
        &p0,
        bounds.clone(),
        &lbfgs,
        &Restarts::default(),
        levers.hyper_prior.is_none().then_some(&snap),
    )?;
    let (mut p, report) = (min.params, min.report);
    if let Some(prior) = levers.hyper_prior {
        let theta = prior.snap(&p[..nk]);
        p = crate::objective::pac_gp::reoptimise_free(
            &obj,
            &theta,
            &p[nk..],
            &bounds[nk..],
            &lbfgs,
        )?;
    }
    let (kernel, noise_variance, z) = obj.unpack(&p)?;
    let choice = match levers.hyper_prior {
        None => PenaltyTerm::grid(&grid, nk),
        Some(prior) => prior.penalty_term(&kernel)?,
    };
    let method = if alpha_s > 0.0 {
        SparseMethod::Fitc
    } else {
        SparseMethod::Vfe
    };
    let gp = SparseGp {
        kernel,
        noise_variance,
        z,
        method,
    };
    let spec = CertificateSpec::new(delta, levers.term, vec![choice]);
    let certificate = Certificate::of_posterior(
        &gp.posterior_with_alpha(x, y, alpha_s)?,
        x,
        y,
        &GibbsLoss::Regression(loss),
        &spec,
    )?;
    Ok(PacSgpFit {
        gp,
        alpha_s,
        certificate,
        report,
    })
}
