//! The sparse PAC-GP bound as sums over shards (`objective::pac_sgp_sharded`) equals the
//! single-process objective (`PacSgpObjective`, itself checked against finite differences in
//! `tests/pac_sgp.rs`) in value, terms and gradient to 1e-10 relative, for one shard, even and
//! uneven splits, FITC and VFE posteriors, both bound forms and the tighter-bounds levers.

mod common;

use faer::{Mat, MatRef};
use pacgp::bounds::{self, BoundKind, ConfidenceTerm};
use pacgp::kernel::Kernel;
use pacgp::loss::RegressionLoss;
use pacgp::objective::bound::MinimisedBound;
use pacgp::objective::pac_sgp::PacSgpObjective;
use pacgp::objective::pac_sgp_sharded::PacSgpSharded;
use pacgp::optim::Objective;
use pacgp::prior::HyperPrior;
use pacgp::regression::sparse::NegSparseObjective;

fn problem(n: usize, d: usize, m: usize, seed: u64) -> (Mat<f64>, Vec<f64>, Mat<f64>) {
    common::sparse_problem(n, d, m, seed, 0.3)
}

fn shards<'a>(x: &'a Mat<f64>, y: &'a [f64], cuts: &[usize]) -> Vec<(MatRef<'a, f64>, &'a [f64])> {
    cuts.windows(2)
        .map(|w| (x.subrows(w[0], w[1] - w[0]), &y[w[0]..w[1]]))
        .collect()
}

fn assert_close(a: f64, b: f64, scale: f64, what: &str) {
    assert_close_to(a, b, scale, 1e-10, what);
}

fn assert_close_to(a: f64, b: f64, scale: f64, rtol: f64, what: &str) {
    assert!(
        (a - b).abs() <= rtol * scale,
        "{what}: sharded {a} vs single {b} (diff {:e}, scale {scale})",
        a - b
    );
}

/// Which bound: (α_s, kind, confidence term, hyperparameter prior).
type Setup = (f64, BoundKind, ConfidenceTerm, Option<HyperPrior>);

fn check(kernel: Kernel, noise: f64, setup: Setup, n: usize, m: usize, cuts: &[usize], seed: u64) {
    let (alpha_s, kind, term, prior) = setup;
    let d = 3;
    let (x, y, z) = problem(n, d, m, seed);
    let loss = RegressionLoss::new_epsilon_band(0.4).unwrap();
    let penalty = 3.0 * 1201f64.ln();
    // A coarse prior prices θ on top of the constant penalty.
    let mut bound = MinimisedBound::new(0.05, term, kind, penalty).unwrap();
    if let Some(p) = prior {
        bound = bound.with_hyper_prior(p, &kernel).unwrap();
    }
    let single =
        PacSgpObjective::new(&kernel, x.as_ref(), &y, m, alpha_s, loss, bound.clone()).unwrap();
    let sharded = PacSgpSharded::new(&kernel, d, m, alpha_s, loss, bound).unwrap();
    let p = NegSparseObjective::pack(&kernel, noise, z.as_ref());
    let (value, grad) = single.value_and_gradient(&p).unwrap();
    let terms = single.terms(&p).unwrap();
    let (s_terms, s_grad) = sharded
        .value_and_gradient(&p, &shards(&x, &y, cuts))
        .unwrap();
    let below_one = kind == BoundKind::Sqrt || value < 1.0; // Pinsker's form may exceed 1
    assert!(value > 0.0 && below_one, "a bound in (0, 1): {value}");
    assert_close(s_terms.bound, value, value.abs(), "bound");
    assert_close(s_terms.kl, terms.kl, terms.kl.abs(), "KL");
    assert_close(
        s_terms.empirical_risk,
        terms.empirical_risk,
        terms.empirical_risk.abs(),
        "empirical risk",
    );
    assert_eq!(s_grad.len(), grad.len());
    assert_eq!(s_grad.len(), sharded.dim());
    // Relative to the gradient's size: entries near zero carry the others' rounding.
    let scale = grad.iter().fold(0.0_f64, |a, g| a.max(g.abs()));
    assert!(scale > 1e-6, "a gradient that is not flat: {scale}");
    for (k, (a, b)) in s_grad.iter().zip(&grad).enumerate() {
        assert_close(*a, *b, scale, &format!("gradient[{k}]"));
    }
}

