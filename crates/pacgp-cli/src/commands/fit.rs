//! `pacgp fit`: one function per family, and the check that every option given applies to the
//! chosen method (an option that would be ignored is an error).

use std::time::Instant;

use anyhow::{Context, Result};
use pacgp::bounds::{ConfidenceTerm, HyperGrid};
use pacgp::data::{self, Dataset, InputCoding, LabelMap};
use pacgp::inference::{ConvergenceStatus, InferenceMethod};
use pacgp::kernel::Kernel;
use pacgp::likelihood::Likelihood;
use pacgp::model::{
    fit_gpr, fit_greedy_sparse_model, fit_pac_gp_model, fit_pac_gpc_model, fit_pac_sgp_model,
    fit_sparse_model, fit_sparse_split_prior_model, fit_split_prior_model, fit_svm_model,
    ClassifierOptions, FittedModel, GibbsPredictor, GprOptions, GreedySparseOptions,
    HyperSelection, PacGpOptions, PacGpcOptions, PacSgpOptions, SparseOptions, SplitPriorOptions,
    SvmOptions, Task,
};
use pacgp::optim::Restarts;
use pacgp::regression::exact::MlConfig;
use pacgp::regression::sparse::InducingInit;
use serde_json::json;

use super::{check_output_path, csv_options, spinner};
use crate::cli::*;

/// Default number of inducing inputs / active-set size (capped at N with a note).
const DEFAULT_BASIS: usize = 100;

/// Fit, save, print a summary.
pub(super) fn fit(a: FitArgs) -> Result<()> {
    check_output_path(&a.out)?;
    let family = a.method.family();
    check_applicable(&a, family)?;
    let (mut model, secs) = match family {
        Family::Regression(m) => fit_regression(&a, m)?,
        Family::Classification(m) => fit_classification(&a, m)?,
        Family::Svm => fit_svm(&a)?,
    };
    model.seed = a.seed;
    model
        .save(&a.out)
        .with_context(|| format!("saving the model to {}", a.out.display()))?;
    for note in model.x_scaler.notes() {
        eprintln!("note: {note}");
    }
    for note in grid_edge_notes(&model) {
        eprintln!("note: {note}");
    }
    if let Some(note) = model.report.optimiser.as_ref().and_then(|r| r.note()) {
        eprintln!("note: {note}");
    }
    print_summary(&a, &model, secs)
}

/// An error naming the option and the methods it applies to.
fn not_for(flag: &str, applies: &str, method: Method) -> anyhow::Error {
    pacgp::Error::Unsupported(format!(
        "--{flag} applies to {applies}, not to --method {}",
        method.name()
    ))
    .into()
}

