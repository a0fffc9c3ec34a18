//! Duplicated rows (issue 43 item 7): the leave-one-group-out downdate equals refits without
//! the whole group (exact GP, VFE, FITC); jackknife+ on a copied sample no longer collapses
//! (leaving out single rows gives residuals of about 0, leaving out groups intervals at least
//! half as wide as the one-copy fit's; the coverage on boston is in pacgp-cli's
//! `tests/duplicates.rs`); CV+ keeps identical inputs in one fold; the fit, the model file and
//! the certificate count the duplicated rows, and a file without the count loads and
//! certifies to the same bits.

use faer::Mat;
use pacgp::data::{input_groups, Dataset, Duplicates};
use pacgp::fit::fit;
use pacgp::kernel::Kernel;
use pacgp::linalg::JitterPolicy;
use pacgp::loo::LooDowndate;
use pacgp::model::{CertifyOptions, FittedModel, IntervalRecord, Task};
use pacgp::regression::exact::ExactGp;
use pacgp::spec::{FitOptions, IntervalMethod, IntervalScore, MethodName};

mod common;
use common::{rows, toy_regression, vfe_and_fitc};

/// `toy_regression(n)` with ties appended: rows 0–3 copied (same target), rows 4 and 5 with another
/// target, row 6 three more times.
fn with_ties(n: usize) -> (Mat<f64>, Vec<f64>) {
    let (x, y) = toy_regression(n, 0);
    let extra = [0, 1, 2, 3, 4, 5, 6, 6, 6];
    let idx: Vec<usize> = (0..n).chain(extra).collect();
    let mut yy: Vec<f64> = idx.iter().map(|&i| y[i]).collect();
    yy[n + 4] += 0.7;
    yy[n + 5] -= 0.4;
    (rows(&x, &idx), yy)
}

/// For every row i, a refit without i's whole group (or without i alone) predicts
/// `(mean, noisy variance)` at `[x_i; xs]`; compared with the downdate's training residuals,
/// variances and its predictions at xs.
fn assert_group_refits(
    d: &LooDowndate,
    x: &Mat<f64>,
    y: &[f64],
    xs: &Mat<f64>,
    groups: &[Vec<usize>],
    predict: impl Fn(Mat<f64>, Vec<f64>, Mat<f64>) -> (Vec<f64>, Vec<f64>),
    tol: f64,
) {
    let n = y.len();
    let at = d.at(xs.as_ref()).unwrap();
    for i in 0..n {
        let out: Vec<usize> = groups
            .iter()
            .find(|g| g.contains(&i))
            .cloned()
            .unwrap_or_else(|| vec![i]);
        let keep: Vec<usize> = (0..n).filter(|j| !out.contains(j)).collect();
        let pts = Mat::from_fn(1 + xs.nrows(), x.ncols(), |r, c| {
            if r == 0 {
                x[(i, c)]
            } else {
                xs[(r - 1, c)]
            }
        });
        let (m, v) = predict(rows(x, &keep), keep.iter().map(|&j| y[j]).collect(), pts);
        let t = &d.training;
        assert!(
            (t.residual[i] - (y[i] - m[0])).abs() < tol,
            "residual {i}: {} vs {}",
            t.residual[i],
            y[i] - m[0]
        );
        assert!((t.var[i] - v[0]).abs() < tol * v[0], "variance {i}");
        for j in 0..xs.nrows() {
            assert!((at.mean[(i, j)] - m[j + 1]).abs() < tol, "μ_−G({i})(x_{j})");
            assert!(
                (at.var[(i, j)] - v[j + 1]).abs() < tol * v[j + 1],
                "σ²_−G({i})(x_{j})"
            );
        }
    }
}

