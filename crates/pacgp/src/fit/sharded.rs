//! A fit over data shards (Python's `pacgp.distributed.fit_sharded`): which checked specs can be
//! fitted that way (vfe, pac-sgp and pac-sgp-sqrt without a split prior; svgp and pac-svgp
//! with k-means inducing inputs), where the search starts and how it runs. The start,
//! boxes, grid snap and iteration budgets are those of the in-process fit of the same spec
//! ([`Search`]: [`SparseConfig::search`], [`pac_sgp_search`], the sparse variational
//! classifier's); the objective is the sum of its shards' parts
//! ([`crate::regression::sharded`], [`crate::objective::pac_sgp_sharded`],
//! [`SvgpAssembly`]), evaluated wherever the shards are, and the minimisation is the one
//! driver's ([`crate::optim::drive_warm`]).

use faer::MatRef;

use crate::data::standardised_length;
use crate::error::{Error, Result};
use crate::kernel::{start, Kernel};
use crate::loss::RegressionLoss;
use crate::objective::pac_sgp::{pac_sgp_search, PacSgpBound, DEFAULT_MAX_ITER};
use crate::optim::{AdamConfig, Minimum, Objective, OptimReport, Pretraining, Search, WarmStart};
use crate::regression::inducing_init::InducingInit;
use crate::regression::sparse::{NegSparseObjective, SparseConfig, SparseMethod};
use crate::spec::{CheckedFitSpec, Method, PacPrior, SpecError, SpecOption, DEFAULT_BASIS};
use crate::svgp::fit::{minimise_on_batches, AdamSteps, BatchGradient};
use crate::svgp::{SvgpAssembly, SvgpLayout, SvgpObjective, SvgpSettings, WhitenedQ};

use super::regression::levers;
use super::svgp::svgp_settings;

/// The bound of `spec` (pac-sgp or pac-sgp-sqrt without a split prior) with ε divided by the
/// targets' standard deviation `y_sd`.
pub fn pac_sgp_bound(spec: &CheckedFitSpec, y_sd: f64) -> Result<PacSgpBound> {
    ShardedFit::check(spec)?;
    let Method::PacSgp(s) = &spec.method else {
        return Err(not_sharded(spec).into());
    };
    Ok(PacSgpBound {
        loss: RegressionLoss::new_epsilon_band(standardised_length(s.epsilon, y_sd))?,
        delta: spec.delta,
        kind: s.bound,
        levers: levers(spec, s.prior),
    })
}

/// What a sharded fit trains: a sparse regressor on `[θ…, ln σ², vec(Z)]`, or the sparse
/// variational classifier on `[θ…, vec(Z), m, vech(L_q)]`.
#[derive(Clone, Debug)]
pub enum ShardedFamily {
    /// VFE (`bound` None: the negative of Titsias' bound) or PAC-SGP (its bound, FITC
    /// posterior, α_s = 1).
    Regression {
        /// Where σ² starts (standardised targets): the spec's for VFE, 1 for PAC-SGP (the
        /// paper's).
        noise_init: f64,
        /// The sparse PAC-GP bound minimised; `None`: VFE.
        bound: Option<PacSgpBound>,
        /// How the parameters are searched.
        search: Search,
    },
    /// svgp / pac-svgp on ±1 labels over N rows, trained on all rows by L-BFGS or on
    /// minibatches by Adam.
    Classifier {
        /// The objective's assembly from the shards' sums.
        assembly: SvgpAssembly,
        /// The in-process fit's settings of the spec (criterion, δ, budget, seed).
        settings: SvgpSettings,
    },
}

/// A sharded fit of a checked spec: the kernel at its initial values, M, and what is
/// minimised how.
#[derive(Clone, Debug)]
pub struct ShardedFit {
    /// The kernel with its initial values, on `d` inputs.
    pub kernel: Kernel,
    /// Number of inducing inputs M.
    pub m: usize,
    /// The model trained and its objective.
    pub family: ShardedFamily,
}

