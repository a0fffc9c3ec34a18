//! The derandomised certificate on a fitted model's deployed predictor, beside its Gibbs
//! certificate ([`crate::certificate::deployed`] holds the bound; here the model supplies its
//! posterior family on the sample, the prior's scale there and what `predict` returns).

use faer::MatRef;

use super::{FittedModel, Task};
use crate::certificate::deployed::{
    derandomised_classifier, derandomised_regressor, DeployedCertificate, DeployedPredictor,
    DerandomisedSample, PriorScale,
};
use crate::certificate::{CertificateSpec, GibbsPredictor};
use crate::data::TargetScaler;
use crate::error::Result;
use crate::posterior::MeanScaled;

impl FittedModel {
    /// The derandomised certificate on a binary classifier's (or the SVM's) label from its
    /// posterior `family` on the standardised sample `xs` with labels `y`: the bound covers
    /// `sgn(μ + b)`, the labels of [`FittedModel::predict_labels`].
    pub(super) fn derandomised_classifier(
        &self,
        family: &MeanScaled<'_>,
        xs: MatRef<'_, f64>,
        y: &[f64],
        spec: &CertificateSpec,
    ) -> Result<DeployedCertificate> {
        let bias = self.gibbs_classifier(GibbsPredictor::Latent)?.bias;
        let predictor = match self.task {
            Task::Svm { .. } => DeployedPredictor::SvmSign,
            _ => DeployedPredictor::PosteriorMeanSign,
        };
        let prior_var = self.posterior()?.prior.diag(xs)?;
        let scale = PriorScale {
            prior_var: &prior_var,
            variance_ratio: self.posterior()?.variance_ratio_bound()?,
        };
        derandomised_classifier(
            &DerandomisedSample { family, y },
            &scale,
            bias,
            predictor,
            spec,
        )
    }

    /// The derandomised certificate on a regressor's mean at `epsilon` (target units) from
    /// its posterior `family` on the sample standardised by `ys` (`y_std`).
    pub(super) fn derandomised_regressor(
        family: &MeanScaled<'_>,
        y_std: &[f64],
        (epsilon, ys): (f64, &TargetScaler),
        spec: &CertificateSpec,
    ) -> Result<DeployedCertificate> {
        let sample = DerandomisedSample { family, y: y_std };
        derandomised_regressor(&sample, ys.scale_length(epsilon), epsilon, spec)
    }
}
