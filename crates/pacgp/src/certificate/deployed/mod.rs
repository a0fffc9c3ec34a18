//! Certificates on the **deployed** predictor — what `predict` returns (the sign of the
//! posterior mean, the SVM's decision, a regressor's mean) — rather than the Gibbs predictor
//! the PAC-Bayes certificate of [`super`] covers. Two kinds share one record,
//! [`DeployedCertificate`]:
//!
//! - the **test-set bound** on rows held out of the fit (Langford 2005, Th. 3.3; built by
//!   `crate::model::holdout`);
//! - the **derandomised bound** on the training sample, no rows held out (docs/math.md §7.6;
//!   after Langford & Shawe-Taylor 2002, Lacasse et al. 2007 and Viallard et al. 2021).
//!   `Q_c` is Q with its mean weights scaled by `c > 0` ([`MeanScaled`]: `sgn(μ + b)` is
//!   unchanged, the KL's mean part grows by `c²`); a binary classifier's bound is the least of
//!   two forms over a grid fixed in advance, priced `ln |grid|` beside the Gibbs certificate's
//!   own choices:
//!   - **disagreement**: where the mean errs a draw of `Q_c` errs unless it disagrees with the
//!     mean, so `R(deployed) ≤ R(G_c) + D(Q_c)`, `D = E_x P_f[sgn f ≠ sgn μ]`; and
//!     `D ≤ d(Q_c) = E_x P_{f,f'}[sgn f ≠ sgn f']`, the disagreement of two independent
//!     draws (`2Φ(z)Φ(−z)`, `z = (μ + b)/√v`), a loss of the pair under `Q_c ⊗ Q_c`
//!     (KL doubled). Each is bounded at δ/2 and the two are added; the grid is
//!     [`DERANDOMISED_SCALES`];
//!   - **divided**: the posterior variance anywhere is at most κ times the prior's
//!     ([`crate::posterior::GaussianPosterior::variance_ratio_bound`]); with a threshold
//!     `γ(x) = t·√k(x,x)`, where the mean errs a draw of `Q_c` errs on the margin
//!     (`y(f + cb) ≤ γ`) with probability at least `Φ(t/√κ)`, so
//!     `R(deployed) ≤ R_γ(Q_c)/Φ(t/√κ)` (at `t = 0` twice the Gibbs risk), one bound at δ;
//!     the grid is [`DERANDOMISED_SCALES`] × [`DERANDOMISED_MARGINS`].
//!
//!   A multi-class model's predicted class is the Gibbs classifier's majority vote (the
//!   class of largest vote probability `p_j(x)`); scaling the means would move the vote, so
//!   its grid is three forms of Q itself, priced `ln 3`: where the vote errs `p_y(x) ≤ ½`, so
//!   - **first order**: `R(vote) ≤ 2·R(G)`, at δ;
//!   - **disagreement**: `R(vote) ≤ R(G) + d(Q)`, `d = E_x[1 − Σ_j p_j(x)²]` the disagreement
//!     of two independent draws (the vote's own `1 − p_max` is at most d), each at δ/2;
//!   - **tandem** (Masegosa, Lorenzen, Igel & Seldin 2020): `R(vote) ≤ 4·e(Q)`,
//!     `e = E_x[(1 − p_y(x))²]` the risk that two independent draws both err, at δ (KL
//!     doubled).
//!
//!   **Not in either grid: the C-bound** (Lacasse et al. 2007; Germain, Lacasse, Laviolette,
//!   Marchand & Roy 2015). The deployed label is the majority vote of the Gibbs classifier of
//!   `Q_c`, so `R(deployed) ≤ 1 − (1 − 2r)²/(1 − 2d)` ([`c_bound`]) with r its Gibbs risk and
//!   d two draws' disagreement; its PAC-Bayes form (their PAC-Bound 1) bounds r from above
//!   (KL) and d from below (KL doubled), each at δ/2 ([`DerandomisedForm::CBound`]; a
//!   multi-class vote's on its ½-margin, d = `E 2p_y(1 − p_y)`). On the shipped sets it was
//!   the least form on none of 240 fits (docs/reproduce/deployed.md), so it is computed only
//!   beside the grid, priced as if it were in it ([`classifier_forms_with_c_bound`],
//!   [`majority_vote_forms_with_c_bound`]), for `pacgp reproduce deployed`'s comparison.
//!
//!   A regressor's ε-band risk of the mean: where `|y − μ| > ε` a draw of Q misses the band
//!   `ε − γ` unless it strays `γ = r·ε` from the mean, so
//!   `R_ε(μ) ≤ P_Q[|y − f| > ε − γ] + P_{Q_0}[|f − μ| ≥ γ]`, the second under the centred
//!   posterior `Q_0` (mean weights 0, `KL(Q_0‖P)` the KL's covariance part), each at δ/2,
//!   over [`DERANDOMISED_FRACTIONS`].

