//! The approximate-inference classifiers' home in the spec (`laplace`, `ep`, `mean-field`,
//! `ivm`, `sogp`): their spec and what it says about itself; each inference method's own
//! settings live in its folder under [`crate::inference`].

use super::*;
use crate::inference::{ApproxLooKind, FitWork, InferenceOptions};

/// `laplace`, `ep`, `mean-field`, `ivm`, `sogp`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClassifierSpec {
    /// Inference method and its settings.
    pub inference: Inference,
    /// How θ is chosen.
    pub hypers: ClassifierHypers,
    /// The Gibbs classifier whose bound selects θ and is stored.
    pub predictor: GibbsPredictor,
    /// Seeded random restarts of ML-II (laplace and ep with θ by ML-II; absent from older
    /// files: none). θ stays on the grid, whose price covers any point of it.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub restarts: usize,
}

/// Whether a count has its default, 0 (it is then not written).
fn is_zero(n: &usize) -> bool {
    *n == 0
}

impl ClassifierSpec {
    /// What its inference method's leave-one-out without refits is made from (its home's
    /// [`crate::inference::ClassifierInference::approximate_loo`]; `None` for settings a check
    /// refuses).
    fn approximate_loo(&self) -> Option<ApproxLooKind> {
        let (method, _) = self.inference.settings().method(0).ok()?;
        Some(method.approximate_loo())
    }
}

impl MethodSpec for ClassifierSpec {
    fn name(&self) -> MethodName {
        self.inference.name()
    }

    hypers_answers!(grid);
    hypers_answers!(split);

    /// The split prior fits θ by ML-II on part A with the probit.
    fn check(&self) -> Result<(), SpecError> {
        self.inference.settings().check()?;
        options::check_hypers(&self.hypers, self.name())?;
        if self.split_prior() && self.inference.settings().likelihood() != LikelihoodName::Probit {
            return Err(options::split_needs_probit());
        }
        Ok(())
    }

    /// An active set's basis and the matrices its method keeps (IVM, SOGP), else five
    /// `N × N` matrices at once.
    fn footprint(&self, _k: usize) -> Footprint {
        match self.inference.settings().fit_work() {
            FitWork::ActiveSet {
                basis, resident, ..
            } => sparse_footprint(basis, resident),
            FitWork::Dense { .. } => Footprint::Dense { matrices: 5 },
        }
    }

    /// Its sites' cavities (Laplace, EP, IVM), naive mean field's linear response or SOGP's
    /// refits, on a posterior fitted on the whole sample (no split prior).
    fn jackknife_loo(&self) -> Option<JackknifeLoo> {
        if self.split_prior() {
            return None;
        }
        Some(match self.approximate_loo()? {
            ApproxLooKind::SiteCavities => JackknifeLoo::SiteCavities,
            ApproxLooKind::LinearResponse => JackknifeLoo::LinearResponse,
            ApproxLooKind::RefitsOnly => JackknifeLoo::Refits,
        })
    }

    /// IVM's active set (its sites' cavities over it).
    fn active_set(&self) -> bool {
        let on_active_set = matches!(
            self.inference.settings().fit_work(),
            FitWork::ActiveSet { .. }
        );
        on_active_set && self.approximate_loo() == Some(ApproxLooKind::SiteCavities)
    }

    fn resolve_for_sample(&mut self, n: usize, notes: &mut Vec<String>) -> Result<(), SpecError> {
        if let Some(slot) = self.inference.settings_mut().active_set() {
            resolve_basis(slot.size, n, SpecOption::ActiveSet, slot.capped, notes)?;
        }
        Ok(())
    }
}

impl FromOptions for ClassifierSpec {
    fn from_options(o: &FitOptions, name: MethodName, u: &mut Unused) -> Result<Self, SpecError> {
        u.used(SpecOption::Predictor);
        let likelihood = o.likelihood_for(name, u)?;
        let options = InferenceOptions {
            likelihood,
            kappa: o.kappa,
            input_noise: o.input_noise,
            active_set: o.active_set,
        };
        let (inference, reads) = Inference::from_options(name, &options)
            .zip(Inference::reads(name))
            .expect("ClassifierSpec::from_options is called for inference methods only");
        for option in reads.0 {
            u.used(*option);
        }
        let hypers = match o.split_classifier(name, u)? {
            Some(split) => {
                if o.select.is_some() {
                    return Err(SpecError::conflict(
                        SpecOption::Select,
                        SpecOption::Prior,
                        "the split prior fits θ by ML-II on part A",
                    ));
                }
                if o.likelihood.is_some() {
                    return Err(options::split_needs_probit());
                }
                ClassifierHypers::Split(split)
            }
            None => {
                u.used(SpecOption::Select);
                let by_ml2 = matches!(name, MethodName::Laplace | MethodName::Ep | MethodName::Ivm);
                if o.select.is_none() && o.kernel.is_some() && !by_ml2 {
                    return Err(SpecError::not_for(
                        SpecOption::Kernel,
                        name,
                        "laplace, ep and ivm (ML-II from the given kernel) and the split prior; mean-field and sogp choose among nine fixed SE kernels by the bound",
                    ));
                }
                match (o.selection(), &o.kernel) {
                    (Selection::Bound, None) => ClassifierHypers::Candidates,
                    (Selection::Bound, Some(_)) => {
                        return Err(SpecError::new(
                            SpecOption::Kernel,
                            SpecProblem::NotApplicable {
                                method: name,
                                applies_to: "classifiers with select ml2 (select bound chooses among nine fixed SE kernels)".into(),
                            },
                        ))
                    }
                    (Selection::Ml2, _) => {
                        if !by_ml2 {
                            return Err(SpecError::not_for(
                                SpecOption::Select,
                                name,
                                "laplace, ep and ivm as ml2 (ML-II needs an evidence gradient)",
                            ));
                        }
                        ClassifierHypers::Grid {
                            kernel: o.kernel_or_default(u),
                        }
                    }
                }
            }
        };
        // ML-II restarts where θ is fitted by ML-II's L-BFGS (IVM alternates its own rounds).
        let restarts = match (&hypers, name) {
            (ClassifierHypers::Grid { .. }, MethodName::Laplace | MethodName::Ep) => {
                u.used(SpecOption::Restarts);
                o.restarts.unwrap_or(0)
            }
            _ => 0,
        };
        Ok(Self {
            inference,
            hypers,
            predictor: o.predictor.unwrap_or_default(),
            restarts,
        })
    }
}
