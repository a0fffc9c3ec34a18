//! The one certificate constructor. Every model, objective, experiment and front end builds its
//! PAC-Bayes certificate here, from
//!
//! - the shared [`GaussianPosterior`] `Q` (its `KL(Q‖P)` and its marginals on the sample; a
//!   multi-class posterior: the K class scores, independent or coupled, [`LatentSample`]),
//! - the sample it is evaluated on (it must be the training sample the bound is about),
//! - the loss whose Gibbs risk is bounded, which names the stochastic predictor ([`GibbsLoss`];
//!   a risk that is only sampled enters as its upper confidence limit at a share of δ),
//! - δ and the confidence term, and
//! - a description of everything chosen from the data with its union-bound price
//!   ([`PenaltyTerm`]: the hyperparameter grid, a candidate menu, several ε at once, ...).
//!
//! The inequality itself (kl-inverse and Pinsker forms, the confidence constants, the grid) is
//! in [`crate::bounds`].
//!
//! - [`deployed`]: certificates on the deployed predictor (what `predict` returns): the
//!   derandomised bound from the same posterior, and the record the held-out test-set bound
//!   shares.

pub mod deployed;

use faer::MatRef;
use serde::{Deserialize, Serialize};

use crate::bounds::{complexity, pac_bayes_bound, BoundKind, ConfidenceTerm, HyperGrid};
use crate::error::{Error, Result};
use crate::likelihood::Likelihood;
use crate::loss::{self, RegressionLoss};
use crate::multiclass::{JointScores, SampledRisk, SamplingCorrection};
use crate::posterior::{GaussianPosterior, Marginals, MeanScaled, Prior};

mod kl;
use kl::checked_kl;
pub use kl::{KlToPrior, PosteriorAgainst};

/// The stochastic classifier whose 0-1 error is bounded: draw `f ~ Q`, predict `sgn(f(x) + b)`,
/// optionally with the probit's label noise `ξ ~ N(0, λ⁻²)` inside (`sgn(f(x) + ξ + b)`).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct GibbsClassifier {
    /// Bias b added to the latent function.
    pub bias: f64,
    /// Probit slope λ when the label noise is part of the predictor; `None` = noise-free latent.
    pub noise_slope: Option<f64>,
}

impl GibbsClassifier {
    /// The noise-free latent classifier `sgn(f(x) + b)` of a likelihood (its bias only).
    pub fn latent(lik: &Likelihood) -> Self {
        Self {
            bias: lik.bias_and_slope().0,
            noise_slope: None,
        }
    }

    /// The noisy classifier `sgn(f(x) + ξ + b)` of a probit likelihood (latent for the others).
    pub fn noisy(lik: &Likelihood) -> Self {
        let (bias, noise_slope) = lik.bias_and_slope();
        Self { bias, noise_slope }
    }

    /// The Gibbs classifier `predictor` names for a likelihood.
    pub fn of(lik: &Likelihood, predictor: GibbsPredictor) -> Self {
        match predictor {
            GibbsPredictor::Latent => Self::latent(lik),
            GibbsPredictor::Noisy => Self::noisy(lik),
        }
    }
}

/// Which stochastic classifier a classification certificate (and the Gibbs risk of
/// `evaluate`) is about.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GibbsPredictor {
    /// The noise-free latent classifier `sgn(f(x) + b)`, `f ~ Q`.
    #[default]
    Latent,
    /// The probit's noisy classifier `sgn(f(x) + ξ + b)` (same as latent for other likelihoods).
    Noisy,
}

/// The loss of a certificate: its Gibbs risk on the sample is the bound's empirical risk.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GibbsLoss {
    /// A bounded regression loss of `f(x) ~ Q` against `y` (ε-band or distance-sensitive), on
    /// the scale of the sample's targets.
    Regression(RegressionLoss),
    /// The 0-1 loss of a Gibbs classifier on ±1 labels (docs/math.md §7.1).
    Classification(GibbsClassifier),
    /// The 0-1 loss of the multi-class Gibbs classifier `argmax_k s_k(x)` on class indices,
    /// the class scores `s_k` (latent plus bias) drawn from the posterior.
    MultiClass(MultiClassRisk),
}

/// How the risk of the multi-class Gibbs classifier is obtained from its scores.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "risk", rename_all = "snake_case")]
pub enum MultiClassRisk {
    /// K independent scores (one-vs-rest): the exact risk by quadrature.
    Quadrature,
    /// K coupled scores (softmax Laplace): sampled, and bounded by its kl-inverse upper
    /// limit at a share of δ.
    Sampled(SamplingCorrection),
}

