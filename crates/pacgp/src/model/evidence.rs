//! The log marginal likelihood of an exact GP regressor at its own or other hyperparameters
//! (scikit-learn's `log_marginal_likelihood(theta, eval_gradient)`), on the standardised
//! targets it was fitted to (scikit-learn's `normalize_y=True`). The training sample comes out
//! of the model itself: the basis is the standardised inputs, and with `B = I + K/σ² + jI` the
//! site form's factor, `y = Cα = σ²Bα`.

use faer::{Mat, MatRef};

use super::{FittedModel, Task};
use crate::error::{Error, Result};
use crate::inference::evidence::laplace_evidence;
use crate::inference::laplace::LaplaceConfig;
use crate::inference::Problem;
use crate::optim::Objective;
use crate::posterior::Covariance;
use crate::regression::exact::{NegLogMarginalLikelihood, RowNoise};
use crate::spec::{Inference, Method, RegressionForm};

/// An exact GP's standardised training sample `(X, y, (σ², jitter))`.
type ExactSample = (Mat<f64>, Vec<f64>, (f64, f64));

/// A log evidence and, if asked, its gradient.
#[derive(Clone, Debug, PartialEq)]
pub struct LogEvidence {
    /// `ln p(y | X, θ, σ²)` on the standardised targets (GPML eq. 2.30).
    pub value: f64,
    /// `∂/∂p` for `p = [θ…, ln σ²]` (GPML eq. 5.9).
    pub gradient: Option<Vec<f64>>,
}

impl FittedModel {
    /// The parameters the evidence is a function of, `[θ…, ln σ²]` (ln values), and their names.
    /// With σ² kept at 0 (gpr's `noise`, known variances alone) they are `[θ…]` alone.
    pub fn evidence_params(&self) -> Result<(Vec<f64>, Vec<String>)> {
        let (noise, _) = self.exact_gp_sample()?.2;
        let k = self.posterior()?.kernel();
        let mut p = k.params();
        let mut names = k.param_names();
        if self.row_noise().fixed.is_none() {
            p.push(noise.ln());
            names.push("ln_noise_variance".into());
        }
        Ok((p, names))
    }

    /// The observation noise of the evidence: σ² a parameter (fitted or kept by the fit:
    /// scikit-learn's WhiteKernel is one either way) unless the fit kept it at 0, and gpr's
    /// known per-row variances (`alpha`).
    fn row_noise(&self) -> RowNoise {
        match &self.spec.method {
            Method::Gpr(s) => RowNoise {
                fixed: s.noise.filter(|v| *v == 0.0),
                known: match s.alpha.is_empty() {
                    true => Vec::new(),
                    false => s.alpha_at(self.n_train).unwrap_or_default(),
                },
            },
            _ => RowNoise::default(),
        }
    }

    /// `ln p(y | X)` at `params = [θ…, ln σ²]` (default: the model's own), with its gradient
    /// if asked; for exact GP regressors (gpr, pac-gp) only.
    pub fn log_evidence(&self, params: Option<&[f64]>, gradient: bool) -> Result<LogEvidence> {
        let (x, y, _) = self.exact_gp_sample()?;
        let own = self.evidence_params()?.0;
        let p = params.unwrap_or(&own);
        if p.len() != own.len() || p.iter().any(|v| !v.is_finite()) {
            return Err(Error::ShapeMismatch {
                what: "evidence parameters [θ…, ln σ²]",
                expected: format!("{} finite values", own.len()),
                found: format!("{} values", p.len()),
            });
        }
        let obj = NegLogMarginalLikelihood::new(
            self.posterior()?.kernel(),
            x.as_ref(),
            &y,
            Default::default(),
        )
        .with_noise(self.row_noise());
        let (value, g) = obj.value_and_gradient(p)?;
        Ok(LogEvidence {
            value: -value,
            gradient: gradient.then(|| g.into_iter().map(|v| -v).collect()),
        })
    }

    /// A binary Laplace classifier's log evidence `ln q(y | X, θ)` (GPML eq. 3.32) at kernel
    /// hyperparameters `theta` (ln values, [`crate::kernel::Kernel::params`] order; default:
    /// the model's own), with its gradient in θ if asked (GPML Alg. 5.1): scikit-learn's
    /// `GaussianProcessClassifier.log_marginal_likelihood`. A classifier's posterior does not
    /// hold its labels, so the raw training inputs `x` and labels `y` (±1) come with the call;
    /// the likelihood (and a probit's fitted λ, b) is held at the model's.
    pub fn classifier_log_evidence(
        &self,
        x: MatRef<'_, f64>,
        y: &[f64],
        theta: Option<&[f64]>,
        gradient: bool,
    ) -> Result<LogEvidence> {
        let laplace = matches!(
            &self.spec.method,
            Method::Classifier(c) if matches!(c.inference, Inference::Laplace(_))
        );
        let (
            true,
            Task::Classification {
                likelihood,
                posterior,
                ..
            },
        ) = (laplace, &self.task)
        else {
            return Err(Error::Unsupported(format!(
                "a classifier's log marginal likelihood is given for a binary Laplace classifier; \
                 '{}' has none here",
                self.method()
            )));
        };
        let mut kernel = posterior.kernel().clone();
        if let Some(theta) = theta {
            kernel.set_params(theta)?;
        }
        let x = self.x_scaler.transform(x)?;
        let p = Problem::new(&kernel, likelihood, x.as_ref(), y);
        let (_, g) = laplace_evidence(p, &LaplaceConfig::default(), None)?;
        Ok(LogEvidence {
            value: g.ln_evidence,
            gradient: gradient.then_some(g.kernel),
        })
    }

    /// The standardised training sample of an exact GP regressor, from its posterior:
    /// `(X, y, (σ², jitter))`.
    fn exact_gp_sample(&self) -> Result<ExactSample> {
        let home = self.spec.method.home();
        let exact = !home.split_prior() && home.regression_form() == Some(RegressionForm::Exact);
        let (noise, _) = self.regression_parts()?;
        let Covariance::Sites { chol_b, .. } = &self.posterior()?.cov else {
            return Err(no_evidence(self));
        };
        if !exact {
            return Err(no_evidence(self));
        }
        // y = σ² L (Lᵀ α); with known per-row variances, y = Π⁻¹L(LᵀΠ⁻¹α) (C = Π⁻¹BΠ⁻¹).
        let l = chol_b.l();
        let n = self.posterior()?.alpha.len();
        let a = &self.posterior()?.alpha;
        let per_row = !self.row_noise().known.is_empty();
        let Covariance::Sites { sqrt_pi, .. } = &self.posterior()?.cov else {
            return Err(no_evidence(self));
        };
        let scaled: Vec<f64> = match per_row {
            true => (0..n).map(|i| a[i] / sqrt_pi[i]).collect(),
            false => a.clone(),
        };
        let lt_a: Vec<f64> = (0..n)
            .map(|j| (j..n).map(|i| l[(i, j)] * scaled[i]).sum())
            .collect();
        let y = (0..n)
            .map(|i| {
                let l_lt_a = (0..=i).map(|j| l[(i, j)] * lt_a[j]).sum::<f64>();
                match per_row {
                    true => l_lt_a / sqrt_pi[i],
                    false => noise * l_lt_a,
                }
            })
            .collect();
        Ok((self.posterior()?.basis.clone(), y, (noise, chol_b.jitter())))
    }
}

fn no_evidence(m: &FittedModel) -> Error {
    Error::Unsupported(format!(
        "the log marginal likelihood is given for exact GP regression (gpr, pac-gp); '{}' has none here",
        m.method()
    ))
}
