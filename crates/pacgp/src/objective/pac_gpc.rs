//! PAC-GPC: a GP classifier trained by its PAC-Bayes bound (issue 15 item 4; beyond seed 004,
//! which names it as future work). The bound `kl⁻¹(R_S(Q), (KL(Q‖P) + penalty + conf)/N)` on the
//! Gibbs 0-1 error (docs/math.md §7.1) is minimised over the posterior's free parameters and,
//! optionally, the kernel's θ (snapped onto the PAC grid afterwards, penalty `T·ln L`).
//!
//! The posterior family is the site form on the sample's latent values (docs/math.md §7.3–7.4)
//! against a Gaussian prior `N(m₀, K₀)` on them:
//!
//! `q(f) = N(m₀ + K₀α, Σ)`, `Σ = (K₀⁻¹ + Π)⁻¹`, `Π = diag(π)`,
//!
//! parametrised by the mean weights α and `ln π`. At fixed Π this is the family `N(Σν̃, Σ)` of
//! free site means and precisions (`ν̃ = α + Π(K₀α)`, a bijection), so nothing is lost; α keeps
//! the mean linear in the parameters. With `B = I + Π½K₀Π½` (Cholesky `L`),
//!
//! `KL(q‖N(m₀,K₀)) = ½[ln det B + tr B⁻¹ + αᵀK₀α − N]` (docs/math.md §7.4),
//!
//! marginals `μ = m₀ + K₀α`, `v_i = [K₀ − VᵀV]_ii` with `V = L⁻¹Π½K₀`, and Gibbs errors
//! `e_i = Φ(−y_i(μ_i + b)/√(λ⁻² + v_i))` (λ⁻² = 0 for the noise-free latent classifier).
//!
//! Gradients (derived here; checked against central differences in the tests): with
//! `w_q = ∂B/∂R_S / N`, `w_c = ∂B/∂C / N`, per-point `g_μ = ∂e/∂μ`, `g_v = ∂e/∂v`,
//! - `∂/∂α = K₀(w_q g_μ + w_c α)`;
//! - `∂/∂π_i = Σ_j Σ_ij² (½w_c π_j − w_q g_v,j)` (from `∂Σ/∂π_i = −Σe_ie_iᵀΣ` and
//!   `∂KL/∂π_i = ½(ΣΠΣ)_ii`);
//! - `∂/∂K₀ = G = w_c·½(R − DA²D + ααᵀ) + w_q[½(g_μαᵀ + αg_μᵀ) + P diag(g_v) Pᵀ]` with
//!   `D = Π½`, `A = B⁻¹`, `R = DAD`, `P = I − RK₀` (`∂Σ = Pᵀ ∂K₀ P`, `∂ln det B = tr(R ∂K₀)`,
//!   `∂tr B⁻¹ = −tr(DA²D ∂K₀)`), contracted with `∂K/∂θ` when `K₀ = K_θ(X, X)`, `m₀ = 0`.
//!
//! Cost per evaluation: a Cholesky and a few N×N products, `O(N³)`.

use faer::{Mat, MatRef};
use serde::{Deserialize, Serialize};

use crate::bounds::{BoundKind, BoundTarget, ConfidenceTerm, HyperGrid};
use crate::certificate::{Certificate, CertificateSpec, GibbsClassifier, GibbsLoss, PenaltyTerm};
use crate::error::{Error, Result};
use crate::inference::laplace::{laplace, LaplaceConfig};
use crate::inference::{check_classification, ClassifierFit};
use crate::kernel::Kernel;
use crate::likelihood::Likelihood;
use crate::linalg::{self, Cholesky, JitterPolicy};
use crate::loss::gibbs_error_point;
use crate::optim::{self, boxes, GridSnap, LbfgsConfig, Objective, OptimReport, Restarts};
use crate::posterior::{Covariance, GaussianPosterior, Marginals, Prior};
use crate::select::Menu;
use crate::special::normal_pdf;

/// Box for the site log-precisions `ln π_i`: from "no information" (`π = 1.5e-8`) to a site
/// that pins the latent value (`π = 1.2e6`); the floor also makes Laplace's `W ≈ 0` finite.
pub const LN_SITE_PRECISION: (f64, f64) = (-18.0, 14.0);

/// A Gaussian prior `N(m₀, K₀)` on the sample's latent values: `(0, K_θ(X, X))` for PAC-GPC,
/// `(μ_A(X_B), K_A)` for the data-dependent prior of a split.
#[derive(Clone, Debug)]
pub struct LatentPrior {
    /// Prior mean `m₀`.
    pub mean: Vec<f64>,
    /// Prior covariance `K₀` (symmetric positive definite).
    pub cov: Mat<f64>,
    /// `η`, a bound on the round-off in `K₀`: the objective charges `½η‖α‖²` on top of the
    /// KL (as if `K₀` were `K₀ + ηI`), so the optimiser cannot buy KL in directions where
    /// the computed `K₀` is numerically singular or indefinite (huge α for a negligible mean).
    pub round_off: f64,
}

/// `η` relative to the largest prior variance the covariance was computed from.
pub const ROUND_OFF: f64 = 1e-8;

