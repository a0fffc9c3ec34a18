//! Fitting pipeline of the classification family: any [`InferenceMethod`] with its kernel
//! chosen by the bound over a fixed candidate menu or by ML-II snapped onto the PAC grid; the
//! certificate of the choice is computed here and its penalty stored with the model.

use faer::MatRef;

use crate::bounds::{ConfidenceTerm, HyperGrid};
use crate::certificate::{Certificate, CertificateSpec, GibbsClassifier, GibbsLoss, PenaltyTerm};
use crate::data::{Dataset, LabelMap, Standardizer};
use crate::error::{Error, Result};
use crate::inference::{ClassifierFit, InferenceMethod};
use crate::kernel::Kernel;
use crate::likelihood::Likelihood;
use crate::optim::OptimReport;

use super::usage::GibbsPredictor;
use super::{sample_digest, FitReport, FittedModel, Task, FORMAT};

/// Options of [`fit_classifier`].
#[derive(Clone, Debug)]
pub struct ClassifierOptions {
    /// Inference method and its settings.
    pub method: InferenceMethod,
    /// Likelihood.
    pub likelihood: Likelihood,
    /// Confidence δ of the bound used to select θ.
    pub delta: f64,
    /// Confidence constant of that bound.
    pub term: ConfidenceTerm,
    /// How the kernel hyperparameters are chosen.
    pub selection: HyperSelection,
    /// The Gibbs classifier whose bound selects θ and is stored with the model.
    pub predictor: GibbsPredictor,
}

/// The inference method and likelihood named as on the command line (`laplace`, `ep`,
/// `mean-field`, `ivm`, `sogp`; likelihood `probit`, the default, or `logistic`, Laplace only):
/// mean field always uses flip noise κ (default 0) with input noise v (default 1), IVM and SOGP
/// keep `basis` points, SOGP visits them in an order shuffled by `seed`. Shared by the CLI and
/// the Python module so both fit the same model from the same options.
pub fn classifier_setup(
    method: &str,
    likelihood: Option<&str>,
    basis: usize,
    kappa: Option<f64>,
    input_noise: Option<f64>,
    seed: u64,
) -> Result<(InferenceMethod, Likelihood)> {
    use crate::inference::ivm::IvmConfig;
    use crate::inference::mean_field::MeanFieldConfig;
    use crate::inference::sogp::{SogpConfig, SweepOrder};
    let unsupported = |m: String| Err(Error::Unsupported(m));
    if method != "mean-field" && (kappa.is_some() || input_noise.is_some()) {
        return unsupported(format!(
            "kappa and input noise apply to mean-field, not to {method}"
        ));
    }
    let chosen = match likelihood {
        None | Some("probit") => Likelihood::probit(),
        Some("logistic") if method == "laplace" => Likelihood::Logistic,
        Some("logistic") => return unsupported(format!(
            "the logistic likelihood applies to laplace only; {method} needs the probit (tilted moments in closed form)"
        )),
        Some(other) => return Err(Error::InvalidSpec {
            spec: other.into(),
            reason: "the likelihood is probit or logistic".into(),
        }),
    };
    Ok(match method {
        // PAC-GPC warm-starts from Laplace.
        "laplace" | "pac-gpc" => (InferenceMethod::Laplace(Default::default()), chosen),
        "ep" => (InferenceMethod::Ep(Default::default()), chosen),
        "mean-field" if likelihood.is_some() => {
            return unsupported("mean-field uses flip noise kappa, not a likelihood choice".into())
        }
        "mean-field" => (
            InferenceMethod::MeanField(MeanFieldConfig {
                input_noise: input_noise.unwrap_or(1.0),
                ..Default::default()
            }),
            Likelihood::flip_noise(kappa.unwrap_or(0.0))?,
        ),
        "ivm" => (InferenceMethod::Ivm(IvmConfig::new(basis)), chosen),
        "sogp" => (
            InferenceMethod::Sogp {
                config: SogpConfig {
                    max_basis: basis,
                    ..Default::default()
                },
                order: SweepOrder::Shuffled { seed },
            },
            chosen,
        ),
        other => {
            return Err(Error::InvalidSpec {
                spec: other.into(),
                reason: "the classifier is laplace, ep, mean-field, ivm, sogp or pac-gpc".into(),
            })
        }
    })
}

