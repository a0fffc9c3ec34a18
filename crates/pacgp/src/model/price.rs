//! What a fit chose from the data and its union-bound price, re-derived from the model's spec
//! and checked against the stored model — never read from the file. A model whose stored
//! parts are not what its spec allows (θ off the spec's grid, a kernel outside the spec's
//! menu, a split record whose menus differ from the spec's, a likelihood other than the
//! spec's) is refused with [`Error::ModelMismatch`] naming the part.

use crate::bounds::HyperGrid;
use crate::certificate::PenaltyTerm;
use crate::error::{Error, Result};
use crate::kernel::Kernel;
use crate::likelihood::Likelihood;
use crate::objective::gp_split::SplitFraction;
use crate::plan::{
    classifier_menu, hyper_prior, svm_candidates, svm_choices, svm_menu, svm_prior_kernel,
};
use crate::spec::{ClassifierHypers, Method, PacPrior, SplitClassifierSpec, SvmSpec};
use crate::svm::certificate::mu_menu;

use super::split_classifier::ClassifierSplitRecord;
use super::{FittedModel, RegressionSplit, Task};

/// A refusal naming the part of the model file that its spec does not allow.
fn mismatch(part: impl Into<String>, reason: impl Into<String>) -> Error {
    Error::ModelMismatch {
        part: part.into(),
        reason: reason.into(),
    }
}

/// Every component of `kernel`'s θ must be on `grid` exactly (the fit rounds θ there).
pub fn check_on_grid(kernel: &Kernel, grid: &HyperGrid) -> Result<()> {
    let theta = kernel.params();
    let rounded = grid.round(&theta);
    for ((t, r), name) in theta.iter().zip(&rounded).zip(kernel.param_names()) {
        if t.to_bits() != r.to_bits() {
            return Err(mismatch(
                format!("kernel hyperparameter {name}"),
                format!(
                    "{t} (ln space) is not on the spec's grid ln θ ∈ [{}, {}] in steps of 10^-{}",
                    grid.min_log, grid.max_log, grid.digits
                ),
            ));
        }
    }
    Ok(())
}

/// The stored kernel must have the structure of the spec's kernel (the same base kernels,
/// profiles and combination; θ is checked against the prior's grid or menu separately).
pub fn check_structure(kernel: &Kernel, spec: &str, d: usize) -> Result<()> {
    let mut k = Kernel::from_spec(spec, d)?;
    if k.set_params(&kernel.params()).is_err() || k != *kernel {
        return Err(mismatch(
            "kernel",
            format!(
                "{} is not a kernel of the spec's structure '{spec}'",
                kernel.describe()
            ),
        ));
    }
    Ok(())
}

/// A kernel kept as given (`kernel_params`) was chosen without the data and prices nothing;
/// the stored kernel must be the spec's at exactly those values.
fn check_kept(kernel: &Kernel, spec: &str, theta: &[f64], d: usize) -> Result<Vec<PenaltyTerm>> {
    let mut given = Kernel::from_spec(spec, d)?;
    given.set_params(theta)?;
    if given != *kernel {
        return Err(mismatch(
            "kernel",
            format!(
                "{} is not the kernel the spec keeps as given ({})",
                kernel.describe(),
                given.describe()
            ),
        ));
    }
    Ok(Vec::new())
}