impl LatentPrior {
    /// The zero-mean GP prior `N(0, K_θ(X, X))` of a kernel at the rows of `x`.
    pub fn of_kernel(kernel: &Kernel, x: MatRef<'_, f64>) -> Self {
        Self::of(&Prior::Gp(kernel.clone()), x)
    }

    /// A prior's mean and covariance at the rows of `x` (inputs of the prior's kernel), with
    /// the round-off of a covariance computed from its kernel.
    pub fn of(prior: &Prior, x: MatRef<'_, f64>) -> Self {
        let cov = prior.gram_at(x);
        let scale = match prior {
            Prior::Gp(_) => (0..cov.nrows()).map(|i| cov[(i, i)]).fold(0.0, f64::max),
            // A conditioned covariance is a difference of matrices of the kernel's scale.
            Prior::Conditioned(_) => prior.variance_scale(x),
        };
        Self {
            mean: prior.mean_at(x),
            cov,
            round_off: ROUND_OFF * scale,
        }
    }

    /// Number of latent values.
    pub fn len(&self) -> usize {
        self.mean.len()
    }

    /// Whether the prior has no latent values.
    pub fn is_empty(&self) -> bool {
        self.mean.is_empty()
    }
}

/// The free parameters of a site-form posterior: mean weights α and site log-precisions.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SiteParams {
    /// Mean weights: `μ = m₀ + K₀α`.
    pub alpha: Vec<f64>,
    /// `ln π_i`.
    pub ln_pi: Vec<f64>,
}

impl SiteParams {
    /// The sites of a site-form posterior (Laplace, EP) over its basis, `ln π` clamped into
    /// [`LN_SITE_PRECISION`] (Laplace's `W` underflows to 0 on confident points).
    pub fn of_posterior(post: &GaussianPosterior) -> Result<Self> {
        let Covariance::Sites { sqrt_pi, .. } = &post.cov else {
            return Err(Error::Unsupported(
                "PAC-GPC warm-starts from a site-form posterior (Laplace or EP)".into(),
            ));
        };
        Ok(Self {
            alpha: post.alpha.clone(),
            ln_pi: sqrt_pi
                .iter()
                .map(|s| (2.0 * s.max(1e-300).ln()).clamp(LN_SITE_PRECISION.0, LN_SITE_PRECISION.1))
                .collect(),
        })
    }

    /// `[α; ln π]`.
    pub fn stacked(&self) -> Vec<f64> {
        self.alpha.iter().chain(&self.ln_pi).copied().collect()
    }

    /// Sites from `[α; ln π]`.
    pub fn from_stacked(p: &[f64]) -> Self {
        let n = p.len() / 2;
        Self {
            alpha: p[..n].to_vec(),
            ln_pi: p[n..].to_vec(),
        }
    }

    /// `√π_i`.
    pub fn sqrt_pi(&self) -> Vec<f64> {
        self.ln_pi.iter().map(|l| (0.5 * l).exp()).collect()
    }
}

/// The site-form posterior `q` against a latent prior, evaluated on the sample.
pub struct SiteEvaluation {
    /// `√π`.
    pub sqrt_pi: Vec<f64>,
    /// Cholesky of `B = I + Π½K₀Π½`.
    pub chol_b: Cholesky,
    /// `V = L⁻¹Π½K₀`.
    v: Mat<f64>,
    /// Marginals of `q` on the sample.
    pub marginals: Marginals,
    /// `KL(q‖N(m₀, K₀))`.
    pub kl: f64,
}

impl SiteEvaluation {
    /// Factor `B`, form the marginals and the KL (module doc).
    pub fn new(prior: &LatentPrior, sites: &SiteParams) -> Result<Self> {
        let n = prior.len();
        if sites.alpha.len() != n || sites.ln_pi.len() != n || prior.cov.nrows() != n {
            return Err(Error::ShapeMismatch {
                what: "PAC-GPC sites",
                expected: format!("{n} mean weights and precisions"),
                found: format!("{} and {}", sites.alpha.len(), sites.ln_pi.len()),
            });
        }
        let k0 = &prior.cov;
        let sqrt_pi = sites.sqrt_pi();
        let chol_b = Cholesky::factor_filled(
            n,
            linalg::fill_site_b(k0, &sqrt_pi, 0.0),
            None,
            &JitterPolicy::default(),
            "I + Π½K₀Π½ of PAC-GPC",
        )?;
        let mut v = k0.clone();
        for j in 0..n {
            for i in 0..n {
                v[(i, j)] *= sqrt_pi[i];
            }
        }
        chol_b.solve_lower_in_place(v.as_mut());
        let reduction = linalg::col_sq_norms(&v);
        let k_alpha = linalg::mat_vec(k0, &sites.alpha);
        let mean: Vec<f64> = prior
            .mean
            .iter()
            .zip(&k_alpha)
            .map(|(m, k)| m + k)
            .collect();
        let var = (0..n)
            .map(|i| (k0[(i, i)] - reduction[i]).max(0.0))
            .collect();
        // docs/math.md §7.4 with K → K₀ and β → α: ½[ln det B + tr B⁻¹ + αᵀK₀α − N].
        let kl = 0.5
            * (chol_b.ln_det() + chol_b.inverse_trace() + linalg::dot(&sites.alpha, &k_alpha)
                - n as f64);
        Ok(Self {
            sqrt_pi,
            chol_b,
            v,
            marginals: Marginals { mean, var },
            kl,
        })
    }

