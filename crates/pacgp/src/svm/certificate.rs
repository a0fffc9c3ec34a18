//! A PAC-Bayes certificate for the SVM read as a GP's MAP (seed 001 §17.4; Langford &
//! Shawe-Taylor, "PAC-Bayes & margins", NIPS 2002).
//!
//! **Construction.** The prior P is the GP with covariance `k` (fixed before seeing the
//! data). The SVM's function `f_SVM(x) = Σ_j k(x, x_j) y_j α_j` lies in k's RKHS; the
//! posterior Q is P shifted to mean `μ·f_SVM`, with P's covariance. In the shared
//! [`GaussianPosterior`] this is the site form with every site precision 0 (`B = I`, so the
//! covariance is the prior's) and mean weights `μ·y∘α` over the support vectors. Then
//!
//! - `KL(Q‖P) = ½ μ² (y∘α)ᵀ K (y∘α)` (the Gaussian KL with equal covariances), and
//! - the Gibbs error at `(x, y)` is `Φ(−μ y f_SVM(x)/√k(x, x))` (a draw `f ~ Q` has
//!   `f(x) ~ N(μ f_SVM(x), k(x, x))`),
//!
//! so `posterior.kl_to_prior()`, `posterior.predict` and
//! the Gibbs 0-1 loss of [`crate::certificate`] apply unchanged. Larger μ lowers the Gibbs
//! error towards the SVM's margin error and raises the KL by μ²; μ is taken from a menu fixed
//! in advance ([`mu_menu`]), whose choice costs `ln |menu|` in the penalty (plus the prices of
//! the caller's other choices made on the same data, e.g. the kernel and slack menu).
//!
//! **Bias.** A bias fitted from the data would make the prior's mean data-dependent.
//! Instead the certified SVM has no free bias: put a constant term in the prior kernel
//! (`k + σ_b²`, σ_b² fixed in advance; a Gaussian prior on b, seed 001 §17.4 footnote 1) and
//! train the SVM with `bias: false` on that kernel; `b` is then part of `f_SVM`. Fits with a
//! bias are rejected. The quadratic slack's `v` (per-example noise) is not part of the prior
//! over the latent function: Q and P are over the noise-free `f` with covariance `k`.

use faer::{Mat, MatRef};

use super::SvmFit;
use crate::bounds::{BoundKind, ConfidenceTerm, DEFAULT_DELTA};
use crate::certificate::{Certificate, CertificateSpec, GibbsClassifier, GibbsLoss, PenaltyTerm};
use crate::error::{Error, Result};
use crate::kernel::Kernel;
use crate::posterior::{GaussianPosterior, MeanScaled};
use crate::select::Menu;

/// Settings of [`svm_certificate`].
#[derive(Clone, Debug)]
pub struct SvmCertificateConfig {
    /// Scales μ of the posterior mean, fixed before seeing the data, chosen by the bound.
    pub mu: Menu<f64>,
    /// Confidence δ.
    pub delta: f64,
    /// kl or sqrt form.
    pub kind: BoundKind,
    /// Confidence constant.
    pub term: ConfidenceTerm,
    /// The prices of other choices made on the same sample (e.g. the kernel and slack
    /// menu's `ln |menu|`), paid beside the μ menu's.
    pub choices: Vec<PenaltyTerm>,
}

/// The μ menu: `{2^{−2}, 2^{−1.5}, …, 2^{6}}` (17 values), charged `ln 17`.
pub fn mu_menu() -> Menu<f64> {
    Menu::charged(
        (0..17).map(|t| 2f64.powf(-2.0 + 0.5 * t as f64)).collect(),
        "scale μ of the posterior mean",
    )
}

impl Default for SvmCertificateConfig {
    /// [`mu_menu`], δ = [`DEFAULT_DELTA`], kl form, Maurer's constant, no other choices.
    fn default() -> Self {
        Self {
            mu: mu_menu(),
            delta: DEFAULT_DELTA,
            kind: BoundKind::Kl,
            term: ConfidenceTerm::Maurer,
            choices: Vec::new(),
        }
    }
}

