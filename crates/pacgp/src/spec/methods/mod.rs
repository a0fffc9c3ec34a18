//! Each method's spec and what it says about itself, one file per method: its options (the
//! [`Method`] variant's struct), its name, its ε, grid and prior kernel, its leave-one-out and
//! the checks of its ranges ([`MethodSpec`]). The `registered_methods!` list below is the one
//! place a method is registered; [`FitSpec`]'s queries and the spec checks ask
//! [`Method::home`], the fit asks its fit half (`crate::fit::MethodFit`).

use super::options::Unused;
use super::*;
use crate::memory::Footprint;
use SpecOption as O;

mod classifier;
mod gpr;
mod greedy_sparse;
mod pac_gp;
mod pac_gpc;
mod softmax;
mod sparse;
mod svgp;
mod svm;

pub use classifier::ClassifierSpec;
pub use gpr::GprSpec;
pub use greedy_sparse::GreedySparseSpec;
pub use pac_gp::{PacGpSpec, PacSgpSpec};
pub use pac_gpc::PacGpcSpec;
pub use softmax::SoftmaxSpec;
pub use sparse::SparseSpec;
pub use svgp::{SvgpSpec, DEFAULT_SVGP_BATCH, FULL_BATCH_WORK};
pub use svm::{SvmKernel, SvmSlack, SvmSpec};

/// A classifier's leave-one-out at any input of a posterior fitted on the whole sample, which
/// jackknife+ prediction sets read: a closed form, or SOGP's refits (`None` from
/// [`MethodSpec::jackknife_loo`]: split-conformal sets only).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum JackknifeLoo {
    /// The cavities of Gaussian sites fitted on the whole sample (Laplace, EP, IVM, pac-gpc):
    /// [`crate::loo::LooDowndate::sites`].
    SiteCavities,
    /// Linear response around the solution (seed 001 §17.5: the SVM, naive mean field).
    LinearResponse,
    /// Refits without each row at the stored kernel (SOGP's online sweeps).
    Refits,
    /// Rank-one sites removed from the inducing posterior `q(u)` (svgp, pac-svgp; docs/math.md
    /// eqs. 12.7–12.8).
    InducingSites,
    /// Softmax's K-dimensional sites removed ([`crate::loo::SoftmaxSiteLoo`]).
    SoftmaxSites,
}

/// The posterior a regressor certifies, refits at its stored parameters and downdates for its
/// leave-one-out and jackknife+ intervals.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum RegressionForm {
    /// The exact GP (gpr, pac-gp).
    Exact,
    /// The sparse GP of this approximation on the posterior's basis.
    Sparse(SparseMethod),
}

/// What a method's spec says about itself (the spec half of its home). Every answer has the
/// most common value as its default, so that a method states only where it differs.
pub trait MethodSpec {
    /// The name users spell the method with.
    fn name(&self) -> MethodName;

    /// The spec's own ranges and cross-option rules.
    fn check(&self) -> Result<(), SpecError>;

    /// How its fit's largest arrays grow with N (its defaults filled in for the sample:
    /// [`CheckedFitSpec::for_sample`]) with `k` classes (2 for a binary or regression fit),
    /// which [`crate::cost::check_fits`] prices before anything is allocated.
    fn footprint(&self, k: usize) -> Footprint;

    /// Whether its posterior is fitted with a data-dependent split prior, on part B only (it
    /// then has no leave-one-out, nor jackknife+ intervals).
    fn split_prior(&self) -> bool {
        false
    }

    /// Whether it may be one class's binary method of a one-vs-rest spec (an error naming why
    /// not).
    fn one_vs_rest_member(&self) -> Result<(), SpecError> {
        Err(SpecError::not_for(
            SpecOption::MultiClass,
            self.name(),
            "the classifiers as one-vs-rest",
        ))
    }

    /// ε of the ε-band loss it is trained with or stores for `certify` (target units).
    fn epsilon(&self) -> Option<f64> {
        None
    }

    /// The confidence constant of the bound it is trained with (Maurer's unless it says).
    fn xi(&self) -> Xi {
        Xi::Maurer
    }