/// At cond(K_uu) ≈ 1.2e9 and 1e10 (`tests/fixtures/vfe_ill_conditioned.json`: D = 4, M = 50,
/// σ_f² = e⁶, lengthscales ≈ e² and e^2.4, σ² = 1e-3, ε = 0.1, FITC and VFE posteriors) the
/// sharded R_S, KL, bound and gradient match the extended-precision reference to 1e-8 (gradient
/// in norm; the bound's gradient is `∂B/∂R_S ∇R_S + ∂B/∂KL ∇KL` with the library's scalar
/// partials), and so does the single-process `PacSgpObjective` (whose earlier unwhitened
/// adjoints, `A⁻¹ − K_uu⁻¹` formed explicitly, were off by 1e-4 at the first point and 0.07–0.5
/// at the second).
#[test]
fn ill_conditioned_kuu_matches_an_extended_precision_reference() {
    let r = common::ill_conditioned::load();
    let (n, d, m) = (r.x.nrows(), r.x.ncols(), r.m);
    let penalty = 5.0 * 1201f64.ln();
    for pt in &r.pac_sgp {
        let mut kernel = Kernel::from_spec("se-ard", d).unwrap();
        kernel.set_params(&pt.params[..d + 1]).unwrap();
        let loss = RegressionLoss::new_epsilon_band(pt.epsilon).unwrap();
        let sharded = PacSgpSharded::new(
            &kernel,
            d,
            m,
            pt.alpha_s,
            loss,
            mb(0.05, penalty, BoundKind::Kl),
        )
        .unwrap();
        let cuts = [0, 300, 301, 1700, n];
        let (terms, grad) = sharded
            .value_and_gradient(&pt.params, &shards(&r.x, &r.y, &cuts))
            .unwrap();
        let c = bounds::complexity(pt.kl, n, 0.05, penalty, ConfidenceTerm::Maurer);
        let (bound, d_q, d_c) =
            bounds::bound_and_partials(pt.risk, c, BoundKind::Kl, ConfidenceTerm::Maurer);
        let want: Vec<f64> = (0..grad.len())
            .map(|k| d_q * pt.risk_gradient[k] + d_c / n as f64 * pt.kl_gradient[k])
            .collect();
        let single = PacSgpObjective::new(
            &kernel,
            r.x.as_ref(),
            &r.y,
            m,
            pt.alpha_s,
            loss,
            mb(0.05, penalty, BoundKind::Kl),
        )
        .unwrap();
        let (_, single_grad) = single.value_and_gradient(&pt.params).unwrap();
        let e = common::ill_conditioned::rel_err(&grad, &want);
        let e_single = common::ill_conditioned::rel_err(&single_grad, &want);
        let e_between = common::ill_conditioned::rel_err(&grad, &single_grad);
        // The double-precision floor: at cond ≈ 1e10 this gradient moves by 1–3.5e-8 when
        // the rows are permuted (its norm is small beside its risk and KL parts); at 1.2e9
        // by ≤ 1e-9.
        let z = Mat::from_fn(m, d, |a, t| pt.params[d + 2 + a * d + t]);
        let cond = common::ill_conditioned::kuu_condition(&kernel, &z);
        assert!(cond > 1e9, "cond(K_uu) = {cond:e}");
        let tol = if cond < 2e9 { 1e-8 } else { 5e-8 };
        assert!(
            e <= tol && e_single <= tol && e_between <= tol,
            "α_s {}: gradient rel err sharded {e:e}, single {e_single:e}, between {e_between:e}",
            pt.alpha_s
        );
        assert_close_to(terms.kl, pt.kl, pt.kl, 1e-10, "KL");
        assert_close_to(terms.empirical_risk, pt.risk, pt.risk, 1e-8, "R_S");
        // The bound moves with R_S (∂B/∂R_S ≈ 1), so it is held to R_S's tolerance: with the
        // vectorised exp of the kernel fills, R_S differs from the reference by ~1e-10.
        assert_close_to(terms.bound, bound, bound, 1e-8, "bound");
    }
}