/// Exact GP: leaving a group out in closed form (the block form of GPML eq. 5.12) equals
/// refitting without it, at two noise levels, to 1e-9.
#[test]
fn exact_group_downdate_equals_refits_without_the_group() {
    let (x, y) = with_ties(30);
    let groups = input_groups(x.as_ref());
    assert_eq!(groups.len(), 7);
    assert_eq!(groups[6], vec![6, 36, 37, 38]);
    let (xs, _) = toy_regression(6, 500);
    // Test inputs that are training inputs too (a tie at prediction time).
    let xs = Mat::from_fn(8, 2, |r, c| if r < 6 { xs[(r, c)] } else { x[(r - 6, c)] });
    let kernel = Kernel::se_ard(&[0.8, 1.3], 1.2);
    for noise in [0.02, 0.4] {
        let gp = common::exact_fit(&kernel, noise, &x, &y);
        let post = gp.posterior().unwrap();
        let d = LooDowndate::exact_by_groups(&post, noise, &groups).unwrap();
        assert_eq!(d.n_groups(), 7);
        assert_group_refits(
            &d,
            &x,
            &y,
            &xs,
            &groups,
            |xk, yk, at| {
                let g = ExactGp::fit(kernel.clone(), noise, xk, yk, &JitterPolicy::none()).unwrap();
                let p = g.predict(at.as_ref()).unwrap();
                (p.mean, p.noisy_var)
            },
            1e-9,
        );
    }
}

/// For VFE and FITC at fixed (θ, σ², Z = the rows `z` of `x`): the block downdate with each
/// of `groupings` equals the sparse posterior refitted without the group, to 1e-9.
fn assert_sparse_group_refits(
    x: &Mat<f64>,
    y: &[f64],
    xs: &Mat<f64>,
    z: &[usize],
    groupings: &[Vec<Vec<usize>>],
) {
    let z = rows(x, z);
    for gp in vfe_and_fitc(&z) {
        let method = gp.method;
        let post = gp.posterior(x.as_ref(), y).unwrap();
        let a = method.alpha_s();
        for groups in groupings {
            let d = LooDowndate::sparse_by_groups(&post, 0.05, a, x.as_ref(), y, groups);
            assert_group_refits(
                &d.unwrap(),
                x,
                y,
                xs,
                groups,
                |xk, yk, at| {
                    let p = gp.posterior(xk.as_ref(), &yk).unwrap();
                    let m = p.predict(at.as_ref()).unwrap();
                    (m.mean, m.var.iter().map(|v| v + 0.05).collect())
                },
                1e-9,
            );
        }
    }
}

/// Sparse regression at fixed (θ, σ², Z): the block downdate equals the sparse posterior
/// refitted without the group, for VFE and FITC, to 1e-9.
#[test]
fn sparse_group_downdate_equals_refits_without_the_group() {
    let (x, y) = with_ties(35);
    let groups = input_groups(x.as_ref());
    let (xs, _) = toy_regression(5, 700);
    assert_sparse_group_refits(&x, &y, &xs, &[0, 5, 11, 17, 23, 31], &[groups]);
}

/// Groups larger than the M = 6 inducing inputs take the Woodbury form of `κ_G` (|G|·M
/// memory instead of |G|²): fifteen copies of one row, and a group of ten rows with
/// different inputs (`W_G` of full rank M), beside small groups in the dense form; each
/// equals the sparse posterior refitted without the group, for VFE and FITC, to 1e-9.
#[test]
fn sparse_groups_larger_than_the_basis_equal_refits_without_them() {
    let (x, y) = toy_regression(30, 0);
    let idx: Vec<usize> = (0..30).chain(std::iter::repeat_n(6, 14)).collect();
    let mut y: Vec<f64> = idx.iter().map(|&i| y[i]).collect();
    for (k, t) in y[30..].iter_mut().enumerate() {
        *t += 0.05 * (k as f64 - 7.0);
    }
    let x = rows(&x, &idx);
    let ties = input_groups(x.as_ref());
    assert_eq!(ties, vec![[vec![6], (30..44).collect::<Vec<_>>()].concat()]);
    let mixed = vec![(10..20).collect::<Vec<_>>(), vec![0, 1, 2], ties[0].clone()];
    let (xs, _) = toy_regression(4, 700);
    assert_sparse_group_refits(&x, &y, &xs, &[0, 5, 11, 17, 23, 29], &[ties, mixed]);
}

