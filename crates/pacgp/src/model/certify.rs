//! Certifying a fitted model on its training sample: the options, one dispatch over the
//! task, the binary and regression certificates and their leave-one-out. The split priors'
//! certificates are in `split`, the multi-class ones in `multiclass` and `softmax`, the
//! holdout's test-set bound in `holdout`.

use faer::MatRef;

use super::{CertificateReport, FittedModel, RegressionSplit, Task};
use crate::bounds::ConfidenceTerm;
use crate::certificate::{Certificate, CertificateSpec, GibbsLoss, GibbsPredictor, PenaltyTerm};
use crate::data::{Dataset, TargetScaler};
use crate::error::{Error, Result};
use crate::loo::{ClassifierLoo, LooEstimator, LooMode, RegressionModel};
use crate::loss::RegressionLoss;
use crate::metrics;
use crate::posterior::{GaussianPosterior, MeanScaled};
use crate::regression::exact::ExactGp;
use crate::regression::sparse::SparseGp;
use crate::spec::LooRequest;

/// Settings of [`FittedModel::certify`]; `None` takes the model's own (its spec's δ, the
/// confidence constant and Gibbs classifier it was trained with).
#[derive(Clone, Debug, PartialEq)]
pub struct CertifyOptions {
    /// ε values of the ε-band loss in target units (regression). Empty = the model's own ε.
    /// Several ε certified at once pay `ln k` more each (union bound).
    pub epsilons: Vec<f64>,
    /// Confidence δ.
    pub delta: Option<f64>,
    /// Confidence constant.
    pub term: Option<ConfidenceTerm>,
    /// Classifier certificates: which Gibbs classifier.
    pub predictor: Option<GibbsPredictor>,
    /// Which leave-one-out estimates go beside the certificate (`auto`: the fast one where
    /// the model has one).
    pub loo: LooRequest,
}

impl Default for CertifyOptions {
    /// The model's own settings, with the fast leave-one-out beside the bound where the
    /// model has one.
    fn default() -> Self {
        Self {
            epsilons: Vec::new(),
            delta: None,
            term: None,
            predictor: None,
            loo: LooRequest::Auto,
        }
    }
}

/// [`CertifyOptions`] with the model's defaults filled in.
pub(super) struct Resolved {
    pub(super) delta: f64,
    pub(super) term: ConfidenceTerm,
    pub(super) predictor: GibbsPredictor,
}

/// A regressor refitted on the certified sample at its stored parameters, for its LOO.
enum RegressionRefit {
    Exact(ExactGp),
    Sparse(SparseGp),
}

impl RegressionRefit {
    fn as_loo<'a>(&'a self, x: MatRef<'a, f64>, y: &'a [f64]) -> RegressionModel<'a> {
        match self {
            RegressionRefit::Exact(gp) => RegressionModel::Exact(gp),
            RegressionRefit::Sparse(gp) => RegressionModel::Sparse { gp, x, y },
        }
    }
}

impl FittedModel {
    /// The confidence constant the model was trained with (a split prior's record holds
    /// Catoni's λ where it used it; checked against the spec by [`FittedModel::choices`]).
    pub fn trained_confidence_term(&self) -> ConfidenceTerm {
        match &self.task {
            Task::Classification {
                split_prior: Some(r),
                ..
            } => r.term,
            _ => self.spec.confidence_term(),
        }
    }

    /// The Gibbs classifier the spec names (latent for regressors and the SVM).
    pub(super) fn trained_predictor(&self) -> GibbsPredictor {
        match &self.spec.method {
            crate::spec::Method::Classifier(c) => c.predictor,
            crate::spec::Method::PacGpc(c) => c.predictor,
            _ => GibbsPredictor::Latent,
        }
    }

    /// The options with the model's own defaults, δ and Catoni's λ checked before any refit:
    /// Catoni's λ only as the fit fixed it ([`Error::CatoniNotFromFit`] otherwise).
    pub(super) fn resolve(&self, opts: &CertifyOptions) -> Result<Resolved> {
        if let Some(ConfidenceTerm::Catoni { lambda }) = opts.term {
            let trained = self.trained_confidence_term();
            if opts.term != Some(trained) {
                return Err(Error::CatoniNotFromFit {
                    lambda,
                    trained: trained.catoni_lambda(),
                });
            }
        }
        let resolved = Resolved {
            delta: opts.delta.unwrap_or(self.spec.delta),
            term: opts.term.unwrap_or_else(|| self.trained_confidence_term()),
            predictor: opts.predictor.unwrap_or_else(|| self.trained_predictor()),
        };
        crate::bounds::BoundTarget::check_confidence(resolved.delta, resolved.term)?;
        Ok(resolved)
    }

