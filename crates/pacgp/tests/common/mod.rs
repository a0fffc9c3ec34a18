//! Small deterministic classification and regression problems shared by the integration tests.
#![allow(dead_code)] // each test binary uses its own subset

pub mod ill_conditioned;

use faer::Mat;

/// The JSON fixture `name` of `tests/fixtures/`.
pub fn fixture(name: &str) -> serde_json::Value {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name);
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// Cases of a fuzz target: `PROPTEST_CASES` if set (the long run on demand, e.g. 10⁶), else
/// `default` (a few seconds in the normal test run).
pub fn fuzz_cases(default: u32) -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Labels `sgn(sin x₁ + 0.4 x₂ + structured noise)` for 2-D inputs: not separable by a line,
/// a few labels flipped by the noise term.
pub fn toy_labels(x: &Mat<f64>) -> Vec<f64> {
    (0..x.nrows())
        .map(|i| {
            if x[(i, 0)].sin() + 0.4 * x[(i, 1)] + 0.3 * (((i * 7) % 5) as f64 - 2.0) / 2.0 > 0.0 {
                1.0
            } else {
                -1.0
            }
        })
        .collect()
}

/// `n` inputs on a scrambled grid in [−2, 2)² shifted by `shift·i` (0 repeats rows after 41),
/// with [`toy_labels`].
pub fn toy_shifted(n: usize, shift: f64) -> (Mat<f64>, Vec<f64>) {
    let x = Mat::from_fn(n, 2, |i, j| {
        (((i * 17 + j * 29) % 41) as f64 / 41.0) * 4.0 - 2.0 + shift * i as f64
    });
    let y = toy_labels(&x);
    (x, y)
}

/// [`toy_shifted`] without a shift.
pub fn toy(n: usize) -> (Mat<f64>, Vec<f64>) {
    toy_shifted(n, 0.0)
}

/// A path relative to the repository root (where the shipped data lives).
pub fn repo(p: &str) -> std::path::PathBuf {
    std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../")
        .join(p)
}

/// A data set of the repository with its last column read as classes.
pub fn classes(path: &str) -> (pacgp::data::Dataset, pacgp::data::ClassLabels) {
    let opts = pacgp::data::CsvOptions::default();
    let t =
        pacgp::data::read_training(repo(path), &opts, pacgp::data::TargetKind::Classes).unwrap();
    (t.data, t.classes.unwrap())
}

/// 60 seeded rows of Ripley's synthetic two-class training set and its labels' map.
pub fn ripley60() -> (pacgp::data::Dataset, pacgp::data::LabelMap) {
    let (cls, labels) = pacgp::data::load_csv_classification(
        repo("data/ripley-synth/synth_tr.csv"),
        &pacgp::data::CsvOptions::default(),
    )
    .unwrap();
    let rows: Vec<usize> = pacgp::data::permutation(cls.n(), 1)
        .into_iter()
        .take(60)
        .collect();
    (cls.subset(&rows), labels)
}

/// `method` with options `o` fitted on `data` with the class labels `c`.
pub fn fit_classes(
    method: pacgp::spec::MethodName,
    o: pacgp::spec::FitOptions,
    data: &pacgp::data::Dataset,
    c: &pacgp::data::ClassLabels,
) -> pacgp::model::FittedModel {
    let spec = o.check(method).unwrap();
    pacgp::fit::fit(&spec, data, c.clone()).unwrap()
}

/// Wisconsin breast cancer as shipped: the 683 complete rows, 9 raw inputs, labels ±1.
pub fn breast_cancer() -> pacgp::data::Dataset {
    let opts = pacgp::data::CsvOptions {
        drop_columns: vec!["sample_code_number".into()],
        ..Default::default()
    };
    pacgp::data::load_csv_classification(
        std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../../data/breast-cancer-wisconsin/breast_cancer_wisconsin_complete683.csv"),
        &opts,
    )
    .unwrap()
    .0
}

/// Repetition `rep` of the seed 003 §4.1 protocol on `data`: 100 training rows from the first
/// half of a seeded split, 200 test rows outside them from a second seeded permutation, and
/// both samples' inputs standardised on the training rows: `(train, test, x, x_test)`.
pub fn protocol_split(
    data: &pacgp::data::Dataset,
    rep: u64,
) -> (
    pacgp::data::Dataset,
    pacgp::data::Dataset,
    Mat<f64>,
    Mat<f64>,
) {
    let (rest, _) = pacgp::data::train_test_split(data.n(), 0.5, rep).unwrap();
    let tr = &rest[..100.min(rest.len())];
    let te: Vec<usize> = pacgp::data::permutation(data.n(), 1000 + rep)
        .into_iter()
        .filter(|i| !tr.contains(i))
        .take(200)
        .collect();
    let (train, test) = (data.subset(tr), data.subset(&te));
    let s = pacgp::data::Standardizer::fit(train.x.as_ref(), &train.feature_names).unwrap();
    let (x, xt) = (
        s.transform(train.x.as_ref()).unwrap(),
        s.transform(test.x.as_ref()).unwrap(),
    );
    (train, test, x, xt)
}

