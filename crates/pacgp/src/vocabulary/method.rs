//! The methods a user names, as words.

use serde::{Deserialize, Serialize};

use super::named;

/// The method a user names (`pacgp fit --method`, Python's `method=`/estimator class).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum MethodName {
    /// Exact GP regression by ML-II.
    Gpr,
    /// Sparse GP regression, Titsias' VFE.
    Vfe,
    /// Sparse GP regression, FITC.
    Fitc,
    /// Sparse GP regression, DTC.
    Dtc,
    /// Full GP trained by the kl PAC-Bayes bound.
    PacGp,
    /// Full GP trained by the Pinsker (sqrt) bound.
    PacGpSqrt,
    /// Sparse GP trained by the kl bound.
    PacSgp,
    /// Sparse GP trained by the sqrt bound.
    PacSgpSqrt,
    /// Zhang's greedy sparse regression in the dual.
    GreedySparse,
    /// GP classification, Laplace.
    Laplace,
    /// GP classification, EP.
    Ep,
    /// GP classification, naive mean field.
    MeanField,
    /// GP classification, IVM.
    Ivm,
    /// GP classification, sparse online GP.
    Sogp,
    /// GP classifier trained by its bound.
    PacGpc,
    /// Support vector machine as a GP's MAP.
    Svm,
    /// Sparse variational GP classifier trained by its evidence lower bound.
    Svgp,
    /// Sparse variational GP classifier trained by its PAC-Bayes bound.
    PacSvgp,
}

named!(MethodName {
    MethodName::Gpr => "gpr": "exact GP regression, hyperparameters by ML-II (maximum marginal likelihood)",
    MethodName::Vfe => "vfe": "sparse GP regression, Titsias' variational free energy (inducing inputs)",
    MethodName::Fitc => "fitc": "sparse GP regression, FITC marginal likelihood (inducing inputs)",
    MethodName::Dtc => "dtc": "sparse GP regression, DTC marginal likelihood (inducing inputs)",
    MethodName::PacGp => "pac-gp": "full GP trained by minimising the kl PAC-Bayes bound on the ε-band risk (Reeb et al. 2018); needs ε",
    MethodName::PacGpSqrt => "pac-gp-sqrt": "full GP trained by minimising the Pinsker (sqrt) PAC-Bayes bound; needs ε",
    MethodName::PacSgp => "pac-sgp": "sparse GP (FITC form) trained by minimising the kl PAC-Bayes bound; needs ε",
    MethodName::PacSgpSqrt => "pac-sgp-sqrt": "sparse GP (FITC form) trained by minimising the sqrt PAC-Bayes bound; needs ε",
    MethodName::GreedySparse => "greedy-sparse": "Zhang's greedy sparse GP regression in the dual (T. Zhang): basis points chosen greedily, θ and σ² by ML-II on a 1000-point subset",
    MethodName::Laplace => "laplace": "GP classification, Laplace approximation",
    MethodName::Ep => "ep": "GP classification, expectation propagation (probit)",
    MethodName::MeanField => "mean-field": "GP classification, naive mean field (Opper & Winther) with flip noise κ and input noise v",
    MethodName::Ivm => "ivm": "GP classification, informative vector machine (ADF on an active set; probit)",
    MethodName::Sogp => "sogp": "GP classification, sparse online GP with a bounded number of basis vectors (probit)",
    MethodName::PacGpc => "pac-gpc": "GP classification trained by its PAC-Bayes bound on the Gibbs error",
    MethodName::Svm => "svm": "support vector machine as a GP's MAP (Opper & Winther), certified",
    MethodName::Svgp => "svgp": "sparse variational GP classification (probit; Hensman et al. 2015): kernel, inducing inputs and q(u) trained together by the evidence lower bound",
    MethodName::PacSvgp => "pac-svgp": "sparse variational GP classification trained by minimising its PAC-Bayes bound on the Gibbs error",
});

impl MethodName {
    /// Whether the method learns labels (a classifier or the SVM) rather than real targets.
    pub fn is_classifier(self) -> bool {
        matches!(
            self,
            MethodName::Laplace
                | MethodName::Ep
                | MethodName::MeanField
                | MethodName::Ivm
                | MethodName::Sogp
                | MethodName::PacGpc
                | MethodName::Svm
                | MethodName::Svgp
                | MethodName::PacSvgp
        )
    }

    /// Whether the method is trained by a bound on the ε-band risk, so that it needs ε
    /// (pac-gp, pac-sgp and their sqrt forms).
    pub fn trains_on_epsilon(self) -> bool {
        matches!(
            self,
            MethodName::PacGp | MethodName::PacGpSqrt | MethodName::PacSgp | MethodName::PacSgpSqrt
        )
    }
}
