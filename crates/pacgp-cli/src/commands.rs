//! One function per subcommand.

use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use indicatif::{ProgressBar, ProgressStyle};
use pacgp::bounds::{BoundKind, ConfidenceTerm};
use pacgp::data::{self, CsvOptions, Dataset, InputCoding, MissingPolicy, TargetSpec};
use pacgp::inference::ivm::IvmConfig;
use pacgp::inference::mean_field::MeanFieldConfig;
use pacgp::inference::sogp::{SogpConfig, SweepOrder};
use pacgp::inference::InferenceMethod;
use pacgp::kernel::Kernel;
use pacgp::likelihood::Likelihood;
use pacgp::model::{
    fit_gpr, fit_pac_gp_model, fit_pac_sgp_model, fit_sparse_model, FittedModel, GprOptions,
    PacGpOptions, PacSgpOptions, SparseOptions,
};
use pacgp::model::{CertifyOptions, ClassifierOptions, GibbsPredictor, HyperSelection, Task};
use pacgp::regression::exact::MlConfig;
use pacgp::regression::sparse::SparseMethod;
use serde_json::json;

use crate::cli::*;

/// Dispatch a parsed command line.
pub fn run(args: Cli) -> Result<()> {
    match args.command {
        Command::Fit(a) => fit(a),
        Command::Predict(a) => predict(a),
        Command::Evaluate(a) => evaluate(a),
        Command::Certify(a) => certify(a),
        Command::Reproduce(a) => crate::reproduce::reproduce(a),
        Command::Demo(a) => demo(a),
        Command::Split(a) => split(a),
    }
}

/// A spinner on stderr while long work runs (hidden when stderr is not a terminal).
fn spinner(msg: &str) -> ProgressBar {
    let pb = ProgressBar::new_spinner();
    pb.set_style(
        ProgressStyle::with_template("{spinner} {msg} [{elapsed}]").expect("valid template"),
    );
    pb.set_message(msg.to_string());
    pb.enable_steady_tick(Duration::from_millis(120));
    pb
}

fn load_training(a: &DataArgs) -> Result<Dataset> {
    Ok(data::load_csv(&a.data, &csv_options(a))?)
}

/// Inputs (and, if present, targets) of `path` in the model's column order.
fn load_for_model(m: &FittedModel, path: &Path, need_target: bool) -> Result<Dataset> {
    if let (true, Task::Classification { labels, .. }) = (need_target, &m.task) {
        let (x, y) = data::load_columns_labelled(
            path,
            &m.feature_names,
            &m.target_name,
            labels,
            m.input_coding,
        )?;
        return Ok(Dataset::with_names(
            x,
            y,
            m.feature_names.clone(),
            m.target_name.clone(),
        )?);
    }
    let target = need_target.then_some(m.target_name.as_str());
    let (x, y) = data::load_columns(path, &m.feature_names, target, m.input_coding)?;
    let n = x.nrows();
    Ok(Dataset::with_names(
        x,
        y.unwrap_or_else(|| vec![0.0; n]),
        m.feature_names.clone(),
        m.target_name.clone(),
    )?)
}

fn load_model(path: &Path) -> Result<FittedModel> {
    Ok(FittedModel::load(path)?)
}

fn gpr_options(
    kernel: &str,
    d: usize,
    restarts: usize,
    seed: u64,
    epsilon: Option<f64>,
) -> Result<GprOptions> {
    Ok(GprOptions {
        kernel: Some(Kernel::from_spec(kernel, d)?),
        ml: MlConfig {
            restarts,
            seed,
            ..Default::default()
        },
        epsilon,
        ..Default::default()
    })
}

