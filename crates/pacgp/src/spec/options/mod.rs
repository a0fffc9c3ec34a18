//! The options as a user gives them ([`FitOptions`], one field per option, nothing
//! interpreted yet), the one place that decides which apply to which method and what ranges
//! they take, and the structured [`SpecError`] that each front end words in its own terms.

use super::methods::FromOptions;
use super::values::BadValue;
use super::*;

mod check;
mod intervals;
mod method;
pub use crate::vocabulary::{LibraryWording, SpecError, SpecOption, SpecProblem, Wording};
pub(crate) use check::*;
pub(crate) use intervals::*;

/// Every option of a fit as given (`None`: not given). Front ends fill it from their own
/// inputs; [`FitOptions::check`] turns it into a [`CheckedFitSpec`] or says what is wrong.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FitOptions {
    /// Kernel specification (`se-ard`, `matern52+linear`, ...).
    pub kernel: Option<String>,
    /// ε of the ε-band loss (target units).
    pub epsilon: Option<f64>,
    /// Confidence δ.
    pub delta: Option<f64>,
    /// Seed of every random choice.
    pub seed: Option<u64>,
    /// Initial noise variance σ² (standardised targets).
    pub noise_init: Option<f64>,
    /// Random restarts of ML-II.
    pub restarts: Option<usize>,
    /// Snap θ onto the PAC grid (gpr).
    pub snap: Option<bool>,
    /// Inducing inputs M (sparse methods) or basis points k (greedy-sparse).
    pub inducing: Option<usize>,
    /// Where the inducing inputs start.
    pub inducing_init: Option<InducingInit>,
    /// Rows of the seeded subsample a sparse method is optimised on first.
    pub pretrain: Option<usize>,
    /// Most optimiser iterations over all rows (sparse methods); with a batch size, the
    /// number of minibatch steps.
    pub max_iter: Option<usize>,
    /// Rows per minibatch of the sparse variational classifier.
    pub batch_size: Option<usize>,
    /// Classifier likelihood.
    pub likelihood: Option<LikelihoodName>,
    /// How a classifier's θ is chosen.
    pub select: Option<Selection>,
    /// IVM's active set, SOGP's most basis vectors.
    pub active_set: Option<usize>,
    /// Mean field's flip probability κ.
    pub kappa: Option<f64>,
    /// Input-noise variance v (mean field; the SVM's quadratic slack).
    pub input_noise: Option<f64>,
    /// The SVM's slack penalty.
    pub slack: Option<SlackKind>,
    /// The SVM's box constraint C.
    pub c: Option<f64>,
    /// The SVM's RBF lengthscale.
    pub lengthscale: Option<f64>,
    /// The SVM's free bias.
    pub bias: Option<bool>,
    /// The SVM's dual solver.
    pub solver: Option<SvmSolver>,
    /// The data-dependent split prior.
    pub prior: Option<SplitFraction>,
    /// A coarse prior over ln θ.
    pub hyper_prior: Option<HyperPriorName>,
    /// Confidence constant of a trained bound.
    pub xi: Option<Xi>,
    /// The inequality: kl, sqrt (pac-gp, pac-sgp) or catoni (classifier split prior).
    pub bound: Option<BoundName>,
    /// The classifier split prior's covariance scale t.
    pub prior_scale: Option<PriorScale>,
    /// The classifier split prior's kernel structure.
    pub prior_kernel: Option<PriorKernel>,
    /// The classifier split prior in both directions.
    pub both_directions: Option<bool>,
    /// The Gibbs classifier a classifier's bound is about.
    pub predictor: Option<GibbsPredictor>,
    /// A regressor's prediction intervals (jackknife+, cv+, split-conformal) or a classifier's
    /// prediction sets (split-conformal).
    pub intervals: Option<IntervalMethod>,
    /// The conformity score of the intervals.
    pub interval_score: Option<IntervalScore>,
    /// How a classifier learns more than two classes.
    pub multiclass: Option<MultiClass>,
    /// The fraction of the sample held out of the fit to certify the deployed predictor.
    pub certify_holdout: Option<f64>,
    /// How many consecutive model inputs each table column became (its one-hot width; see
    /// [`crate::data::InputCoding::input_groups`]); not a user's option but the table's
    /// shape. With a column of several inputs the default kernel ties their lengthscales
    /// ([`crate::spec::default_kernel`]); `None` (arrays, no table) keeps one per input.
    pub input_groups: Option<Vec<usize>>,
    /// The noise variance σ² kept as given instead of fitted (gpr; standardised targets).
    pub noise: Option<f64>,
    /// Known noise variances added to the diagonal, one value or one per row (gpr;
    /// scikit-learn's `alpha`).
    pub alpha: Option<Vec<f64>>,
    /// θ kept as given, ln values on the inputs as given (gpr; no ML-II).
    pub kernel_params: Option<Vec<f64>>,
    /// Standardise the targets (gpr; default true).
    pub normalize_y: Option<bool>,
    /// Several targets share one θ and σ², chosen by their summed evidence (gpr; default:
    /// one kernel per output).
    pub shared_kernel: Option<bool>,
}

