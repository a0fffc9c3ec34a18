//! Seed 004 Fig. 3: bound, Gibbs risks, MSE and KL/N against the number of inducing inputs M
//! for kl-PAC-SGP, sqrt-PAC-SGP (FITC form), VFE and FITC, on kin40k and pol (SE-ARD,
//! ε = 0.6 in standardised units, δ = 0.01). Every model's θ is boxed to the grid's range,
//! snapped onto it, and scored with its **own** posterior (docs/math.md §8.5 notes the reference code
//! scored VFE with FITC's; not repeated here).

use serde::{Deserialize, Serialize};

use crate::bounds::{BoundKind, HyperGrid};
use crate::certificate::{Certificate, GibbsLoss};
use crate::data::{permutation, Dataset, Standardizer, TargetScaler};
use crate::error::Result;
use crate::kernel::Kernel;
use crate::loss::{self, RegressionLoss};
use crate::objective::pac_sgp::fit_pac_sgp;
use crate::optim::LbfgsConfig;
use crate::posterior::GaussianPosterior;
use crate::regression::inducing_init::InducingInit;
use crate::regression::sparse::{train_sparse, SparseConfig, SparseMethod};

/// One method at one M.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct InducingRow {
    /// Data set name (`kin40k`, `pol`).
    pub dataset: String,
    /// Number of inducing inputs.
    pub m: usize,
    /// `kl-pac-sgp`, `sqrt-pac-sgp`, `vfe` or `fitc`.
    pub method: String,
    /// kl-form bound at the snapped θ.
    pub bound: f64,
    /// sqrt-form bound.
    pub bound_sqrt: f64,
    /// Training Gibbs risk.
    pub train_gibbs: f64,
    /// Test Gibbs risk.
    pub test_gibbs: f64,
    /// Test MSE of the posterior mean (standardised units).
    pub test_mse: f64,
    /// `KL/N`.
    pub kl_over_n: f64,
    /// Learned σ² (standardised units).
    pub noise_variance: f64,
    /// Training time in seconds.
    pub seconds: f64,
}

/// Sizes of a run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct InducingSetup {
    /// Numbers of inducing inputs.
    pub ms: Vec<usize>,
    /// Training points used (a seeded subsample if smaller than the file).
    pub n_train: usize,
    /// Test points used.
    pub n_test: usize,
    /// Optimiser iteration cap.
    pub max_iter: usize,
    /// ε (standardised units).
    pub epsilon: f64,
}

/// The data sets of seed 004 Fig. 3, each shipped as `data/NAME/NAME_{train,test}.csv.gz`.
pub const INDUCING_DATASETS: [&str; 2] = ["kin40k", "pol"];

impl InducingSetup {
    /// The paper's: M = 100…500, 10,000 training and 30,000 test points, 1000 iterations.
    pub fn paper() -> Self {
        Self {
            ms: vec![100, 200, 300, 400, 500],
            n_train: 10_000,
            n_test: 30_000,
            max_iter: 1000,
            epsilon: 0.6,
        }
    }

    /// M = 10, 25, 50 on 1000 training and 2000 test points, 150 iterations.
    pub fn quick() -> Self {
        Self {
            ms: vec![10, 25, 50],
            n_train: 1000,
            n_test: 2000,
            max_iter: 150,
            epsilon: 0.6,
        }
    }

    /// Fits one data set takes (four methods per M).
    pub fn total_fits(&self) -> usize {
        4 * self.ms.len()
    }
}

/// Score a posterior as the paper does: the certificate on the training sample (grid penalty,
/// δ = 0.01, Maurer's constant), Gibbs risk and MSE on the test set.
fn score(
    post: &GaussianPosterior,
    x: &faer::Mat<f64>,
    y: &[f64],
    xt: &faer::Mat<f64>,
    yt: &[f64],
    loss: &RegressionLoss,
) -> Result<(Certificate, f64, f64)> {
    let spec = super::pac_gp::paper_spec(post.kernel().n_params());
    let c = Certificate::of_posterior(post, x.as_ref(), y, &GibbsLoss::Regression(*loss), &spec)?;
    let mt = post.predict(xt.as_ref())?;
    let tg = loss::gibbs_risk_regression(yt, &mt, loss)?;
    let mse = super::mean_squared_error(&mt.mean, yt);
    Ok((c, tg, mse))
}

