//! Sparse PAC-GP (kl-PAC-SGP / sqrt-PAC-SGP; seed 004, spec §3.2 and §5): minimise the
//! PAC-Bayes bound over kernel θ, the posterior noise σ² and the inducing inputs Z, with
//! Q in the FITC (`α_s = 1`, default) or VFE (`α_s = 0`) parametrisation of eq. (11).
//!
//! Written with `P = K_uu`, `F = K_uf`, `A = P + FΛ⁻¹Fᵀ`, `c = FΛ⁻¹y`, `e = A⁻¹c`:
//! `KL = ½[tr(PA⁻¹) + eᵀPe − M + ln det A − ln det P]`, `μ_i = F_iᵀe`,
//! `v_i = k_ii − F_iᵀP⁻¹F_i + F_iᵀA⁻¹F_i` (equal to spec §3.2's whitened forms); the gradient
//! is reverse-mode by hand through these M×M and M×N matrices, O(NM²) per evaluation.

use faer::{Mat, MatRef};

use crate::bounds::{BoundKind, Certificate, ConfidenceTerm, HyperGrid};
use crate::error::{Error, Result};
use crate::kernel::Kernel;
use crate::linalg::{self, Cholesky, JitterPolicy};
use crate::loss::RegressionLoss;
use crate::optim::{self, LbfgsConfig, Objective, OptimReport};
use crate::regression::sparse::{
    initial_inducing, InducingInit, NegSparseObjective, SparseGp, SparseMethod, KUU_JITTER,
};

/// The sparse PAC-GP bound over `[θ…, ln σ², vec(Z)]` on standardised data.
pub struct PacSgpObjective<'a> {
    kernel: Kernel,
    x: MatRef<'a, f64>,
    y: &'a [f64],
    m: usize,
    alpha_s: f64,
    loss: RegressionLoss,
    delta: f64,
    penalty: f64,
    kind: BoundKind,
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

fn inv(a: &Mat<f64>, what: &'static str) -> Result<Mat<f64>> {
    Ok(Cholesky::factor(a.as_ref(), &JitterPolicy::default(), what)?.inverse())
}

