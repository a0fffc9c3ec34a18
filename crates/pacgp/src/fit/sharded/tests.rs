//! Unit tests of `crate::fit::sharded`, in a file of their own beside the code.

use faer::Mat;

use super::*;
use crate::bounds::BoundKind;
use crate::objective::gp_split::SplitFraction;
use crate::objective::pac_sgp::{fit_pac_sgp_with, PacSgpSettings};
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

/// [`sample`]'s inputs with its targets cut at 0.3 into ±1 labels.
fn labelled_sample() -> (Mat<f64>, Vec<f64>) {
    let (x, t) = sample();
    let y = t
        .iter()
        .map(|v| if *v > 0.3 { 1.0 } else { -1.0 })
        .collect();
    (x, y)
}

/// The in-process SVGP fit of an svgp spec on `(x, y)`, with the kernel it starts from.
fn in_process_svgp(
    spec: &CheckedFitSpec,
    x: MatRef<'_, f64>,
    y: &[f64],
) -> (Kernel, crate::svgp::SvgpFit) {
    let Method::Svgp(s) = &spec.method else {
        panic!("not an svgp spec")
    };
    let kernel = Kernel::from_spec(&s.kernel, 2).unwrap();
    let st = svgp_settings(spec, s, y.len());
    let fit = crate::svgp::fit_svgp(&kernel, x, y, &st).unwrap();
    (kernel, fit)
}