/// The posterior's latent values on a sample, as a loss reads them.
#[derive(Clone, Copy, Debug)]
pub enum LatentSample<'a> {
    /// One latent function: `N(μ_i, v_i)` at every point.
    One(&'a Marginals),
    /// K class scores independent under Q: class k's marginals.
    Independent(&'a [Marginals]),
    /// K class scores coupled under Q: a mean vector and a covariance at every point.
    Coupled(&'a JointScores),
}

impl<'a> From<&'a Marginals> for LatentSample<'a> {
    fn from(m: &'a Marginals) -> Self {
        LatentSample::One(m)
    }
}

impl<'a> From<&'a [Marginals]> for LatentSample<'a> {
    fn from(m: &'a [Marginals]) -> Self {
        LatentSample::Independent(m)
    }
}

impl<'a> From<&'a JointScores> for LatentSample<'a> {
    fn from(m: &'a JointScores) -> Self {
        LatentSample::Coupled(m)
    }
}

/// The empirical risk a certificate is taken at, and how it was sampled if it was.
struct EmpiricalRisk {
    /// The risk entering the bound (the upper limit of a sampled risk).
    bound_risk: f64,
    /// The risk reported (the sample mean of a sampled risk).
    reported: f64,
    /// The sampling record.
    sampled: Option<SampledRisk>,
}

/// An empirical risk held as its loss summed over the rows, so that a sample held in blocks or
/// shards adds its parts' sums (the map step) before one certificate is assembled from the
/// total ([`Certificate::of_risk_sum`], the reduce step).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RiskSum {
    /// The loss summed over the rows.
    pub loss: f64,
    /// The number of rows.
    pub rows: usize,
}

/// The sums of two disjoint parts of a sample.
impl std::ops::Add for RiskSum {
    type Output = Self;

    fn add(self, other: Self) -> Self {
        Self {
            loss: self.loss + other.loss,
            rows: self.rows + other.rows,
        }
    }
}

impl RiskSum {
    /// The empirical risk: the mean loss.
    pub fn mean(self) -> f64 {
        self.loss / self.rows as f64
    }
}

