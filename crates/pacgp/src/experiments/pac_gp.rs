//! Seed 004's full-GP experiments: bound, Gibbs risks, MSE and KL/N against ε on boston
//! (Fig. 2), and the 1-D predictive of PAC-GP on Snelson's data for three ε (Fig. 1).
//!
//! Protocol (docs/math.md §6.1): random 80/20 splits; inputs and target standardised (here with
//! training statistics only, not the whole set as the reference code did); ε in standardised
//! target units; δ = 0.01; isotropic SE kernel (the reference code's default, ln|Θ| = 2 ln 1201);
//! every model's θ snapped onto the grid before it is scored, each with its own posterior.

use serde::{Deserialize, Serialize};

use crate::bounds::{BoundKind, ConfidenceTerm, HyperGrid};
use crate::certificate::{Certificate, CertificateSpec, GibbsLoss, PenaltyTerm};
use crate::data::{train_test_split, Dataset, Standardizer, TargetScaler};
use crate::error::Result;
use crate::kernel::Kernel;
use crate::loss::{self, RegressionLoss};
use crate::objective::pac_gp::{fit_pac_gp, PacGpConfig};
use crate::regression::exact::{fit_ml2, ExactGp, MlConfig};
use crate::regression::inducing_init::InducingInit;

/// One method on one split at one ε.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct EpsilonRow {
    /// ε (standardised target units).
    pub epsilon: f64,
    /// Repetition (split seed).
    pub rep: usize,
    /// `full-gp`, `kl-pac-gp` or `sqrt-pac-gp`.
    pub method: String,
    /// kl-form bound at the snapped θ.
    pub bound: f64,
    /// sqrt-form bound at the snapped θ.
    pub bound_sqrt: f64,
    /// Training Gibbs risk `R_S`.
    pub train_gibbs: f64,
    /// Test Gibbs risk (latent marginals).
    pub test_gibbs: f64,
    /// Test ε-band error of the posterior mean.
    pub test_bayes: f64,
    /// Test MSE of the posterior mean (standardised units).
    pub test_mse: f64,
    /// `KL(Q‖P)/N`.
    pub kl_over_n: f64,
    /// Learned σ² (standardised units).
    pub noise_variance: f64,
}

/// Standardised train/test matrices of one split.
struct Split {
    x: faer::Mat<f64>,
    y: Vec<f64>,
    xt: faer::Mat<f64>,
    yt: Vec<f64>,
}

fn split(data: &Dataset, seed: u64) -> Result<Split> {
    let (tr, te) = train_test_split(data.n(), 0.2, seed)?;
    let (train, test) = (data.subset(&tr), data.subset(&te));
    let xs = Standardizer::fit(train.x.as_ref(), &train.feature_names)?;
    let ys = TargetScaler::fit(&train.y)?;
    Ok(Split {
        x: xs.transform(train.x.as_ref())?,
        y: ys.transform(&train.y),
        xt: xs.transform(test.x.as_ref())?,
        yt: ys.transform(&test.y),
    })
}

/// ML-II settings with θ optimised in the paper grid's range and snapped onto it.
fn on_grid() -> MlConfig {
    MlConfig {
        snap: Some(HyperGrid::default()),
        ..Default::default()
    }
}

/// The paper's certificate settings: δ = 0.01, Maurer's constant, `t` hyperparameters on
/// the paper's grid.
pub(crate) fn paper_spec(t: usize) -> CertificateSpec {
    CertificateSpec::new(
        super::PAPER_DELTA,
        ConfidenceTerm::Maurer,
        vec![PenaltyTerm::grid(&HyperGrid::default(), t)],
    )
}

