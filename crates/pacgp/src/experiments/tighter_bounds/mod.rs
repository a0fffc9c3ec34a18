//! `reproduce tighter-bounds` (issue 15, docs/math.md §9.1–§9.3): the reference PAC-GP
//! certificate (kl-PAC-GP, Maurer's `ln(2√N/δ)`, uniform 0.01 grid on [−6, 6]) against each
//! lever — the sharp constant ξ(N), a coarse Gaussian hyperparameter prior, the data-dependent
//! split prior — and their best combination, over seeded random splits: bound, test Gibbs
//! risk, test MSE, KL and penalty.
//!
//! Every row's certificate comes from the one constructor ([`crate::certificate`]); a lever is
//! a prior or penalty handed to it. ε is in units of the training targets' standard deviation
//! (each lever converts it to its own scalers), test MSE in units of the training variance.
//! [`Lever`] is the place where further levers plug in (heteroscedastic posterior noise,
//! classifier rows).

use faer::MatRef;
use serde::{Deserialize, Serialize};

use super::{mean_se, split_of, worst};
use crate::bounds::{BoundKind, ConfidenceTerm, DEFAULT_DELTA};
use crate::certificate::{Certificate, CertificateSpec, GibbsLoss, PenaltyTerm};
use crate::data::{Dataset, Standardizer, TargetScaler};
use crate::error::{Error, Result};
use crate::kernel::Kernel;
use crate::loss::{self, RegressionLoss};
use crate::objective::gp_split::{
    fit_split_prior, fit_split_prior_catoni, fit_split_prior_point_noise, SplitConfig,
    SplitFraction,
};
use crate::objective::pac_gp::{fit_pac_gp, PacGpConfig};
use crate::objective::pac_gp_hetero::fit_pac_gp_hetero;
use crate::objective::pac_sgp::{fit_pac_sgp_with, PacSgpFit, PacSgpSettings};
use crate::objective::pac_sgp_hetero::free_point_noise;
use crate::objective::sgp_split::{fit_sparse_split_prior_with, SparseSplitFamily};
use crate::posterior::{GaussianPosterior, Marginals};
use crate::prior::{BoundLevers, HyperPrior};
use crate::regression::inducing_init::InducingInit;

mod summary;
pub use summary::{summarise, test_lower_minus_bound, TighterSummary};

/// One way of certifying (and training) a model; the reference is the paper's PAC-GP.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum Lever {
    /// kl-PAC-GP with Maurer's constant and the paper's uniform 0.01 grid (`T·ln 1201`).
    Reference,
    /// The reference's posterior certified with the sharp constant `ln(ξ(N)/δ)` (docs/math.md
    /// §9.1).
    SharpConstant,
    /// kl-PAC-GP trained and certified with the coarse Gaussian prior (h = 0.25, τ = 1.5,
    /// docs/math.md §9.2), Maurer's constant.
    HyperPrior,
    /// Data-dependent prior from part A, the menu {0.3, 0.5, 0.7} with `ln 3`, Maurer's
    /// constant on N_B (docs/math.md §9.3).
    SplitPrior,
    /// The best combination: the split prior with the sharp constant `ln(ξ(N_B)/δ)`.
    Combined,
    /// The sparse split prior (docs/math.md §9.3.2: VFE with [`SPARSE_M`] inducing inputs on part
    /// A, Q over σ², α_s on B), the menu with `ln 3`, the sharp constant.
    SparseSplitPrior,
    /// The split prior with Catoni's bound, λ the best of a grid fixed in advance (5 values
    /// in [0.3, 3], `ln 5` on top of the menu's `ln 3`; docs/math.md §9.1).
    SplitCatoni,
    /// The reference with per-point posterior noise (docs/math.md §9.4.2; free, not charged):
    /// PAC-GP's on full rows, PAC-SGP's (`objective::pac_sgp_hetero`, Z re-optimised too) on sparse
    /// rows; the reference's penalty and constant.
    Heteroscedastic,
    /// The sparse split prior with a separate noise σ_m² for Q's mean (docs/math.md §9.4.1's
    /// decoupled σ_m², σ_v², sparse form): Q's mean may follow part B further than its covariance.
    SparseSplitMeanNoise,
    /// The best combination with the richer posterior: [`Lever::SplitCatoni`] with per-point
    /// posterior noises on part B (docs/math.md §9.4.2 on the split prior; free, not charged).
    SplitCatoniPointNoise,
}

/// Inducing inputs of the sparse split prior's lever.
pub const SPARSE_M: usize = 100;