use serde::{Deserialize, Serialize};

use super::{checked_kl, CertificateSpec};
use crate::bounds::{pac_bayes_bound, BoundKind, BoundTarget};
use crate::error::{Error, Result};
use crate::loss::{self, RegressionLoss};
use crate::multiclass::VoteRisks;
use crate::posterior::MeanScaled;
use crate::special::normal_cdf;

mod regressor;
pub use regressor::derandomised_regressor;

mod majority_vote;
pub use majority_vote::{derandomised_majority_vote, majority_vote_forms_with_c_bound};

/// The scales `c` of the posterior mean the derandomised classifier bound may take.
pub const DERANDOMISED_SCALES: [f64; 7] = [1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0];

/// The thresholds `t` (in prior standard deviations, `γ = t·√k(x,x)`) of the divided form.
pub const DERANDOMISED_MARGINS: [f64; 6] = [0.0, 0.25, 0.5, 1.0, 2.0, 3.0];

/// The fractions `r` of ε (`γ = r·ε`) the derandomised regressor bound may spend on the
/// posterior's spread.
pub const DERANDOMISED_FRACTIONS: [f64; 3] = [0.25, 0.5, 0.75];

/// Which predictor a deployed-predictor certificate covers: the one `predict` returns.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DeployedPredictor {
    /// A binary GP classifier's label: the sign of `μ(x) + b` (`p(y = +1 | x) ≥ ½` in exact
    /// arithmetic; every likelihood here is symmetric).
    PosteriorMeanSign,
    /// The SVM's decision `sgn(f_SVM(x) + b)`.
    SvmSign,
    /// A multi-class model's predicted class (the most probable).
    PredictedClass,
    /// A regressor's posterior mean μ(x), with the ε-band loss `1[|y − μ(x)| > ε]`.
    PosteriorMean,
}

impl std::fmt::Display for DeployedPredictor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            DeployedPredictor::PosteriorMeanSign => {
                "the sign of the posterior mean (predict's label)"
            }
            DeployedPredictor::SvmSign => "the SVM's decision sgn(f(x) + b) (predict's label)",
            DeployedPredictor::PredictedClass => "the predicted class (predict's label)",
            DeployedPredictor::PosteriorMean => "the posterior mean μ(x)",
        })
    }
}

/// Which inequality a deployed-predictor certificate uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DeployedBound {
    /// The exact binomial tail inversion (the Clopper–Pearson upper limit) on held-out rows.
    BinomialTail,
    /// The derandomised PAC-Bayes bound on the training sample (module doc).
    Derandomised,
}

/// A certificate on the deployed predictor: with probability ≥ 1 − `delta` over the sample
/// (the held-out rows for the test-set bound), its risk on new data is at most `value`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DeployedCertificate {
    /// The predictor the bound covers.
    pub predictor: DeployedPredictor,
    /// The inequality.
    pub bound: DeployedBound,
    /// Rows it is computed on (held-out rows, or the training sample).
    pub n: usize,
    /// The deployed predictor's errors on them (ε-band misses for a regressor).
    pub errors: usize,
    /// `errors / n`.
    pub error_rate: f64,
    /// ε of the loss (target units; regression only).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub epsilon: Option<f64>,
    /// The δ of this bound.
    pub delta: f64,
    /// The δ with which this bound and the PAC-Bayes certificate hold together.
    pub joint_delta: f64,
    /// The bound on the deployed predictor's risk.
    pub value: f64,
    /// The derandomised bound's parts (absent for the test-set bound).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub derandomised: Option<DerandomisedParts>,
}