impl ShardedFit {
    /// Whether `spec` can be fitted over shards; if not, the option that makes it so.
    pub fn check(spec: &CheckedFitSpec) -> std::result::Result<(), SpecError> {
        match &spec.method {
            Method::Sparse(s) if s.approximation == SparseMethod::Vfe => Ok(()),
            Method::PacSgp(s) if matches!(s.prior, PacPrior::Split(_)) => {
                Err(split_prior_refused(spec))
            }
            Method::PacSgp(_) => Ok(()),
            Method::Svgp(s) if s.inducing_init != InducingInit::KMeans => Err(SpecError::not_for(
                SpecOption::InducingInit,
                spec.method_name(),
                "in-process fits (a sharded fit places Z by k-means, or takes z_init)",
            )),
            Method::Svgp(_) => Ok(()),
            _ => Err(not_sharded(spec)),
        }
    }

    /// The sharded fit of `spec` on `n` rows of `d` inputs whose targets have standard
    /// deviation `y_sd` (regression; a classifier's ±1 labels ignore it); a spec that cannot
    /// be fitted over shards is refused by the option that makes it so.
    pub fn of(spec: &CheckedFitSpec, n: usize, d: usize, y_sd: f64) -> Result<Self> {
        Self::check(spec)?;
        match &spec.method {
            Method::Sparse(s) if s.approximation == SparseMethod::Vfe => {
                let kernel = Kernel::from_spec(&s.kernel, d)?;
                let m = s.inducing.unwrap_or(DEFAULT_BASIS);
                let mut cfg = SparseConfig {
                    snap: spec.grid(),
                    ..Default::default()
                };
                if let Some(cap) = s.schedule.max_iter {
                    cfg.lbfgs.max_iter = cap;
                }
                cfg.lbfgs.stall = start::wide_stall(d);
                let search = cfg.search(kernel.n_params(), m, d);
                Ok(Self {
                    kernel,
                    m,
                    family: ShardedFamily::Regression {
                        noise_init: s.noise_init,
                        bound: None,
                        search,
                    },
                })
            }
            Method::PacSgp(s) => {
                let bound = pac_sgp_bound(spec, y_sd)?;
                let kernel = Kernel::from_spec(&s.kernel, d)?;
                let m = s.inducing.unwrap_or(DEFAULT_BASIS);
                let max_iter = s.schedule.max_iter.unwrap_or(DEFAULT_MAX_ITER);
                let search = pac_sgp_search(&bound.levers, kernel.n_params(), m, d, max_iter);
                Ok(Self {
                    kernel,
                    m,
                    family: ShardedFamily::Regression {
                        noise_init: 1.0,
                        bound: Some(bound),
                        search,
                    },
                })
            }
            Method::Svgp(_) => {
                // The sample's defaults (M at most N, a minibatch above N·M² = 3·10⁸), as in
                // process.
                let (resolved, _) = spec.for_sample(n)?;
                let Method::Svgp(s) = &resolved.method else {
                    return Err(not_sharded(spec).into());
                };
                let kernel = Kernel::from_spec(&s.kernel, d)?;
                let settings = svgp_settings(&resolved, s, n);
                let criterion = settings.objective_criterion(kernel.n_params())?;
                let assembly = SvgpAssembly::new(&kernel, settings.m, d, criterion, n)?;
                Ok(Self {
                    kernel,
                    m: settings.m,
                    family: ShardedFamily::Classifier { assembly, settings },
                })
            }
            _ => Err(not_sharded(spec).into()),
        }
    }

    /// The starting point with inducing inputs `z0` (M × d): `[ln θ…, ln σ², vec(Z)]`, or
    /// `[ln θ…, vec(Z), m, vech(L_q)]` with q(v) at the prior.
    pub fn start(&self, z0: MatRef<'_, f64>) -> Vec<f64> {
        match &self.family {
            ShardedFamily::Regression { noise_init, .. } => {
                NegSparseObjective::pack(&self.kernel, *noise_init, z0)
            }
            ShardedFamily::Classifier { assembly, .. } => {
                assembly
                    .layout()
                    .pack(&self.kernel, z0, &WhitenedQ::prior(self.m))
            }
        }
    }

