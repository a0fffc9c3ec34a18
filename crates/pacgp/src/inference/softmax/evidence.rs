//! The gradient of the softmax Laplace evidence in the shared kernel's θ, and ML-II.
//!
//! With `a = K⁻¹f̂`, `C_j = ∂K/∂θ_j` (block diagonal, the same block for every class) and
//! `𝓡 = W(I + KW)⁻¹`, the explicit part is `½ aᵀC_j a − ½ tr(𝓡 C_j)` (as GPML eq. 5.22 for
//! the binary case) and the implicit part `sᵀ ∂f̂/∂θ_j` with
//! `∂f̂/∂θ_j = (I + KW)⁻¹ C_j a = (I − K𝓡) C_j a` (differentiate `f̂ = K(y − π(f̂))`) and
//! `s = ∂ ln q/∂f̂ = −½ ∂ ln|I + KW|/∂f̂`, whose entry for point i and class d is
//! `s_id = −½ tr(Σ_i ∂W_i/∂f_id) = −½ [Σ_c Σ_i,cc g_c − 2 gᵀΣ_i π_i]`, `g_c = π_ic(δ_cd − π_id)`,
//! with `Σ_i` the C×C posterior covariance at point i and `W_i = diag(π_i) − π_iπ_iᵀ`. Since
//! the kernel is shared, everything is one contraction `Σ_ij G_ij ∂K_ij/∂θ_j` with
//! `G = ½ Σ_c a_c a_cᵀ − ½ Σ_c 𝓡_cc + ½ Σ_c (u_c a_cᵀ + a_c u_cᵀ)`, `u = (I − 𝓡K) s` and
//! `Σ_c 𝓡_cc = Σ_c E_c − Σ_c F_cᵀF_c`, `F_c = M⁻¹E_c`.
//!
//! Cost: about `4 C n³` flops after the mode.

use std::cell::RefCell;

use faer::{Mat, MatRef};

use super::{find_mode, SoftmaxConfig, SoftmaxMode};
use crate::bounds::HyperGrid;
use crate::error::Result;
use crate::kernel::Kernel;
use crate::linalg;
use crate::optim::{self, boxes, GridSnap, LbfgsConfig, Objective, OptimReport, Restarts};

/// The C×C posterior covariances at the training points and `Σ_c 𝓡_cc` (module doc).
fn training_covariances(mode: &SoftmaxMode) -> Result<(Vec<Mat<f64>>, Mat<f64>)> {
    let k = &mode.k;
    let n = k.nrows();
    let c = mode.pi.len();
    let cp = &mode.coupling;
    let mut r_sum = crate::memory::try_zeros(n, n, "the softmax Laplace's Σ_c 𝓡_cc")?;
    let mut var_ind = Vec::with_capacity(c);
    let mut u = Vec::with_capacity(c);
    for e in &cp.e {
        // F_c = M⁻¹E_c; Σ_c 𝓡_cc gains E_c − F_cᵀF_c.
        let mut f = linalg::try_clone(e.as_ref(), "the softmax Laplace's M⁻¹E_c")?;
        cp.chol_m.solve_lower_in_place(f.as_mut());
        let ftf = linalg::product(f.transpose(), f.as_ref(), "the softmax Laplace's F_cᵀF_c")?;
        r_sum += e;
        r_sum -= &ftf;
        // E_cK; the independent variance K_ii − (K E_c K)_ii; U_c = M⁻¹E_cK.
        let mut ek = linalg::product(e.as_ref(), k.as_ref(), "the softmax Laplace's E_cK")?;
        let kek = linalg::col_dots(k, &ek);
        var_ind.push((0..n).map(|i| k[(i, i)] - kek[i]).collect::<Vec<f64>>());
        cp.chol_m.solve_lower_in_place(ek.as_mut());
        u.push(ek);
    }
    let sigma = (0..n)
        .map(|i| {
            Mat::from_fn(c, c, |a, b| {
                let cross = linalg::dot(u[a].col_as_slice(i), u[b].col_as_slice(i));
                if a == b {
                    var_ind[a][i] + cross
                } else {
                    cross
                }
            })
        })
        .collect();
    Ok((sigma, r_sum))
}