impl FittedModel {
    /// What the fit chose from the data and its price, re-derived from the spec: the grid's
    /// `T·ln L` for θ on the spec's grid, `−ln π(θ)` of a coarse prior, `ln k` of a menu the
    /// spec names, the split prior's menus; every stored choice is checked against the spec.
    pub fn choices(&self) -> Result<Vec<PenaltyTerm>> {
        if self.classes().is_some() {
            return self.multiclass_choices();
        }
        self.check_task_against_spec()?;
        let kernel = self.posterior()?.kernel();
        if let Method::Gpr(s) = &self.spec.method {
            if let Some(theta) = &s.kernel_params {
                return check_kept(kernel, &s.kernel, theta, self.feature_names.len());
            }
            if !s.snap {
                return Err(Error::Unsupported(
                    "this model's hyperparameters were left where ML-II put them (snapping off), not on the PAC grid, so no bound holds for it; refit with snapping".into(),
                ));
            }
        }
        if let Some(spec_kernel) = self.spec.prior_kernel_spec() {
            check_structure(kernel, spec_kernel, self.feature_names.len())?;
        }
        if let Some(grid) = self.spec.grid() {
            check_on_grid(kernel, &grid)?;
            return Ok(vec![PenaltyTerm::grid(&grid, kernel.n_params())]);
        }
        let d = self.feature_names.len();
        match &self.spec.method {
            Method::PacGp(s) => self.pac_prior_choices(s.prior, kernel),
            Method::PacSgp(s) => self.pac_prior_choices(s.prior, kernel),
            Method::Classifier(c) => self.classifier_choices(&c.hypers, kernel, d),
            Method::PacGpc(c) => self.classifier_choices(&c.hypers, kernel, d),
            Method::Svm(s) => self.svm_choices(s, kernel, d),
            Method::Svgp(s) => match s.split {
                Some(fraction) => self.svgp_split_choices(fraction),
                None => Ok(Vec::new()), // priced by the spec's grid above
            },
            // Their grids were handled above; the multi-class models before.
            Method::Gpr(_)
            | Method::Sparse(_)
            | Method::GreedySparse(_)
            | Method::OneVsRest(_)
            | Method::Softmax(_) => Ok(Vec::new()),
        }
    }

    /// A coarse prior's `−ln π(θ)` (θ on its grid) or the regression split records' menus.
    fn pac_prior_choices(&self, prior: PacPrior, kernel: &Kernel) -> Result<Vec<PenaltyTerm>> {
        let n = self.n_train;
        match (prior, &self.task) {
            (PacPrior::Grid, _) => Ok(Vec::new()), // priced by the spec's grid above
            (PacPrior::Coarse(name), _) => {
                let term = hyper_prior(name)
                    .penalty_term(kernel)
                    .map_err(|e| mismatch("kernel hyperparameters", e.to_string()))?;
                Ok(vec![term])
            }
            (
                PacPrior::Split(f),
                Task::Regression {
                    split_prior: Some(RegressionSplit::Dense(r)),
                    ..
                },
            ) => {
                self.check_split(f, (r.fraction, r.menu, r.seed), 1)?;
                self.check_term(r.term)?;
                Ok(r.choices(&f.menu()?, crate::data::part_a_size(n, r.fraction), n))
            }
            (
                PacPrior::Split(f),
                Task::Regression {
                    split_prior: Some(RegressionSplit::Sparse(r)),
                    ..
                },
            ) => {
                self.check_split(f, (r.fraction, r.menu, r.seed), 1)?;
                self.check_term(r.term)?;
                Ok(r.choices(&f.menu()?, crate::data::part_a_size(n, r.fraction), n))
            }
            _ => Err(mismatch(
                "split prior record",
                "the spec's prior and the model's split record disagree (one without the other, or the wrong kind)",
            )),
        }
    }

    /// The split record's fraction, menu size and seed must be the spec's (`directions`: how
    /// many split directions the spec lets the fit choose between).
    fn check_split(
        &self,
        f: SplitFraction,
        (fraction, menu, seed): (f64, usize, u64),
        directions: usize,
    ) -> Result<()> {
        let allowed = f.candidates()?;
        if !allowed.contains(&fraction) {
            return Err(mismatch(
                "split prior record's fraction",
                format!("{fraction} is not among the spec's {allowed:?}"),
            ));
        }
        if menu != allowed.len() * directions {
            return Err(mismatch(
                "split prior record's menu",
                format!(
                    "{menu} candidates where the spec has {} fractions × {directions} directions",
                    allowed.len()
                ),
            ));
        }
        if seed != self.spec.seed {
            return Err(mismatch(
                "split prior record's seed",
                format!("{seed} where the spec's seed is {}", self.spec.seed),
            ));
        }
        Ok(())
    }

