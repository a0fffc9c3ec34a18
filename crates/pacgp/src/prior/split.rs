//! Data-dependent GP prior (tighter-bounds spec §3; Ambroladze et al. 2007, Parrado-Hernández
//! et al. 2012): a seeded random permutation splits the sample into part A (fraction F) and
//! part B. θ, the prior noise σ_A² (ML-II) and the scalers are fitted on A alone, and the prior
//! is the GP posterior given A — still a GP, with mean `μ_A` and covariance `K_A` on `X_B`
//! (spec §3.2):
//!
//! `L_A L_Aᵀ = K_AA + σ_A² I`, `W = L_A⁻¹ K_AB`, `μ_A = Wᵀ L_A⁻¹ y_A`, `K_A = K_BB − WᵀW`.
//!
//! The posterior updates P_A with S_B, with free `(σ_m², σ_v², s)`:
//! `q(f_B) = N(μ_A + K_A C_m⁻¹ r, s·(K_A − K_A C_v⁻¹ K_A))`, `r = y_B − μ_A`,
//! `C_m = K_A + σ_m² I`, `C_v = K_A + σ_v² I`, and `Q(f) = ∫ P_A(f | f_B) q(f_B) df_B`, so
//!
//! `KL(Q‖P_A) = ½[s σ_v² tr C_v⁻¹ + αᵀK_Aα − N_B − N_B ln s − N_B ln σ_v² + ln det C_v]`,
//! `α = C_m⁻¹ r` (spec §3.2). The certificate is evaluated on B only (`N = N_B`); a menu of
//! fractions fixed in advance ([`SPLIT_FRACTIONS`]) costs `ln 3` when the bound picks one.
//! Cost per evaluation O(N_B³) after one O(N_A³ + N_A² N_B) prior.
//!
//! The richer posterior (spec §4.2 on this prior): per-point noises `σ_m² → diag(λ_m,i)`,
//! `σ_v² → diag(λ_v,i)` on B (`PointNoise`, `SplitPointNoiseObjective`,
//! `fit_split_prior_point_noise`), KL as above with `σ_v² tr C_v⁻¹ → Σ_i λ_v,i (C_v⁻¹)_ii`,
//! `N ln σ_v² → Σ_i ln λ_v,i`; the terms and gradients are PAC-GP's per-point ones
//! ([`crate::objective::pac_gp_hetero`]) with `K → K_A`, `y → y_B − μ_A` and the scale s.

use faer::{Mat, MatRef};
use serde::{Deserialize, Serialize};

use crate::bounds::{BoundKind, BoundTarget, ConfidenceTerm, CATONI_GRID};
use crate::certificate::{Certificate, CertificateSpec, GibbsLoss, PenaltyTerm};
use crate::data::{permutation, Dataset, Standardizer, TargetScaler};
use crate::error::{Error, Result};
use crate::kernel::Kernel;
use crate::linalg::{self, Cholesky, JitterPolicy};
use crate::loss::RegressionLoss;
use crate::optim::{self, boxes, LbfgsConfig, Objective, Restarts};
use crate::posterior::{GaussianPosterior, Marginals};
use crate::regression::exact::{fit_ml2, MlConfig};
use crate::regression::point_noise::PointNoiseEval;
use crate::select::Menu;

/// The menu of split fractions fixed in advance (spec §3.1, §7 item 1).
pub const SPLIT_FRACTIONS: [f64; 3] = [0.3, 0.5, 0.7];

/// Box for `ln s`, the posterior's covariance scale.
pub const LN_SCALE_BOUNDS: (f64, f64) = (-6.0, 3.0);

/// Which fraction F of the sample forms part A.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SplitFraction {
    /// One fraction fixed before seeing the data (no charge).
    Fixed(f64),
    /// The best of [`SPLIT_FRACTIONS`] by the bound, charged `ln 3`.
    Menu,
}

/// The grid of Catoni's λ fixed in advance (charged `ln 5`) when `grid`, else the one
/// confidence term `term` (free).
pub fn catoni_menu(grid: bool, term: ConfidenceTerm) -> Menu<ConfidenceTerm> {
    if grid {
        Menu::charged(
            CATONI_GRID
                .iter()
                .map(|&lambda| ConfidenceTerm::Catoni { lambda })
                .collect(),
            "Catoni λ (geometric in [0.3, 3])",
        )
    } else {
        Menu::free(vec![term], "confidence term", "in advance")
    }
}

impl SplitFraction {
    /// The menu of fractions the bound chooses among (charged `ln k`).
    pub fn menu(&self) -> Result<Menu<f64>> {
        Ok(Menu::charged(self.candidates()?, "split fraction F"))
    }

    /// The candidate fractions and the union-bound menu size.
    pub fn candidates(&self) -> Result<Vec<f64>> {
        match *self {
            SplitFraction::Fixed(f) if f > 0.0 && f < 1.0 => Ok(vec![f]),
            SplitFraction::Fixed(f) => Err(Error::InvalidParameter {
                name: "split fraction F",
                value: f,
                reason: "must lie in (0, 1)",
            }),
            SplitFraction::Menu => Ok(SPLIT_FRACTIONS.to_vec()),
        }
    }
}

/// Rows of `data` in a canonical order that does not depend on the file's row order: sorted
/// by the SHA-256 of each row's bits (identical rows are interchangeable).
pub fn canonical_order(data: &Dataset) -> Vec<usize> {
    use sha2::{Digest, Sha256};
    let mut keyed: Vec<([u8; 32], usize)> = (0..data.n())
        .map(|i| {
            let mut h = Sha256::new();
            for j in 0..data.d() {
                h.update(data.x[(i, j)].to_bits().to_le_bytes());
            }
            h.update(data.y[i].to_bits().to_le_bytes());
            (h.finalize().into(), i)
        })
        .collect();
    keyed.sort_unstable();
    keyed.into_iter().map(|(_, i)| i).collect()
}

/// Rows of parts A and B of `data` (indices into it): [`split_indices`] applied to the
/// [`canonical_order`], so the same sample in any row order gives the same parts.
pub fn split_rows(data: &Dataset, fraction: f64, seed: u64) -> Result<(Vec<usize>, Vec<usize>)> {
    let order = canonical_order(data);
    let (a, b) = split_indices(data.n(), fraction, seed)?;
    Ok((
        a.iter().map(|&i| order[i]).collect(),
        b.iter().map(|&i| order[i]).collect(),
    ))
}

