//! Each method's spec and what it says about itself, one file per method: its options (the
//! [`Method`] variant's struct), its name, its ε, grid and prior kernel, its leave-one-out and
//! the checks of its ranges ([`MethodSpec`]). The [`homes!`] line below is the one place a
//! method is registered; [`FitSpec`]'s queries and the spec checks ask [`Method::home`].

use super::options::Unused;
use super::*;

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

/// A classifier's leave-one-out at any input without refitting its bound, which jackknife+
/// prediction sets read (`None` from [`MethodSpec::jackknife_loo`]: split-conformal sets only).
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

/// What a method's spec says about itself (the spec half of its home). Every answer has the
/// most common value as its default, so that a method states only where it differs.
pub trait MethodSpec {
    /// The name users spell the method with.
    fn name(&self) -> MethodName;

    /// The spec's own ranges and cross-option rules.
    fn check(&self) -> Result<(), SpecError>;

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

/// The registration of every method's home: `Method::Variant(spec)` answers through `spec`,
/// and one-vs-rest through its binary method's.
macro_rules! homes {
    ($($variant:ident),+ $(,)?) => {
        impl Method {
            /// The method's spec-side home (a one-vs-rest spec: its binary method's).
            pub fn home(&self) -> &dyn MethodSpec {
                match self {
                    $(Method::$variant(s) => s,)+
                    Method::OneVsRest(inner) => inner.home(),
                }
            }

            /// The same, to fill in data-dependent defaults.
            fn home_mut(&mut self) -> &mut dyn MethodSpec {
                match self {
                    $(Method::$variant(s) => s,)+
                    Method::OneVsRest(inner) => inner.home_mut(),
                }
            }
        }
    };
}

homes!(
    Gpr,
    Sparse,
    PacGp,
    PacSgp,
    GreedySparse,
    Classifier,
    PacGpc,
    Svm,
    Svgp,
    Softmax
);

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

/// A classifier's split prior, if its θ is chosen by one.
fn is_split(hypers: &ClassifierHypers) -> bool {
    matches!(hypers, ClassifierHypers::Split(_))
}

/// The grid of a classifier's θ chosen by ML-II or the bound on it (not by the menu).
fn classifier_grid(hypers: &ClassifierHypers) -> Option<HyperGrid> {
    matches!(hypers, ClassifierHypers::Grid { .. }).then(HyperGrid::default)
}

/// The kernel a classifier's grid prices (none for the menu or a split prior).
fn classifier_kernel(hypers: &ClassifierHypers) -> Option<&str> {
    match hypers {
        ClassifierHypers::Grid { kernel } => Some(kernel),
        _ => None,
    }
}

/// A binary classifier with θ chosen by `hypers` as a one-vs-rest member: not with a split
/// prior (a multi-class certificate is on one sample for all classes).
fn member_without_split(split: bool, name: MethodName) -> Result<(), SpecError> {
    match split {
        true => Err(options::split_not_multiclass(name)),
        false => Ok(()),
    }
}
