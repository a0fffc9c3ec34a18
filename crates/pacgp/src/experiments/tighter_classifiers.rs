//! The classifier rows of the `reproduce tighter-bounds` table (issue 15): over seeded 80/20
//! splits of a classification set, the bound-selected Laplace certificate (the reference,
//! `ln 9` for the choice among the nine fixed SE kernels), PAC-GPC (the same nine kernels, the
//! sites optimised for the bound), the data-dependent prior (fraction menu, `ln 3`, the sites
//! of B optimised for the bound: PAC-GPC against `P_A`) and the best combination, the split
//! prior with Catoni's bound at a λ fixed on part A (docs/math.md §9.1): bound, train
//! and test Gibbs error, test 0-1 error of the Bayes classifier, KL and penalty; means and
//! standard errors by [`summarise_classifiers`], with two checks against the held-out part:
//! the raw held-out Gibbs error minus the bound, and its 99% lower confidence limit
//! ([`held_out_lower_limit`]) minus the bound — only the second, when positive, contradicts a
//! certificate (137 held-out points give the mean a standard error ≈ 0.017 at 4%). Split-prior
//! methods take options in their names ([`SPLIT_PRIOR_OPTIONS`]).
//! Every method certifies the noise-free latent Gibbs classifier `sgn f`, probit likelihood,
//! δ and Maurer's constant alike.

use faer::MatRef;
use serde::{Deserialize, Serialize};

use crate::bounds::{held_out_lower_limit, CatoniLambda, DEFAULT_DELTA};
use crate::certificate::{Certificate, CertificateSpec, GibbsClassifier, GibbsLoss};
use crate::data::{train_test_split, Dataset, Standardizer};
use crate::error::{Error, Result};
use crate::fit::classifier_candidates;
use crate::inference::laplace::laplace;
use crate::kernel::Kernel;
use crate::likelihood::Likelihood;
use crate::loss;
use crate::objective::gpc_split::{
    fit_classifier_split_prior, SplitFraction, SplitPriorConfig, PRIOR_SCALES,
};
use crate::objective::pac_gpc::{fit_pac_gpc, PacGpcConfig, PacGpcTheta};
use crate::posterior::GaussianPosterior;
use crate::select::Menu;

use super::{mean_se, worst};

/// One method on one split.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TighterClassifierRow {
    /// Data set name.
    pub dataset: String,
    /// `laplace-bound` (reference), `pac-gpc`, or `split-prior` with options
    /// ([`split_prior_variant`]).
    pub method: String,
    /// Seed of the 80/20 split (and of the prior's split).
    pub seed: u64,
    /// Points the bound is about (N, or N_B for the split prior).
    pub n_bound: usize,
    /// The certified bound on the Gibbs error.
    pub bound: f64,
    /// Empirical Gibbs error on the bound's sample.
    pub train_gibbs: f64,
    /// Gibbs error on the held-out 20%.
    pub test_gibbs: f64,
    /// Points of the held-out part.
    #[serde(default)]
    pub n_test: usize,
    /// The held-out Gibbs error's lower confidence limit at level `1 − HELD_OUT_DELTA`
    /// ([`held_out_lower_limit`]): the true Gibbs risk is at least this, w.p. ≥ 99%.
    #[serde(default)]
    pub test_gibbs_lower: f64,
    /// 0-1 error of `sgn μ` on the held-out 20%.
    pub test_error: f64,
    /// `KL(Q‖P)` in nats.
    pub kl: f64,
    /// Union-bound penalty in nats.
    pub penalty: f64,
    /// The split prior's fraction of part A.
    pub fraction: Option<f64>,
    /// Catoni's λ (fixed on part A), for the Catoni rows.
    pub lambda: Option<f64>,
    /// The split prior's covariance scale t (1 unless chosen on A).
    pub prior_scale: Option<f64>,
}

/// What a split-prior row records of its split.
#[derive(Clone, Copy, Debug)]
struct SplitInfo {
    fraction: f64,
    lambda: Option<f64>,
    prior_scale: f64,
}

/// Settings of [`tighter_classifier_rows`].
#[derive(Clone, Debug)]
pub struct TighterClassifierConfig {
    /// δ, confidence constant and optimiser of PAC-GPC and the split prior.
    pub pac: PacGpcConfig,
    /// Kernel structure and start of ML-II on the split prior's part A (`None`: SE-ARD
    /// with unit lengthscales on standardised inputs).
    pub split_kernel: Option<Kernel>,
    /// Held-out fraction of every split.
    pub test_fraction: f64,
    /// How the Catoni rows fix λ (`None`: no Catoni rows).
    pub catoni: Option<CatoniLambda>,
    /// The methods to run, by name ([`CLASSIFIER_METHODS`]).
    pub methods: Vec<String>,
}

