//! What a typed fit spec must satisfy: ranges of every value, the options that conflict, the
//! multi-class rules ([`check_spec`], run by `FitOptions::check` and on every model file's
//! stored spec); the interval and prediction-set rules are [`super::intervals`].

use super::*;

/// `v` must be positive and finite.
pub(super) fn positive(option: SpecOption, v: f64, what: &str) -> Result<(), SpecError> {
    if v > 0.0 && v.is_finite() {
        Ok(())
    } else {
        Err(SpecError::out_of_range(
            option,
            v,
            &format!("positive and finite ({what})"),
        ))
    }
}

/// A basis size given or defaulted: `given` must lie in `1..=n` (`cap`: larger is cut to N
/// with a note); the default [`DEFAULT_BASIS`] is cut to N with a note.
pub(crate) fn basis_size(
    given: Option<usize>,
    n: usize,
    option: SpecOption,
    cap: bool,
    notes: &mut Vec<String>,
) -> Result<usize, SpecError> {
    let name = match option {
        SpecOption::ActiveSet => "the active set",
        _ => "the number of inducing inputs (basis points)",
    };
    match given {
        Some(0) => Err(SpecError::out_of_range(
            option,
            0,
            &format!("in 1..={n} (the training sample has N = {n} rows)"),
        )),
        Some(m) if m > n && cap => {
            notes.push(format!(
                "{name} {m} is set to N = {n}, the most the data can fill"
            ));
            Ok(n)
        }
        Some(m) if m > n => Err(SpecError::out_of_range(
            option,
            m,
            &format!("in 1..={n} (the training sample has N = {n} rows)"),
        )),
        Some(m) => Ok(m),
        None if n < DEFAULT_BASIS => {
            notes.push(format!(
                "{name} is set to N = {n} (the default {DEFAULT_BASIS} is more than the data has)"
            ));
            Ok(n)
        }
        None => Ok(DEFAULT_BASIS),
    }
}

/// A kernel specification must parse (for any number of inputs: the grammar and its sizes).
pub(super) fn kernel_ok(spec: &str) -> Result<(), SpecError> {
    Kernel::check_spec_grammar(spec).map_err(|e| {
        let reason = match e {
            crate::Error::InvalidSpec { reason, .. } => reason,
            other => other.to_string(),
        };
        SpecError::unparsable(
            SpecOption::Kernel,
            BadValue {
                given: spec.to_string(),
                allowed: format!("a kernel ({reason})"),
            },
        )
    })
}

/// gpr's fixed noise and known per-row variances: every value finite and ≥ 0, and some
/// noise on every row (σ² fixed at 0 needs `alpha` positive everywhere); θ kept as given
/// must be finite.
fn check_gpr_noise(s: &GprSpec) -> Result<(), SpecError> {
    let non_negative = |option, v: f64| match v >= 0.0 && v.is_finite() {
        true => Ok(()),
        false => Err(SpecError::out_of_range(
            option,
            v,
            "finite and ≥ 0 (a noise variance)",
        )),
    };
    if let Some(v) = s.noise {
        non_negative(SpecOption::Noise, v)?;
    }
    for &a in &s.alpha {
        non_negative(SpecOption::Alpha, a)?;
    }
    if s.noise == Some(0.0) && s.alpha.is_empty() {
        return Err(SpecError::out_of_range(
            SpecOption::Noise,
            0,
            "positive and finite (a noise variance; 0 only with known per-row variances)",
        ));
    }
    if s.noise == Some(0.0) && s.alpha.contains(&0.0) {
        return Err(SpecError::conflict(
            SpecOption::Alpha,
            SpecOption::Noise,
            "a row with alpha 0 and a noise variance of 0 has no noise at all",
        ));
    }
    if let Some(p) = s.pretrain {
        if s.kernel_params.is_some() {
            return Err(SpecError::conflict(
                SpecOption::Pretrain,
                SpecOption::KernelParams,
                "θ kept as given is not optimised, so there is no search to warm-start",
            ));
        }
        if p < 2 {
            return Err(SpecError::out_of_range(
                SpecOption::Pretrain,
                p,
                "at least 2 rows",
            ));
        }
    }
    if let Some(p) = &s.kernel_params {
        if s.noise.is_none() {
            return Err(SpecError::missing(
                SpecOption::Noise,
                MethodName::Gpr,
                "θ kept as given (kernel_params) fits nothing, so the noise variance is given too",
            ));
        }
        if let Some(v) = p.iter().find(|v| !v.is_finite()) {
            return Err(SpecError::out_of_range(
                SpecOption::KernelParams,
                v,
                "finite (ln values of the kernel's hyperparameters)",
            ));
        }
    }
    Ok(())
}