/// The size of part A of `n` rows at fraction F: `round(F·N)`.
pub fn part_a_size(n: usize, fraction: f64) -> usize {
    (fraction * n as f64).round() as usize
}

/// Indices of parts A and B: the first `round(F·N)` of a seeded permutation form A (at least
/// one point in each part).
pub fn split_indices(n: usize, fraction: f64, seed: u64) -> Result<(Vec<usize>, Vec<usize>)> {
    let n_a = part_a_size(n, fraction);
    if n < 2 || n_a == 0 || n_a >= n {
        return Err(Error::InvalidParameter {
            name: "split fraction F",
            value: fraction,
            reason: "leaves part A or part B empty",
        });
    }
    let perm = permutation(n, seed);
    Ok((perm[..n_a].to_vec(), perm[n_a..].to_vec()))
}

/// A regression sample split for a data-dependent prior: the rows of parts A and B, the
/// scalers fitted on part A alone, and both parts standardised by them.
#[derive(Clone, Debug)]
pub struct RegressionParts {
    /// Rows of part A (indices into the sample as given).
    pub a: Vec<usize>,
    /// Rows of part B.
    pub b: Vec<usize>,
    /// Input scaler fitted on A.
    pub x_scaler: Standardizer,
    /// Target scaler fitted on A.
    pub y_scaler: TargetScaler,
    /// Part A's inputs and targets, standardised.
    pub x_a: Mat<f64>,
    /// Part A's targets, standardised.
    pub y_a: Vec<f64>,
    /// Part B's inputs, standardised.
    pub x_b: Mat<f64>,
    /// Part B's targets, standardised.
    pub y_b: Vec<f64>,
}

impl RegressionParts {
    /// The seeded split of `train` at `fraction` ([`split_rows`]), scalers fitted on part A.
    pub fn of(train: &Dataset, fraction: f64, seed: u64) -> Result<Self> {
        let (a, b) = split_rows(train, fraction, seed)?;
        let (part_a, part_b) = (train.subset(&a), train.subset(&b));
        let x_scaler = Standardizer::fit(part_a.x.as_ref(), &part_a.feature_names)?;
        let y_scaler = TargetScaler::fit_column(&part_a.y, &part_a.target_name)?;
        Ok(Self {
            x_a: x_scaler.transform(part_a.x.as_ref())?,
            y_a: y_scaler.transform(&part_a.y),
            x_b: x_scaler.transform(part_b.x.as_ref())?,
            y_b: y_scaler.transform(&part_b.y),
            a,
            b,
            x_scaler,
            y_scaler,
        })
    }
}

/// The prior P_A: the GP posterior given part A (θ_A, σ_A² fitted there).
#[derive(Clone, Debug)]
pub struct SplitPrior {
    /// Kernel with θ_A.
    pub kernel: Kernel,
    /// Prior noise σ_A² of part A.
    pub noise_a: f64,
    /// Inputs of part A (standardised).
    pub x_a: Mat<f64>,
    /// Targets of part A (standardised).
    pub y_a: Vec<f64>,
    chol_a: Cholesky,
    alpha_a: Vec<f64>,
}

/// P_A's mean and covariance on a set of inputs.
#[derive(Clone, Debug)]
pub struct PriorOnInputs {
    /// `μ_A`.
    pub mean: Vec<f64>,
    /// `K_A`.
    pub cov: Mat<f64>,
}

impl SplitPrior {
    /// P_A from a kernel with fixed θ_A, noise σ_A² and part A's data.
    pub fn new(kernel: Kernel, noise_a: f64, x_a: Mat<f64>, y_a: &[f64]) -> Result<Self> {
        crate::regression::exact::check_regression_inputs(x_a.as_ref(), y_a)?;
        let chol_a = Cholesky::factor_plus_diag(
            kernel.gram(x_a.as_ref()).as_ref(),
            |_| noise_a,
            &JitterPolicy::default(),
            "K_AA + σ_A²I",
        )?;
        let alpha_a = chol_a.solve_vec(y_a);
        Ok(Self {
            kernel,
            noise_a,
            x_a,
            y_a: y_a.to_vec(),
            chol_a,
            alpha_a,
        })
    }

    /// P_A with θ_A and σ_A² by ML-II on part A (the one ML-II driver; no grid, no charge).
    pub fn fit_ml2(kernel_init: &Kernel, x_a: Mat<f64>, y_a: Vec<f64>) -> Result<Self> {
        let (gp, _) = fit_ml2(
            kernel_init,
            0.1,
            x_a.clone(),
            y_a.clone(),
            &MlConfig::default(),
        )?;
        Self::new(gp.kernel, gp.noise_variance, x_a, &y_a)
    }

    /// `W = L_A⁻¹ K_A,X` for inputs `x` (N_A × n).
    fn w(&self, x: MatRef<'_, f64>) -> Mat<f64> {
        let mut w = self.kernel.cross(self.x_a.as_ref(), x);
        self.chol_a.solve_lower_in_place(w.as_mut());
        w
    }

    /// `μ_A(x) = k(x, A) C_A⁻¹ y_A` at the rows of `x`.
    pub fn mean(&self, x: MatRef<'_, f64>) -> Vec<f64> {
        let k = self.kernel.cross(x, self.x_a.as_ref());
        linalg::mat_vec(&k, &self.alpha_a)
    }

    /// μ_A and K_A = K_XX − WᵀW on `x` (spec §3.2).
    pub fn on(&self, x: MatRef<'_, f64>) -> PriorOnInputs {
        let w = self.w(x);
        let cov = &self.kernel.gram(x) - w.transpose() * &w;
        PriorOnInputs {
            mean: self.mean(x),
            cov,
        }
    }

    /// Cross-covariance `k_A(x, z) = k(x, z) − W_xᵀ W_z` and the diagonal `k_A(x, x)`.
    fn cross_and_diag(&self, x: MatRef<'_, f64>, z: MatRef<'_, f64>) -> (Mat<f64>, Vec<f64>) {
        let (wx, wz) = (self.w(x), self.w(z));
        let cross = &self.kernel.cross(x, z) - wx.transpose() * &wz;
        let w2 = linalg::col_sq_norms(&wx);
        let diag = self
            .kernel
            .diag(x)
            .iter()
            .zip(&w2)
            .map(|(k, w)| k - w)
            .collect();
        (cross, diag)
    }
}