/// The candidate kernels `σ_f²·SE(l)` on standardised inputs whose bound is compared:
/// `σ_f² ∈ {1, 4, 16}`, `l ∈ {½, 1, 2}·√D`, fixed before seeing data.
pub fn classifier_candidates(d: usize) -> Vec<Kernel> {
    let base = (d as f64).sqrt();
    let mut out = Vec::new();
    for sf2 in [1.0, 4.0, 16.0] {
        for m in [0.5, 1.0, 2.0] {
            out.push(Kernel::se_iso(m * base, sf2));
        }
    }
    out
}

/// How a classifier's kernel hyperparameters are chosen. Either way the penalty of the
/// choice enters the certificate, so the bound stored with the model holds as computed.
#[derive(Clone, Debug, Default)]
pub enum HyperSelection {
    /// The lowest PAC-Bayes bound among [`classifier_candidates`] (penalty `ln 9`).
    #[default]
    BoundOverCandidates,
    /// ML-II from `kernel` (Laplace/EP evidence with analytic gradients, or the IVM
    /// pseudo-likelihood of seed 003 §4.3) inside the PAC grid's range, then θ snapped onto
    /// the grid of seed 004 (penalty `T·ln 1201`).
    Ml2 {
        /// Kernel structure and starting values.
        kernel: Kernel,
    },
}

/// Certificate of a fit on its training sample, given what was chosen (docs/math.md §7.1).
fn classifier_certificate(
    fit: &ClassifierFit,
    x: MatRef<'_, f64>,
    y: &[f64],
    opts: &ClassifierOptions,
    choices: Vec<PenaltyTerm>,
) -> Result<Certificate> {
    let loss = GibbsLoss::Classification(match opts.predictor {
        GibbsPredictor::Latent => GibbsClassifier::latent(&opts.likelihood),
        GibbsPredictor::Noisy => GibbsClassifier::noisy(&opts.likelihood),
    });
    let spec = CertificateSpec::new(opts.delta, opts.term, choices);
    Certificate::of_posterior(&fit.posterior, x, y, &loss, &spec)
}

/// A chosen classifier fit with its certificate and the optimiser report of the choice.
struct Selected {
    fit: ClassifierFit,
    certificate: Certificate,
    optimiser: Option<OptimReport>,
}

/// The lowest-bound fit among the candidate kernels, paying `ln 9` for the choice.
fn select_by_bound(x: MatRef<'_, f64>, y: &[f64], opts: &ClassifierOptions) -> Result<Selected> {
    let candidates = classifier_candidates(x.ncols());
    let choice = PenaltyTerm::candidates(candidates.len(), "kernel σ_f²·SE(l)");
    let mut best: Option<Selected> = None;
    for k in &candidates {
        let fit = opts.method.fit(k, &opts.likelihood, x, y)?;
        let certificate = classifier_certificate(&fit, x, y, opts, vec![choice.clone()])?;
        if best
            .as_ref()
            .is_none_or(|b| certificate.bound < b.certificate.bound)
        {
            best = Some(Selected {
                fit,
                certificate,
                optimiser: None,
            });
        }
    }
    best.ok_or(Error::Empty {
        what: "kernel candidates",
    })
}

