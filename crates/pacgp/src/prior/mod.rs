//! Priors over the kernel's hyperparameters that tighten PAC-Bayes certificates (docs/math.md
//! §9.1–§9.2), handed as a union-bound price to the one certificate constructor
//! ([`crate::certificate`]): `hyper`, a coarse, non-uniform prior π over the kernel's ln θ
//! fixed before seeing the data, priced `−ln π(θ̂)`. The data-dependent split priors
//! (docs/math.md §9.3) are methods trained on their bound: [`crate::objective::gp_split`],
//! [`crate::objective::sgp_split`] and [`crate::objective::gpc_split`].
//!
//! [`BoundLevers`] gathers the choices a bound-trained objective takes.

/// Coarse non-uniform hyperparameter prior (docs/math.md §9.2).
pub(crate) mod hyper;

use serde::{Deserialize, Serialize};

use crate::bounds::ConfidenceTerm;

pub use hyper::{HyperPrior, HyperPriorShape, ThetaPenalty};

/// The levers of a bound-trained objective (PAC-GP, PAC-SGP): the confidence constant and the
/// hyperparameter prior (`None` = the paper's uniform 0.01 grid on [−6, 6], `T·ln 1201`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BoundLevers {
    /// Confidence constant.
    pub term: ConfidenceTerm,
    /// Hyperparameter prior replacing the paper's uniform grid.
    pub hyper_prior: Option<HyperPrior>,
}

impl Default for BoundLevers {
    /// The paper's settings: Maurer's constant and the uniform grid.
    fn default() -> Self {
        Self {
            term: ConfidenceTerm::Maurer,
            hyper_prior: None,
        }
    }
}