    /// The classifier split record the spec's split prior calls for.
    fn classifier_split_record(&self) -> Result<&ClassifierSplitRecord> {
        match &self.task {
            Task::Classification {
                split_prior: Some(r),
                ..
            } => Ok(r),
            _ => Err(mismatch(
                "split prior record",
                "the spec names a split prior and the model has no split record",
            )),
        }
    }

    /// pac-svgp's split record against the spec: its fraction among the spec's, its menu, its
    /// seed, one direction, no scales, the spec's confidence term; price `ln menu`.
    fn svgp_split_choices(&self, fraction: SplitFraction) -> Result<Vec<PenaltyTerm>> {
        let r = self.classifier_split_record()?;
        self.check_split(fraction, (r.fraction, r.menu, r.seed), 1)?;
        let neutral =
            !r.swapped && r.prior_scale == 1.0 && r.mean_scale == 1.0 && r.lambda.is_none();
        if !neutral {
            return Err(mismatch(
                "split prior record",
                "pac-svgp's split prior has one direction, no scales and no Catoni λ",
            ));
        }
        self.check_term(r.term)?;
        Ok(vec![fraction.menu()?.price()])
    }

    /// A record's confidence constant must be the spec's.
    fn check_term(&self, term: crate::bounds::ConfidenceTerm) -> Result<()> {
        if term != self.spec.confidence_term() {
            return Err(mismatch(
                "split prior record's confidence term",
                format!(
                    "{term:?} where the spec has {:?}",
                    self.spec.confidence_term()
                ),
            ));
        }
        Ok(())
    }

    /// The candidate menu's `ln 9` (θ one of its kernels) or the classifier split record's.
    fn classifier_choices(
        &self,
        hypers: &ClassifierHypers,
        kernel: &Kernel,
        d: usize,
    ) -> Result<Vec<PenaltyTerm>> {
        match hypers {
            ClassifierHypers::Candidates => {
                let menu = classifier_menu(d);
                if !menu.items.contains(kernel) {
                    return Err(mismatch(
                        "kernel",
                        format!(
                            "{} is not one of the spec's {} candidate kernels",
                            kernel.describe(),
                            menu.len()
                        ),
                    ));
                }
                Ok(vec![menu.price()])
            }
            ClassifierHypers::Split(split) => self.classifier_split_choices(split),
            // Priced by the spec's grid before this is asked.
            ClassifierHypers::Grid { .. } => Ok(Vec::new()),
        }
    }