/// `s = ∂ ln q/∂f̂` through W (module doc), class-major.
fn s_vector(mode: &SoftmaxMode, sigma: &[Mat<f64>]) -> Vec<Vec<f64>> {
    let c = mode.pi.len();
    let n = mode.k.nrows();
    let mut s = vec![vec![0.0; n]; c];
    for (i, sig) in sigma.iter().enumerate() {
        let p: Vec<f64> = (0..c).map(|k| mode.pi[k][i]).collect();
        let sp: Vec<f64> = (0..c)
            .map(|a| (0..c).map(|b| sig[(a, b)] * p[b]).sum())
            .collect();
        for d in 0..c {
            let g: Vec<f64> = (0..c).map(|k| p[k] * (f64::from(k == d) - p[d])).collect();
            let diag: f64 = (0..c).map(|k| sig[(k, k)] * g[k]).sum();
            s[d][i] = -0.5 * (diag - 2.0 * linalg::dot(&g, &sp));
        }
    }
    s
}

/// `ln q(y|X,θ)` at the mode and its gradient in the kernel's θ (ln space);
/// [`crate::Error::OutOfMemory`] where its N × N work cannot be had.
pub fn softmax_evidence_gradient(
    kernel: &Kernel,
    x: MatRef<'_, f64>,
    mode: &SoftmaxMode,
) -> Result<Vec<f64>> {
    let n = mode.k.nrows();
    let (sigma, r_sum) = training_covariances(mode)?;
    let s = s_vector(mode, &sigma);
    let ks: Vec<Vec<f64>> = s.iter().map(|v| linalg::mat_vec(&mode.k, v)).collect();
    let rks = mode.coupling.r_times(&ks);
    let u: Vec<Vec<f64>> = s
        .iter()
        .zip(&rks)
        .map(|(s, r)| s.iter().zip(r).map(|(a, b)| a - b).collect())
        .collect();
    let mut g = crate::memory::try_zeros(n, n, "the softmax evidence gradient's weights")?;
    for j in 0..n {
        for i in 0..n {
            let mut v = -0.5 * r_sum[(i, j)];
            for (a, u) in mode.a.iter().zip(&u) {
                v += 0.5 * a[i] * a[j] + 0.5 * (u[i] * a[j] + a[i] * u[j]);
            }
            g[(i, j)] = v;
        }
    }
    Ok(kernel.gram_grad_contract_symmetric(x, g.as_ref(), Some(mode.k.as_ref())))
}

/// The softmax Laplace mode at `kernel` on `(x, y)`, Newton warm-started from `f0`.
pub fn softmax_mode(
    kernel: &Kernel,
    x: MatRef<'_, f64>,
    y: &[usize],
    classes: usize,
    cfg: &SoftmaxConfig,
    f0: Option<&[Vec<f64>]>,
) -> Result<SoftmaxMode> {
    kernel.check_input_dim(x.ncols())?;
    find_mode(kernel.gram(x)?, y, classes, cfg, f0)
}

/// `−ln q(y|X,θ)` of the softmax Laplace over the kernel's θ, each evaluation warm-started
/// from the previous mode.
pub struct SoftmaxNegLogEvidence<'a> {
    kernel: Kernel,
    x: MatRef<'a, f64>,
    y: &'a [usize],
    classes: usize,
    cfg: SoftmaxConfig,
    warm: RefCell<Option<Vec<Vec<f64>>>>,
    last: RefCell<Option<(Vec<f64>, SoftmaxMode)>>,
}

