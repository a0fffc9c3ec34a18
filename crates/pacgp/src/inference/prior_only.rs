//! A toy, test-only classifier inference method: the prior itself (no site learns anything).
//! It exists to show that a method is its home plus one registration line (the `mod` line in
//! [`super`]): fitting, the certificate, the approximate and the exact leave-one-out reach it
//! through [`ClassifierInference`] alone, and each has a closed form to check against.

use faer::Mat;

use super::{check_classification, ClassifierFit, ClassifierInference, Problem};
use crate::error::Result;
use crate::linalg::Cholesky;
use crate::posterior::GaussianPosterior;

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
}