    /// What a start at lengthscale 1 does on wide inputs to the objective of this plan's
    /// method, where its in-process fit takes the wide start ([`start`]): VFE's and the sparse
    /// variational classifier's; `None` for PAC-SGP, whose in-process fit starts at 1.
    fn wide_start_flat(&self) -> Option<&'static str> {
        match &self.family {
            ShardedFamily::Regression { bound: None, .. } => Some("leaves the evidence flat"),
            ShardedFamily::Regression { bound: Some(_), .. } => None,
            ShardedFamily::Classifier { .. } => Some("leaves q(u) at the prior"),
        }
    }

    /// The rows (indices into the `n` rows, shards in order) whose standardised inputs
    /// [`Self::start_wide`] needs: [`start::median_rows`] with the spec's `seed` on more than
    /// [`start::WIDE_INPUTS`] of the `d` inputs, where the in-process fit takes the wide start;
    /// none otherwise (nothing to gather).
    pub fn wide_start_rows(&self, n: usize, d: usize, seed: u64) -> Vec<usize> {
        let wide = d > start::WIDE_INPUTS && self.kernel.has_stationary();
        match wide && self.wide_start_flat().is_some() {
            true => start::median_rows(n, seed),
            false => Vec::new(),
        }
    }

    /// Start the kernel where the in-process fit of the spec starts it on the same `n` rows:
    /// `rows` are the standardised inputs of [`Self::wide_start_rows`], in its order, gathered
    /// from the shards, and [`start::wide_start_noted`] takes the median distance over them,
    /// the pairs the in-process fit takes it over. Returns the fit's note where the start
    /// moved. Rows of another count or width are refused.
    pub fn start_wide(
        &mut self,
        n: usize,
        rows: MatRef<'_, f64>,
        seed: u64,
    ) -> Result<Option<String>> {
        let Some(flat) = self.wide_start_flat() else {
            return Ok(None);
        };
        let expected = n.min(start::MEDIAN_ROWS);
        if rows.nrows() != expected {
            return Err(Error::ShapeMismatch {
                what: "the rows of the wide start",
                expected: format!("{expected} rows (the seeded subsample of the {n})"),
                found: format!("{} rows", rows.nrows()),
            });
        }
        self.kernel.check_input_dim(rows.ncols())?;
        let (kernel, note) = start::wide_start_noted(self.kernel.clone(), rows, seed, flat);
        self.kernel = kernel;
        Ok(note)
    }

    /// The sparse variational classifier's parameter layout, if that is what is trained.
    pub fn svgp_layout(&self) -> Option<SvgpLayout> {
        match &self.family {
            ShardedFamily::Classifier { assembly, .. } => Some(assembly.layout()),
            ShardedFamily::Regression { .. } => None,
        }
    }

    /// The objective on rows held in this process: a warm start's subsample.
    pub fn in_process<'a>(
        &self,
        x: MatRef<'a, f64>,
        y: &'a [f64],
    ) -> Result<Box<dyn Objective + 'a>> {
        Ok(match &self.family {
            ShardedFamily::Regression { bound: None, .. } => Box::new(NegSparseObjective::new(
                &self.kernel,
                SparseMethod::Vfe,
                x,
                y,
                self.m,
            )),
            ShardedFamily::Regression {
                bound: Some(bound), ..
            } => Box::new(bound.in_process(&self.kernel, x, y, self.m, self.alpha_s())?),
            ShardedFamily::Classifier { assembly, .. } => Box::new(SvgpObjective::new(
                &self.kernel,
                x,
                y,
                self.m,
                assembly.criterion().clone(),
            )?),
        })
    }

    /// The regression posterior's `α_s`: 0 for VFE, 1 for PAC-SGP's FITC form (0 for a
    /// classifier, which has none).
    pub fn alpha_s(&self) -> f64 {
        match &self.family {
            ShardedFamily::Regression { bound: Some(_), .. } => 1.0,
            _ => 0.0,
        }
    }

    /// The search from `p0`: the regression plan's, or the classifier's boxes (θ inside the
    /// grid's range) around the start's θ and `z0`.
    fn search(&self, z0: MatRef<'_, f64>) -> Search {
        match &self.family {
            ShardedFamily::Regression { search, .. } => search.clone(),
            ShardedFamily::Classifier { assembly, settings } => settings.search(
                assembly.layout(),
                assembly.n_total(),
                &self.kernel.params(),
                z0,
            ),
        }
    }

    /// Minimise `obj` (the sharded objective) from the start at `z0`, after a warm start on
    /// `warm`'s rows if given, and snap θ as the in-process fit does.
    pub fn minimise(
        &self,
        obj: &dyn Objective,
        warm: Option<&WarmStart>,
        z0: MatRef<'_, f64>,
    ) -> Result<(Minimum, Option<Pretraining>)> {
        self.search(z0).minimise(obj, warm, &self.start(z0))
    }

    /// The classifier's minibatch run, if its spec trains on minibatches (given, or the
    /// default above N·M² = 3·10⁸): N, B, Adam's schedule and the seed of the in-process fit.
    pub fn minibatch(&self) -> Option<AdamSteps> {
        let ShardedFamily::Classifier { assembly, settings } = &self.family else {
            return None;
        };
        settings.batch.map(|batch| AdamSteps {
            n: assembly.n_total(),
            batch,
            adam: AdamConfig {
                steps: settings.max_iter,
                ..Default::default()
            },
            seed: settings.seed,
        })
    }

    /// Minimise by the in-process fit's Adam run on seeded minibatches from the start at
    /// `z0`: `gradient` evaluates the minibatch objective on the drawn rows (indices into
    /// all N rows, shards in order) wherever they are, `full_value` the objective on all rows
    /// at the end. An error if the spec does not train on minibatches.
    pub fn minimise_on_batches(
        &self,
        gradient: &mut BatchGradient<'_>,
        full_value: &dyn Fn(&[f64]) -> Result<f64>,
        z0: MatRef<'_, f64>,
    ) -> Result<(Vec<f64>, OptimReport)> {
        let Some(steps) = self.minibatch() else {
            return Err(crate::error::Error::Unsupported(
                "this sharded fit trains on all rows at once, not on minibatches".into(),
            ));
        };
        let start = self.start(z0);
        minimise_on_batches(&start, &self.search(z0), &steps, gradient, full_value)
    }
}