    /// The uniform grid θ is snapped onto and priced by, if it has one.
    fn grid(&self) -> Option<HyperGrid> {
        None
    }

    /// The kernel specification of the prior whose θ a grid or coarse prior prices.
    fn prior_kernel_spec(&self) -> Option<&str> {
        None
    }

    /// Why its only leave-one-out is its approximation, as a clause (`None`: refits give an
    /// exact one).
    fn approximate_loo_only(&self) -> Option<&'static str> {
        None
    }

    /// A regressor's posterior form (`None`: a classifier).
    fn regression_form(&self) -> Option<RegressionForm> {
        None
    }

    /// Whether its posterior's sites are trained by the bound (pac-gpc).
    fn trained_sites(&self) -> bool {
        false
    }

    /// A classifier's leave-one-out for jackknife+ prediction sets, if it has one.
    fn jackknife_loo(&self) -> Option<JackknifeLoo> {
        None
    }

    /// Whether its posterior covers only part of the sample (an active set, support vectors).
    fn active_set(&self) -> bool {
        false
    }

    /// Whether the inputs are standardised by the sample's means and deviations.
    fn scales_inputs(&self) -> bool {
        true
    }

    /// Whether a regressor's targets are standardised.
    fn scales_targets(&self) -> bool {
        true
    }

    /// Whether several targets fitted together share one kernel.
    fn shares_kernel(&self) -> bool {
        false
    }

    /// Its data-dependent defaults for a sample of `n` rows (a basis size), with a note for
    /// every value the data changed.
    fn resolve_for_sample(&mut self, n: usize, notes: &mut Vec<String>) -> Result<(), SpecError> {
        let _ = (n, notes);
        Ok(())
    }
}

/// A method's spec built from the options.
pub(in crate::spec) trait FromOptions: Sized {
    /// Its spec from the options (`name`: the one asked for, where a home serves several),
    /// marking every option it takes as used; the defaults of those not given.
    fn from_options(o: &FitOptions, name: MethodName, u: &mut Unused) -> Result<Self, SpecError>;
}

/// The answers of a regressor that stores ε for `certify` and prices θ of its own kernel
/// (gpr, the sparse methods, greedy-sparse).
macro_rules! stored_epsilon_answers {
    () => {
        fn epsilon(&self) -> Option<f64> {
            self.epsilon
        }

        fn prior_kernel_spec(&self) -> Option<&str> {
            Some(&self.kernel)
        }
    };
}
use stored_epsilon_answers;

/// The answers of a regressor trained by its bound (pac-gp, pac-sgp) from its `prior`, ε, ξ
/// and kernel.
macro_rules! pac_regressor_answers {
    () => {
        fn split_prior(&self) -> bool {
            matches!(self.prior, PacPrior::Split(_))
        }

        fn epsilon(&self) -> Option<f64> {
            Some(self.epsilon)
        }

        fn xi(&self) -> Xi {
            self.xi
        }

        /// The default grid where the prior over θ is the grid.
        fn grid(&self) -> Option<HyperGrid> {
            (self.prior == PacPrior::Grid).then(HyperGrid::default)
        }

        fn prior_kernel_spec(&self) -> Option<&str> {
            (!self.split_prior()).then_some(self.kernel.as_str())
        }
    };
}
use pac_regressor_answers;

/// The answers of a classifier from how its θ is chosen (`hypers`): `grid`, the grid and
/// kernel of θ chosen by ML-II or the bound on it (none for the menu or a split prior);
/// `split`, whether a split prior chooses it, which bars it from one-vs-rest (a multi-class
/// certificate is on one sample for all classes).
macro_rules! hypers_answers {
    (grid) => {
        fn grid(&self) -> Option<HyperGrid> {
            matches!(self.hypers, ClassifierHypers::Grid { .. }).then(HyperGrid::default)
        }

        fn prior_kernel_spec(&self) -> Option<&str> {
            match &self.hypers {
                ClassifierHypers::Grid { kernel } => Some(kernel),
                _ => None,
            }
        }
    };
    (split) => {
        fn split_prior(&self) -> bool {
            matches!(self.hypers, ClassifierHypers::Split(_))
        }

        fn one_vs_rest_member(&self) -> Result<(), SpecError> {
            member_without_split(self.split_prior(), self.name())
        }
    };
}
use hypers_answers;

