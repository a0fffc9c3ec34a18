//! The sparse variational GP classifier (docs/math.md §12): its objectives against a dense
//! numpy computation (fixtures/gen_svgp_dense.py), gradients against central differences,
//! streaming and thread independence, the fit's certificate recomputed through the shared
//! posterior, the optimum at Z = X against the dense variational classifier's fixed point,
//! and bad input refused with a typed error.

use faer::Mat;
use pacgp::bounds::{BoundKind, ConfidenceTerm, HyperGrid};
use pacgp::certificate::{Certificate, CertificateSpec, GibbsClassifier, GibbsLoss, PenaltyTerm};
use pacgp::gradcheck::{assert_gradients_close, central_difference_gradient, Tolerance};
use pacgp::kernel::Kernel;
use pacgp::likelihood::Likelihood;
use pacgp::objective::bound::MinimisedBound;
use pacgp::optim::Objective;
use pacgp::regression::row_blocks::Streaming;
use pacgp::svgp::point::Link;
use pacgp::svgp::{fit_svgp, SvgpCriterion, SvgpCriterionSpec, SvgpObjective, SvgpSettings};
use pacgp::Error;
use serde_json::Value;

mod common;

fn fixture() -> Value {
    common::fixture("svgp_dense.json")
}

fn matrix(v: &Value) -> Mat<f64> {
    let rows: Vec<Vec<f64>> = serde_json::from_value(v.clone()).unwrap();
    Mat::from_fn(rows.len(), rows[0].len(), |i, j| rows[i][j])
}

fn floats(v: &Value) -> Vec<f64> {
    serde_json::from_value(v.clone()).unwrap()
}

/// A fixture case: inputs, labels, the parameters to evaluate at, the number of inducing
/// inputs, and the SE-ARD kernel (unit lengthscales and variance) the parameters are read for.
fn case_data(case: &Value) -> (Mat<f64>, Vec<f64>, Vec<f64>, usize, Kernel) {
    let x = matrix(&case["x"]);
    let y = floats(&case["y"]);
    let p = floats(&case["params"]);
    let m = case["m"].as_u64().unwrap() as usize;
    (x, y, p, m, Kernel::se_ard(&[1.0, 1.0], 1.0))
}

/// The fixture's first case ([`case_data`]) without its number of inducing inputs.
fn first_case() -> (Mat<f64>, Vec<f64>, Vec<f64>, Kernel) {
    let (x, y, p, _, kernel) = case_data(&fixture()["cases"][0]);
    (x, y, p, kernel)
}

fn bound_criterion(n_params: usize, delta: f64) -> SvgpCriterion {
    SvgpCriterion::Bound {
        bound: MinimisedBound::new(
            delta,
            ConfidenceTerm::Maurer,
            BoundKind::Kl,
            HyperGrid::default().penalty(n_params),
        )
        .unwrap(),
        classifier: GibbsClassifier::latent(&Likelihood::probit()),
    }
}

/// The probit ELBO's objective on `(x, y)` with `m` inducing inputs.
fn probit_elbo<'a>(kernel: &Kernel, x: &'a Mat<f64>, y: &'a [f64], m: usize) -> SvgpObjective<'a> {
    SvgpObjective::new(kernel, x.as_ref(), y, m, SvgpCriterion::Elbo(Link::Probit)).unwrap()
}

/// Streaming in blocks of `rows` rows.
fn blocks(rows: usize) -> Streaming {
    Streaming {
        block_rows: rows,
        ..Streaming::default()
    }
}

fn rel(a: f64, b: f64) -> f64 {
    (a - b).abs() / b.abs().max(1e-300)
}

