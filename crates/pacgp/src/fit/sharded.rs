//! A fit over data shards (Python's `pacgp.distributed.fit_sharded`): which checked specs can be
//! fitted that way (vfe, pac-sgp and pac-sgp-sqrt, without a split prior), where the search
//! starts and how it runs. The start, boxes, grid snap and iteration budgets are those of the
//! in-process fit of the same spec ([`Search`]: [`SparseConfig::search`], [`pac_sgp_search`]);
//! the objective is the sum of its shards' parts ([`crate::regression::sharded`],
//! [`crate::objective::pac_sgp_sharded`]), evaluated wherever the shards are, and the
//! minimisation is the one driver's ([`crate::optim::drive_warm`]).

use faer::MatRef;

use crate::error::Result;
use crate::kernel::Kernel;
use crate::loss::RegressionLoss;
use crate::objective::pac_sgp::{pac_sgp_search, theta_penalty, PacSgpBound, DEFAULT_MAX_ITER};
use crate::optim::{Minimum, Objective, Pretraining, Search, WarmStart};
use crate::regression::sparse::{NegSparseObjective, SparseConfig, SparseMethod};
use crate::spec::{CheckedFitSpec, Method, PacPrior, SpecError, SpecOption, DEFAULT_BASIS};

use super::regression::levers;

/// The bound of `spec` (pac-sgp or pac-sgp-sqrt without a split prior) with ε divided by the
/// targets' standard deviation `y_sd`.
pub fn pac_sgp_bound(spec: &CheckedFitSpec, y_sd: f64) -> Result<PacSgpBound> {
    ShardedFit::check(spec)?;
    let Method::PacSgp(s) = &spec.method else {
        return Err(not_sharded(spec).into());
    };
    Ok(PacSgpBound {
        loss: RegressionLoss::new_epsilon_band(s.epsilon / y_sd)?,
        delta: spec.delta,
        kind: s.bound,
        levers: levers(spec, s.prior),
    })
}

/// A sharded fit of a checked spec: the kernel at its initial values, M, σ²'s start, and what
/// is minimised how.
#[derive(Clone, Debug)]
pub struct ShardedFit {
    /// The kernel with its initial values, on `d` inputs.
    pub kernel: Kernel,
    /// Number of inducing inputs M.
    pub m: usize,
    /// Where σ² starts (standardised targets): the spec's for VFE, 1 for PAC-SGP (the paper's).
    pub noise_init: f64,
    /// The sparse PAC-GP bound minimised (FITC posterior, α_s = 1); `None`: the negative of
    /// Titsias' VFE bound.
    pub bound: Option<PacSgpBound>,
    /// How the parameters are searched.
    pub search: Search,
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
            _ => Err(not_sharded(spec)),
        }
    }

    /// The sharded fit of `spec` on `d` inputs whose targets have standard deviation `y_sd`;
    /// a spec that cannot be fitted over shards is refused by the option that makes it so.
    pub fn of(spec: &CheckedFitSpec, d: usize, y_sd: f64) -> Result<Self> {
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
                let search = cfg.search(kernel.n_params(), m, d);
                Ok(Self {
                    kernel,
                    m,
                    noise_init: s.noise_init,
                    bound: None,
                    search,
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
                    noise_init: 1.0,
                    bound: Some(bound),
                    search,
                })
            }
            _ => Err(not_sharded(spec).into()),
        }
    }

    /// The starting point `[ln θ…, ln σ², vec(Z)]` with inducing inputs `z0` (M × d).
    pub fn start(&self, z0: MatRef<'_, f64>) -> Vec<f64> {
        NegSparseObjective::pack(&self.kernel, self.noise_init, z0)
    }

    /// The objective on rows held in this process: a warm start's subsample.
    pub fn in_process<'a>(
        &self,
        x: MatRef<'a, f64>,
        y: &'a [f64],
    ) -> Result<Box<dyn Objective + 'a>> {
        Ok(match &self.bound {
            None => Box::new(NegSparseObjective::new(
                &self.kernel,
                SparseMethod::Vfe,
                x,
                y,
                self.m,
            )),
            Some(bound) => {
                let penalty = theta_penalty(&bound.levers, self.kernel.n_params());
                Box::new(bound.in_process(&self.kernel, x, y, self.m, self.alpha_s(), penalty)?)
            }
        })
    }

    /// The posterior's `α_s`: 0 for VFE, 1 for PAC-SGP's FITC form.
    pub fn alpha_s(&self) -> f64 {
        if self.bound.is_some() {
            1.0
        } else {
            0.0
        }
    }

    /// Minimise `obj` (the sharded objective) from `p0`, after a warm start on `warm`'s rows if
    /// given, and snap θ as the in-process fit does.
    pub fn minimise(
        &self,
        obj: &dyn Objective,
        warm: Option<&WarmStart>,
        p0: &[f64],
    ) -> Result<(Minimum, Option<Pretraining>)> {
        self.search.minimise(obj, warm, p0)
    }
}

/// The refusal of a method a sharded fit does not have.
fn not_sharded(spec: &CheckedFitSpec) -> SpecError {
    SpecError::not_for(
        SpecOption::Method,
        spec.method_name(),
        "sharded fits as vfe, pac-sgp and pac-sgp-sqrt",
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
    use crate::objective::pac_sgp::{fit_pac_sgp_with, PacSgpSettings};
    use crate::prior::split::SplitFraction;
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
        let plan = ShardedFit::of(spec, x.ncols(), 1.0).unwrap();
        let z0 = initial_inducing_with_targets(
            &plan.kernel,
            plan.noise_init,
            x,
            y,
            plan.m,
            InducingInit::KMeans,
            spec.seed,
        )
        .unwrap();
        let obj = plan.in_process(x, y).unwrap();
        let (min, _) = plan
            .minimise(obj.as_ref(), None, &plan.start(z0.as_ref()))
            .unwrap();
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
    }
}