/// Every method of the classifier rows, the reference first: the bound-selected Laplace
/// classifier, PAC-GPC, the split prior (kl, Maurer), the split prior with Catoni's λ fixed on
/// A, the same with the prior's covariance scale chosen on A from [`PRIOR_SCALES`], the same
/// with the kernel structure (SE-ARD or SE iso) chosen on A, and that with both directions of
/// the split (`ln 6` for the menu's three fractions times two directions).
pub const CLASSIFIER_METHODS: [&str; 7] = [
    "laplace-bound",
    "pac-gpc",
    "split-prior",
    "split-prior+catoni",
    "split-prior+catoni+scale",
    "split-prior+catoni+scale+iso",
    "split-prior+catoni+scale+iso+swap",
];

/// The options of a split-prior method name (`split-prior+catoni+scale+iso`, in any order):
/// `catoni` (λ as [`TighterClassifierConfig::catoni`], fixed on A), `scale` (the prior's
/// covariance scale from [`PRIOR_SCALES`]), `mean` (its mean scale from [`MEAN_SCALES`]),
/// `iso` (SE iso beside the configured kernel), all three chosen on a nested split of A; `ep`
/// (EP for `P_A`), `half` (F = 0.5 fixed in advance instead of the menu), `swap` (both
/// directions of the split, `ln 2`).
pub const SPLIT_PRIOR_OPTIONS: [&str; 7] = ["catoni", "scale", "mean", "iso", "ep", "half", "swap"];

/// The mean-scale menu of the `+mean` option: s ∈ {1, 1.5, 2, 3}, chosen on A.
pub const MEAN_SCALES: [f64; 4] = [1.0, 1.5, 2.0, 3.0];

/// The split-prior configuration a method name asks for (`None`: not a split-prior name, an
/// unknown option, or `catoni` without [`TighterClassifierConfig::catoni`]).
pub fn split_prior_variant(
    method: &str,
    seed: u64,
    cfg: &TighterClassifierConfig,
) -> Option<SplitPriorConfig> {
    let mut parts = method.split('+');
    if parts.next() != Some("split-prior") {
        return None;
    }
    let mut c = SplitPriorConfig {
        bound: cfg.pac.clone(),
        ..SplitPriorConfig::new(SplitFraction::Menu, seed)
    };
    for option in parts {
        match option {
            "catoni" => c.catoni = Some(cfg.catoni?),
            "scale" => c.prior_scales = PRIOR_SCALES.to_vec(),
            "mean" => c.mean_scales = MEAN_SCALES.to_vec(),
            "iso" => c.alt_kernels = vec![Kernel::se_iso(1.0, 1.0)],
            "ep" => c.ep_prior = true,
            "half" => c.fraction = SplitFraction::Fixed(0.5),
            "swap" => c.both_directions = true,
            _ => return None,
        }
    }
    Some(c)
}

impl Default for TighterClassifierConfig {
    /// PAC-GPC defaults (δ = 0.01, Maurer), SE-ARD on A, 80/20 splits, Catoni's λ from A.
    fn default() -> Self {
        Self {
            pac: PacGpcConfig::default(),
            split_kernel: None,
            test_fraction: 0.2,
            catoni: Some(CatoniLambda::FromPartA),
            methods: CLASSIFIER_METHODS.iter().map(|m| m.to_string()).collect(),
        }
    }
}

/// The classification sets of the `reproduce tighter-bounds` table.
pub const TIGHTER_CLASSIFIER_SETS: [&str; 2] = ["breast-cancer", "crabs"];

/// Settings of the classifier rows of `reproduce tighter-bounds` (what the CLI runs and
/// records).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TighterClassifierSettings {
    /// Seeded 80/20 splits per set (seeds 0..reps).
    pub reps: usize,
    /// Confidence δ.
    pub delta: f64,
    /// L-BFGS iterations of every site optimisation.
    pub max_iter: usize,
    /// L-BFGS iterations when screening each of PAC-GPC's nine kernels.
    pub screen_iter: usize,
    /// How the Catoni row fixes λ.
    pub catoni: CatoniLambda,
}

