//! The posterior a certificate charges for and its `KL(Q‖P)`: the trait, its implementations (one
//! posterior, a mean-scaled family, one-vs-rest, a posterior against another prior) and the KL's
//! check.

use super::*;

/// A posterior a certificate charges for: its `KL(Q‖P)` to the prior it was fitted against.
/// Certificates are built from such a posterior, never from a KL number a caller computed.
pub trait KlToPrior {
    /// `KL(Q‖P)` in nats ([`Error::OutOfMemory`] where the prior's covariance at the basis
    /// cannot be had).
    fn kl_to_prior(&self) -> Result<f64>;
}

impl KlToPrior for GaussianPosterior {
    fn kl_to_prior(&self) -> Result<f64> {
        GaussianPosterior::kl_to_prior(self)
    }
}

/// A mean-scaled family charges its unscaled posterior's KL, computed once with its parts.
impl KlToPrior for MeanScaled<'_> {
    fn kl_to_prior(&self) -> Result<f64> {
        Ok(self.kl_unit())
    }
}

/// One-vs-rest: K independent latent posteriors, `KL = Σ_k KL(Q_k‖P_k)`.
impl KlToPrior for [&GaussianPosterior] {
    fn kl_to_prior(&self) -> Result<f64> {
        self.iter().map(|q| q.kl_to_prior()).sum()
    }
}

/// A posterior with the prior a certificate charges it against, when that prior is not the
/// one the posterior is written over (the sparse split prior's `P_A`): `KL(Q‖P)` by
/// [`GaussianPosterior::kl_to`], computed once.
pub struct PosteriorAgainst<'a> {
    /// The posterior Q.
    pub posterior: &'a GaussianPosterior,
    /// The prior P it is charged against.
    pub prior: &'a Prior,
    kl: f64,
}

impl<'a> PosteriorAgainst<'a> {
    /// Q against P; an error if the library has no KL for the pair.
    pub fn new(posterior: &'a GaussianPosterior, prior: &'a Prior) -> Result<Self> {
        let kl = posterior.kl_to(prior)?;
        Ok(Self {
            posterior,
            prior,
            kl,
        })
    }
}

impl KlToPrior for PosteriorAgainst<'_> {
    fn kl_to_prior(&self) -> Result<f64> {
        Ok(self.kl)
    }
}

/// `KL(Q‖P)` as a certificate takes it: finite and non-negative, the round-off that leaves an
/// exactly-zero KL slightly negative set to 0.
pub(super) fn checked_kl(kl: f64, n: usize) -> Result<f64> {
    if !kl.is_finite() || kl < -1e-6 * (1.0 + n as f64) {
        return Err(Error::Numerical {
            what: "KL(Q‖P) of the certificate",
            message: format!("KL = {kl:.4e} (must be finite and non-negative)"),
        });
    }
    Ok(kl.max(0.0))
}