fn kernel() -> Kernel {
    Kernel::se_ard(&[0.8, 1.3, 2.0], 1.7)
}

const FITC: Setup = (1.0, BoundKind::Kl, ConfidenceTerm::Maurer, None);
const VFE: Setup = (0.0, BoundKind::Kl, ConfidenceTerm::Maurer, None);
const SQRT: Setup = (0.5, BoundKind::Sqrt, ConfidenceTerm::Maurer, None);

/// One test per case, `name: noise, setup, N, M, shard cuts, seed;`, each a [`check`] with
/// [`kernel`].
macro_rules! shard_cases {
    ($($name:ident: $eps:expr, $setup:expr, $n:expr, $m:expr, $bounds:expr, $seed:expr;)*) => {
        $(
            #[test]
            fn $name() {
                check(kernel(), $eps, $setup, $n, $m, $bounds, $seed);
            }
        )*
    };
}

shard_cases! {
    fitc_one_shard: 0.05, FITC, 300, 12, &[0, 300], 1;
    fitc_three_even_shards: 0.05, FITC, 300, 12, &[0, 100, 200, 300], 2;
    fitc_uneven_shards_with_a_single_point: 0.2, FITC, 301, 15, &[0, 17, 18, 250, 301], 3;
    vfe_one_shard: 0.05, VFE, 300, 12, &[0, 300], 4;
    vfe_three_even_shards: 0.05, VFE, 300, 12, &[0, 100, 200, 300], 5;
    vfe_uneven_shards: 0.1, VFE, 257, 10, &[0, 1, 40, 199, 257], 6;
    sqrt_bound_between_fitc_and_vfe: 0.1, SQRT, 200, 8, &[0, 70, 71, 200], 7;
}

#[test]
fn hyper_prior_and_sharp_confidence_term() {
    let setup = (
        1.0,
        BoundKind::Kl,
        ConfidenceTerm::Sharp,
        Some(HyperPrior::gaussian()),
    );
    check(kernel(), 0.1, setup, 240, 9, &[0, 120, 240], 8);
}

#[test]
fn matern_kernel_uneven_shards() {
    let k = Kernel::from_spec("matern52", 3).unwrap();
    check(k, 0.1, FITC, 220, 10, &[0, 50, 51, 220], 9);
}

#[test]
fn a_shard_of_the_wrong_width_is_an_error() {
    let (x, y, z) = problem(50, 3, 5, 10);
    let loss = RegressionLoss::new_epsilon_band(0.4).unwrap();
    let obj = PacSgpSharded::new(&kernel(), 2, 5, 1.0, loss, mb(0.05, 0.0, BoundKind::Kl));
    assert!(obj.is_err(), "a 3-input kernel on 2 inputs");
    let obj = PacSgpSharded::new(&kernel(), 3, 5, 1.0, loss, mb(0.05, 0.0, BoundKind::Kl)).unwrap();
    let p = NegSparseObjective::pack(&kernel(), 0.1, z.as_ref());
    let l = obj.kuu_factor(&p).unwrap();
    assert!(obj.shard_stats(&p, &l, x.as_ref(), &y).is_ok());
    assert!(obj.shard_stats(&p, &l, x.subcols(0, 2), &y).is_err());
    assert!(obj.shard_stats(&p[1..], &l, x.as_ref(), &y).is_err());
    assert!(obj.kuu_factor(&p[1..]).is_err());
    // A factor of another M is refused by every pass.
    let p4 = NegSparseObjective::pack(&kernel(), 0.1, z.subrows(0, 4));
    let obj4 =
        PacSgpSharded::new(&kernel(), 3, 4, 1.0, loss, mb(0.05, 0.0, BoundKind::Kl)).unwrap();
    let l4 = obj4.kuu_factor(&p4).unwrap();
    assert!(obj.shard_stats(&p, &l4, x.as_ref(), &y).is_err());
    let stats = obj.shard_stats(&p, &l, x.as_ref(), &y).unwrap();
    let st = obj.state(&p, &stats).unwrap();
    assert!(obj.shard_risk(&p, &l4, &st, x.as_ref(), &y).is_err());
    let stats4 = obj4.shard_stats(&p4, &l4, x.as_ref(), &y).unwrap();
    assert!(obj.state(&p, &stats4).is_err());
}