impl Lever {
    /// All regression levers of this module, reference first.
    pub fn all() -> Vec<Lever> {
        vec![
            Lever::Reference,
            Lever::SharpConstant,
            Lever::HyperPrior,
            Lever::SplitPrior,
            Lever::Combined,
            Lever::SparseSplitPrior,
            Lever::SplitCatoni,
            Lever::SplitCatoniPointNoise,
        ]
    }

    /// Stable name used in the tables.
    pub fn name(&self) -> &'static str {
        match self {
            Lever::Reference => "reference",
            Lever::SharpConstant => "sharp-xi",
            Lever::HyperPrior => "gaussian-hyper-prior",
            Lever::SplitPrior => "split-prior",
            Lever::Combined => "split-prior+sharp-xi",
            Lever::SparseSplitPrior => "sparse-split-prior+sharp-xi",
            Lever::SplitCatoni => "split-prior+catoni",
            Lever::Heteroscedastic => "hetero-noise",
            Lever::SparseSplitMeanNoise => "sparse-split-prior+mean-noise",
            Lever::SplitCatoniPointNoise => "split-prior+catoni+point-noise",
        }
    }

    /// The levers of the sparse rows (reference = PAC-SGP): sharp ξ(N), the hyperparameter
    /// prior, the sparse split prior and per-point posterior noise.
    pub fn sparse() -> Vec<Lever> {
        vec![
            Lever::Reference,
            Lever::SharpConstant,
            Lever::HyperPrior,
            Lever::SparseSplitPrior,
            Lever::SparseSplitMeanNoise,
            Lever::Heteroscedastic,
        ]
    }
}

/// The sparse protocol of a dataset's rows (seed 004's kin40k / pol): the reference and the
/// levers are PAC-SGP with `m` inducing inputs (FITC form, Z from k-means), the split prior
/// VFE with `m` on part A.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct SparseSetup {
    /// Inducing inputs M.
    pub m: usize,
    /// L-BFGS iterations of each PAC-SGP fit (and of the per-point noise stage).
    pub max_iter: usize,
}

/// Kernel family of a dataset's rows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum KernelChoice {
    /// Isotropic SE (T = 2).
    SeIso,
    /// SE-ARD (T = D + 1).
    SeArd,
}

impl KernelChoice {
    /// The initial kernel (unit lengthscales and signal variance) for `d` inputs.
    pub fn init(&self, d: usize) -> Kernel {
        match self {
            KernelChoice::SeIso => Kernel::se_iso(1.0, 1.0),
            KernelChoice::SeArd => Kernel::se_ard(&vec![1.0; d], 1.0),
        }
    }
}

/// One dataset of the table: where its train/test splits come from and the kernel.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct DatasetSetup {
    /// Name in the table (e.g. `boston`).
    pub name: String,
    /// Kernel family.
    pub kernel: KernelChoice,
    /// Training points per split: `None` = a random 80/20 split of the pool; `Some(n)` = a
    /// seeded subsample of n points of the training file (with a separate test file).
    pub n_train: Option<usize>,
    /// Test points per split when a separate test file is used.
    pub n_test: usize,
    /// `Some`: the sparse protocol (PAC-SGP reference, [`Lever::sparse`]); `None`: full GPs.
    #[serde(default)]
    pub sparse: Option<SparseSetup>,
}

/// Settings of the whole table.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct TighterSettings {
    /// Seeded splits per dataset (split seeds 0..reps).
    pub reps: usize,
    /// ε in units of the training targets' standard deviation (the spec's 0.6).
    pub epsilon: f64,
    /// Confidence δ.
    pub delta: f64,
    /// Levers to run (the reference is always run: the relative columns need it).
    pub levers: Vec<Lever>,
    /// Levers of the sparse rows ([`Lever::sparse`]).
    #[serde(default = "Lever::sparse")]
    pub sparse_levers: Vec<Lever>,
    /// Seed of the first split (splits `first_rep..first_rep + reps`; one split per process
    /// when several run side by side).
    #[serde(default)]
    pub first_rep: usize,
}

impl TighterSettings {
    /// The table: 10 splits, ε = 0.6, δ = 0.01, every lever.
    pub fn full() -> Self {
        Self {
            reps: 10,
            epsilon: 0.6,
            delta: DEFAULT_DELTA,
            levers: Lever::all(),
            sparse_levers: Lever::sparse(),
            first_rep: 0,
        }
    }

    /// Three splits.
    pub fn quick() -> Self {
        Self {
            reps: 3,
            ..Self::full()
        }
    }
}