/// Every given option of `o` that the method does not use, as the error naming it.
pub(in crate::spec) struct Unused<'a> {
    method: MethodName,
    given: Vec<(SpecOption, bool)>,
    o: &'a FitOptions,
}

impl<'a> Unused<'a> {
    fn of(method: MethodName, o: &'a FitOptions) -> Self {
        use SpecOption as O;
        let given = vec![
            (O::Kernel, o.kernel.is_some()),
            (O::Epsilon, o.epsilon.is_some()),
            (O::NoiseInit, o.noise_init.is_some()),
            (O::Restarts, o.restarts.is_some()),
            (O::Snap, o.snap.is_some()),
            (O::Inducing, o.inducing.is_some()),
            (O::InducingInit, o.inducing_init.is_some()),
            (O::Pretrain, o.pretrain.is_some()),
            (O::MaxIter, o.max_iter.is_some()),
            (O::BatchSize, o.batch_size.is_some()),
            (O::Likelihood, o.likelihood.is_some()),
            (O::Select, o.select.is_some()),
            (O::ActiveSet, o.active_set.is_some()),
            (O::Kappa, o.kappa.is_some()),
            (O::InputNoise, o.input_noise.is_some()),
            (O::Slack, o.slack.is_some()),
            (O::C, o.c.is_some()),
            (O::Lengthscale, o.lengthscale.is_some()),
            (O::Bias, o.bias.is_some()),
            (O::Solver, o.solver.is_some()),
            (O::Prior, o.prior.is_some()),
            (O::HyperPrior, o.hyper_prior.is_some()),
            (O::Xi, o.xi.is_some()),
            (O::Bound, o.bound.is_some()),
            (O::PriorScale, o.prior_scale.is_some()),
            (O::PriorKernel, o.prior_kernel.is_some()),
            (O::BothDirections, o.both_directions.is_some()),
            (O::Predictor, o.predictor.is_some()),
            (O::Intervals, o.intervals.is_some()),
            (O::IntervalScore, o.interval_score.is_some()),
            (O::MultiClass, o.multiclass.is_some()),
            (O::Noise, o.noise.is_some()),
            (O::Alpha, o.alpha.is_some()),
            (O::KernelParams, o.kernel_params.is_some()),
            (O::NormalizeY, o.normalize_y.is_some()),
            (O::SharedKernel, o.shared_kernel.is_some()),
        ];
        Self { method, given, o }
    }

    /// The method uses `option`: it is taken off the list of unused ones.
    pub(in crate::spec) fn used(&mut self, option: SpecOption) {
        self.given.retain(|(o, _)| *o != option);
    }

    /// The method uses every one of `options` ([`Unused::used`]).
    pub(in crate::spec) fn takes(&mut self, options: &[SpecOption]) {
        for &option in options {
            self.used(option);
        }
    }