    /// PAC-Bayes certificates on `sample`, which must be the training sample: of the ε-band
    /// Gibbs risk for regression (one per ε, with the closed-form LOO for exact GPs), of the
    /// Gibbs classification error for classifiers (docs/math.md §7.1). Every price is
    /// re-derived from the model's spec ([`FittedModel::choices`]), never read from the file;
    /// the input (and target) scalers must be the sample's; for several ε, `ln k` more.
    ///
    /// A model fitted with a holdout (`super::holdout`) takes the whole sample `fit` was
    /// given: the Gibbs certificates are on its fit rows at δ/2, and each carries the test-set
    /// bound on the deployed predictor from the held-out rows at δ/(2k) (`deployed`).
    /// A classifier's certificates carry the sample's majority-class rate beside the bound.
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
    ///
    /// // A regressor's certificate needs ε (here none was stored with the fit): two at once.
    /// let opts = CertifyOptions { epsilons: vec![0.2, 0.4], ..Default::default() };
    /// let reports = model.certify(&data, &opts)?;
    /// assert_eq!(reports.len(), 2);
    /// for r in &reports {
    ///     let c = &r.certificate;
    ///     assert!(c.empirical_risk <= c.bound && c.bound <= 1.0);
    ///     assert!(c.penalty >= 2f64.ln()); // two ε certified together pay ln 2
    ///     assert!(r.loo_error.is_some()); // the closed-form leave-one-out beside it
    /// }
    /// // A wider band misses fewer targets.
    /// assert!(reports[1].certificate.bound <= reports[0].certificate.bound);
    ///
    /// // The certificate holds on the sample it was fitted on only.
    /// let other = data.subset(&[0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    /// assert!(model.certify(&other, &opts).is_err());
    /// # Ok::<(), pacgp::Error>(())
    /// ```
    pub fn certify(
        &self,
        sample: &Dataset,
        opts: &CertifyOptions,
    ) -> Result<Vec<CertificateReport>> {
        if let Task::MultiOutput { .. } = self.task {
            return Err(super::outputs::certified_per_output());
        }
        let mut reports = match self.holdout_parts(sample)? {
            Some(parts) => self.certify_with_holdout(&parts, opts)?,
            None => self.certify_fit_rows(sample, opts)?,
        };
        if self.is_classifier() {
            let rate = metrics::majority_rate(&sample.y)?;
            for r in &mut reports {
                r.majority_rate = Some(rate);
            }
        }
        let duplicates = crate::data::Duplicates::of(sample);
        for r in &mut reports {
            r.duplicates = Some(duplicates);
            r.stopped_early = self.report.stopped_early;
        }
        Ok(reports)
    }

    /// [`FittedModel::certify`] on the rows the model was fitted on (a fit's own certificate
    /// before its holdout is recorded): one match over the task, each kind's certificate in
    /// its own function.
    pub(crate) fn certify_fit_rows(
        &self,
        sample: &Dataset,
        opts: &CertifyOptions,
    ) -> Result<Vec<CertificateReport>> {
        self.check_training_sample(sample)?;
        let r = self.resolve(opts)?;
        let loo = self.spec.leave_one_out(opts.loo)?;
        if self.is_classifier() && !opts.epsilons.is_empty() {
            return Err(Error::Unsupported(
                "ε applies to regression models; a classifier's certificate bounds its 0-1 error"
                    .into(),
            ));
        }
        match &self.task {
            Task::MultiOutput { .. } => Err(super::outputs::certified_per_output()),
            Task::OneVsRest { .. } => self.certify_one_vs_rest(sample, &r, loo),
            Task::Softmax { .. } => self.softmax_certify(sample, &r, loo),
            Task::Classification {
                split_prior: Some(record),
                ..
            } => (self.certify_split_classifier(record, sample, &r))
                .map_err(|e| self.part_a_before_the_wide_start(e)),
            Task::Classification { posterior, .. } | Task::Svm { posterior, .. } => {
                self.certify_binary(posterior, sample, &r, loo)
            }
            Task::Regression {
                posterior,
                split_prior,
                ..
            } => {
                let epsilons = self.certified_epsilons(opts)?;
                match split_prior {
                    Some(RegressionSplit::Dense(record)) => (self
                        .certify_split_prior(record, sample, &epsilons, &r))
                    .map_err(|e| self.part_a_before_the_wide_start(e)),
                    Some(RegressionSplit::Sparse(record)) => (self
                        .certify_sparse_split_prior(record, sample, &epsilons, &r))
                    .map_err(|e| self.part_a_before_the_wide_start(e)),
                    None => self.certify_regression(posterior, sample, &epsilons, &r, loo),
                }
            }
        }
    }