/// 2-D regression inputs on the scrambled grid of [`toy`] (no shift) and the target
/// `sin x₁ + 0.5 x₂` plus a deterministic wiggle.
pub fn toy_sine(n: usize) -> (Mat<f64>, Vec<f64>) {
    let x = Mat::from_fn(n, 2, |i, j| {
        (((i * 17 + j * 29) % 41) as f64 / 41.0) * 4.0 - 2.0
    });
    let y = (0..n)
        .map(|i| x[(i, 0)].sin() + 0.5 * x[(i, 1)] + 0.2 * (((i * 7) % 5) as f64 - 2.0) / 2.0)
        .collect();
    (x, y)
}

/// Where the PAC-SGP gradient checks start: 25 rows of [`toy_sine`], SE-ARD (0.8, 1.3; 1.4)
/// and the sparse parameters of that kernel, σ² = 0.07 and 4 inducing inputs on a line.
pub fn sparse_gradient_point() -> (Mat<f64>, Vec<f64>, pacgp::kernel::Kernel, Vec<f64>) {
    let (x, y) = toy_sine(25);
    let z = Mat::from_fn(4, 2, |a, t| -1.2 + 0.8 * a as f64 + 0.3 * t as f64);
    let k = pacgp::kernel::Kernel::se_ard(&[0.8, 1.3], 1.4);
    let p = pacgp::regression::sparse::NegSparseObjective::pack(&k, 0.07, z.as_ref());
    (x, y, k, p)
}

/// 2-D regression inputs on a scrambled grid (rows `offset..offset + n` of it) and a smooth
/// target plus a deterministic wiggle.
pub fn toy_regression(n: usize, offset: usize) -> (Mat<f64>, Vec<f64>) {
    let x = Mat::from_fn(n, 2, |i, j| {
        ((((i + offset) * 37 + j * 11) % 97) as f64 / 97.0) * 4.0 - 2.0 + 0.003 * i as f64
    });
    let y = (0..n)
        .map(|i| {
            x[(i, 0)].sin() + 0.5 * x[(i, 1)].cos() + 0.1 * (((i + offset) * 13 % 7) as f64 - 3.0)
        })
        .collect();
    (x, y)
}

/// The exact GP regressor at fixed `kernel` and noise `noise` on `(x, y)`, without jitter.
pub fn exact_fit(
    kernel: &pacgp::kernel::Kernel,
    noise: f64,
    x: &Mat<f64>,
    y: &[f64],
) -> pacgp::regression::exact::ExactGp {
    let none = pacgp::linalg::JitterPolicy::none();
    pacgp::regression::exact::ExactGp::fit(kernel.clone(), noise, x.clone(), y.to_vec(), &none)
        .unwrap()
}

/// 70 rows of a noisy sine on one input.
pub fn noisy_sine() -> pacgp::data::Dataset {
    let x = Mat::from_fn(70, 1, |i, _| i as f64 / 10.0);
    let y = (0..70)
        .map(|i| (i as f64 / 10.0).sin() + 0.3 * (((i * 13) % 7) as f64 - 3.0) / 3.0)
        .collect();
    pacgp::data::Dataset::new(x, y).unwrap()
}

/// A regressor's interval record (panics for a model without one).
pub fn interval_record(model: &pacgp::model::FittedModel) -> &pacgp::model::IntervalRecord {
    let pacgp::model::Task::Regression {
        intervals: Some(record),
        ..
    } = &model.task
    else {
        panic!("a regressor with an interval record")
    };
    record
}

/// A seeded sparse problem: `n` inputs in `d` dimensions uniform on [−2, 2), targets
/// `Σ_j sin x_j` plus uniform noise of half-width `noise`, and `m` inducing inputs likewise.
pub fn sparse_problem(
    n: usize,
    d: usize,
    m: usize,
    seed: u64,
    noise: f64,
) -> (Mat<f64>, Vec<f64>, Mat<f64>) {
    use rand::{Rng, SeedableRng};
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let x = Mat::from_fn(n, d, |_, _| rng.gen_range(-2.0..2.0_f64));
    let y = (0..n)
        .map(|i| {
            (0..d).map(|j| x[(i, j)].sin()).sum::<f64>() + noise * rng.gen_range(-1.0..1.0_f64)
        })
        .collect();
    let z = Mat::from_fn(m, d, |_, _| rng.gen_range(-2.0..2.0));
    (x, y, z)
}

