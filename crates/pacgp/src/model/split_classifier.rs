//! The classifier split prior's record in model files ([`crate::objective::gpc_split`]): the
//! split (fraction, menu of fractions × directions, seed, whether the parts were swapped),
//! θ_A, the prior's covariance scale t and mean scale s, and Catoni's λ. The model's posterior
//! Q is stored over `A ∪ B` in site form (`P_A`'s sites, then B's). `certify`
//! (`model::split`) re-derives the parts from the sample, the seed and the fraction (the
//! library's one [`SampleSplit`]: any row order of the same sample gives the same parts), refits part A's prior as the fit did, checks the record and Q against it, and
//! certifies Q on part B.

use serde::{Deserialize, Serialize};

use crate::bounds::ConfidenceTerm;
use crate::data::{Dataset, SampleSplit};
use crate::error::{Error, Result};
use crate::kernel::Kernel;
use crate::objective::gp_split::SplitFraction;
use crate::objective::gpc_split::{SplitPriorConfig, SplitPriorFit};
use crate::objective::pac_gpc::SiteParams;
use crate::posterior::{Covariance, GaussianPosterior};

/// What a classifier fitted with the split prior keeps for `certify`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ClassifierSplitRecord {
    /// Fraction F of part A.
    pub fraction: f64,
    /// Number of (fraction, direction) pairs the bound chose among: fractions × directions
    /// (1 = fixed; `ln` of it is charged).
    pub menu: usize,
    /// Whether the parts' roles were swapped: part A is the permutation's last `n_a` rows and
    /// part B its first `n_b` ([`SplitPriorConfig::both_directions`]); older files: false.
    #[serde(default)]
    pub swapped: bool,
    /// Seed of the permutation of the training rows that makes the split.
    pub seed: u64,
    /// Size of part A.
    pub n_a: usize,
    /// Size of part B (the certificate's sample).
    pub n_b: usize,
    /// θ_A: the kernel fitted by ML-II on part A (before the scale t).
    pub kernel_a: Kernel,
    /// The scale t of the prior's covariance, `P_A = GP(s·μ_A, t·k_A)`.
    pub prior_scale: f64,
    /// The scale s of the prior's mean (older files: 1). `certify` rebuilds `P_A` from Q's
    /// block on A, which already holds `s·α_A/t`; s is kept for the record and its checks.
    #[serde(default = "unit_scale")]
    pub mean_scale: f64,
    /// Catoni's λ (fixed without part B), if the certificate is Catoni's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lambda: Option<f64>,
    /// The confidence term of the fitted certificate (Catoni's at λ, or the kl bound's).
    pub term: ConfidenceTerm,
    /// Files before the one sample split stored the training rows' order here (their split
    /// was made in the file's row order); such a record is refused with a request to refit.
    #[serde(default, rename = "row_order", skip_serializing)]
    pub legacy_row_order: Option<serde_json::Value>,
}

/// The serde default of [`ClassifierSplitRecord::mean_scale`]: files before it had s = 1.
fn unit_scale() -> f64 {
    1.0
}

impl ClassifierSplitRecord {
    /// The record of a split-prior fit on `train`.
    /// `Unsupported` when the fit is not one `certify` can reproduce from the record: Q's
    /// kernel is not `t·k_A` (or `k_A` at t = s = 1), the fraction is not the configured one,
    /// or the parts are not the seeded permutation's in either direction.
    pub fn of(fit: &SplitPriorFit, cfg: &SplitPriorConfig, train: &Dataset) -> Result<Self> {
        let kernel_a = fit.prior_kernel.clone();
        let unscaled = fit.prior_scale == 1.0 && fit.mean_scale == 1.0;
        let q_kernel = if unscaled {
            kernel_a.clone()
        } else {
            Kernel::Scale {
                ln_variance: fit.prior_scale.ln(),
                inner: Box::new(kernel_a.clone()),
            }
        };
        if *fit.posterior.kernel() != q_kernel {
            return Err(Error::Unsupported(
                "a split prior's posterior kernel must be t·k_A with k_A the prior's kernel".into(),
            ));
        }
        let fractions = match cfg.fraction {
            SplitFraction::Fixed(f) if f != fit.fraction => {
                return Err(Error::Unsupported(format!(
                    "the fit's fraction {} is not the configured {f}",
                    fit.fraction
                )))
            }
            SplitFraction::Fixed(_) => 1,
            SplitFraction::Menu => crate::objective::gp_split::SPLIT_FRACTIONS.len(),
        };
        let directions = if cfg.both_directions { 2 } else { 1 };
        let swapped = split_direction(fit, cfg.seed, train)?;
        if swapped && !cfg.both_directions {
            return Err(Error::Unsupported(
                "swapped parts need SplitPriorConfig::both_directions".into(),
            ));
        }
        Ok(Self {
            fraction: fit.fraction,
            menu: fractions * directions,
            swapped,
            seed: cfg.seed,
            n_a: fit.part_a.len(),
            n_b: fit.part_b.len(),
            kernel_a,
            prior_scale: fit.prior_scale,
            mean_scale: fit.mean_scale,
            lambda: fit.lambda,
            term: fit.certificate.confidence_term,
            legacy_row_order: None,
        })
    }