/// Every option given must mean something for the chosen method.
fn check_applicable(a: &FitArgs, family: Family) -> Result<()> {
    let m = a.method;
    check_split_classifier_levers(a, family)?;
    if family != Family::Svm {
        for (flag, given) in [
            ("slack", a.slack.is_some()),
            ("c", a.c.is_some()),
            ("lengthscale", a.lengthscale.is_some()),
            ("bias", a.bias.is_some()),
            ("solver", a.solver.is_some()),
        ] {
            if given {
                return Err(not_for(flag, "svm", m));
            }
        }
    }
    match family {
        Family::Svm => {
            for (flag, given) in [
                ("epsilon", a.epsilon.is_some()),
                ("inducing", a.inducing.is_some()),
                ("inducing-init", a.inducing_init.is_some()),
                ("restarts", a.restarts.is_some()),
                ("no-snap", a.no_snap),
                ("likelihood", a.likelihood.is_some()),
                ("select", a.select.is_some()),
                ("active-set", a.active_set.is_some()),
                ("kappa", a.kappa.is_some()),
                ("prior", a.prior.is_some()),
                ("hyper-prior", a.hyper_prior.is_some()),
                ("xi", a.xi.is_some()),
            ] {
                if given {
                    return Err(not_for(flag, "other methods", m));
                }
            }
            if a.kernel.is_some() && a.lengthscale.is_some() {
                return Err(not_for(
                    "lengthscale",
                    "svm's default SE kernel, not --kernel",
                    m,
                ));
            }
            let quadratic = a.slack == Some(SlackArg::Quadratic);
            if a.c.is_some() && quadratic {
                return Err(not_for("c", "--slack linear", m));
            }
            if a.input_noise.is_some() && !quadratic {
                return Err(not_for(
                    "input-noise",
                    "--slack quadratic (and mean-field)",
                    m,
                ));
            }
        }
        Family::Regression(r) => {
            check_tighter_levers(a, r)?;
            let classifier_only = [
                ("likelihood", a.likelihood.is_some()),
                ("select", a.select.is_some()),
                ("active-set", a.active_set.is_some()),
                ("kappa", a.kappa.is_some()),
                ("input-noise", a.input_noise.is_some()),
            ];
            for (flag, given) in classifier_only {
                if given {
                    return Err(not_for(flag, "classifiers", m));
                }
            }
            let sparse = matches!(
                r,
                RegressionMethod::Sparse(_)
                    | RegressionMethod::PacSgp(_)
                    | RegressionMethod::GreedySparse
            );
            if a.inducing.is_some() && !sparse {
                return Err(not_for(
                    "inducing",
                    "vfe, fitc, pac-sgp, pac-sgp-sqrt, greedy-sparse",
                    m,
                ));
            }
            let trained_z = matches!(r, RegressionMethod::Sparse(_) | RegressionMethod::PacSgp(_));
            if a.inducing_init.is_some() && !trained_z {
                return Err(not_for(
                    "inducing-init",
                    "vfe, fitc, pac-sgp, pac-sgp-sqrt (greedy-sparse always selects greedily)",
                    m,
                ));
            }
            let pac = matches!(r, RegressionMethod::PacGp(_) | RegressionMethod::PacSgp(_));
            if a.delta.is_some() && !pac {
                return Err(not_for(
                    "delta",
                    "the methods that train a bound (pac-*) and classifiers; certify takes its own --delta",
                    m,
                ));
            }
            if pac && a.epsilon.is_none() {
                return Err(pacgp::Error::Unsupported(format!(
                    "--method {} minimises a bound on the ε-band risk: give --epsilon in the target's units",
                    m.name()
                ))
                .into());
            }
            if a.restarts.is_some() && r != RegressionMethod::Gpr {
                return Err(not_for("restarts", "gpr", m));
            }
            if a.no_snap && r != RegressionMethod::Gpr {
                return Err(not_for("no-snap", "gpr", m));
            }
        }
        Family::Classification(c) => {
            let regression_only = [
                ("epsilon", a.epsilon.is_some()),
                ("inducing", a.inducing.is_some()),
                ("inducing-init", a.inducing_init.is_some()),
                ("restarts", a.restarts.is_some()),
                ("no-snap", a.no_snap),
                ("hyper-prior", a.hyper_prior.is_some()),
                ("xi", a.xi.is_some()),
            ];
            for (flag, given) in regression_only {
                if given {
                    return Err(not_for(flag, "regression methods", m));
                }
            }
            if a.prior.is_some()
                && !matches!(c, ClassifierMethod::Laplace | ClassifierMethod::PacGpc)
            {
                return Err(not_for("prior", "laplace and pac-gpc", m));
            }
            if a.prior.is_some() && (a.select.is_some() || a.likelihood.is_some()) {
                return Err(pacgp::Error::Unsupported(
                    "--prior split:F fits θ by ML-II on part A with the probit; --select and --likelihood do not apply".into(),
                )
                .into());
            }
            if c == ClassifierMethod::PacGpc && a.select.is_some() {
                return Err(pacgp::Error::Unsupported(
                    "--select does not apply to pac-gpc: it chooses among nine fixed SE kernels, or optimises θ from --kernel on the grid".into(),
                )
                .into());
            }
            if a.kernel.is_some()
                && a.select != Some(SelectArg::Ml2)
                && c != ClassifierMethod::PacGpc
                && a.prior.is_none()
            {
                return Err(pacgp::Error::Unsupported(
                    "--kernel applies to classifiers only with --select ml2 (--select bound chooses among nine fixed SE kernels)".into(),
                )
                .into());
            }
            if a.active_set.is_some()
                && !matches!(c, ClassifierMethod::Ivm | ClassifierMethod::Sogp)
            {
                return Err(not_for("active-set", "ivm and sogp", m));
            }
            if (a.kappa.is_some() || a.input_noise.is_some()) && c != ClassifierMethod::MeanField {
                return Err(not_for("kappa/--input-noise", "mean-field", m));
            }
            if a.likelihood == Some(LikelihoodArg::Logistic) && c != ClassifierMethod::Laplace {
                return Err(pacgp::Error::Unsupported(format!(
                    "--likelihood logistic applies to laplace only; {} needs the probit (tilted moments in closed form)",
                    m.name()
                ))
                .into());
            }
            if a.likelihood.is_some() && c == ClassifierMethod::MeanField {
                return Err(not_for(
                    "likelihood",
                    "laplace, ep, ivm and sogp (mean field uses flip noise --kappa)",
                    m,
                ));
            }
        }
    }
    Ok(())
}