/// The free posterior parameters `(σ_m², σ_v², s)` of Q (spec §3.2), not charged.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct SplitPosteriorParams {
    /// Mean noise σ_m².
    pub noise_mean: f64,
    /// Covariance noise σ_v².
    pub noise_cov: f64,
    /// Covariance scale s.
    pub scale: f64,
}

impl SplitPosteriorParams {
    /// In ln space `[ln σ_m², ln σ_v², ln s]`.
    pub fn to_ln(&self) -> Vec<f64> {
        vec![self.noise_mean.ln(), self.noise_cov.ln(), self.scale.ln()]
    }

    /// From ln space.
    pub fn from_ln(p: &[f64]) -> Self {
        Self {
            noise_mean: p[0].exp(),
            noise_cov: p[1].exp(),
            scale: p[2].exp(),
        }
    }
}

/// Q on part B at one parameter vector: what the bound and prediction need.
struct QOnB {
    alpha: Vec<f64>,
    beta: Vec<f64>,
    cv_inv: Mat<f64>,
    marginals: Marginals,
    kl: f64,
    params: SplitPosteriorParams,
}

/// `r = y_B − μ_A`.
fn residual(prior_b: &PriorOnInputs, y_b: &[f64]) -> Vec<f64> {
    y_b.iter().zip(&prior_b.mean).map(|(y, m)| y - m).collect()
}

/// Q's marginals on B and `KL(Q‖P_A)` (spec §3.2).
fn q_on_b(prior_b: &PriorOnInputs, y_b: &[f64], p: SplitPosteriorParams) -> Result<QOnB> {
    let n = y_b.len();
    let r = residual(prior_b, y_b);
    let (sm, sv, s) = (p.noise_mean, p.noise_cov, p.scale);
    let cm = Cholesky::factor_plus_diag(
        prior_b.cov.as_ref(),
        |_| sm,
        &JitterPolicy::default(),
        "K_A + σ_m²I",
    )?;
    let cv = Cholesky::factor_plus_diag(
        prior_b.cov.as_ref(),
        |_| sv,
        &JitterPolicy::default(),
        "K_A + σ_v²I",
    )?;
    let alpha = cm.solve_vec(&r);
    let beta = cm.solve_vec(&alpha);
    let cv_inv = cv.inverse();
    // Jitter on C acts as extra noise, consistently (as in PAC-GP).
    let (sm, sv) = (sm + cm.jitter(), sv + cv.jitter());
    let mean: Vec<f64> = (0..n).map(|i| y_b[i] - sm * alpha[i]).collect();
    let var: Vec<f64> = (0..n)
        .map(|i| (s * sv * (1.0 - sv * cv_inv[(i, i)])).max(1e-300))
        .collect();
    let tr: f64 = (0..n).map(|i| cv_inv[(i, i)]).sum();
    let quad = linalg::dot(&alpha, &r) - sm * linalg::dot(&alpha, &alpha);
    let nf = n as f64;
    let kl = 0.5 * (s * sv * tr + quad - nf - nf * s.ln() - nf * sv.ln() + cv.ln_det());
    Ok(QOnB {
        alpha,
        beta,
        cv_inv,
        marginals: Marginals { mean, var },
        kl,
        params: SplitPosteriorParams {
            noise_mean: sm,
            noise_cov: sv,
            scale: s,
        },
    })
}

/// The B-part bound over `[ln σ_m², ln σ_v², ln s]` (spec §3.2), with its gradient.
pub struct SplitBoundObjective<'a> {
    prior_b: &'a PriorOnInputs,
    y_b: &'a [f64],
    loss: RegressionLoss,
    /// The kl bound on B (δ, confidence term, the penalty).
    target: BoundTarget,
}

impl<'a> SplitBoundObjective<'a> {
    /// The bound on B for P_A's mean and covariance on B, the loss, δ, the menu penalty and
    /// the confidence term.
    pub fn new(
        prior_b: &'a PriorOnInputs,
        y_b: &'a [f64],
        loss: RegressionLoss,
        delta: f64,
        penalty: f64,
        term: ConfidenceTerm,
    ) -> Self {
        Self {
            prior_b,
            y_b,
            loss,
            target: BoundTarget {
                delta,
                term,
                kind: BoundKind::Kl,
                penalty,
            },
        }
    }

    /// `(R_{S_B}, KL(Q‖P_A))` at `p`.
    pub fn risk_and_kl(&self, p: &[f64]) -> Result<(f64, f64)> {
        let q = q_on_b(self.prior_b, self.y_b, SplitPosteriorParams::from_ln(p))?;
        let r = crate::loss::gibbs_risk_regression(self.y_b, &q.marginals, &self.loss)?;
        Ok((r, q.kl))
    }
}

impl Objective for SplitBoundObjective<'_> {
    fn dim(&self) -> usize {
        3
    }

    fn value_and_gradient(&self, p: &[f64]) -> Result<(f64, Vec<f64>)> {
        let q = q_on_b(self.prior_b, self.y_b, SplitPosteriorParams::from_ln(p))?;
        let n = self.y_b.len();
        let nf = n as f64;
        let (sm, sv, s) = (q.params.noise_mean, q.params.noise_cov, q.params.scale);
        let (mut risk, mut drm, mut drv, mut drs) = (0.0, 0.0, 0.0, 0.0);
        let cv2_diag = linalg::col_sq_norms(&q.cv_inv);
        for i in 0..n {
            let (m, v) = (q.marginals.mean[i], q.marginals.var[i]);
            let pr = self.loss.point_risk(self.y_b[i], m, v);
            risk += pr.risk / nf;
            // ∂m_i/∂σ_m² = −α_i + σ_m² β_i; ∂v_i/∂σ_v² = s(1 − 2σ_v²[C_v⁻¹]_ii + σ_v⁴[C_v⁻²]_ii);
            // ∂v_i/∂s = v_i/s.
            let ci = q.cv_inv[(i, i)];
            drm += pr.d_mean * (-q.alpha[i] + sm * q.beta[i]) / nf;
            drv += pr.d_var * s * (1.0 - 2.0 * sv * ci + sv * sv * cv2_diag[i]) / nf;
            drs += pr.d_var * v / s / nf;
        }
        let b = self.target.at(risk, q.kl, n);
        let (value, d_q, d_c) = (b.value, b.d_risk, b.d_complexity);
        let tr: f64 = (0..n).map(|i| q.cv_inv[(i, i)]).sum();
        let tr2: f64 = cv2_diag.iter().sum();
        // ∂KL/∂σ_m² = −αᵀα + σ_m² αᵀβ; ∂KL/∂σ_v² = ½[(s + 1) tr C_v⁻¹ − s σ_v² tr C_v⁻² − N/σ_v²];
        // ∂KL/∂s = ½[σ_v² tr C_v⁻¹ − N/s].
        let dkm = -linalg::dot(&q.alpha, &q.alpha) + sm * linalg::dot(&q.alpha, &q.beta);
        let dkv = 0.5 * ((s + 1.0) * tr - s * sv * tr2 - nf / sv);
        let dks = 0.5 * (sv * tr - nf / s);
        let grad = vec![
            sm * (d_q * drm + d_c * dkm / nf),
            sv * (d_q * drv + d_c * dkv / nf),
            s * (d_q * drs + d_c * dks / nf),
        ];
        Ok((value, grad))
    }
}