/// Which inequality of the module doc a derandomised bound took.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DerandomisedForm {
    /// Classifiers: the Gibbs risk of `Q_c` plus two draws' disagreement, each at δ/2.
    Disagreement,
    /// Classifiers: the margin risk of `Q_c` over `Φ(t/√κ)`, at δ.
    Divided,
    /// Regressors: the `ε − γ` band risk of Q plus the centred posterior's spread beyond γ,
    /// each at δ/2.
    Spread,
    /// Multi-class majority vote: twice the Gibbs risk's bound, at δ.
    FirstOrder,
    /// Multi-class majority vote: four times the tandem risk's bound (pairs of draws), at δ.
    Tandem,
    /// The C-bound (Germain et al. 2015, PAC-Bound 1): the Gibbs risk bounded above and two
    /// draws' disagreement below, each at δ/2, in [`c_bound`]. Not in a certificate's grid:
    /// in the comparison of `pacgp reproduce deployed` (docs/reproduce/deployed.md) it was
    /// never the least form.
    CBound,
}

/// The parts of a derandomised bound at the grid point it was taken at (module doc).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DerandomisedParts {
    /// Which inequality.
    pub form: DerandomisedForm,
    /// The scale `c` of the posterior mean (1 for a regressor).
    pub scale: f64,
    /// The threshold: `t` in prior standard deviations (divided), the fraction `r` of ε
    /// (spread), 0 (disagreement).
    pub margin: f64,
    /// The empirical risk of the first term: the Gibbs risk of `Q_c` (disagreement), its
    /// margin risk (divided), the `ε − γ` band risk of Q (spread).
    pub risk: f64,
    /// Its PAC-Bayes bound (at δ/2, or δ in the divided form).
    pub risk_bound: f64,
    /// The KL the first term is charged in nats: `KL(Q_c‖P)`, or `2·KL(Q‖P)` for the
    /// tandem's pair of draws.
    pub kl: f64,
    /// The empirical second term: two draws' disagreement, or the centred posterior's spread
    /// (absent in the divided form).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub second_risk: Option<f64>,
    /// Its PAC-Bayes bound at δ/2 (from below in the C-bound form).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub second_bound: Option<f64>,
    /// The KL it is charged: `2·KL(Q_c‖P)` for a pair of draws, `KL(Q_0‖P)` for the centred
    /// posterior.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub second_kl: Option<f64>,
    /// What the first term's bound is divided by: `Φ(t/√κ)` (divided form), ½ (first
    /// order), ¼ (tandem).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub divisor: Option<f64>,
    /// Divided form: κ, the bound on the posterior-to-prior variance ratio.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub variance_ratio: Option<f64>,
    /// Union-bound price in nats of each PAC-Bayes bound: the Gibbs certificate's choices and
    /// `ln |grid|`.
    pub penalty: f64,
    /// Points of the grid the bound was minimised over (every form).
    pub grid: usize,
}

/// The sample a derandomised bound is taken on: the posterior family on its rows and the
/// labels (±1) or standardised targets.
pub struct DerandomisedSample<'a> {
    /// The posterior with its mean scalable, on the sample.
    pub family: &'a MeanScaled<'a>,
    /// Labels (±1) or standardised targets.
    pub y: &'a [f64],
}

impl DerandomisedSample<'_> {
    fn check(&self) -> Result<()> {
        let n = self.y.len();
        if self.family.n() != n || n == 0 {
            return Err(Error::ShapeMismatch {
                what: "sample of a derandomised certificate",
                expected: format!("{} rows of marginals", self.family.n()),
                found: format!("{n} labels"),
            });
        }
        if !self.family.has_zero_prior_mean() {
            return Err(Error::Unsupported(
                "a derandomised certificate scales the posterior mean about the prior's, which must be 0 (not a split prior)".into(),
            ));
        }
        Ok(())
    }
}

/// What a classifier's divided form needs besides its sample: the prior's variances
/// `k(x_i, x_i)` at the rows and κ ≥ sup_x v(x)/k(x,x).
pub struct PriorScale<'a> {
    /// `k(x_i, x_i)` of the prior at every row.
    pub prior_var: &'a [f64],
    /// κ, from [`crate::posterior::GaussianPosterior::variance_ratio_bound`].
    pub variance_ratio: f64,
}

