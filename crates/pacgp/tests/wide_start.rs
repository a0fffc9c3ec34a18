//! Where ML-II starts on wide inputs (issue 43, item 4): above `WIDE_INPUTS` inputs gpr starts
//! every stationary lengthscale at the median distance between the standardised rows, where
//! the start 1 leaves the evidence flat and the optimiser stops at once; the rule computes the
//! median it says, and a wide fit moves from its start to a better evidence than the old one.
//! Wide fits stop by the stall rule (`WIDE_STALL`) near the evidence of a run without it;
//! fits on `WIDE_INPUTS` inputs or fewer run as before, bit for bit.

mod common;
use common::gaussians;
use faer::Mat;
use pacgp::data::subsample;
use pacgp::data::Standardizer;
use pacgp::fit::fit;
use pacgp::kernel::start::{
    median_distance, wide_pretrain, wide_stall, wide_start, MEDIAN_ROWS, WIDE_INPUTS,
    WIDE_PRETRAIN_ROWS, WIDE_STALL,
};
use pacgp::kernel::Kernel;
use pacgp::optim::{LbfgsConfig, Termination};
use pacgp::prelude::*;
use pacgp::regression::exact::{fit_ml2, MlConfig};

/// Every pairwise distance of the rows of `x`, sorted, and their median by the textbook rule.
fn brute_force_median(x: &Mat<f64>, rows: &[usize]) -> f64 {
    let mut d = Vec::new();
    for (a, &i) in rows.iter().enumerate() {
        for &j in &rows[a + 1..] {
            let s: f64 = (0..x.ncols())
                .map(|t| (x[(i, t)] - x[(j, t)]).powi(2))
                .sum();
            d.push(s.sqrt());
        }
    }
    d.sort_by(f64::total_cmp);
    let n = d.len();
    match n % 2 {
        1 => d[n / 2],
        _ => 0.5 * (d[n / 2 - 1] + d[n / 2]),
    }
}

/// Three points on a line at 0, 3 and 4: distances 3, 4, 1, median 3 (an odd count); four
/// points at 0, 1, 3 and 7: distances 1, 3, 7, 2, 6, 4, median (3 + 4)/2 (an even count).
#[test]
fn median_distance_on_tiny_inputs_is_the_middle_pairwise_distance() {
    let three = Mat::from_fn(3, 1, |i, _| [0.0, 3.0, 4.0][i]);
    assert_eq!(median_distance(three.as_ref(), 0), Some(3.0));
    let four = Mat::from_fn(4, 1, |i, _| [0.0, 1.0, 3.0, 7.0][i]);
    assert_eq!(median_distance(four.as_ref(), 0), Some(3.5));
    let planar = Mat::from_fn(5, 2, |i, t| ((i * 3 + t * 7) % 5) as f64 - 0.5 * t as f64);
    let all: Vec<usize> = (0..5).collect();
    let want = brute_force_median(&planar, &all);
    assert!((median_distance(planar.as_ref(), 0).unwrap() - want).abs() < 1e-12);
}

/// Fewer than two rows, or more than half the pairs identical, give no scale.
#[test]
fn median_distance_without_a_scale_is_none() {
    assert_eq!(median_distance(Mat::<f64>::zeros(1, 3).as_ref(), 0), None);
    let copies = Mat::from_fn(5, 2, |i, _| if i == 4 { 1.0 } else { 0.0 });
    assert_eq!(median_distance(copies.as_ref(), 0), None);
}

/// Above `MEDIAN_ROWS` rows the median is over the seeded subsample the doc names.
#[test]
fn median_distance_of_many_rows_is_over_the_seeded_subsample() {
    let n = MEDIAN_ROWS + 37;
    let x = Mat::from_fn(n, 2, |i, t| {
        ((i * 7919 + t * 104_729) % 1013) as f64 / 101.3
    });
    let rows = subsample(n, MEDIAN_ROWS, 5).unwrap();
    let want = brute_force_median(&x, &rows);
    assert!((median_distance(x.as_ref(), 5).unwrap() - want).abs() < 1e-12);
}

/// 150 rows of 40 inputs; the target depends on the first two (smoothly) plus a little noise.
fn wide_table() -> Dataset {
    let (n, d) = (150, 40);
    let z = gaussians(n * d + n, 11);
    let x = Mat::from_fn(n, d, |i, t| z[i * d + t]);
    let y = (0..n)
        .map(|i| (1.5 * x[(i, 0)]).sin() + 0.5 * x[(i, 1)] + 0.05 * z[n * d + i])
        .collect();
    Dataset::new(x, y).unwrap()
}