/// A PAC-SGP model fitted in process, rebuilt from its parameters and the posterior's sums over
/// three shards of its standardised training data (`model::sparse_model_from_parts`): same
/// posterior, predictions and certificate to 1e-10.
#[test]
fn model_from_parameters_and_shard_sums_equals_the_fitted_model() {
    use pacgp::data::Dataset;
    use pacgp::model::{self, CertifyOptions, SparseModelParts, Task};
    use pacgp::objective::pac_sgp_sharded::{posterior_shard_stats, PacSgpShardStats};
    use pacgp::spec::{FitOptions, MethodName};

    let (x, y, _) = problem(160, 3, 1, 11);
    let train = Dataset::new(x.clone(), y.clone()).unwrap();
    let spec = FitOptions {
        inducing: Some(8),
        epsilon: Some(0.5),
        delta: Some(0.05),
        seed: Some(3),
        ..Default::default()
    }
    .check(MethodName::PacSgp)
    .unwrap();
    let fitted = pacgp::fit::fit(&spec, &train, None).unwrap();
    let Task::Regression {
        noise_variance,
        y_scaler,
        ..
    } = fitted.task.clone()
    else {
        panic!("a regression model")
    };
    let xs = fitted.x_scaler.transform(x.as_ref()).unwrap();
    let ys = y_scaler.transform(&y);
    let (kernel, z) = (
        fitted.posterior().unwrap().kernel(),
        fitted.posterior().unwrap().basis.as_ref(),
    );
    let stats = shards(&xs, &ys, &[0, 50, 51, 160])
        .into_iter()
        .map(|(xs, ys)| posterior_shard_stats(kernel, noise_variance, 1.0, z, xs, ys).unwrap())
        .reduce(|a: PacSgpShardStats, b| a.combine(&b).unwrap())
        .unwrap();
    let rebuilt = model::sparse_model_from_parts(SparseModelParts {
        spec: fitted.spec.clone(),
        alpha_s: 1.0,
        kernel: kernel.clone(),
        noise_variance,
        z: z.to_owned(),
        stats,
        x_scaler: fitted.x_scaler.clone(),
        y_scaler,
        feature_names: fitted.feature_names.clone(),
        target_name: fitted.target_name.clone(),
        objective: fitted.report.objective.unwrap(),
        optimiser: None,
    })
    .unwrap();
    assert_eq!(rebuilt.method(), fitted.method());
    let (a, b) = (
        &rebuilt.posterior().unwrap().alpha,
        &fitted.posterior().unwrap().alpha,
    );
    let scale = b.iter().fold(0.0_f64, |s, v| s.max(v.abs()));
    for (u, v) in a.iter().zip(b) {
        assert_close(*u, *v, scale, "posterior α");
    }
    let (p1, p2) = (
        rebuilt.predict_regression(x.as_ref()).unwrap(),
        fitted.predict_regression(x.as_ref()).unwrap(),
    );
    for (u, v) in p1.mean.iter().zip(&p2.mean) {
        assert_close(*u, *v, 1.0 + v.abs(), "predictive mean");
    }
    let at_training_delta = CertifyOptions::default();
    let c1 = &rebuilt.certify(&train, &at_training_delta).unwrap()[0];
    let c2 = &fitted.certify(&train, &at_training_delta).unwrap()[0];
    let (b1, b2) = (c1.certificate.bound, c2.certificate.bound);
    assert_close(b1, b2, b2, "certificate bound");
    assert_close(
        b2,
        fitted.report.objective.unwrap(),
        b2,
        "bound = trained objective",
    );
    // θ off the grid is refused: a certificate would not pay for it.
    let mut off = kernel.clone();
    let mut theta = off.params();
    theta[0] += 0.003;
    off.set_params(&theta).unwrap();
    let vfe = FitOptions {
        inducing: Some(8),
        ..Default::default()
    }
    .check(MethodName::Vfe)
    .unwrap();
    assert!(model::sparse_model_from_parts(SparseModelParts {
        spec: vfe,
        alpha_s: 0.0,
        kernel: off,
        noise_variance,
        z: z.to_owned(),
        stats: PacSgpShardStats {
            b: Mat::zeros(8, 8),
            gamma: vec![0.0; 8],
            n: 160,
        },
        x_scaler: fitted.x_scaler.clone(),
        y_scaler,
        feature_names: vec![],
        target_name: String::new(),
        objective: 0.0,
        optimiser: None,
    })
    .is_err());
}