impl GibbsLoss {
    /// The loss summed over a sample or a part of one, from the posterior's marginals there
    /// (one latent function: a binary classifier or a regressor; K independent class scores:
    /// the quadrature multi-class risk). A sampled risk is not a plain sum (its upper limit
    /// is taken over the whole sample).
    pub fn risk_sum<'a>(&self, y: &[f64], sample: impl Into<LatentSample<'a>>) -> Result<RiskSum> {
        let loss = match (self, sample.into()) {
            (GibbsLoss::Regression(l), LatentSample::One(m)) => {
                loss::gibbs_loss_sum_regression(y, m, l)?
            }
            (GibbsLoss::Classification(c), LatentSample::One(m)) => {
                loss::gibbs_error_sum_classification(y, m, c.bias, c.noise_slope)?
            }
            (GibbsLoss::MultiClass(MultiClassRisk::Quadrature), LatentSample::Independent(s)) => {
                crate::multiclass::gibbs_loss_sum_independent(y, s)?
            }
            (loss, _) => {
                return Err(Error::Unsupported(format!(
                    "the risk of '{}' is not summed over parts of a sample: certify it on the whole sample",
                    loss.predictor()
                )))
            }
        };
        Ok(RiskSum {
            loss,
            rows: y.len(),
        })
    }

    /// Empirical Gibbs risk `R_S(Q)` from the posterior's marginals on the sample (a
    /// multi-class loss: [`GibbsLoss::empirical_risk_of`]).
    pub fn empirical_risk(&self, y: &[f64], marginals: &Marginals) -> Result<f64> {
        match self {
            GibbsLoss::Regression(l) => loss::gibbs_risk_regression(y, marginals, l),
            GibbsLoss::Classification(c) => {
                loss::gibbs_error_classification(y, marginals, c.bias, c.noise_slope)
            }
            GibbsLoss::MultiClass(_) => Err(Error::Unsupported(
                "a multi-class Gibbs risk needs the K class scores, not one latent function".into(),
            )),
        }
    }

    /// Empirical Gibbs risk on the sample from any [`LatentSample`]; a sampled multi-class
    /// risk is its sample mean (use the certificate for its upper limit).
    pub fn empirical_risk_of<'a>(
        &self,
        y: &[f64],
        sample: impl Into<LatentSample<'a>>,
    ) -> Result<f64> {
        match (self, sample.into()) {
            (GibbsLoss::MultiClass(MultiClassRisk::Sampled(c)), LatentSample::Coupled(s)) => {
                crate::multiclass::sampled::sampled_gibbs_risk(y, s, c.draws_per_point, c.seed)
            }
            (_, sample) => Ok(self.risk(y, sample, 1.0)?.reported),
        }
    }

    /// The risk of the loss on the sample; a sampled risk spends its share of `delta` on its
    /// upper limit.
    fn risk(&self, y: &[f64], sample: LatentSample<'_>, delta: f64) -> Result<EmpiricalRisk> {
        let exact = |r: f64| EmpiricalRisk {
            bound_risk: r,
            reported: r,
            sampled: None,
        };
        match (self, sample) {
            (GibbsLoss::Regression(_) | GibbsLoss::Classification(_), LatentSample::One(m)) => {
                Ok(exact(self.empirical_risk(y, m)?))
            }
            (GibbsLoss::MultiClass(MultiClassRisk::Quadrature), LatentSample::Independent(s)) => {
                Ok(exact(crate::multiclass::gibbs_risk_independent(y, s)?))
            }
            (GibbsLoss::MultiClass(MultiClassRisk::Sampled(c)), LatentSample::Coupled(s)) => {
                let r = c.apply(y, s, delta)?;
                Ok(EmpiricalRisk {
                    bound_risk: r.upper_limit,
                    reported: r.sample_mean,
                    sampled: Some(r),
                })
            }
            (loss, _) => Err(Error::Unsupported(format!(
                "the latent values given do not fit the loss of '{}'",
                loss.predictor()
            ))),
        }
    }

    /// The predictor the certificate is about, in words (stored in the certificate's JSON).
    pub fn predictor(&self) -> String {
        match self {
            GibbsLoss::Regression(RegressionLoss::EpsilonBand { epsilon }) => format!(
                "Gibbs regressor f(x) ~ Q, loss 1{{|y - f(x)| > {epsilon}}} (standardised units)"
            ),
            GibbsLoss::Regression(RegressionLoss::DistanceSensitive { epsilon }) => format!(
                "Gibbs regressor f(x) ~ Q, loss 1 - exp(-(y - f(x))^2/{epsilon}^2) (standardised units)"
            ),
            GibbsLoss::Classification(c) => match c.noise_slope {
                None => format!("Gibbs classifier sign(f(x) + {}), f ~ Q", c.bias),
                Some(l) => format!(
                    "Gibbs classifier sign(f(x) + xi + {}), f ~ Q, xi ~ N(0, 1/{l}^2)",
                    c.bias
                ),
            },
            GibbsLoss::MultiClass(MultiClassRisk::Quadrature) => {
                "multi-class Gibbs classifier argmax_k s_k(x), s_k = f_k(x) + b_k with f_k ~ Q_k independent (one-vs-rest); 0-1 loss by quadrature".into()
            }
            GibbsLoss::MultiClass(MultiClassRisk::Sampled(c)) => format!(
                "multi-class Gibbs classifier argmax_k f_k(x), f ~ Q coupling the classes (softmax Laplace); 0-1 loss sampled ({} draws per point, seed {}), bounded by its kl-inverse upper limit at {}·δ",
                c.draws_per_point, c.seed, c.delta_fraction
            ),
        }
    }
}

/// One thing chosen from the data and its union-bound price `ln(1/π)` in nats.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PenaltyTerm {
    /// What was chosen, in words.
    pub what: String,
    /// Its price in nats.
    pub nats: f64,
}

impl PenaltyTerm {
    /// `T` prior hyperparameters snapped onto `grid`: `T·ln L` (docs/math.md §2.3–2.4).
    pub fn grid(grid: &HyperGrid, t: usize) -> Self {
        Self {
            what: format!(
                "{t} kernel hyperparameters on the grid ln θ ∈ [{}, {}] step 10^-{}",
                grid.min_log, grid.max_log, grid.digits
            ),
            nats: grid.penalty(t),
        }
    }

    /// One of `k` candidates fixed before seeing the data: `ln k` (0 for a single one).
    pub fn candidates(k: usize, what: &str) -> Self {
        Self {
            what: format!("{what}: one of {k} fixed in advance"),
            nats: (k.max(1) as f64).ln(),
        }
    }
}

/// Everything of a certificate except the posterior, the sample and the loss.
#[derive(Clone, Debug, PartialEq)]
pub struct CertificateSpec {
    /// Confidence δ.
    pub delta: f64,
    /// Which confidence constant.
    pub term: ConfidenceTerm,
    /// Everything chosen from the data, with its price.
    pub choices: Vec<PenaltyTerm>,
}