impl PriorScale<'_> {
    fn check(&self, n: usize) -> Result<()> {
        if self.prior_var.len() != n {
            return Err(Error::ShapeMismatch {
                what: "prior variances of a derandomised certificate",
                expected: format!("{n}"),
                found: format!("{}", self.prior_var.len()),
            });
        }
        let kappa = self.variance_ratio;
        if !(kappa >= 1.0 && kappa.is_finite()) {
            return Err(Error::InvalidParameter {
                name: "posterior-to-prior variance ratio κ",
                value: kappa,
                reason: "must be finite and at least 1",
            });
        }
        Ok(())
    }
}

/// One point of the grid and its bound on the deployed risk.
struct GridPoint {
    parts: DerandomisedParts,
    value: f64,
}

/// The first term of a grid point: an empirical risk of `Q_c` at `(c, t)` and its KL, the
/// number of grid points, and the sample size.
struct FirstTerm {
    scale: f64,
    margin: f64,
    risk: f64,
    kl: f64,
    grid: usize,
    n: usize,
}

impl FirstTerm {
    /// The union-bound price of one grid point: the spec's choices and `ln |grid|`.
    fn penalty(&self, spec: &CertificateSpec) -> f64 {
        spec.penalty() + (self.grid as f64).ln()
    }

    /// The kl-inverse PAC-Bayes bound on a risk at `delta` with this point's price.
    fn bound(&self, spec: &CertificateSpec, risk: f64, kl: f64, delta: f64) -> Result<f64> {
        let kl = checked_kl(kl, self.n)?;
        let penalty = self.penalty(spec);
        pac_bayes_bound(risk, kl, self.n, delta, penalty, BoundKind::Kl, spec.term)
    }

    /// The parts every form shares.
    fn parts(
        &self,
        spec: &CertificateSpec,
        form: DerandomisedForm,
        bound: f64,
    ) -> DerandomisedParts {
        DerandomisedParts {
            form,
            scale: self.scale,
            margin: self.margin,
            risk: self.risk,
            risk_bound: bound,
            kl: self.kl,
            second_risk: None,
            second_bound: None,
            second_kl: None,
            divisor: None,
            variance_ratio: None,
            penalty: self.penalty(spec),
            grid: self.grid,
        }
    }

    /// The kl-inverse PAC-Bayes lower bound on a risk at `delta` with this point's price.
    fn lower_bound(&self, spec: &CertificateSpec, risk: f64, kl: f64, delta: f64) -> Result<f64> {
        let kl = checked_kl(kl, self.n)?;
        let penalty = self.penalty(spec);
        BoundTarget::new(delta, spec.term, BoundKind::Kl, penalty)?.lower(risk, kl, self.n)
    }

    /// A two-term form's parts: this term's bound and a second risk's, each at δ/2.
    fn pair_parts(
        &self,
        spec: &CertificateSpec,
        form: DerandomisedForm,
        (risk_bound, second_bound): (f64, f64),
        (second, second_kl): (f64, f64),
    ) -> Result<DerandomisedParts> {
        Ok(DerandomisedParts {
            second_risk: Some(second),
            second_bound: Some(second_bound),
            second_kl: Some(checked_kl(second_kl, self.n)?),
            ..self.parts(spec, form, risk_bound)
        })
    }

    /// A two-term form: this term's bound plus a second risk's, each at δ/2.
    fn plus(
        &self,
        spec: &CertificateSpec,
        form: DerandomisedForm,
        second: (f64, f64),
    ) -> Result<GridPoint> {
        let half = spec.delta / 2.0;
        let risk_bound = self.bound(spec, self.risk, self.kl, half)?;
        let second_bound = self.bound(spec, second.0, second.1, half)?;
        Ok(GridPoint {
            value: (risk_bound + second_bound).min(1.0),
            parts: self.pair_parts(spec, form, (risk_bound, second_bound), second)?,
        })
    }

