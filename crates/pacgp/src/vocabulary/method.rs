//! The methods a user names, as words.

use serde::{Deserialize, Serialize};

use super::named;

/// The methods a user names, one line each: the variant, its word, whether it learns labels,
/// and its help (also the variant's doc).
macro_rules! method_names {
    ($($(#[cfg($cfg:meta)])? $variant:ident => $word:literal $([$kind:ident])? : $help:literal),+ $(,)?) => {
        /// The method a user names (`pacgp fit --method`, Python's `method=`/estimator class).
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
        #[serde(rename_all = "kebab-case")]
        pub enum MethodName {
            $($(#[cfg($cfg)])? #[doc = $help] $variant),+
        }

        named!(@cfg MethodName { $($(#[cfg($cfg)])? MethodName::$variant => $word: $help),+ });

        impl MethodName {
            /// Whether the method learns labels (a classifier or the SVM) rather than real
            /// targets.
            pub fn is_classifier(self) -> bool {
                match self {
                    $($(#[cfg($cfg)])? MethodName::$variant => method_names!(@learns $($kind)?)),+
                }
            }
        }
    };
    (@learns labels) => { true };
    (@learns) => { false };
}

method_names! {
    Gpr => "gpr": "exact GP regression, hyperparameters by ML-II (maximum marginal likelihood)",
    Vfe => "vfe": "sparse GP regression, Titsias' variational free energy (inducing inputs)",
    Fitc => "fitc": "sparse GP regression, FITC marginal likelihood (inducing inputs)",
    Dtc => "dtc": "sparse GP regression, DTC marginal likelihood (inducing inputs)",
    PacGp => "pac-gp": "full GP trained by minimising the kl PAC-Bayes bound on the ε-band risk (Reeb et al. 2018); needs ε",
    PacGpSqrt => "pac-gp-sqrt": "full GP trained by minimising the Pinsker (sqrt) PAC-Bayes bound; needs ε",
    PacSgp => "pac-sgp": "sparse GP (FITC form) trained by minimising the kl PAC-Bayes bound; needs ε",
    PacSgpSqrt => "pac-sgp-sqrt": "sparse GP (FITC form) trained by minimising the sqrt PAC-Bayes bound; needs ε",
    GreedySparse => "greedy-sparse": "Zhang's greedy sparse GP regression in the dual (T. Zhang): basis points chosen greedily, θ and σ² by ML-II on a 1000-point subset",
    Laplace => "laplace" [labels]: "GP classification, Laplace approximation",
    Ep => "ep" [labels]: "GP classification, expectation propagation (probit)",
    MeanField => "mean-field" [labels]: "GP classification, naive mean field (Opper & Winther) with flip noise κ and input noise v",
    Ivm => "ivm" [labels]: "GP classification, informative vector machine (ADF on an active set; probit)",
    Sogp => "sogp" [labels]: "GP classification, sparse online GP with a bounded number of basis vectors (probit)",
    PacGpc => "pac-gpc" [labels]: "GP classification trained by its PAC-Bayes bound on the Gibbs error",
    Svm => "svm" [labels]: "support vector machine as a GP's MAP (Opper & Winther), certified",
    Svgp => "svgp" [labels]: "sparse variational GP classification (probit; Hensman et al. 2015): kernel, inducing inputs and q(u) trained together by the evidence lower bound",
    PacSvgp => "pac-svgp" [labels]: "sparse variational GP classification trained by minimising its PAC-Bayes bound on the Gibbs error",
    #[cfg(test)] PriorOnly => "prior-only" [labels]: "test only: the prior as the posterior (inference::prior_only)",
}

impl MethodName {
    /// Whether the method is trained by a bound on the ε-band risk, so that it needs ε
    /// (pac-gp, pac-sgp and their sqrt forms).
    pub fn trains_on_epsilon(self) -> bool {
        matches!(
            self,
            MethodName::PacGp | MethodName::PacGpSqrt | MethodName::PacSgp | MethodName::PacSgpSqrt
        )
    }
}

/// A classifier's likelihood.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LikelihoodName {
    /// `Φ(y f)`.
    #[default]
    Probit,
    /// `σ(y f)` (Laplace, pac-gpc, svgp and pac-svgp only).
    Logistic,
}

impl LikelihoodName {
    /// Whether this is the default, probit (a model file leaves it out).
    pub fn is_probit(&self) -> bool {
        *self == LikelihoodName::Probit
    }
}

named!(LikelihoodName {
    LikelihoodName::Probit => "probit": "Φ(y f)",
    LikelihoodName::Logistic => "logistic": "σ(y f) (laplace, pac-gpc, svgp and pac-svgp only)",
});

/// Default number of inducing inputs, basis points or active-set size (at most N).
pub const DEFAULT_BASIS: usize = 100;
