//! Certifying a model fitted with a data-dependent split prior. Nothing of the prior is read
//! from the file: `certify` redoes the seeded split of the training sample from the spec's
//! seed and the record's fraction (and direction), refits everything part A fixes (scalers,
//! θ_A, σ_A², the inducing inputs, the classifier's kernel structure, scales and Catoni's λ)
//! exactly as `fit` did, refuses a record or stored posterior that differs from it
//! ([`Error::ModelMismatch`]), and certifies Q — the refitted `P_A` updated with the stored
//! free parameters on part B — on part B.

use faer::Mat;

use crate::certificate::{
    Certificate, CertificateSpec, GibbsLoss, KlToPrior, PenaltyTerm, PosteriorAgainst,
};
use crate::data::{Dataset, Standardizer, TargetScaler};
use crate::error::{Error, Result};
use crate::kernel::Kernel;
use crate::loss::RegressionLoss;
use crate::objective::gp_split::{RegressionParts, SplitPrior, SplitRecord};
use crate::objective::sgp_split::{SparseSplitPrior, SparseSplitRecord};
use crate::posterior::{Covariance, GaussianPosterior, Marginals, Prior};
use crate::spec::{ClassifierHypers, Method, PacPrior, SplitClassifierSpec, SvgpSpec};

use super::certify::Resolved;
use super::split_classifier::ClassifierSplitRecord;
use super::{CertificateReport, FittedModel, Task};

/// Relative agreement of a recomputed value with the stored one: the same computation run
/// again agrees to round-off; an edit that changes a certificate is far larger.
const AGREE: f64 = 1e-9;

fn mismatch(part: &str, reason: String) -> Error {
    Error::ModelMismatch {
        part: part.into(),
        reason,
    }
}

/// [`check_close`] of two matrices of the same shape.
fn check_close_mat(part: &str, stored: &Mat<f64>, derived: &Mat<f64>) -> Result<()> {
    if (stored.nrows(), stored.ncols()) != (derived.nrows(), derived.ncols()) {
        return Err(mismatch(
            part,
            format!(
                "{}×{} stored, {}×{} recomputed",
                stored.nrows(),
                stored.ncols(),
                derived.nrows(),
                derived.ncols()
            ),
        ));
    }
    let flat = |m: &Mat<f64>| -> Vec<f64> {
        (0..m.ncols())
            .flat_map(|j| (0..m.nrows()).map(move |i| m[(i, j)]))
            .collect()
    };
    check_close(part, &flat(stored), &flat(derived))
}

/// `stored` must equal the recomputed `derived` to [`AGREE`] of the larger magnitude.
pub(crate) fn check_close(part: &str, stored: &[f64], derived: &[f64]) -> Result<()> {
    let scale = stored
        .iter()
        .chain(derived)
        .fold(0.0f64, |m, v| m.max(v.abs()))
        .max(f64::MIN_POSITIVE);
    let same = stored.len() == derived.len()
        && stored
            .iter()
            .zip(derived)
            .all(|(a, b)| (a - b).abs() <= AGREE * scale);
    if same {
        Ok(())
    } else {
        Err(mismatch(
            part,
            format!(
                "it is not what part A of the training sample gives ({} values stored, {} recomputed); a file written by an earlier pacgp, whose optimiser fitted part A differently, is refused the same way: refit it",
                stored.len(),
                derived.len()
            ),
        ))
    }
}

/// The stored kernel must be the recomputed one: the same structure, θ to [`AGREE`].
fn check_kernel(part: &str, stored: &Kernel, derived: &Kernel) -> Result<()> {
    let mut same_structure = derived.clone();
    if same_structure.set_params(&stored.params()).is_err() || same_structure != *stored {
        return Err(mismatch(
            part,
            format!(
                "{} is not a kernel of the structure part A gives ({})",
                stored.describe(),
                derived.describe()
            ),
        ));
    }
    check_close(part, &stored.params(), &derived.params())
}

/// The input scaler (and target scaler) of part A must be the model's.
fn check_scalers(model: &FittedModel, x: &Standardizer, y: Option<&TargetScaler>) -> Result<()> {
    check_close("input scaler", &model.x_scaler.mean, &x.mean)?;
    check_close("input scaler", &model.x_scaler.sd, &x.sd)?;
    if let (Some(y), Task::Regression { y_scaler, .. }) = (y, &model.task) {
        check_close(
            "target scaler",
            &[y_scaler.mean, y_scaler.sd],
            &[y.mean, y.sd],
        )?;
    }
    Ok(())
}