// --- tighter-bounds levers (issue 15) ---
/// `--bound`, `--prior-scale`, `--prior-kernel` and `--both-directions` apply to the
/// classifier split prior only (laplace, pac-gpc with `--prior split:…`).
fn check_split_classifier_levers(a: &FitArgs, family: Family) -> Result<()> {
    let split_classifier = a.prior.is_some()
        && matches!(
            family,
            Family::Classification(ClassifierMethod::Laplace | ClassifierMethod::PacGpc)
        );
    for (flag, given) in [
        ("bound", a.bound.is_some()),
        ("prior-scale", a.prior_scale.is_some()),
        ("prior-kernel", a.prior_kernel.is_some()),
        ("both-directions", a.both_directions),
    ] {
        if given && !split_classifier {
            return Err(not_for(
                flag,
                "laplace and pac-gpc with --prior split:F|split:auto",
                a.method,
            ));
        }
    }
    Ok(())
}

/// `--prior` applies to pac-gp, `--hyper-prior` and `--xi` to the four pac-* methods; the
/// split prior fits θ on part A, so a hyperparameter prior does not combine with it.
fn check_tighter_levers(a: &FitArgs, r: RegressionMethod) -> Result<()> {
    let m = a.method;
    let pac = matches!(r, RegressionMethod::PacGp(_) | RegressionMethod::PacSgp(_));
    let kl = pacgp::bounds::BoundKind::Kl;
    if a.prior.is_some() && r != RegressionMethod::PacGp(kl) && r != RegressionMethod::PacSgp(kl) {
        return Err(not_for("prior", "pac-gp and pac-sgp", m));
    }
    if a.hyper_prior.is_some() && !pac {
        return Err(not_for(
            "hyper-prior",
            "pac-gp, pac-gp-sqrt, pac-sgp, pac-sgp-sqrt",
            m,
        ));
    }
    if a.xi.is_some() && !pac {
        return Err(not_for(
            "xi",
            "pac-gp, pac-gp-sqrt, pac-sgp, pac-sgp-sqrt",
            m,
        ));
    }
    if a.prior.is_some() && a.hyper_prior.is_some() {
        return Err(pacgp::Error::Unsupported(
            "--hyper-prior does not combine with --prior split (θ is fitted on part A at no charge)".into(),
        )
        .into());
    }
    Ok(())
}

/// The tighter-bounds levers asked for.
fn levers(a: &FitArgs) -> pacgp::prior::BoundLevers {
    pacgp::prior::BoundLevers {
        term: match a.xi {
            Some(XiArg::Sharp) => ConfidenceTerm::Sharp,
            _ => ConfidenceTerm::Maurer,
        },
        hyper_prior: a.hyper_prior.map(|h| match h {
            HyperPriorArg::Gaussian => pacgp::prior::HyperPrior::gaussian(),
            HyperPriorArg::Uniform => pacgp::prior::HyperPrior::uniform(),
        }),
    }
}

/// The split prior's fraction asked for.
fn split_fraction(a: &FitArgs) -> Option<pacgp::prior::split::SplitFraction> {
    use pacgp::prior::split::SplitFraction;
    a.prior.map(|p| match p {
        PriorArg::Split(f) => SplitFraction::Fixed(f),
        PriorArg::SplitAuto => SplitFraction::Menu,
    })
}