/// Per-point posterior noises of Q on part B (spec §4.2 carried to the split prior, §3.2):
/// `λ_m,i` in Q's mean, `λ_v,i` in its covariance; free posterior parameters, not charged.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PointNoise {
    /// `λ_m,i`, one per point of B.
    pub mean: Vec<f64>,
    /// `λ_v,i`, one per point of B.
    pub cov: Vec<f64>,
}

impl PointNoise {
    /// Every point at the homoscedastic `(σ_m², σ_v²)` of `params`.
    pub fn uniform(n: usize, params: &SplitPosteriorParams) -> Self {
        Self {
            mean: vec![params.noise_mean; n],
            cov: vec![params.noise_cov; n],
        }
    }

    /// One positive finite noise per point of B for both.
    fn check(&self, n: usize) -> Result<()> {
        for v in [&self.mean, &self.cov] {
            if v.len() != n {
                return Err(Error::ShapeMismatch {
                    what: "per-point noises of the split posterior",
                    expected: format!("{n} values (part B)"),
                    found: format!("{} values", v.len()),
                });
            }
            if let Some(&bad) = v.iter().find(|l| !(l.is_finite() && **l > 0.0)) {
                return Err(Error::InvalidParameter {
                    name: "per-point posterior noise",
                    value: bad,
                    reason: "must be positive and finite",
                });
            }
        }
        Ok(())
    }

    /// `(λ_m, λ_v, s)` for [`PointNoiseEval::new`].
    fn at(&self, scale: f64) -> (Vec<f64>, Vec<f64>, f64) {
        (self.mean.clone(), self.cov.clone(), scale)
    }
}

/// The B-part bound with per-point noises over `[ln λ_m (N_B); ln λ_v (N_B); ln s]` (spec
/// §3.2, §4.2), with its analytic gradient (PAC-GP's per-point-noise gradients with `K → K_A`,
/// `y → y_B − μ_A`, plus `∂/∂s`).
pub struct SplitPointNoiseObjective<'a> {
    prior_b: &'a PriorOnInputs,
    y_b: &'a [f64],
    r: Vec<f64>,
    loss: RegressionLoss,
    /// The kl bound on B (δ, confidence term, the penalty).
    target: BoundTarget,
}

impl<'a> SplitPointNoiseObjective<'a> {
    /// The bound on B for P_A's mean and covariance on B, the loss, δ, the penalty and the
    /// confidence term.
    pub fn new(
        prior_b: &'a PriorOnInputs,
        y_b: &'a [f64],
        loss: RegressionLoss,
        delta: f64,
        penalty: f64,
        term: ConfidenceTerm,
    ) -> Self {
        Self {
            prior_b,
            y_b,
            r: residual(prior_b, y_b),
            loss,
            target: BoundTarget {
                delta,
                term,
                kind: BoundKind::Kl,
                penalty,
            },
        }
    }

    /// Q's terms at `p`.
    fn evaluate(&self, p: &[f64]) -> Result<PointNoiseEval> {
        let n = self.y_b.len();
        let noise = (
            p[..n].iter().map(|l| l.exp()).collect(),
            p[n..2 * n].iter().map(|l| l.exp()).collect(),
            p[2 * n].exp(),
        );
        PointNoiseEval::new(
            &self.prior_b.cov,
            &self.r,
            self.y_b,
            noise,
            Some(&self.loss),
        )
    }

    /// `(R_{S_B}, KL(Q‖P_A))` at `p`.
    pub fn risk_and_kl(&self, p: &[f64]) -> Result<(f64, f64)> {
        let e = self.evaluate(p)?;
        Ok((e.risk, e.kl))
    }

    /// The start at a homoscedastic Q: `[ln σ_m² …; ln σ_v² …; ln s]`.
    pub fn start(&self, params: &SplitPosteriorParams) -> Vec<f64> {
        let n = self.y_b.len();
        let mut x0 = vec![params.noise_mean.ln(); n];
        x0.extend(std::iter::repeat_n(params.noise_cov.ln(), n));
        x0.push(params.scale.ln());
        x0
    }
}

impl Objective for SplitPointNoiseObjective<'_> {
    fn dim(&self) -> usize {
        2 * self.y_b.len() + 1
    }

    fn value_and_gradient(&self, p: &[f64]) -> Result<(f64, Vec<f64>)> {
        let e = self.evaluate(p)?;
        let n = self.y_b.len();
        let b = self.target.at(e.risk, e.kl, n);
        let (value, d_q, d_c) = (b.value, b.d_risk, b.d_complexity);
        let (h, u) = e.adjoints();
        let (d_lm, d_lv, d_s) = e.noise_gradients(d_q / n as f64, d_c / n as f64, &h, &u);
        let mut grad: Vec<f64> = d_lm.iter().zip(&e.lm).map(|(d, l)| l * d).collect();
        grad.extend(d_lv.iter().zip(&e.lv).map(|(d, l)| l * d));
        grad.push(e.scale * d_s);
        Ok((value, grad))
    }
}

/// Settings of [`fit_split_prior`].
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct SplitConfig {
    /// The fraction F of part A (fixed, or the menu).
    pub fraction: SplitFraction,
    /// Seed of the permutation that makes the split.
    pub seed: u64,
    /// ε of the ε-band loss in the **target's own units**.
    pub epsilon: f64,
    /// Confidence δ.
    pub delta: f64,
    /// Confidence constant (the sharp ξ(N_B) by default: nothing here reproduces the paper).
    pub term: ConfidenceTerm,
    /// Fix s = 1 (Q then is the ordinary GP posterior with noise σ_A² on A, σ_m² / σ_v² on B).
    pub unit_scale: bool,
}