/// Bad groups (a single row, a row twice, a row past N) are typed errors.
#[test]
fn bad_groups_are_refused() {
    let (x, y) = toy_regression(10, 0);
    let gp = ExactGp::fit(Kernel::se_iso(1.0, 1.0), 0.1, x, y, &JitterPolicy::none()).unwrap();
    let post = gp.posterior().unwrap();
    for bad in [
        vec![vec![3]],
        vec![vec![1, 2], vec![2, 5]],
        vec![vec![4, 10]],
    ] {
        let e = LooDowndate::exact_by_groups(&post, 0.1, &bad).unwrap_err();
        assert!(matches!(e, pacgp::Error::ShapeMismatch { .. }), "{e}");
    }
}

fn copies(data: &Dataset, k: usize) -> Dataset {
    let idx: Vec<usize> = (0..k).flat_map(|_| 0..data.n()).collect();
    data.subset(&idx)
}

fn jackknife_plus() -> FitOptions {
    FitOptions {
        intervals: Some(IntervalMethod::JackknifePlus),
        interval_score: Some(IntervalScore::Absolute),
        ..Default::default()
    }
}

/// Every row written four times: leaving out single rows would give LOO residuals of 0 (a copy
/// stays in), so jackknife+ would collapse onto the mean; leaving out groups, the 90%
/// intervals are about as wide as the one-copy fit's, and the statement records the copies
/// and says the guarantee assumes independent rows.
#[test]
fn copied_rows_do_not_collapse_jackknife_plus() {
    let (x, y) = toy_regression(40, 0);
    let one = Dataset::new(x, y.iter().map(|v| 3.0 * v + 10.0).collect()).unwrap();
    let four = copies(&one, 4);
    let test = toy_regression(30, 900).0;
    let spec = jackknife_plus().check(MethodName::Gpr).unwrap();
    let (m1, m4) = (
        fit(&spec, &one, None).unwrap(),
        fit(&spec, &four, None).unwrap(),
    );
    // Without groups, the copies' residuals vanish next to the grouped ones.
    let Task::Regression { noise_variance, .. } = &m4.task else {
        panic!("a regressor")
    };
    let single = LooDowndate::exact(m4.posterior().unwrap(), *noise_variance).unwrap();
    let grouped = LooDowndate::exact_by_groups(
        m4.posterior().unwrap(),
        *noise_variance,
        &input_groups(m4.posterior().unwrap().basis.as_ref()),
    )
    .unwrap();
    let size = |r: &[f64]| r.iter().map(|v| v.abs()).sum::<f64>() / r.len() as f64;
    assert!(
        size(&single.training.residual) < 0.2 * size(&grouped.training.residual),
        "single {} grouped {}",
        size(&single.training.residual),
        size(&grouped.training.residual)
    );
    let (a, b) = (
        m1.predict_intervals(test.as_ref(), 0.1).unwrap(),
        m4.predict_intervals(test.as_ref(), 0.1).unwrap(),
    );
    let width = |iv: &pacgp::conformal::PredictionIntervals| {
        (0..test.nrows())
            .map(|j| iv.upper[j] - iv.lower[j])
            .sum::<f64>()
            / test.nrows() as f64
    };
    // Not collapsed: at least half as wide as the one-copy fit's (the copies' ML-II fit is
    // sharper, so its leave-one-group-out residuals can be larger; here about 3×). Coverage on
    // an exchangeable test set is checked on boston (pacgp-cli's tests/duplicates.rs).
    let (w1, w4) = (width(&a), width(&b));
    assert!(w4 > 0.5 * w1, "one copy {w1}, four {w4}");
    assert!(a.statement.duplicates.is_none());
    assert_eq!(b.statement.duplicates.map(|d| d.rows), Some(120));
    assert!(b.statement.statement.contains("assumes independent rows"));
}