/// The refusal of a method a sharded fit does not have.
fn not_sharded(spec: &CheckedFitSpec) -> SpecError {
    SpecError::not_for(
        SpecOption::Method,
        spec.method_name(),
        "sharded fits as vfe, pac-sgp, pac-sgp-sqrt, svgp and pac-svgp",
    )
}

/// The refusal of a split prior, whose fits on parts A and B are in process.
fn split_prior_refused(spec: &CheckedFitSpec) -> SpecError {
    SpecError::not_for(
        SpecOption::Prior,
        spec.method_name(),
        "in-process fits (a sharded fit has no split prior)",
    )
}

#[cfg(test)]
mod tests {
    use faer::Mat;

    use super::*;
    use crate::bounds::BoundKind;
    use crate::objective::gp_split::SplitFraction;
    use crate::objective::pac_sgp::{fit_pac_sgp_with, PacSgpSettings};
    use crate::prior::BoundLevers;
    use crate::regression::inducing_init::{initial_inducing_with_targets, InducingInit};
    use crate::regression::sparse::train_sparse;
    use crate::spec::{FitOptions, MethodName};

    const M: usize = 5;

    fn sample() -> (Mat<f64>, Vec<f64>) {
        let x = Mat::from_fn(60, 2, |i, j| ((i * (j + 3)) % 17) as f64 / 8.0 - 1.0);
        let y = (0..60)
            .map(|i| (x[(i, 0)] * 2.0).sin() + 0.5 * x[(i, 1)] + 0.1 * ((i % 7) as f64 - 3.0))
            .collect();
        (x, y)
    }

