//! The bound-trained sparse variational classifier with a split prior (`svgp::split`): the KL
//! to part A's `q_A(v)` against the dense Gaussian KL and its gradient against central
//! differences, the objective's gradient with that prior, θ and Z pinned, and the fit's
//! certificate recomputed from its parts by hand (the dense KL of the whitened values, the
//! Gibbs risk of part B by `Φ`, the kl inverse), with bad settings refused.

use faer::Mat;
use pacgp::bounds::{BoundKind, ConfidenceTerm};
use pacgp::certificate::GibbsClassifier;
use pacgp::data::{Dataset, Standardizer};
use pacgp::gradcheck::{assert_gradients_close, central_difference_gradient, Tolerance};
use pacgp::kernel::Kernel;
use pacgp::likelihood::Likelihood;
use pacgp::objective::bound::MinimisedBound;
use pacgp::objective::gp_split::SplitFraction;
use pacgp::optim::Objective;
use pacgp::posterior::dense_gaussian_kl;
use pacgp::special::{kl_inverse, normal_cdf};
use pacgp::svgp::split::fit_svgp_split_prior;
use pacgp::svgp::{
    SvgpCriterion, SvgpCriterionSpec, SvgpLayout, SvgpObjective, SvgpSettings, WhitenedPrior,
    WhitenedQ,
};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// A random whitened Gaussian in `m` dimensions: mean in [−1, 1], L lower with a diagonal in
/// [0.3, 1.3] and off-diagonal entries in [−0.3, 0.3].
fn random_q(m: usize, rng: &mut ChaCha8Rng) -> WhitenedQ {
    WhitenedQ {
        mean: (0..m).map(|_| rng.gen_range(-1.0..1.0)).collect(),
        sqrt: Mat::from_fn(m, m, |i, j| match i.cmp(&j) {
            std::cmp::Ordering::Less => 0.0,
            std::cmp::Ordering::Equal => rng.gen_range(0.3..1.3),
            std::cmp::Ordering::Greater => rng.gen_range(-0.3..0.3),
        }),
    }
}

fn cov(q: &WhitenedQ) -> Mat<f64> {
    q.sqrt.as_ref() * q.sqrt.transpose()
}

/// [m, vech(L)] (L's lower triangle column by column, as the objective's layout).
fn flat(q: &WhitenedQ) -> Vec<f64> {
    let m = q.mean.len();
    let mut v = q.mean.clone();
    for j in 0..m {
        for i in j..m {
            v.push(q.sqrt[(i, j)]);
        }
    }
    v
}

fn unflat(v: &[f64], m: usize) -> WhitenedQ {
    let mut sqrt = Mat::zeros(m, m);
    let mut at = m;
    for j in 0..m {
        for i in j..m {
            sqrt[(i, j)] = v[at];
            at += 1;
        }
    }
    WhitenedQ {
        mean: v[..m].to_vec(),
        sqrt,
    }
}

/// `KL(q‖q_A)` equals the dense Gaussian KL of the two covariances; against `N(0, I)` it is
/// the prior's KL with the same gradient; its gradient in (m, L) matches central differences.
#[test]
fn kl_to_a_whitened_prior_matches_the_dense_kl_and_differences() {
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    for m in [1, 4, 9] {
        let (q, qa) = (random_q(m, &mut rng), random_q(m, &mut rng));
        let (kl, g_mean, g_sqrt) = q.kl_to_with_gradient(&qa).unwrap();
        let dense = dense_gaussian_kl(&q.mean, &cov(&q), &qa.mean, &cov(&qa)).unwrap();
        assert!(
            (kl - dense).abs() < 1e-10 * dense.max(1.0),
            "{kl} vs {dense}"
        );

        let (kl0, m0, l0) = q.kl_with_gradient();
        let (kl_i, m_i, l_i) = q.kl_to_with_gradient(&WhitenedQ::prior(m)).unwrap();
        assert!((kl0 - kl_i).abs() < 1e-12 * kl0.max(1.0));
        for (a, b) in m0.iter().zip(&m_i) {
            assert!((a - b).abs() < 1e-12);
        }
        for j in 0..m {
            for i in j..m {
                assert!((l0[(i, j)] - l_i[(i, j)]).abs() < 1e-12);
            }
        }

        let mut analytic = g_mean.clone();
        for j in 0..m {
            for i in j..m {
                analytic.push(g_sqrt[(i, j)]);
            }
        }
        let numeric = central_difference_gradient(
            |v| unflat(v, m).kl_to_with_gradient(&qa).unwrap().0,
            &flat(&q),
            1e-6,
        );
        assert_gradients_close(&analytic, &numeric, Tolerance::mixed(1e-7), "KL(q‖q_A)");
    }
}