/// Both objectives equal the dense numpy computation to 1e-10 (relative), with M < N and at
/// M = N, in blocks of 7 rows and in one block.
#[test]
fn objectives_match_the_dense_numpy_reference() {
    let fx = fixture();
    for case in fx["cases"].as_array().unwrap() {
        let (x, y, p, m, kernel) = case_data(case);
        for rows in [7, 1024] {
            let stream = blocks(rows);
            let elbo = probit_elbo(&kernel, &x, &y, m).with_streaming(stream);
            let t = elbo.terms(&p).unwrap();
            let want = case["neg_elbo_per_point"].as_f64().unwrap();
            assert!(rel(t.value, want) < 1e-10, "ELBO {} vs {want}", t.value);
            let ell = case["neg_expected_log_lik_per_point"].as_f64().unwrap();
            assert!(rel(t.data_term, ell) < 1e-10, "{} vs {ell}", t.data_term);
            assert!(rel(t.kl, case["kl"].as_f64().unwrap()) < 1e-10);
            let logit =
                SvgpObjective::new(&kernel, x.as_ref(), &y, m, SvgpCriterion::Elbo(Link::Logit))
                    .unwrap()
                    .with_streaming(stream);
            let t = logit.terms(&p).unwrap();
            let want = case["neg_elbo_per_point_logit"].as_f64().unwrap();
            assert!(
                rel(t.value, want) < 1e-10,
                "logit ELBO {} vs {want}",
                t.value
            );
            let delta = case["delta"].as_f64().unwrap();
            let bound = SvgpObjective::new(&kernel, x.as_ref(), &y, m, bound_criterion(3, delta))
                .unwrap()
                .with_streaming(stream);
            let t = bound.terms(&p).unwrap();
            let risk = case["gibbs_risk"].as_f64().unwrap();
            assert!(rel(t.data_term, risk) < 1e-10, "{} vs {risk}", t.data_term);
            let want = case["kl_bound"].as_f64().unwrap();
            assert!(rel(t.value, want) < 1e-10, "bound {} vs {want}", t.value);
        }
    }
}

/// Central differences of both objectives in every coordinate (θ, Z, m, L_q) at the fixture's
/// points (h = 1e-6 on order-one values: error ≈ 1e-10 + the quadrature's smoothness).
#[test]
fn gradients_match_central_differences() {
    let fx = fixture();
    for case in fx["cases"].as_array().unwrap() {
        let (x, y, p, m, kernel) = case_data(case);
        for criterion in [
            SvgpCriterion::Elbo(Link::Probit),
            SvgpCriterion::Elbo(Link::Logit),
            bound_criterion(3, 0.01),
        ] {
            let obj = SvgpObjective::new(&kernel, x.as_ref(), &y, m, criterion)
                .unwrap()
                .with_streaming(blocks(9));
            let (_, g) = obj.value_and_gradient(&p).unwrap();
            assert_eq!(g.len(), obj.dim());
            let numeric = central_difference_gradient(|q| obj.value(q).unwrap(), &p, 1e-6);
            assert_gradients_close(&g, &numeric, Tolerance::mixed(1e-7), "SVGP objective");
        }
    }
}

/// The gradient on a minibatch of rows (N of the whole sample spreading the KL and taking the
/// bound), and at a point where a diagonal entry of L_q is negative (the KL reads |L_q,ii|),
/// against central differences; a minibatch of the wrong shape is an error.
#[test]
fn minibatch_and_negative_diagonal_gradients_match_central_differences() {
    let (x, y, mut p, kernel) = first_case();
    for criterion in [SvgpCriterion::Elbo(Link::Probit), bound_criterion(3, 0.01)] {
        let obj = SvgpObjective::new(&kernel, x.as_ref(), &y, 6, criterion).unwrap();
        // vech(L_q) starts after θ (3), Z (12) and m (6): its first entry is L_q,00.
        let diag0 = obj.layout().sqrt_at();
        p[diag0] = -p[diag0].abs();
        let rows = [3usize, 7, 8, 20, 31, 39];
        let xb = Mat::from_fn(rows.len(), 2, |r, t| x[(rows[r], t)]);
        let yb: Vec<f64> = rows.iter().map(|&i| y[i]).collect();
        for batch in [
            obj.on_batch(x.as_ref(), &y).unwrap(),
            obj.on_batch(xb.as_ref(), &yb).unwrap(),
        ] {
            let (_, g) = batch.value_and_gradient(&p).unwrap();
            let numeric = central_difference_gradient(|q| batch.value(q).unwrap(), &p, 1e-6);
            assert_gradients_close(&g, &numeric, Tolerance::mixed(1e-7), "SVGP minibatch");
        }
        assert!(obj.on_batch(xb.as_ref(), &y).is_err());
    }
}

/// The same bits on one thread and on three (the row blocks' sums are a fixed tree).
#[test]
fn objective_is_thread_independent() {
    let (x, y, p, kernel) = first_case();
    let stream = blocks(5);
    let run = |threads: usize| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap()
            .install(|| {
                let obj = probit_elbo(&kernel, &x, &y, 6).with_streaming(stream);
                obj.value_and_gradient(&p).unwrap()
            })
    };
    let (v1, g1) = run(1);
    let (v3, g3) = run(3);
    assert_eq!(v1.to_bits(), v3.to_bits());
    assert!(g1.iter().zip(&g3).all(|(a, b)| a.to_bits() == b.to_bits()));
}