    /// The posterior covariance `Σ = K₀ − VᵀV` on the sample.
    fn sigma(&self, k0: &Mat<f64>) -> Mat<f64> {
        let mut s = k0 - self.v.transpose() * &self.v;
        let n = s.nrows();
        for j in 0..n {
            for i in 0..j {
                s[(i, j)] = s[(j, i)];
            }
        }
        s
    }
}

/// Per-point Gibbs error and its derivatives `(e, ∂e/∂μ, ∂e/∂v)` (docs/math.md §7.1).
fn point_error(y: f64, mu: f64, v: f64, c: &GibbsClassifier) -> (f64, f64, f64) {
    let e = gibbs_error_point(y, mu, v, c.bias, c.noise_slope);
    let s2 = c.noise_slope.map_or(0.0, |l| 1.0 / (l * l)) + v;
    if s2 <= 0.0 {
        return (e, 0.0, 0.0);
    }
    let s = s2.sqrt();
    let u = -y * (mu + c.bias) / s;
    let phi = normal_pdf(u);
    (e, -y * phi / s, -phi * u / (2.0 * s2))
}

/// Risk, KL and bound at one parameter vector.
#[derive(Clone, Debug, PartialEq)]
pub struct PacGpcTerms {
    /// Empirical Gibbs error on the sample.
    pub empirical_risk: f64,
    /// `KL(q‖prior)`.
    pub kl: f64,
    /// The bound.
    pub bound: f64,
}

/// Where the prior comes from: a kernel whose θ is optimised, or a fixed latent prior.
enum PriorSource<'a> {
    Kernel { kernel: Kernel, x: MatRef<'a, f64> },
    Fixed(LatentPrior),
}

/// The PAC-GPC objective: the bound as a function of `[θ…; α; ln π]` (θ only when the prior
/// is a kernel whose hyperparameters are free).
pub struct PacGpcObjective<'a> {
    prior: PriorSource<'a>,
    y: &'a [f64],
    classifier: GibbsClassifier,
    bound: BoundTarget,
    /// `η` of [`LatentPrior::round_off`], fixed at construction.
    round_off: f64,
}

impl<'a> PacGpcObjective<'a> {
    /// The bound over `[θ; α; ln π]` for the zero-mean GP prior of `kernel` on `x`.
    pub fn with_kernel(
        kernel: &Kernel,
        x: MatRef<'a, f64>,
        y: &'a [f64],
        classifier: GibbsClassifier,
        bound: BoundTarget,
    ) -> Result<Self> {
        kernel.check_input_dim(x.ncols())?;
        check_classification(x, y, &Likelihood::probit())?;
        let round_off = ROUND_OFF * kernel.diag(x).into_iter().fold(0.0, f64::max);
        Self::checked(
            PriorSource::Kernel {
                kernel: kernel.clone(),
                x,
            },
            y,
            classifier,
            bound,
            round_off,
        )
    }

    /// The bound over `[α; ln π]` for a fixed latent prior (fixed θ, or a split's prior).
    pub fn with_prior(
        prior: LatentPrior,
        y: &'a [f64],
        classifier: GibbsClassifier,
        bound: BoundTarget,
    ) -> Result<Self> {
        if prior.len() != y.len() || prior.cov.nrows() != y.len() || prior.cov.ncols() != y.len() {
            return Err(Error::ShapeMismatch {
                what: "PAC-GPC prior",
                expected: format!("{} latent values", y.len()),
                found: format!("{}", prior.len()),
            });
        }
        crate::data::check_binary_labels(y)?;
        let round_off = prior.round_off;
        Self::checked(PriorSource::Fixed(prior), y, classifier, bound, round_off)
    }

    fn checked(
        prior: PriorSource<'a>,
        y: &'a [f64],
        classifier: GibbsClassifier,
        bound: BoundTarget,
        round_off: f64,
    ) -> Result<Self> {
        let bound = BoundTarget::new(bound.delta, bound.term, bound.kind, bound.penalty)?;
        Ok(Self {
            prior,
            y,
            classifier,
            bound,
            round_off,
        })
    }

    /// Number of leading kernel parameters (0 for a fixed prior).
    pub fn n_theta(&self) -> usize {
        match &self.prior {
            PriorSource::Kernel { kernel, .. } => kernel.n_params(),
            PriorSource::Fixed(_) => 0,
        }
    }

    /// The latent prior and (for a kernel prior) the kernel at `p`'s θ.
    fn prior_at(&self, p: &[f64]) -> Result<(LatentPrior, Option<Kernel>)> {
        match &self.prior {
            PriorSource::Kernel { kernel, x } => {
                let mut k = kernel.clone();
                k.set_params(&p[..k.n_params()])?;
                Ok((LatentPrior::of_kernel(&k, *x), Some(k)))
            }
            PriorSource::Fixed(prior) => Ok((prior.clone(), None)),
        }
    }

    /// Risk, KL and bound at `p` (no gradient).
    pub fn terms(&self, p: &[f64]) -> Result<PacGpcTerms> {
        let (prior, _) = self.prior_at(p)?;
        let sites = SiteParams::from_stacked(&p[self.n_theta()..]);
        let e = SiteEvaluation::new(&prior, &sites)?;
        let risk = self.risk(&e.marginals).0;
        Ok(PacGpcTerms {
            empirical_risk: risk,
            kl: e.kl,
            bound: self.bound.at(risk, e.kl, self.y.len()).value,
        })
    }

