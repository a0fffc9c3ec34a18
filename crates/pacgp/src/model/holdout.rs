//! A certificate on the deployed predictor from a held-out part of the sample (`fit
//! --certify-holdout F`). Before fitting, the one seeded sample split
//! ([`holdout_rows`], from the spec's seed) keeps a fraction F of the rows out; the fit — its
//! scalers, hyperparameters and posterior — sees only the rest. `certify` redoes the split
//! from the whole sample, refuses any sample but the one the record names (its size and
//! digest) and any record the spec does not give, certifies the Gibbs predictor on the fit
//! rows as before, and the deployed predictor (what `predict` returns) on the held-out rows by
//! the test-set bound ([`binomial_tail_inversion`], Langford 2005 Th. 3.3).
//!
//! The two statements hold together by a union bound: each is made at δ/2 (with k values of ε,
//! each held-out bound at δ/(2k)), so with probability ≥ 1 − δ over the sample all hold.

use serde::{Deserialize, Serialize};

use super::{CertificateReport, FittedModel, Task};
use crate::bounds::binomial_tail_inversion;
use crate::certificate::deployed::{DeployedBound, DeployedCertificate, DeployedPredictor};
use crate::data::{holdout_rows, Dataset};
use crate::error::{Error, Result};

/// What `certify` needs to re-derive the held-out rows: the split and the sample it splits.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HoldoutRecord {
    /// Fraction of the sample held out (the spec's `certify_holdout`).
    pub fraction: f64,
    /// Seed of the split (the spec's seed).
    pub seed: u64,
    /// Rows of the whole sample (fit rows and held-out rows).
    pub n: usize,
    /// Held-out rows.
    pub n_holdout: usize,
    /// [`crate::data::sample_digest`] of the whole sample.
    pub sample_digest: String,
}

/// The rows of a sample split into the fit part and the held-out part.
#[derive(Clone, Debug)]
pub struct HoldoutParts {
    /// Rows the fit sees.
    pub fit: Dataset,
    /// Rows kept out of the fit.
    pub holdout: Dataset,
    /// The record of the split.
    pub record: HoldoutRecord,
}

impl HoldoutParts {
    /// Split `sample` by [`holdout_rows`] (part A of the seeded [`SampleSplit`] at
    /// `fraction` held out, part B fitted).
    ///
    /// [`SampleSplit`]: crate::data::SampleSplit
    pub fn of(sample: &Dataset, fraction: f64, seed: u64) -> Result<Self> {
        let (held, fitted) = holdout_rows(sample, fraction, seed)?;
        Ok(Self {
            fit: sample.subset(&fitted),
            holdout: sample.subset(&held),
            record: HoldoutRecord {
                fraction,
                seed,
                n: sample.n(),
                n_holdout: held.len(),
                sample_digest: crate::data::sample_digest(sample),
            },
        })
    }
}

impl FittedModel {
    /// The held-out parts of `sample` this model was fitted with, `None` for a model fitted on
    /// its whole sample. The record must be the spec's (fraction and seed), `sample` the one
    /// it names (size and digest), and the fit part the model's training sample; otherwise
    /// [`Error::ModelMismatch`] or [`Error::NotTrainingSample`].
    pub fn holdout_parts(&self, sample: &Dataset) -> Result<Option<HoldoutParts>> {
        let mismatch = |reason: String| Error::ModelMismatch {
            part: "holdout record".into(),
            reason,
        };
        let record = match (&self.holdout, self.spec.certify_holdout) {
            (None, None) => return Ok(None),
            (Some(r), Some(f)) if r.fraction == f && r.seed == self.spec.seed => r,
            (Some(r), Some(f)) => {
                return Err(mismatch(format!(
                    "it holds out F = {} with seed {}, the spec F = {f} with seed {}",
                    r.fraction, r.seed, self.spec.seed
                )))
            }
            (None, Some(f)) => {
                return Err(mismatch(format!(
                    "the spec holds out F = {f} and the file has no record of the split"
                )))
            }
            (Some(_), None) => {
                return Err(mismatch(
                    "the file records a split and its spec holds nothing out".into(),
                ))
            }
        };
        if sample.n() != record.n {
            return Err(Error::NotTrainingSample {
                reason: format!(
                    "it has {} rows and the model was fitted and held out on {}",
                    sample.n(),
                    record.n
                ),
            });
        }
        if crate::data::sample_digest(sample) != record.sample_digest {
            return Err(Error::NotTrainingSample {
                reason: "its rows differ from the rows the model was fitted and held out on (digest mismatch)".into(),
            });
        }
        let parts = HoldoutParts::of(sample, record.fraction, record.seed)?;
        if parts.record != *record {
            return Err(mismatch(
                "it is not the split the sample gives at its fraction and seed".into(),
            ));
        }
        self.check_training_sample(&parts.fit).map_err(|_| {
            mismatch("the rows it leaves to fit are not the rows the model was fitted on".into())
        })?;
        Ok(Some(parts))
    }

