//! Naive mean field as a classifier inference method ([`ClassifierInference`]): its fit, its
//! linear-response leave-one-out (seed 001 eq. 17.29) and its refits from the full-data
//! embedding strengths (Algorithm 17.1 started there).

use super::{mean_field, mean_field_warm, MeanFieldConfig};
use crate::error::Result;
use crate::inference::{entries_at, ApproxLooKind, ClassifierFit, ClassifierInference};
use crate::inference::{LeftOut, Problem, WarmStart};

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