    /// Refuse the first option given that was not used, naming what it applies to.
    fn refuse(self) -> Result<(), SpecError> {
        let _ = self.o;
        match self.given.iter().find(|(_, g)| *g) {
            Some((option, _)) => Err(SpecError::not_for(
                *option,
                self.method,
                applies_to(*option),
            )),
            None => Ok(()),
        }
    }
}

/// Which methods an option applies to, in words (for the message refusing it elsewhere).
fn applies_to(option: SpecOption) -> &'static str {
    use SpecOption as O;
    match option {
        O::Kernel => "every method but the classifiers' kernel menu (classifiers: laplace, ep and ivm by ML-II, or a split prior; svm: the prior kernel)",
        O::Epsilon => "regression methods",
        O::NoiseInit => "gpr, vfe, fitc, dtc, pac-gp and pac-gp-sqrt",
        O::Restarts => "gpr, and laplace and ep with the kernel by ML-II (select ml2)",
        O::Snap | O::Noise | O::Alpha | O::KernelParams | O::NormalizeY | O::SharedKernel => {
            "gpr"
        }
        O::Inducing => "vfe, fitc, dtc, pac-sgp, pac-sgp-sqrt, greedy-sparse, svgp and pac-svgp",
        O::InducingInit => "vfe, fitc, dtc, pac-sgp, pac-sgp-sqrt, svgp and pac-svgp (greedy-sparse always selects greedily)",
        O::Pretrain => "vfe, fitc, dtc, pac-sgp and pac-sgp-sqrt (not with a split prior)",
        O::MaxIter => "vfe, fitc, dtc, pac-sgp and pac-sgp-sqrt (not with a split prior), svgp and pac-svgp",
        O::BatchSize => "svgp and pac-svgp",
        O::Likelihood => "laplace, ep, ivm, sogp and pac-gpc (mean-field uses flip noise kappa)",
        O::Select => "laplace, ep, mean-field, ivm and sogp",
        O::ActiveSet => "ivm and sogp",
        O::Kappa => "mean-field",
        O::InputNoise => "mean-field and svm with the quadratic slack",
        O::Slack | O::Lengthscale | O::Bias | O::Solver => "svm",
        O::C => "svm with the linear slack",
        O::Prior => "pac-gp, pac-sgp, laplace, pac-gpc and pac-svgp",
        O::HyperPrior | O::Xi => "pac-gp, pac-gp-sqrt, pac-sgp and pac-sgp-sqrt",
        O::Bound => "pac-gp, pac-sgp, pac-svgp (kl or sqrt) and the classifier split prior (kl or catoni)",
        O::PriorScale | O::PriorKernel | O::BothDirections => {
            "laplace and pac-gpc with a split prior"
        }
        O::Predictor => "the GP classifiers",
        O::Intervals => "regression methods and the classifiers (split-conformal sets)",
        O::IntervalScore => "methods with intervals",
        O::MultiClass => "the classifiers (one-vs-rest) and laplace (softmax)",
        O::Method | O::Delta | O::Seed | O::CertifyHoldout => "every method",
    }
}