/// The objective summed over shards (three uneven ones and an empty one, each streamed in
/// its own blocks) and combined once equals the in-process objective to 1e-10 relative,
/// value and gradient, for both criteria; shards' sums of other shapes and an empty total
/// are refused.
#[test]
fn sharded_sums_combine_to_the_in_process_objective() {
    let (x, y, p, kernel) = first_case();
    let stream = blocks(4);
    for criterion in [SvgpCriterion::Elbo(Link::Probit), bound_criterion(3, 0.01)] {
        let obj = SvgpObjective::new(&kernel, x.as_ref(), &y, 6, criterion.clone()).unwrap();
        let (value, grad) = obj.value_and_gradient(&p).unwrap();
        let assembly = obj.assembly();
        let cuts = [0usize, 7, 7, 26, y.len()];
        let mut total: Option<pacgp::svgp::SvgpShardSums> = None;
        for w in cuts.windows(2) {
            let xs = x.as_ref().subrows(w[0], w[1] - w[0]);
            let part = assembly
                .shard_sums(&p, xs, &y[w[0]..w[1]], &stream)
                .unwrap();
            assert_eq!(part.rows, w[1] - w[0]);
            match total.as_mut() {
                None => total = Some(part),
                Some(t) => t.add(&part).unwrap(),
            }
        }
        let (terms, g) = assembly.combine(&p, &total.unwrap()).unwrap();
        assert!(
            rel(terms.value, value) < 1e-10,
            "{} vs {value}",
            terms.value
        );
        for (k, (a, b)) in g.iter().zip(&grad).enumerate() {
            assert!(
                (a - b).abs() <= 1e-10 * b.abs().max(1e-3),
                "gradient {k}: {a} vs {b}"
            );
        }
        let empty = assembly
            .shard_sums(&p, x.as_ref().subrows(0, 0), &[], &stream)
            .unwrap();
        assert!(matches!(
            assembly.combine(&p, &empty),
            Err(Error::ShapeMismatch { .. })
        ));
        let other = SvgpObjective::new(&kernel, x.as_ref(), &y, 5, criterion).unwrap();
        let mut five = other
            .assembly()
            .shard_sums(&p[..p.len()], x.as_ref(), &y, &stream);
        // Parameters of M = 6 do not unpack as M = 5's: refused before any sum.
        assert!(five.is_err());
        five = other.assembly().shard_sums(
            &other.layout().pack(
                &kernel,
                x.as_ref().subrows(0, 5),
                &pacgp::svgp::WhitenedQ::prior(5),
            ),
            x.as_ref(),
            &y,
            &stream,
        );
        let mut six = assembly.shard_sums(&p, x.as_ref(), &y, &stream).unwrap();
        assert!(six.add(&five.unwrap()).is_err());
        let bad_labels = vec![0.5; y.len()];
        assert!(assembly
            .shard_sums(&p, x.as_ref(), &bad_labels, &stream)
            .is_err());
    }
}

/// A two-class problem in two dimensions (seeded): the label is the sign of a smooth function
/// with 10% of the labels flipped.
fn two_moons(n: usize, seed: u64) -> (Mat<f64>, Vec<f64>) {
    use rand::{Rng, SeedableRng};
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let x: Mat<f64> = Mat::from_fn(n, 2, |_, _| rng.gen_range(-2.0..2.0));
    let y = (0..n)
        .map(|i| {
            let s = (1.5 * x[(i, 0)]).sin() - x[(i, 1)];
            let flip = rng.gen_bool(0.1);
            if (s > 0.0) != flip {
                1.0
            } else {
                -1.0
            }
        })
        .collect();
    (x, y)
}