    /// The plan's search on rows in one process, from the in-process start.
    fn minimised(spec: &CheckedFitSpec, x: MatRef<'_, f64>, y: &[f64]) -> Vec<f64> {
        let plan = ShardedFit::of(spec, x.nrows(), x.ncols(), 1.0).unwrap();
        let noise = match &plan.family {
            ShardedFamily::Regression { noise_init, .. } => *noise_init,
            ShardedFamily::Classifier { .. } => 1.0,
        };
        let z0 = initial_inducing_with_targets(
            &plan.kernel,
            noise,
            x,
            y,
            plan.m,
            InducingInit::KMeans,
            spec.seed,
        )
        .unwrap();
        let obj = plan.in_process(x, y).unwrap();
        let (min, _) = plan.minimise(obj.as_ref(), None, z0.as_ref()).unwrap();
        min.params
    }

    /// The plan's parameters equal the in-process fit's (σ² went through exp and ln).
    fn assert_same(plan: &[f64], kernel: &Kernel, noise: f64, z: &Mat<f64>) {
        let fit = NegSparseObjective::pack(kernel, noise, z.as_ref());
        assert_eq!(plan.len(), fit.len());
        for (k, (a, b)) in plan.iter().zip(&fit).enumerate() {
            assert!((a - b).abs() <= 1e-14 * b.abs().max(1.0), "{k}: {a} vs {b}");
        }
    }

    #[test]
    fn the_pac_sgp_plan_searches_as_the_in_process_fit() {
        let (x, y) = sample();
        let spec = FitOptions {
            epsilon: Some(0.5),
            inducing: Some(M),
            max_iter: Some(15),
            ..Default::default()
        }
        .check(MethodName::PacSgp)
        .unwrap();
        let kernel = Kernel::from_spec("se-ard", 2).unwrap();
        let settings = PacSgpSettings {
            m: M,
            alpha_s: 1.0,
            loss: RegressionLoss::new_epsilon_band(0.5).unwrap(),
            delta: spec.delta,
            kind: BoundKind::Kl,
            seed: spec.seed,
            init: InducingInit::KMeans,
            max_iter: 15,
            pretrain: None,
        };
        let fit = fit_pac_sgp_with(
            &kernel,
            1.0,
            x.as_ref(),
            &y,
            &settings,
            &BoundLevers::default(),
        )
        .unwrap();
        let (gp, plan) = (&fit.gp, minimised(&spec, x.as_ref(), &y));
        assert_same(&plan, &gp.kernel, gp.noise_variance, &gp.z);
    }

    #[test]
    fn the_vfe_plan_searches_as_the_in_process_fit() {
        let (x, y) = sample();
        let spec = FitOptions {
            inducing: Some(M),
            ..Default::default()
        }
        .check(MethodName::Vfe)
        .unwrap();
        let Method::Sparse(s) = &spec.method else {
            panic!("not a sparse spec")
        };
        let kernel = Kernel::from_spec(&s.kernel, 2).unwrap();
        let cfg = SparseConfig {
            snap: spec.grid(),
            seed: spec.seed,
            ..Default::default()
        };
        let (gp, _, _) = train_sparse(
            &kernel,
            s.noise_init,
            x.as_ref(),
            &y,
            M,
            SparseMethod::Vfe,
            &cfg,
        )
        .unwrap();
        let plan = minimised(&spec, x.as_ref(), &y);
        assert_same(&plan, &gp.kernel, gp.noise_variance, &gp.z);
    }