/// The bound minimised: δ, penalty, form, Maurer's term.
fn mb(delta: f64, penalty: f64, kind: BoundKind) -> MinimisedBound {
    MinimisedBound::new(delta, ConfidenceTerm::Maurer, kind, penalty).unwrap()
}

/// What a cluster runs (the three map passes with `combine` between passes 2 and 3, the
/// penalty's θ share in the driver's part) gives the in-process family's terms and gradient:
/// the same bits on the grid's constant penalty, and to 1e-15 relative with a coarse prior,
/// whose θ share the skeleton adds after the shards' sum instead of with it.
#[test]
fn the_cluster_protocol_equals_the_in_process_family() {
    let (x, y, z) = problem(180, 3, 8, 11);
    let k = kernel();
    let loss = RegressionLoss::new_epsilon_band(0.4).unwrap();
    let p = NegSparseObjective::pack(&k, 0.08, z.as_ref());
    let parts = shards(&x, &y, &[0, 60, 61, 180]);
    for prior in [None, Some(HyperPrior::gaussian())] {
        let mut bound = mb(0.05, 3.0 * 1201f64.ln(), BoundKind::Kl);
        if let Some(hp) = prior {
            bound = bound.with_hyper_prior(hp, &k).unwrap();
        }
        let s = PacSgpSharded::new(&k, 3, 8, 1.0, loss, bound).unwrap();
        let l = s.kuu_factor(&p).unwrap();
        let stats = parts
            .iter()
            .map(|(xs, ys)| s.shard_stats(&p, &l, *xs, ys).unwrap())
            .reduce(|a, b| a.combine(&b).unwrap())
            .unwrap();
        let st = s.state(&p, &stats).unwrap();
        let risk = parts
            .iter()
            .map(|(xs, ys)| s.shard_risk(&p, &l, &st, *xs, ys).unwrap())
            .reduce(|a, b| a.combine(&b).unwrap())
            .unwrap();
        let global = s.combine(&p, &st, &risk).unwrap();
        let summed = parts
            .iter()
            .map(|(xs, ys)| s.shard_gradient(&p, &l, &global.adjoints, *xs, ys).unwrap())
            .reduce(|a, b| a.combine(&b).unwrap())
            .unwrap();
        let want = s.gradient(&p, &l, &global.driver, &summed).unwrap();
        let (terms, grad) = s.value_and_gradient(&p, &parts).unwrap();
        assert_eq!(terms, global.terms, "prior {prior:?}");
        let scale = want.iter().fold(0.0_f64, |a, g| a.max(g.abs()));
        for (i, (a, b)) in grad.iter().zip(&want).enumerate() {
            match prior {
                None => assert_eq!(a.to_bits(), b.to_bits(), "gradient[{i}]: {a} vs {b}"),
                Some(_) => assert_close_to(*a, *b, scale, 1e-15, &format!("gradient[{i}]")),
            }
        }
    }
}