impl FitOptions {
    /// The spec of `method` with these options: an option the method does not use, a value
    /// out of range or two options that do not combine are a [`SpecError`]; defaults fill the
    /// rest.
    ///
    /// ```
    /// use pacgp::spec::{FitOptions, MethodName, SpecOption, SpecProblem};
    ///
    /// let spec = FitOptions { epsilon: Some(0.5), ..Default::default() }.check(MethodName::Gpr)?;
    /// assert_eq!((spec.delta, spec.seed), (0.01, 0)); // the defaults
    /// assert_eq!(spec.epsilon(), Some(0.5));
    ///
    /// // δ must lie in (0, 1); exact GP regression has no inducing inputs.
    /// let err = FitOptions { delta: Some(1.5), ..Default::default() }
    ///     .check(MethodName::Gpr)
    ///     .unwrap_err();
    /// assert_eq!(err.option, SpecOption::Delta);
    /// assert!(matches!(err.problem, SpecProblem::OutOfRange { .. }));
    /// let err = FitOptions { inducing: Some(10), ..Default::default() }
    ///     .check(MethodName::Gpr)
    ///     .unwrap_err();
    /// assert!(matches!(err.problem, SpecProblem::NotApplicable { .. }));
    /// # Ok::<(), pacgp::spec::SpecError>(())
    /// ```
    pub fn check(&self, method: MethodName) -> Result<CheckedFitSpec, SpecError> {
        let mut unused = Unused::of(method, self);
        let spec = FitSpec {
            method: self.multiclass_method(method, &mut unused)?,
            delta: self.delta.unwrap_or(DEFAULT_DELTA),
            seed: self.seed.unwrap_or(0),
            intervals: self.intervals(method, &mut unused)?,
            certify_holdout: self.certify_holdout,
        };
        unused.refuse()?;
        spec.check()
    }

    /// The intervals of a regressor (the score defaults to absolute residuals) or the sets of
    /// a classifier (the score defaults to LAC); a score without an interval method is
    /// refused.
    fn intervals(
        &self,
        method: MethodName,
        u: &mut Unused,
    ) -> Result<Option<IntervalSpec>, SpecError> {
        u.used(SpecOption::Intervals);
        let default_score = if method.is_classifier() {
            IntervalScore::Lac
        } else {
            IntervalScore::Absolute
        };
        match (self.intervals, self.interval_score) {
            (Some(iv), score) => {
                u.used(SpecOption::IntervalScore);
                Ok(Some(IntervalSpec {
                    method: iv,
                    score: score.unwrap_or(default_score),
                }))
            }
            (None, Some(_)) => Err(SpecError::not_for(
                SpecOption::IntervalScore,
                method,
                "fits with intervals (give intervals too)",
            )),
            (None, None) => Ok(None),
        }
    }

    /// The typed method, wrapped as one-vs-rest or replaced by the softmax Laplace when
    /// `multiclass` says so.
    fn multiclass_method(&self, method: MethodName, u: &mut Unused) -> Result<Method, SpecError> {
        use SpecOption as O;
        let Some(mc) = self.multiclass else {
            return self.method(method, u);
        };
        if !method.is_classifier() {
            return self.method(method, u); // `multiclass` is refused as unused
        }
        u.used(O::MultiClass);
        if self.prior.is_some() {
            return Err(split_not_multiclass(method));
        }
        match (mc, method) {
            (MultiClass::OneVsRest, _) => Ok(Method::OneVsRest(Box::new(self.method(method, u)?))),
            (MultiClass::Softmax, MethodName::Laplace) => {
                Ok(Method::Softmax(SoftmaxSpec::from_options(self, method, u)?))
            }
            (MultiClass::Softmax, _) => Err(SpecError::not_for(
                O::MultiClass,
                method,
                "laplace as softmax (every classifier as one-vs-rest)",
            )),
        }
    }

    /// How a classifier's θ is chosen: as `select` says; without it, by ML-II from a kernel
    /// given (as scikit-learn's classifier does with its `kernel`), else by the bound's menu.
    pub(in crate::spec) fn selection(&self) -> Selection {
        match (self.select, &self.kernel) {
            (Some(select), _) => select,
            (None, Some(_)) => Selection::Ml2,
            (None, None) => Selection::Bound,
        }
    }

    /// The sparse methods' optimiser schedule as given.
    pub(in crate::spec) fn schedule(&self) -> OptimSchedule {
        OptimSchedule {
            pretrain: self.pretrain,
            max_iter: self.max_iter,
        }
    }

    pub(in crate::spec) fn kernel_or_default(&self, unused: &mut Unused) -> String {
        unused.used(SpecOption::Kernel);
        self.kernel
            .clone()
            .unwrap_or_else(|| default_kernel(self.input_groups.as_deref()))
    }
}

#[cfg(test)]
mod tests;