/// Known variances given row by row belong to the whole sample: a fit that refits on part of
/// it (CV+, split conformal, the certify holdout) is refused; jackknife+ refits nothing.
fn check_per_row_alpha(spec: &FitSpec) -> Result<(), SpecError> {
    let Method::Gpr(s) = &spec.method else {
        return Ok(());
    };
    if s.alpha.len() < 2 {
        return Ok(());
    }
    let why = "alpha given row by row is for the whole sample, and this refits on part of it: \
               use jackknife+ intervals, or one alpha for every row";
    if spec.certify_holdout.is_some() {
        return Err(SpecError::conflict(
            SpecOption::Alpha,
            SpecOption::CertifyHoldout,
            why,
        ));
    }
    match spec.intervals.as_ref().map(|iv| iv.method) {
        Some(IntervalMethod::CvPlus { .. } | IntervalMethod::SplitConformal { .. }) => Err(
            SpecError::conflict(SpecOption::Alpha, SpecOption::Intervals, why),
        ),
        _ => Ok(()),
    }
}

/// The typed spec's ranges and cross-option rules (the variants already exclude options that
/// do not apply).
pub(crate) fn check_spec(spec: &FitSpec) -> Result<(), SpecError> {
    let d = spec.delta;
    if !(d > 0.0 && d < 1.0) {
        return Err(SpecError::out_of_range(SpecOption::Delta, d, "in (0, 1)"));
    }
    if let Some(f) = spec.certify_holdout {
        if !(f > 0.0 && f < 1.0) {
            return Err(SpecError::out_of_range(
                SpecOption::CertifyHoldout,
                f,
                "in (0, 1) (the fraction of the sample kept out of the fit)",
            ));
        }
    }
    let method = spec.method_name();
    if let Some(iv) = &spec.intervals {
        check_intervals(iv, spec)?;
    }
    check_per_row_alpha(spec)?;
    let epsilon = |e: Option<f64>| match e {
        Some(e) => positive(
            SpecOption::Epsilon,
            e,
            "the ε of the ε-band loss, in the target's units",
        ),
        None => Ok(()),
    };
    let noise = |v: f64| positive(SpecOption::NoiseInit, v, "a noise variance");
    let basis = |m: Option<usize>, option| match m {
        Some(0) => Err(SpecError::out_of_range(option, 0, "at least 1")),
        _ => Ok(()),
    };
    match &spec.method {
        Method::Gpr(s) => {
            kernel_ok(&s.kernel)?;
            noise(s.noise_init)?;
            check_gpr_noise(s)?;
            epsilon(s.epsilon)
        }
        Method::Sparse(s) => {
            kernel_ok(&s.kernel)?;
            noise(s.noise_init)?;
            basis(s.inducing, SpecOption::Inducing)?;
            check_schedule(&s.schedule)?;
            epsilon(s.epsilon)
        }
        Method::PacGp(s) => {
            kernel_ok(&s.kernel)?;
            noise(s.noise_init)?;
            epsilon(Some(s.epsilon))?;
            check_pac_prior(s.prior, s.bound, method)
        }
        Method::PacSgp(s) => {
            kernel_ok(&s.kernel)?;
            basis(s.inducing, SpecOption::Inducing)?;
            check_schedule(&s.schedule)?;
            if matches!(s.prior, PacPrior::Split(_)) && !s.schedule.is_default() {
                let option = match s.schedule.pretrain {
                    Some(_) => SpecOption::Pretrain,
                    None => SpecOption::MaxIter,
                };
                return Err(SpecError::conflict(
                    option,
                    SpecOption::Prior,
                    "the split prior runs its own fits on parts A and B",
                ));
            }
            epsilon(Some(s.epsilon))?;
            check_pac_prior(s.prior, s.bound, method)
        }
        Method::GreedySparse(s) => {
            kernel_ok(&s.kernel)?;
            basis(s.basis, SpecOption::Inducing)?;
            epsilon(s.epsilon)
        }
        Method::Classifier(c) => {
            c.inference.settings().check()?;
            check_hypers(&c.hypers, method)?;
            let split = matches!(c.hypers, ClassifierHypers::Split(_));
            if split && c.inference.settings().likelihood() != LikelihoodName::Probit {
                return Err(split_needs_probit());
            }
            Ok(())
        }
        Method::PacGpc(c) => {
            check_hypers(&c.hypers, method)?;
            if matches!(c.hypers, ClassifierHypers::Split(_))
                && c.likelihood != LikelihoodName::Probit
            {
                return Err(split_needs_probit());
            }
            Ok(())
        }
        Method::OneVsRest(inner) => check_one_vs_rest(inner, spec),
        Method::Softmax(s) => match &s.hypers {
            ClassifierHypers::Split(_) => Err(split_not_multiclass(method)),
            hypers => check_hypers(hypers, method),
        },
        Method::Svm(s) => {
            match &s.kernel {
                SvmKernel::Menu => {}
                SvmKernel::Lengthscale(l) => {
                    positive(SpecOption::Lengthscale, *l, "an RBF lengthscale")?
                }
                SvmKernel::Given(k) => kernel_ok(k)?,
            }
            match s.slack {
                SvmSlack::Linear { c: Some(c) } => positive(SpecOption::C, c, "a box constraint")?,
                SvmSlack::Quadratic { v: Some(v) } => {
                    positive(SpecOption::InputNoise, v, "a noise variance")?
                }
                _ => {}
            }
            Ok(())
        }
        Method::Svgp(s) => {
            kernel_ok(&s.kernel)?;
            basis(s.inducing, SpecOption::Inducing)?;
            if s.schedule.pretrain.is_some() {
                return Err(SpecError::not_for(
                    SpecOption::Pretrain,
                    method,
                    "gpr, vfe, fitc, dtc and pac-sgp",
                ));
            }
            if s.batch == Some(0) {
                return Err(SpecError::out_of_range(
                    SpecOption::BatchSize,
                    0,
                    "at least 1 row",
                ));
            }
            check_schedule(&s.schedule)
        }
    }
}