/// The datasets of the table: boston (iso and ARD, 80/20 splits) and kin40k, pol (SE-ARD,
/// subsamples of the training file: 1000 points full, 300 quick; full GPs throughout).
pub fn dataset_setups(quick: bool) -> Vec<DatasetSetup> {
    let (n_train, n_test) = if quick { (300, 1000) } else { (1000, 5000) };
    let mut v = vec![
        DatasetSetup {
            name: "boston".into(),
            kernel: KernelChoice::SeIso,
            n_train: None,
            n_test: 0,
            sparse: None,
        },
        DatasetSetup {
            name: "boston".into(),
            kernel: KernelChoice::SeArd,
            n_train: None,
            n_test: 0,
            sparse: None,
        },
    ];
    for name in ["kin40k", "pol"] {
        v.push(DatasetSetup {
            name: name.into(),
            kernel: KernelChoice::SeArd,
            n_train: Some(n_train),
            n_test,
            sparse: None,
        });
    }
    v
}

/// The sparse protocol for kin40k and pol (seed 004): 10,000 training points, 5000 test
/// points, M = 100, 300 L-BFGS steps per fit; quick: 1000 training, 1000 test, M = 25, 100
/// steps.
pub fn sparse_dataset_setups(quick: bool) -> Vec<DatasetSetup> {
    let (n_train, n_test, m, max_iter) = if quick {
        (1000, 1000, 25, 100)
    } else {
        (10_000, 5000, 100, 300)
    };
    ["kin40k", "pol"]
        .into_iter()
        .map(|name| DatasetSetup {
            name: name.into(),
            kernel: KernelChoice::SeArd,
            n_train: Some(n_train),
            n_test,
            sparse: Some(SparseSetup { m, max_iter }),
        })
        .collect()
}

/// One lever on one split.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TighterRow {
    /// Dataset name.
    pub dataset: String,
    /// Kernel family.
    pub kernel: KernelChoice,
    /// Lever name ([`Lever::name`]).
    pub lever: String,
    /// Split seed.
    pub rep: usize,
    /// kl-form bound.
    pub bound: f64,
    /// Empirical Gibbs risk on the certificate's sample.
    pub train_gibbs: f64,
    /// Test Gibbs risk (latent marginals).
    pub test_gibbs: f64,
    /// Test MSE of the posterior mean (units of the training variance).
    pub test_mse: f64,
    /// Points of the test set (0 in rows recorded before it was kept).
    #[serde(default)]
    pub n_test: usize,
    /// `KL(Q‖P)` (to P_A for the split prior).
    pub kl: f64,
    /// Penalty in nats.
    pub penalty: f64,
    /// Sample size of the certificate (N, or N_B for the split prior).
    pub n_bound: usize,
    /// Split fraction F of the split prior (0 for the others).
    pub fraction: f64,
    /// Training time in seconds.
    pub seconds: f64,
}

/// Test Gibbs risk (ε in the marginals' units) and MSE in units of the training variance,
/// with `scale` the target sd of the marginals' units relative to the training sd.
fn test_scores(yt: &[f64], m: &Marginals, eps: f64, scale: f64) -> Result<(f64, f64)> {
    let gibbs = loss::gibbs_risk_regression(yt, m, &RegressionLoss::new_epsilon_band(eps)?)?;
    let mse = super::mean_squared_error(&m.mean, yt);
    Ok((gibbs, mse * scale * scale))
}

/// [`test_scores`] of a split-prior fit, which standardises with its own scalers: the test set
/// in the fit's units, the band `epsilon` of its config, the MSE in units of the training sd
/// `train_sd`.
fn split_fit_test_scores(
    x_scaler: &Standardizer,
    y_scaler: &TargetScaler,
    posterior: &GaussianPosterior,
    test: &Dataset,
    epsilon: f64,
    train_sd: f64,
) -> Result<(f64, f64)> {
    let xa = x_scaler.transform(test.x.as_ref())?;
    let ya = y_scaler.transform(&test.y);
    let m = posterior.predict(xa.as_ref())?;
    let band = RegressionLoss::band_in_standard_units(epsilon, y_scaler.sd)?.epsilon();
    test_scores(&ya, &m, band, y_scaler.sd / train_sd)
}