impl TighterClassifierSettings {
    /// The table: 10 splits, δ = 0.01, 500 iterations (40 to screen), λ from A.
    pub fn full() -> Self {
        Self {
            reps: 10,
            delta: DEFAULT_DELTA,
            max_iter: 500,
            screen_iter: 40,
            catoni: CatoniLambda::FromPartA,
        }
    }

    /// Two splits, 60 iterations (8 to screen).
    pub fn quick() -> Self {
        Self {
            reps: 2,
            max_iter: 60,
            screen_iter: 8,
            ..Self::full()
        }
    }

    /// The experiment's configuration.
    pub fn config(&self) -> TighterClassifierConfig {
        let mut pac = PacGpcConfig {
            delta: self.delta,
            screen_iter: self.screen_iter,
            ..Default::default()
        };
        pac.lbfgs.max_iter = self.max_iter;
        TighterClassifierConfig {
            pac,
            catoni: Some(self.catoni),
            ..Default::default()
        }
    }

    /// Split seeds `0..reps`.
    pub fn seeds(&self) -> Vec<u64> {
        (0..self.reps as u64).collect()
    }
}

/// Means over the splits per (dataset, method), with standard errors.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TighterClassifierSummary {
    /// Data set name.
    pub dataset: String,
    /// Method name.
    pub method: String,
    /// Number of splits.
    pub reps: usize,
    /// Mean bound.
    pub bound: f64,
    /// Its standard error.
    pub bound_se: f64,
    /// Mean of (bound / reference bound) − 1 over the splits (reference: `laplace-bound`).
    pub rel_to_reference: f64,
    /// Mean test Gibbs error.
    pub test_gibbs: f64,
    /// Its standard error.
    pub test_gibbs_se: f64,
    /// Mean test 0-1 error of the Bayes classifier.
    pub test_error: f64,
    /// Its standard error.
    pub test_error_se: f64,
    /// Mean training Gibbs error (on the bound's sample).
    pub train_gibbs: f64,
    /// Mean KL.
    pub kl: f64,
    /// Mean penalty.
    pub penalty: f64,
    /// Mean sample size of the certificate.
    pub n_bound: f64,
    /// Largest test Gibbs error minus bound over the splits (raw: the held-out mean scatters
    /// by its standard error, ≈ 0.017 for 137 points at 4%, so it may exceed a valid bound).
    pub worst_test_minus_bound: f64,
    /// Largest lower confidence limit (99%) of the test Gibbs error minus bound over the
    /// splits: > 0 means the held-out part contradicts a certificate.
    #[serde(default)]
    pub worst_test_lower_minus_bound: f64,
}

pub use super::HELD_OUT_DELTA;

/// Name of the reference method of the classifier rows.
pub const CLASSIFIER_REFERENCE: &str = "laplace-bound";

/// Per (dataset, method): means, standard errors, the bound relative to the reference on the
/// same split and the worst test-error excess over the bound.
pub fn summarise_classifiers(rows: &[TighterClassifierRow]) -> Vec<TighterClassifierSummary> {
    super::groups_in_order(rows, |r| (r.dataset.clone(), r.method.clone()))
        .into_iter()
        .map(|((d, m), g)| {
            let col =
                |f: fn(&TighterClassifierRow) -> f64| g.iter().map(|r| f(r)).collect::<Vec<_>>();
            let rel: Vec<f64> = g
                .iter()
                .filter_map(|r| {
                    rows.iter()
                        .find(|q| {
                            q.dataset == d && q.seed == r.seed && q.method == CLASSIFIER_REFERENCE
                        })
                        .map(|q| r.bound / q.bound - 1.0)
                })
                .collect();
            let (bound, bound_se) = mean_se(&col(|r| r.bound));
            let (test_gibbs, test_gibbs_se) = mean_se(&col(|r| r.test_gibbs));
            let (test_error, test_error_se) = mean_se(&col(|r| r.test_error));
            TighterClassifierSummary {
                dataset: d,
                method: m,
                reps: g.len(),
                bound,
                bound_se,
                rel_to_reference: mean_se(&rel).0,
                test_gibbs,
                test_gibbs_se,
                test_error,
                test_error_se,
                train_gibbs: mean_se(&col(|r| r.train_gibbs)).0,
                kl: mean_se(&col(|r| r.kl)).0,
                penalty: mean_se(&col(|r| r.penalty)).0,
                n_bound: mean_se(&col(|r| r.n_bound as f64)).0,
                worst_test_minus_bound: worst(&g, |r| r.test_gibbs - r.bound),
                worst_test_lower_minus_bound: worst(&g, |r| r.test_gibbs_lower - r.bound),
            }
        })
        .collect()
}