/// The one registration of every method's home: calls `$then!` with the [`Method`] variants
/// of the binary classifiers and regressors, then of the multi-class methods (one-vs-rest is
/// not a home: it answers through its binary method's). Each layer builds its dispatch from
/// it: [`Method::home`] here, `fit`'s in [`crate::fit`].
macro_rules! registered_methods {
    ($then:ident) => {
        $then!(
            [
                Gpr,
                Sparse,
                PacGp,
                PacSgp,
                GreedySparse,
                Classifier,
                PacGpc,
                Svm,
                Svgp
            ][Softmax]
        );
    };
}
pub(crate) use registered_methods;

/// [`Method::home`] and its mutable twin from the registered methods.
macro_rules! homes {
    ([$($variant:ident),+] [$($multi:ident),*]) => {
        impl Method {
            /// The method's spec-side home (a one-vs-rest spec: its binary method's).
            pub fn home(&self) -> &dyn MethodSpec {
                match self {
                    $(Method::$variant(s) => s,)+
                    $(Method::$multi(s) => s,)*
                    Method::OneVsRest(inner) => inner.home(),
                }
            }

            /// The same, to fill in data-dependent defaults.
            fn home_mut(&mut self) -> &mut dyn MethodSpec {
                match self {
                    $(Method::$variant(s) => s,)+
                    $(Method::$multi(s) => s,)*
                    Method::OneVsRest(inner) => inner.home_mut(),
                }
            }
        }
    };
}

registered_methods!(homes);

impl Method {
    /// Its data-dependent defaults for a sample of `n` rows ([`MethodSpec::resolve_for_sample`]).
    pub(super) fn resolve_for_sample(
        &mut self,
        n: usize,
        notes: &mut Vec<String>,
    ) -> Result<(), SpecError> {
        self.home_mut().resolve_for_sample(n, notes)
    }
}

/// A given or default basis size resolved for `n` rows (see [`options::basis_size`]).
fn resolve_basis(
    slot: &mut Option<usize>,
    n: usize,
    option: SpecOption,
    cap: bool,
    notes: &mut Vec<String>,
) -> Result<(), SpecError> {
    *slot = Some(options::basis_size(*slot, n, option, cap, notes)?);
    Ok(())
}

/// `matrices` of `N × M` and of `M × M` for a basis of M (given, or the default).
fn sparse_footprint(basis: Option<usize>, matrices: u64) -> Footprint {
    Footprint::Sparse {
        basis: basis.unwrap_or(DEFAULT_BASIS),
        matrices,
    }
}

/// ε, where given, is positive and finite.
fn check_epsilon(epsilon: Option<f64>) -> Result<(), SpecError> {
    match epsilon {
        Some(e) => options::positive(
            SpecOption::Epsilon,
            e,
            "the ε of the ε-band loss, in the target's units",
        ),
        None => Ok(()),
    }
}

/// An initial noise variance is positive and finite.
fn check_noise_init(v: f64) -> Result<(), SpecError> {
    options::positive(SpecOption::NoiseInit, v, "a noise variance")
}

/// A basis size, where given, is at least 1.
fn check_basis(m: Option<usize>) -> Result<(), SpecError> {
    match m {
        Some(0) => Err(SpecError::out_of_range(
            SpecOption::Inducing,
            0,
            "at least 1",
        )),
        _ => Ok(()),
    }
}

/// A binary classifier as a one-vs-rest member: not with a split prior (a multi-class
/// certificate is on one sample for all classes).
fn member_without_split(split: bool, name: MethodName) -> Result<(), SpecError> {
    match split {
        true => Err(options::split_not_multiclass(name)),
        false => Ok(()),
    }
}