/// The certificate and the Q it certifies.
#[derive(Clone, Debug)]
pub struct SvmCertificate {
    /// Bound, empirical Gibbs error, KL, penalty (the other choices' and `ln|μ menu|`), δ, N.
    pub certificate: Certificate,
    /// The μ of the menu with the lowest bound.
    pub mu: f64,
    /// Q at that μ (basis: the support vectors).
    pub posterior: GaussianPosterior,
    /// `(μ, bound)` for every menu value.
    pub per_mu: Vec<(f64, f64)>,
}

/// Q = the prior GP shifted to mean `μ·f_SVM` (module doc), over the support vectors of a
/// bias-free SVM trained with `prior` on `x`.
pub fn svm_posterior(
    prior: &Kernel,
    x: MatRef<'_, f64>,
    y: &[f64],
    fit: &SvmFit,
    mu: f64,
) -> Result<GaussianPosterior> {
    super::check_shapes(x, y)?;
    prior.check_input_dim(x.ncols())?;
    if fit.bias {
        return Err(Error::Unsupported(
            "an SVM certificate needs a bias-free fit: put a constant term in the prior kernel \
             and train with bias = false (the prior may not depend on the data)"
                .into(),
        ));
    }
    if fit.alpha.len() != y.len() {
        return Err(Error::ShapeMismatch {
            what: "SVM fit for the certificate",
            expected: format!("{} dual variables", y.len()),
            found: format!("{}", fit.alpha.len()),
        });
    }
    if !(mu > 0.0 && mu.is_finite()) {
        return Err(Error::InvalidParameter {
            name: "certificate scale μ",
            value: mu,
            reason: "must be positive and finite",
        });
    }
    let sv: Vec<usize> = (0..y.len()).filter(|&i| fit.alpha[i] > 0.0).collect();
    let m = sv.len();
    let basis = Mat::from_fn(m, x.ncols(), |r, c| x[(sv[r], c)]);
    // Every site precision 0: the prior's covariance, shifted to mean μ·f_SVM.
    let alpha = sv.iter().map(|&i| mu * y[i] * fit.alpha[i]).collect();
    GaussianPosterior::shifted(prior.clone(), basis, alpha)
}

/// The PAC-Bayes certificate of a bias-free SVM trained with `prior` on `(x, y)`: the
/// lowest bound over `cfg.mu` ([`Menu::by_bound`], which charges `ln |menu|`), paying the
/// other choices' prices too. `Q_μ`'s marginals on the sample and its KL come from one
/// prediction of `Q_1` ([`MeanScaled`]), which is the chosen `Q_μ`'s certificate too (equal
/// to [`Certificate::of_posterior`] of it to round-off; `certify` recomputes it that way).
pub fn svm_certificate(
    prior: &Kernel,
    x: MatRef<'_, f64>,
    y: &[f64],
    fit: &SvmFit,
    cfg: &SvmCertificateConfig,
) -> Result<SvmCertificate> {
    if cfg.mu.is_empty() {
        return Err(Error::Empty {
            what: "certificate μ menu",
        });
    }
    // The SVM's own sign(f_SVM), drawn from Q: no label noise, no further bias.
    let loss = GibbsLoss::Classification(GibbsClassifier {
        bias: 0.0,
        noise_slope: None,
    });
    let spec = |price: &PenaltyTerm| {
        let mut choices = cfg.choices.clone();
        choices.push(price.clone());
        CertificateSpec::new(cfg.delta, cfg.term, choices)
    };
    let family = MeanScaled::on_sample(svm_posterior(prior, x, y, fit, 1.0)?, x)?;
    let mut per_mu = Vec::with_capacity(cfg.mu.len());
    let chosen = cfg.mu.by_bound(|&mu, price| {
        let c = Certificate::of_mean_scaled(&family, mu, y, &loss, &spec(price))?;
        let bound = c.bound_of_kind(cfg.kind);
        per_mu.push((mu, bound));
        Ok(((mu, c), bound))
    })?;
    let (mu, certificate) = chosen.value;
    let posterior = family.posterior(mu)?;
    Ok(SvmCertificate {
        certificate,
        mu,
        posterior,
        per_mu,
    })
}
