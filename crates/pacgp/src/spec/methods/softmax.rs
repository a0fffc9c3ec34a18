//! `laplace` with `multiclass softmax`'s home: its spec and what it says about itself.

use super::*;

/// `laplace` with `multiclass softmax`: the multi-class Laplace approximation (Rasmussen &
/// Williams Alg. 3.3), one kernel shared by the classes.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SoftmaxSpec {
    /// How the shared kernel's θ is chosen: the candidate menu or ML-II on the grid (no
    /// split prior).
    pub hypers: ClassifierHypers,
}

impl MethodSpec for SoftmaxSpec {
    fn name(&self) -> MethodName {
        MethodName::Laplace
    }

    /// Its classes share one sample, so a split prior (each class's own part B) is refused.
    fn check(&self) -> Result<(), SpecError> {
        match &self.hypers {
            ClassifierHypers::Split(_) => Err(options::split_not_multiclass(self.name())),
            hypers => options::check_hypers(hypers, self.name()),
        }
    }

    fn grid(&self) -> Option<HyperGrid> {
        classifier_grid(&self.hypers)
    }

    fn prior_kernel_spec(&self) -> Option<&str> {
        classifier_kernel(&self.hypers)
    }

    fn approximate_loo_only(&self) -> Option<&'static str> {
        Some(
            "its rows' sites removed from the Laplace posterior (loo approx); an exact one \
             would find the mode again for every row",
        )
    }

    fn jackknife_loo(&self) -> Option<JackknifeLoo> {
        Some(JackknifeLoo::SoftmaxSites)
    }
}

impl SoftmaxSpec {
    /// Its spec from the options, marking every option it takes as used; the defaults of
    /// those not given.
    pub(in crate::spec) fn from_options(o: &FitOptions, u: &mut Unused) -> Result<Self, SpecError> {
        if o.likelihood.is_some() {
            return Err(SpecError::conflict(
                SpecOption::Likelihood,
                SpecOption::MultiClass,
                "the softmax Laplace has the softmax likelihood",
            ));
        }
        u.used(SpecOption::Select);
        let hypers = match (o.selection(), &o.kernel) {
            (Selection::Bound, None) => ClassifierHypers::Candidates,
            (Selection::Bound, Some(_)) => {
                return Err(SpecError::new(
                    SpecOption::Kernel,
                    SpecProblem::NotApplicable {
                        method: MethodName::Laplace,
                        applies_to: "classifiers with select ml2 (select bound chooses among nine fixed SE kernels)".into(),
                    },
                ))
            }
            (Selection::Ml2, _) => ClassifierHypers::Grid {
                kernel: o.kernel_or_default(u),
            },
        };
        Ok(Self { hypers })
    }
}