impl SplitConfig {
    /// The menu of fractions, seed 0, δ = 0.01, the sharp constant, free s.
    pub fn new(epsilon: f64) -> Self {
        Self {
            fraction: SplitFraction::Menu,
            seed: 0,
            epsilon,
            delta: 0.01,
            term: ConfidenceTerm::Sharp,
            unit_scale: false,
        }
    }
}

/// The posterior Q of spec §3.2: P_A updated with part B under the free parameters.
#[derive(Clone, Debug)]
pub struct SplitPosterior {
    /// The prior P_A (standardised scale).
    pub prior: SplitPrior,
    /// Inputs of part B (standardised).
    pub x_b: Mat<f64>,
    /// Targets of part B (standardised).
    pub y_b: Vec<f64>,
    /// Q's free parameters (with [`Self::point_noise`], only the scale `s` is Q's; the noises
    /// are those of the homoscedastic fit it started from).
    pub params: SplitPosteriorParams,
    /// Per-point noises on B in place of `σ_m²`, `σ_v²` (spec §4.2 on the split prior).
    pub point_noise: Option<PointNoise>,
    /// P_A's mean and covariance on B.
    prior_b: PriorOnInputs,
    /// Q's mean weights on B, `α = C_m⁻¹(y_B − μ_A)`.
    alpha: Vec<f64>,
    /// `KL(Q‖P_A)`.
    kl: f64,
    /// Q's marginals on B.
    marginals_b: Marginals,
}

impl SplitPosterior {
    /// Q for P_A, part B and the free parameters.
    pub fn new(
        prior: SplitPrior,
        x_b: Mat<f64>,
        y_b: Vec<f64>,
        params: SplitPosteriorParams,
    ) -> Result<Self> {
        crate::regression::exact::check_regression_inputs(x_b.as_ref(), &y_b)?;
        let prior_b = prior.on(x_b.as_ref());
        let q = q_on_b(&prior_b, &y_b, params)?;
        Ok(Self {
            prior,
            x_b,
            y_b,
            params: q.params,
            point_noise: None,
            prior_b,
            alpha: q.alpha,
            kl: q.kl,
            marginals_b: q.marginals,
        })
    }

    /// Q with per-point noises `λ_m,i`, `λ_v,i` on B and scale `s = params.scale`:
    /// `q(f_B) = N(μ_A + K_A C_m⁻¹ r, s(K_A − K_A C_v⁻¹ K_A))`, `C = K_A + Λ` (spec §3.2, §4.2).
    pub fn with_point_noise(
        prior: SplitPrior,
        x_b: Mat<f64>,
        y_b: Vec<f64>,
        params: SplitPosteriorParams,
        noise: PointNoise,
    ) -> Result<Self> {
        crate::regression::exact::check_regression_inputs(x_b.as_ref(), &y_b)?;
        noise.check(y_b.len())?;
        let prior_b = prior.on(x_b.as_ref());
        let r = residual(&prior_b, &y_b);
        let q = PointNoiseEval::new(&prior_b.cov, &r, &y_b, noise.at(params.scale), None)?;
        Ok(Self {
            prior,
            x_b,
            y_b,
            params,
            point_noise: Some(noise),
            prior_b,
            alpha: q.alpha,
            kl: q.kl,
            marginals_b: q.marginals,
        })
    }

    /// `KL(Q‖P_A)` in nats (closed form, spec §3.2).
    pub fn kl(&self) -> f64 {
        self.kl
    }

    /// Q's marginals on part B (the certificate's sample).
    pub fn marginals_on_b(&self) -> &Marginals {
        &self.marginals_b
    }

    /// Q's latent marginals at standardised inputs `x` (spec §3.2):
    /// `μ* = μ_A(x*) + k_A(x*, B) α`,
    /// `v* = k_A(x*,x*) − (1 − s) k_A(x*,B) K_A⁻¹ k_A(B,x*) − s k_A(x*,B) C_v⁻¹ k_A(B,x*)`.
    pub fn predict(&self, x: MatRef<'_, f64>) -> Result<Marginals> {
        if x.ncols() != self.x_b.ncols() {
            return Err(Error::ShapeMismatch {
                what: "prediction inputs",
                expected: format!("{} columns", self.x_b.ncols()),
                found: format!("{} columns", x.ncols()),
            });
        }
        crate::data::check_finite(x, "prediction inputs")?;
        let (kxb, kxx) = self.prior.cross_and_diag(x, self.x_b.as_ref());
        let mu_a = self.prior.mean(x);
        let weighted = linalg::mat_vec(&kxb, &self.alpha);
        let mean: Vec<f64> = mu_a.iter().zip(&weighted).map(|(m, w)| m + w).collect();
        let s = self.params.scale;
        let reduce = |chol: &Cholesky| {
            let mut a = kxb.transpose().to_owned();
            chol.solve_lower_in_place(a.as_mut());
            linalg::col_sq_norms(&a)
        };
        let cv = match &self.point_noise {
            Some(pn) => Cholesky::factor_plus_diag(
                self.prior_b.cov.as_ref(),
                |i| pn.cov[i],
                &JitterPolicy::none(),
                "K_A + Λ_v",
            )?,
            None => Cholesky::factor_plus_diag(
                self.prior_b.cov.as_ref(),
                |_| self.params.noise_cov,
                &JitterPolicy::default(),
                "K_A + σ_v²I",
            )?,
        };
        let via_cv = reduce(&cv);
        let via_ka = if s != 1.0 {
            let ka = Cholesky::factor(self.prior_b.cov.as_ref(), &JitterPolicy::default(), "K_A")?;
            reduce(&ka)
        } else {
            vec![0.0; x.nrows()]
        };
        let var = (0..x.nrows())
            .map(|i| (kxx[i] - (1.0 - s) * via_ka[i] - s * via_cv[i]).max(0.0))
            .collect();
        Ok(Marginals { mean, var })
    }
}

impl SplitPrior {
    /// P_A as the shared posterior: the exact GP posterior of part A (site precisions
    /// `1/σ_A²`, mean weights `(K_AA + σ_A²I)⁻¹y_A`), to be the prior of Q.
    pub fn posterior(&self) -> Result<GaussianPosterior> {
        let n = self.y_a.len();
        let sqrt_pi = vec![1.0 / self.noise_a.sqrt(); n];
        let k = self.kernel.gram(self.x_a.as_ref());
        let chol_b = Cholesky::factor_filled(
            n,
            linalg::fill_site_b(&k, &sqrt_pi, 0.0),
            None,
            &JitterPolicy::default(),
            "I + K_AA/σ_A² of the split prior",
        )?;
        Ok(GaussianPosterior::sites(
            self.kernel.clone(),
            self.x_a.clone(),
            self.alpha_a.clone(),
            sqrt_pi,
            chol_b,
        ))
    }
}