/// The basis size asked for (refused unless it lies in 1..=N, naming N), or the default
/// capped at N (with a note).
fn basis_size(given: Option<usize>, n: usize, what: &str) -> Result<usize> {
    match given {
        Some(m) if m == 0 || m > n => Err(pacgp::Error::Unsupported(format!(
            "{what} {m} must lie in 1..={n} (the training file has N = {n} rows)"
        ))
        .into()),
        Some(m) => Ok(m),
        None if n < DEFAULT_BASIS => {
            eprintln!("note: {what} set to N = {n} (the default {DEFAULT_BASIS} is more than the data has)");
            Ok(n)
        }
        None => Ok(DEFAULT_BASIS),
    }
}

/// Where the inducing inputs start: the flag, or the paper's k-means.
fn inducing_init(a: &FitArgs) -> InducingInit {
    a.inducing_init.map_or(InducingInit::KMeans, Into::into)
}

fn fit_regression(a: &FitArgs, method: RegressionMethod) -> Result<(FittedModel, f64)> {
    let train = super::load_training(&a.data)?;
    let kernel = Some(Kernel::from_spec(
        a.kernel.as_deref().unwrap_or("se-ard"),
        train.d(),
    )?);
    let pb = spinner(&format!(
        "fitting {} on {} points",
        a.method.name(),
        train.n()
    ));
    let t0 = Instant::now();
    let delta = a.delta.unwrap_or(0.01);
    let mut model = match method {
        RegressionMethod::Gpr => {
            let opts = GprOptions {
                kernel,
                ml: MlConfig {
                    restarts: Restarts {
                        count: a.restarts.unwrap_or(0),
                        seed: a.seed,
                        ..Default::default()
                    },
                    ..Default::default()
                },
                epsilon: a.epsilon,
                snap_to_grid: !a.no_snap,
                ..Default::default()
            };
            fit_gpr(&train, &opts)?
        }
        RegressionMethod::Sparse(sparse) => {
            let o = SparseOptions {
                kernel,
                noise_init: 0.1,
                m: basis_size(a.inducing, train.n(), "--inducing")?,
                method: sparse,
                seed: a.seed,
                init: inducing_init(a),
                epsilon: a.epsilon,
            };
            fit_sparse_model(&train, &o)?
        }
        RegressionMethod::PacGp(kind) => {
            let o = PacGpOptions {
                kernel,
                noise_init: 1.0,
                epsilon: a.epsilon.unwrap_or_default(),
                delta,
                kind,
                levers: levers(a),
                split: split_fraction(a),
                seed: a.seed,
            };
            fit_pac_gp_model(&train, &o)?
        }
        RegressionMethod::PacSgp(kind) => {
            let o = PacSgpOptions {
                kernel,
                m: basis_size(a.inducing, train.n(), "--inducing")?,
                epsilon: a.epsilon.unwrap_or_default(),
                delta,
                kind,
                alpha_s: 1.0,
                seed: a.seed,
                levers: levers(a),
                init: inducing_init(a),
            };
            match split_fraction(a) {
                // The sparse split prior (issue 15): VFE on part A, certified on part B.
                Some(fraction) => fit_sparse_split_prior_model(&train, &o, fraction)?,
                None => fit_pac_sgp_model(&train, &o)?,
            }
        }
        RegressionMethod::GreedySparse => {
            let o = GreedySparseOptions {
                kernel,
                k: basis_size(a.inducing, train.n(), "--inducing")?,
                seed: a.seed,
                epsilon: a.epsilon,
            };
            fit_greedy_sparse_model(&train, &o)?
        }
    };
    pb.finish_and_clear();
    model.input_coding = InputCoding::of(&csv_options(&a.data));
    Ok((model, t0.elapsed().as_secs_f64()))
}

