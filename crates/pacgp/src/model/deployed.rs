//! The derandomised certificate on a fitted model's deployed predictor, beside its Gibbs
//! certificate ([`crate::certificate::deployed`] holds the bound; here the model supplies its
//! posterior family on the sample, the prior's scale there and what `predict` returns).

use faer::MatRef;

use super::{CertifyOptions, FittedModel, Task};
use crate::certificate::deployed::{
    classifier_forms_with_c_bound, derandomised_classifier, derandomised_regressor,
    DeployedCertificate, DeployedPredictor, DerandomisedSample, PriorScale,
};
use crate::certificate::{CertificateSpec, GibbsPredictor};
use crate::data::Dataset;
use crate::error::Result;
use crate::loss::RegressionLoss;
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
        let (bias, predictor, prior_var, kappa) = self.deployed_label(xs)?;
        let scale = PriorScale {
            prior_var: &prior_var,
            variance_ratio: kappa,
        };
        derandomised_classifier(
            &DerandomisedSample { family, y },
            &scale,
            bias,
            predictor,
            spec,
        )
    }

    /// What a binary classifier's derandomised bound needs of the model besides its sample:
    /// the bias b of `sgn(μ + b)`, which predictor that is, the prior's variances at the
    /// standardised rows `xs` and κ.
    fn deployed_label(
        &self,
        xs: MatRef<'_, f64>,
    ) -> Result<(f64, DeployedPredictor, Vec<f64>, f64)> {
        let bias = self.gibbs_classifier(GibbsPredictor::Latent)?.bias;
        let predictor = match self.task {
            Task::Svm { .. } => DeployedPredictor::SvmSign,
            _ => DeployedPredictor::PosteriorMeanSign,
        };
        let posterior = self.posterior()?;
        Ok((
            bias,
            predictor,
            posterior.prior.diag(xs)?,
            posterior.variance_ratio_bound()?,
        ))
    }

    /// The comparison of `pacgp reproduce deployed` (issue 42) on the training `sample`: the
    /// least bound of each form of the deployed certificate's grid enlarged by the C-bound
    /// (Germain et al. 2015, PAC-Bound 1), priced `ln` of the enlarged grid
    /// ([`classifier_forms_with_c_bound`]; a one-vs-rest vote's in
    /// [`crate::certificate::deployed::majority_vote_forms_with_c_bound`]). `None` where the
    /// deployed certificate is not one of those grids (regressors, split priors, a holdout,
    /// softmax). The certificate itself does not take the C-bound.
    pub fn deployed_forms_with_c_bound(
        &self,
        sample: &Dataset,
        opts: &CertifyOptions,
    ) -> Result<Option<Vec<DeployedCertificate>>> {
        if self.holdout_parts(sample)?.is_some() {
            return Ok(None);
        }
        self.check_training_sample(sample)?;
        let r = self.resolve(opts)?;
        match &self.task {
            Task::OneVsRest { .. } => self.one_vs_rest_forms_with_c_bound(sample, &r).map(Some),
            Task::Classification {
                posterior,
                split_prior: None,
                ..
            }
            | Task::Svm { posterior, .. } => {
                let (xs, family, spec) = self.binary_family(posterior, sample, &r)?;
                let (bias, predictor, prior_var, kappa) = self.deployed_label(xs.as_ref())?;
                let scale = PriorScale {
                    prior_var: &prior_var,
                    variance_ratio: kappa,
                };
                let sample = DerandomisedSample {
                    family: &family,
                    y: &sample.y,
                };
                classifier_forms_with_c_bound(&sample, &scale, bias, predictor, &spec).map(Some)
            }
            _ => Ok(None),
        }
    }

    /// The derandomised certificate on a regressor's mean, ε-band loss `band` on the
    /// standardised sample `y_std` (`epsilon` in target units), from its posterior `family`.
    pub(super) fn derandomised_regressor(
        family: &MeanScaled<'_>,
        y_std: &[f64],
        (band, epsilon): (&RegressionLoss, f64),
        spec: &CertificateSpec,
    ) -> Result<DeployedCertificate> {
        let sample = DerandomisedSample { family, y: y_std };
        derandomised_regressor(&sample, band, epsilon, spec)
    }
}