impl SplitPosterior {
    /// Q as the shared [`GaussianPosterior`]: P_A (the posterior of part A) updated on part
    /// B with mean weights `α = C_m⁻¹(y_B − μ_A)` and covariance `s(K_A − K_A C_v⁻¹ K_A)` —
    /// site precisions `1/σ_v²` (or `1/λ_v,i`) when s = 1, the dense form otherwise. Its
    /// `KL(Q‖P_A)` and marginals are the shared posterior's (the certificate's).
    pub fn posterior(&self) -> Result<GaussianPosterior> {
        let prior = crate::posterior::Prior::conditioned(self.prior.posterior()?);
        let nb = self.x_b.nrows();
        let on_b_cov = match &self.point_noise {
            Some(pn) => pn.cov.clone(),
            None => vec![self.params.noise_cov; nb],
        };
        let ka = &self.prior_b.cov;
        if self.params.scale == 1.0 {
            let sqrt_pi: Vec<f64> = on_b_cov.iter().map(|v| 1.0 / v.sqrt()).collect();
            let chol_b = Cholesky::factor_filled(
                nb,
                linalg::fill_site_b(ka, &sqrt_pi, 0.0),
                None,
                &JitterPolicy::default(),
                "I + Π½K_AΠ½ of the split-prior posterior",
            )?;
            return Ok(GaussianPosterior::sites(
                prior,
                self.x_b.clone(),
                self.alpha.clone(),
                sqrt_pi,
                chol_b,
            ));
        }
        // Σ = s(K_A − K_A C_v⁻¹ K_A) = s·K_A (K_A + Λ_v)⁻¹ Λ_v.
        let cv = Cholesky::factor_plus_diag(
            ka.as_ref(),
            |i| on_b_cov[i],
            &JitterPolicy::none(),
            "K_A + Λ_v",
        )?;
        let mut w = ka.clone();
        cv.solve_lower_in_place(w.as_mut());
        let mut sigma = ka - w.transpose() * &w;
        for j in 0..nb {
            for i in 0..nb {
                sigma[(i, j)] *= self.params.scale;
            }
            for i in 0..j {
                sigma[(i, j)] = sigma[(j, i)];
            }
        }
        let chol_ka = Cholesky::factor(ka.as_ref(), &JitterPolicy::default(), "K_A")?;
        let chol_sigma = Cholesky::factor(sigma.as_ref(), &JitterPolicy::default(), "Σ of Q")?;
        Ok(GaussianPosterior::dense(
            prior,
            self.x_b.clone(),
            self.alpha.clone(),
            chol_ka,
            chol_sigma,
        ))
    }
}

/// What a model file keeps to reproduce a split-prior certificate from the training sample:
/// the split (fraction, menu size, seed), θ_A and σ_A², Q's free parameters and the
/// confidence term. The scalers are the model's own (fitted on A).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SplitRecord {
    /// Fraction F of part A.
    pub fraction: f64,
    /// Number of fractions the bound chose among (1 = fixed; its `ln` is charged).
    pub menu: usize,
    /// Seed of the permutation (applied to the rows' canonical order).
    pub seed: u64,
    /// The prior's kernel with θ_A.
    pub kernel_a: Kernel,
    /// σ_A².
    pub noise_a: f64,
    /// Q's free parameters.
    pub params: SplitPosteriorParams,
    /// Q's per-point noises on B, if it has them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub point_noise: Option<PointNoise>,
    /// Confidence constant the certificate uses.
    pub term: ConfidenceTerm,
}

impl SplitRecord {
    /// The record of a fit that chose among `menu` fractions with confidence term `term`.
    pub fn of(fit: &SplitFit, menu: usize, term: ConfidenceTerm) -> Self {
        Self {
            fraction: fit.fraction,
            menu,
            seed: fit.seed,
            kernel_a: fit.posterior.prior.kernel.clone(),
            noise_a: fit.posterior.prior.noise_a,
            params: fit.posterior.params,
            point_noise: fit.posterior.point_noise.clone(),
            term,
        }
    }

    /// The penalty terms of the certificate (the prior's description, the menu's `ln k`).
    pub fn choices(&self, n_a: usize, n: usize) -> Vec<PenaltyTerm> {
        let mut choices = vec![PenaltyTerm {
            what: format!(
                "prior: GP posterior of part A ({n_a} of {n} points, F = {}, seed {}), θ and σ_A² by ML-II on A; bound on part B",
                self.fraction, self.seed
            ),
            nats: 0.0,
        }];
        if self.menu > 1 {
            choices.push(PenaltyTerm::candidates(self.menu, "split fraction F"));
        }
        choices
    }

    /// Q from a prior P_A refitted on part A of `parts` and the record's free parameters on
    /// part B (the caller checks P_A against the record's θ_A and σ_A²).
    pub fn posterior_on(
        &self,
        prior: SplitPrior,
        parts: &RegressionParts,
    ) -> Result<SplitPosterior> {
        let (x_b, y_b) = (parts.x_b.clone(), parts.y_b.clone());
        match &self.point_noise {
            Some(pn) => SplitPosterior::with_point_noise(prior, x_b, y_b, self.params, pn.clone()),
            None => SplitPosterior::new(prior, x_b, y_b, self.params),
        }
    }
}

/// A model trained with the data-dependent prior: the split, the scalers fitted on A, Q and
/// its certificate on B.
#[derive(Clone, Debug)]
pub struct SplitFit {
    /// The fraction F used.
    pub fraction: f64,
    /// Seed of the split's permutation.
    pub seed: u64,
    /// Rows of part A (of the training sample as given).
    pub a: Vec<usize>,
    /// Rows of part B.
    pub b: Vec<usize>,
    /// Input scaler fitted on A.
    pub x_scaler: Standardizer,
    /// Target scaler fitted on A.
    pub y_scaler: TargetScaler,
    /// The posterior Q (with P_A inside).
    pub posterior: SplitPosterior,
    /// The certificate on part B (`n = N_B`).
    pub certificate: Certificate,
}

