//! `pac-gpc`'s home in the spec: its spec and what it says about itself.

use super::*;

/// `pac-gpc`: the classifier trained by its bound.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PacGpcSpec {
    /// Likelihood of the Laplace warm start and of the class probabilities.
    pub likelihood: LikelihoodName,
    /// How θ is chosen.
    pub hypers: ClassifierHypers,
    /// The Gibbs classifier whose bound is minimised.
    pub predictor: GibbsPredictor,
}

impl MethodSpec for PacGpcSpec {
    fn name(&self) -> MethodName {
        MethodName::PacGpc
    }

    hypers_answers!(grid);
    hypers_answers!(split);

    /// The split prior fits θ by ML-II on part A with the probit.
    fn check(&self) -> Result<(), SpecError> {
        options::check_hypers(&self.hypers, self.name())?;
        if self.split_prior() && self.likelihood != LikelihoodName::Probit {
            return Err(options::split_needs_probit());
        }
        Ok(())
    }

    /// The bound's gradient beside Laplace's five (`B⁻¹D`, `(AD)ᵀ(AD)`, `P`, `G`, the start's
    /// and the optimiser's best sites' factors): 11–15 N² resident at N = 1 000 and 2 000.
    fn footprint(&self, _k: usize) -> Footprint {
        Footprint::Dense { matrices: 12 }
    }

    fn approximate_loo_only(&self) -> Option<&'static str> {
        Some(
            "its sites' cavities (loo approx); an exact one would train its bound again for \
             every row",
        )
    }

    /// Its sites are trained by the bound: its only leave-one-out is their cavities, and its
    /// sites' `α_i` need not carry their labels' signs.
    fn trained_sites(&self) -> bool {
        true
    }

    /// Any `(α, π > 0)` is the prior times Gaussian sites
    /// ([`crate::loo::posterior_cavity_loo`]).
    fn jackknife_loo(&self) -> Option<JackknifeLoo> {
        (!self.split_prior()).then_some(JackknifeLoo::SiteCavities)
    }
}

impl FromOptions for PacGpcSpec {
    fn from_options(o: &FitOptions, name: MethodName, u: &mut Unused) -> Result<Self, SpecError> {
        u.used(SpecOption::Predictor);
        let likelihood = o.likelihood_for(name, u)?;
        let hypers = match o.split_classifier(name, u)? {
            Some(split) => ClassifierHypers::Split(split),
            None => match o.kernel.clone() {
                Some(kernel) => {
                    u.used(SpecOption::Kernel);
                    ClassifierHypers::Grid { kernel }
                }
                None => ClassifierHypers::Candidates,
            },
        };
        Ok(Self {
            likelihood,
            hypers,
            predictor: o.predictor.unwrap_or_default(),
        })
    }
}
