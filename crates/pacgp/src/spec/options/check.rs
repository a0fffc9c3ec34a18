//! What a typed fit spec must satisfy: ranges of every value, the options that conflict, the
//! multi-class rules ([`check_spec`], run by `FitOptions::check` and on every model file's
//! stored spec); the interval and prediction-set rules are [`super::intervals`].

use super::*;

/// `v` must be positive and finite.
pub(in crate::spec) fn positive(option: SpecOption, v: f64, what: &str) -> Result<(), SpecError> {
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
pub(in crate::spec) fn kernel_ok(spec: &str) -> Result<(), SpecError> {
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
    // A one-vs-rest spec's binary method first: its interval rules are its binary method's.
    if let Method::OneVsRest(inner) = &spec.method {
        check_one_vs_rest(inner)?;
    }
    if let Some(iv) = &spec.intervals {
        check_intervals(iv, spec)?;
    }
    check_per_row_alpha(spec)?;
    match &spec.method {
        Method::OneVsRest(_) => Ok(()),
        method => method.home().check(),
    }
}

/// A warm start needs at least two rows, an iteration cap at least one iteration.
pub(in crate::spec) fn check_schedule(s: &OptimSchedule) -> Result<(), SpecError> {
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
pub(in crate::spec) fn split_not_multiclass(method: MethodName) -> SpecError {
    SpecError::not_for(
        SpecOption::Prior,
        method,
        "binary laplace, pac-gpc and pac-svgp (a multi-class certificate is on one sample for all classes, and each class's split prior would keep its own part B)",
    )
}

/// The binary method of a one-vs-rest spec: a classifier, pac-gpc, svgp or the SVM, no split
/// prior, itself a valid spec.
fn check_one_vs_rest(inner: &Method) -> Result<(), SpecError> {
    if let Method::OneVsRest(_) = inner {
        return Err(SpecError::not_for(
            SpecOption::MultiClass,
            inner.home().name(),
            "the classifiers as one-vs-rest",
        ));
    }
    inner.home().one_vs_rest_member()?;
    inner.home().check()
}

pub(in crate::spec) fn split_needs_probit() -> SpecError {
    SpecError::conflict(
        SpecOption::Likelihood,
        SpecOption::Prior,
        "the split prior fits θ by ML-II on part A with the probit",
    )
}

/// The split prior trains the kl bound only; its fraction lies in (0, 1).
pub(in crate::spec) fn check_pac_prior(
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

pub(in crate::spec) fn check_fraction(f: SplitFraction) -> Result<(), SpecError> {
    match f {
        SplitFraction::Fixed(v) if !(v > 0.0 && v < 1.0) => Err(SpecError::out_of_range(
            SpecOption::Prior,
            format!("split:{v}"),
            "split:F with F in (0, 1), or split:auto",
        )),
        _ => Ok(()),
    }
}

pub(in crate::spec) fn check_hypers(
    h: &ClassifierHypers,
    method: MethodName,
) -> Result<(), SpecError> {
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