impl SplitFit {
    /// Number of points the certificate is evaluated on, N_B.
    pub fn n_b(&self) -> usize {
        self.b.len()
    }
}

/// Fit the data-dependent prior model for one fraction on raw (unscaled) data, `menu` being
/// the number of fractions the bound chooses among (its `ln menu` is charged); with
/// `catoni_grid`, Catoni's bound at the best λ of [`CATONI_GRID`] (`ln 5` more) instead of
/// `cfg.term`.
fn fit_fraction(
    train: &Dataset,
    kernel_init: &Kernel,
    fraction: f64,
    menu: usize,
    cfg: &SplitConfig,
    catoni_grid: bool,
) -> Result<SplitFit> {
    let RegressionParts {
        a,
        b,
        x_scaler,
        y_scaler,
        x_a,
        y_a,
        x_b,
        y_b,
    } = RegressionParts::of(train, fraction, cfg.seed)?;
    let loss = RegressionLoss::new_epsilon_band(y_scaler.scale_length(cfg.epsilon))?;
    let prior = SplitPrior::fit_ml2(kernel_init, x_a, y_a)?;
    let prior_b = prior.on(x_b.as_ref());
    let record = SplitRecord {
        fraction,
        menu,
        seed: cfg.seed,
        kernel_a: prior.kernel.clone(),
        noise_a: prior.noise_a,
        params: SplitPosteriorParams {
            noise_mean: 1.0,
            noise_cov: 1.0,
            scale: 1.0,
        },
        point_noise: None,
        term: cfg.term,
    };
    let mut choices = record.choices(a.len(), train.n());
    let terms = catoni_menu(catoni_grid, cfg.term);
    choices.push(terms.price());
    let spec_of = |term| CertificateSpec::new(cfg.delta, term, choices.clone());
    let obj_of = |term| {
        let penalty = spec_of(term).penalty();
        SplitBoundObjective::new(&prior_b, &y_b, loss, cfg.delta, penalty, term)
    };
    // The middle term from two starts; with the grid, every λ scored there, the best refined.
    let mut term = terms.items[terms.len() / 2];
    let two_starts = [prior.noise_a.ln(), 0.0].map(|l| [l, l, 0.0]);
    let mut params = minimise_split_bound(&obj_of(term), &two_starts, cfg.unit_scale)?;
    if terms.len() > 1 {
        let ln = params.to_ln();
        term = terms
            .by_bound(|t, _| Ok((*t, obj_of(*t).value(&ln)?)))?
            .value;
        params = minimise_split_bound(&obj_of(term), &[[ln[0], ln[1], ln[2]]], cfg.unit_scale)?;
    }
    let spec = spec_of(term);
    let posterior = SplitPosterior::new(prior, x_b, y_b, params)?;
    let certificate = Certificate::of_posterior(
        &posterior.posterior()?,
        posterior.x_b.as_ref(),
        &posterior.y_b,
        &GibbsLoss::Regression(loss),
        &spec,
    )?;
    Ok(SplitFit {
        fraction,
        seed: cfg.seed,
        a,
        b,
        x_scaler,
        y_scaler,
        posterior,
        certificate,
    })
}

/// Minimise the B-bound over Q's free parameters `[ln σ_m², ln σ_v², ln s]` from each start
/// (σ² = σ_A² and σ² = 1, s = 1 for a fresh fit); the lowest wins.
fn minimise_split_bound(
    obj: &SplitBoundObjective<'_>,
    starts: &[[f64; 3]],
    unit_scale: bool,
) -> Result<SplitPosteriorParams> {
    let ln_s = if unit_scale {
        (0.0, 0.0)
    } else {
        LN_SCALE_BOUNDS
    };
    let bounds = vec![boxes::LN_NOISE, boxes::LN_NOISE, ln_s];
    let lbfgs = LbfgsConfig {
        max_iter: 300,
        ..Default::default()
    };
    let mut best: Option<(f64, Vec<f64>)> = None;
    for x0 in starts {
        let m = optim::drive(obj, x0, bounds.clone(), &lbfgs, &Restarts::default(), None)?;
        if best.as_ref().is_none_or(|(v, _)| m.report.value < *v) {
            best = Some((m.report.value, m.params));
        }
    }
    let (_, p) = best.ok_or(Error::Empty {
        what: "starts of the split-prior bound",
    })?;
    Ok(SplitPosteriorParams::from_ln(&p))
}

/// Train with the data-dependent prior (spec §3): for each candidate fraction, split with the
/// seeded permutation, fit scalers and θ_A, σ_A² on A, minimise the bound on B over
/// `(σ_m², σ_v², s)`; keep the lowest certified bound (the menu's `ln 3` is in every
/// candidate's certificate).
pub fn fit_split_prior(
    train: &Dataset,
    kernel_init: &Kernel,
    cfg: &SplitConfig,
) -> Result<SplitFit> {
    fit_fractions(train, kernel_init, cfg, false, false)
}

/// [`fit_split_prior`] certified with Catoni's bound (spec §1.2, §3.4) at the best λ of
/// [`CATONI_GRID`], a grid fixed in advance charged `ln 5` on top of the fraction menu's
/// `ln 3` (`cfg.term` is unused: Catoni's confidence term is `ln(1/δ)`).
pub fn fit_split_prior_catoni(
    train: &Dataset,
    kernel_init: &Kernel,
    cfg: &SplitConfig,
) -> Result<SplitFit> {
    fit_fractions(train, kernel_init, cfg, true, false)
}

/// [`fit_split_prior`] (with `catoni_grid`, [`fit_split_prior_catoni`]) with per-point
/// posterior noises on B (spec §4.2 on the split prior, free, not charged): each fraction's
/// homoscedastic fit, then [`free_split_point_noise`] from its optimum; the lowest
/// certificate wins.
pub fn fit_split_prior_point_noise(
    train: &Dataset,
    kernel_init: &Kernel,
    cfg: &SplitConfig,
    catoni_grid: bool,
) -> Result<SplitFit> {
    fit_fractions(train, kernel_init, cfg, catoni_grid, true)
}