/// Both trainings end on the grid with a certificate equal to the one computed afresh from
/// the shared posterior, classify held-out data well, and the bound-trained certificate is
/// no higher than the ELBO-trained one (it minimises it over the same family).
#[test]
fn fits_certify_through_the_shared_posterior() {
    let (x, y) = two_moons(300, 1);
    let (xt, yt) = two_moons(400, 2);
    let kernel = Kernel::se_ard(&[1.0, 1.0], 1.0);
    let mut bounds = Vec::new();
    for criterion in [
        SvgpCriterionSpec::Elbo,
        SvgpCriterionSpec::Bound {
            kind: BoundKind::Kl,
        },
    ] {
        let mut st = SvgpSettings::new(15, criterion, 0.01, 3);
        st.max_iter = 300;
        let fit = fit_svgp(&kernel, x.as_ref(), &y, &st).unwrap();
        let grid = HyperGrid::default();
        assert_eq!(grid.round(&fit.kernel.params()), fit.kernel.params());
        let spec = CertificateSpec::new(
            0.01,
            ConfidenceTerm::Maurer,
            vec![PenaltyTerm::grid(&grid, 3)],
        );
        let loss = GibbsLoss::Classification(GibbsClassifier::latent(&Likelihood::probit()));
        let again =
            Certificate::of_posterior(&fit.posterior, x.as_ref(), &y, &loss, &spec).unwrap();
        assert_eq!(again, fit.certificate);
        // The posterior's KL and risk are the objective's (the dense form's own algebra).
        assert!(
            (fit.posterior.kl_to_prior().unwrap() - fit.terms.kl).abs()
                < 1e-8 * fit.terms.kl.max(1.0)
        );
        let marg = fit.posterior.predict(xt.as_ref()).unwrap();
        let err = yt
            .iter()
            .zip(&marg.mean)
            .filter(|(y, m)| **y * **m <= 0.0)
            .count() as f64
            / yt.len() as f64;
        assert!(err < 0.2, "{criterion:?}: test error {err}");
        bounds.push(fit.certificate.bound);
    }
    assert!(
        bounds[1] <= bounds[0] + 1e-3,
        "bound-trained {} vs ELBO-trained {}",
        bounds[1],
        bounds[0]
    );
}

/// At Z = X the ELBO's optimum over (m, L_q) is the dense variational classifier's (Opper &
/// Archambeau 2009): its posterior precision over f at X is `K⁻¹ + diag(λ)` with
/// `λ_i = −2 ∂E_i/∂σ_i²`, the site precisions of the expected log-likelihood at the optimum.
/// Minimised with no cost tolerance, θ and Z pinned by their boxes.
#[test]
fn full_inducing_set_reaches_the_dense_variational_fixed_point() {
    use pacgp::optim::{minimize, LbfgsConfig};
    use pacgp::svgp::fit::whitened_posterior;
    use pacgp::svgp::point::expected_ln_probit;
    use pacgp::svgp::WhitenedQ;
    let (x, y) = two_moons(30, 5);
    let n = y.len();
    let kernel = Kernel::se_ard(&[1.2, 0.8], 2.0);
    let obj = probit_elbo(&kernel, &x, &y, n);
    let layout = obj.layout();
    let p0 = layout.pack(&kernel, x.as_ref(), &WhitenedQ::prior(n));
    let bounds = (0..p0.len())
        .map(|k| match k < layout.mean_at() {
            true => (p0[k], p0[k]),
            false => (f64::NEG_INFINITY, f64::INFINITY),
        })
        .collect();
    let cfg = LbfgsConfig {
        max_iter: 5000,
        grad_tol: 1e-10,
        cost_tol: 0.0,
        bounds: Some(bounds),
        ..Default::default()
    };
    let p = minimize(&obj, &p0, &cfg).unwrap().params;
    let (_, g) = obj.value_and_gradient(&p).unwrap();
    let g_free = g[layout.mean_at()..]
        .iter()
        .fold(0.0f64, |a, b| a.max(b.abs()));
    assert!(g_free < 1e-8, "not at a stationary point: {g_free:e}");
    let (k_fit, z, q) = layout.unpack(&kernel, &p).unwrap();
    let q = q.with_positive_diagonal();
    let post = whitened_posterior(&k_fit, z, &q).unwrap();
    let marg = post.predict(x.as_ref()).unwrap();
    let lambda: Vec<f64> = (0..n)
        .map(|i| -2.0 * expected_ln_probit(y[i], marg.mean[i], marg.var[i]).d_var)
        .collect();
    // Σ_f⁻¹ = K⁻¹ + Λ with Σ_f = L S Lᵀ, K = LLᵀ (K_uu as factored): S(I + LᵀΛL) = I, which
    // needs no inverse of the ill-conditioned K.
    let pacgp::posterior::Covariance::Dense { chol_kb, .. } = &post.cov else {
        panic!("the dense form")
    };
    let l = chol_kb.l();
    let s_mat = &q.sqrt * q.sqrt.transpose();
    let ll = Mat::from_fn(n, n, |i, j| l[(i, j)] * lambda[i]);
    let mut a = l.transpose() * &ll;
    for i in 0..n {
        a[(i, i)] += 1.0;
    }
    let prod = &s_mat * &a;
    let mut worst: f64 = 0.0;
    for i in 0..n {
        for j in 0..n {
            let want = if i == j { 1.0 } else { 0.0 };
            worst = worst.max((prod[(i, j)] - want).abs());
        }
    }
    // 1.8e-5 at this optimum (its gradient is 1e-8 per point, not 0); a posterior that is not
    // the variational fixed point is off by O(1).
    assert!(worst < 1e-4, "S(I + LᵀΛL) − I: {worst:e}");
}