    /// The C-bound form (Germain et al. 2015, PAC-Bound 1): this term's Gibbs risk bounded
    /// above and two draws' disagreement `(d, KL)` bounded below, each at δ/2, in
    /// [`c_bound`] (which grows with the first and shrinks with the second).
    fn c_bound(&self, spec: &CertificateSpec, disagreement: (f64, f64)) -> Result<GridPoint> {
        let half = spec.delta / 2.0;
        let risk_bound = self.bound(spec, self.risk, self.kl, half)?;
        let d_low = self.lower_bound(spec, disagreement.0, disagreement.1, half)?;
        let form = DerandomisedForm::CBound;
        Ok(GridPoint {
            value: c_bound(risk_bound, d_low),
            parts: self.pair_parts(spec, form, (risk_bound, d_low), disagreement)?,
        })
    }

    /// A first term's bound at δ over `divisor` (a majority vote's first-order and tandem
    /// forms).
    fn over(
        &self,
        spec: &CertificateSpec,
        form: DerandomisedForm,
        divisor: f64,
    ) -> Result<GridPoint> {
        let risk_bound = self.bound(spec, self.risk, self.kl, spec.delta)?;
        Ok(GridPoint {
            value: (risk_bound / divisor).min(1.0),
            parts: DerandomisedParts {
                divisor: Some(divisor),
                ..self.parts(spec, form, risk_bound)
            },
        })
    }

    /// The divided form: the margin bound at δ over `Φ(t/√κ)`.
    fn divided(&self, spec: &CertificateSpec, kappa: f64) -> Result<GridPoint> {
        let risk_bound = self.bound(spec, self.risk, self.kl, spec.delta)?;
        let divisor = normal_cdf(self.margin / kappa.sqrt());
        Ok(GridPoint {
            value: (risk_bound / divisor).min(1.0),
            parts: DerandomisedParts {
                divisor: Some(divisor),
                variance_ratio: Some(kappa),
                ..self.parts(spec, DerandomisedForm::Divided, risk_bound)
            },
        })
    }
}

/// The least of the grid's bounds (ties: the first).
fn least(points: Vec<GridPoint>) -> GridPoint {
    points
        .into_iter()
        .reduce(|a, b| if b.value < a.value { b } else { a })
        .expect("a non-empty grid")
}

/// The least bound of each form on the grid, in the order the forms first appear.
fn least_per_form(points: Vec<GridPoint>) -> Vec<GridPoint> {
    let mut best: Vec<GridPoint> = Vec::new();
    for p in points {
        match best.iter_mut().find(|b| b.parts.form == p.parts.form) {
            Some(b) if p.value < b.value => *b = p,
            Some(_) => {}
            None => best.push(p),
        }
    }
    best
}

/// The C-bound (Lacasse et al. 2007; Germain et al. 2015, §4): a majority vote whose voters
/// have Gibbs risk `r < ½` and disagreement `d` (two independent draws differ on whether they
/// are right) errs with probability at most `1 − (1 − 2r)²/(1 − 2d)`, Cantelli's inequality
/// on the vote's margin `M = 1 − 2·P_h[h errs]` (`E M = 1 − 2r`, `E M² = 1 − 2d`); 1 where
/// `r ≥ ½`. It grows with r and shrinks with d, so an upper bound on r and a lower bound on d
/// bound it.
pub fn c_bound(gibbs: f64, disagreement: f64) -> f64 {
    let second_moment = 1.0 - 2.0 * disagreement;
    if gibbs >= 0.5 || second_moment <= 0.0 {
        return 1.0;
    }
    (1.0 - (1.0 - 2.0 * gibbs).powi(2) / second_moment).clamp(0.0, 1.0)
}

/// Which grid a derandomised bound is minimised over.
#[derive(Clone, Copy, PartialEq)]
enum Grid {
    /// The certificate's forms (module doc).
    Certificate,
    /// Those and the C-bound at every point of the certificate's scale grid, priced
    /// `ln |enlarged grid|`: the comparison of `pacgp reproduce deployed`.
    WithCBound,
}