/// Inputs at or below `WIDE_INPUTS`, or a kernel with no lengthscale, keep their own start;
/// above, every stationary lengthscale (grouped, ARD, in a sum) starts at the median distance.
#[test]
fn wide_start_applies_only_above_the_threshold_and_to_stationary_kernels() {
    let z = gaussians(30 * (WIDE_INPUTS + 1), 3);
    let narrow = Mat::from_fn(30, WIDE_INPUTS, |i, t| z[i * WIDE_INPUTS + t]);
    let k = Kernel::from_spec("se-ard", WIDE_INPUTS).unwrap();
    assert!(wide_start(&k, narrow.as_ref(), 0).is_none());
    let d = WIDE_INPUTS + 1;
    let wide = Mat::from_fn(30, d, |i, t| z[i * d + t]);
    let linear = Kernel::from_spec("linear", d).unwrap();
    assert!(wide_start(&linear, wide.as_ref(), 0).is_none());
    let groups = Kernel::groups_spec("se", &[1, 10, 10]);
    for spec in ["se-ard", groups.as_str(), "matern52 + linear"] {
        let k = Kernel::from_spec(&format!("{spec} + const"), d).unwrap();
        let (started, l) = wide_start(&k, wide.as_ref(), 0).unwrap();
        assert_eq!(Some(l), median_distance(wide.as_ref(), 0));
        let mut expected = k.clone();
        let theta: Vec<f64> = k
            .params()
            .iter()
            .zip(k.param_names())
            .map(|(&t, name)| match name.contains("lengthscale") {
                true => l.ln(),
                false => t,
            })
            .collect();
        expected.set_params(&theta).unwrap();
        assert_eq!(started, expected, "{spec}");
    }
}

/// gpr on a 40-input table: the fit notes its start at the median distance of the
/// standardised inputs, moves away from it (more than 3 iterations) and ends with a higher
/// evidence than ML-II from the old start (every lengthscale 1, where the evidence is flat).
#[test]
fn a_wide_fit_moves_from_its_start_to_a_better_evidence_than_the_old_start() {
    let data = wide_table();
    let spec = FitOptions::default().check(MethodName::Gpr).unwrap();
    let model = fit(&spec, &data, None).unwrap();
    let x = Standardizer::fit(data.x.as_ref(), &data.feature_names)
        .unwrap()
        .transform(data.x.as_ref())
        .unwrap();
    let l = median_distance(x.as_ref(), spec.seed).unwrap();
    let note = format!("lengthscales started at {l:.4}");
    assert!(
        model.report.notes.iter().any(|n| n.starts_with(&note)),
        "{:?}",
        model.report.notes
    );
    let optimiser = model.report.optimiser.as_ref().unwrap();
    assert!(optimiser.iterations > 3, "{optimiser:?}");
    let evidence = model.report.objective.unwrap();

    let y = pacgp::data::TargetScaler::fit_column(&data.y, "y")
        .unwrap()
        .transform(&data.y);
    let old_start = Kernel::from_spec(pacgp::spec::DEFAULT_KERNEL, data.d()).unwrap();
    let ml = MlConfig {
        snap: spec.grid(),
        ..Default::default()
    };
    let (old, _) = fit_ml2(&old_start, 0.1, x, y, &ml).unwrap();
    assert!(
        evidence > old.log_marginal_likelihood() + 10.0,
        "from the median start {evidence}, from 1 {}",
        old.log_marginal_likelihood()
    );
}

/// 200 rows of 60 one-hot-like inputs: 4 Gaussian columns and 8 categorical ones of 7 levels
/// each (one-hot, the first level the most common); the target depends on two of the numeric
/// columns and on the first categorical one, plus a little noise.
fn one_hot_table() -> Dataset {
    let (n, numeric, groups, levels) = (200, 4, 8, 7);
    let d = numeric + groups * levels;
    let z = gaussians(n * (numeric + groups + 1), 23);
    let row = |i: usize| &z[i * (numeric + groups + 1)..(i + 1) * (numeric + groups + 1)];
    let level = |v: f64| ((v.abs() * 3.0) as usize).min(levels - 1);
    let x = Mat::from_fn(n, d, |i, t| match t < numeric {
        true => row(i)[t],
        false => {
            let (g, l) = ((t - numeric) / levels, (t - numeric) % levels);
            f64::from(u8::from(level(row(i)[numeric + g]) == l))
        }
    });
    let shift = [0.0, 0.8, -0.6, 0.4, -0.3, 0.5, -0.9];
    let y = (0..n)
        .map(|i| {
            let r = row(i);
            (1.5 * r[0]).sin() + 0.5 * r[1] + shift[level(r[numeric])] + 0.1 * r[numeric + groups]
        })
        .collect();
    Dataset::new(x, y).unwrap()
}