impl CertificateSpec {
    /// δ, the confidence term and the choices paid for.
    pub fn new(delta: f64, term: ConfidenceTerm, choices: Vec<PenaltyTerm>) -> Self {
        Self {
            delta,
            term,
            choices,
        }
    }

    /// Sum of the penalties.
    pub fn penalty(&self) -> f64 {
        self.choices.iter().map(|c| c.nats).sum()
    }
}

/// A PAC-Bayes certificate: with probability ≥ 1 − δ over the sample, the Gibbs risk of the
/// named predictor on new data is at most `bound`.
///
/// ```
/// use pacgp::prelude::*;
/// # let x = Mat::from_fn(30, 1, |i, _| i as f64 / 10.0);
/// # let y = (0..30).map(|i| (i as f64 / 10.0).sin() + 0.1 * ((i * 7 % 5) as f64 - 2.0)).collect();
/// # let data = Dataset::new(x, y)?;
///
/// // `data`: 30 noisy points of sin(x) on [0, 3).
/// let spec = FitOptions { epsilon: Some(0.3), ..Default::default() }.check(MethodName::Gpr)?;
/// let model = fit(&spec, &data, None)?;
/// let c = model.certify(&data, &CertifyOptions::default())?.remove(0).certificate;
///
/// // The parts add up: the complexity is (KL + penalty + confidence term)/N, and the bound
/// // is the kl-inverse of the empirical risk at that complexity (its Pinsker form above it).
/// let confidence = c.confidence_term.value(c.n, c.delta);
/// assert!((c.complexity - (c.kl + c.penalty + confidence) / c.n as f64).abs() < 1e-12);
/// assert!((c.bound - kl_inverse(c.empirical_risk, c.complexity)).abs() < 1e-12);
/// assert!(c.bound_sqrt >= c.bound);
/// assert_eq!(c.gap, c.bound - c.empirical_risk);
/// # Ok::<(), pacgp::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Certificate {
    /// The upper bound on the true Gibbs risk (kl-inverse form, docs/math.md eq. 5).
    pub bound: f64,
    /// The Pinsker (sqrt) form of the same bound, for comparison (never lower, may exceed 1).
    pub bound_sqrt: f64,
    /// Empirical Gibbs risk on the sample.
    pub empirical_risk: f64,
    /// `KL(Q‖P)` in nats.
    pub kl: f64,
    /// Total union-bound penalty in nats (the sum of `penalty_terms`).
    pub penalty: f64,
    /// What was chosen from the data and what each choice costs.
    pub penalty_terms: Vec<PenaltyTerm>,
    /// Confidence parameter δ.
    pub delta: f64,
    /// Sample size N.
    pub n: usize,
    /// Which confidence constant.
    pub confidence_term: ConfidenceTerm,
    /// `(KL + penalty + confidence)/N`.
    pub complexity: f64,
    /// `bound − empirical_risk`, the price of the guarantee.
    pub gap: f64,
    /// The stochastic predictor whose risk is bounded.
    pub predictor: String,
    /// A sampled empirical risk: the draws, the share of δ they spent and the upper limit
    /// the bound is taken at (`empirical_risk` is then the sample mean).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sampled_risk: Option<SampledRisk>,
}

impl Certificate {
    /// The certificate of a posterior on a sample: `KL(Q‖P)` and the marginals from `posterior`.
    pub fn of_posterior(
        posterior: &GaussianPosterior,
        x: MatRef<'_, f64>,
        y: &[f64],
        loss: &GibbsLoss,
        spec: &CertificateSpec,
    ) -> Result<Self> {
        let marginals = posterior.predict(x)?;
        Self::of_predictions(posterior, &marginals, y, loss, spec)
    }

    /// The certificate of `Q_s`, a posterior with its mean shift scaled by `s` (the SVM's
    /// `μ·f_SVM`), from the family's marginals and KL held once for every `s`.
    pub fn of_mean_scaled(
        family: &MeanScaled<'_>,
        s: f64,
        y: &[f64],
        loss: &GibbsLoss,
        spec: &CertificateSpec,
    ) -> Result<Self> {
        if family.n() != y.len() {
            return Err(Error::ShapeMismatch {
                what: "sample of a mean-scaled posterior",
                expected: format!("{} labels", family.n()),
                found: format!("{}", y.len()),
            });
        }
        Self::from_marginals(family.kl_to_prior(s)?, &family.marginals(s)?, y, loss, spec)
    }

