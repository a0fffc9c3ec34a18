//! The derandomised certificate on a fitted model's deployed predictor, beside its Gibbs
//! certificate ([`crate::certificate::deployed`] holds the bound; here the model supplies its
//! posterior on the sample, the prior's variances there and what `predict` returns).

use faer::MatRef;

use super::{FittedModel, Task};
use crate::certificate::deployed::{
    derandomised_classifier, derandomised_regressor, DeployedCertificate, DeployedPredictor,
    DerandomisedSample,
};
use crate::certificate::{CertificateSpec, GibbsPredictor};
use crate::data::Dataset;
use crate::error::Result;
use crate::posterior::{Marginals, MeanScaled};

impl FittedModel {
    /// The derandomised certificate on a binary classifier's (or the SVM's) label from its
    /// posterior's `marginals` on the standardised sample `xs`: the bound covers
    /// `sgn(μ + b)`, the labels of [`FittedModel::predict_labels`].
    pub(super) fn derandomised_classifier(
        &self,
        sample: &Dataset,
        xs: MatRef<'_, f64>,
        marginals: &Marginals,
        spec: &CertificateSpec,
    ) -> Result<DeployedCertificate> {
        let bias = self.gibbs_classifier(GibbsPredictor::Latent)?.bias;
        let predictor = match self.task {
            Task::Svm { .. } => DeployedPredictor::SvmSign,
            _ => DeployedPredictor::PosteriorMeanSign,
        };
        let family = MeanScaled::from_marginals(&self.posterior, xs, marginals.clone())?;
        let prior_var = self.posterior.prior.diag(xs)?;
        let on = DerandomisedSample {
            family: &family,
            prior_var: &prior_var,
            y: &sample.y,
            variance_ratio: self.posterior.variance_ratio_bound()?,
        };
        derandomised_classifier(&on, bias, predictor, spec)
    }

    /// The derandomised certificate on a regressor's mean at `epsilon` (target units) from
    /// its posterior's `marginals` on the standardised sample (`y_std`, deviation `sd`).
    pub(super) fn derandomised_regressor(
        &self,
        xs: MatRef<'_, f64>,
        marginals: &Marginals,
        y_std: &[f64],
        (epsilon, sd): (f64, f64),
        spec: &CertificateSpec,
    ) -> Result<DeployedCertificate> {
        let family = MeanScaled::from_marginals(&self.posterior, xs, marginals.clone())?;
        let prior_var = self.posterior.prior.diag(xs)?;
        let on = DerandomisedSample {
            family: &family,
            prior_var: &prior_var,
            y: y_std,
            variance_ratio: 1.0,
        };
        derandomised_regressor(&on, epsilon / sd, epsilon, spec)
    }
}
