//! A classifier's certificate on a training sample held in parts (Dask shards, row blocks):
//! each part sums its Gibbs loss ([`FittedModel::gibbs_risk_sum`], the map step), and one
//! certificate is assembled from the total ([`FittedModel::certify_risk_sum`], the reduce
//! step) by the one constructor, [`Certificate::of_risk_sum`]. It equals
//! [`FittedModel::certify`] on the whole sample to the rounding of the sum's order.

use faer::MatRef;

use super::{CertificateReport, CertifyOptions, FittedModel, Task};
use crate::certificate::{Certificate, CertificateSpec, GibbsLoss, MultiClassRisk, RiskSum};
use crate::error::{Error, Result};
use crate::posterior::GaussianPosterior;

impl FittedModel {
    /// The Gibbs loss of a classifier's certified predictor summed over some rows of its
    /// training sample: raw inputs `x`; labels coded −1/+1 (binary) or class indices 0..K−1
    /// (one-vs-rest). One part may hold one class.
    pub fn gibbs_risk_sum(
        &self,
        x: MatRef<'_, f64>,
        y: &[f64],
        opts: &CertifyOptions,
    ) -> Result<RiskSum> {
        let (loss, _) = self.summable_loss(opts)?;
        if x.nrows() != y.len() {
            return Err(Error::ShapeMismatch {
                what: "labels of the rows",
                expected: format!("{} labels, one per row", x.nrows()),
                found: format!("{}", y.len()),
            });
        }
        let multiclass = self.classes().map(|c| c.k());
        let bad = y.iter().find(|&&v| match multiclass {
            Some(k) => !(v.fract() == 0.0 && v >= 0.0 && v < k as f64),
            None => v != 1.0 && v != -1.0,
        });
        if let Some(&bad) = bad {
            return Err(Error::InvalidParameter {
                name: "label",
                value: bad,
                reason: if multiclass.is_some() {
                    "multi-class labels must be class indices 0, 1, …, K − 1"
                } else {
                    "labels must be −1 or +1"
                },
            });
        }
        if y.is_empty() {
            return Ok(RiskSum::default()); // an empty shard adds nothing
        }
        let xs = self.standardised_inputs(x)?;
        if multiclass.is_some() {
            let r = self.resolve(opts)?;
            let scores = self.class_scores(xs.as_ref(), r.predictor)?;
            return loss.risk_sum(y, scores.as_slice());
        }
        loss.risk_sum(y, &self.posterior()?.predict(xs.as_ref())?)
    }

    /// The certificate from the Gibbs loss summed over the whole training sample (the parts'
    /// [`FittedModel::gibbs_risk_sum`]s added): the one `certify` gives on that sample, with no
    /// leave-one-out estimate (the rows are not here). The rows are not checked against the
    /// model's digest, only counted: the caller vouches that they are the training sample.
    pub fn certify_risk_sum(
        &self,
        sum: RiskSum,
        opts: &CertifyOptions,
    ) -> Result<CertificateReport> {
        let (loss, spec) = self.summable_loss(opts)?;
        if sum.rows != self.n_train {
            return Err(Error::NotTrainingSample {
                reason: format!(
                    "the summed loss covers {} rows; the model was fitted on {}",
                    sum.rows, self.n_train
                ),
            });
        }
        let certificate = if self.classes().is_some() {
            let (_, members) = self.members()?;
            let posteriors: Vec<&GaussianPosterior> = members
                .iter()
                .map(FittedModel::posterior)
                .collect::<Result<_>>()?;
            Certificate::of_risk_sum(posteriors.as_slice(), sum, &loss, &spec)?
        } else {
            Certificate::of_risk_sum(self.posterior()?, sum, &loss, &spec)?
        };
        Ok(CertificateReport::new(certificate, None))
    }

    /// The loss and certificate settings of a classifier whose certificate is a sum over
    /// rows; other models are refused with the way forward.
    fn summable_loss(&self, opts: &CertifyOptions) -> Result<(GibbsLoss, CertificateSpec)> {
        let refuse = |why: &str| {
            Err(Error::Unsupported(format!(
                "a certificate summed over parts of the sample is offered for binary and one-vs-rest classifiers; {why}: certify it on the whole sample"
            )))
        };
        let multiclass = match &self.task {
            Task::OneVsRest { .. } => true,
            Task::Softmax { .. } => {
                return refuse("the softmax model's risk is sampled over the whole sample")
            }
            Task::Classification {
                split_prior: Some(_),
                ..
            } => return refuse("this model's split prior refits on part of the sample"),
            Task::Classification { .. } | Task::Svm { .. } => false,
            _ => return refuse("this model is a regressor"),
        };
        if self.holdout.is_some() || self.spec.certify_holdout.is_some() {
            return refuse("this model keeps a holdout that certify derives from the sample");
        }
        // The map and the reduce steps must bound the same predictor: the trained one.
        if opts
            .predictor
            .is_some_and(|p| p != self.trained_predictor())
        {
            return refuse(
                "it covers the Gibbs classifier the model was trained for (no predictor option)",
            );
        }
        if !opts.epsilons.is_empty() {
            return Err(Error::Unsupported(
                "ε applies to regression models; a classifier's certificate bounds its 0-1 error"
                    .into(),
            ));
        }
        let r = self.resolve(opts)?;
        if multiclass {
            let spec = CertificateSpec::new(r.delta, r.term, self.multiclass_choices()?);
            return Ok((GibbsLoss::MultiClass(MultiClassRisk::Quadrature), spec));
        }
        let loss = GibbsLoss::Classification(self.gibbs_classifier(r.predictor)?);
        let spec = CertificateSpec::new(r.delta, r.term, self.choices()?);
        Ok((loss, spec))
    }
}