    /// Mean Gibbs error and the per-point derivatives `(R_S, ∂e/∂μ, ∂e/∂v)`.
    fn risk(&self, m: &Marginals) -> (f64, Vec<f64>, Vec<f64>) {
        let n = self.y.len();
        let (mut r, mut gm, mut gv) = (0.0, vec![0.0; n], vec![0.0; n]);
        for i in 0..n {
            let (e, dm, dv) = point_error(self.y[i], m.mean[i], m.var[i], &self.classifier);
            r += e;
            gm[i] = dm;
            gv[i] = dv;
        }
        (r / n as f64, gm, gv)
    }

    /// The posterior at `p` as the shared [`GaussianPosterior`] (kernel prior only).
    pub fn posterior_at(&self, p: &[f64]) -> Result<GaussianPosterior> {
        let PriorSource::Kernel { x, .. } = &self.prior else {
            return Err(Error::Unsupported(
                "a fixed latent prior has no kernel posterior; use the split prior's own".into(),
            ));
        };
        let (prior, kernel) = self.prior_at(p)?;
        let sites = SiteParams::from_stacked(&p[self.n_theta()..]);
        let e = SiteEvaluation::new(&prior, &sites)?;
        Ok(GaussianPosterior::sites(
            kernel.expect("kernel prior"),
            x.to_owned(),
            sites.alpha,
            e.sqrt_pi,
            e.chol_b,
        ))
    }
}

/// `G = w_c·½(R − DA²D + ααᵀ) + w_q[½(g_μαᵀ + αg_μᵀ) + P diag(g_v) Pᵀ]` (module doc): the
/// derivative of the bound with respect to the symmetric prior covariance `K₀`.
fn covariance_gradient(
    e: &SiteEvaluation,
    k0: &Mat<f64>,
    alpha: &[f64],
    (wq, wc): (f64, f64),
    g_mu: &[f64],
    g_v: &[f64],
) -> Mat<f64> {
    let n = alpha.len();
    let s = &e.sqrt_pi;
    // AD = B⁻¹ diag(s); R = D A D; D A² D = (AD)ᵀ(AD).
    let mut ad = e.chol_b.inverse();
    linalg::scale_cols(&mut ad, s);
    let da2d = ad.transpose() * &ad;
    let mut r = ad;
    for j in 0..n {
        for i in 0..n {
            r[(i, j)] *= s[i];
        }
    }
    // P = I − R K₀.
    let mut p = -(&r * k0);
    for i in 0..n {
        p[(i, i)] += 1.0;
    }
    let mut g = linalg::weighted_gram(&p, g_v);
    for j in 0..n {
        for i in 0..n {
            g[(i, j)] = wq * (g[(i, j)] + 0.5 * (g_mu[i] * alpha[j] + alpha[i] * g_mu[j]))
                + wc * 0.5 * (r[(i, j)] - da2d[(i, j)] + alpha[i] * alpha[j]);
        }
    }
    g
}

impl Objective for PacGpcObjective<'_> {
    fn dim(&self) -> usize {
        self.n_theta() + 2 * self.y.len()
    }

    fn value_and_gradient(&self, p: &[f64]) -> Result<(f64, Vec<f64>)> {
        let nt = self.n_theta();
        let (prior, kernel) = self.prior_at(p)?;
        let sites = SiteParams::from_stacked(&p[nt..]);
        let e = SiteEvaluation::new(&prior, &sites)?;
        let n = self.y.len();
        let nf = n as f64;
        let (risk, g_mu, g_v) = self.risk(&e.marginals);
        let b = &self.bound;
        // The minimised KL carries the round-off charge ½η‖α‖² (see [`LatentPrior`]).
        let eta = self.round_off;
        let kl = e.kl + 0.5 * eta * linalg::dot(&sites.alpha, &sites.alpha);
        let v = b.at(risk, kl, n);
        let (value, d_q, d_c) = (v.value, v.d_risk, v.d_complexity);
        let (wq, wc) = (d_q / nf, d_c / nf);
        let k0 = &prior.cov;
        let pi: Vec<f64> = e.sqrt_pi.iter().map(|s| s * s).collect();
        // ∂/∂α = K₀(w_q g_μ + w_c α).
        let t: Vec<f64> = (0..n).map(|i| wq * g_mu[i] + wc * sites.alpha[i]).collect();
        let mut g_alpha = linalg::mat_vec(k0, &t);
        for (g, a) in g_alpha.iter_mut().zip(&sites.alpha) {
            *g += wc * eta * a;
        }
        // ∂/∂ln π_i = π_i Σ_j Σ_ij² (½ w_c π_j − w_q g_v,j).
        let sigma = e.sigma(k0);
        let w: Vec<f64> = (0..n).map(|j| 0.5 * wc * pi[j] - wq * g_v[j]).collect();
        let g_lnpi: Vec<f64> = (0..n)
            .map(|i| {
                let col = sigma.col_as_slice(i);
                pi[i] * (0..n).map(|j| col[j] * col[j] * w[j]).sum::<f64>()
            })
            .collect();
        let mut grad = Vec::with_capacity(self.dim());
        if let (Some(kernel), PriorSource::Kernel { x, .. }) = (&kernel, &self.prior) {
            let g = covariance_gradient(&e, k0, &sites.alpha, (wq, wc), &g_mu, &g_v);
            grad.extend(kernel.gram_grad_contract_symmetric(*x, g.as_ref(), Some(k0.as_ref())));
        }
        grad.extend(g_alpha);
        grad.extend(g_lnpi);
        Ok((value, grad))
    }
}

