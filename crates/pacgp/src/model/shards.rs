//! A binary classifier's certificate on a training sample held in parts (Dask shards, row
//! blocks): each part sums its Gibbs loss ([`FittedModel::gibbs_risk_sum`], the map step), and
//! one certificate is assembled from the total ([`FittedModel::certify_risk_sum`], the reduce
//! step) by the one constructor, [`Certificate::of_risk_sum`]. It equals
//! [`FittedModel::certify`] on the whole sample to the rounding of the sum's order.

use faer::MatRef;

use super::{CertificateReport, CertifyOptions, FittedModel, Task};
use crate::certificate::{Certificate, CertificateSpec, GibbsLoss, RiskSum};
use crate::error::{Error, Result};

impl FittedModel {
    /// The Gibbs loss of a binary classifier's certified predictor summed over some rows of its
    /// training sample: raw inputs `x`, labels `y` coded −1/+1 (one part may hold one class).
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
        if let Some(&bad) = y.iter().find(|v| **v != 1.0 && **v != -1.0) {
            return Err(Error::InvalidParameter {
                name: "label",
                value: bad,
                reason: "labels must be −1 or +1",
            });
        }
        if y.is_empty() {
            return Ok(RiskSum::default()); // an empty shard adds nothing
        }
        let marginals = self
            .posterior
            .predict(self.standardised_inputs(x)?.as_ref())?;
        loss.risk_sum(y, &marginals)
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
        let certificate = Certificate::of_risk_sum(&self.posterior, sum, &loss, &spec)?;
        Ok(CertificateReport::new(certificate, None))
    }

    /// The loss and certificate settings of a binary classifier whose certificate is a sum
    /// over rows; other models are refused with the way forward.
    fn summable_loss(&self, opts: &CertifyOptions) -> Result<(GibbsLoss, CertificateSpec)> {
        let refuse = |why: &str| {
            Err(Error::Unsupported(format!(
                "a certificate summed over parts of the sample is offered for binary classifiers; {why}: certify it on the whole sample"
            )))
        };
        match &self.task {
            _ if self.classes().is_some() => return refuse("this model is multi-class"),
            Task::Classification {
                split_prior: Some(_),
                ..
            } => return refuse("this model's split prior refits on part of the sample"),
            Task::Classification { .. } | Task::Svm { .. } => {}
            _ => return refuse("this model is a regressor"),
        }
        if self.holdout.is_some() {
            return refuse("this model keeps a holdout that certify derives from the sample");
        }
        if !opts.epsilons.is_empty() {
            return Err(Error::Unsupported(
                "ε applies to regression models; a classifier's certificate bounds its 0-1 error"
                    .into(),
            ));
        }
        let r = self.resolve(opts)?;
        let loss = GibbsLoss::Classification(self.gibbs_classifier(r.predictor)?);
        let spec = CertificateSpec::new(r.delta, r.term, self.choices()?);
        Ok((loss, spec))
    }
}