/// From a homoscedastic split-prior fit (`base`, made with `cfg`): minimise the bound on B
/// over `[ln λ_m; ln λ_v; ln s]` from its optimum at its confidence term and penalty; with
/// `catoni_grid` the grid's best λ is re-chosen at the result (the grid is already charged).
/// Never certifies above `base` (its Q is in the family; `base` is returned if it is lower).
pub fn free_split_point_noise(
    base: SplitFit,
    cfg: &SplitConfig,
    catoni_grid: bool,
) -> Result<SplitFit> {
    let post = &base.posterior;
    let c = &base.certificate;
    let loss = RegressionLoss::new_epsilon_band(base.y_scaler.scale_length(cfg.epsilon))?;
    let obj_of = |term| {
        SplitPointNoiseObjective::new(&post.prior_b, &post.y_b, loss, cfg.delta, c.penalty, term)
    };
    let n = post.y_b.len();
    let ln_s = if cfg.unit_scale {
        (0.0, 0.0)
    } else {
        LN_SCALE_BOUNDS
    };
    let mut bounds = vec![boxes::LN_NOISE; 2 * n];
    bounds.push(ln_s);
    let lbfgs = LbfgsConfig {
        max_iter: 300,
        ..Default::default()
    };
    let obj = obj_of(c.confidence_term);
    let x0 = obj.start(&post.params);
    let m = optim::drive(&obj, &x0, bounds, &lbfgs, &Restarts::default(), None)?;
    let mut term = c.confidence_term;
    if catoni_grid {
        // The grid's price is already in `c.penalty`.
        let grid = catoni_menu(true, term);
        term = grid
            .by_bound(|t, _| Ok((*t, obj_of(*t).value(&m.params)?)))?
            .value;
    }
    let p = &m.params;
    let noise = PointNoise {
        mean: p[..n].iter().map(|l| l.exp()).collect(),
        cov: p[n..2 * n].iter().map(|l| l.exp()).collect(),
    };
    let params = SplitPosteriorParams {
        scale: p[2 * n].exp(),
        ..post.params
    };
    let posterior = SplitPosterior::with_point_noise(
        post.prior.clone(),
        post.x_b.clone(),
        post.y_b.clone(),
        params,
        noise,
    )?;
    let spec = CertificateSpec::new(cfg.delta, term, c.penalty_terms.clone());
    let certificate = Certificate::of_posterior(
        &posterior.posterior()?,
        posterior.x_b.as_ref(),
        &posterior.y_b,
        &GibbsLoss::Regression(loss),
        &spec,
    )?;
    if certificate.bound > base.certificate.bound {
        return Ok(base);
    }
    Ok(SplitFit {
        posterior,
        certificate,
        ..base
    })
}

/// Every candidate fraction (with per-point noises freed if `point_noise`); the lowest
/// certificate wins.
fn fit_fractions(
    train: &Dataset,
    kernel_init: &Kernel,
    cfg: &SplitConfig,
    catoni_grid: bool,
    point_noise: bool,
) -> Result<SplitFit> {
    let menu = cfg.fraction.menu()?;
    let chosen = menu.by_bound(|&f, _| {
        let mut fit = fit_fraction(train, kernel_init, f, menu.len(), cfg, catoni_grid)?;
        if point_noise {
            fit = free_split_point_noise(fit, cfg, catoni_grid)?;
        }
        let bound = fit.certificate.bound;
        Ok((fit, bound))
    })?;
    Ok(chosen.value)
}

/// `KL(N(m, S) ‖ N(μ, K))` of two dense Gaussians by their Cholesky factors (for tests and
/// checks of the closed forms): `½[tr(K⁻¹S) + (m−μ)ᵀK⁻¹(m−μ) − n + ln det K − ln det S]`.
pub fn dense_gaussian_kl(m: &[f64], s: &Mat<f64>, mu: &[f64], k: &Mat<f64>) -> Result<f64> {
    let lk = Cholesky::factor(k.as_ref(), &JitterPolicy::none(), "K of a dense KL")?;
    let ls = Cholesky::factor(s.as_ref(), &JitterPolicy::none(), "S of a dense KL")?;
    let d: Vec<f64> = m.iter().zip(mu).map(|(a, b)| a - b).collect();
    let kd = lk.solve_vec(&d);
    let mut v = ls.l().to_owned();
    lk.solve_lower_in_place(v.as_mut());
    let tr: f64 = linalg::col_sq_norms(&v).iter().sum();
    Ok(0.5 * (tr + linalg::dot(&d, &kd) - m.len() as f64 + lk.ln_det() - ls.ln_det()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bounds::{catoni_bound, complexity};
    use crate::special::kl_inverse;

    fn toy(n: usize) -> Dataset {
        let x = Mat::from_fn(n, 1, |i, _| ((i * 37) % n) as f64 / n as f64 * 6.0 - 3.0);
        let y = (0..n)
            .map(|i| x[(i, 0)].sin() + 0.2 * (((i * 13) % 7) as f64 - 3.0) / 3.0)
            .collect();
        Dataset::new(x, y).unwrap()
    }

    /// The Catoni lever's certificate is Catoni's closed form at a λ of the grid, with the
    /// menu's `ln 3` and the grid's `ln 5` charged and `ln(1/δ)` as the confidence term; it is
    /// never below `kl⁻¹` of the same complexity (the λ-optimum, spec §1.2).
    #[test]
    fn catoni_split_certificate_is_the_closed_form_at_a_grid_lambda() {
        let data = toy(80);
        let cfg = SplitConfig::new(0.3);
        let fit = fit_split_prior_catoni(&data, &Kernel::se_iso(1.0, 1.0), &cfg).unwrap();
        let c = &fit.certificate;
        let lambda = c.confidence_term.catoni_lambda().expect("Catoni's term");
        assert!(CATONI_GRID.contains(&lambda));
        assert!((c.penalty - 15f64.ln()).abs() < 1e-12, "{}", c.penalty);
        assert_eq!(c.n, fit.n_b());
        let cx = complexity(c.kl, c.n, 0.01, c.penalty, c.confidence_term);
        assert!((cx - (c.kl + 15f64.ln() + 100f64.ln()) / c.n as f64).abs() < 1e-14);
        assert!((c.bound - catoni_bound(c.empirical_risk, cx, lambda)).abs() < 1e-14);
        assert!(c.bound >= kl_inverse(c.empirical_risk, cx) - 1e-12);
        assert!(c.bound < 1.0);
        // Q's own marginals on B give the certificate's risk.
        let l = RegressionLoss::new_epsilon_band(fit.y_scaler.scale_length(0.3)).unwrap();
        let m = fit.posterior.predict(fit.posterior.x_b.as_ref()).unwrap();
        let r = crate::loss::gibbs_risk_regression(&fit.posterior.y_b, &m, &l).unwrap();
        assert!((r - c.empirical_risk).abs() < 1e-9);
    }
}