    /// The Gibbs and deployed certificates of a binary classifier (GP classifier or SVM) on
    /// its data-free prior, with its leave-one-out.
    fn certify_binary(
        &self,
        posterior: &GaussianPosterior,
        sample: &Dataset,
        r: &Resolved,
        loo: Option<LooMode>,
    ) -> Result<Vec<CertificateReport>> {
        let (xs, family, spec) = self.binary_family(posterior, sample, r)?;
        let loss = GibbsLoss::Classification(self.gibbs_classifier(r.predictor)?);
        let certificate =
            Certificate::of_predictions(&family, family.unit_marginals(), &sample.y, &loss, &spec)?;
        let mut report = CertificateReport::new(certificate, None);
        report.deployed =
            Some(self.derandomised_classifier(&family, xs.as_ref(), &sample.y, &spec)?);
        if let Some(mode) = loo {
            let loo = self.classifier_loo(xs.as_ref(), &sample.y, mode)?;
            report.loo_error = loo.approx.as_ref().map(|a| a.loo.rate);
            report.loo_estimator = loo.approx.as_ref().map(|a| a.estimator);
            report.loo_exact_error = loo.exact.as_ref().map(|e| e.rate);
        }
        Ok(vec![report])
    }

    /// A binary classifier's posterior family on the standardised `sample` and the spec of
    /// its certificates: one prediction and one KL serve the Gibbs and the deployed one.
    pub(super) fn binary_family<'a>(
        &self,
        posterior: &'a GaussianPosterior,
        sample: &Dataset,
        r: &Resolved,
    ) -> Result<(faer::Mat<f64>, MeanScaled<'a>, CertificateSpec)> {
        let xs = self.standardised_inputs(sample.x.as_ref())?;
        let choices = self.choices()?;
        self.check_scalers(sample)?;
        let spec = CertificateSpec::new(r.delta, r.term, choices);
        let marginals = posterior.predict(xs.as_ref())?;
        let family = MeanScaled::from_marginals(posterior, xs.as_ref(), marginals)?;
        Ok((xs, family, spec))
    }

    /// The ε values a regressor is certified at: the options', else the model's own (each
    /// checked as an ε-band loss).
    fn certified_epsilons(&self, opts: &CertifyOptions) -> Result<Vec<f64>> {
        let epsilons = if opts.epsilons.is_empty() {
            vec![self.spec.epsilon().ok_or_else(|| {
                Error::Spec(crate::spec::SpecError::missing(
                    crate::spec::SpecOption::Epsilon,
                    self.method(),
                    "the ε-band loss of its certificate needs ε in the target's units, and this model was not fitted with one",
                ))
            })?]
        } else {
            opts.epsilons.clone()
        };
        for &e in &epsilons {
            RegressionLoss::new_epsilon_band(e)?;
        }
        Ok(epsilons)
    }

    /// The Gibbs and deployed certificates of a regressor on its data-free prior, one per ε
    /// (`ln k` more each for k of them), with its leave-one-out.
    fn certify_regression(
        &self,
        posterior: &GaussianPosterior,
        sample: &Dataset,
        epsilons: &[f64],
        r: &Resolved,
        loo: Option<LooMode>,
    ) -> Result<Vec<CertificateReport>> {
        let xs = self.standardised_inputs(sample.x.as_ref())?;
        let mut choices = self.choices()?;
        self.check_scalers(sample)?;
        choices.extend(epsilon_union(epsilons));
        let (noise, ys) = self.regression_parts()?;
        let y_std = ys.transform(&sample.y);
        let spec = CertificateSpec::new(r.delta, r.term, choices);
        // One prediction and one KL serve every ε's Gibbs and deployed certificates.
        let marginals = posterior.predict(xs.as_ref())?;
        let family = MeanScaled::from_marginals(posterior, xs.as_ref(), marginals)?;
        let bands = epsilons
            .iter()
            .map(|&eps| RegressionLoss::band_in_standard_units(eps, ys.sd))
            .collect::<Result<Vec<_>>>()?;
        let losses: Vec<GibbsLoss> = bands.iter().map(|l| GibbsLoss::Regression(*l)).collect();
        let certificates =
            Certificate::for_losses(&family, family.unit_marginals(), &y_std, &losses, &spec)?;
        // One LOO (a closed form, or N refits) serves every ε: only the band changes.
        let loo = match loo {
            Some(mode) => {
                let model = self.regression_refit(xs.as_ref(), &y_std, noise)?;
                Some(crate::loo::regression_loo(
                    model.as_loo(xs.as_ref(), &y_std),
                    bands[0].epsilon(),
                    mode,
                )?)
            }
            None => None,
        };
        epsilons
            .iter()
            .zip(bands)
            .zip(certificates)
            .map(|((&eps, loss), certificate)| {
                let mut report = CertificateReport::new(certificate, Some(eps));
                report.deployed = Some(Self::derandomised_regressor(
                    &family,
                    &y_std,
                    (&loss, eps),
                    &spec,
                )?);
                if let Some(loo) = &loo {
                    let n = y_std.len() as f64;
                    let band = loss.epsilon();
                    if let Some(a) = &loo.approx {
                        report.loo_error = Some(a.loo.band_error(&y_std, band));
                        report.loo_estimator = Some(LooEstimator::ClosedForm);
                        // Densities transform with the Jacobian 1/sd of the standardisation.
                        report.loo_log_predictive = Some(a.loo.log_predictive / n - ys.sd.ln());
                        report.loo_rmse = Some(a.loo.mse(&y_std).sqrt() * ys.sd);
                    }
                    report.loo_exact_error =
                        loo.exact.as_ref().map(|e| e.loo.band_error(&y_std, band));
                }
                Ok(report)
            })
            .collect()
    }

    /// The stored scalers must be the ones the training sample gives (they shape the prior):
    /// recomputed here and compared to 1e-9 relative (a sharded fit sums its moments in
    /// another order; an edit that changes the bound is far larger).
    pub(super) fn check_scalers(&self, sample: &Dataset) -> Result<()> {
        // Means and deviations agree to 1e-9 of the deviation (the column's own scale).
        let close = |a: f64, b: f64, sd: f64| (a - b).abs() <= 1e-9 * sd;
        let x = match self.spec.scales_inputs() {
            true => crate::data::Standardizer::fit(sample.x.as_ref(), &self.feature_names)?,
            false => crate::data::Standardizer::identity(sample.d()),
        };
        let s = &self.x_scaler;
        let same = x.mean.len() == s.mean.len()
            && (0..x.mean.len())
                .all(|j| close(x.mean[j], s.mean[j], x.sd[j]) && close(x.sd[j], s.sd[j], x.sd[j]));
        if !same {
            return Err(Error::ModelMismatch {
                part: "input scaler".into(),
                reason: "its means and deviations are not the training sample's".into(),
            });
        }
        if let Task::Regression { y_scaler, .. } = &self.task {
            let y = match self.spec.scales_targets() {
                true => TargetScaler::fit_column(&sample.y, &self.target_name)?,
                false => TargetScaler::identity(),
            };
            if !close(y.mean, y_scaler.mean, y.sd) || !close(y.sd, y_scaler.sd, y.sd) {
                return Err(Error::ModelMismatch {
                    part: "target scaler".into(),
                    reason: "its mean and deviation are not the training sample's".into(),
                });
            }
        }
        Ok(())
    }

    /// Leave-one-out of a classifier on its (standardised) training sample: the method is
    /// refitted once at the stored kernel, in the sample's row order, then LOO'd.
    pub(super) fn classifier_loo(
        &self,
        x: MatRef<'_, f64>,
        y: &[f64],
        mode: LooMode,
    ) -> Result<ClassifierLoo> {
        if let Task::Svm { config, .. } = &self.task {
            return self.svm_loo(x, y, config, mode);
        }
        let Task::Classification {
            likelihood,
            posterior,
            ..
        } = &self.task
        else {
            return Err(Error::Unsupported("not a classifier".into()));
        };
        if let crate::spec::Method::Svgp(_) = self.spec.method {
            // Its rows' sites removed from the stored q(u) (docs/math.md eqs. 12.7–12.8).
            let criterion = self.svgp_criterion(likelihood)?;
            let approx = crate::loo::inducing_site_loo(posterior, &criterion, x, y)?;
            return Ok(ClassifierLoo {
                approx: Some(approx),
                exact: None,
            });
        }
        if let crate::spec::Method::PacGpc(_) = self.spec.method {
            // Its sites are trained by its bound: their cavities, the stored posterior's
            // (`leave_one_out` refuses refits for it).
            let approx = crate::loo::posterior_cavity_loo(posterior, likelihood, y)?;
            return Ok(ClassifierLoo {
                approx: Some(approx),
                exact: None,
            });
        }
        let method = self.inference_method()?;
        let fit = method.fit(self.posterior()?.kernel(), likelihood, x, y)?;
        crate::loo::classifier_loo(&method, likelihood, x, y, &fit, mode)
    }

    /// What a binary sparse variational classifier's `q(u)` is the stationary point of (its
    /// rows' sites, docs/math.md eqs. 12.6, 12.8): its evidence lower bound with the stored
    /// likelihood's link, or the bound the fit minimised, rebuilt from the spec.
    pub(crate) fn svgp_criterion(
        &self,
        likelihood: &crate::likelihood::Likelihood,
    ) -> Result<crate::svgp::SvgpCriterion> {
        let crate::spec::Method::Svgp(s) = &self.spec.method else {
            return Err(Error::Unsupported(format!(
                "'{}' is not a binary sparse variational classifier",
                self.method()
            )));
        };
        let mut settings = crate::plan::svgp_settings(&self.spec, s, self.n_train);
        settings.link = crate::svgp::svgp_link(likelihood)?;
        settings.objective_criterion(self.posterior()?.kernel().n_params())
    }

    /// Leave-one-out of an SVM: refitted once on the sample with its stored settings on the
    /// prior kernel, then linear response (seed 001 eqs. 17.26–17.32) and/or warm refits.
    fn svm_loo(
        &self,
        x: MatRef<'_, f64>,
        y: &[f64],
        config: &crate::svm::SvmConfig,
        mode: LooMode,
    ) -> Result<ClassifierLoo> {
        use crate::loo::ApproxLoo;
        let kernel = self.posterior()?.kernel();
        let fit = self.svm_fit(x, y)?;
        let fit = fit.as_ref();
        let approx = match mode {
            LooMode::Approx | LooMode::Both => Some(ApproxLoo {
                estimator: LooEstimator::LinearResponse,
                loo: crate::svm::loo::svm_loo(fit, kernel, x, y)?,
            }),
            LooMode::Exact => None,
        };
        let exact = match mode {
            LooMode::Exact | LooMode::Both => {
                Some(crate::svm::loo::svm_exact_loo(kernel, x, y, config, fit)?)
            }
            LooMode::Approx => None,
        };
        Ok(ClassifierLoo { approx, exact })
    }

    /// The regressor at its stored parameters on the sample (row order of the sample).
    fn regression_refit(
        &self,
        x: MatRef<'_, f64>,
        y: &[f64],
        noise: f64,
    ) -> Result<RegressionRefit> {
        use crate::spec::RegressionForm;
        let posterior = self.posterior()?;
        let kernel = posterior.kernel().clone();
        let sparse = |method| {
            RegressionRefit::Sparse(SparseGp {
                kernel: kernel.clone(),
                noise_variance: noise,
                z: posterior.basis.clone(),
                method,
            })
        };
        Ok(match self.spec.method.home().regression_form() {
            Some(RegressionForm::Exact) => RegressionRefit::Exact(ExactGp::fit(
                kernel.clone(),
                noise,
                x.to_owned(),
                y.to_vec(),
                &Default::default(),
            )?),
            Some(RegressionForm::Sparse(method)) => sparse(method),
            None => {
                return Err(Error::Unsupported(format!(
                    "{} is not a regression method",
                    self.method()
                )))
            }
        })
    }
}

impl CertificateReport {
    /// A certificate with no LOO figures yet.
    pub fn new(certificate: Certificate, epsilon: Option<f64>) -> Self {
        Self {
            certificate,
            epsilon,
            loo_error: None,
            loo_estimator: None,
            loo_exact_error: None,
            loo_log_predictive: None,
            loo_rmse: None,
            deployed: None,
            majority_rate: None,
            stopped_early: None,
            duplicates: None,
        }
    }
}

/// The price of certifying k > 1 values of ε at once: a union bound over them, `ln k` (none
/// for one ε).
pub(super) fn epsilon_union<T: Clone>(epsilons: &[T]) -> Option<PenaltyTerm> {
    (epsilons.len() > 1)
        .then(|| crate::select::Menu::charged(epsilons.to_vec(), "ε of the loss").price())
}