/// Score an exact GP at the snapped θ: the certificate on the training sample (grid penalty,
/// δ = 0.01, Maurer's constant) and the risks on the test set.
fn score(gp: &ExactGp, s: &Split, eps: f64, method: &str, rep: usize) -> Result<EpsilonRow> {
    let loss = RegressionLoss::new_epsilon_band(eps)?;
    let post = gp.posterior()?;
    let c = Certificate::of_posterior(
        &post,
        s.x.as_ref(),
        &s.y,
        &GibbsLoss::Regression(loss),
        &paper_spec(gp.kernel.n_params()),
    )?;
    let n = s.y.len();
    let m = post.predict(s.xt.as_ref())?;
    let mse = super::mean_squared_error(&m.mean, &s.yt);
    Ok(EpsilonRow {
        epsilon: eps,
        rep,
        method: method.into(),
        bound: c.bound,
        bound_sqrt: c.bound_sqrt,
        train_gibbs: c.empirical_risk,
        test_gibbs: loss::gibbs_risk_regression(&s.yt, &m, &loss)?,
        test_bayes: loss::bayes_risk_regression(&s.yt, &m, &loss)?,
        test_mse: mse,
        kl_over_n: c.kl / n as f64,
        noise_variance: gp.noise_variance,
    })
}

/// Settings of [`pac_gp_epsilon`] (seed 004 Fig. 2 on boston).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct EpsilonSettings {
    /// ε values (standardised target units).
    pub epsilons: Vec<f64>,
    /// Random 80/20 splits (seeds 0, 1, …).
    pub repetitions: usize,
}

impl EpsilonSettings {
    /// The paper's: ε ∈ {0.2, 0.4, 0.6, 0.8, 1.0}, 10 splits.
    pub fn paper() -> Self {
        Self {
            epsilons: vec![0.2, 0.4, 0.6, 0.8, 1.0],
            repetitions: 10,
        }
    }

    /// Three ε, two splits.
    pub fn quick() -> Self {
        Self {
            epsilons: vec![0.2, 0.6, 1.0],
            repetitions: 2,
        }
    }

    /// Fits one run makes (one ML-II per split, two PAC-GPs per ε and split).
    pub fn total_fits(&self) -> usize {
        self.repetitions * (1 + 2 * self.epsilons.len())
    }
}

/// Seed 004 Fig. 2: for every ε and repetition, full-GP ML-II, kl-PAC-GP and sqrt-PAC-GP.
/// `progress(done, total)` is called after each fit.
pub fn pac_gp_epsilon(
    data: &Dataset,
    settings: &EpsilonSettings,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<Vec<EpsilonRow>> {
    let (epsilons, reps) = (&settings.epsilons, settings.repetitions);
    let total = settings.total_fits();
    let mut done = 0;
    let mut rows = Vec::new();
    for rep in 0..reps {
        let s = split(data, rep as u64)?;
        let init = Kernel::se_iso(1.0, 1.0);
        // The ML-II baseline does not depend on ε: fit once per split, snap θ, score per ε.
        let (ml, _) = fit_ml2(&init, 1.0, s.x.clone(), s.y.clone(), &on_grid())?;
        done += 1;
        progress(done, total);
        for &eps in epsilons.iter() {
            rows.push(score(&ml, &s, eps, "full-gp", rep)?);
            for (kind, name) in [
                (BoundKind::Kl, "kl-pac-gp"),
                (BoundKind::Sqrt, "sqrt-pac-gp"),
            ] {
                let fit = fit_pac_gp(
                    &init,
                    1.0,
                    s.x.clone(),
                    s.y.clone(),
                    &PacGpConfig::new(eps, kind)?,
                )?;
                rows.push(score(&fit.gp, &s, eps, name, rep)?);
                done += 1;
                progress(done, total);
            }
        }
    }
    Ok(rows)
}

/// Mean of every numeric column per (method, ε).
pub fn summarise(rows: &[EpsilonRow]) -> Vec<EpsilonRow> {
    let mut keys: Vec<(String, f64)> = Vec::new();
    for r in rows {
        if !keys.iter().any(|(m, e)| *m == r.method && *e == r.epsilon) {
            keys.push((r.method.clone(), r.epsilon));
        }
    }
    keys.into_iter()
        .map(|(m, e)| {
            let g: Vec<&EpsilonRow> = rows
                .iter()
                .filter(|r| r.method == m && r.epsilon == e)
                .collect();
            let mean =
                |f: fn(&EpsilonRow) -> f64| g.iter().map(|r| f(r)).sum::<f64>() / g.len() as f64;
            EpsilonRow {
                epsilon: e,
                rep: g.len(),
                method: m,
                bound: mean(|r| r.bound),
                bound_sqrt: mean(|r| r.bound_sqrt),
                train_gibbs: mean(|r| r.train_gibbs),
                test_gibbs: mean(|r| r.test_gibbs),
                test_bayes: mean(|r| r.test_bayes),
                test_mse: mean(|r| r.test_mse),
                kl_over_n: mean(|r| r.kl_over_n),
                noise_variance: mean(|r| r.noise_variance),
            }
        })
        .collect()
}

/// Predictive curve of one model on a 1-D grid (Fig. 1).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Curve {
    /// Label, e.g. `kl-pac-gp ε=0.3` or `full-gp`.
    pub label: String,
    /// ε used for training (None for ML-II).
    pub epsilon: Option<f64>,
    /// Inputs (original units).
    pub x: Vec<f64>,
    /// Predictive mean (original units).
    pub mean: Vec<f64>,
    /// Latent standard deviation (original units).
    pub sd: Vec<f64>,
    /// Learned noise variance (original units).
    pub noise_variance: f64,
    /// `KL/N` at the snapped θ.
    pub kl_over_n: f64,
    /// kl-form bound.
    pub bound: f64,
    /// Inducing inputs (original units) of a sparse model; empty for a full GP.
    #[serde(default)]
    pub inducing: Vec<f64>,
}