/// The plan's search on rows in one process, from the in-process start.
fn minimised(spec: &CheckedFitSpec, x: MatRef<'_, f64>, y: &[f64]) -> Vec<f64> {
    let plan = ShardedFit::of(spec, x.nrows(), x.ncols(), 1.0).unwrap();
    let noise = match &plan.family {
        ShardedFamily::Regression { noise_init, .. } => *noise_init,
        ShardedFamily::Classifier { .. } => 1.0,
    };
    let z0 = initial_inducing_with_targets(
        &plan.kernel,
        noise,
        x,
        y,
        plan.m,
        InducingInit::KMeans,
        spec.seed,
    )
    .unwrap();
    let obj = plan.in_process(x, y).unwrap();
    let (min, _) = plan.minimise(obj.as_ref(), None, z0.as_ref()).unwrap();
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
fn the_svgp_plans_search_as_the_in_process_fit() {
    let (x, y) = labelled_sample();
    for method in [MethodName::Svgp, MethodName::PacSvgp] {
        let spec = FitOptions {
            inducing: Some(M),
            max_iter: Some(12),
            ..Default::default()
        }
        .check(method)
        .unwrap();
        let (kernel, fit) = in_process_svgp(&spec, x.as_ref(), &y);
        let plan = minimised(&spec, x.as_ref(), &y);
        let layout = ShardedFit::of(&spec, y.len(), 2, 1.0)
            .unwrap()
            .svgp_layout()
            .unwrap();
        let (k, z, q) = layout.unpack(&kernel, &plan).unwrap();
        let q = q.with_positive_diagonal();
        let ours = layout.pack(&k, z.as_ref(), &q);
        let theirs = layout.pack(&fit.kernel, fit.z.as_ref(), &fit.q);
        for (k, (a, b)) in ours.iter().zip(&theirs).enumerate() {
            assert!((a - b).abs() <= 1e-14 * b.abs().max(1.0), "{k}: {a} vs {b}");
        }
    }
}

/// On more than `WIDE_INPUTS` inputs a vfe or svgp plan names the rows the in-process fit
/// takes the median distance over (the seeded subsample, with more than `MEDIAN_ROWS`
/// rows), starts its kernel from them, gathered, exactly where the in-process fit starts
/// on all rows, with its note, and vfe's search stops by the stall rule; rows of another
/// count are refused. pac-sgp (whose in-process fit starts at 1) and 20 inputs name no
/// rows and keep the start.
#[test]
fn a_wide_plan_starts_from_the_gathered_rows_as_the_in_process_fit() {
    let (n, d) = (start::MEDIAN_ROWS + 50, start::WIDE_INPUTS + 3);
    let x = Mat::from_fn(n, d, |i, j| {
        ((i * 7919 + j * 104_729) % 1013) as f64 / 101.3 - 5.0
    });
    let options = FitOptions {
        inducing: Some(M),
        epsilon: Some(0.5),
        ..Default::default()
    };
    let flats = [
        (MethodName::Vfe, "leaves the evidence flat"),
        (MethodName::Svgp, "leaves q(u) at the prior"),
    ];
    for (method, flat) in flats {
        let spec = FitOptions {
            epsilon: None,
            ..options.clone()
        }
        .check(method)
        .unwrap();
        let mut plan = ShardedFit::of(&spec, n, d, 1.0).unwrap();
        let rows = plan.wide_start_rows(n, d, spec.seed);
        assert_eq!(rows, start::median_rows(n, spec.seed));
        assert_eq!(rows.len(), start::MEDIAN_ROWS);
        let gathered = crate::linalg::select_rows(x.as_ref(), &rows);
        let too_few = crate::linalg::select_rows(x.as_ref(), &rows[1..]);
        let refused = plan.start_wide(n, too_few.as_ref(), spec.seed);
        assert!(
            matches!(refused, Err(Error::ShapeMismatch { .. })),
            "{refused:?}"
        );
        let at_one = plan.kernel.clone();
        let note = plan.start_wide(n, gathered.as_ref(), spec.seed).unwrap();
        let (kernel, want) = start::wide_start_noted(at_one, x.as_ref(), spec.seed, flat);
        assert!(note.is_some());
        assert_eq!((plan.kernel, note), (kernel, want), "{method:?}");
        if let ShardedFamily::Regression { search, .. } = &plan.family {
            assert_eq!(search.lbfgs.stall, start::wide_stall(d));
        }
    }
    let pac_sgp = options.clone().check(MethodName::PacSgp).unwrap();
    let mut plan = ShardedFit::of(&pac_sgp, n, d, 1.0).unwrap();
    assert!(plan.wide_start_rows(n, d, pac_sgp.seed).is_empty());
    let at_one = plan.kernel.clone();
    let rows = start::median_rows(n, pac_sgp.seed);
    let gathered = crate::linalg::select_rows(x.as_ref(), &rows);
    assert_eq!(plan.start_wide(n, gathered.as_ref(), 0).unwrap(), None);
    assert_eq!(plan.kernel, at_one);
    let vfe = FitOptions {
        epsilon: None,
        ..options
    }
    .check(MethodName::Vfe)
    .unwrap();
    let narrow = ShardedFit::of(&vfe, n, start::WIDE_INPUTS, 1.0).unwrap();
    assert!(narrow.wide_start_rows(n, start::WIDE_INPUTS, 0).is_empty());
}

/// The plan's minibatch run, its rows gathered here in the order drawn, is the in-process
/// minibatch fit's, bit for bit.
#[test]
fn the_svgp_minibatch_plan_runs_the_in_process_adam_steps() {
    let (x, y) = labelled_sample();
    let spec = FitOptions {
        inducing: Some(M),
        max_iter: Some(20),
        batch_size: Some(16),
        ..Default::default()
    }
    .check(MethodName::PacSvgp)
    .unwrap();
    let (kernel, fit) = in_process_svgp(&spec, x.as_ref(), &y);
    let plan = ShardedFit::of(&spec, y.len(), 2, 1.0).unwrap();
    assert_eq!(plan.minibatch().map(|s| s.batch), Some(16));
    let z0 = initial_inducing_with_targets(
        &kernel,
        1.0,
        x.as_ref(),
        &y,
        M,
        InducingInit::KMeans,
        spec.seed,
    )
    .unwrap();
    let obj = plan.in_process(x.as_ref(), &y).unwrap();
    let ShardedFamily::Classifier { assembly, .. } = &plan.family else {
        panic!("not a classifier plan")
    };
    let whole =
        SvgpObjective::new(&kernel, x.as_ref(), &y, M, assembly.criterion().clone()).unwrap();
    let mut gradient = |rows: &[usize], p: &[f64]| {
        let xb = Mat::from_fn(rows.len(), 2, |r, j| x[(rows[r], j)]);
        let yb: Vec<f64> = rows.iter().map(|&i| y[i]).collect();
        Ok(whole.on_batch(xb.as_ref(), &yb)?.value_and_gradient(p)?.1)
    };
    let (params, report) = plan
        .minimise_on_batches(&mut gradient, &|p| obj.value(p), z0.as_ref())
        .unwrap();
    assert_eq!(report.iterations, 20);
    assert_eq!(params, fit.report.params);
    assert_eq!(report.value.to_bits(), fit.report.value.to_bits());
    let full = ShardedFit::of(
        &FitOptions {
            inducing: Some(M),
            ..Default::default()
        }
        .check(MethodName::Svgp)
        .unwrap(),
        y.len(),
        2,
        1.0,
    )
    .unwrap();
    assert!(full.minibatch().is_none());
    assert!(full
        .minimise_on_batches(&mut gradient, &|p| obj.value(p), z0.as_ref())
        .is_err());
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
    let greedy = FitOptions {
        inducing_init: Some(InducingInit::Greedy),
        ..Default::default()
    };
    assert_eq!(
        refused(MethodName::PacSvgp, greedy),
        SpecOption::InducingInit
    );
}