/// The rows `idx` of `x`, in that order.
pub fn rows(x: &Mat<f64>, idx: &[usize]) -> Mat<f64> {
    Mat::from_fn(idx.len(), x.ncols(), |r, c| x[(idx[r], c)])
}

/// Every path (object keys, array indices) in a JSON value to a node that `keep` selects, in
/// document order, a node before its children; arrays are entered at their first 3 entries.
pub fn json_paths(
    v: &serde_json::Value,
    keep: &dyn Fn(&serde_json::Value) -> bool,
) -> Vec<Vec<String>> {
    fn walk(
        v: &serde_json::Value,
        keep: &dyn Fn(&serde_json::Value) -> bool,
        here: &mut Vec<String>,
        out: &mut Vec<Vec<String>>,
    ) {
        if keep(v) {
            out.push(here.clone());
        }
        let children: Vec<(String, &serde_json::Value)> = match v {
            serde_json::Value::Object(m) => m.iter().map(|(k, c)| (k.clone(), c)).collect(),
            serde_json::Value::Array(a) => a
                .iter()
                .take(3)
                .enumerate()
                .map(|(i, c)| (i.to_string(), c))
                .collect(),
            _ => Vec::new(),
        };
        for (key, c) in children {
            here.push(key);
            walk(c, keep, here, out);
            here.pop();
        }
    }
    let mut out = Vec::new();
    walk(v, keep, &mut Vec::new(), &mut out);
    out
}

/// A deterministic stand-in for N(0, 1) draws: the sum of 12 uniforms from a 64-bit LCG,
/// less 6.
pub fn gaussians(n: usize, seed: u64) -> Vec<f64> {
    let mut s = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
    let mut uniform = move || {
        s = s
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (s >> 11) as f64 / (1u64 << 53) as f64
    };
    (0..n)
        .map(|_| (0..12).map(|_| uniform()).sum::<f64>() - 6.0)
        .collect()
}

/// Gauss–Jordan inverse with partial pivoting and ln|det| (an oracle independent of the
/// library's Cholesky).
pub fn inverse_and_ln_det(a: &Mat<f64>) -> (Mat<f64>, f64) {
    let n = a.nrows();
    let mut m = a.clone();
    let mut inv = Mat::<f64>::identity(n, n);
    let mut ln_det = 0.0;
    for c in 0..n {
        let p = (c..n)
            .max_by(|&i, &j| m[(i, c)].abs().total_cmp(&m[(j, c)].abs()))
            .unwrap();
        for k in 0..n {
            let (t, u) = (m[(c, k)], inv[(c, k)]);
            m[(c, k)] = m[(p, k)];
            inv[(c, k)] = inv[(p, k)];
            m[(p, k)] = t;
            inv[(p, k)] = u;
        }
        let piv = m[(c, c)];
        ln_det += piv.abs().ln();
        for k in 0..n {
            m[(c, k)] /= piv;
            inv[(c, k)] /= piv;
        }
        for r in 0..n {
            if r != c {
                let f = m[(r, c)];
                for k in 0..n {
                    m[(r, k)] -= f * m[(c, k)];
                    inv[(r, k)] -= f * inv[(c, k)];
                }
            }
        }
    }
    (inv, ln_det)
}

/// [`inverse_and_ln_det`]'s inverse alone.
pub fn gauss_jordan_inverse(a: &Mat<f64>) -> Mat<f64> {
    inverse_and_ln_det(a).0
}

/// A VFE model with `m` inducing inputs, the other options at their defaults, fitted on
/// `train` through `pacgp::fit::fit`.
pub fn fit_vfe(train: &pacgp::data::Dataset, m: usize) -> pacgp::model::FittedModel {
    let spec = pacgp::spec::FitOptions {
        inducing: Some(m),
        ..Default::default()
    }
    .check(pacgp::spec::MethodName::Vfe)
    .unwrap();
    pacgp::fit::fit(&spec, train, None).unwrap()
}

/// The leave-out tests' sparse regressors at fixed hyperparameters: SE iso (0.9, 1.1),
/// σ² = 0.05 and inducing inputs `z`, as VFE (α_s = 0) and as FITC (α_s = 1).
pub fn vfe_and_fitc(z: &Mat<f64>) -> [pacgp::regression::sparse::SparseGp; 2] {
    use pacgp::regression::sparse::{SparseGp, SparseMethod};
    [SparseMethod::Vfe, SparseMethod::Fitc].map(|method| SparseGp {
        kernel: pacgp::kernel::Kernel::se_iso(0.9, 1.1),
        noise_variance: 0.05,
        z: z.clone(),
        method,
    })
}