fn fit(a: FitArgs) -> Result<()> {
    if a.method.is_classifier() {
        return fit_classifier_cmd(a);
    }
    let train = load_training(&a.data)?;
    let mut opts = gpr_options(&a.kernel, train.d(), a.restarts, a.seed, a.epsilon)?;
    opts.snap_to_grid = !a.no_snap;
    let pb = spinner(&format!("fitting {:?} on {} points", a.method, train.n()));
    let t0 = Instant::now();
    let mut model = match a.method {
        Method::Gpr => fit_gpr(&train, &opts)?,
        Method::Vfe | Method::Fitc => {
            let method = if a.method == Method::Vfe {
                SparseMethod::Vfe
            } else {
                SparseMethod::Fitc
            };
            let o = SparseOptions {
                kernel: opts.kernel.clone(),
                noise_init: 0.1,
                m: a.inducing,
                method,
                seed: a.seed,
                epsilon: a.epsilon,
            };
            fit_sparse_model(&train, &o)?
        }
        Method::PacSgp | Method::PacSgpSqrt => {
            let kind = if a.method == Method::PacSgp {
                BoundKind::Kl
            } else {
                BoundKind::Sqrt
            };
            let o = PacSgpOptions {
                kernel: opts.kernel.clone(),
                m: a.inducing,
                epsilon: need_epsilon(&a)?,
                delta: a.delta,
                kind,
                alpha_s: 1.0,
                seed: a.seed,
            };
            fit_pac_sgp_model(&train, &o)?
        }
        Method::Laplace | Method::Ep | Method::MeanField | Method::Ivm | Method::Sogp => {
            unreachable!("classifiers are fitted by fit_classifier_cmd")
        }
        Method::PacGp | Method::PacGpSqrt => {
            let epsilon = need_epsilon(&a)?;
            let kind = if a.method == Method::PacGp {
                BoundKind::Kl
            } else {
                BoundKind::Sqrt
            };
            let o = PacGpOptions {
                kernel: opts.kernel.clone(),
                noise_init: 1.0,
                epsilon,
                delta: a.delta,
                kind,
            };
            fit_pac_gp_model(&train, &o)?
        }
    };
    let secs = t0.elapsed().as_secs_f64();
    pb.finish_and_clear();
    model.input_coding = InputCoding::of(&csv_options(&a.data));
    model
        .save(&a.out)
        .with_context(|| format!("saving the model to {}", a.out.display()))?;
    let summary = json!({
        "method": model.method,
        "n": model.n_train,
        "d": model.feature_names.len(),
        "kernel": model.posterior.kernel.describe(),
        "noise_variance": match &model.task { Task::Regression { noise_variance, .. } => Some(*noise_variance), Task::Classification { .. } => None },
        "objective": model.report.objective,
        "objective_name": model.report.objective_name,
        "iterations": model.report.optimiser.as_ref().map(|r| r.iterations),
        "evaluations": model.report.optimiser.as_ref().map(|r| r.evaluations),
        "unsnapped_objective": model.report.optimiser.as_ref().map(|r| r.value),
        "termination": model.report.optimiser.as_ref().map(|r| r.termination),
        "jitter_used": model.report.jitter_used,
        "fit_seconds": secs,
        "model": a.out.display().to_string(),
    });
    if a.json {
        println!("{summary}");
    } else {
        println!(
            "fitted {} on {} points × {} inputs in {secs:.2} s",
            model.method,
            model.n_train,
            model.feature_names.len()
        );
        println!(
            "  kernel (standardised scale): {}",
            model.posterior.kernel.describe()
        );
        println!(
            "  {}: {:.4}",
            model.report.objective_name,
            model.report.objective.unwrap_or(f64::NAN)
        );
        if let Some(r) = &model.report.optimiser {
            println!(
                "  optimiser: {} iterations, {} evaluations, stopped: {}",
                r.iterations, r.evaluations, r.message
            );
        }
        if model.report.jitter_used > 0.0 {
            println!(
                "  note: jitter {:e} was added to K + σ²I",
                model.report.jitter_used
            );
        }
        println!("  saved to {}", a.out.display());
    }
    Ok(())
}