/// Every lever of `settings` on every split of one dataset; `progress(done, total)` after
/// each fit.
pub fn tighter_bounds_on(
    pool: &Dataset,
    test_pool: Option<&Dataset>,
    setup: &DatasetSetup,
    settings: &TighterSettings,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<Vec<TighterRow>> {
    let levers = match setup.sparse {
        Some(_) => &settings.sparse_levers,
        None => &settings.levers,
    };
    let total = settings.reps * levers.len();
    let mut done = 0;
    let mut rows = Vec::new();
    for rep in settings.first_rep..settings.first_rep + settings.reps {
        let (train, test) = split_of(pool, test_pool, (setup.n_train, setup.n_test), rep)?;
        let xs = Standardizer::fit(train.x.as_ref(), &train.feature_names)?;
        let ys = TargetScaler::fit(&train.y)?;
        let (x, y) = (xs.transform(train.x.as_ref())?, ys.transform(&train.y));
        let (xt, yt) = (xs.transform(test.x.as_ref())?, ys.transform(&test.y));
        let eps = settings.epsilon;
        let init = setup.kernel.init(train.d());
        let row =
            |lever: Lever, c: &Certificate, t: (f64, f64), fraction: f64, secs: f64| TighterRow {
                dataset: setup.name.clone(),
                kernel: setup.kernel,
                lever: lever.name().into(),
                rep,
                bound: c.bound,
                train_gibbs: c.empirical_risk,
                test_gibbs: t.0,
                test_mse: t.1,
                n_test: test.n(),
                kl: c.kl,
                penalty: c.penalty,
                n_bound: c.n,
                fraction,
                seconds: secs,
            };
        let mut reference = None;
        let mut sparse_reference = None;
        for &lever in levers {
            let t0 = std::time::Instant::now();
            let split_lever =
                matches!(lever, Lever::SparseSplitPrior | Lever::SparseSplitMeanNoise);
            if let (Some(sp), false) = (setup.sparse, split_lever) {
                let ctx = SparseRowContext {
                    setup: sp,
                    init: &init,
                    x: x.as_ref(),
                    y: &y,
                    epsilon: eps,
                    delta: settings.delta,
                    seed: rep as u64,
                };
                let (c, post) = sparse_lever(lever, &ctx, &mut sparse_reference)?;
                let t = test_scores(&yt, &post.predict(xt.as_ref())?, eps, 1.0)?;
                rows.push(row(lever, &c, t, 0.0, t0.elapsed().as_secs_f64()));
                done += 1;
                progress(done, total);
                continue;
            }
            match lever {
                Lever::Reference | Lever::SharpConstant | Lever::HyperPrior => {
                    let gp = match (lever, &reference) {
                        (Lever::SharpConstant, Some(gp)) => Clone::clone(gp),
                        _ => {
                            let mut cfg = PacGpConfig::new(eps, BoundKind::Kl)?;
                            cfg.delta = settings.delta;
                            if lever == Lever::HyperPrior {
                                cfg.hyper_prior = Some(HyperPrior::gaussian());
                            }
                            fit_pac_gp(&init, 1.0, x.clone(), y.clone(), &cfg)?.gp
                        }
                    };
                    let post = gp.posterior()?;
                    let choice = match lever {
                        Lever::HyperPrior => HyperPrior::gaussian().penalty_term(&gp.kernel)?,
                        _ => PenaltyTerm::grid(&Default::default(), gp.kernel.n_params()),
                    };
                    let term = match lever {
                        Lever::SharpConstant => ConfidenceTerm::Sharp,
                        _ => ConfidenceTerm::Maurer,
                    };
                    let spec = CertificateSpec::new(settings.delta, term, vec![choice]);
                    let loss = GibbsLoss::Regression(RegressionLoss::new_epsilon_band(eps)?);
                    let c = Certificate::of_posterior(&post, x.as_ref(), &y, &loss, &spec)?;
                    let t = test_scores(&yt, &post.predict(xt.as_ref())?, eps, 1.0)?;
                    rows.push(row(lever, &c, t, 0.0, t0.elapsed().as_secs_f64()));
                    if lever == Lever::Reference {
                        reference = Some(gp);
                    }
                }
                Lever::SplitPrior
                | Lever::Combined
                | Lever::SplitCatoni
                | Lever::SplitCatoniPointNoise => {
                    let mut cfg = SplitConfig::new(ys.unscale_length(eps));
                    cfg.fraction = SplitFraction::Menu;
                    cfg.seed = 10_000 + rep as u64;
                    cfg.delta = settings.delta;
                    cfg.term = if lever == Lever::Combined {
                        ConfidenceTerm::Sharp
                    } else {
                        ConfidenceTerm::Maurer
                    };
                    let fit = match lever {
                        Lever::SplitCatoni => fit_split_prior_catoni(&train, &init, &cfg)?,
                        Lever::SplitCatoniPointNoise => {
                            fit_split_prior_point_noise(&train, &init, &cfg, true)?
                        }
                        _ => fit_split_prior(&train, &init, &cfg)?,
                    };
                    let (xs, yf, post) = (&fit.x_scaler, &fit.y_scaler, &fit.posterior);
                    let t = split_fit_test_scores(xs, yf, post, &test, cfg.epsilon, ys.sd)?;
                    let secs = t0.elapsed().as_secs_f64();
                    rows.push(row(lever, &fit.certificate, t, fit.fraction, secs));
                }
                Lever::SparseSplitPrior | Lever::SparseSplitMeanNoise => {
                    let mut cfg = SplitConfig::new(ys.unscale_length(eps));
                    cfg.seed = 10_000 + rep as u64;
                    cfg.delta = settings.delta;
                    let m = setup.sparse.map_or(SPARSE_M, |s| s.m);
                    let family = match lever {
                        Lever::SparseSplitMeanNoise => SparseSplitFamily::DecoupledMean,
                        _ => SparseSplitFamily::Tied,
                    };
                    let fit = fit_sparse_split_prior_with(&train, &init, m, &cfg, family)?;
                    let (xs, yf, post) = (&fit.x_scaler, &fit.y_scaler, &fit.posterior);
                    let t = split_fit_test_scores(xs, yf, post, &test, cfg.epsilon, ys.sd)?;
                    let secs = t0.elapsed().as_secs_f64();
                    rows.push(row(lever, &fit.certificate, t, fit.fraction, secs));
                }
                Lever::Heteroscedastic => {
                    let mut cfg = PacGpConfig::new(eps, BoundKind::Kl)?;
                    cfg.delta = settings.delta;
                    let fit = fit_pac_gp_hetero(&init, 1.0, x.clone(), y.clone(), &cfg)?;
                    let t = test_scores(&yt, &fit.posterior.predict(xt.as_ref())?, eps, 1.0)?;
                    let secs = t0.elapsed().as_secs_f64();
                    rows.push(row(lever, &fit.certificate, t, 0.0, secs));
                }
            }
            done += 1;
            progress(done, total);
        }
    }
    Ok(rows)
}

/// One split's standardised training sample and the sparse protocol's settings.
struct SparseRowContext<'a> {
    setup: SparseSetup,
    init: &'a Kernel,
    x: MatRef<'a, f64>,
    y: &'a [f64],
    epsilon: f64,
    delta: f64,
    seed: u64,
}