/// CV+ keeps every group of identical inputs in one fold; without ties its folds are
/// plain k-fold's (pinned in `tests/conformal.rs`).
#[test]
fn cv_plus_keeps_identical_inputs_in_one_fold() {
    let (x, y) = with_ties(30);
    let data = Dataset::new(x, y).unwrap();
    let spec = FitOptions {
        intervals: Some(IntervalMethod::CvPlus { folds: 4 }),
        ..Default::default()
    }
    .check(MethodName::Gpr)
    .unwrap();
    let model = fit(&spec, &data, None).unwrap();
    let record = common::interval_record(&model);
    let IntervalRecord::CvPlus { fold_of, .. } = record else {
        panic!("CV+")
    };
    for g in input_groups(data.x.as_ref()) {
        assert!(g.iter().all(|&i| fold_of[i] == fold_of[g[0]]), "{g:?}");
    }
    // Kept ties make these folds unequal; the statement says so (Thm. 4 assumes equal folds).
    let mut size = [0usize; 4];
    fold_of.iter().for_each(|&f| size[f] += 1);
    let (least, most) = (size.iter().min().unwrap(), size.iter().max().unwrap());
    assert!(most > &(least + 1), "{size:?}");
    let iv = model.predict_intervals(data.x.as_ref(), 0.1).unwrap();
    let said = format!("its 4 folds hold {least} to {most} rows");
    assert!(
        iv.statement.statement.contains(&said),
        "{}",
        iv.statement.statement
    );
    // The folds depend on the sample, not on the file's row order.
    let rev: Vec<usize> = (0..data.n()).rev().collect();
    let again = fit(&spec, &data.subset(&rev), None).unwrap();
    let r2 = common::interval_record(&again);
    let IntervalRecord::CvPlus { fold_of: f2, .. } = r2 else {
        panic!("CV+")
    };
    for i in 0..data.n() {
        assert_eq!(fold_of[i], f2[data.n() - 1 - i], "row {i}");
    }
}

/// The fit counts the duplicated rows into the model (and its file), `certify` counts them
/// again from the sample it is given; a file written before the count (no `duplicates`)
/// loads and certifies to the same bits.
#[test]
fn the_count_is_in_the_model_file_and_the_certificate() {
    let (x, y) = toy_regression(25, 3);
    let data = copies(&Dataset::new(x, y).unwrap(), 3);
    let spec = FitOptions {
        epsilon: Some(0.5),
        ..Default::default()
    }
    .check(MethodName::PacGp)
    .unwrap();
    let model = fit(&spec, &data, None).unwrap();
    let want = Duplicates::of(&data);
    assert_eq!((want.rows, want.groups, want.same_inputs), (50, 25, 50));
    assert_eq!(model.duplicates, Some(want));
    let text = serde_json::to_string(&model).unwrap();
    let back = FittedModel::from_json(&text, "model").unwrap();
    assert_eq!(back.duplicates, Some(want));
    let opts = CertifyOptions::default();
    let cert = back.certify(&data, &opts).unwrap();
    assert_eq!(cert[0].duplicates, Some(want));
    let json = serde_json::to_value(&cert[0]).unwrap();
    assert_eq!(json["duplicates"]["rows"], 50);
    // An older file: the same model without the field (both read from text, so the site
    // form's factor is rebuilt the same way).
    let mut old: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert!(old.as_object_mut().unwrap().remove("duplicates").is_some());
    let old = FittedModel::from_json(&old.to_string(), "old").unwrap();
    assert_eq!(old.duplicates, None);
    let again = old.certify(&data, &opts).unwrap();
    assert_eq!(
        serde_json::to_string(&again).unwrap(),
        serde_json::to_string(&cert).unwrap()
    );
    // A count that does not fit the sample size is refused on load.
    let mut bad: serde_json::Value = serde_json::from_str(&text).unwrap();
    bad["duplicates"]["n"] = 7.into();
    assert!(FittedModel::from_json(&bad.to_string(), "bad").is_err());
}