fn ln_det(a: &Mat<f64>, what: &'static str) -> Result<f64> {
    Ok(Cholesky::factor(a.as_ref(), &JitterPolicy::default(), what)?.ln_det())
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
        crate::bounds::pac_bayes_bound(
            0.0,
            0.0,
            y.len(),
            delta,
            penalty,
            kind,
            ConfidenceTerm::Maurer,
        )?;
        Ok(Self {
            kernel: kernel.clone(),
            x,
            y,
            m,
            alpha_s,
            loss,
            delta,
            penalty,
            kind,
        })
    }

    fn unpack(&self, p: &[f64]) -> Result<(Kernel, f64, Mat<f64>)> {
        NegSparseObjective::new(&self.kernel, SparseMethod::Fitc, self.x, self.y, self.m).unpack(p)
    }

    /// `(R_S, KL, bound)` at `p`.
    pub fn terms(&self, p: &[f64]) -> Result<PacSgpTerms> {
        let (v, _) = self.evaluate(p, false)?;
        Ok(v)
    }

    fn evaluate(&self, p: &[f64], with_grad: bool) -> Result<(PacSgpTerms, Vec<f64>)> {
        let (kernel, s2, z) = self.unpack(p)?;
        let (x, y) = (self.x, self.y);
        let (n, m) = (x.nrows(), self.m);
        let nf = n as f64;
        let mut pm = kernel.gram(z.as_ref());
        for a in 0..m {
            pm[(a, a)] += KUU_JITTER;
        }
        let f = kernel.cross(x, z.as_ref()).transpose().to_owned(); // M×N
        let kd = kernel.diag(x);
        let p_inv = inv(&pm, "K_uu")?;
        let pf = &p_inv * &f;
        let q: Vec<f64> = (0..n)
            .map(|i| (0..m).map(|a| f[(a, i)] * pf[(a, i)]).sum())
            .collect();
        let lam: Vec<f64> = (0..n)
            .map(|i| s2 + self.alpha_s * (kd[i] - q[i]).max(0.0))
            .collect();
        let f_l = Mat::from_fn(m, n, |a, i| f[(a, i)] / lam[i]);
        let am = &pm + &f_l * f.transpose();
        let a_inv = inv(&am, "K_uu + K_uf Λ⁻¹ K_fu")?;
        let yl: Vec<f64> = (0..n).map(|i| y[i] / lam[i]).collect();
        let c = linalg::col_to_vec((&f * linalg::col_from_slice(&yl)).as_ref());
        let e = linalg::col_to_vec((&a_inv * linalg::col_from_slice(&c)).as_ref());
        let pe = linalg::col_to_vec((&pm * linalg::col_from_slice(&e)).as_ref());
        let apa = &(&a_inv * &pm) * &a_inv;
        let tr_pa: f64 = linalg::trace_of_product(pm.as_ref(), a_inv.as_ref());
        let kl = 0.5
            * (tr_pa + linalg::dot(&e, &pe) - m as f64 + ln_det(&am, "A")? - ln_det(&pm, "K_uu")?);
        let af = &a_inv * &f;
        let mu = linalg::col_to_vec((f.transpose() * linalg::col_from_slice(&e)).as_ref());
        let s: Vec<f64> = (0..n)
            .map(|i| (0..m).map(|a| f[(a, i)] * af[(a, i)]).sum())
            .collect();
        let var: Vec<f64> = (0..n).map(|i| (kd[i] - q[i] + s[i]).max(1e-12)).collect();
        let (mut risk, mut g_mu, mut g_v) = (0.0, vec![0.0; n], vec![0.0; n]);
        for i in 0..n {
            let r = self.loss.point_risk(y[i], mu[i], var[i]);
            risk += r.risk / nf;
            g_mu[i] = r.d_mean;
            g_v[i] = r.d_var;
        }
        let klc = kl.max(0.0);
        let cplx =
            crate::bounds::complexity(klc, n, self.delta, self.penalty, ConfidenceTerm::Maurer);
        let (bound, d_q, d_c) = crate::bounds::bound_with_partials(risk, cplx, self.kind);
        let terms = PacSgpTerms {
            empirical_risk: risk,
            kl,
            bound,
        };
        if !with_grad {
            return Ok((terms, vec![]));
        }
        // Adjoints (module docs): KL̄, μ̄, v̄ first.
        let klb = d_c / nf;
        let mub: Vec<f64> = g_mu.iter().map(|g| d_q * g / nf).collect();
        let vb: Vec<f64> = g_v.iter().map(|g| d_q * g / nf).collect();
        let h = linalg::col_to_vec((&apa * linalg::col_from_slice(&c)).as_ref()); // A⁻¹PA⁻¹c
        let t = linalg::col_to_vec((&af * linalg::col_from_slice(&mub)).as_ref()); // A⁻¹Fμ̄
        let af_v = Mat::from_fn(m, n, |a, i| af[(a, i)] * vb[i]);
        let avfa = &af_v * af.transpose(); // A⁻¹F diag(v̄) FᵀA⁻¹
        let abar = Mat::from_fn(m, m, |a, b| {
            klb * 0.5 * (a_inv[(a, b)] - apa[(a, b)] - (e[a] * h[b] + h[a] * e[b]))
                - 0.5 * (t[a] * e[b] + e[a] * t[b])
                - avfa[(a, b)]
        });
        let cbar: Vec<f64> = (0..m).map(|a| klb * h[a] + t[a]).collect();
        let abar_f = &abar * &f;
        let ftc = linalg::col_to_vec((f.transpose() * linalg::col_from_slice(&cbar)).as_ref());
        let lamb: Vec<f64> = (0..n)
            .map(|i| {
                let fa: f64 = (0..m).map(|a| f[(a, i)] * abar_f[(a, i)]).sum();
                -fa / (lam[i] * lam[i]) - ftc[i] * y[i] / (lam[i] * lam[i])
            })
            .collect();
        // Λ uses max(k − q, 0): no gradient flows where the clamp is active.
        let unclamped = |i: usize| kd[i] - q[i] >= 0.0;
        let qb: Vec<f64> = (0..n)
            .map(|i| {
                -vb[i]
                    - if unclamped(i) {
                        self.alpha_s * lamb[i]
                    } else {
                        0.0
                    }
            })
            .collect();
        let kb: Vec<f64> = (0..n)
            .map(|i| {
                vb[i]
                    + if unclamped(i) {
                        self.alpha_s * lamb[i]
                    } else {
                        0.0
                    }
            })
            .collect();
        let s2b: f64 = lamb.iter().sum();
        // F̄ = eμ̄ᵀ + 2A⁻¹F diag(v̄) + 2ĀFΛ⁻¹ + c̄(y/Λ)ᵀ + 2P⁻¹F diag(q̄)   (M×N)
        let fbar = Mat::from_fn(m, n, |a, i| {
            e[a] * mub[i]
                + 2.0 * af[(a, i)] * vb[i]
                + 2.0 * abar_f[(a, i)] / lam[i]
                + cbar[a] * yl[i]
                + 2.0 * pf[(a, i)] * qb[i]
        });
        // P̄ = KL̄·½[A⁻¹ + eeᵀ − P⁻¹] + Ā − P⁻¹F diag(q̄) FᵀP⁻¹
        let pf_q = Mat::from_fn(m, n, |a, i| pf[(a, i)] * qb[i]);
        let pqp = &pf_q * pf.transpose();
        let pbar = Mat::from_fn(m, m, |a, b| {
            klb * 0.5 * (a_inv[(a, b)] + e[a] * e[b] - p_inv[(a, b)]) + abar[(a, b)] - pqp[(a, b)]
        });
        let g_xz = fbar.transpose().to_owned(); // adjoint of K(X, Z) = Fᵀ
        let mut grad = kernel.cross_grad_contract(x, z.as_ref(), g_xz.as_ref());
        let gp = kernel.gram_grad_contract(z.as_ref(), pbar.as_ref());
        let gd = kernel.diag_grad_contract(x, &kb);
        for (k, g) in grad.iter_mut().enumerate() {
            *g += gp[k] + gd[k];
        }
        grad.push(s2 * s2b);
        let dz = &kernel.cross_grad_z(x, z.as_ref(), g_xz.as_ref())
            + &kernel.gram_grad_z(z.as_ref(), pbar.as_ref());
        for a in 0..m {
            for t in 0..z.ncols() {
                grad.push(dz[(a, t)]);
            }
        }
        Ok((terms, grad))
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
    /// Certificate (kl form) at the snapped θ.
    pub certificate: Certificate,
    /// Pinsker form of the bound there.
    pub bound_sqrt: f64,
    /// Optimiser report.
    pub report: OptimReport,
}