/// The inference method and likelihood the arguments ask for (the library's
/// [`pacgp::model::classifier_setup`], shared with the Python module).
fn classifier_method(
    a: &FitArgs,
    method: ClassifierMethod,
    n: usize,
) -> Result<(InferenceMethod, Likelihood)> {
    let basis = match method {
        ClassifierMethod::Ivm => basis_size(a.active_set, n, "--active-set")?,
        // The most basis vectors SOGP keeps: more than N simply never fills.
        ClassifierMethod::Sogp => basis_size(a.active_set.map(|m| m.min(n)), n, "--active-set")?,
        _ => 0,
    };
    let likelihood = a.likelihood.map(|l| match l {
        LikelihoodArg::Probit => "probit",
        LikelihoodArg::Logistic => "logistic",
    });
    Ok(pacgp::model::classifier_setup(
        &a.method.name(),
        likelihood,
        basis,
        a.kappa,
        a.input_noise,
        a.seed,
    )?)
}

fn fit_svm(a: &FitArgs) -> Result<(FittedModel, f64)> {
    use pacgp::svm::SvmSolver;
    let (train, labels): (Dataset, _) =
        data::load_csv_classification(&a.data.data, &csv_options(&a.data))?;
    let quadratic = a.slack == Some(SlackArg::Quadratic);
    let kernel = match &a.kernel {
        Some(spec) => Some(Kernel::from_spec(spec, train.d())?),
        None => None,
    };
    let (kernels, slacks) = pacgp::model::fit_svm::svm_candidates(
        train.d(),
        kernel,
        a.lengthscale,
        quadratic,
        a.c,
        a.input_noise,
    );
    let opts = SvmOptions {
        kernels,
        slacks,
        solver: match a.solver.unwrap_or(SolverArg::Smo) {
            SolverArg::Smo => SvmSolver::Smo,
            SolverArg::Adatron => SvmSolver::Adatron,
        },
        delta: a.delta.unwrap_or(0.01),
        term: ConfidenceTerm::Maurer,
        bias: a.bias.unwrap_or(false),
    };
    let pb = spinner(&format!("fitting svm on {} points", train.n()));
    let t0 = Instant::now();
    let mut model = fit_svm_model(&train, labels, &opts)?;
    pb.finish_and_clear();
    model.input_coding = InputCoding::of(&csv_options(&a.data));
    Ok((model, t0.elapsed().as_secs_f64()))
}

fn fit_classification(a: &FitArgs, method: ClassifierMethod) -> Result<(FittedModel, f64)> {
    let (train, labels): (Dataset, _) =
        data::load_csv_classification(&a.data.data, &csv_options(&a.data))?;
    if let Some(fraction) = split_fraction(a) {
        return fit_split_prior(a, method, fraction, train, labels);
    }
    if method == ClassifierMethod::PacGpc {
        return fit_pac_gpc(a, train, labels);
    }
    let (inference, likelihood) = classifier_method(a, method, train.n())?;
    let selection = match a.select.unwrap_or(SelectArg::Bound) {
        SelectArg::Bound => HyperSelection::BoundOverCandidates,
        SelectArg::Ml2 => HyperSelection::Ml2 {
            kernel: Kernel::from_spec(a.kernel.as_deref().unwrap_or("se-ard"), train.d())?,
        },
    };
    let opts = ClassifierOptions {
        method: inference,
        likelihood,
        delta: a.delta.unwrap_or(0.01),
        term: ConfidenceTerm::Maurer,
        selection,
        predictor: GibbsPredictor::Latent,
    };
    let pb = spinner(&format!(
        "fitting {} on {} points",
        a.method.name(),
        train.n()
    ));
    let t0 = Instant::now();
    let mut model = pacgp::model::fit_classifier(&train, labels, &opts)?;
    pb.finish_and_clear();
    model.input_coding = InputCoding::of(&csv_options(&a.data));
    Ok((model, t0.elapsed().as_secs_f64()))
}