/// How PAC-GPC's kernel hyperparameters are chosen (and paid for).
#[derive(Clone, Debug)]
pub enum PacGpcTheta {
    /// Optimised jointly with the sites from this kernel's (snapped) θ, snapped onto the grid
    /// afterwards, the sites re-optimised there: penalty `T·ln L`.
    Grid(Kernel),
    /// One of a menu of kernels fixed before seeing the data, the sites optimised for each; the
    /// lowest bound wins: penalty `ln k` (as the bound-selected Laplace classifier).
    Candidates(Menu<Kernel>),
}

/// Settings of [`fit_pac_gpc`].
#[derive(Clone, Debug)]
pub struct PacGpcConfig {
    /// Confidence δ.
    pub delta: f64,
    /// Confidence constant.
    pub term: ConfidenceTerm,
    /// Form of the bound that is minimised (the certificate reports both).
    pub kind: BoundKind,
    /// The PAC grid (for [`PacGpcTheta::Grid`]).
    pub grid: HyperGrid,
    /// Optimiser settings (boxes are set here).
    pub lbfgs: LbfgsConfig,
    /// Settings of the Laplace warm start.
    pub laplace: LaplaceConfig,
    /// L-BFGS iterations of the screening of every candidate kernel
    /// ([`PacGpcTheta::Candidates`]) before the full optimisation of the best.
    pub screen_iter: usize,
}

impl Default for PacGpcConfig {
    /// δ = 0.01, Maurer's constant, kl form, the paper's grid, 500 L-BFGS iterations (40 to
    /// screen each candidate kernel).
    fn default() -> Self {
        Self {
            delta: 0.01,
            term: ConfidenceTerm::Maurer,
            kind: BoundKind::Kl,
            grid: HyperGrid::default(),
            lbfgs: LbfgsConfig {
                max_iter: 500,
                ..Default::default()
            },
            laplace: LaplaceConfig::default(),
            screen_iter: 40,
        }
    }
}

/// A trained PAC-GPC with its certificate and the Laplace certificate it started from.
#[derive(Clone, Debug)]
pub struct PacGpcFit {
    /// The posterior (site form over the training inputs).
    pub posterior: GaussianPosterior,
    /// Its certificate (through [`Certificate::of_posterior`]).
    pub certificate: Certificate,
    /// The Laplace posterior's certificate at the same θ with the same penalty.
    pub laplace_certificate: Certificate,
    /// The optimiser's report of the last (site) optimisation.
    pub report: OptimReport,
}

/// Boxes of `[θ…; α; ln π]`.
fn site_boxes(n_theta: usize, n: usize) -> Vec<(f64, f64)> {
    let mut b = vec![boxes::LN_THETA; n_theta];
    b.extend(std::iter::repeat_n(boxes::FREE, n));
    b.extend(std::iter::repeat_n(LN_SITE_PRECISION, n));
    b
}

/// The fixed-prior objective in whitened mean coordinates `w = Lᵀα` (`LLᵀ = K₀`, jittered if
/// need be): an exact linear change of variables (`α = L⁻ᵀw`, `∇_w = L⁻¹∇_α`) under which
/// the mean's KL term is `½‖w‖²` (up to the jitter), so L-BFGS sees a well-scaled problem.
struct Whitened<'a> {
    inner: PacGpcObjective<'a>,
    chol_k: Cholesky,
}

impl Whitened<'_> {
    /// `[α; ln π]` from `[w; ln π]`.
    fn sites(&self, p: &[f64]) -> Vec<f64> {
        let n = p.len() / 2;
        let mut q = self.chol_k.solve_upper_vec(&p[..n]);
        q.extend_from_slice(&p[n..]);
        q
    }

    /// `[w; ln π]` from `[α; ln π]`: `w = Lᵀα`.
    fn whiten(&self, q: &[f64]) -> Vec<f64> {
        let n = q.len() / 2;
        let l = self.chol_k.l();
        let mut p: Vec<f64> = (0..n)
            .map(|j| (j..n).map(|i| l[(i, j)] * q[i]).sum())
            .collect();
        p.extend_from_slice(&q[n..]);
        p
    }
}

impl Objective for Whitened<'_> {
    fn dim(&self) -> usize {
        self.inner.dim()
    }

    fn value_and_gradient(&self, p: &[f64]) -> Result<(f64, Vec<f64>)> {
        let n = p.len() / 2;
        let (v, g) = self.inner.value_and_gradient(&self.sites(p))?;
        let mut gw = self.chol_k.solve_lower_vec(&g[..n]);
        gw.extend_from_slice(&g[n..]);
        Ok((v, gw))
    }
}