    #[test]
    fn the_svgp_plans_search_as_the_in_process_fit() {
        let (x, t) = sample();
        let y: Vec<f64> = t
            .iter()
            .map(|v| if *v > 0.3 { 1.0 } else { -1.0 })
            .collect();
        for method in [MethodName::Svgp, MethodName::PacSvgp] {
            let spec = FitOptions {
                inducing: Some(M),
                max_iter: Some(12),
                ..Default::default()
            }
            .check(method)
            .unwrap();
            let Method::Svgp(s) = &spec.method else {
                panic!("not an svgp spec")
            };
            let kernel = Kernel::from_spec(&s.kernel, 2).unwrap();
            let st = svgp_settings(&spec, s, y.len());
            let fit = crate::svgp::fit_svgp(&kernel, x.as_ref(), &y, &st).unwrap();
            let plan = minimised(&spec, x.as_ref(), &y);
            let layout = ShardedFit::of(&spec, y.len(), 2, 1.0)
                .unwrap()
                .svgp_layout()
                .unwrap();
            let (k, z, q) = layout.unpack(&kernel, &plan).unwrap();
            let q = q.with_positive_diagonal();
            let ours = layout.pack(&k, z.as_ref(), &q);
            let theirs = layout.pack(&fit.kernel, fit.z.as_ref(), &fit.q);
            for (k, (a, b)) in ours.iter().zip(&theirs).enumerate() {
                assert!((a - b).abs() <= 1e-14 * b.abs().max(1.0), "{k}: {a} vs {b}");
            }
        }
    }

    /// On more than `WIDE_INPUTS` inputs a vfe or svgp plan names the rows the in-process fit
    /// takes the median distance over (the seeded subsample, with more than `MEDIAN_ROWS`
    /// rows), starts its kernel from them, gathered, exactly where the in-process fit starts
    /// on all rows, with its note, and vfe's search stops by the stall rule; rows of another
    /// count are refused. pac-sgp (whose in-process fit starts at 1) and 20 inputs name no
    /// rows and keep the start.
    #[test]
    fn a_wide_plan_starts_from_the_gathered_rows_as_the_in_process_fit() {
        let (n, d) = (start::MEDIAN_ROWS + 50, start::WIDE_INPUTS + 3);
        let x = Mat::from_fn(n, d, |i, j| {
            ((i * 7919 + j * 104_729) % 1013) as f64 / 101.3 - 5.0
        });
        let options = FitOptions {
            inducing: Some(M),
            epsilon: Some(0.5),
            ..Default::default()
        };
        let flats = [
            (MethodName::Vfe, "leaves the evidence flat"),
            (MethodName::Svgp, "leaves q(u) at the prior"),
        ];
        for (method, flat) in flats {
            let spec = FitOptions {
                epsilon: None,
                ..options.clone()
            }
            .check(method)
            .unwrap();
            let mut plan = ShardedFit::of(&spec, n, d, 1.0).unwrap();
            let rows = plan.wide_start_rows(n, d, spec.seed);
            assert_eq!(rows, start::median_rows(n, spec.seed));
            assert_eq!(rows.len(), start::MEDIAN_ROWS);
            let gathered = crate::linalg::select_rows(x.as_ref(), &rows);
            let too_few = crate::linalg::select_rows(x.as_ref(), &rows[1..]);
            let refused = plan.start_wide(n, too_few.as_ref(), spec.seed);
            assert!(
                matches!(refused, Err(Error::ShapeMismatch { .. })),
                "{refused:?}"
            );
            let at_one = plan.kernel.clone();
            let note = plan.start_wide(n, gathered.as_ref(), spec.seed).unwrap();
            let (kernel, want) = start::wide_start_noted(at_one, x.as_ref(), spec.seed, flat);
            assert!(note.is_some());
            assert_eq!((plan.kernel, note), (kernel, want), "{method:?}");
            if let ShardedFamily::Regression { search, .. } = &plan.family {
                assert_eq!(search.lbfgs.stall, start::wide_stall(d));
            }
        }
        let pac_sgp = options.clone().check(MethodName::PacSgp).unwrap();
        let mut plan = ShardedFit::of(&pac_sgp, n, d, 1.0).unwrap();
        assert!(plan.wide_start_rows(n, d, pac_sgp.seed).is_empty());
        let at_one = plan.kernel.clone();
        let rows = start::median_rows(n, pac_sgp.seed);
        let gathered = crate::linalg::select_rows(x.as_ref(), &rows);
        assert_eq!(plan.start_wide(n, gathered.as_ref(), 0).unwrap(), None);
        assert_eq!(plan.kernel, at_one);
        let vfe = FitOptions {
            epsilon: None,
            ..options
        }
        .check(MethodName::Vfe)
        .unwrap();
        let narrow = ShardedFit::of(&vfe, n, start::WIDE_INPUTS, 1.0).unwrap();
        assert!(narrow.wide_start_rows(n, start::WIDE_INPUTS, 0).is_empty());
    }

