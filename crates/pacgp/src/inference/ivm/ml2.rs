//! Type-II maximum likelihood for the IVM (seed 003 §4.3).
//!
//! *Kernel parameters* (§4.3.1; Lawrence et al.): with the active set and its sites held
//! fixed, the classification problem is a regression on the "hypothetical targets" m̃ with
//! noise Π⁻¹, and the approximate log evidence
//!
//! `ln Z(θ) = Σ_j ln C_j + ln ∫ N(f; 0, K_I(θ)) Π_j exp(−½ π_j f_j² + ν̃_j f_j) df
//!          = Σ_j ln C_j − ½ ln det B + ½ ν̃ᵀ K_I β`
//!
//! (`B = I + Π½K_IΠ½`, `β = (K_I + Π⁻¹)⁻¹ m̃`) equals `ln N(m̃; 0, K_I + Π⁻¹)` up to a
//! θ-free constant, and at the θ of the selection it equals ADF's `Σ_j ln Z_j`. Its gradient is
//! `∂ ln Z/∂θ_k = ½ tr((ββᵀ − Π½B⁻¹Π½) ∂K_I/∂θ_k)` (seed 003 §4.3.1), O(d³ + p d² D).
//!
//! *Probit noise* (§4.3.2): with the inclusion marginals `N(μ_j, ζ_j)` held fixed,
//! `Σ_j ln Z_j(b, λ) = Σ_j ln Φ(u_j)`, `c_j = y_j/√(λ⁻² + ζ_j)`, `u_j = c_j(μ_j + b)`, and
//! `∂/∂b = Σ g_j`, `∂/∂λ = λ⁻³ Σ g_j u_j c_j` with `g_j = c_j φ(u_j)/Φ(u_j)`.
//!
//! [`ivm_ml2`] alternates selection and L-BFGS on these objectives for a fixed number of rounds.

use faer::{Mat, MatRef};

use super::{ivm_sites, select_rows, IvmConfig, Site};
use crate::bounds::HyperGrid;
use crate::error::{Error, Result};
use crate::inference::ClassifierFit;
use crate::kernel::Kernel;
use crate::likelihood::Likelihood;
use crate::linalg::{self, Cholesky, JitterPolicy};
use crate::optim::{self, boxes, GridSnap, LbfgsConfig, Objective, OptimReport, Restarts};
use crate::special::{inv_mills_ratio, ln_normal_cdf};

/// The IVM pseudo-likelihood over the kernel's ln θ with the active set and sites fixed;
/// as an [`Objective`] it is the *negative* `ln Z(θ)` (seed 003 §4.3.1).
#[derive(Clone, Debug)]
pub struct IvmPseudoLikelihood {
    kernel: Kernel,
    x_active: Mat<f64>,
    sqrt_pi: Vec<f64>,
    natural_mean: Vec<f64>,
    ln_scale_sum: f64,
    jitter: JitterPolicy,
}

impl IvmPseudoLikelihood {
    /// The objective for `kernel`'s structure, the training inputs `x` and the `sites` of an
    /// ADF/IVM run on them.
    pub fn new(
        kernel: &Kernel,
        x: MatRef<'_, f64>,
        sites: &[Site],
        jitter: JitterPolicy,
    ) -> Result<Self> {
        if sites.is_empty() {
            return Err(Error::Empty {
                what: "IVM active set",
            });
        }
        if let Some(s) = sites.iter().find(|s| s.index >= x.nrows()) {
            return Err(Error::ShapeMismatch {
                what: "site index vs training inputs",
                expected: format!("< {}", x.nrows()),
                found: format!("{}", s.index),
            });
        }
        kernel.check_input_dim(x.ncols())?;
        let idx: Vec<usize> = sites.iter().map(|s| s.index).collect();
        Ok(Self {
            kernel: kernel.clone(),
            x_active: select_rows(x, &idx),
            sqrt_pi: sites.iter().map(|s| s.precision.max(0.0).sqrt()).collect(),
            natural_mean: sites.iter().map(|s| s.natural_mean).collect(),
            ln_scale_sum: sites.iter().map(|s| s.ln_scale).sum(),
            jitter,
        })
    }