/// A row from a certificate and the posterior's test marginals.
fn row(
    dataset: &str,
    method: &str,
    seed: u64,
    c: &Certificate,
    post: &GaussianPosterior,
    xt: MatRef<'_, f64>,
    yt: &[f64],
    split: Option<SplitInfo>,
) -> Result<TighterClassifierRow> {
    let m = post.predict(xt)?;
    let loss = GibbsLoss::Classification(GibbsClassifier {
        bias: 0.0,
        noise_slope: None,
    });
    let test_gibbs = loss.empirical_risk(yt, &m)?;
    Ok(TighterClassifierRow {
        dataset: dataset.into(),
        method: method.into(),
        seed,
        n_bound: c.n,
        bound: c.bound,
        train_gibbs: c.empirical_risk,
        test_gibbs,
        n_test: yt.len(),
        test_gibbs_lower: held_out_lower_limit(test_gibbs, yt.len(), HELD_OUT_DELTA)?,
        test_error: loss::bayes_error_classification(yt, &m, 0.0)?,
        kl: c.kl,
        penalty: c.penalty,
        fraction: split.map(|s| s.fraction),
        lambda: split.and_then(|s| s.lambda),
        prior_scale: split.map(|s| s.prior_scale),
    })
}

/// The bound-selected Laplace classifier: the lowest certificate among the nine candidates.
fn laplace_reference(
    x: MatRef<'_, f64>,
    y: &[f64],
    lik: &Likelihood,
    cfg: &PacGpcConfig,
) -> Result<(GaussianPosterior, Certificate)> {
    let menu = Menu::charged(classifier_candidates(x.ncols()), "kernel σ_f²·SE(l)");
    let loss = GibbsLoss::Classification(GibbsClassifier::latent(lik));
    let chosen = menu.by_bound(|k, price| {
        let spec = CertificateSpec::new(cfg.delta, cfg.term, vec![price.clone()]);
        let fit = laplace(k, lik, x, y, &cfg.laplace)?;
        let c = Certificate::of_posterior(&fit.posterior, x, y, &loss, &spec)?;
        let bound = c.bound;
        Ok(((fit.posterior, c), bound))
    })?;
    Ok(chosen.value)
}

