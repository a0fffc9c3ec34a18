//! The deployed-predictor experiment (`pacgp reproduce deployed`, issue 42): on seeded splits
//! of the shipped classification sets (two-class, and iris and wine one-vs-rest), each method
//! ([`DEPLOYED_METHODS`]) is fitted through the one entry point [`crate::fit::fit`] on the
//! training part and certified there, and the held-out part scores both predictors the
//! certificates name — the Gibbs certificate against the held-out Gibbs error, the
//! derandomised certificate on `predict`'s labels ([`crate::certificate::deployed`]) against
//! `predict`'s held-out error — with the split-conformal prediction sets of the same method
//! (half the training part calibrates) at level `1 − α`: held-out coverage and mean size. [`summarise`] gives means, the ratio of the
//! deployed certificate to the deployed test error, and whether every certificate held.
//!
//! Beside the certificate, each row carries the comparison of the C-bound (Germain et al.
//! 2015, PAC-Bound 1) with the certificate's forms
//! ([`crate::model::FittedModel::deployed_forms_with_c_bound`]): the least bound of each form
//! on the grid enlarged by the C-bound, priced `ln` of the enlarged grid; the summary gives
//! each form's median ratio to `predict`'s held-out error and the splits the C-bound won.

use serde::{Deserialize, Serialize};

use crate::certificate::deployed::DerandomisedForm;
use crate::data::{train_test_split, Dataset, TrainingLabels};
use crate::error::{Error, Result};
use crate::model::{CertificateReport, CertifyOptions, FittedModel};
use crate::spec::{FitOptions, IntervalMethod, LooRequest, MethodName};

use super::mean_se;

/// The shipped sets of the experiment: two-class (the names of
/// [`super::classification::load_uci_sets`]) and multi-class (of
/// [`super::multiclass::load_multiclass_set`]; digits' ten classes are left to `reproduce
/// multiclass`).
pub const DEPLOYED_SETS: [&str; 6] = [
    "breast-cancer",
    "crabs",
    "house-votes",
    "ripley",
    "iris",
    "wine",
];

/// A set of the experiment with the labels its fit takes (none for the two-class sets, whose
/// targets are ±1; the classes for iris and wine).
pub fn load_deployed_set(dir: &std::path::Path, name: &str) -> Result<(Dataset, TrainingLabels)> {
    if super::multiclass::MULTICLASS_SETS.contains(&name) {
        let (data, classes) = super::multiclass::load_multiclass_set(dir, name)?;
        return Ok((data, TrainingLabels::Classes(classes)));
    }
    let mut sets = super::classification::load_uci_sets(dir, &[name.to_string()])?;
    let (_, data) = sets
        .pop()
        .ok_or_else(|| Error::Unsupported(format!("unknown dataset '{name}' for deployed")))?;
    Ok((data, TrainingLabels::None))
}

/// The methods, by their CLI names: Laplace, EP and the SVM (dense), and the sparse variational
/// classifier.
pub const DEPLOYED_METHODS: [MethodName; 4] = [
    MethodName::Laplace,
    MethodName::Ep,
    MethodName::Svm,
    MethodName::Svgp,
];

