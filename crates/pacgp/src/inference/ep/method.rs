//! Expectation propagation as a classifier inference method ([`ClassifierInference`]): its
//! fit, its leave-one-out refits from the full-data sites and ML-II on `ln Z_EP` (GPML §3.6).

use super::{ep, ep_warm, EpConfig, EpSites};
use crate::error::Result;
use crate::inference::evidence::fit_ep_ml2;
use crate::inference::{entries_at, ClassifierFit, ClassifierInference, LeftOut, Ml2Fit};
use crate::inference::{FitWork, InferenceMethod, InferenceOptions, InferenceSettings};
use crate::inference::{LikelihoodChoice, NamedInference};
use crate::inference::{Ml2Settings, Problem, WarmStart};
use crate::likelihood::Likelihood;
use crate::posterior::Covariance;
use crate::vocabulary::{MethodName, SpecOption};

impl ClassifierInference for EpConfig {
    fn name(&self) -> &'static str {
        "ep"
    }

    fn fit(&self, p: Problem<'_>) -> Result<ClassifierFit> {
        ep(p.kernel, p.lik, p.x, p.y, self)
    }

    /// The full-data sites, read back from the site form: `τ̃ = π`, `ν̃ = α + πμ`
    /// (the cavity LOO module's doc, `loo::cavity`).
    fn warm_start(&self, fit: &ClassifierFit, y: &[f64]) -> Result<WarmStart> {
        let post = &fit.posterior;
        let (Some(mu), Covariance::Sites { sqrt_pi, .. }) = (fit.full_basis_means(y)?, &post.cov)
        else {
            return Ok(WarmStart::None);
        };
        let tau: Vec<f64> = sqrt_pi.iter().map(|s| s * s).collect();
        let nu = (0..y.len())
            .map(|i| post.alpha[i] + tau[i] * mu[i])
            .collect();
        Ok(WarmStart::Ep(EpSites { tau, nu }))
    }

    /// EP restarts from the full-data sites without site i.
    fn refit_without(&self, p: Problem<'_>, out: &LeftOut<'_>) -> Result<ClassifierFit> {
        match out.start {
            WarmStart::Ep(s) => {
                let init = EpSites {
                    tau: entries_at(&s.tau, out.train),
                    nu: entries_at(&s.nu, out.train),
                };
                Ok(ep_warm(p.kernel, p.lik, p.x, p.y, self, &init)?.0)
            }
            _ => self.fit(p),
        }
    }

    /// ML-II on `ln Z_EP`, then this method's own fit at the snapped θ, warm-started from
    /// the ML-II sites there.
    fn ml2(&self, p: Problem<'_>, settings: &Ml2Settings) -> Result<Option<Ml2Fit>> {
        let r = fit_ep_ml2(p, &settings.evidence_config())?;
        let at = Problem {
            kernel: &r.kernel,
            ..p
        };
        let fit = match &r.warm {
            WarmStart::Ep(sites) => ep_warm(at.kernel, at.lik, at.x, at.y, self, sites)?.0,
            _ => self.fit(at)?,
        };
        Ok(Some((fit, r.report)))
    }
}

/// EP sweeps ([`super::ep`]): each site's rank-one update is `N²`, a sweep `N³`, and the
/// posterior is recomputed from the sites after each sweep (a factor).
const EP_SWEEPS: f64 = 8.0;

/// `ep` in the fit spec: no settings (probit).
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct EpSpec {}

impl InferenceSettings for EpSpec {
    fn method(&self, _seed: u64) -> Result<(InferenceMethod, Likelihood)> {
        Ok((
            InferenceMethod::new(EpConfig::default()),
            Likelihood::probit(),
        ))
    }

    /// Per sweep, N rank-one updates (`2N³`) and a factor.
    fn fit_work(&self) -> FitWork {
        FitWork::Dense {
            factors: EP_SWEEPS,
            cubes: 2.0 * EP_SWEEPS,
            matvecs: 0.0,
        }
    }
}

impl NamedInference for EpSpec {
    const NAME: MethodName = MethodName::Ep;
    const READS: &'static [SpecOption] = &[];
    const LIKELIHOODS: LikelihoodChoice = LikelihoodChoice::Probit;

    fn from_options(_: &InferenceOptions) -> Self {
        Self {}
    }
}
