//! A posterior with its mean shift scaled, `Q_s`: mean `m(x) + s·k_P(x,B)ᵀα`, covariance
//! unchanged, for a family of scales `s` fixed in advance (the SVM's `μ·f_SVM`, seed 001
//! §17.4). The mean is linear in `s` and the KL's mean term quadratic,
//!
//! `KL(Q_s‖P) = ½[ln det B + tr B⁻¹ − M] + s²·½ αᵀK_Bα`,
//!
//! so one prediction on the sample and one KL serve every `s` of the family: a menu over `s`
//! costs `O(N)` per candidate, not a prediction each.

use std::borrow::Cow;

use faer::MatRef;

use super::{GaussianPosterior, Marginals, Prior};
use crate::error::{Error, Result};

/// `Q_1` (the unscaled posterior), its marginals on a sample, and the two parts of its KL.
#[derive(Clone, Debug)]
pub struct MeanScaled<'a> {
    unit: Cow<'a, GaussianPosterior>,
    /// `Q_1`'s marginals on the sample.
    on_sample: Marginals,
    /// The prior mean `m(x_i)` on the sample (the part of the mean that is not scaled).
    prior_mean: Vec<f64>,
    /// `½[ln det B + tr B⁻¹ − M]`, the part of the KL that does not depend on `s`.
    kl_covariance: f64,
    /// `½ αᵀK_Bα`, the mean part at `s = 1`.
    kl_mean: f64,
    /// `KL(Q_1‖P)` as [`GaussianPosterior::kl_to_prior`] gives it (the same bits).
    kl_unit: f64,
}

impl<'a> MeanScaled<'a> {
    /// The family of `unit` with its marginals on the rows of `x` computed once.
    pub fn on_sample(unit: GaussianPosterior, x: MatRef<'_, f64>) -> Result<Self> {
        let on_sample = unit.predict(x)?;
        let prior_mean = unit.prior.mean(x)?;
        let (kl_covariance, kl_mean, kl_unit) = unit.kl_parts()?;
        Ok(Self {
            unit: Cow::Owned(unit),
            on_sample,
            prior_mean,
            kl_covariance,
            kl_mean,
            kl_unit,
        })
    }

    /// The family of `unit` from its marginals on a sample already computed (`on_sample` for
    /// callers that hold them, so the sample is predicted once); the prior mean there is
    /// recomputed.
    pub fn from_marginals(
        unit: &'a GaussianPosterior,
        x: MatRef<'_, f64>,
        on_sample: Marginals,
    ) -> Result<Self> {
        if on_sample.mean.len() != x.nrows() || on_sample.var.len() != x.nrows() {
            return Err(Error::ShapeMismatch {
                what: "marginals of a mean-scaled posterior",
                expected: format!("{} rows", x.nrows()),
                found: format!("{}", on_sample.mean.len()),
            });
        }
        let prior_mean = unit.prior.mean(x)?;
        let (kl_covariance, kl_mean, kl_unit) = unit.kl_parts()?;
        Ok(Self {
            unit: Cow::Borrowed(unit),
            on_sample,
            prior_mean,
            kl_covariance,
            kl_mean,
            kl_unit,
        })
    }

    /// `KL(Q_1‖P)`, the unscaled posterior's (bit for bit its `kl_to_prior`, computed once
    /// with the parts).
    pub fn kl_unit(&self) -> f64 {
        self.kl_unit
    }

    /// `Q_1`'s marginals on the sample.
    pub fn unit_marginals(&self) -> &Marginals {
        &self.on_sample
    }

    /// `KL(Q_0‖P)` of the centred posterior (mean weights 0): the KL's covariance part.
    pub fn kl_centred(&self) -> f64 {
        self.kl_covariance
    }

    /// Whether the prior is `GP(0, k)`: then scaling the mean weights scales the posterior
    /// mean everywhere and keeps its sign (not so about a split prior's non-zero mean).
    pub fn has_zero_prior_mean(&self) -> bool {
        matches!(self.unit.prior, Prior::Gp(_))
    }

