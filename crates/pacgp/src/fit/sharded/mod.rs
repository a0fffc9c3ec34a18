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
use crate::plan::svgp_settings;

/// The bound of `spec` (pac-sgp or pac-sgp-sqrt without a split prior) with ε divided by the
/// targets' standard deviation `y_sd`.
pub fn pac_sgp_bound(spec: &CheckedFitSpec, y_sd: f64) -> Result<PacSgpBound> {
    ShardedFit::check(spec)?;
    let Method::PacSgp(s) = &spec.method else {
        return Err(not_sharded(spec).into());
    };
    Ok(PacSgpBound {
        loss: RegressionLoss::band_in_standard_units(s.epsilon, y_sd)?,
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
            Method::Svgp(s) if s.split.is_some() => Err(split_prior_refused(spec)),
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
mod tests;
