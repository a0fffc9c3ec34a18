//! A binary classifier's inference method as the fit spec holds it: the settings a user gives
//! it, their checks, the [`InferenceMethod`] they build, and what one fit costs. Each method's
//! home implements [`InferenceSettings`] and [`NamedInference`] beside its
//! [`super::ClassifierInference`]; the one list [`Inference`] (in [`super`]) registers it, and
//! the spec, the plan and the cost model reach it only through these traits.

use crate::error::Result;
use crate::likelihood::Likelihood;
use crate::vocabulary::{LikelihoodName, MethodName, SpecError, SpecOption};

use super::InferenceMethod;

/// The options an inference method may read from the fit's options (each `None` when not
/// given), with the likelihood already chosen ([`LikelihoodChoice`]).
#[derive(Clone, Copy, Debug, Default)]
pub struct InferenceOptions {
    /// The likelihood's link.
    pub likelihood: LikelihoodName,
    /// Label flip probability κ.
    pub kappa: Option<f64>,
    /// Input-noise variance v.
    pub input_noise: Option<f64>,
    /// Active-set (basis) size.
    pub active_set: Option<usize>,
}

/// Which links a method's `likelihood` option takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LikelihoodChoice {
    /// Not an option: the method's data model is fixed (mean field's flip noise on a probit).
    Fixed,
    /// Probit only (the method needs the probit's tilted moments in closed form).
    Probit,
    /// Probit or logistic.
    ProbitOrLogistic,
}

/// What one fit at fixed hyperparameters costs, in the terms the cost model
/// ([`crate::cost`]) prices: the method counts its own iterations, the cost model knows the
/// machine.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum FitWork {
    /// On dense `N × N` sites (five such matrices resident): `factors` Cholesky factors of
    /// `N × N`, `cubes` further `N³` flops, and `matvecs` memory-bound `N × N`
    /// matrix–vector products.
    Dense {
        /// Cholesky factors of an `N × N` matrix.
        factors: f64,
        /// Other work, in units of `N³` flops.
        cubes: f64,
        /// Matrix–vector products with an `N × N` matrix.
        matvecs: f64,
    },
    /// On an active set of at most M rows: `entry_flops` per unit of `N·M²` and `resident`
    /// matrices of `N × M` held.
    ActiveSet {
        /// M (`None`: the default basis size).
        basis: Option<usize>,
        /// Flop-equivalents per unit of `N·M²`.
        entry_flops: f64,
        /// `N × M` matrices resident.
        resident: u64,
    },
}

/// The active-set size a sample fills in: the slot, and whether a size above N is capped at N
/// (a bound on what is kept) rather than refused (a count of rows to choose).
pub struct ActiveSetSlot<'a> {
    /// The size given (`None`: the default).
    pub size: &'a mut Option<usize>,
    /// Capped at N instead of refused above N.
    pub capped: bool,
}

/// A classifier inference method's settings in the fit spec: checked once, turned into the
/// method the fit runs, and priced.
pub trait InferenceSettings: std::fmt::Debug + Send + Sync {
    /// Every setting against its range ([`SpecError`] names the option).
    fn check(&self) -> std::result::Result<(), SpecError> {
        Ok(())
    }

    /// The link of the likelihood it fits (probit unless the method takes another).
    fn likelihood(&self) -> LikelihoodName {
        LikelihoodName::Probit
    }

    /// Its active-set size, for a method that keeps a subset of the rows.
    fn active_set(&mut self) -> Option<ActiveSetSlot<'_>> {
        None
    }

    /// The method and likelihood the fit runs (`seed`: any order it visits the rows in).
    fn method(&self, seed: u64) -> Result<(InferenceMethod, Likelihood)>;

    /// What one fit at fixed hyperparameters costs.
    fn fit_work(&self) -> FitWork;
}

/// How a method is named and read from the fit's options.
pub trait NamedInference: InferenceSettings + Sized {
    /// The name users give it.
    const NAME: MethodName;
    /// The options it reads (beside the likelihood).
    const READS: &'static [SpecOption];
    /// Which links it takes.
    const LIKELIHOODS: LikelihoodChoice;

    /// Its settings from the options given, defaults filled in.
    fn from_options(o: &InferenceOptions) -> Self;
}

/// Declares [`Inference`], the classifier inference methods a fit spec can hold, from one line
/// per method (`vis mod home: Variant(SettingsType)`): the method's home module, its variant,
/// the lookups by name and the dispatch to the settings that the spec, plan and cost model use.
macro_rules! inference_methods {
    ($($(#[doc = $doc:expr])* $(#[cfg($cfg:meta)])? $vis:vis mod $home:ident: $variant:ident($settings:ident)),+ $(,)?) => {
        $($(#[cfg($cfg)])? $vis mod $home;)+
        $($(#[cfg($cfg)])? use $home::$settings;)+

        /// The approximate-inference method of a GP classifier and its settings, as the fit
        /// spec holds it (each variant's settings live in the method's home).
        #[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
        #[serde(tag = "inference", rename_all = "kebab-case")]
        pub enum Inference {
            $($(#[doc = $doc])* $(#[cfg($cfg)])? $variant($settings)),+
        }

        impl Inference {
            /// The settings, to check, build and price.
            pub fn settings(&self) -> &dyn $crate::inference::InferenceSettings {
                match self {
                    $($(#[cfg($cfg)])? Inference::$variant(s) => s),+
                }
            }

            /// The settings, to fill in defaults.
            pub fn settings_mut(&mut self) -> &mut dyn $crate::inference::InferenceSettings {
                match self {
                    $($(#[cfg($cfg)])? Inference::$variant(s) => s),+
                }
            }

            /// The name users give the method.
            pub fn name(&self) -> $crate::vocabulary::MethodName {
                use $crate::inference::NamedInference;
                match self {
                    $($(#[cfg($cfg)])? Inference::$variant(_) => <$settings>::NAME),+
                }
            }

            /// The method named `name` with its settings from `o` (`None`: not an inference
            /// method).
            pub fn from_options(
                name: $crate::vocabulary::MethodName,
                o: &$crate::inference::InferenceOptions,
            ) -> Option<Self> {
                use $crate::inference::NamedInference;
                $($(#[cfg($cfg)])? if name == <$settings>::NAME {
                    return Some(Inference::$variant(<$settings>::from_options(o)));
                })+
                None
            }

            /// The options the method named `name` reads and the links it takes (`None`: not
            /// an inference method).
            pub fn reads(
                name: $crate::vocabulary::MethodName,
            ) -> Option<(
                &'static [$crate::vocabulary::SpecOption],
                $crate::inference::LikelihoodChoice,
            )> {
                use $crate::inference::NamedInference;
                $($(#[cfg($cfg)])? if name == <$settings>::NAME {
                    return Some((<$settings>::READS, <$settings>::LIKELIHOODS));
                })+
                None
            }
        }
    };
}
pub(crate) use inference_methods;