fn csv_options(a: &DataArgs) -> CsvOptions {
    CsvOptions {
        target: a
            .target
            .as_deref()
            .map(TargetSpec::parse)
            .unwrap_or_default(),
        drop_columns: a.drop.clone(),
        missing: if a.drop_missing {
            MissingPolicy::DropRows
        } else if a.missing_as_zero {
            MissingPolicy::Zero
        } else {
            MissingPolicy::Reject
        },
        yes_no: a.yes_no,
    }
}

/// The inference method and likelihood that `fit` arguments ask for; mean field always uses
/// the flip-noise likelihood (κ = --kappa), IVM and SOGP the probit.
fn classifier_method(a: &FitArgs) -> Result<(InferenceMethod, Likelihood)> {
    let chosen = match a.likelihood {
        LikelihoodArg::Probit => Likelihood::probit(),
        LikelihoodArg::Logistic => Likelihood::Logistic,
    };
    let probit_only = |name: &str| -> Result<Likelihood> {
        if a.likelihood != LikelihoodArg::Probit {
            return Err(pacgp::Error::Unsupported(format!(
                "{name} needs the probit likelihood (tilted moments in closed form)"
            ))
            .into());
        }
        Ok(Likelihood::probit())
    };
    Ok(match a.method {
        Method::Laplace => (InferenceMethod::Laplace(Default::default()), chosen),
        Method::Ep => (InferenceMethod::Ep(Default::default()), probit_only("EP")?),
        Method::MeanField => (
            InferenceMethod::MeanField(MeanFieldConfig {
                input_noise: a.input_noise,
                ..Default::default()
            }),
            Likelihood::flip_noise(a.kappa)?,
        ),
        Method::Ivm => (
            InferenceMethod::Ivm(IvmConfig::new(a.active_set)),
            probit_only("IVM")?,
        ),
        Method::Sogp => (
            InferenceMethod::Sogp {
                config: SogpConfig {
                    max_basis: a.active_set,
                    ..Default::default()
                },
                order: SweepOrder::Shuffled { seed: a.seed },
            },
            probit_only("SOGP")?,
        ),
        _ => unreachable!("only classifier methods reach classifier_method"),
    })
}

fn fit_classifier_cmd(a: FitArgs) -> Result<()> {
    let (train, labels) = data::load_csv_classification(&a.data.data, &csv_options(&a.data))?;
    let (method, likelihood) = classifier_method(&a)?;
    let selection = match a.select {
        SelectArg::Bound => HyperSelection::BoundOverCandidates,
        SelectArg::Ml2 => HyperSelection::Ml2 {
            kernel: pacgp::kernel::Kernel::from_spec(&a.kernel, train.d())?,
        },
    };
    let opts = ClassifierOptions {
        method,
        likelihood,
        delta: a.delta,
        term: ConfidenceTerm::Maurer,
        selection,
        predictor: GibbsPredictor::Latent,
    };
    let pb = spinner(&format!("fitting {:?} on {} points", a.method, train.n()));
    let t0 = Instant::now();
    let mut model = pacgp::model::fit_classifier(&train, labels, &opts)?;
    let secs = t0.elapsed().as_secs_f64();
    pb.finish_and_clear();
    model.input_coding = InputCoding::of(&csv_options(&a.data));
    model
        .save(&a.out)
        .with_context(|| format!("saving the model to {}", a.out.display()))?;
    let inf = model.report.inference.as_ref();
    if a.json {
        println!(
            "{}",
            json!({
                "method": model.method, "n": model.n_train, "d": model.feature_names.len(),
                "kernel": model.posterior.kernel.describe(), "likelihood": likelihood.name(),
                "objective": model.report.objective, "objective_name": model.report.objective_name,
                "iterations": inf.map(|r| r.iterations), "status": inf.map(|r| r.status),
                "notes": inf.map(|r| r.notes.clone()), "jitter_used": model.report.jitter_used,
                "fit_seconds": secs, "model": a.out.display().to_string(),
            })
        );
    } else {
        println!(
            "fitted {} ({}) on {} points × {} inputs in {secs:.2} s",
            model.method,
            likelihood.name(),
            model.n_train,
            model.feature_names.len()
        );
        println!(
            "  kernel ({}; standardised inputs): {}",
            match a.select {
                SelectArg::Bound => "lowest bound of nine candidates",
                SelectArg::Ml2 => "ML-II snapped onto the PAC grid",
            },
            model.posterior.kernel.describe()
        );
        println!(
            "  PAC-Bayes bound on the Gibbs error (δ = {}): {:.4}",
            a.delta,
            model.report.objective.unwrap_or(f64::NAN)
        );
        if let Some(r) = inf {
            println!(
                "  inference: {} iterations, {:?}{}",
                r.iterations,
                r.status,
                if r.notes.is_empty() {
                    String::new()
                } else {
                    format!("; {}", r.notes.join("; "))
                }
            );
        }
        println!("  saved to {}", a.out.display());
    }
    Ok(())
}