/// One method on one split.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DeployedRow {
    /// Data set name.
    pub dataset: String,
    /// Method (CLI name).
    pub method: String,
    /// Seed of the split (and of the sets' calibration split).
    pub seed: u64,
    /// Training rows.
    pub n_train: usize,
    /// Held-out rows.
    pub n_test: usize,
    /// The certificate on the Gibbs classifier.
    pub gibbs_bound: f64,
    /// The Gibbs classifier's held-out error.
    pub test_gibbs: f64,
    /// The derandomised certificate on `predict`'s labels.
    pub deployed_bound: f64,
    /// Which form of it was least (`disagreement` or `divided`; a multi-class vote's
    /// `first_order`, `disagreement` or `tandem`).
    pub deployed_form: String,
    /// The scale c of the posterior mean it was taken at.
    pub deployed_scale: f64,
    /// `predict`'s error on the training part.
    pub train_error: f64,
    /// `predict`'s held-out error.
    pub test_error: f64,
    /// Held-out coverage of the split-conformal sets at level `1 − α`.
    pub set_coverage: f64,
    /// Their mean size (labels per set).
    pub set_size: f64,
    /// The test-set certificate on `predict`'s labels of the method fitted with
    /// `certify_holdout` ([`DeployedSettings::holdout`]): the binomial tail on the rows the
    /// fit kept out of the training part.
    pub holdout_bound: f64,
    /// That model's held-out error (on the split's held-out part, as `test_error`).
    pub holdout_test_error: f64,
    /// The comparison of issue 42: the disagreement form's least bound on the grid enlarged
    /// by the C-bound (priced `ln` of the enlarged grid).
    pub enlarged_disagreement: f64,
    /// The divided form's there (a binary classifier's grid only; NaN otherwise).
    pub enlarged_divided: f64,
    /// The first-order form's there (a multi-class vote's grid only; NaN otherwise).
    pub enlarged_first_order: f64,
    /// The tandem form's there (a multi-class vote's grid only; NaN otherwise).
    pub enlarged_tandem: f64,
    /// The C-bound's least bound there (PAC-Bound 1 of Germain et al. 2015).
    pub c_bound: f64,
    /// The scale c of the posterior mean the C-bound was taken at (1 for a multi-class vote).
    pub c_bound_scale: f64,
}

/// The comparison's bounds of one fit: the least of each form, keyed by its JSON name, and
/// the C-bound's scale.
struct Enlarged {
    forms: Vec<(String, f64)>,
    c_bound_scale: f64,
}

impl Enlarged {
    /// The comparison on the training part of `split` for `model`.
    fn of(model: &FittedModel, split: &Split<'_>) -> Result<Self> {
        let forms = model
            .deployed_forms_with_c_bound(split.train, &certify_options())?
            .ok_or_else(|| Error::Unsupported("no C-bound comparison for this model".into()))?;
        let mut out = Self {
            forms: Vec::new(),
            c_bound_scale: f64::NAN,
        };
        for c in forms {
            let parts = c.derandomised.as_ref().ok_or_else(|| {
                Error::Unsupported("the comparison's forms are derandomised".into())
            })?;
            let name =
                serde_json::to_value(parts.form).map_err(|e| Error::Unsupported(e.to_string()))?;
            if parts.form == DerandomisedForm::CBound {
                out.c_bound_scale = parts.scale;
            }
            out.forms
                .push((name.as_str().unwrap_or_default().into(), c.value));
        }
        Ok(out)
    }

    /// The least bound of the form named `name` (NaN if the grid has none).
    fn get(&self, name: &str) -> f64 {
        self.forms
            .iter()
            .find(|(n, _)| n == name)
            .map_or(f64::NAN, |(_, v)| *v)
    }
}

/// Settings of [`deployed_rows`].
#[derive(Clone, Debug)]
pub struct DeployedSettings {
    /// Seeded splits per data set.
    pub splits: usize,
    /// Held-out fraction of every split.
    pub test_fraction: f64,
    /// Miscoverage α of the sets.
    pub alpha: f64,
    /// The data sets.
    pub datasets: Vec<String>,
    /// The methods.
    pub methods: Vec<MethodName>,
    /// Inducing inputs of the sparse classifier.
    pub inducing: usize,
    /// Fraction of the training part the holdout fit keeps out for its test-set certificate.
    pub holdout: f64,
}

impl DeployedSettings {
    /// The full table: 10 splits of every set, every method.
    pub fn full() -> Self {
        Self {
            splits: 10,
            test_fraction: 0.3,
            alpha: 0.1,
            datasets: DEPLOYED_SETS.iter().map(|s| s.to_string()).collect(),
            methods: DEPLOYED_METHODS.to_vec(),
            inducing: 32,
            holdout: 0.2,
        }
    }

    /// A smoke run: 2 splits of crabs and ripley, Laplace and the SVM.
    pub fn quick() -> Self {
        Self {
            splits: 2,
            datasets: vec!["crabs".into(), "ripley".into()],
            methods: vec![MethodName::Laplace, MethodName::Svm],
            ..Self::full()
        }
    }