/// One point of a [`Curve`], a row of the curves' CSV file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CurvePoint {
    /// The curve's label.
    pub label: String,
    /// Input.
    pub x: f64,
    /// Predictive mean.
    pub mean: f64,
    /// Latent standard deviation.
    pub sd: f64,
}

impl Curve {
    /// The curve as one row per grid point.
    pub fn points(&self) -> impl Iterator<Item = CurvePoint> + '_ {
        (0..self.x.len()).map(|i| CurvePoint {
            label: self.label.clone(),
            x: self.x[i],
            mean: self.mean[i],
            sd: self.sd[i],
        })
    }
}

/// Settings of [`pac_gp_snelson`] (seed 004 Fig. 1).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SnelsonSettings {
    /// Prediction grid (original input units).
    pub grid: Vec<f64>,
    /// ε as multiples of the ML-II noise standard deviation.
    pub multiples: Vec<f64>,
    /// Inducing inputs of the sparse kl-PAC-SGP curves (`None`: full GPs only).
    pub inducing: Option<usize>,
}

impl SnelsonSettings {
    /// 301 grid points on [−1, 7], ε = 1, 2, 4 noise sd, sparse curves with M = 10.
    pub fn paper() -> Self {
        Self {
            grid: (0..=300).map(|i| -1.0 + 8.0 * i as f64 / 300.0).collect(),
            multiples: vec![1.0, 2.0, 4.0],
            inducing: Some(10),
        }
    }
}