/// gpr on 60 one-hot-like inputs stops by the stall rule, with the report saying why, at an
/// evidence within 1 nat (a Bayes factor of e) of ML-II from the same start run without the
/// rule, which takes more iterations.
#[test]
fn a_wide_fit_stalls_near_the_evidence_of_a_run_without_the_rule() {
    let data = one_hot_table();
    assert!(data.d() > WIDE_INPUTS);
    let spec = FitOptions::default().check(MethodName::Gpr).unwrap();
    let model = fit(&spec, &data, None).unwrap();
    let optimiser = model.report.optimiser.as_ref().unwrap();
    assert_eq!(optimiser.termination, Termination::Stalled, "{optimiser:?}");
    let window = format!("over the last {} iterations", WIDE_STALL.iterations);
    assert!(optimiser.message.contains(&window), "{}", optimiser.message);
    let evidence = model.report.objective.unwrap();

    let (x, y) = standardised(&data);
    let kernel = Kernel::from_spec(pacgp::spec::DEFAULT_KERNEL, data.d()).unwrap();
    let (start, _) = wide_start(&kernel, x.as_ref(), spec.seed).unwrap();
    let ml = MlConfig {
        snap: spec.grid(),
        ..Default::default()
    };
    let (capped, report) = fit_ml2(&start, 0.1, x, y, &ml).unwrap();
    assert!(report.iterations > optimiser.iterations, "{report:?}");
    let gap = capped.log_marginal_likelihood() - evidence;
    assert!(
        gap < 1.0,
        "stalled at {evidence}, run on to {}",
        capped.log_marginal_likelihood()
    );
}

/// The stall rule applies above `WIDE_INPUTS` inputs only: a gpr fit on exactly `WIDE_INPUTS`
/// inputs is, bit for bit, ML-II with the optimiser's default settings (no stall rule) from
/// the kernel's own start.
#[test]
fn a_fit_at_the_threshold_runs_as_before_bit_for_bit() {
    assert_eq!(wide_stall(WIDE_INPUTS), None);
    assert_eq!(wide_stall(WIDE_INPUTS + 1), Some(WIDE_STALL));
    assert_eq!(LbfgsConfig::default().stall, None);
    let (n, d) = (120, WIDE_INPUTS);
    let z = gaussians(n * d + n, 5);
    let x = Mat::from_fn(n, d, |i, t| z[i * d + t]);
    let y = (0..n)
        .map(|i| (1.5 * x[(i, 0)]).sin() + 0.5 * x[(i, 1)] + 0.05 * z[n * d + i])
        .collect();
    let data = Dataset::new(x, y).unwrap();
    let spec = FitOptions::default().check(MethodName::Gpr).unwrap();
    let model = fit(&spec, &data, None).unwrap();
    let optimiser = model.report.optimiser.as_ref().unwrap();
    assert_ne!(optimiser.termination, Termination::Stalled);

    let (x, y) = standardised(&data);
    let kernel = Kernel::from_spec(pacgp::spec::DEFAULT_KERNEL, d).unwrap();
    let ml = MlConfig {
        snap: spec.grid(),
        ..Default::default()
    };
    let (plain, report) = fit_ml2(&kernel, 0.1, x, y, &ml).unwrap();
    assert_eq!(
        model.report.objective.unwrap().to_bits(),
        plain.log_marginal_likelihood().to_bits()
    );
    assert_eq!(optimiser.params, report.params);
    assert_eq!(optimiser.iterations, report.iterations);
}

/// A sample's inputs and targets on the scale gpr fits them on (both standardised).
fn standardised(data: &Dataset) -> (Mat<f64>, Vec<f64>) {
    let x = Standardizer::fit(data.x.as_ref(), &data.feature_names)
        .unwrap()
        .transform(data.x.as_ref())
        .unwrap();
    let y = pacgp::data::TargetScaler::fit_column(&data.y, "y")
        .unwrap()
        .transform(&data.y);
    (x, y)
}

/// gpr warm-starts on a subsample by default on wide inputs from twice `WIDE_PRETRAIN_ROWS`
/// rows only; `pretrain` given in the spec is used on any inputs, and its note names the rows.
#[test]
fn wide_fits_of_many_rows_start_on_a_subsample_and_the_spec_can_ask_for_one() {
    assert_eq!(wide_pretrain(WIDE_INPUTS, 10_000), None);
    assert_eq!(
        wide_pretrain(WIDE_INPUTS + 1, 2 * WIDE_PRETRAIN_ROWS - 1),
        None
    );
    assert_eq!(
        wide_pretrain(WIDE_INPUTS + 1, 2 * WIDE_PRETRAIN_ROWS),
        Some(WIDE_PRETRAIN_ROWS)
    );
    let data = wide_table();
    let spec = FitOptions {
        pretrain: Some(50),
        ..Default::default()
    }
    .check(MethodName::Gpr)
    .unwrap();
    let model = fit(&spec, &data, None).unwrap();
    let note = "optimised first on a seeded subsample of 50 of the 150 rows";
    assert!(
        model.report.notes.iter().any(|n| n.starts_with(note)),
        "{:?}",
        model.report.notes
    );
    let bad = FitOptions {
        pretrain: Some(1),
        ..Default::default()
    };
    assert!(bad.check(MethodName::Gpr).is_err());
}