/// A seeded two-class problem in two dimensions, 10% of the labels flipped.
fn two_moons(n: usize, seed: u64) -> (Mat<f64>, Vec<f64>) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let x: Mat<f64> = Mat::from_fn(n, 2, |_, _| rng.gen_range(-2.0..2.0));
    let y = (0..n)
        .map(|i| {
            let s = (1.5 * x[(i, 0)]).sin() - x[(i, 1)];
            match (s > 0.0) != rng.gen_bool(0.1) {
                true => 1.0,
                false => -1.0,
            }
        })
        .collect();
    (x, y)
}

fn bound_criterion() -> SvgpCriterion {
    SvgpCriterion::Bound {
        bound: MinimisedBound::new(0.01, ConfidenceTerm::Maurer, BoundKind::Kl, 0.0).unwrap(),
        classifier: GibbsClassifier::latent(&Likelihood::probit()),
    }
}

/// The bound's gradient against a split prior matches central differences in every
/// coordinate of (m, L_q) (θ and Z are pinned, so the test moves only those); at `q = q_A` the
/// KL is 0; the objective refuses θ or Z away from the prior's.
#[test]
fn the_bound_against_a_split_prior_has_the_right_gradient_and_pins_theta_and_z() {
    let (x, y) = two_moons(60, 3);
    let m = 5;
    let kernel = Kernel::se_ard(&[1.2, 0.8], 1.5);
    let z = Mat::from_fn(m, 2, |a, t| x[(3 * a + t, t)]);
    let mut rng = ChaCha8Rng::seed_from_u64(11);
    let qa = random_q(m, &mut rng);
    let prior = WhitenedPrior::new(&kernel, z.clone(), qa.clone()).unwrap();
    let obj = SvgpObjective::new(&kernel, x.as_ref(), &y, m, bound_criterion())
        .unwrap()
        .with_prior(prior)
        .unwrap();
    let layout = SvgpLayout { nk: 3, m, d: 2 };
    assert_eq!(obj.layout(), layout);

    let at_prior = layout.pack(&kernel, z.as_ref(), &qa);
    assert!(obj.terms(&at_prior).unwrap().kl.abs() < 1e-12);

    let p = layout.pack(&kernel, z.as_ref(), &random_q(m, &mut rng));
    let (_, g) = obj.value_and_gradient(&p).unwrap();
    let free = layout.mean_at()..layout.dim();
    let numeric = central_difference_gradient(
        |v| {
            let mut q = p.clone();
            q[free.clone()].copy_from_slice(v);
            obj.value(&q).unwrap()
        },
        &p[free.clone()],
        1e-6,
    );
    assert_gradients_close(
        &g[free],
        &numeric,
        Tolerance::mixed(1e-7),
        "bound against q_A",
    );

    let mut moved_theta = p.clone();
    moved_theta[0] += 0.1;
    assert!(obj.value(&moved_theta).is_err());
    let mut moved_z = p.clone();
    moved_z[layout.z_at()] += 0.1;
    assert!(obj.value(&moved_z).is_err());
}