    /// These settings with the holdout fit keeping out a fraction `f` in (0, 1) of each
    /// training part ([`Error::InvalidParameter`] otherwise), checked before any fit.
    pub fn with_holdout(self, f: f64) -> Result<Self> {
        crate::error::check_open_unit("holdout", f)?;
        Ok(Self { holdout: f, ..self })
    }
}

/// What a fit in the experiment adds to the method's defaults.
#[derive(Clone, Copy, PartialEq)]
enum Variant {
    /// Nothing: the model the derandomised certificate covers.
    Plain,
    /// Split-conformal sets (`split-conformal:0.5`).
    Sets,
    /// A part kept out for the test-set certificate (`certify_holdout`).
    Holdout,
}

/// The fit options of a method in the experiment.
fn options(method: MethodName, settings: &DeployedSettings, seed: u64, v: Variant) -> FitOptions {
    FitOptions {
        seed: Some(seed),
        inducing: (method == MethodName::Svgp).then_some(settings.inducing),
        intervals: (v == Variant::Sets).then_some(IntervalMethod::SplitConformal { fraction: 0.5 }),
        certify_holdout: (v == Variant::Holdout).then_some(settings.holdout),
        ..Default::default()
    }
}

/// The holdout fit's test-set certificate on `predict`'s labels and its held-out error.
fn holdout_scores(
    method: MethodName,
    settings: &DeployedSettings,
    seed: u64,
    split: &Split<'_>,
) -> Result<(f64, f64)> {
    let model = split.fit(method, options(method, settings, seed, Variant::Holdout))?;
    let report = split.certify(&model)?;
    let bound = report.deployed.as_ref().map(|d| d.value).ok_or_else(|| {
        Error::Unsupported(format!(
            "'{method}' with a holdout gave no deployed certificate"
        ))
    })?;
    let test_error = model
        .evaluate(split.test, None)?
        .error_rate
        .unwrap_or(f64::NAN);
    Ok((bound, test_error))
}

/// The options of every certificate of the experiment: no leave-one-out estimate.
fn certify_options() -> CertifyOptions {
    CertifyOptions {
        loo: LooRequest::None,
        ..Default::default()
    }
}

/// A split of a set: its training and held-out parts and the labels of its fit.
struct Split<'a> {
    train: &'a Dataset,
    test: &'a Dataset,
    labels: &'a TrainingLabels,
}

impl Split<'_> {
    /// A fit on the training part through the one entry point.
    fn fit(&self, method: MethodName, o: FitOptions) -> Result<FittedModel> {
        let spec = o.check(method).map_err(Error::Spec)?;
        crate::fit::fit(&spec, self.train, self.labels.clone())
    }

    /// A model's certificate on the training part (no leave-one-out estimate).
    fn certify(&self, model: &FittedModel) -> Result<CertificateReport> {
        Ok(model.certify(self.train, &certify_options())?.remove(0))
    }

    /// A target's class as the prediction sets index it: ±1 are the classes −1, +1 in that
    /// order, K classes are coded by their index.
    fn class(&self, y: f64) -> usize {
        match self.labels {
            TrainingLabels::Classes(_) => y as usize,
            _ => usize::from(y > 0.0),
        }
    }
}

/// The held-out coverage and mean size of the method's split-conformal sets at `alpha`.
fn set_scores(
    method: MethodName,
    settings: &DeployedSettings,
    seed: u64,
    split: &Split<'_>,
) -> Result<(f64, f64)> {
    let model = split.fit(method, options(method, settings, seed, Variant::Sets))?;
    let test = split.test;
    let sets = model.predict_sets(test.x.as_ref(), settings.alpha)?;
    let class = |y: f64| split.class(y);
    let covered = sets
        .sets
        .iter()
        .zip(&test.y)
        .filter(|(s, y)| s.contains(&class(**y)))
        .count();
    let size: usize = sets.sets.iter().map(Vec::len).sum();
    let n = test.n() as f64;
    Ok((covered as f64 / n, size as f64 / n))
}