/// The stored posterior must be the one rebuilt from the refitted prior and the record.
/// A conditioned prior (`P_A`) is checked the same way, down to the GP prior it starts from.
fn check_posterior(stored: &GaussianPosterior, rebuilt: &GaussianPosterior) -> Result<()> {
    check_kernel("posterior's kernel", stored.kernel(), rebuilt.kernel())?;
    match (&stored.prior, &rebuilt.prior) {
        (Prior::Gp(_), Prior::Gp(_)) => {}
        (Prior::Conditioned(a), Prior::Conditioned(b)) => check_posterior(a, b)?,
        _ => {
            return Err(mismatch(
                "posterior's prior",
                "it is not the split prior's P_A".into(),
            ))
        }
    }
    check_close_mat("posterior's basis", &stored.basis, &rebuilt.basis)?;
    check_close("posterior's mean weights", &stored.alpha, &rebuilt.alpha)?;
    match (&stored.cov, &rebuilt.cov) {
        (Covariance::Sites { sqrt_pi: a, .. }, Covariance::Sites { sqrt_pi: b, .. }) => {
            check_close("posterior's site precisions", a, b)
        }
        (Covariance::Dense { chol_sigma: a, .. }, Covariance::Dense { chol_sigma: b, .. }) => {
            check_close_mat(
                "posterior's covariance",
                &a.l().to_owned(),
                &b.l().to_owned(),
            )
        }
        _ => Err(mismatch(
            "posterior",
            "its covariance form is not the split prior's".into(),
        )),
    }
}

/// The spec's kernel for `d` inputs (the start of ML-II on part A).
fn spec_kernel(model: &FittedModel) -> Result<Kernel> {
    let spec = match &model.spec.method {
        Method::PacGp(s) => &s.kernel,
        Method::PacSgp(s) => &s.kernel,
        Method::Svgp(s) => &s.kernel,
        method => &classifier_split(method)?.0.kernel,
    };
    Kernel::from_spec(spec, model.feature_names.len())
}

/// A classifier spec's split prior and whether its fit optimised the sites (PAC-GPC) or
/// fixed them by the spec's inference (a classifier); the mismatch when it has none.
fn classifier_split(method: &Method) -> Result<(&SplitClassifierSpec, bool)> {
    let (hypers, optimise_sites) = match method {
        Method::Classifier(c) => (Some(&c.hypers), false),
        Method::PacGpc(c) => (Some(&c.hypers), true),
        _ => (None, false),
    };
    match hypers {
        Some(ClassifierHypers::Split(s)) => Ok((s, optimise_sites)),
        _ => Err(mismatch(
            "split prior record",
            "the spec has no split prior".into(),
        )),
    }
}

/// Part A's refitted θ_A and σ_A² against the record's `stored` ones.
fn check_part_a(stored: (&Kernel, f64), refit: (&Kernel, f64)) -> Result<()> {
    check_kernel("split prior record's θ_A", stored.0, refit.0)?;
    check_close("split prior record's σ_A²", &[stored.1], &[refit.1])
}

/// The ε-band losses of `epsilons` (target units) on targets standardised by `y_sd`, each with
/// its ε, for [`certify_on_part_b`].
fn band_losses(epsilons: &[f64], y_scaler: &TargetScaler) -> Result<Vec<(GibbsLoss, Option<f64>)>> {
    epsilons
        .iter()
        .map(|&eps| {
            let loss = RegressionLoss::band_in_standard_units(eps, y_scaler.sd)?;
            Ok((GibbsLoss::Regression(loss), Some(eps)))
        })
        .collect()
}

/// A split prior's certificates on part B, one per loss (regression: one per ε; classifiers:
/// the Gibbs 0-1 loss): Q's `KL(Q‖P_A)` and marginals on B, the split's choices, plus `ln k`
/// when k losses are certified at once.
fn certify_on_part_b(
    q: &(impl KlToPrior + ?Sized),
    marginals: &Marginals,
    y_b: &[f64],
    mut choices: Vec<PenaltyTerm>,
    losses: &[(GibbsLoss, Option<f64>)],
    opts: &Resolved,
) -> Result<Vec<CertificateReport>> {
    choices.extend(super::certify::epsilon_union(losses));
    let spec = CertificateSpec::new(opts.delta, opts.term, choices);
    let (loss, eps): (Vec<GibbsLoss>, Vec<Option<f64>>) = losses.iter().cloned().unzip();
    let certificates = Certificate::for_losses(q, marginals, y_b, &loss, &spec)?;
    Ok(certificates
        .into_iter()
        .zip(eps)
        .map(|(c, e)| CertificateReport::new(c, e))
        .collect())
}

