//! Likelihoods `p(y | f)` for GP classification (labels y ∈ {−1, +1}) and the Gaussian
//! likelihood for the method-equivalence tests.
//!
//! Each likelihood gives what the inference methods need, all in log space:
//! - Laplace: `ln p(y|f)` and its first three derivatives in f;
//! - EP / ADF / IVM / SOGP / mean field: tilted moments of `N(f; μ, v) · p(y|f)`.

/// `ln p(y|f)` and its first three derivatives with respect to f.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LogLikDerivs {
    /// `ln p(y|f)`.
    pub ln_p: f64,
    /// `∂ ln p / ∂f`.
    pub d1: f64,
    /// `∂² ln p / ∂f²` (≤ 0 for log-concave likelihoods).
    pub d2: f64,
    /// `∂³ ln p / ∂f³`.
    pub d3: f64,
}

/// Tilted moments `Z = ∫ N(f; μ, v) p(y|f) df` as `ln Z` and its μ-derivatives.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TiltedMoments {
    /// `ln Z`.
    pub ln_z: f64,
    /// `∂ ln Z / ∂μ`.
    pub d1: f64,
    /// `∂² ln Z / ∂μ²`.
    pub d2: f64,
}

/// A likelihood `p(y | f)`.
pub trait Likelihood: Send + Sync {
    /// Short name for reports and model files.
    fn name(&self) -> &'static str;
    /// `ln p(y|f)` and three f-derivatives (Laplace).
    fn ln_p_derivs(&self, y: f64, f: f64) -> LogLikDerivs;
    /// Tilted moments of `N(f; μ, v) p(y|f)` (EP, ADF, IVM, SOGP, mean field).
    fn tilted_moments(&self, y: f64, mu: f64, var: f64) -> TiltedMoments;
}
