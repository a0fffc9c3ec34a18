//! A toy, test-only classifier inference method: the prior itself (no site learns anything).
//! It exists to show that a method is its home plus its registration (the `mod` line and the
//! line of [`super::Inference`]'s list in [`super`], its name's line in
//! [`crate::vocabulary::MethodName`]): a user names it, and the spec, the plan, the cost model,
//! fitting, the certificate, the approximate and the exact leave-one-out and the model file
//! reach it through [`ClassifierInference`], [`InferenceSettings`] and [`NamedInference`]
//! alone. Each has a closed form to check against.

use faer::Mat;

use super::{check_classification, ClassifierFit, ClassifierInference, Problem};
use super::{FitWork, InferenceMethod, InferenceOptions, InferenceSettings};
use super::{LikelihoodChoice, NamedInference};
use crate::error::Result;
use crate::likelihood::Likelihood;
use crate::linalg::Cholesky;
use crate::posterior::GaussianPosterior;
use crate::vocabulary::{MethodName, SpecOption};

/// The prior as the posterior: every site has precision 0 and α = 0.
#[derive(Clone, Copy, Debug)]
pub struct PriorOnly;

impl ClassifierInference for PriorOnly {
    fn name(&self) -> &'static str {
        "prior-only"
    }

    fn fit(&self, p: Problem<'_>) -> Result<ClassifierFit> {
        check_classification(p.x, p.y, p.lik)?;
        let n = p.x.nrows();
        let identity = Cholesky::from_lower(Mat::identity(n, n), 0.0);
        let posterior = GaussianPosterior::sites(
            p.kernel.clone(),
            p.x.to_owned(),
            vec![0.0; n],
            vec![0.0; n],
            identity,
        );
        Ok(ClassifierFit::of_posterior(posterior, "the prior"))
    }
}

/// `prior-only` in the fit spec: no settings (probit).
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct PriorOnlySpec {}

impl InferenceSettings for PriorOnlySpec {
    fn method(&self, _seed: u64) -> Result<(InferenceMethod, Likelihood)> {
        Ok((InferenceMethod::new(PriorOnly), Likelihood::probit()))
    }

    /// The certificate's work on dense sites, and one factor.
    fn fit_work(&self) -> FitWork {
        FitWork::Dense {
            factors: 1.0,
            cubes: 0.0,
            matvecs: 0.0,
        }
    }
}

impl NamedInference for PriorOnlySpec {
    const NAME: MethodName = MethodName::PriorOnly;
    const READS: &'static [SpecOption] = &[];
    const LIKELIHOODS: LikelihoodChoice = LikelihoodChoice::Probit;

    fn from_options(_: &InferenceOptions) -> Self {
        Self {}
    }
}

#[cfg(test)]
mod tests {
    use super::PriorOnly;
    use crate::bounds::ConfidenceTerm;
    use crate::certificate::{Certificate, CertificateSpec, GibbsClassifier, GibbsLoss};
    use crate::inference::InferenceMethod;
    use crate::kernel::Kernel;
    use crate::likelihood::Likelihood;
    use crate::loo::{classifier_loo, LooEstimator, LooMode};

    /// The prior's certificate and leave-one-out have closed forms: KL = 0, the Gibbs
    /// classifier `sgn f` with `f ~ N(0, k(x, x))` errs with probability ½ at every point, and
    /// every leave-one-out margin is `y_i·0 = 0` (an error), by cavities and by refits alike.
    #[test]
    fn the_prior_as_a_method_certifies_and_leaves_one_out_through_the_seams() {
        let x = faer::Mat::from_fn(24, 1, |i, _| i as f64 / 6.0 - 2.0);
        let y: Vec<f64> = (0..24)
            .map(|i| if i % 5 < 2 { 1.0 } else { -1.0 })
            .collect();
        let method = InferenceMethod::new(PriorOnly);
        let lik = Likelihood::probit();
        let fit = method
            .fit(&Kernel::se_iso(1.0, 2.0), &lik, x.as_ref(), &y)
            .unwrap();
        let loss = GibbsLoss::Classification(GibbsClassifier::latent(&lik));
        let spec = CertificateSpec::new(0.05, ConfidenceTerm::Maurer, vec![]);
        let c = Certificate::of_posterior(&fit.posterior, x.as_ref(), &y, &loss, &spec).unwrap();
        assert_eq!(c.kl, 0.0);
        assert!(
            (c.empirical_risk - 0.5).abs() < 1e-15,
            "{}",
            c.empirical_risk
        );
        let loo = classifier_loo(&method, &lik, x.as_ref(), &y, &fit, LooMode::Both).unwrap();
        let approx = loo.approx.unwrap();
        assert_eq!(approx.estimator, LooEstimator::Cavity);
        assert_eq!(approx.loo.errors, y.len());
        assert_eq!(loo.exact.unwrap().loo_margins, vec![0.0; y.len()]);
    }

    /// The same closed forms from the user's side: named, checked, priced, fitted, written to
    /// a model file and read back, and certified with its leave-one-out — through the spec,
    /// the plan and the cost model, which reach the method only through its home.
    #[test]
    fn the_prior_as_a_method_a_user_names() {
        use crate::cost::footprint;
        use crate::data::Dataset;
        use crate::fit::fit;
        use crate::loo::LooMode;
        use crate::model::{CertifyOptions, FittedModel};
        use crate::spec::{FitOptions, LooRequest, MethodName};

        let x = faer::Mat::from_fn(24, 1, |i, _| i as f64 / 6.0 - 2.0);
        let y = (0..24)
            .map(|i| if i % 5 < 2 { 1.0 } else { -1.0 })
            .collect();
        let data = Dataset::new(x, y).unwrap();
        let spec = FitOptions::default().check(MethodName::PriorOnly).unwrap();
        assert_eq!(spec.method_name(), MethodName::PriorOnly);
        assert!(footprint(&spec.method, 2).is_dense());
        let model = fit(&spec, &data, None).unwrap();
        let text = serde_json::to_string(&model).unwrap();
        assert!(text.contains(r#""inference":"prior-only""#), "{text}");
        let model = FittedModel::from_json(&text, "toy").unwrap();
        let opts = CertifyOptions {
            loo: LooRequest::Mode(LooMode::Both),
            ..Default::default()
        };
        let report = &model.certify(&data, &opts).unwrap()[0];
        assert_eq!(report.certificate.kl, 0.0);
        assert!((report.certificate.empirical_risk - 0.5).abs() < 1e-15);
        assert_eq!(report.loo_error, Some(1.0));
        assert_eq!(report.loo_exact_error, Some(1.0));
    }
}