/// A warm start needs at least two rows, an iteration cap at least one iteration.
fn check_schedule(s: &OptimSchedule) -> Result<(), SpecError> {
    match (s.pretrain, s.max_iter) {
        (Some(p), _) if p < 2 => Err(SpecError::out_of_range(
            SpecOption::Pretrain,
            p,
            "at least 2 rows",
        )),
        (_, Some(0)) => Err(SpecError::out_of_range(
            SpecOption::MaxIter,
            0,
            "at least 1",
        )),
        _ => Ok(()),
    }
}

/// A multi-class fit certifies all classes on one sample: each class's split prior would
/// certify on its own part B.
pub(super) fn split_not_multiclass(method: MethodName) -> SpecError {
    SpecError::not_for(
        SpecOption::Prior,
        method,
        "binary laplace, pac-gpc and pac-svgp (a multi-class certificate is on one sample for all classes, and each class's split prior would keep its own part B)",
    )
}

/// The binary method of a one-vs-rest spec: a classifier, pac-gpc or the SVM, no split prior,
/// itself a valid spec.
pub(super) fn check_one_vs_rest(inner: &Method, spec: &FitSpec) -> Result<(), SpecError> {
    let name = method_name_of_inner(inner);
    match inner {
        Method::Classifier(ClassifierSpec { hypers, .. })
        | Method::PacGpc(PacGpcSpec { hypers, .. }) => {
            if matches!(hypers, ClassifierHypers::Split(_)) {
                return Err(split_not_multiclass(name));
            }
        }
        Method::Svgp(s) if s.split.is_some() => return Err(split_not_multiclass(name)),
        Method::Svm(_) | Method::Svgp(_) => {}
        _ => {
            return Err(SpecError::not_for(
                SpecOption::MultiClass,
                name,
                "the classifiers as one-vs-rest",
            ))
        }
    }
    check_spec(&FitSpec {
        method: inner.clone(),
        delta: spec.delta,
        seed: spec.seed,
        intervals: None,
        certify_holdout: None,
    })
}

pub(super) fn method_name_of_inner(inner: &Method) -> MethodName {
    FitSpec {
        method: inner.clone(),
        delta: DEFAULT_DELTA,
        seed: 0,
        intervals: None,
        certify_holdout: None,
    }
    .method_name()
}

pub(super) fn split_needs_probit() -> SpecError {
    SpecError::conflict(
        SpecOption::Likelihood,
        SpecOption::Prior,
        "the split prior fits θ by ML-II on part A with the probit",
    )
}

/// The split prior trains the kl bound only; its fraction lies in (0, 1).
pub(super) fn check_pac_prior(
    prior: PacPrior,
    bound: BoundKind,
    method: MethodName,
) -> Result<(), SpecError> {
    if let PacPrior::Split(f) = prior {
        check_fraction(f)?;
        if bound != BoundKind::Kl {
            return Err(SpecError::not_for(
                SpecOption::Prior,
                method,
                "pac-gp and pac-sgp (the kl bound)",
            ));
        }
    }
    Ok(())
}

pub(super) fn check_fraction(f: SplitFraction) -> Result<(), SpecError> {
    match f {
        SplitFraction::Fixed(v) if !(v > 0.0 && v < 1.0) => Err(SpecError::out_of_range(
            SpecOption::Prior,
            format!("split:{v}"),
            "split:F with F in (0, 1), or split:auto",
        )),
        _ => Ok(()),
    }
}

pub(super) fn check_hypers(h: &ClassifierHypers, method: MethodName) -> Result<(), SpecError> {
    match h {
        ClassifierHypers::Candidates => Ok(()),
        ClassifierHypers::Grid { kernel } => kernel_ok(kernel),
        ClassifierHypers::Split(s) => {
            if !matches!(method, MethodName::Laplace | MethodName::PacGpc) {
                return Err(SpecError::not_for(
                    SpecOption::Prior,
                    method,
                    "laplace and pac-gpc",
                ));
            }
            kernel_ok(&s.kernel)?;
            check_fraction(s.fraction)?;
            if let PriorScale::Fixed(t) = s.prior_scale {
                positive(
                    SpecOption::PriorScale,
                    t,
                    "the prior's covariance scale t, or auto",
                )?;
            }
            Ok(())
        }
    }
}