    /// The record fits a model of `n_train` rows whose posterior has `n_basis` basis points
    /// where Q's basis is part B (`None` where it is not: pac-svgp's inducing inputs); parts of
    /// both sizes summing to it, t > 0, λ > 0; not a record of an older version.
    pub fn check(&self, n_train: usize, n_basis: Option<usize>) -> std::result::Result<(), String> {
        let n = self.n_a + self.n_b;
        let basis_ok = n_basis.is_none_or(|b| b == self.n_b);
        if self.n_a == 0 || self.n_b == 0 || n != n_train || !basis_ok {
            let basis = n_basis.map_or(String::new(), |b| {
                format!(" and {b} basis points (Q's basis is part B)")
            });
            return Err(format!(
                "parts of {} and {} rows for {n_train} training rows{basis}",
                self.n_a, self.n_b
            ));
        }
        if self.legacy_row_order.is_some() {
            return Err(
                "written by an older version of pacgp, whose classifier split followed the \
                 file's row order; refit the model with this version"
                    .into(),
            );
        }
        let positive = |v: f64| v.is_finite() && v > 0.0;
        if !positive(self.prior_scale) || !self.lambda.is_none_or(positive) {
            return Err("the prior scale t and Catoni's λ must be positive and finite".into());
        }
        if !self.mean_scale.is_finite() {
            return Err(format!("mean scale {} must be finite", self.mean_scale));
        }
        if !(self.fraction > 0.0 && self.fraction < 1.0) || self.menu == 0 {
            return Err(format!(
                "fraction {} (must lie in (0, 1)), menu of {}",
                self.fraction, self.menu
            ));
        }
        Ok(())
    }

    /// The sites of part B in a stored Q (site form over part B, its prior `P_A`).
    pub fn sites_of_b(&self, q: &GaussianPosterior) -> Result<SiteParams> {
        let Covariance::Sites { sqrt_pi, .. } = &q.cov else {
            return Err(Error::Unsupported(
                "a split-prior classifier's posterior is in site form".into(),
            ));
        };
        if q.alpha.len() != self.n_b {
            return Err(Error::ShapeMismatch {
                what: "split prior record",
                expected: format!("{} basis points (part B)", self.n_b),
                found: format!("{}", q.alpha.len()),
            });
        }
        Ok(SiteParams {
            alpha: q.alpha.clone(),
            ln_pi: sqrt_pi.iter().map(|s| 2.0 * s.ln()).collect(),
        })
    }
}

/// Whether the fit's parts are the sample split's swapped direction (part A from the end of
/// the permutation) rather than the plain one; `Unsupported` if neither.
fn split_direction(fit: &SplitPriorFit, seed: u64, train: &Dataset) -> Result<bool> {
    for swapped in [false, true] {
        let split = SampleSplit {
            swapped,
            ..SampleSplit::new(fit.fraction, seed)
        };
        if split.parts(train)? == (fit.part_a.clone(), fit.part_b.clone()) {
            return Ok(swapped);
        }
    }
    Err(Error::Unsupported(
        "the fit's parts are not the seeded sample split's in either direction".into(),
    ))
}
