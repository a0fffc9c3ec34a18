//! Naive mean field as a classifier inference method ([`ClassifierInference`]): its fit, its
//! linear-response leave-one-out (seed 001 eq. 17.29) and its refits from the full-data
//! embedding strengths (Algorithm 17.1 started there).

use super::{mean_field, mean_field_warm, MeanFieldConfig};
use crate::error::Result;
use crate::inference::{entries_at, ApproxLooKind, ClassifierFit, ClassifierInference};
use crate::inference::{FitWork, InferenceMethod, InferenceOptions, InferenceSettings};
use crate::inference::{LeftOut, Problem, WarmStart};
use crate::inference::{LikelihoodChoice, NamedInference};
use crate::likelihood::Likelihood;
use crate::vocabulary::SpecError;
use crate::vocabulary::{MethodName, SpecOption};

impl ClassifierInference for MeanFieldConfig {
    fn name(&self) -> &'static str {
        "mean-field"
    }

    fn fit(&self, p: Problem<'_>) -> Result<ClassifierFit> {
        mean_field(p.kernel, p.lik, p.x, p.y, self).map(|m| m.fit)
    }

    fn approximate_loo(&self) -> ApproxLooKind {
        ApproxLooKind::LinearResponse
    }

    fn input_noise(&self) -> f64 {
        self.input_noise
    }

    /// The full-data embedding strengths `α_mf = y ∘ α`.
    fn warm_start(&self, fit: &ClassifierFit, y: &[f64]) -> Result<WarmStart> {
        let post = &fit.posterior;
        if !fit.has_full_basis(y) {
            return Ok(WarmStart::None);
        }
        Ok(WarmStart::MeanField(
            y.iter().zip(&post.alpha).map(|(y, a)| y * a).collect(),
        ))
    }

    /// Algorithm 17.1 from the full-data strengths without `α_i`.
    fn refit_without(&self, p: Problem<'_>, out: &LeftOut<'_>) -> Result<ClassifierFit> {
        match out.start {
            WarmStart::MeanField(a) => {
                let a = entries_at(a, out.train);
                Ok(mean_field_warm(p.kernel, p.lik, p.x, p.y, self, &a)?.fit)
            }
            _ => self.fit(p),
        }
    }
}

/// Iterations of Algorithm 17.1 ([`super::mean_field`], cap 1 000): 493 on the mean-field row's
/// chosen kernel (docs/performance.md, "Cost model").
const MEAN_FIELD_ITERATIONS: f64 = 500.0;

/// `mean-field` in the fit spec: the data model's flip noise κ and input noise v.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct MeanFieldSpec {
    /// Label flip probability κ ∈ [0, ½).
    pub kappa: f64,
    /// Input-noise variance v ≥ 0.
    pub input_noise: f64,
}

impl InferenceSettings for MeanFieldSpec {
    fn check(&self) -> std::result::Result<(), SpecError> {
        if !(0.0..0.5).contains(&self.kappa) {
            return Err(SpecError::out_of_range(
                SpecOption::Kappa,
                self.kappa,
                "in [0, 0.5)",
            ));
        }
        if !(self.input_noise >= 0.0 && self.input_noise.is_finite()) {
            return Err(SpecError::out_of_range(
                SpecOption::InputNoise,
                self.input_noise,
                "non-negative and finite (an input-noise variance)",
            ));
        }
        Ok(())
    }

    fn method(&self, _seed: u64) -> Result<(InferenceMethod, Likelihood)> {
        let method = InferenceMethod::new(MeanFieldConfig {
            input_noise: self.input_noise,
            ..Default::default()
        });
        Ok((method, Likelihood::flip_noise(self.kappa)?))
    }

    /// Each iteration one activation product `K(y∘α)`; then one factor of `I + Π½KΠ½`.
    fn fit_work(&self) -> FitWork {
        FitWork::Dense {
            factors: 1.0,
            cubes: 0.0,
            matvecs: MEAN_FIELD_ITERATIONS,
        }
    }
}

impl NamedInference for MeanFieldSpec {
    const NAME: MethodName = MethodName::MeanField;
    const READS: &'static [SpecOption] = &[SpecOption::Kappa, SpecOption::InputNoise];
    const LIKELIHOODS: LikelihoodChoice = LikelihoodChoice::Fixed;

    fn from_options(o: &InferenceOptions) -> Self {
        Self {
            kappa: o.kappa.unwrap_or(0.0),
            input_noise: o.input_noise.unwrap_or(1.0),
        }
    }
}