impl<'a> SoftmaxNegLogEvidence<'a> {
    /// The objective for `kernel`'s structure on `(x, y)`.
    pub fn new(
        kernel: &Kernel,
        x: MatRef<'a, f64>,
        y: &'a [usize],
        classes: usize,
        cfg: SoftmaxConfig,
    ) -> Result<Self> {
        kernel.check_input_dim(x.ncols())?;
        Ok(Self {
            kernel: kernel.clone(),
            x,
            y,
            classes,
            cfg,
            warm: RefCell::new(None),
            last: RefCell::new(None),
        })
    }

    /// The kernel at θ.
    pub fn kernel_at(&self, theta: &[f64]) -> Result<Kernel> {
        let mut k = self.kernel.clone();
        k.set_params(theta)?;
        Ok(k)
    }

    /// The mode at θ (warm-started), with the evidence gradient.
    pub fn mode_at(&self, theta: &[f64]) -> Result<(SoftmaxMode, Vec<f64>)> {
        let k = self.kernel_at(theta)?;
        let warm = self.warm.borrow().clone();
        let mode = softmax_mode(&k, self.x, self.y, self.classes, &self.cfg, warm.as_deref())?;
        let grad = softmax_evidence_gradient(&k, self.x, &mode)?;
        *self.warm.borrow_mut() = Some(mode.f.clone());
        Ok((mode, grad))
    }
}

impl Objective for SoftmaxNegLogEvidence<'_> {
    fn dim(&self) -> usize {
        self.kernel.n_params()
    }

    fn value_and_gradient(&self, p: &[f64]) -> Result<(f64, Vec<f64>)> {
        let (mode, g) = self.mode_at(p)?;
        let value = -mode.ln_evidence;
        *self.last.borrow_mut() = Some((p.to_vec(), mode));
        Ok((value, g.iter().map(|v| -v).collect()))
    }
}

/// Settings of [`fit_softmax_ml2`].
#[derive(Clone, Debug)]
pub struct SoftmaxMlConfig {
    /// Optimiser settings (its boxes are replaced by `theta_bounds`, restricted to the grid).
    pub lbfgs: LbfgsConfig,
    /// Seeded restarts (none by default).
    pub restarts: Restarts,
    /// Box for every θ (ln space).
    pub theta_bounds: (f64, f64),
    /// Optimise inside this grid's range and snap θ onto it.
    pub snap: Option<HyperGrid>,
    /// Newton settings.
    pub newton: SoftmaxConfig,
}

impl Default for SoftmaxMlConfig {
    fn default() -> Self {
        Self {
            lbfgs: LbfgsConfig::default(),
            restarts: Restarts::default(),
            theta_bounds: boxes::LN_THETA,
            snap: None,
            newton: SoftmaxConfig::default(),
        }
    }
}

/// ML-II for the softmax Laplace: maximise `ln q(y|X,θ)` over the shared kernel's θ from
/// `kernel_init` (snapped onto `cfg.snap` if given); the kernel, the mode there and what the
/// optimiser did.
pub fn fit_softmax_ml2(
    kernel_init: &Kernel,
    x: MatRef<'_, f64>,
    y: &[usize],
    classes: usize,
    cfg: &SoftmaxMlConfig,
) -> Result<(Kernel, SoftmaxMode, OptimReport)> {
    let obj = SoftmaxNegLogEvidence::new(kernel_init, x, y, classes, cfg.newton)?;
    let x0 = kernel_init.params();
    let bounds = vec![cfg.theta_bounds; x0.len()];
    let snap = GridSnap::leading(cfg.snap, x0.len());
    let min = optim::drive(&obj, &x0, bounds, &cfg.lbfgs, &cfg.restarts, snap.as_ref())?;
    let kernel = obj.kernel_at(&min.params)?;
    let mode = match obj.last.take() {
        Some((p, mode)) if p == min.params => mode,
        _ => obj.mode_at(&min.params)?.0,
    };
    Ok((kernel, mode, min.report))
}