/// Seed 004 Fig. 1: ML-II, then for each ε (multiples of the ML-II noise standard deviation,
/// in target units) the full kl-PAC-GP and, with `inducing = Some(M)`, the sparse kl-PAC-SGP
/// (FITC form, M inducing inputs from k-means, as in the paper's figure); predictions on `grid`.
pub fn pac_gp_snelson(train: &Dataset, settings: &SnelsonSettings) -> Result<Vec<Curve>> {
    let (grid, multiples, inducing) = (&settings.grid, &settings.multiples, settings.inducing);
    let xs = Standardizer::fit(train.x.as_ref(), &train.feature_names)?;
    let ys = TargetScaler::fit(&train.y)?;
    let x = xs.transform(train.x.as_ref())?;
    let y = ys.transform(&train.y);
    let xg = xs.transform(faer::Mat::from_fn(grid.len(), 1, |i, _| grid[i]).as_ref())?;
    let init = Kernel::se_iso(1.0, 1.0);
    let (ml, _) = fit_ml2(&init, 0.1, x.clone(), y.clone(), &on_grid())?;
    let curve = |gp: &ExactGp, label: String, eps: Option<f64>| -> Result<Curve> {
        let m = gp.posterior()?.predict(xg.as_ref())?;
        let e = eps.unwrap_or(ml.noise_variance.sqrt());
        let loss = GibbsLoss::Regression(RegressionLoss::new_epsilon_band(e)?);
        let t = Certificate::of_posterior(&gp.posterior()?, x.as_ref(), &y, &loss, &paper_spec(2))?;
        Ok(Curve {
            label,
            epsilon: eps.map(|e| ys.unscale_length(e)),
            x: grid.to_vec(),
            mean: m.mean.iter().map(|v| ys.unscale_mean(*v)).collect(),
            sd: m.var.iter().map(|v| ys.unscale_var(*v).sqrt()).collect(),
            noise_variance: ys.unscale_var(gp.noise_variance),
            kl_over_n: t.kl / y.len() as f64,
            bound: t.bound,
            inducing: vec![],
        })
    };
    let mut out = vec![curve(&ml, "full-gp (ML-II)".into(), None)?];
    for &mult in multiples {
        let eps = mult * ml.noise_variance.sqrt();
        let fit = fit_pac_gp(
            &init,
            1.0,
            x.clone(),
            y.clone(),
            &PacGpConfig::new(eps, BoundKind::Kl)?,
        )?;
        out.push(curve(
            &fit.gp,
            format!("kl-pac-gp ε={:.3}", ys.unscale_length(eps)),
            Some(eps),
        )?);
        if let Some(m) = inducing {
            out.push(sparse_curve(&x, &y, &xg, &xs, &ys, grid, eps, m)?);
        }
    }
    Ok(out)
}

/// kl-PAC-SGP (FITC form, `m` k-means inducing inputs) at one ε on the 1-D grid.
fn sparse_curve(
    x: &faer::Mat<f64>,
    y: &[f64],
    xg: &faer::Mat<f64>,
    xs: &Standardizer,
    ys: &TargetScaler,
    grid: &[f64],
    eps: f64,
    m: usize,
) -> Result<Curve> {
    let fit = crate::objective::pac_sgp::fit_pac_sgp(
        &Kernel::se_iso(1.0, 1.0),
        1.0,
        x.as_ref(),
        y,
        m,
        1.0,
        RegressionLoss::new_epsilon_band(eps)?,
        super::PAPER_DELTA,
        BoundKind::Kl,
        0,
        InducingInit::KMeans,
        1000,
    )?;
    let post = fit.gp.posterior_with_alpha(x.as_ref(), y, fit.alpha_s)?;
    let pred = post.predict(xg.as_ref())?;
    let z = xs.inverse_transform(fit.gp.z.as_ref());
    Ok(Curve {
        label: format!("kl-pac-sgp M={m} ε={:.3}", ys.unscale_length(eps)),
        epsilon: Some(ys.unscale_length(eps)),
        x: grid.to_vec(),
        mean: pred.mean.iter().map(|v| ys.unscale_mean(*v)).collect(),
        sd: pred.var.iter().map(|v| ys.unscale_var(*v).sqrt()).collect(),
        noise_variance: ys.unscale_var(fit.gp.noise_variance),
        kl_over_n: fit.certificate.kl / y.len() as f64,
        bound: fit.certificate.bound,
        inducing: (0..z.nrows()).map(|i| z[(i, 0)]).collect(),
    })
}