fn need_epsilon(a: &FitArgs) -> Result<f64> {
    Ok(a.epsilon.ok_or_else(|| {
        pacgp::Error::Unsupported(format!("--method {:?} minimises a bound on the ε-band risk: give --epsilon in the target's units", a.method))
    })?)
}

fn predict(a: PredictArgs) -> Result<()> {
    let model = load_model(&a.model)?;
    let ds = load_for_model(&model, &a.data, false)?;
    if let Task::Classification { labels, .. } = &model.task {
        let (p, m) = model.predict_classification(ds.x.as_ref())?;
        let label: Vec<&str> = p
            .iter()
            .map(|p| labels.decode(if *p >= 0.5 { 1.0 } else { -1.0 }))
            .collect();
        if a.json {
            println!(
                "{}",
                json!({ "n": p.len(), "p_positive": p, "label": label, "latent_mean": m.mean, "latent_var": m.var })
            );
        }
        let mut out = format!("p_{},label,latent_mean,latent_var\n", labels.positive);
        for i in 0..p.len() {
            out.push_str(&format!(
                "{},{},{},{}\n",
                p[i], label[i], m.mean[i], m.var[i]
            ));
        }
        return write_or_print(&a, out);
    }
    let p = model.predict_regression(ds.x.as_ref())?;
    if a.json {
        println!(
            "{}",
            json!({ "n": p.mean.len(), "mean": p.mean, "latent_var": p.latent_var, "noisy_var": p.noisy_var })
        );
    }
    let mut out = String::from("mean,latent_var,noisy_var\n");
    for i in 0..p.mean.len() {
        out.push_str(&format!(
            "{},{},{}\n",
            p.mean[i], p.latent_var[i], p.noisy_var[i]
        ));
    }
    write_or_print(&a, out)
}

fn write_or_print(a: &PredictArgs, out: String) -> Result<()> {
    match &a.out {
        Some(path) => {
            std::fs::write(path, out).with_context(|| format!("writing {}", path.display()))?
        }
        None if !a.json => print!("{out}"),
        None => {}
    }
    Ok(())
}

fn evaluate(a: EvaluateArgs) -> Result<()> {
    let model = load_model(&a.model)?;
    let ds = load_for_model(&model, &a.data, true)?;
    let e = model.evaluate(&ds, a.epsilon)?;
    if a.json {
        println!("{}", serde_json::to_string(&e)?);
    } else {
        if let (Some(err), Some(ll), Some(g)) = (e.error_rate, e.log_loss, e.gibbs_risk) {
            println!(
                "{} test points: error rate {err:.4}  Gibbs error {g:.4}  log loss {ll:.4}",
                e.n
            );
        } else {
            let f = |v: Option<f64>| v.unwrap_or(f64::NAN);
            println!(
                "{} test points: RMSE {:.4}  MAE {:.4}  NLPD {:.4}  95% coverage {:.3}",
                e.n,
                f(e.rmse),
                f(e.mae),
                f(e.nlpd),
                f(e.coverage_95)
            );
            if let (Some(eps), Some(g), Some(b)) = (e.epsilon, e.gibbs_risk, e.bayes_risk) {
                println!("ε = {eps}: Gibbs risk {g:.4}, error of the mean predictor {b:.4}");
            }
        }
    }
    Ok(())
}