/// Minibatch training (Adam on seeded batches, θ snapped after 80% of the steps) ends on the
/// grid near the full-batch L-BFGS fit: held-out error within two points, ELBO within 2%; the
/// objective on a "batch" of every row is the full objective; the same seed, the same bits.
#[test]
fn minibatch_training_approaches_the_full_batch_fit() {
    let (x, y) = two_moons(2000, 11);
    let (xt, yt) = two_moons(2000, 12);
    let kernel = Kernel::se_ard(&[1.0, 1.0], 1.0);
    let test_error = |fit: &pacgp::svgp::SvgpFit| {
        let marg = fit.posterior.predict(xt.as_ref()).unwrap();
        yt.iter()
            .zip(&marg.mean)
            .filter(|(y, m)| **y * **m <= 0.0)
            .count() as f64
            / 2000.0
    };
    let full = fit_svgp(
        &kernel,
        x.as_ref(),
        &y,
        &SvgpSettings::new(15, SvgpCriterionSpec::Elbo, 0.01, 4),
    )
    .unwrap();
    let mut st = SvgpSettings::new(15, SvgpCriterionSpec::Elbo, 0.01, 4);
    st.batch = Some(256);
    st.max_iter = 1500;
    let mini = fit_svgp(&kernel, x.as_ref(), &y, &st).unwrap();
    assert_eq!(
        HyperGrid::default().round(&mini.kernel.params()),
        mini.kernel.params()
    );
    assert!((test_error(&mini) - test_error(&full)).abs() < 0.02);
    assert!(
        (mini.terms.value - full.terms.value).abs() < 0.02 * full.terms.value,
        "{} vs {}",
        mini.terms.value,
        full.terms.value
    );
    let again = fit_svgp(&kernel, x.as_ref(), &y, &st).unwrap();
    assert_eq!(again.certificate, mini.certificate);
    let obj = probit_elbo(&kernel, &x, &y, 15);
    let p = obj.layout().pack(&mini.kernel, mini.z.as_ref(), &mini.q);
    // The batch streams in smaller blocks: the same sum in another order.
    let (a, b) = (
        obj.on_batch(x.as_ref(), &y).unwrap().value(&p).unwrap(),
        obj.value(&p).unwrap(),
    );
    assert!((a - b).abs() < 1e-12 * b.abs(), "{a} vs {b}");
}

/// Bad input is a typed error: M = 0, M > N, one class, a non-finite input, Z repeating a row.
#[test]
fn bad_input_is_refused() {
    let (x, y) = two_moons(20, 7);
    let kernel = Kernel::se_ard(&[1.0, 1.0], 1.0);
    let st = |m| SvgpSettings::new(m, SvgpCriterionSpec::Elbo, 0.01, 0);
    for m in [0, 21] {
        assert!(matches!(
            fit_svgp(&kernel, x.as_ref(), &y, &st(m)),
            Err(Error::InvalidParameter { .. })
        ));
    }
    let one = vec![1.0; 20];
    assert!(matches!(
        fit_svgp(&kernel, x.as_ref(), &one, &st(5)),
        Err(Error::NotBinary { .. })
    ));
    let mut bad = x.clone();
    bad[(3, 1)] = f64::NAN;
    assert!(matches!(
        fit_svgp(&kernel, bad.as_ref(), &y, &st(5)),
        Err(Error::NonFinite { .. })
    ));
    // Three distinct rows repeated: five inducing inputs cannot be distinct.
    let rep = Mat::from_fn(20, 2, |i, t| ((i % 3) as f64) + t as f64);
    let yr: Vec<f64> = (0..20)
        .map(|i| if i % 2 == 0 { 1.0 } else { -1.0 })
        .collect();
    let mut s = st(5);
    s.init = pacgp::regression::inducing_init::InducingInit::Subset;
    assert!(matches!(
        fit_svgp(&kernel, rep.as_ref(), &yr, &s),
        Err(Error::InvalidParameter { .. })
    ));
}