/// `fit --method pac-gpc`: the classifier trained by its bound.
fn fit_pac_gpc(a: &FitArgs, train: Dataset, labels: LabelMap) -> Result<(FittedModel, f64)> {
    let mut opts = PacGpcOptions::new(a.delta.unwrap_or(0.01), ConfidenceTerm::Maurer);
    if a.likelihood == Some(LikelihoodArg::Logistic) {
        opts.likelihood = Likelihood::Logistic;
    }
    opts.kernel = a
        .kernel
        .as_deref()
        .map(|s| Kernel::from_spec(s, train.d()))
        .transpose()?;
    let pb = spinner(&format!("fitting pac-gpc on {} points", train.n()));
    let t0 = Instant::now();
    let mut model = fit_pac_gpc_model(&train, labels, &opts)?;
    pb.finish_and_clear();
    model.input_coding = InputCoding::of(&csv_options(&a.data));
    Ok((model, t0.elapsed().as_secs_f64()))
}

/// `fit --method laplace|pac-gpc --prior split:F [--bound catoni] [--prior-scale auto|t]
/// [--prior-kernel auto] [--both-directions]`: certified with a data-dependent prior
/// (Catoni's λ, the scale t and the kernel structure fixed on part A).
fn fit_split_prior(
    a: &FitArgs,
    method: ClassifierMethod,
    fraction: pacgp::prior::split::SplitFraction,
    train: Dataset,
    labels: LabelMap,
) -> Result<(FittedModel, f64)> {
    use pacgp::objective::gpc_split::SplitPriorConfig;
    let mut config = SplitPriorConfig::new(fraction, a.seed);
    config.optimise_sites = method == ClassifierMethod::PacGpc;
    config.bound.delta = a.delta.unwrap_or(0.01);
    if a.bound == Some(SplitBoundArg::Catoni) {
        config.catoni = Some(pacgp::bounds::CatoniLambda::FromPartA);
    }
    config.prior_scales = match a.prior_scale {
        None => vec![1.0],
        Some(PriorScaleArg::Fixed(t)) => vec![t],
        Some(PriorScaleArg::Auto) => pacgp::objective::gpc_split::PRIOR_SCALES.to_vec(),
    };
    if a.prior_kernel == Some(PriorKernelArg::Auto) {
        config.alt_kernels = vec![Kernel::se_iso(1.0, 1.0)];
    }
    config.both_directions = a.both_directions;
    let opts = SplitPriorOptions {
        likelihood: Likelihood::probit(),
        kernel: Kernel::from_spec(a.kernel.as_deref().unwrap_or("se-ard"), train.d())?,
        predictor: GibbsPredictor::Latent,
        config,
    };
    let pb = spinner(&format!(
        "fitting {} with a split prior on {} points",
        a.method.name(),
        train.n()
    ));
    let t0 = Instant::now();
    let mut model = fit_split_prior_model(&train, labels, &opts)?;
    pb.finish_and_clear();
    model.input_coding = InputCoding::of(&csv_options(&a.data));
    Ok((model, t0.elapsed().as_secs_f64()))
}

/// Hyperparameters sitting on the edge of the grid they were snapped onto: the optimum may
/// lie outside it.
pub(super) fn grid_edge_notes(model: &FittedModel) -> Vec<String> {
    // A split prior's θ is fitted on part A with no grid (issue 15).
    let split = matches!(
        &model.task,
        Task::Regression {
            split_prior: Some(_),
            ..
        }
    );
    if !model.report.theta_on_grid || split {
        return Vec::new();
    }
    let grid = if model.method == "gpr" || model.method == "greedy-sparse" {
        HyperGrid::wide()
    } else {
        HyperGrid::default()
    };
    let k = &model.posterior.kernel;
    k.params()
        .iter()
        .zip(k.param_names())
        .filter(|(t, _)| grid.at_edge(**t))
        .map(|(t, name)| {
            format!(
                "{name} = {t} (ln space) sits on the edge of the hyperparameter grid [{}, {}]: the optimum may lie beyond it",
                grid.min_log, grid.max_log
            )
        })
        .collect()
}

/// The classifier split prior's record of a model, if it has one.
fn split_classifier(
    model: &FittedModel,
) -> Option<&pacgp::model::split_classifier::ClassifierSplitRecord> {
    match &model.task {
        Task::Classification {
            split_prior: Some(r),
            ..
        } => Some(r),
        _ => None,
    }
}