/// [`certify_on_part_b`] of a regression split prior: Q's (`q`) marginals from `posterior` at
/// part B's inputs, one certificate per ε's band loss.
fn certify_bands_on_part_b(
    q: &(impl KlToPrior + ?Sized),
    posterior: &GaussianPosterior,
    parts: &RegressionParts,
    choices: Vec<PenaltyTerm>,
    epsilons: &[f64],
    opts: &Resolved,
) -> Result<Vec<CertificateReport>> {
    let marginals = posterior.predict(parts.x_b.as_ref())?;
    let losses = band_losses(epsilons, &parts.y_scaler)?;
    certify_on_part_b(q, &marginals, &parts.y_b, choices, &losses, opts)
}

impl FittedModel {
    /// A split prior's part A refitted unlike the model's, on more than
    /// [`crate::kernel::start::WIDE_INPUTS`] inputs, in a model whose fit notes no wide start:
    /// the file was written before part A's fit started at the median distance (CHANGELOG,
    /// 2026-12-01), and the mismatch says so with the way forward. Other errors pass.
    pub(super) fn part_a_before_the_wide_start(&self, e: Error) -> Error {
        let wide = self.x_scaler.mean.len() > crate::kernel::start::WIDE_INPUTS;
        let noted = (self.report.notes.iter())
            .any(|n| n.starts_with(crate::kernel::start::WIDE_START_NOTE));
        match e {
            Error::ModelMismatch { part, reason } if wide && !noted => Error::ModelMismatch {
                part,
                reason: format!(
                    "{reason}; on more than {} inputs this file was written by a pacgp from before 2026-12-01, whose part A started at lengthscale 1 (this version starts it at the median distance): refit the model with this version",
                    crate::kernel::start::WIDE_INPUTS
                ),
            },
            e => e,
        }
    }

    /// The regression split prior's certificates: part A refitted (scalers, θ_A and σ_A² by
    /// ML-II from the spec's kernel) and checked against the model, Q rebuilt from it and the
    /// record's free parameters, certified on part B for every ε.
    pub(super) fn certify_split_prior(
        &self,
        record: &SplitRecord,
        sample: &Dataset,
        epsilons: &[f64],
        opts: &Resolved,
    ) -> Result<Vec<CertificateReport>> {
        let choices = self.choices()?;
        let parts = RegressionParts::of(sample, record.fraction, self.spec.seed)?;
        check_scalers(self, &parts.x_scaler, Some(&parts.y_scaler))?;
        let prior = SplitPrior::fit_ml2(
            &spec_kernel(self)?,
            parts.x_a.clone(),
            parts.y_a.clone(),
            self.spec.seed,
        )?;
        check_part_a(
            (&record.kernel_a, record.noise_a),
            (&prior.kernel, prior.noise_a),
        )?;
        let q = record.posterior_on(&prior, &parts)?;
        check_posterior(self.posterior()?, &q)?;
        certify_bands_on_part_b(&q, &q, &parts, choices, epsilons, opts)
    }

    /// The sparse split prior's certificates: part A refitted (scalers, θ_A, σ_A², Z and
    /// `q(u)` by VFE with the spec's M from its kernel) and checked against the record, Q
    /// rebuilt from it and the record's free parameters, certified on part B for every ε.
    pub(super) fn certify_sparse_split_prior(
        &self,
        record: &SparseSplitRecord,
        sample: &Dataset,
        epsilons: &[f64],
        opts: &Resolved,
    ) -> Result<Vec<CertificateReport>> {
        let choices = self.choices()?;
        let m = match &self.spec.method {
            Method::PacSgp(s) if matches!(s.prior, PacPrior::Split(_)) => {
                s.inducing.unwrap_or(crate::spec::DEFAULT_BASIS)
            }
            _ => {
                return Err(mismatch(
                    "split prior record",
                    "the spec is not pac-sgp with a split prior".into(),
                ))
            }
        };
        let parts = RegressionParts::of(sample, record.fraction, self.spec.seed)?;
        check_scalers(self, &parts.x_scaler, Some(&parts.y_scaler))?;
        let prior = SparseSplitPrior::fit_vfe(
            &spec_kernel(self)?,
            parts.x_a.as_ref(),
            &parts.y_a,
            m.min(parts.a.len()),
            self.spec.seed,
        )?;
        let stored = record.prior()?;
        check_part_a(
            (&stored.kernel, stored.noise_a),
            (&prior.kernel, prior.noise_a),
        )?;
        check_close_mat("split prior record's inducing inputs", &stored.z, &prior.z)?;
        check_close("split prior record's q(u) mean", &stored.a_a, &prior.a_a)?;
        check_close_mat(
            "split prior record's q(u) covariance",
            &stored.sigma_a,
            &prior.sigma_a,
        )?;
        let posterior = record.posterior_on(&prior, &parts)?;
        let p_a = prior.prior();
        check_posterior(self.posterior()?, &posterior)?;
        let q = PosteriorAgainst::new(&posterior, &p_a)?;
        certify_bands_on_part_b(&q, &posterior, &parts, choices, epsilons, opts)
    }