    /// `ln Z(θ)` and its gradient in ln θ (not negated).
    pub fn ln_z_and_gradient(&self, theta: &[f64]) -> Result<(f64, Vec<f64>)> {
        let mut k = self.kernel.clone();
        k.set_params(theta)?;
        let kb = k.gram(self.x_active.as_ref())?;
        let d = self.sqrt_pi.len();
        let sw = &self.sqrt_pi;
        let b = crate::memory::try_from_fn(d, d, "I + Π½K_IΠ½", |i, j| {
            sw[i] * kb[(i, j)] * sw[j] + if i == j { 1.0 } else { 0.0 }
        })?;
        let chol = Cholesky::factor(b.as_ref(), &self.jitter, "I + Π½K_IΠ½")?;
        let nu_t = &self.natural_mean;
        let knu = linalg::mat_vec(&kb, nu_t);
        let t = chol.solve_vec(&(0..d).map(|i| sw[i] * knu[i]).collect::<Vec<_>>());
        let beta: Vec<f64> = (0..d).map(|i| nu_t[i] - sw[i] * t[i]).collect();
        let value = self.ln_scale_sum - 0.5 * chol.ln_det() + 0.5 * linalg::dot(&knu, &beta);
        // seed 003 §4.3.1: ½ tr((ββᵀ − (K_I + Π⁻¹)⁻¹) ∂K), (K_I + Π⁻¹)⁻¹ = Π½B⁻¹Π½.
        let binv = chol.inverse()?;
        let g = crate::memory::try_from_fn(d, d, "the evidence gradient's weights", |i, j| {
            0.5 * (beta[i] * beta[j] - sw[i] * binv[(i, j)] * sw[j])
        })?;
        let grad = k.gram_grad_contract(self.x_active.as_ref(), g.as_ref());
        Ok((value, grad))
    }
}

impl Objective for IvmPseudoLikelihood {
    fn dim(&self) -> usize {
        self.kernel.n_params()
    }

    fn value_and_gradient(&self, params: &[f64]) -> Result<(f64, Vec<f64>)> {
        let (v, g) = self.ln_z_and_gradient(params)?;
        Ok((-v, g.into_iter().map(|g| -g).collect()))
    }
}

/// `Σ_j ln Z_j(b, λ)` over the sites' inclusion marginals for the probit `Φ(λy(f + b))`, with
/// its partial derivatives `(value, ∂/∂b, ∂/∂λ)` (seed 003 §4.3.2).
pub fn probit_noise_ln_z(lambda: f64, bias: f64, y: &[f64], sites: &[Site]) -> (f64, f64, f64) {
    let (mut v, mut db, mut dl) = (0.0, 0.0, 0.0);
    for s in sites {
        let c = y[s.index] / (1.0 / (lambda * lambda) + s.inclusion_var).sqrt();
        let u = c * (s.inclusion_mean + bias);
        let g = c * inv_mills_ratio(u); // ∂ ln Z/∂μ = ∂ ln Z/∂b
        v += ln_normal_cdf(u);
        db += g;
        dl += g * u * c; // ∂u/∂λ = u c² λ⁻³
    }
    (v, db, dl / (lambda * lambda * lambda))
}

/// The negative probit-noise objective `−Σ_j ln Z_j` over `[b, ln λ]` with the inclusion
/// marginals of the sites held fixed (seed 003 §4.3.2).
#[derive(Clone, Debug)]
pub struct ProbitNoiseObjective {
    y: Vec<f64>,
    sites: Vec<Site>,
}

impl ProbitNoiseObjective {
    /// The objective for labels `y` (all training labels) and the sites of an IVM run.
    pub fn new(y: &[f64], sites: &[Site]) -> Result<Self> {
        if sites.is_empty() {
            return Err(Error::Empty {
                what: "IVM active set",
            });
        }
        if let Some(s) = sites.iter().find(|s| s.index >= y.len()) {
            return Err(Error::ShapeMismatch {
                what: "site index vs labels",
                expected: format!("< {}", y.len()),
                found: format!("{}", s.index),
            });
        }
        Ok(Self {
            y: y.to_vec(),
            sites: sites.to_vec(),
        })
    }
}

impl Objective for ProbitNoiseObjective {
    fn dim(&self) -> usize {
        2
    }

    fn value_and_gradient(&self, params: &[f64]) -> Result<(f64, Vec<f64>)> {
        let (bias, lambda) = (params[0], params[1].exp());
        Likelihood::probit_with(lambda, bias)?; // validates λ > 0 and both finite
        let (v, db, dl) = probit_noise_ln_z(lambda, bias, &self.y, &self.sites);
        Ok((-v, vec![-db, -dl * lambda]))
    }
}

