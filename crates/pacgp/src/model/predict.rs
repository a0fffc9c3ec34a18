//! Predictions of a fitted model at raw inputs: a binary classifier's labels and
//! probabilities, a regressor's predictive distribution or its mean alone, and prediction
//! intervals by the method the model was fitted with.

use faer::MatRef;

use super::{FittedModel, RegressionPrediction, Task};
use crate::certificate::GibbsPredictor;
use crate::error::{Error, Result};
use crate::posterior::Marginals;

impl FittedModel {
    /// The latent marginals of a regressor's or binary classifier's posterior at raw inputs.
    fn latent(&self, x: MatRef<'_, f64>) -> Result<Marginals> {
        self.posterior()?
            .predict(self.standardised_inputs(x)?.as_ref())
    }

    /// [`FittedModel::latent`]'s means alone, without the variances' solves.
    fn latent_mean(&self, x: MatRef<'_, f64>) -> Result<Vec<f64>> {
        self.posterior()?
            .predict_mean(self.standardised_inputs(x)?.as_ref())
    }

    /// A binary classifier's (or the SVM's) labels at raw inputs, ±1: `+1` where
    /// `μ(x) + b ≥ 0` — the sign of the posterior mean, the label `predict` returns and the
    /// deployed certificate covers (`p(y = +1 | x) ≥ ½` in exact arithmetic; taken from the
    /// mean, not from `p`, whose rounding would make a mean of −10⁻³² a positive label).
    pub fn predict_labels(&self, x: MatRef<'_, f64>) -> Result<Vec<f64>> {
        if !matches!(self.task, Task::Classification { .. } | Task::Svm { .. }) {
            return Err(self.not_binary());
        }
        let mean = self.latent_mean(x)?;
        self.labels_of_mean(&mean)
    }

    /// [`FittedModel::predict_labels`] from the marginals [`FittedModel::predict_classification`]
    /// gave.
    pub fn labels_of(&self, m: &Marginals) -> Result<Vec<f64>> {
        self.labels_of_mean(&m.mean)
    }

    /// Why a regressor or a multi-class model has no binary prediction.
    fn not_binary(&self) -> Error {
        Error::Unsupported(if self.classes().is_some() {
            format!(
                "'{}' is a multi-class model: its predictions are per class (predict_classes)",
                self.method()
            )
        } else {
            format!(
                "'{}' is a regression model, not a classifier",
                self.method()
            )
        })
    }

    /// The labels `sgn(μ + b)` of latent means.
    fn labels_of_mean(&self, mean: &[f64]) -> Result<Vec<f64>> {
        let bias = self.gibbs_classifier(GibbsPredictor::Latent)?.bias;
        Ok(mean
            .iter()
            .map(|mu| if mu + bias >= 0.0 { 1.0 } else { -1.0 })
            .collect())
    }

    /// Class probabilities `p(y = +1 | x)` and latent marginals at raw inputs; for an SVM the
    /// probability that its Gibbs classifier says +1, `Φ(μ f_SVM(x)/√k(x,x))`.
    pub fn predict_classification(&self, x: MatRef<'_, f64>) -> Result<(Vec<f64>, Marginals)> {
        if self.task.labels().is_none() {
            return Err(self.not_binary());
        }
        let m = self.latent(x)?;
        let p = m
            .mean
            .iter()
            .zip(&m.var)
            .filter_map(|(mu, v)| self.task.positive_probability(*mu, *v))
            .collect();
        Ok((p, m))
    }

    /// Predictive distribution at raw inputs, in target units.
    ///
    /// ```
    /// # use pacgp::prelude::*;
    /// # let x = Mat::from_fn(30, 1, |i, _| i as f64 / 10.0);
    /// # let noise = |i: usize| 0.1 * ((i * 7 % 5) as f64 - 2.0);
    /// # let y = (0..30).map(|i| (i as f64 / 10.0).sin() + noise(i)).collect();
    /// # let data = Dataset::new(x, y)?;
    /// // `data`: 30 noisy points of sin(x) on [0, 3).
    /// let spec = FitOptions::default().check(MethodName::Gpr)?;
    /// let model = fit(&spec, &data, None)?;
    /// let at = Mat::from_fn(2, 1, |i, _| 1.0 + i as f64);
    /// let p = model.predict_regression(at.as_ref())?;
    /// assert!((p.mean[0] - 1f64.sin()).abs() < 0.2);
    /// // A new observation varies by the noise more than the latent function does.
    /// assert!(p.noisy_var[1] > p.latent_var[1] && p.latent_var[1] > 0.0);
    /// # Ok::<(), pacgp::Error>(())
    /// ```
    pub fn predict_regression(&self, x: MatRef<'_, f64>) -> Result<RegressionPrediction> {
        let (noise, ys) = self.regression_parts()?;
        let m = self.latent(x)?;
        Ok(RegressionPrediction {
            mean: m.mean.iter().map(|v| ys.unscale_mean(*v)).collect(),
            latent_var: m.var.iter().map(|v| ys.unscale_var(*v)).collect(),
            noisy_var: m.var.iter().map(|v| ys.unscale_var(v + noise)).collect(),
        })
    }

    /// The predictive mean alone at raw inputs, in target units: [`FittedModel::predict_regression`]'s
    /// `mean` to the bit, without computing the variances (O(N·n), not O(N²·n) for an exact GP).
    pub fn predict_regression_mean(&self, x: MatRef<'_, f64>) -> Result<Vec<f64>> {
        let (_, ys) = self.regression_parts()?;
        let mean = self.latent_mean(x)?;
        Ok(mean.iter().map(|v| ys.unscale_mean(*v)).collect())
    }

    /// Prediction intervals of level `1 − alpha` at raw inputs (`predict --interval`), by the
    /// method the model was fitted with (its spec's `intervals`; [`crate::conformal`]).
    pub fn predict_intervals(
        &self,
        x: MatRef<'_, f64>,
        alpha: f64,
    ) -> Result<crate::conformal::PredictionIntervals> {
        self.regression_parts()?;
        if let (
            Some(iv),
            Task::Regression {
                intervals: Some(record),
                ..
            },
        ) = (&self.spec.intervals, &self.task)
        {
            return record.intervals(iv, self, x, alpha);
        }
        if self.spec.intervals.is_none() && super::intervals::has_free_jackknife(&self.spec) {
            return super::intervals::default_intervals(self, x, alpha);
        }
        Err(Error::Spec(crate::spec::SpecError::missing(
            crate::spec::SpecOption::Intervals,
            self.method(),
            "prediction intervals are prepared when fitting (jackknife+, cv+ or \
             split-conformal); refit with one",
        )))
    }
}