/// Every point of a binary classifier's grid ([`derandomised_classifier`]) and the deployed
/// label's error rate on the sample.
fn classifier_grid(
    sample: &DerandomisedSample<'_>,
    scale: &PriorScale<'_>,
    bias: f64,
    spec: &CertificateSpec,
    which: Grid,
) -> Result<(Vec<GridPoint>, f64)> {
    sample.check()?;
    scale.check(sample.y.len())?;
    let kappa = scale.variance_ratio;
    let (y, n) = (sample.y, sample.y.len());
    let errors = loss::bayes_error_classification(y, sample.family.unit_marginals(), bias)?;
    let with_c_bound = which == Grid::WithCBound;
    let per_scale = 1 + DERANDOMISED_MARGINS.len() + usize::from(with_c_bound);
    let grid = DERANDOMISED_SCALES.len() * per_scale;
    let mut points = Vec::with_capacity(grid);
    for &c in &DERANDOMISED_SCALES {
        let m = sample.family.marginals(c)?;
        let kl = sample.family.kl_to_prior(c)?;
        let gibbs = FirstTerm {
            scale: c,
            margin: 0.0,
            risk: loss::gibbs_error_classification(y, &m, c * bias, None)?,
            kl,
            grid,
            n,
        };
        let pair = (loss::disagreement_classification(&m, c * bias)?, 2.0 * kl);
        points.push(gibbs.plus(spec, DerandomisedForm::Disagreement, pair)?);
        if with_c_bound {
            points.push(gibbs.c_bound(spec, pair)?);
        }
        for &t in &DERANDOMISED_MARGINS {
            let gamma: Vec<f64> = scale
                .prior_var
                .iter()
                .map(|k| t * k.max(0.0).sqrt())
                .collect();
            let margin = FirstTerm {
                margin: t,
                risk: loss::margin_error_classification(y, &m, c * bias, &gamma)?,
                ..gibbs
            };
            points.push(margin.divided(spec, kappa)?);
        }
    }
    Ok((points, errors))
}

/// The derandomised certificate on a binary classifier's deployed label `sgn(μ(x) + b)` (or
/// the SVM's), over the grid [`DERANDOMISED_SCALES`] × [`DERANDOMISED_MARGINS`] (module doc).
/// `spec` carries δ, the confidence term and the Gibbs certificate's choices.
pub fn derandomised_classifier(
    sample: &DerandomisedSample<'_>,
    scale: &PriorScale<'_>,
    bias: f64,
    predictor: DeployedPredictor,
    spec: &CertificateSpec,
) -> Result<DeployedCertificate> {
    let (points, errors) = classifier_grid(sample, scale, bias, spec, Grid::Certificate)?;
    let n = sample.y.len();
    let errors = (errors * n as f64).round() as usize;
    Ok(deployed(least(points), predictor, n, errors, None, spec))
}

/// The comparison of `pacgp reproduce deployed` (issue 42): the least bound of each form —
/// disagreement, divided, and the C-bound ([`DerandomisedForm::CBound`]) at every scale of
/// [`DERANDOMISED_SCALES`] — on the grid of [`derandomised_classifier`] enlarged by the
/// C-bound, every point priced `ln` of the enlarged grid (56 points), as the certificate
/// would be were the C-bound in it.
pub fn classifier_forms_with_c_bound(
    sample: &DerandomisedSample<'_>,
    scale: &PriorScale<'_>,
    bias: f64,
    predictor: DeployedPredictor,
    spec: &CertificateSpec,
) -> Result<Vec<DeployedCertificate>> {
    let (points, errors) = classifier_grid(sample, scale, bias, spec, Grid::WithCBound)?;
    let n = sample.y.len();
    let errors = (errors * n as f64).round() as usize;
    Ok(least_per_form(points)
        .into_iter()
        .map(|p| deployed(p, predictor, n, errors, None, spec))
        .collect())
}

/// The record of a derandomised bound: δ its own, `2δ` with the Gibbs certificate beside it.
fn deployed(
    best: GridPoint,
    predictor: DeployedPredictor,
    n: usize,
    errors: usize,
    epsilon: Option<f64>,
    spec: &CertificateSpec,
) -> DeployedCertificate {
    DeployedCertificate {
        predictor,
        bound: DeployedBound::Derandomised,
        n,
        errors,
        error_rate: errors as f64 / n as f64,
        epsilon,
        delta: spec.delta,
        joint_delta: (2.0 * spec.delta).min(1.0),
        value: best.value,
        derandomised: Some(best.parts),
    }
}

#[cfg(test)]
mod tests;
