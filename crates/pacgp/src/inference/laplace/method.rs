//! Laplace as a classifier inference method ([`ClassifierInference`]): its fit, its
//! leave-one-out refits from the full-data mode and ML-II on its evidence (GPML §3.4).

use super::{laplace, laplace_warm, LaplaceConfig};
use crate::error::Result;
use crate::inference::evidence::fit_laplace_ml2;
use crate::inference::{entries_at, ClassifierFit, ClassifierInference, LeftOut, Ml2Fit};
use crate::inference::{FitWork, InferenceMethod, InferenceOptions, InferenceSettings};
use crate::inference::{LikelihoodChoice, NamedInference};
use crate::inference::{Ml2Settings, Problem, WarmStart};
use crate::likelihood::Likelihood;
use crate::vocabulary::LikelihoodName;
use crate::vocabulary::{MethodName, SpecOption};

impl ClassifierInference for LaplaceConfig {
    fn name(&self) -> &'static str {
        "laplace"
    }

    fn fit(&self, p: Problem<'_>) -> Result<ClassifierFit> {
        laplace(p.kernel, p.lik, p.x, p.y, self)
    }

    /// Newton restarts from the full-data mode `f̂` without row i.
    fn warm_start(&self, fit: &ClassifierFit, y: &[f64]) -> Result<WarmStart> {
        Ok(match fit.full_basis_means(y)? {
            Some(f) => WarmStart::Laplace(f),
            None => WarmStart::None,
        })
    }

    fn refit_without(&self, p: Problem<'_>, out: &LeftOut<'_>) -> Result<ClassifierFit> {
        match out.start {
            WarmStart::Laplace(f) => {
                laplace_warm(p.kernel, p.lik, p.x, p.y, self, &entries_at(f, out.train))
            }
            _ => self.fit(p),
        }
    }

    /// ML-II on the Laplace evidence, then this method's own fit at the snapped θ,
    /// warm-started from the ML-II mode there.
    fn ml2(&self, p: Problem<'_>, settings: &Ml2Settings) -> Result<Option<Ml2Fit>> {
        let r = fit_laplace_ml2(p, &settings.evidence_config())?;
        let at = Problem {
            kernel: &r.kernel,
            ..p
        };
        let fit = match &r.warm {
            WarmStart::Laplace(f0) => laplace_warm(at.kernel, at.lik, at.x, at.y, self, f0)?,
            _ => self.fit(at)?,
        };
        Ok(Some((fit, r.report)))
    }
}

/// Newton steps of the mode search from zero ([`super::find_mode`], cap 100): 6–9 on the
/// cost model's workloads; one more factor at the mode.
pub(crate) const NEWTON_STEPS: f64 = 8.0;

/// `laplace` in the fit spec: the link of its likelihood.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct LaplaceSpec {
    /// Probit or logistic.
    pub likelihood: LikelihoodName,
}

impl InferenceSettings for LaplaceSpec {
    fn likelihood(&self) -> LikelihoodName {
        self.likelihood
    }

    fn method(&self, _seed: u64) -> Result<(InferenceMethod, Likelihood)> {
        let method = InferenceMethod::new(LaplaceConfig::default());
        Ok((method, Likelihood::named(self.likelihood)))
    }

    /// A factor per Newton step and one at the mode.
    fn fit_work(&self) -> FitWork {
        FitWork::Dense {
            factors: NEWTON_STEPS + 1.0,
            cubes: 0.0,
            matvecs: 0.0,
        }
    }
}

impl NamedInference for LaplaceSpec {
    const NAME: MethodName = MethodName::Laplace;
    const READS: &'static [SpecOption] = &[];
    const LIKELIHOODS: LikelihoodChoice = LikelihoodChoice::ProbitOrLogistic;

    fn from_options(o: &InferenceOptions) -> Self {
        Self {
            likelihood: o.likelihood,
        }
    }
}
