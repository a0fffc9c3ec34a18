//! The interval and prediction-set rules of a fit spec ([`check_intervals`], run by
//! [`super::check_spec`]): which methods take which intervals or sets, and which classifiers
//! have the closed-form leave-one-out jackknife+ sets need.

use super::*;

/// Intervals apply to regressors with a regression score, prediction sets to classifiers with
/// a classification score and split conformal, or jackknife+ where the classifier has a
/// leave-one-out at any input without refitting its bound ([`MethodSpec::jackknife_loo`]);
/// jackknife+ needs the posterior fitted on the whole sample (not a split prior's: a conflict
/// with the prior, [`MethodSpec::split_prior`]); folds and fractions within their ranges.
pub(crate) fn check_intervals(iv: &IntervalSpec, spec: &FitSpec) -> Result<(), SpecError> {
    let method = spec.method_name();
    if matches!(iv.method, IntervalMethod::JackknifePlus) && spec.method.home().split_prior() {
        return Err(SpecError::conflict(
            SpecOption::Intervals,
            SpecOption::Prior,
            if method.is_classifier() {
                "jackknife+ needs the posterior fitted on the whole sample, and a split \
                 prior's is fitted on part B only; use split-conformal"
            } else {
                "jackknife+ needs the posterior fitted on the whole sample, and a split \
                 prior's is fitted on part B only; use cv+ or split-conformal"
            },
        ));
    }
    let classifier_method_ok = match iv.method {
        IntervalMethod::SplitConformal { .. } => true,
        IntervalMethod::JackknifePlus => spec.method.home().jackknife_loo().is_some(),
        IntervalMethod::CvPlus { .. } => false,
    };
    if method.is_classifier() && !classifier_method_ok {
        return Err(SpecError::out_of_range(
            SpecOption::Intervals,
            iv.method,
            "split-conformal[:F] for this classifier's prediction sets (jackknife+ sets need a \
             closed-form leave-one-out at any input, without refits, of a posterior fitted on \
             the whole sample: the site downdate of laplace, ep, ivm or pac-gpc, the linear \
             response of mean-field or svm, svgp's and pac-svgp's sites removed from q(u) or \
             sogp's refits, binary or one-vs-rest, or softmax's, without a split prior; \
             cross-validation sets are not available for classifiers)",
        ));
    }
    if method.is_classifier() != iv.score.is_classification() {
        return Err(SpecError::out_of_range(
            SpecOption::IntervalScore,
            iv.score,
            if method.is_classifier() {
                "lac or aps for a classifier's prediction sets"
            } else {
                "absolute or gp-std for a regressor's prediction intervals"
            },
        ));
    }
    match iv.method {
        IntervalMethod::CvPlus { folds } if folds < 2 => Err(SpecError::out_of_range(
            SpecOption::Intervals,
            iv.method,
            "cv+:K with K ≥ 2 folds",
        )),
        IntervalMethod::SplitConformal { fraction } if !(fraction > 0.0 && fraction < 1.0) => {
            Err(SpecError::out_of_range(
                SpecOption::Intervals,
                iv.method,
                "split-conformal:F with F in (0, 1)",
            ))
        }
        _ => Ok(()),
    }
}

/// Whether a classifier's posterior is in Gaussian-site form fitted on its whole sample, with
/// the cavities of its sites as its leave-one-out (`certify`'s: [`crate::loo::cavity`]):
/// Laplace, EP, IVM over its active set, and pac-gpc, binary or one-vs-rest; no split prior.
/// These are the posteriors jackknife+ sets downdate ([`crate::loo::LooDowndate::sites`]).
/// Not mean field nor the SVM (linear response: [`JackknifeLoo::LinearResponse`]; a
/// mean-field site may have precision 0), SOGP (a dense form, no sites) nor svgp (its rows' sites are
/// rank-one in `q(u)`: [`inducing_site_classifier`]).
pub(crate) fn site_form_classifier(method: &Method) -> bool {
    method.home().jackknife_loo() == Some(JackknifeLoo::SiteCavities)
}

/// Whether a classifier's leave-one-out is refits (SOGP's online sweeps, binary or
/// one-vs-rest, no split prior): its jackknife+ sets refit it without each row at the stored
/// kernel ([`crate::loo::classifier_refit_posteriors`]), from the record's training inputs.
pub(crate) fn refit_classifier(method: &Method) -> bool {
    method.home().jackknife_loo() == Some(JackknifeLoo::Refits)
}

/// Whether a classifier's jackknife+ record keeps the standardised training inputs: its
/// leave-one-out is read at the rows but its posterior's basis is not them (svgp's and
/// pac-svgp's inducing inputs, [`inducing_site_classifier`]; SOGP's refits,
/// [`refit_classifier`]).
pub(crate) fn training_inputs_classifier(method: &Method) -> bool {
    inducing_site_classifier(method) || refit_classifier(method)
}

/// Whether a classifier's leave-one-out removes its rows' rank-one sites from its inducing
/// posterior `q(u)` (svgp or pac-svgp, binary or one-vs-rest, without a split prior;
/// docs/math.md eqs. 12.7–12.8): its jackknife+ record keeps the standardised training inputs
/// the sites are read at ([`crate::loo::InducingSiteLoo`]).
pub(crate) fn inducing_site_classifier(method: &Method) -> bool {
    method.home().jackknife_loo() == Some(JackknifeLoo::InducingSites)
}

/// Whether a classifier's posterior covers only part of its sample (IVM's active set, binary
/// or one-vs-rest; the SVM's support vectors), so that its jackknife+ record keeps those rows
/// and the training inputs.
pub(crate) fn active_set_classifier(method: &Method) -> bool {
    method.home().active_set()
}

/// The interval method on a sample of `n` rows: at most N folds; both parts of a split
/// non-empty.
pub(crate) fn interval_sample(method: IntervalMethod, n: usize) -> Result<(), SpecError> {
    match method {
        IntervalMethod::CvPlus { folds } if folds > n => Err(SpecError::out_of_range(
            SpecOption::Intervals,
            method,
            &format!("cv+:K with K ≤ N = {n} (the training sample's rows)"),
        )),
        IntervalMethod::SplitConformal { fraction } => {
            let n_a = crate::data::part_a_size(n, fraction);
            if n_a == 0 || n_a >= n {
                return Err(SpecError::out_of_range(
                    SpecOption::Intervals,
                    method,
                    &format!("a fraction that leaves both parts of N = {n} rows non-empty"),
                ));
            }
            Ok(())
        }
        _ => Ok(()),
    }
}