    /// The classifier split record against the spec: its fraction among the spec's, its menu
    /// `fractions × directions`, its seed, a swap only with both directions, Catoni's λ only
    /// with Catoni's bound, its prior scale in the spec's menu; price `ln menu`.
    fn classifier_split_choices(&self, split: &SplitClassifierSpec) -> Result<Vec<PenaltyTerm>> {
        let r = self.classifier_split_record()?;
        let menu = crate::objective::gpc_split::split_menu(split.fraction, split.both_directions);
        let directions = if split.both_directions { 2 } else { 1 };
        self.check_split(split.fraction, (r.fraction, r.menu, r.seed), directions)?;
        if !menu.items.contains(&(r.fraction, r.swapped)) || r.menu != menu.len() {
            return Err(mismatch(
                "split prior record's menu",
                format!(
                    "fraction {} {} is not one of the spec's {} choices",
                    r.fraction,
                    if r.swapped {
                        "swapped"
                    } else {
                        "in the plain direction"
                    },
                    menu.len()
                ),
            ));
        }
        if r.swapped && !split.both_directions {
            return Err(mismatch(
                "split prior record's direction",
                "the parts are swapped but the spec does not allow both directions",
            ));
        }
        let term = match r.lambda {
            Some(lambda) => crate::bounds::ConfidenceTerm::Catoni { lambda },
            None => crate::bounds::ConfidenceTerm::Maurer,
        };
        if r.lambda.is_some() != split.catoni || r.term != term {
            return Err(mismatch(
                "split prior record's Catoni λ",
                "a λ without Catoni's bound in the spec, Catoni's bound without a λ, or a confidence term other than the λ's",
            ));
        }
        let scales = match split.prior_scale {
            crate::spec::PriorScale::Fixed(t) => vec![t],
            crate::spec::PriorScale::Auto => crate::objective::gpc_split::PRIOR_SCALES.to_vec(),
        };
        if !scales.contains(&r.prior_scale) || r.mean_scale != 1.0 {
            return Err(mismatch(
                "split prior record's scales",
                format!(
                    "covariance scale {} (the spec allows {scales:?}) and mean scale {} (the spec allows 1)",
                    r.prior_scale, r.mean_scale
                ),
            ));
        }
        let mut choices = vec![menu.price()];
        choices.push(PenaltyTerm {
            what: format!(
                "prior: posterior of part A ({} of {} points, fraction {}{}, seed {}), θ by ML-II on A; bound on part B",
                r.n_a,
                self.n_train,
                r.fraction,
                if r.swapped { ", parts swapped" } else { "" },
                r.seed
            ),
            nats: 0.0,
        });
        Ok(choices)
    }

    /// The SVM's kernel among the spec's candidates (on `k + 1`), its slack among the spec's
    /// and μ on the certificate's grid; price `ln |kernels × slacks| + ln |μ grid|`.
    fn svm_choices(&self, s: &SvmSpec, kernel: &Kernel, d: usize) -> Result<Vec<PenaltyTerm>> {
        if s.bias {
            return Err(Error::Unsupported(
                "an SVM with a bias fitted from the data has no certificate (the prior would depend on the data): refit without the free bias, which puts the bias into the prior kernel as a constant term".into(),
            ));
        }
        let Task::Svm {
            mu, config, bias, ..
        } = &self.task
        else {
            return Err(mismatch("task", "an svm spec with a non-SVM task"));
        };
        let (kernels, slacks) = svm_candidates(s, d)?;
        if !kernels.iter().any(|k| svm_prior_kernel(k) == *kernel) {
            return Err(mismatch(
                "kernel",
                format!(
                    "{} is not k + 1 for one of the spec's kernels",
                    kernel.describe()
                ),
            ));
        }
        if !slacks.contains(&config.slack)
            || config.solver != s.solver
            || config.bias
            || *bias != 0.0
        {
            return Err(mismatch(
                "SVM settings",
                "the slack, solver or bias differ from the spec's",
            ));
        }
        if !mu_menu().items.contains(mu) {
            return Err(mismatch(
                "SVM scale μ",
                format!("{mu} is not on the certificate's μ grid"),
            ));
        }
        Ok(svm_choices(&svm_menu(s, d)?))
    }

    /// The task's fixed parts must be the spec's: a classifier's likelihood and input noise.
    fn check_task_against_spec(&self) -> Result<()> {
        let want: Option<(Likelihood, f64)> = match &self.spec.method {
            Method::Classifier(c) => {
                let (method, lik) = c.inference.settings().method(0)?;
                Some((lik, method.input_noise()))
            }
            Method::PacGpc(c) => Some((Likelihood::named(c.likelihood), 0.0)),
            _ => None,
        };
        match (&self.task, want) {
            (
                Task::Classification {
                    likelihood,
                    input_noise,
                    ..
                },
                Some((l, v)),
            ) if *likelihood != l || *input_noise != v => Err(mismatch(
                "likelihood",
                format!(
                    "{} with input noise {input_noise} where the spec has {} with {v}",
                    likelihood.name(),
                    l.name()
                ),
            )),
            _ => Ok(()),
        }
    }
}
