//! The classification family's pipeline: any approximate-inference method with its kernel
//! chosen by the bound over a fixed candidate menu or by ML-II snapped onto the PAC grid (the
//! split prior is in [`super::pac_gpc`]).

use super::MethodFit;
use faer::MatRef;

use crate::bounds::{ConfidenceTerm, HyperGrid};
use crate::certificate::{Certificate, CertificateSpec, GibbsClassifier, GibbsLoss, PenaltyTerm};
use crate::data::{Dataset, LabelMap, Standardizer};
use crate::error::{Error, Result};
use crate::inference::{ClassifierFit, InferenceMethod, Ml2Settings, Problem};
use crate::kernel::{start, Kernel};
use crate::likelihood::Likelihood;
use crate::model::{FitReport, FittedModel, Task};
use crate::optim::{OptimReport, Restarts};
use crate::plan::{classifier_menu, inference_method};
use crate::spec::{CheckedFitSpec, ClassifierHypers, ClassifierSpec};

/// The fixed parts of a classifier fit: its method, likelihood, δ and Gibbs classifier.
struct Setup {
    method: InferenceMethod,
    likelihood: Likelihood,
    delta: f64,
    classifier: GibbsClassifier,
    /// ML-II's seeded restarts.
    restarts: Restarts,
}

impl Setup {
    /// The certificate of a fit on its training sample, given what was chosen.
    fn certificate(
        &self,
        fit: &ClassifierFit,
        x: MatRef<'_, f64>,
        y: &[f64],
        choices: Vec<PenaltyTerm>,
    ) -> Result<Certificate> {
        let loss = GibbsLoss::Classification(self.classifier);
        let spec = CertificateSpec::new(self.delta, ConfidenceTerm::Maurer, choices);
        Certificate::of_posterior(&fit.posterior, x, y, &loss, &spec)
    }
}

/// A chosen classifier fit with its certificate, the optimiser report of the choice and the
/// notes of how it was chosen.
struct Selected {
    fit: ClassifierFit,
    certificate: Certificate,
    optimiser: Option<OptimReport>,
    notes: Vec<String>,
}

/// The lowest-bound fit among the candidate kernels, paying `ln 9` for the choice.
fn select_by_bound(x: MatRef<'_, f64>, y: &[f64], s: &Setup) -> Result<Selected> {
    let chosen = classifier_menu(x.ncols()).by_bound(|k, price| {
        let fit = s.method.fit(k, &s.likelihood, x, y)?;
        let certificate = s.certificate(&fit, x, y, vec![price.clone()])?;
        let bound = certificate.bound;
        Ok(((fit, certificate), bound))
    })?;
    let (fit, certificate) = chosen.value;
    Ok(Selected {
        fit,
        certificate,
        optimiser: None,
        notes: Vec::new(),
    })
}

/// ML-II inside the grid's range, θ snapped onto the grid (by the driver), refit there with
/// the method's own settings, warm-started; penalty `T·ln 1201`. Laplace's, EP's and IVM's
/// ML-II start on more than [`start::WIDE_INPUTS`] inputs at the median distance and stop by
/// the stall rule, as gpr's does (their objectives are log evidences summed over the rows or
/// IVM's active set, in nats; [`start`]); the start is `seed`'s and the fit's notes say where
/// it was.
fn select_by_ml2(
    kernel: &Kernel,
    x: MatRef<'_, f64>,
    y: &[f64],
    s: &Setup,
    seed: u64,
) -> Result<Selected> {
    let grid = HyperGrid::default();
    let settings = Ml2Settings {
        grid,
        restarts: s.restarts,
        stall: start::wide_stall(x.ncols()),
    };
    let (kernel, note) =
        start::wide_start_noted(kernel.clone(), x, seed, "leaves the evidence flat");
    let notes = note.into_iter().collect();
    // The driver snaps θ onto the grid; the method's home refits there with its own
    // settings (tighter than ML-II's), warm-started from the ML-II state at the same θ.
    let p = Problem {
        kernel: &kernel,
        lik: &s.likelihood,
        x,
        y,
    };
    let Some((fit, report)) = s.method.ml2(p, &settings)? else {
        return Err(Error::Unsupported(format!(
            "ML-II hyperparameters are available for laplace, ep and ivm, not {}",
            s.method.name()
        )));
    };
    let choices = vec![PenaltyTerm::grid(&grid, fit.posterior.kernel().n_params())];
    let certificate = s.certificate(&fit, x, y, choices)?;
    Ok(Selected {
        fit,
        certificate,
        optimiser: Some(report),
        notes,
    })
}

/// `laplace`, `ep`, `mean-field`, `ivm`, `sogp` with certified hyperparameters: θ chosen by
/// **minimising the PAC-Bayes bound** on the Gibbs error over [`crate::plan::classifier_candidates`] (union
/// bound: `ln 9`) or by ML-II snapped onto the PAC grid (`T·ln 1201`); with the split prior,
/// [`super::pac_gpc::split_classifier`].
impl MethodFit for ClassifierSpec {
    fn fit(&self, spec: &CheckedFitSpec, train: &Dataset, labels: LabelMap) -> Result<FittedModel> {
        if let ClassifierHypers::Split(split) = &self.hypers {
            let lik = Likelihood::named(self.inference.settings().likelihood());
            return super::pac_gpc::split_classifier(
                spec,
                split,
                false,
                lik,
                self.predictor,
                train,
                labels,
            );
        }
        let x_scaler = Standardizer::fit(train.x.as_ref(), &train.feature_names)?;
        let x = x_scaler.transform(train.x.as_ref())?;
        let (method, likelihood) = inference_method(&self.inference, spec.seed)?;
        let setup = Setup {
            classifier: GibbsClassifier::of(&likelihood, self.predictor),
            method,
            likelihood,
            delta: spec.delta,
            restarts: Restarts {
                count: self.restarts,
                seed: spec.seed,
                ..Default::default()
            },
        };
        let Selected {
            fit,
            certificate,
            optimiser,
            notes,
        } = match &self.hypers {
            ClassifierHypers::Grid { kernel } => {
                let k = Kernel::from_spec(kernel, train.d())?;
                select_by_ml2(&k, x.as_ref(), &train.y, &setup, spec.seed)?
            }
            _ => select_by_bound(x.as_ref(), &train.y, &setup)?,
        };
        let input_noise = setup.method.input_noise();
        let task = Task::Classification {
            posterior: fit.posterior,
            likelihood: setup.likelihood,
            labels,
            input_noise,
            split_prior: None,
        };
        let report = FitReport {
            optimiser,
            objective: Some(certificate.bound),
            objective_name: "pac_bayes_bound_gibbs_error".into(),
            jitter_used: fit.report.jitter_used,
            inference: Some(fit.report),
            notes,
            ..Default::default()
        };
        Ok(FittedModel::assemble(spec, train, x_scaler, task, report))
    }
}