/// ML-II inside the grid's range, θ snapped onto the grid (by the driver), refit there with
/// the method's own settings, warm-started; penalty `T·ln 1201`.
fn select_by_ml2(
    kernel: &Kernel,
    x: MatRef<'_, f64>,
    y: &[f64],
    opts: &ClassifierOptions,
) -> Result<Selected> {
    use crate::inference::evidence::{fit_ep_ml2, fit_laplace_ml2, ClassifierMlConfig, WarmStart};
    use crate::inference::ivm::ml2::{ivm_ml2, IvmMl2Config};
    use crate::inference::InferenceMethod;
    let grid = HyperGrid::default();
    let ml = |laplace| -> Result<(Kernel, OptimReport, WarmStart)> {
        let cfg = ClassifierMlConfig {
            snap: Some(grid),
            ..Default::default()
        };
        let r = if laplace {
            fit_laplace_ml2(kernel, &opts.likelihood, x, y, &cfg)?
        } else {
            fit_ep_ml2(kernel, &opts.likelihood, x, y, &cfg)?
        };
        Ok((r.kernel, r.report, r.warm))
    };
    // The driver snaps θ onto the grid; the fit there is redone with the method's own
    // settings (tighter than ML-II's), warm-started from the ML-II state at the same θ.
    let (fit, report) = match &opts.method {
        InferenceMethod::Laplace(cfg) => {
            let (k, report, warm) = ml(true)?;
            let fit = match &warm {
                WarmStart::Laplace(f0) => {
                    crate::inference::laplace::laplace_warm(&k, &opts.likelihood, x, y, cfg, f0)?
                }
                _ => opts.method.fit(&k, &opts.likelihood, x, y)?,
            };
            (fit, report)
        }
        InferenceMethod::Ep(cfg) => {
            let (k, report, warm) = ml(false)?;
            let fit = match &warm {
                WarmStart::Ep(sites) => {
                    crate::inference::ep::ep_warm(&k, &opts.likelihood, x, y, cfg, sites)?.0
                }
                _ => opts.method.fit(&k, &opts.likelihood, x, y)?,
            };
            (fit, report)
        }
        InferenceMethod::Ivm(cfg) => {
            let mut c = IvmMl2Config::new(cfg.active_set, 3);
            c.ivm = *cfg;
            c.snap = Some(grid);
            let r = ivm_ml2(kernel, &opts.likelihood, x, y, &c)?;
            let report = r.kernel_reports.last().cloned().ok_or(Error::Empty {
                what: "IVM ML-II rounds",
            })?;
            (r.fit, report)
        }
        other => {
            return Err(Error::Unsupported(format!(
                "ML-II hyperparameters are available for laplace, ep and ivm, not {}",
                other.name()
            )))
        }
    };
    let choices = vec![PenaltyTerm::grid(&grid, fit.posterior.kernel.n_params())];
    let certificate = classifier_certificate(&fit, x, y, opts, choices)?;
    Ok(Selected {
        fit,
        certificate,
        optimiser: Some(report),
    })
}

/// GP classification with certified hyperparameters: by default θ is chosen by **minimising
/// the PAC-Bayes bound** on the Gibbs error over [`classifier_candidates`] (union bound:
/// penalty `ln 9`); with [`HyperSelection::Ml2`] by ML-II snapped onto the PAC grid.
pub fn fit_classifier(
    train: &Dataset,
    labels: LabelMap,
    opts: &ClassifierOptions,
) -> Result<FittedModel> {
    crate::data::check_binary_labels(&train.y)?;
    let x_scaler = Standardizer::fit(train.x.as_ref(), &train.feature_names)?;
    let x = x_scaler.transform(train.x.as_ref())?;
    let Selected {
        fit,
        certificate,
        optimiser,
    } = match &opts.selection {
        HyperSelection::BoundOverCandidates => select_by_bound(x.as_ref(), &train.y, opts)?,
        HyperSelection::Ml2 { kernel } => select_by_ml2(kernel, x.as_ref(), &train.y, opts)?,
    };
    let name = opts.method.name();
    Ok(FittedModel {
        format: FORMAT.into(),
        input_coding: Default::default(),
        method: name.into(),
        feature_names: train.feature_names.clone(),
        target_name: train.target_name.clone(),
        n_train: train.n(),
        x_scaler,
        posterior: fit.posterior,
        task: Task::Classification {
            likelihood: opts.likelihood,
            labels,
            input_noise: match &opts.method {
                crate::inference::InferenceMethod::MeanField(cfg) => cfg.input_noise,
                _ => 0.0,
            },
            split_prior: None,
        },
        epsilon: None,
        report: FitReport {
            optimiser,
            objective: Some(certificate.bound),
            objective_name: "pac_bayes_bound_gibbs_error".into(),
            jitter_used: fit.report.jitter_used,
            theta_on_grid: true,
            choices: certificate.penalty_terms,
            penalty: None,
            inference: Some(fit.report),
        },
        training_digest: Some(sample_digest(train)),
        seed: 0,
    })
}