    /// The plan's minibatch run, its rows gathered here in the order drawn, is the in-process
    /// minibatch fit's, bit for bit.
    #[test]
    fn the_svgp_minibatch_plan_runs_the_in_process_adam_steps() {
        let (x, t) = sample();
        let y: Vec<f64> = t
            .iter()
            .map(|v| if *v > 0.3 { 1.0 } else { -1.0 })
            .collect();
        let spec = FitOptions {
            inducing: Some(M),
            max_iter: Some(20),
            batch_size: Some(16),
            ..Default::default()
        }
        .check(MethodName::PacSvgp)
        .unwrap();
        let Method::Svgp(s) = &spec.method else {
            panic!("not an svgp spec")
        };
        let kernel = Kernel::from_spec(&s.kernel, 2).unwrap();
        let st = svgp_settings(&spec, s, y.len());
        let fit = crate::svgp::fit_svgp(&kernel, x.as_ref(), &y, &st).unwrap();
        let plan = ShardedFit::of(&spec, y.len(), 2, 1.0).unwrap();
        assert_eq!(plan.minibatch().map(|s| s.batch), Some(16));
        let z0 = initial_inducing_with_targets(
            &kernel,
            1.0,
            x.as_ref(),
            &y,
            M,
            InducingInit::KMeans,
            spec.seed,
        )
        .unwrap();
        let obj = plan.in_process(x.as_ref(), &y).unwrap();
        let ShardedFamily::Classifier { assembly, .. } = &plan.family else {
            panic!("not a classifier plan")
        };
        let whole =
            SvgpObjective::new(&kernel, x.as_ref(), &y, M, assembly.criterion().clone()).unwrap();
        let mut gradient = |rows: &[usize], p: &[f64]| {
            let xb = Mat::from_fn(rows.len(), 2, |r, j| x[(rows[r], j)]);
            let yb: Vec<f64> = rows.iter().map(|&i| y[i]).collect();
            Ok(whole.on_batch(xb.as_ref(), &yb)?.value_and_gradient(p)?.1)
        };
        let (params, report) = plan
            .minimise_on_batches(&mut gradient, &|p| obj.value(p), z0.as_ref())
            .unwrap();
        assert_eq!(report.iterations, 20);
        assert_eq!(params, fit.report.params);
        assert_eq!(report.value.to_bits(), fit.report.value.to_bits());
        let full = ShardedFit::of(
            &FitOptions {
                inducing: Some(M),
                ..Default::default()
            }
            .check(MethodName::Svgp)
            .unwrap(),
            y.len(),
            2,
            1.0,
        )
        .unwrap();
        assert!(full.minibatch().is_none());
        assert!(full
            .minimise_on_batches(&mut gradient, &|p| obj.value(p), z0.as_ref())
            .is_err());
    }

    #[test]
    fn specs_a_sharded_fit_cannot_train_are_refused_by_their_option() {
        let refused = |method, o: FitOptions| {
            let spec = o.check(method).unwrap();
            ShardedFit::check(&spec).unwrap_err().option
        };
        assert_eq!(
            refused(MethodName::Fitc, FitOptions::default()),
            SpecOption::Method
        );
        assert_eq!(
            refused(MethodName::Gpr, FitOptions::default()),
            SpecOption::Method
        );
        let split = FitOptions {
            epsilon: Some(1.0),
            prior: Some(SplitFraction::Fixed(0.5)),
            ..Default::default()
        };
        assert_eq!(refused(MethodName::PacSgp, split), SpecOption::Prior);
        let greedy = FitOptions {
            inducing_init: Some(InducingInit::Greedy),
            ..Default::default()
        };
        assert_eq!(
            refused(MethodName::PacSvgp, greedy),
            SpecOption::InducingInit
        );
    }
}