/// Minimise the bound over the sites at a fixed latent prior from `start` (in whitened mean
/// coordinates); returns the optimum and the report (L-BFGS never ends above its start).
pub fn optimise_sites(
    prior: LatentPrior,
    y: &[f64],
    classifier: GibbsClassifier,
    bound: BoundTarget,
    start: &SiteParams,
    lbfgs: &LbfgsConfig,
) -> Result<(SiteParams, OptimReport)> {
    let chol_k = Cholesky::factor(
        prior.cov.as_ref(),
        &JitterPolicy::default(),
        "prior covariance K₀ (whitening)",
    )?;
    let obj = Whitened {
        inner: PacGpcObjective::with_prior(prior, y, classifier, bound)?,
        chol_k,
    };
    let min = optim::drive(
        &obj,
        &obj.whiten(&start.stacked()),
        site_boxes(0, y.len()),
        lbfgs,
        &Restarts::default(),
        None,
    )?;
    Ok((
        SiteParams::from_stacked(&obj.sites(&min.params)),
        min.report,
    ))
}

/// The certificate of a kernel-prior posterior on its sample.
fn certificate_of(
    post: &GaussianPosterior,
    x: MatRef<'_, f64>,
    y: &[f64],
    classifier: GibbsClassifier,
    cfg: &PacGpcConfig,
    choice: &PenaltyTerm,
) -> Result<Certificate> {
    let spec = CertificateSpec::new(cfg.delta, cfg.term, vec![choice.clone()]);
    Certificate::of_posterior(post, x, y, &GibbsLoss::Classification(classifier), &spec)
}

/// Sites optimised at a fixed kernel from its Laplace fit: `(fit, Laplace fit)`.
fn fit_at_kernel(
    kernel: &Kernel,
    lik: &Likelihood,
    x: MatRef<'_, f64>,
    y: &[f64],
    classifier: GibbsClassifier,
    cfg: &PacGpcConfig,
    choice: &PenaltyTerm,
    extra_start: Option<&SiteParams>,
) -> Result<(PacGpcFit, ClassifierFit)> {
    let lap = laplace(kernel, lik, x, y, &cfg.laplace)?;
    let bound = BoundTarget {
        delta: cfg.delta,
        term: cfg.term,
        penalty: choice.nats,
        kind: cfg.kind,
    };
    let prior = LatentPrior::of_kernel(kernel, x);
    let obj = PacGpcObjective::with_prior(prior.clone(), y, classifier, bound)?;
    // Start from the better of the Laplace sites and the given ones.
    let mut start = SiteParams::of_posterior(&lap.posterior)?;
    if let Some(s) = extra_start {
        if obj.terms(&s.stacked())?.bound < obj.terms(&start.stacked())?.bound {
            start = s.clone();
        }
    }
    let (sites, report) = optimise_sites(prior, y, classifier, bound, &start, &cfg.lbfgs)?;
    let kobj = PacGpcObjective::with_kernel(kernel, x, y, classifier, bound)?;
    let mut p = kernel.params();
    p.extend(sites.stacked());
    let posterior = kobj.posterior_at(&p)?;
    let certificate = certificate_of(&posterior, x, y, classifier, cfg, choice)?;
    let laplace_certificate = certificate_of(&lap.posterior, x, y, classifier, cfg, choice)?;
    Ok((
        PacGpcFit {
            posterior,
            certificate,
            laplace_certificate,
            report,
        },
        lap,
    ))
}

/// Train a GP classifier by minimising the PAC-Bayes bound on the Gibbs error of
/// `classifier` over the site-form posterior and θ (module doc), warm-started from Laplace.
pub fn fit_pac_gpc(
    theta: &PacGpcTheta,
    lik: &Likelihood,
    x: MatRef<'_, f64>,
    y: &[f64],
    classifier: GibbsClassifier,
    cfg: &PacGpcConfig,
) -> Result<PacGpcFit> {
    check_classification(x, y, lik)?;
    match theta {
        PacGpcTheta::Candidates(menu) => {
            // Screen every candidate with a short site optimisation, then run the full one
            // on the best (any rule of choice among the k costs the same ln k).
            let screen = PacGpcConfig {
                lbfgs: LbfgsConfig {
                    max_iter: cfg.screen_iter,
                    ..cfg.lbfgs.clone()
                },
                ..cfg.clone()
            };
            let chosen = menu.by_bound(|k, price| {
                let (fit, _) = fit_at_kernel(k, lik, x, y, classifier, &screen, price, None)?;
                let bound = fit.certificate.bound;
                Ok((fit, bound))
            })?;
            let start = SiteParams::of_posterior(&chosen.value.posterior)?;
            let k = &menu.items[chosen.index];
            Ok(fit_at_kernel(k, lik, x, y, classifier, cfg, &chosen.price, Some(&start))?.0)
        }
        PacGpcTheta::Grid(kernel) => fit_on_grid(kernel, lik, x, y, classifier, cfg),
    }
}