/// Run the four methods for every M on the data set `name`; `progress(done, total)` after
/// each fit.
pub fn pac_sgp_inducing(
    name: &str,
    train: &Dataset,
    test: &Dataset,
    setup: &InducingSetup,
    seed: u64,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<Vec<InducingRow>> {
    let tr: Vec<usize> = permutation(train.n(), seed)
        .into_iter()
        .take(setup.n_train.min(train.n()))
        .collect();
    let te: Vec<usize> = permutation(test.n(), seed + 1)
        .into_iter()
        .take(setup.n_test.min(test.n()))
        .collect();
    let (train, test) = (train.subset(&tr), test.subset(&te));
    let xs = Standardizer::fit(train.x.as_ref(), &train.feature_names)?;
    let ys = TargetScaler::fit(&train.y)?;
    let (x, y) = (xs.transform(train.x.as_ref())?, ys.transform(&train.y));
    let (xt, yt) = (xs.transform(test.x.as_ref())?, ys.transform(&test.y));
    let loss = RegressionLoss::new_epsilon_band(setup.epsilon)?;
    let init = Kernel::se_ard(&vec![1.0; train.d()], 1.0);
    let dataset = name;
    let total = setup.total_fits();
    let mut done = 0;
    let mut rows = Vec::new();
    for &m in &setup.ms {
        for method in [SparseMethod::Vfe, SparseMethod::Fitc] {
            let t0 = std::time::Instant::now();
            let cfg = SparseConfig {
                seed,
                lbfgs: LbfgsConfig {
                    max_iter: setup.max_iter,
                    ..Default::default()
                },
                snap: Some(HyperGrid::default()),
                ..Default::default()
            };
            let (gp, _, _) = train_sparse(&init, 1.0, x.as_ref(), &y, m, method, &cfg)?;
            let secs = t0.elapsed().as_secs_f64();
            let post = gp.posterior(x.as_ref(), &y)?;
            let (c, tg, mse) = score(&post, &x, &y, &xt, &yt, &loss)?;
            let name = if method == SparseMethod::Vfe {
                "vfe"
            } else {
                "fitc"
            };
            rows.push(row(dataset, m, name, &c, tg, mse, gp.noise_variance, secs));
            done += 1;
            progress(done, total);
        }
        for (kind, name) in [
            (BoundKind::Kl, "kl-pac-sgp"),
            (BoundKind::Sqrt, "sqrt-pac-sgp"),
        ] {
            let t0 = std::time::Instant::now();
            let fit = fit_pac_sgp(
                &init,
                1.0,
                x.as_ref(),
                &y,
                m,
                1.0,
                loss,
                super::PAPER_DELTA,
                kind,
                seed,
                InducingInit::KMeans,
                setup.max_iter,
            )?;
            let secs = t0.elapsed().as_secs_f64();
            let post = fit.gp.posterior_with_alpha(x.as_ref(), &y, 1.0)?;
            let (c, tg, mse) = score(&post, &x, &y, &xt, &yt, &loss)?;
            rows.push(row(
                dataset,
                m,
                name,
                &c,
                tg,
                mse,
                fit.gp.noise_variance,
                secs,
            ));
            done += 1;
            progress(done, total);
        }
    }
    Ok(rows)
}

fn row(
    dataset: &str,
    m: usize,
    method: &str,
    c: &Certificate,
    tg: f64,
    mse: f64,
    noise: f64,
    secs: f64,
) -> InducingRow {
    InducingRow {
        dataset: dataset.into(),
        m,
        method: method.into(),
        bound: c.bound,
        bound_sqrt: c.bound_sqrt,
        train_gibbs: c.empirical_risk,
        test_gibbs: tg,
        test_mse: mse,
        kl_over_n: c.kl / c.n as f64,
        noise_variance: noise,
        seconds: secs,
    }
}