/// One lever of a sparse row (PAC-SGP, kl form, FITC parametrisation as seed 004): its
/// certificate and posterior. The reference fit is made once per split and shared by the
/// sharp-constant and per-point-noise levers.
fn sparse_lever(
    lever: Lever,
    c: &SparseRowContext<'_>,
    reference: &mut Option<PacSgpFit>,
) -> Result<(Certificate, GaussianPosterior)> {
    let loss = RegressionLoss::new_epsilon_band(c.epsilon)?;
    let st = PacSgpSettings {
        m: c.setup.m,
        alpha_s: 1.0,
        loss,
        delta: c.delta,
        kind: BoundKind::Kl,
        seed: c.seed,
        init: InducingInit::KMeans,
        max_iter: c.setup.max_iter,
        pretrain: None,
    };
    let fit = |levers: &BoundLevers| fit_pac_sgp_with(c.init, 1.0, c.x, c.y, &st, levers);
    let base = match (lever, reference.as_ref()) {
        (Lever::HyperPrior, _) => fit(&BoundLevers {
            term: ConfidenceTerm::Maurer,
            hyper_prior: Some(HyperPrior::gaussian()),
        })?,
        (_, Some(r)) => r.clone(),
        (_, None) => {
            let r = fit(&BoundLevers::default())?;
            *reference = Some(r.clone());
            r
        }
    };
    let post = base.gp.posterior_with_alpha(c.x, c.y, base.alpha_s)?;
    match lever {
        Lever::Reference | Lever::HyperPrior => Ok((base.certificate, post)),
        Lever::SharpConstant => {
            let terms = base.certificate.penalty_terms.clone();
            let spec = CertificateSpec::new(c.delta, ConfidenceTerm::Sharp, terms);
            let gl = GibbsLoss::Regression(loss);
            Ok((
                Certificate::of_posterior(&post, c.x, c.y, &gl, &spec)?,
                post,
            ))
        }
        Lever::Heteroscedastic => {
            let h = free_point_noise(base, c.x, c.y, &st, ConfidenceTerm::Maurer, st.max_iter)?;
            Ok((h.certificate, h.posterior))
        }
        other => Err(Error::Unsupported(format!(
            "lever '{}' has no sparse form",
            other.name()
        ))),
    }
}

#[cfg(test)]
mod tests;