    /// Number of sample points the marginals are held for.
    pub fn n(&self) -> usize {
        self.on_sample.mean.len()
    }

    /// `Q_s` itself: the mean weights scaled by `s`.
    pub fn posterior(&self, s: f64) -> Result<GaussianPosterior> {
        check_scale(s)?;
        let mut q = self.unit.clone().into_owned();
        q.alpha.iter_mut().for_each(|a| *a *= s);
        Ok(q)
    }

    /// `KL(Q_s‖P)` (module doc).
    pub fn kl_to_prior(&self, s: f64) -> Result<f64> {
        check_scale(s)?;
        Ok(self.kl_covariance + s * s * self.kl_mean)
    }

    /// The marginals of `Q_s` on the sample: the shift of the mean scaled by `s`, the
    /// variances unchanged.
    pub fn marginals(&self, s: f64) -> Result<Marginals> {
        check_scale(s)?;
        let shifted = |(m, m0): (&f64, &f64)| if *m0 == 0.0 { s * m } else { m0 + s * (m - m0) };
        Ok(Marginals {
            mean: self
                .on_sample
                .mean
                .iter()
                .zip(&self.prior_mean)
                .map(shifted)
                .collect(),
            var: self.on_sample.var.clone(),
        })
    }
}

/// A scale must be positive and finite.
fn check_scale(s: f64) -> Result<()> {
    if s > 0.0 && s.is_finite() {
        Ok(())
    } else {
        Err(Error::InvalidParameter {
            name: "scale of the posterior mean",
            value: s,
            reason: "must be positive and finite",
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::inference::laplace::{laplace, LaplaceConfig};
    use crate::kernel::Kernel;
    use crate::likelihood::Likelihood;
    use crate::posterior::Prior;
    use faer::Mat;

    /// For the shifted (zero site precision) form, a site form with precisions, and a
    /// conditioned prior with a non-zero mean, the family's KL and marginals at `s` equal
    /// those of `Q_s` built directly (its weights scaled, predicted and KL'd from scratch).
    #[test]
    fn family_equals_the_scaled_posterior() {
        let n = 30;
        let x = Mat::from_fn(n, 2, |i, j| ((i * 5 + j * 3) % 11) as f64 / 5.0 - 1.0);
        let y: Vec<f64> = (0..n)
            .map(|i| {
                if x[(i, 0)] > 0.1 * x[(i, 1)] {
                    1.0
                } else {
                    -1.0
                }
            })
            .collect();
        let k = Kernel::se_iso(0.7, 1.5);
        let alpha: Vec<f64> = (0..n).map(|i| ((i % 7) as f64 - 3.0) / 10.0).collect();
        let shifted = GaussianPosterior::shifted(k.clone(), x.clone(), alpha).unwrap();
        let lap = laplace(
            &k,
            &Likelihood::probit(),
            x.as_ref(),
            &y,
            &LaplaceConfig::default(),
        )
        .unwrap()
        .posterior;
        let mut conditioned = shifted.clone();
        conditioned.prior = Prior::conditioned(lap.clone());
        for q in [shifted, lap, conditioned] {
            let family = MeanScaled::on_sample(q, x.as_ref()).unwrap();
            for s in [0.25, 1.0, 3.0] {
                let direct = family.posterior(s).unwrap();
                let (kl, want) = (
                    family.kl_to_prior(s).unwrap(),
                    direct.kl_to_prior().unwrap(),
                );
                assert!((kl - want).abs() <= 1e-10 * (1.0 + want), "{kl} vs {want}");
                let (m, d) = (
                    family.marginals(s).unwrap(),
                    direct.predict(x.as_ref()).unwrap(),
                );
                for i in 0..n {
                    assert!((m.mean[i] - d.mean[i]).abs() < 1e-12, "mean at {i}");
                    assert_eq!(m.var[i], d.var[i]);
                }
            }
            assert!(family.kl_to_prior(0.0).is_err() && family.marginals(f64::NAN).is_err());
        }
    }
}