fn print_summary(a: &FitArgs, model: &FittedModel, secs: f64) -> Result<()> {
    let noise = match &model.task {
        Task::Regression { noise_variance, .. } => Some(*noise_variance),
        Task::Classification { .. } | Task::Svm { .. } => None,
    };
    let inf = model.report.inference.as_ref();
    let opt = model.report.optimiser.as_ref();
    if a.json {
        let summary = json!({
            "method": model.method,
            "n": model.n_train,
            "d": model.feature_names.len(),
            "kernel": model.posterior.kernel.describe(),
            "noise_variance": noise,
            "likelihood": match &model.task { Task::Classification { likelihood, .. } => Some(likelihood.name()), _ => None },
            "objective": model.report.objective,
            "objective_name": model.report.objective_name,
            "penalty_terms": model.report.choices,
            "iterations": opt.map(|r| r.iterations as usize).or(inf.map(|r| r.iterations)),
            "evaluations": opt.map(|r| r.evaluations),
            "unsnapped_objective": opt.map(|r| r.value),
            "termination": opt.map(|r| r.termination),
            "status": inf.map(|r| r.status),
            "notes": inf.map(|r| r.notes.clone()),
            "jitter_used": model.report.jitter_used,
            "split_prior": split_classifier(model).map(|r| json!({
                "fraction": r.fraction,
                "seed": r.seed,
                "n_a": r.n_a,
                "n_b": r.n_b,
                "lambda": r.lambda,
                "prior_scale": r.prior_scale,
                "mean_scale": r.mean_scale,
                "prior_kernel": r.kernel_a.describe(),
                "swapped": r.swapped,
                "menu": r.menu,
            })),
            "fit_seconds": secs,
            "model": a.out.display().to_string(),
        });
        out!("{summary}");
        return Ok(());
    }
    out!(
        "fitted {} on {} points × {} inputs in {secs:.2} s",
        model.method,
        model.n_train,
        model.feature_names.len()
    );
    out!(
        "  kernel (on standardised inputs; θ = ln value): {}",
        model.posterior.kernel.describe()
    );
    if let Some(v) = noise {
        out!("  noise variance σ² (standardised targets): {v:.4}");
    }
    let explain = match model.report.objective_name.as_str() {
        "log_marginal_likelihood" => "log marginal likelihood (higher is better)",
        "elbo" => "evidence lower bound (higher is better)",
        "svm_dual_objective" => "SVM dual objective (a bias fitted from the data: no certificate)",
        "zhang_primal_objective" => {
            "Zhang's regularised risk R at the refit weights (lower is better)"
        }
        name if name.starts_with("pac_bayes_bound_gibbs_error") => {
            "PAC-Bayes bound on the Gibbs classification error (run certify for its parts)"
        }
        name if name.starts_with("pac_bayes_bound") => {
            "PAC-Bayes bound on the ε-band Gibbs risk (run certify for its parts)"
        }
        other => other,
    };
    out!(
        "  {explain}: {:.4}",
        model.report.objective.unwrap_or(f64::NAN)
    );
    if let Some(r) = split_classifier(model) {
        out!(
            "  split prior: part A {} points (F = {}, seed {}{}), bound on part B ({} points); prior covariance scale t = {}{}",
            r.n_a,
            r.fraction,
            r.seed,
            if r.swapped { ", parts swapped" } else { "" },
            r.n_b,
            r.prior_scale,
            r.lambda
                .map(|l| format!("; Catoni λ = {l:.4} fixed on part A"))
                .unwrap_or_default()
        );
    }
    if let Some(r) = opt {
        out!(
            "  optimiser: {} iterations, {} evaluations, stopped: {}",
            r.iterations,
            r.evaluations,
            r.message
        );
    }
    if let Some(r) = inf {
        out!(
            "  inference: {} iterations, {}{}",
            r.iterations,
            match r.status {
                ConvergenceStatus::Converged => "converged",
                ConvergenceStatus::MaxIterations => "stopped at the iteration limit",
            },
            if r.notes.is_empty() {
                String::new()
            } else {
                format!("; {}", r.notes.join("; "))
            }
        );
    }
    if model.report.jitter_used > 0.0 {
        out!(
            "  note: jitter {:e} was added to the diagonal to factorise",
            model.report.jitter_used
        );
    }
    out!("  saved to {}", a.out.display());
    Ok(())
}