/// Settings of [`ivm_ml2`].
#[derive(Clone, Debug)]
pub struct IvmMl2Config {
    /// The IVM run in every round.
    pub ivm: IvmConfig,
    /// Rounds of (selection, optimisation); a final selection follows the last round.
    pub rounds: usize,
    /// L-BFGS settings for the kernel's ln θ (bounds in ln space are advisable: seed 003
    /// reports the signal variance growing without bound on MNIST 2v3).
    pub kernel_optim: LbfgsConfig,
    /// Also learn the probit bias b and slope λ (over `[b, ln λ]`) after the kernel in each
    /// round; needs the probit likelihood.
    pub learn_noise: bool,
    /// L-BFGS settings for `[b, ln λ]`.
    pub noise_optim: LbfgsConfig,
    /// Box for every kernel θ (ln space).
    pub theta_bounds: (f64, f64),
    /// Optimise θ inside this grid's range and snap it onto the grid before the final
    /// selection.
    pub snap: Option<HyperGrid>,
}

impl IvmMl2Config {
    /// `rounds` rounds of kernel learning with an active set of `d`, ln θ free, noise fixed.
    pub fn new(active_set: usize, rounds: usize) -> Self {
        Self {
            ivm: IvmConfig::new(active_set),
            rounds,
            kernel_optim: LbfgsConfig::default(),
            learn_noise: false,
            noise_optim: LbfgsConfig::default(),
            theta_bounds: boxes::LN_THETA,
            snap: None,
        }
    }
}

/// Result of [`ivm_ml2`].
#[derive(Clone, Debug)]
pub struct IvmMl2Fit {
    /// The IVM fit at the final hyperparameters (its posterior carries the final kernel).
    pub fit: ClassifierFit,
    /// The final likelihood (with the learnt b and λ if requested).
    pub likelihood: Likelihood,
    /// One L-BFGS report per round for the kernel's ln θ (minimising `−ln Z(θ)`).
    pub kernel_reports: Vec<OptimReport>,
    /// One L-BFGS report per round for `[b, ln λ]` (empty unless `learn_noise`).
    pub noise_reports: Vec<OptimReport>,
}

/// Type-II ML for the IVM (seed 003 §4.3): each round selects the active set at the current
/// hyperparameters, then minimises the negative pseudo-likelihood over the kernel's ln θ with
/// the sites fixed and, if asked, the probit noise objective over `[b, ln λ]`; a final
/// selection at the learnt values gives the returned fit.
pub fn ivm_ml2(
    kernel: &Kernel,
    lik: &Likelihood,
    x: MatRef<'_, f64>,
    y: &[f64],
    cfg: &IvmMl2Config,
) -> Result<IvmMl2Fit> {
    if cfg.learn_noise && !matches!(lik, Likelihood::Probit { .. }) {
        return Err(Error::Unsupported(
            "learning the noise parameters b and λ needs the probit likelihood".into(),
        ));
    }
    let (mut kernel, mut lik) = (kernel.clone(), *lik);
    // Snapped every round: the final selection is at a grid point.
    let snap = GridSnap::leading(cfg.snap, kernel.n_params());
    let (mut kernel_reports, mut noise_reports) = (Vec::new(), Vec::new());
    for _ in 0..cfg.rounds {
        let (_, sites) = ivm_sites(&kernel, &lik, x, y, &cfg.ivm)?;
        let obj = IvmPseudoLikelihood::new(&kernel, x, &sites, cfg.ivm.jitter)?;
        let bounds = vec![cfg.theta_bounds; kernel.n_params()];
        let min = optim::drive(
            &obj,
            &kernel.params(),
            bounds,
            &cfg.kernel_optim,
            &Restarts::default(),
            snap.as_ref(),
        )?;
        kernel.set_params(&min.params)?;
        kernel_reports.push(min.report);
        if let (true, Likelihood::Probit { lambda, bias }) = (cfg.learn_noise, lik) {
            let obj = ProbitNoiseObjective::new(y, &sites)?;
            // b and ln λ are left free here (the pseudo-likelihood keeps them finite).
            let min = optim::drive(
                &obj,
                &[bias, lambda.ln()],
                vec![boxes::FREE; 2],
                &cfg.noise_optim,
                &Restarts::default(),
                None,
            )?;
            lik = Likelihood::probit_with(min.params[1].exp(), min.params[0])?;
            noise_reports.push(min.report);
        }
    }
    let (fit, _) = ivm_sites(&kernel, &lik, x, y, &cfg.ivm)?;
    Ok(IvmMl2Fit {
        fit,
        likelihood: lik,
        kernel_reports,
        noise_reports,
    })
}