/// Train kl-PAC-SGP / sqrt-PAC-SGP (θ boxed to the grid's range, then snapped), from k-means Z.
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
    max_iter: usize,
) -> Result<PacSgpFit> {
    let grid = HyperGrid::default();
    let nk = kernel_init.n_params();
    let penalty = grid.penalty(nk);
    let obj = PacSgpObjective::new(kernel_init, x, y, m, alpha_s, loss, delta, penalty, kind)?;
    let z0 = initial_inducing(x, m, InducingInit::KMeans, seed)?;
    let p0 = NegSparseObjective::pack(kernel_init, noise_init, z0.as_ref());
    let mut bounds = vec![(grid.min_log, grid.max_log); nk];
    bounds.push((1e-6f64.ln(), 1e3f64.ln()));
    bounds.extend(std::iter::repeat_n(
        (f64::NEG_INFINITY, f64::INFINITY),
        m * x.ncols(),
    ));
    let report = optim::minimize(
        &obj,
        &p0,
        &LbfgsConfig {
            max_iter,
            bounds: Some(bounds),
            ..Default::default()
        },
    )?;
    let mut p = report.params.clone();
    let snapped = grid.round(&p[..nk]);
    p[..nk].copy_from_slice(&snapped);
    let (kernel, noise_variance, z) = obj.unpack(&p)?;
    let t = obj.terms(&p)?;
    let n = y.len();
    let certificate = Certificate::new(
        t.empirical_risk,
        t.kl.max(0.0),
        n,
        delta,
        penalty,
        BoundKind::Kl,
        ConfidenceTerm::Maurer,
    )?;
    let bound_sqrt = crate::bounds::pac_bayes_bound(
        t.empirical_risk,
        t.kl.max(0.0),
        n,
        delta,
        penalty,
        BoundKind::Sqrt,
        ConfidenceTerm::Maurer,
    )?;
    let method = if alpha_s > 0.0 {
        SparseMethod::Fitc
    } else {
        SparseMethod::Vfe
    };
    Ok(PacSgpFit {
        gp: SparseGp {
            kernel,
            noise_variance,
            z,
            method,
        },
        alpha_s,
        certificate,
        bound_sqrt,
        report,
    })
}