    /// The classifier split prior's certificate: the parts re-derived from the sample,
    /// part A's prior refitted as the fit did (scaler, θ_A per kernel structure, the nested
    /// choice of t and Catoni's λ) and checked against the record, Q rebuilt from it and the
    /// stored sites of part B and checked against the stored posterior, certified on part B.
    pub(super) fn certify_split_classifier(
        &self,
        record: &ClassifierSplitRecord,
        sample: &Dataset,
        opts: &Resolved,
    ) -> Result<Vec<CertificateReport>> {
        if let Method::Svgp(s) = &self.spec.method {
            return self.certify_svgp_split(s, record, sample, opts);
        }
        let choices = self.choices()?;
        let (split, optimise_sites) = classifier_split(&self.spec.method)?;
        let Task::Classification { likelihood, .. } = &self.task else {
            return Err(mismatch(
                "task",
                "a split classifier without a classification task".into(),
            ));
        };
        let config = crate::plan::split_config(&self.spec, split, optimise_sites);
        // Part A is refitted for the Gibbs classifier the fit was trained for.
        let classifier =
            crate::certificate::GibbsClassifier::of(likelihood, self.trained_predictor());
        let pa = crate::objective::gpc_split::part_a_prior(
            &spec_kernel(self)?,
            likelihood,
            sample,
            classifier,
            record.fraction,
            record.swapped,
            (record.menu as f64).ln(),
            &config,
        )?;
        check_scalers(self, &pa.x_scaler, None)?;
        check_kernel("split prior record's θ_A", &record.kernel_a, &pa.kernel)?;
        check_close(
            "split prior record's scales",
            &[record.prior_scale, record.mean_scale],
            &[pa.scale, pa.mean_scale],
        )?;
        check_close(
            "split prior record's Catoni λ",
            &record.lambda.into_iter().collect::<Vec<_>>(),
            &pa.lambda().into_iter().collect::<Vec<_>>(),
        )?;
        let sites = record.sites_of_b(self.posterior()?)?;
        let q = pa.posterior(&sites)?;
        check_posterior(self.posterior()?, &q)?;
        let b = sample.subset(&pa.part_b);
        let loss = GibbsLoss::Classification(self.gibbs_classifier(opts.predictor)?);
        certify_on_part_b(
            &q,
            &q.predict(pa.xb.as_ref())?,
            &b.y,
            choices,
            &[(loss, None)],
            opts,
        )
    }
}

impl FittedModel {
    /// pac-svgp with a split prior ([`crate::svgp::split`]): part A refitted as the fit did
    /// (scaler, wide start, θ_A, Z_A, `q_A` by the evidence lower bound), the record and the
    /// stored Q checked against it, Q rebuilt over part A's factorisation and certified on part
    /// B against `P_A`.
    fn certify_svgp_split(
        &self,
        s: &SvgpSpec,
        record: &ClassifierSplitRecord,
        sample: &Dataset,
        opts: &Resolved,
    ) -> Result<Vec<CertificateReport>> {
        if s.split.is_none() {
            return Err(mismatch(
                "split prior record",
                "the model has a split record and its spec no split prior".into(),
            ));
        }
        let choices = self.choices()?;
        let st = crate::plan::svgp_settings(&self.spec, s, sample.n());
        let kernel = spec_kernel(self)?;
        let pa = crate::svgp::split::part_a_prior(&kernel, sample, &st, record.fraction)?;
        check_scalers(self, &pa.x_scaler, None)?;
        check_kernel(
            "split prior record's θ_A",
            &record.kernel_a,
            &pa.prior.kernel,
        )?;
        let stored = self.posterior()?;
        let q = pa.posterior_of(stored)?;
        check_posterior(stored, &q)?;
        let loss = GibbsLoss::Classification(self.gibbs_classifier(opts.predictor)?);
        let spec = CertificateSpec::new(opts.delta, opts.term, choices);
        let certificate = pa.certify_on_b(&q, &loss, &spec)?;
        Ok(vec![CertificateReport::new(certificate, None)])
    }
}