/// Joint optimisation of θ and the sites from the Laplace fit at the snapped start, θ
/// snapped onto the grid, the sites re-optimised there.
fn fit_on_grid(
    kernel: &Kernel,
    lik: &Likelihood,
    x: MatRef<'_, f64>,
    y: &[f64],
    classifier: GibbsClassifier,
    cfg: &PacGpcConfig,
) -> Result<PacGpcFit> {
    let nt = kernel.n_params();
    let choice = PenaltyTerm::grid(&cfg.grid, nt);
    let mut k0 = kernel.clone();
    k0.set_params(&cfg.grid.round(&kernel.params()))?;
    let lap = laplace(&k0, lik, x, y, &cfg.laplace)?;
    let bound = BoundTarget {
        delta: cfg.delta,
        term: cfg.term,
        penalty: choice.nats,
        kind: cfg.kind,
    };
    let obj = PacGpcObjective::with_kernel(&k0, x, y, classifier, bound)?;
    let mut x0 = k0.params();
    x0.extend(SiteParams::of_posterior(&lap.posterior)?.stacked());
    let min = optim::drive(
        &obj,
        &x0,
        site_boxes(nt, y.len()),
        &cfg.lbfgs,
        &Restarts::default(),
        Some(&GridSnap {
            grid: cfg.grid,
            n: nt,
        }),
    )?;
    let mut snapped = k0.clone();
    snapped.set_params(&min.params[..nt])?;
    let joint_sites = SiteParams::from_stacked(&min.params[nt..]);
    Ok(fit_at_kernel(
        &snapped,
        lik,
        x,
        y,
        classifier,
        cfg,
        &choice,
        Some(&joint_sites),
    )?
    .0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gradcheck::{assert_gradient_close, Tolerance};

    fn toy(n: usize) -> (Mat<f64>, Vec<f64>) {
        let x = Mat::from_fn(n, 2, |i, j| {
            (((i * 17 + j * 29) % 41) as f64 / 41.0) * 4.0 - 2.0
        });
        let y = (0..n)
            .map(|i| {
                let t =
                    x[(i, 0)].sin() + 0.4 * x[(i, 1)] + 0.3 * (((i * 7) % 5) as f64 - 2.0) / 2.0;
                if t > 0.0 {
                    1.0
                } else {
                    -1.0
                }
            })
            .collect();
        (x, y)
    }

    fn spec() -> BoundTarget {
        BoundTarget {
            delta: 0.05,
            term: ConfidenceTerm::Maurer,
            penalty: 3.0,
            kind: BoundKind::Kl,
        }
    }

    fn start(n: usize) -> Vec<f64> {
        let mut p = vec![0.3, 0.2];
        p.extend((0..n).map(|i| 0.3 * ((i * 5 % 7) as f64 - 3.0)));
        p.extend((0..n).map(|i| ((i * 3 % 5) as f64 - 2.0) * 0.7));
        p
    }

    /// The analytic gradient in θ, α and ln π (latent and noisy classifiers, kl and Catoni
    /// bounds) matches central differences.
    #[test]
    fn gradient_matches_central_differences() {
        let (x, y) = toy(14);
        let k = Kernel::se_iso(1.0, 1.0);
        for classifier in [
            GibbsClassifier {
                bias: 0.0,
                noise_slope: None,
            },
            GibbsClassifier {
                bias: 0.1,
                noise_slope: Some(1.5),
            },
        ] {
            // The kl bound and Catoni's (λ = 2) alike.
            for term in [
                ConfidenceTerm::Maurer,
                ConfidenceTerm::Catoni { lambda: 2.0 },
            ] {
                let b = BoundTarget { term, ..spec() };
                let obj = PacGpcObjective::with_kernel(&k, x.as_ref(), &y, classifier, b).unwrap();
                let p = start(14);
                let (_, g) = obj.value_and_gradient(&p).unwrap();
                assert_gradient_close(
                    |q| obj.value(q).unwrap(),
                    &p,
                    &g,
                    1e-6,
                    Tolerance::mixed(1e-6),
                    "PAC-GPC",
                );
            }
        }
    }

    /// The whitened objective's gradient matches central differences and its value is the
    /// plain objective's at `α = L⁻ᵀw`.
    #[test]
    fn whitened_gradient_matches_central_differences() {
        let (x, y) = toy(14);
        // A large round-off charge, so its gradient is checked too.
        let prior = LatentPrior {
            round_off: 0.3,
            ..LatentPrior::of_kernel(&Kernel::se_iso(1.0, 1.0), x.as_ref())
        };
        let c = GibbsClassifier {
            bias: 0.0,
            noise_slope: None,
        };
        let chol_k = Cholesky::factor(prior.cov.as_ref(), &JitterPolicy::default(), "K").unwrap();
        let plain = PacGpcObjective::with_prior(prior.clone(), &y, c, spec()).unwrap();
        let obj = Whitened {
            inner: PacGpcObjective::with_prior(prior, &y, c, spec()).unwrap(),
            chol_k,
        };
        let q = start(14)[2..].to_vec();
        let p = obj.whiten(&q);
        assert!((obj.value(&p).unwrap() - plain.value(&q).unwrap()).abs() < 1e-9);
        let t = plain.terms(&q).unwrap();
        assert!(
            obj.value(&p).unwrap() > t.bound + 1e-6,
            "the charge is in the value"
        );
        let (_, g) = obj.value_and_gradient(&p).unwrap();
        assert_gradient_close(
            |w| obj.value(w).unwrap(),
            &p,
            &g,
            1e-6,
            Tolerance::mixed(1e-6),
            "whitened PAC-GPC",
        );
    }

    /// The objective's KL and Gibbs risk equal the certificate of the posterior it describes.
    #[test]
    fn terms_equal_the_certificate_of_the_posterior() {
        let (x, y) = toy(20);
        let k = Kernel::se_iso(1.0, 1.0);
        let c = GibbsClassifier {
            bias: 0.0,
            noise_slope: None,
        };
        let obj = PacGpcObjective::with_kernel(&k, x.as_ref(), &y, c, spec()).unwrap();
        let p = start(20);
        let t = obj.terms(&p).unwrap();
        let post = obj.posterior_at(&p).unwrap();
        let cert_spec = CertificateSpec::new(
            0.05,
            ConfidenceTerm::Maurer,
            vec![PenaltyTerm {
                what: "test".into(),
                nats: 3.0,
            }],
        );
        let cert = Certificate::of_posterior(
            &post,
            x.as_ref(),
            &y,
            &GibbsLoss::Classification(c),
            &cert_spec,
        )
        .unwrap();
        assert!((cert.kl - t.kl).abs() < 1e-10, "{} vs {}", cert.kl, t.kl);
        assert!((cert.empirical_risk - t.empirical_risk).abs() < 1e-10);
        assert!((cert.bound - t.bound).abs() < 1e-10);
        // The minimised value adds only the round-off charge ½η‖α‖² to the KL.
        assert!(obj.value(&p).unwrap() >= t.bound);
        assert!(obj.value(&p).unwrap() - t.bound < 1e-6);
    }

    /// The KL equals the generic Gaussian KL of `N(m₀ + K₀α, (K₀⁻¹ + Π)⁻¹)` to `N(m₀, K₀)`
    /// computed with dense inverses, for a prior with non-zero mean.
    #[test]
    fn kl_matches_the_dense_gaussian_kl() {
        let (x, _) = toy(9);
        let mut cov = Kernel::se_iso(0.8, 1.3).gram(x.as_ref());
        for i in 0..9 {
            cov[(i, i)] += 0.1;
        }
        let prior = LatentPrior {
            mean: (0..9).map(|i| 0.2 * i as f64 - 0.5).collect(),
            cov,
            round_off: 0.0,
        };
        let sites = SiteParams {
            alpha: (0..9).map(|i| 0.3 * (i as f64).cos()).collect(),
            ln_pi: (0..9).map(|i| 0.5 * i as f64 - 2.0).collect(),
        };
        let e = SiteEvaluation::new(&prior, &sites).unwrap();
        let none = JitterPolicy::none();
        let kinv = Cholesky::factor(prior.cov.as_ref(), &none, "K")
            .unwrap()
            .inverse();
        let mut prec = kinv.clone();
        for i in 0..9 {
            prec[(i, i)] += sites.ln_pi[i].exp();
        }
        let sigma = Cholesky::factor(prec.as_ref(), &none, "P")
            .unwrap()
            .inverse();
        let ln_det_k = Cholesky::factor(prior.cov.as_ref(), &none, "K")
            .unwrap()
            .ln_det();
        let ln_det_s = Cholesky::factor(sigma.as_ref(), &none, "S")
            .unwrap()
            .ln_det();
        let d = linalg::mat_vec(&prior.cov, &sites.alpha);
        let quad = linalg::dot(&d, &linalg::mat_vec(&kinv, &d));
        let tr = linalg::trace_of_product(kinv.as_ref(), sigma.as_ref());
        let want = 0.5 * (tr + quad - 9.0 + ln_det_k - ln_det_s);
        assert!((e.kl - want).abs() < 1e-9, "{} vs {want}", e.kl);
        for i in 0..9 {
            assert!((e.marginals.var[i] - sigma[(i, i)]).abs() < 1e-10);
            assert!((e.marginals.mean[i] - prior.mean[i] - d[i]).abs() < 1e-12);
        }
    }

    /// Training from Laplace never ends above the Laplace certificate at the same θ, with
    /// either way of choosing θ; the certificate is that of the returned posterior.
    #[test]
    fn pac_gpc_is_never_looser_than_laplace_at_the_same_theta() {
        let (x, y) = toy(40);
        let lik = Likelihood::probit();
        let c = GibbsClassifier::latent(&lik);
        let cfg = PacGpcConfig {
            lbfgs: LbfgsConfig {
                max_iter: 150,
                ..Default::default()
            },
            ..Default::default()
        };
        for theta in [
            PacGpcTheta::Grid(Kernel::se_iso(1.0, 2.0)),
            PacGpcTheta::Candidates(crate::select::Menu::charged(
                vec![Kernel::se_iso(0.7, 1.0), Kernel::se_iso(1.4, 4.0)],
                "kernel",
            )),
        ] {
            let fit = fit_pac_gpc(&theta, &lik, x.as_ref(), &y, c, &cfg).unwrap();
            assert!(
                fit.certificate.bound <= fit.laplace_certificate.bound + 1e-12,
                "{} vs {}",
                fit.certificate.bound,
                fit.laplace_certificate.bound
            );
            assert!(fit.certificate.bound < 0.999 * fit.laplace_certificate.bound);
            let again = certificate_of(
                &fit.posterior,
                x.as_ref(),
                &y,
                c,
                &cfg,
                &PenaltyTerm {
                    what: "same".into(),
                    nats: fit.certificate.penalty,
                },
            )
            .unwrap();
            assert_eq!(again.bound, fit.certificate.bound);
        }
    }
}