/// The fit's certificate, recomputed by hand from its parts: part B's rows standardised by
/// part A's scaler, `KL(q‖q_A)` as the dense KL of the whitened values (which the shared
/// posterior's sibling KL must also give), the Gibbs risk `mean Φ(−yμ/σ)` on B and the kl
/// inverse at `(KL + ln(2√N_B/δ))/N_B`; the parts partition the sample; the fit's KL is far
/// below what the same data pays against `GP(0, k)` with θ's grid.
#[test]
fn the_split_certificate_is_recomputed_from_its_parts() {
    let (x, y) = two_moons(400, 5);
    let data = Dataset::new(x.clone(), y.clone()).unwrap();
    let mut st = SvgpSettings::new(
        12,
        SvgpCriterionSpec::Bound {
            kind: BoundKind::Kl,
        },
        0.01,
        4,
    );
    st.max_iter = 200;
    let kernel = Kernel::se_ard(&[1.0, 1.0], 1.0);
    let fit = fit_svgp_split_prior(&kernel, &data, &st, SplitFraction::Fixed(0.5)).unwrap();

    let mut rows: Vec<usize> = fit
        .split
        .part_a
        .iter()
        .chain(&fit.split.part_b)
        .copied()
        .collect();
    rows.sort_unstable();
    assert_eq!(rows, (0..400).collect::<Vec<_>>());
    assert_eq!(fit.split.part_a.len(), 200);

    let a = data.subset(&fit.split.part_a);
    let scaler = Standardizer::fit(a.x.as_ref(), &a.feature_names).unwrap();
    assert_eq!(scaler.mean, fit.split.x_scaler.mean);
    let b = data.subset(&fit.split.part_b);
    let xb = scaler.transform(b.x.as_ref()).unwrap();

    let qa = &fit.split.prior.q;
    let kl = dense_gaussian_kl(&fit.q.mean, &cov(&fit.q), &qa.mean, &cov(qa)).unwrap();
    let c = &fit.certificate;
    assert!((c.kl - kl).abs() < 1e-8 * kl.max(1.0), "{} vs {kl}", c.kl);
    assert!((fit.terms.kl - kl).abs() < 1e-8 * kl.max(1.0));

    let marg = fit.posterior.predict(xb.as_ref()).unwrap();
    let risk = (0..b.n())
        .map(|i| normal_cdf(-b.y[i] * marg.mean[i] / marg.var[i].sqrt()))
        .sum::<f64>()
        / b.n() as f64;
    assert!((c.empirical_risk - risk).abs() < 1e-12);
    let nb = b.n() as f64;
    let bound = kl_inverse(risk, (kl + (2.0 * nb.sqrt() / 0.01).ln()) / nb);
    assert!((c.bound - bound).abs() < 1e-9, "{} vs {bound}", c.bound);
    assert_eq!(c.n, 200);
    assert_eq!(c.penalty, 0.0);
    assert!(fit.posterior.kernel().params() == fit.split.prior.kernel.params());
    // The whole-sample fit pays θ's grid (3 ln 1201 ≈ 21 nats) on top of its KL.
    assert!(c.kl < 21.0, "KL(q‖q_A) = {}", c.kl);
}

/// The evidence lower bound takes no split prior; a part with one class is refused.
#[test]
fn bad_settings_are_refused() {
    let (x, y) = two_moons(80, 9);
    let data = Dataset::new(x, y).unwrap();
    let kernel = Kernel::se_ard(&[1.0, 1.0], 1.0);
    let elbo = SvgpSettings::new(5, SvgpCriterionSpec::Elbo, 0.01, 0);
    assert!(fit_svgp_split_prior(&kernel, &data, &elbo, SplitFraction::Fixed(0.5)).is_err());

    let mut y = vec![1.0; 80];
    y[0] = -1.0;
    let one_sided = Dataset::new(data.x.clone(), y).unwrap();
    let bound = SvgpSettings::new(
        5,
        SvgpCriterionSpec::Bound {
            kind: BoundKind::Kl,
        },
        0.01,
        0,
    );
    let err = fit_svgp_split_prior(&kernel, &one_sided, &bound, SplitFraction::Fixed(0.5))
        .unwrap_err()
        .to_string();
    assert!(err.contains("one class"), "{err}");
}