fn certify(a: CertifyArgs) -> Result<()> {
    let model = load_model(&a.model)?;
    let ds = load_for_model(&model, &a.data, true)?;
    let term = match a.confidence_term {
        TermArg::Maurer => ConfidenceTerm::Maurer,
        TermArg::Seeger => ConfidenceTerm::Seeger,
    };
    let opts = CertifyOptions {
        epsilons: a.epsilon.clone(),
        delta: a.delta,
        term,
        predictor: match a.predictor {
            PredictorArg::Latent => GibbsPredictor::Latent,
            PredictorArg::Noisy => GibbsPredictor::Noisy,
        },
    };
    let certs = model.certify(&ds, &opts)?;
    if a.json {
        match certs.as_slice() {
            [one] => println!("{}", serde_json::to_string(one)?),
            many => println!("{}", json!({ "certificates": many })),
        }
    } else {
        for c in &certs {
            print_certificate(c);
        }
    }
    Ok(())
}

fn print_certificate(c: &pacgp::model::CertificateReport) {
    let k = &c.certificate;
    match c.epsilon {
        Some(eps) => println!("with probability ≥ {:.3}, the ε-band Gibbs risk (ε = {eps}) on new data is at most {:.4}", 1.0 - k.delta, k.bound),
        None => println!("with probability ≥ {:.3}, the Gibbs classification error on new data is at most {:.4}", 1.0 - k.delta, k.bound),
    }
    println!(
        "  empirical risk {:.4}, KL {:.2} nats, grid penalty {:.2}, N = {}  (sqrt form: {:.4})",
        k.empirical_risk, k.kl, k.penalty, k.n, k.bound_sqrt
    );
    if let (Some(e), Some(lp), Some(r)) = (c.loo_error, c.loo_log_predictive, c.loo_rmse) {
        println!("  leave-one-out: ε-band error of the mean {e:.4}, RMSE {r:.4}, mean log predictive {lp:.4}");
    }
}