    /// The certificate of `posterior` from its predictions on the sample (for callers that
    /// already hold them, e.g. an experiment scoring train and test in one pass); a
    /// multi-class posterior gives its K class scores ([`LatentSample`]).
    pub fn of_predictions<'a>(
        posterior: &(impl KlToPrior + ?Sized),
        predictions: impl Into<LatentSample<'a>>,
        y: &[f64],
        loss: &GibbsLoss,
        spec: &CertificateSpec,
    ) -> Result<Self> {
        Self::from_marginals(posterior.kl_to_prior()?, predictions, y, loss, spec)
    }

    /// One certificate per loss of `posterior` from its predictions on the sample (its KL
    /// computed once; the spec's penalty must already count the choice among the losses).
    pub fn for_losses<'a>(
        posterior: &(impl KlToPrior + ?Sized),
        predictions: impl Into<LatentSample<'a>>,
        y: &[f64],
        losses: &[GibbsLoss],
        spec: &CertificateSpec,
    ) -> Result<Vec<Self>> {
        let (kl, predictions) = (posterior.kl_to_prior()?, predictions.into());
        losses
            .iter()
            .map(|loss| Self::from_marginals(kl, predictions, y, loss, spec))
            .collect()
    }

    /// The certificate from a KL and the predictions: the one assembly every constructor
    /// above goes through (crate-internal: callers hand over a posterior, not a number).
    pub(crate) fn from_marginals<'a>(
        kl: f64,
        marginals: impl Into<LatentSample<'a>>,
        y: &[f64],
        loss: &GibbsLoss,
        spec: &CertificateSpec,
    ) -> Result<Self> {
        let kl = checked_kl(kl, y.len())?;
        let risk = loss.risk(y, marginals.into(), spec.delta)?;
        Self::assemble(kl, risk, y.len(), loss, spec)
    }

    /// The certificate of `posterior` on a sample held in parts, from the total of the parts'
    /// [`GibbsLoss::risk_sum`]s: equal to [`Certificate::of_posterior`] on the whole sample
    /// (to the rounding of the sum's order).
    pub fn of_risk_sum(
        posterior: &(impl KlToPrior + ?Sized),
        sum: RiskSum,
        loss: &GibbsLoss,
        spec: &CertificateSpec,
    ) -> Result<Self> {
        if let GibbsLoss::MultiClass(MultiClassRisk::Sampled(_)) = loss {
            return Err(Error::Unsupported(
                "a sampled risk enters a certificate by its upper limit over the whole sample, not as a sum".into(),
            ));
        }
        if sum.rows == 0 || !sum.loss.is_finite() || sum.loss < 0.0 || sum.loss > sum.rows as f64 {
            return Err(Error::Numerical {
                what: "summed loss of the certificate",
                message: format!("{:.4e} over {} rows", sum.loss, sum.rows),
            });
        }
        let risk = sum.mean();
        let risk = EmpiricalRisk {
            bound_risk: risk,
            reported: risk,
            sampled: None,
        };
        let kl = checked_kl(posterior.kl_to_prior()?, sum.rows)?;
        Self::assemble(kl, risk, sum.rows, loss, spec)
    }

    /// The bound and its parts from a checked KL, the empirical risk and the sample size.
    fn assemble(
        kl: f64,
        risk: EmpiricalRisk,
        n: usize,
        loss: &GibbsLoss,
        spec: &CertificateSpec,
    ) -> Result<Self> {
        // A sampled risk spent part of δ on its upper limit; the bound takes the rest.
        let delta = risk.sampled.as_ref().map_or(spec.delta, |s| s.delta_bound);
        let penalty = spec.penalty();
        let q = risk.bound_risk;
        let bound = pac_bayes_bound(q, kl, n, delta, penalty, BoundKind::Kl, spec.term)?;
        let bound_sqrt = pac_bayes_bound(q, kl, n, delta, penalty, BoundKind::Sqrt, spec.term)?;
        Ok(Self {
            bound,
            bound_sqrt,
            empirical_risk: risk.reported,
            kl,
            penalty,
            penalty_terms: spec.choices.clone(),
            delta: spec.delta,
            n,
            confidence_term: spec.term,
            complexity: complexity(kl, n, delta, penalty, spec.term),
            gap: bound - risk.reported,
            predictor: loss.predictor(),
            sampled_risk: risk.sampled,
        })
    }

    /// The bound in the form a training objective minimised (kl or sqrt).
    pub fn bound_of_kind(&self, kind: BoundKind) -> f64 {
        match kind {
            BoundKind::Kl => self.bound,
            BoundKind::Sqrt => self.bound_sqrt,
        }
    }
}

#[cfg(test)]
mod tests;
