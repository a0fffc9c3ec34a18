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

    /// The split prior fits θ by ML-II on part A with the probit.
    fn check(&self) -> Result<(), SpecError> {
        options::check_hypers(&self.hypers, self.name())?;
        if self.split_prior() && self.likelihood != LikelihoodName::Probit {
            return Err(options::split_needs_probit());
        }
        Ok(())
    }

    fn split_prior(&self) -> bool {
        is_split(&self.hypers)
    }

    fn one_vs_rest_member(&self) -> Result<(), SpecError> {
        member_without_split(self.split_prior(), self.name())
    }

    fn grid(&self) -> Option<HyperGrid> {
        classifier_grid(&self.hypers)
    }

    fn prior_kernel_spec(&self) -> Option<&str> {
        classifier_kernel(&self.hypers)
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

impl PacGpcSpec {
    /// Its spec from the options (`name`: the one asked for), marking every option it takes
    /// as used; the defaults of those not given.
    pub(in crate::spec) fn from_options(
        o: &FitOptions,
        name: MethodName,
        u: &mut Unused,
    ) -> Result<Self, SpecError> {
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