/// One method on one split: fit, certify on the training part, score on the held-out part.
fn row(
    name: &str,
    method: MethodName,
    settings: &DeployedSettings,
    seed: u64,
    split: &Split<'_>,
) -> Result<DeployedRow> {
    let (train, test) = (split.train, split.test);
    let model = split.fit(method, options(method, settings, seed, Variant::Plain))?;
    let report = split.certify(&model)?;
    let deployed = report.deployed.as_ref().ok_or_else(|| {
        Error::Unsupported(format!(
            "'{method}' gave no certificate on its deployed predictor"
        ))
    })?;
    let parts = deployed.derandomised.as_ref().ok_or_else(|| {
        Error::Unsupported("the deployed certificate is not the derandomised one".into())
    })?;
    let eval = model.evaluate(test, None)?;
    let (set_coverage, set_size) = set_scores(method, settings, seed, split)?;
    let (holdout_bound, holdout_test_error) = holdout_scores(method, settings, seed, split)?;
    let form = serde_json::to_value(parts.form).map_err(|e| Error::Unsupported(e.to_string()))?;
    let enlarged = Enlarged::of(&model, split)?;
    Ok(DeployedRow {
        dataset: name.into(),
        method: method.to_string(),
        seed,
        n_train: train.n(),
        n_test: test.n(),
        gibbs_bound: report.certificate.bound,
        test_gibbs: eval.gibbs_risk.unwrap_or(f64::NAN),
        deployed_bound: deployed.value,
        deployed_form: form.as_str().unwrap_or_default().into(),
        deployed_scale: parts.scale,
        train_error: deployed.error_rate,
        test_error: eval.error_rate.unwrap_or(f64::NAN),
        set_coverage,
        set_size,
        holdout_bound,
        holdout_test_error,
        enlarged_disagreement: enlarged.get("disagreement"),
        enlarged_divided: enlarged.get("divided"),
        enlarged_first_order: enlarged.get("first_order"),
        enlarged_tandem: enlarged.get("tandem"),
        c_bound: enlarged.get("c_bound"),
        c_bound_scale: enlarged.c_bound_scale,
    })
}

/// Every method on the split of `data` (fitted with `labels`) given by `seed`.
pub fn deployed_rows(
    name: &str,
    (data, labels): (&Dataset, &TrainingLabels),
    seed: u64,
    settings: &DeployedSettings,
) -> Result<Vec<DeployedRow>> {
    let (tr, te) = train_test_split(data.n(), settings.test_fraction, seed)?;
    let (train, test) = (data.subset(&tr), data.subset(&te));
    let split = Split {
        train: &train,
        test: &test,
        labels,
    };
    settings
        .methods
        .iter()
        .map(|&m| row(name, m, settings, seed, &split))
        .collect()
}

/// Means over the splits of one method on one set.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DeployedSummary {
    /// Data set name.
    pub dataset: String,
    /// Method.
    pub method: String,
    /// Splits.
    pub splits: usize,
    /// Mean Gibbs certificate.
    pub gibbs_bound: f64,
    /// Mean held-out Gibbs error.
    pub test_gibbs: f64,
    /// Mean deployed certificate.
    pub deployed_bound: f64,
    /// Its standard error over the splits.
    pub deployed_bound_se: f64,
    /// Mean held-out error of `predict`.
    pub test_error: f64,
    /// Mean deployed certificate over mean deployed test error.
    pub ratio: f64,
    /// Splits on which the deployed certificate is below `predict`'s held-out error.
    pub deployed_below_test: usize,
    /// Splits on which the Gibbs certificate is below the held-out Gibbs error.
    pub gibbs_below_test: usize,
    /// Mean set coverage.
    pub set_coverage: f64,
    /// Mean set size.
    pub set_size: f64,
    /// Mean test-set certificate of the holdout fit.
    pub holdout_bound: f64,
    /// Mean held-out error of the holdout fit's `predict`.
    pub holdout_test_error: f64,
    /// Mean holdout certificate over that mean error.
    pub holdout_ratio: f64,
    /// Splits on which the holdout certificate is below its model's held-out error.
    pub holdout_below_test: usize,
    /// The comparison (issue 42): the median over the splits of the disagreement form's bound
    /// on the enlarged grid over `predict`'s held-out error.
    pub median_ratio_disagreement: f64,
    /// The same for the divided form (NaN for a multi-class vote).
    pub median_ratio_divided: f64,
    /// The same for the first-order form (NaN for a binary classifier).
    pub median_ratio_first_order: f64,
    /// The same for the tandem form (NaN for a binary classifier).
    pub median_ratio_tandem: f64,
    /// The same for the C-bound.
    pub median_ratio_c_bound: f64,
    /// Splits on which the C-bound is below every other form of the enlarged grid.
    pub c_bound_wins: usize,
}