/// The three methods on seeded 80/20 splits of `data` (raw inputs, ±1 labels).
pub fn tighter_classifier_rows(
    name: &str,
    data: &Dataset,
    seeds: &[u64],
    cfg: &TighterClassifierConfig,
) -> Result<Vec<TighterClassifierRow>> {
    crate::data::check_binary_labels(&data.y)?;
    if let Some(bad) = cfg.methods.iter().find(|m| {
        !matches!(m.as_str(), "laplace-bound" | "pac-gpc")
            && split_prior_variant(m, 0, cfg).is_none()
    }) {
        return Err(Error::Unsupported(format!(
            "unknown classifier method '{bad}' (use {}, or split-prior with options {})",
            CLASSIFIER_METHODS.join(", "),
            SPLIT_PRIOR_OPTIONS.join(", ")
        )));
    }
    let runs = |m: &str| cfg.methods.iter().any(|x| x == m);
    let lik = Likelihood::probit();
    let classifier = GibbsClassifier::latent(&lik);
    let mut rows = Vec::new();
    for &seed in seeds {
        let (tr, te) = train_test_split(data.n(), cfg.test_fraction, seed)?;
        let (train, test) = (data.subset(&tr), data.subset(&te));
        // Reference and PAC-GPC: inputs standardised on the training part.
        let scaler = Standardizer::fit(train.x.as_ref(), &train.feature_names)?;
        let (x, xt) = (
            scaler.transform(train.x.as_ref())?,
            scaler.transform(test.x.as_ref())?,
        );
        if runs("laplace-bound") {
            let (post, c) = laplace_reference(x.as_ref(), &train.y, &lik, &cfg.pac)?;
            let r = row(
                name,
                "laplace-bound",
                seed,
                &c,
                &post,
                xt.as_ref(),
                &test.y,
                None,
            )?;
            rows.push(r);
        }
        if runs("pac-gpc") {
            let theta = PacGpcTheta::Candidates(crate::plan::classifier_menu(x.ncols()));
            let fit = fit_pac_gpc(&theta, &lik, x.as_ref(), &train.y, classifier, &cfg.pac)?;
            let (c, post) = (&fit.certificate, &fit.posterior);
            rows.push(row(
                name,
                "pac-gpc",
                seed,
                c,
                post,
                xt.as_ref(),
                &test.y,
                None,
            )?);
        }
        // The split prior standardises on its own part A.
        let kernel = cfg
            .split_kernel
            .clone()
            .unwrap_or_else(|| Kernel::se_ard(&vec![1.0; data.d()], 1.0));
        let variants = cfg
            .methods
            .iter()
            .filter_map(|m| split_prior_variant(m, seed, cfg).map(|c| (m.as_str(), c)));
        for (method, split_cfg) in variants {
            let s = fit_classifier_split_prior(&kernel, &lik, &train, classifier, &split_cfg)?;
            let xs = s.x_scaler.transform(test.x.as_ref())?;
            let split = Some(SplitInfo {
                fraction: s.fraction,
                lambda: s.lambda,
                prior_scale: s.prior_scale,
            });
            let (c, post) = (&s.certificate, &s.posterior);
            rows.push(row(
                name,
                method,
                seed,
                c,
                post,
                xs.as_ref(),
                &test.y,
                split,
            )?);
        }
    }
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hand_row(method: &str, seed: u64, bound: f64, test_gibbs: f64) -> TighterClassifierRow {
        TighterClassifierRow {
            dataset: "d".into(),
            method: method.into(),
            seed,
            n_bound: 300,
            bound,
            train_gibbs: 0.03,
            test_gibbs,
            n_test: 137,
            test_gibbs_lower: held_out_lower_limit(test_gibbs, 137, HELD_OUT_DELTA).unwrap(),
            test_error: 0.03,
            kl: 1.0,
            penalty: 0.0,
            fraction: None,
            lambda: None,
            prior_scale: None,
        }
    }

    /// The summary's two checks at hand values: the raw excess 0.0954 − 0.0928 is positive,
    /// the 99% lower limit of 0.0954 on 137 points (0.037093211199, a Python bisection of
    /// `kl(0.0954‖p) = ln(100)/137`) is well below the bound.
    #[test]
    fn summary_reports_the_raw_excess_and_the_lower_limit() {
        let rows = [
            hand_row(CLASSIFIER_REFERENCE, 0, 0.11, 0.03),
            hand_row("split-prior", 0, 0.0928, 0.0954),
            hand_row("split-prior", 1, 0.09, 0.02),
        ];
        let s = summarise_classifiers(&rows);
        let split = &s[1];
        assert!((split.worst_test_minus_bound - (0.0954 - 0.0928)).abs() < 1e-15);
        let low = crate::special::kl_inverse_lower(0.0954, 100f64.ln() / 137.0);
        assert!((split.worst_test_lower_minus_bound - (low - 0.0928)).abs() < 1e-15);
        assert!((low - 0.037_093_211_199).abs() < 1e-11, "{low}");
        assert!(
            (s[0].worst_test_lower_minus_bound - (rows[0].test_gibbs_lower - 0.11)).abs() < 1e-15
        );
    }

    /// Method names: the options set the fields they name, unknown ones are refused.
    #[test]
    fn split_prior_names_parse_to_their_options() {
        let cfg = TighterClassifierConfig::default();
        let c =
            split_prior_variant("split-prior+catoni+scale+half+swap+iso+mean", 4, &cfg).unwrap();
        assert_eq!(c.fraction, SplitFraction::Fixed(0.5));
        assert!(c.both_directions && !c.ep_prior && c.catoni.is_some());
        assert_eq!(c.prior_scales, PRIOR_SCALES.to_vec());
        assert_eq!(c.mean_scales, MEAN_SCALES.to_vec());
        assert_eq!((c.alt_kernels.len(), c.seed), (1, 4));
        let plain = split_prior_variant("split-prior", 0, &cfg).unwrap();
        assert_eq!(plain.fraction, SplitFraction::Menu);
        assert!(plain.catoni.is_none() && !plain.both_directions);
        assert!(split_prior_variant("split-prior+nope", 0, &cfg).is_none());
        assert!(split_prior_variant("pac-gpc", 0, &cfg).is_none());
        let bad = TighterClassifierConfig {
            methods: vec!["split-prior+nope".into()],
            ..Default::default()
        };
        let d = Dataset::new(faer::Mat::zeros(4, 1), vec![1.0, -1.0, 1.0, -1.0]).unwrap();
        assert!(tighter_classifier_rows("d", &d, &[0], &bad).is_err());
    }
}
