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

    hypers_answers!(grid);

    /// Its classes share one sample, so a split prior (each class's own part B) is refused.
    fn check(&self) -> Result<(), SpecError> {
        match &self.hypers {
            ClassifierHypers::Split(_) => Err(options::split_not_multiclass(self.name())),
            hypers => options::check_hypers(hypers, self.name()),
        }
    }

    /// 7K + 8 matrices of N × N: the RSS of softmax fits of 1 000 rows at K = 3 and 5 (255
    /// and 367 MB) and of 2 000 rows at K = 3 (909 MB).
    fn footprint(&self, k: usize) -> Footprint {
        Footprint::Dense {
            matrices: 7 * k as u64 + 8,
        }
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

impl FromOptions for SoftmaxSpec {
    fn from_options(o: &FitOptions, _: MethodName, u: &mut Unused) -> Result<Self, SpecError> {
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