/// The median over `rows` of a bound over `predict`'s held-out error (NaN where the bound is).
fn median_ratio(rows: &[&DeployedRow], bound: fn(&DeployedRow) -> f64) -> f64 {
    let mut ratios: Vec<f64> = rows.iter().map(|r| bound(r) / r.test_error).collect();
    if ratios.iter().any(|r| r.is_nan()) {
        return f64::NAN;
    }
    crate::metrics::median(&mut ratios).unwrap_or(f64::NAN)
}

/// Whether the C-bound is below every other form of a row's enlarged grid.
fn c_bound_won(r: &DeployedRow) -> bool {
    let others = [
        r.enlarged_disagreement,
        r.enlarged_divided,
        r.enlarged_first_order,
        r.enlarged_tandem,
    ];
    others.iter().all(|o| o.is_nan() || r.c_bound < *o)
}

/// One summary per (set, method), in the rows' order.
pub fn summarise(rows: &[DeployedRow]) -> Vec<DeployedSummary> {
    let mut keys: Vec<(String, String)> = Vec::new();
    for r in rows {
        let key = (r.dataset.clone(), r.method.clone());
        if !keys.contains(&key) {
            keys.push(key);
        }
    }
    keys.into_iter()
        .map(|(dataset, method)| {
            let of: Vec<&DeployedRow> = rows
                .iter()
                .filter(|r| r.dataset == dataset && r.method == method)
                .collect();
            let mean =
                |f: fn(&DeployedRow) -> f64| mean_se(&of.iter().map(|r| f(r)).collect::<Vec<_>>());
            let (deployed_bound, deployed_bound_se) = mean(|r| r.deployed_bound);
            let test_error = mean(|r| r.test_error).0;
            let holdout_bound = mean(|r| r.holdout_bound).0;
            let holdout_test_error = mean(|r| r.holdout_test_error).0;
            DeployedSummary {
                splits: of.len(),
                gibbs_bound: mean(|r| r.gibbs_bound).0,
                test_gibbs: mean(|r| r.test_gibbs).0,
                deployed_bound,
                deployed_bound_se,
                test_error,
                ratio: deployed_bound / test_error,
                deployed_below_test: of
                    .iter()
                    .filter(|r| r.deployed_bound < r.test_error)
                    .count(),
                gibbs_below_test: of.iter().filter(|r| r.gibbs_bound < r.test_gibbs).count(),
                set_coverage: mean(|r| r.set_coverage).0,
                set_size: mean(|r| r.set_size).0,
                holdout_bound,
                holdout_test_error,
                holdout_ratio: holdout_bound / holdout_test_error,
                holdout_below_test: of
                    .iter()
                    .filter(|r| r.holdout_bound < r.holdout_test_error)
                    .count(),
                median_ratio_disagreement: median_ratio(&of, |r| r.enlarged_disagreement),
                median_ratio_divided: median_ratio(&of, |r| r.enlarged_divided),
                median_ratio_first_order: median_ratio(&of, |r| r.enlarged_first_order),
                median_ratio_tandem: median_ratio(&of, |r| r.enlarged_tandem),
                median_ratio_c_bound: median_ratio(&of, |r| r.c_bound),
                c_bound_wins: of.iter().filter(|r| c_bound_won(r)).count(),
                dataset,
                method,
            }
        })
        .collect()
}