/// The main job on the shipped data: GP regression on boston (80/20 split) with two kernels
/// and on Snelson's 1-D set; each model evaluated on held-out data and certified.
fn demo(a: DemoArgs) -> Result<()> {
    let boston = data::load_csv(
        a.data_dir.join("boston-housing/boston.csv"),
        &CsvOptions::default(),
    )
    .context("loading boston (run from the repository root, or pass --data-dir)")?;
    let (tr, te) = data::train_test_split(boston.n(), 0.2, 0)?;
    let (train, test) = (boston.subset(&tr), boston.subset(&te));
    let snelson = data::load_csv(
        a.data_dir.join("snelson-1d/snelson_train.csv"),
        &CsvOptions::default(),
    )?;
    let (s_tr, s_te) = data::train_test_split(snelson.n(), 0.2, 0)?;
    let (s_train, s_test) = (snelson.subset(&s_tr), snelson.subset(&s_te));
    // ε in target units: $3k for boston's MEDV (in $1000s), 0.3 for Snelson's y.
    let cases: [(&str, &str, &Dataset, &Dataset, f64); 3] = [
        ("boston", "se-ard", &train, &test, 3.0),
        ("boston", "matern52-ard", &train, &test, 3.0),
        ("snelson", "se", &s_train, &s_test, 0.3),
    ];
    let mut rows = Vec::new();
    for (name, kernel, train, test, eps) in cases {
        let pb = spinner(&format!("{name}: fitting gpr with {kernel}"));
        let t0 = Instant::now();
        let model = fit_gpr(train, &gpr_options(kernel, train.d(), 0, 0, Some(eps))?)?;
        let secs = t0.elapsed().as_secs_f64();
        pb.finish_and_clear();
        let ev = model.evaluate(test, None)?;
        let cert = model.certify(train, &CertifyOptions::default())?.remove(0);
        if !a.json {
            println!(
                "== {name} ({} train / {} test), gpr with {kernel}, fitted in {secs:.2} s",
                train.n(),
                test.n()
            );
            println!("  kernel: {}", model.posterior.kernel.describe());
            println!(
                "  test: RMSE {:.4}  NLPD {:.4}  95% coverage {:.3}  ε-band Gibbs risk {:.4}",
                ev.rmse.unwrap_or(f64::NAN),
                ev.nlpd.unwrap_or(f64::NAN),
                ev.coverage_95.unwrap_or(f64::NAN),
                ev.gibbs_risk.unwrap_or(f64::NAN)
            );
            print_certificate(&cert);
        }
        rows.push(json!({ "dataset": name, "kernel": kernel, "fit_seconds": secs, "evaluation": ev, "certificate": cert }));
    }
    // A classifier: breast cancer (Wisconsin), Laplace with the kernel chosen by the bound.
    let bc_opts = CsvOptions {
        drop_columns: vec!["sample_code_number".into()],
        ..Default::default()
    };
    let (bc, labels) = data::load_csv_classification(
        a.data_dir
            .join("breast-cancer-wisconsin/breast_cancer_wisconsin_complete683.csv"),
        &bc_opts,
    )?;
    let (tr, te) = data::train_test_split(bc.n(), 0.2, 0)?;
    let (train, test) = (bc.subset(&tr), bc.subset(&te));
    let pb = spinner("breast cancer: fitting a Laplace GP classifier");
    let t0 = Instant::now();
    let opts = ClassifierOptions {
        method: InferenceMethod::Laplace(Default::default()),
        likelihood: Likelihood::probit(),
        delta: 0.01,
        term: ConfidenceTerm::Maurer,
        selection: Default::default(),
        predictor: GibbsPredictor::Latent,
    };
    let model = pacgp::model::fit_classifier(&train, labels, &opts)?;
    let secs = t0.elapsed().as_secs_f64();
    pb.finish_and_clear();
    let ev = model.evaluate(&test, None)?;
    let cert = model.certify(&train, &CertifyOptions::default())?.remove(0);
    if !a.json {
        println!("== breast cancer ({} train / {} test), Laplace GP classifier (probit), fitted in {secs:.2} s", train.n(), test.n());
        println!(
            "  kernel chosen by the bound: {}",
            model.posterior.kernel.describe()
        );
        println!(
            "  test: error rate {:.4}  Gibbs error {:.4}  log loss {:.4}",
            ev.error_rate.unwrap_or(f64::NAN),
            ev.gibbs_risk.unwrap_or(f64::NAN),
            ev.log_loss.unwrap_or(f64::NAN)
        );
        print_certificate(&cert);
    }
    rows.push(json!({ "dataset": "breast-cancer-wisconsin", "kernel": model.posterior.kernel.describe(), "fit_seconds": secs, "evaluation": ev, "certificate": cert }));
    if a.json {
        println!("{}", json!({ "demo": rows }));
    }
    Ok(())
}

/// `pacgp split`: train and test files from one data file by a seeded permutation.
fn split(a: SplitArgs) -> Result<()> {
    let (train_default, test_default) = data::default_split_paths(&a.data);
    let train = a.out_train.unwrap_or(train_default);
    let test = a.out_test.unwrap_or(test_default);
    let done = data::split_file(&a.data, a.test_fraction, a.seed, &train, &test)?;
    if a.json {
        println!("{}", serde_json::to_string(&done)?);
    } else {
        println!(
            "wrote {} training rows to {} and {} test rows to {}",
            done.n_train,
            done.train_path.display(),
            done.n_test,
            done.test_path.display()
        );
    }
    Ok(())
}