    /// The deployed predictor's errors on `held` and their test-set bound at `delta`
    /// (regression: the ε-band loss at `epsilon`).
    pub(super) fn deployed_certificate(
        &self,
        held: &Dataset,
        epsilon: Option<f64>,
        delta: f64,
        joint_delta: f64,
    ) -> Result<DeployedCertificate> {
        let (predictor, errors) = match (&self.task, epsilon) {
            (Task::Regression { .. }, Some(eps)) => {
                let mean = self.predict_regression(held.x.as_ref())?.mean;
                let misses = mean
                    .iter()
                    .zip(&held.y)
                    .filter(|(m, y)| (*y - *m).abs() > eps)
                    .count();
                (DeployedPredictor::PosteriorMean, misses)
            }
            (Task::Regression { .. }, None) => {
                return Err(Error::Unsupported(
                    "a regressor's held-out certificate needs the ε of its loss".into(),
                ))
            }
            (Task::MultiOutput { .. }, _) => return Err(super::outputs::certified_per_output()),
            (Task::OneVsRest { .. } | Task::Softmax { .. }, _) => {
                crate::multiclass::check_labels(&held.y, self.classes().map_or(0, |c| c.k()))?;
                let labels = self.predict_classes(held.x.as_ref())?.labels;
                let wrong = labels
                    .iter()
                    .zip(&held.y)
                    .filter(|(l, y)| **l as f64 != **y)
                    .count();
                (DeployedPredictor::PredictedClass, wrong)
            }
            (Task::Classification { .. } | Task::Svm { .. }, _) => {
                // `predict`'s label: the sign of μ + b.
                let labels = self.predict_labels(held.x.as_ref())?;
                let wrong = labels.iter().zip(&held.y).filter(|(l, y)| l != y).count();
                let predictor = match self.task {
                    Task::Svm { .. } => DeployedPredictor::SvmSign,
                    _ => DeployedPredictor::PosteriorMeanSign,
                };
                (predictor, wrong)
            }
        };
        let n = held.n();
        Ok(DeployedCertificate {
            predictor,
            bound: DeployedBound::BinomialTail,
            n,
            errors,
            error_rate: errors as f64 / n as f64,
            epsilon,
            delta,
            joint_delta,
            value: binomial_tail_inversion(errors, n, delta)?,
            derandomised: None,
        })
    }

    /// [`FittedModel::certify`] of a model fitted with a holdout: the PAC-Bayes certificates
    /// on the fit rows at δ/2, each with the deployed predictor's test-set bound on the
    /// held-out rows at δ/(2k) for k certificates.
    pub(super) fn certify_with_holdout(
        &self,
        parts: &HoldoutParts,
        opts: &super::CertifyOptions,
    ) -> Result<Vec<CertificateReport>> {
        let delta = opts.delta.unwrap_or(self.spec.delta);
        crate::bounds::check_delta(delta)?;
        let halved = super::CertifyOptions {
            delta: Some(delta / 2.0),
            ..opts.clone()
        };
        let mut reports = self.certify_fit_rows(&parts.fit, &halved)?;
        let each = delta / 2.0 / reports.len() as f64;
        for report in &mut reports {
            report.deployed =
                Some(self.deployed_certificate(&parts.holdout, report.epsilon, each, delta)?);
        }
        Ok(reports)
    }
}
