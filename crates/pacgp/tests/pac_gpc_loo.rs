//! pac-gpc's leave-one-out: the cavities of its bound-trained sites, against a brute-force
//! dense computation written here. Any `(α, π > 0)` of the site form is the product of the
//! prior and Gaussian sites with `π_i m̃_i = α_i + π_i μ_i` (`μ = Kα`); the posterior without
//! row i keeps every other site, and its mean at `x_i` is `[Σ' ν']_i` with
//! `Σ' = K − K Π'½ (I + Π'½ K Π'½)⁻¹ Π'½ K`, `Π' = Π` but `π'_i = 0`, `ν' = Π' m̃`. The test
//! forms `Σ'` for every i from scratch (no site removal formula) on 40 rows of Ripley's synthetic set.

use faer::linalg::solvers::Solve;
use faer::{Mat, Side};
use pacgp::data::{load_csv_classification, CsvOptions};
use pacgp::model::CertifyOptions;
use pacgp::posterior::Covariance;
use pacgp::spec::{FitOptions, LooRequest, MethodName};

fn repo(p: &str) -> std::path::PathBuf {
    std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../")
        .join(p)
}

/// The mean at `x_i` of the site-form posterior without site i, from scratch.
fn brute_force_cavity_mean(k: &Mat<f64>, alpha: &[f64], pi: &[f64], i: usize) -> f64 {
    let n = alpha.len();
    let mu: Vec<f64> = (0..n)
        .map(|r| (0..n).map(|c| k[(r, c)] * alpha[c]).sum())
        .collect();
    let kept = |j: usize| if j == i { 0.0 } else { pi[j] };
    let nu: Vec<f64> = (0..n)
        .map(|j| {
            if j == i {
                0.0
            } else {
                alpha[j] + pi[j] * mu[j]
            }
        })
        .collect();
    let s: Vec<f64> = (0..n).map(|j| kept(j).sqrt()).collect();
    let b = Mat::from_fn(n, n, |r, c| {
        f64::from(u8::from(r == c)) + s[r] * k[(r, c)] * s[c]
    });
    let sk = Mat::from_fn(n, n, |r, c| s[r] * k[(r, c)]);
    let b_inv_sk = b.llt(Side::Lower).unwrap().solve(&sk);
    // Σ'ν' = Kν' − K Π'½ B⁻¹ Π'½ K ν'.
    let k_nu: Vec<f64> = (0..n)
        .map(|r| (0..n).map(|c| k[(r, c)] * nu[c]).sum())
        .collect();
    let inner: Vec<f64> = (0..n)
        .map(|r| (0..n).map(|c| b_inv_sk[(r, c)] * nu[c]).sum::<f64>() * s[r])
        .collect();
    k_nu[i] - (0..n).map(|c| k[(i, c)] * inner[c]).sum::<f64>()
}

/// `certify`'s leave-one-out of a pac-gpc model is its sites' cavities: every margin's sign
/// (and so the reported error) is the brute-force one's, whose means agree to 1e-8; exact
/// refits are refused with the reason.
#[test]
fn pac_gpc_leave_one_out_is_its_sites_cavities() {
    let (data, labels) = load_csv_classification(
        repo("data/ripley-synth/synth_tr.csv"),
        &CsvOptions::default(),
    )
    .unwrap();
    let rows: Vec<usize> = (0..240).step_by(6).collect();
    let data = data.subset(&rows);
    let spec = FitOptions::default().check(MethodName::PacGpc).unwrap();
    let model = pacgp::fit::fit(&spec, &data, labels).unwrap();
    let report = model
        .certify(&data, &CertifyOptions::default())
        .unwrap()
        .remove(0);
    let post = model.posterior().unwrap();
    let Covariance::Sites { sqrt_pi, .. } = &post.cov else {
        panic!("pac-gpc keeps a site-form posterior");
    };
    let pi: Vec<f64> = sqrt_pi.iter().map(|s| s * s).collect();
    let k = post.kernel().gram(post.basis.as_ref()).unwrap();
    let loo =
        pacgp::loo::posterior_cavity_loo(post, &pacgp::likelihood::Likelihood::probit(), &data.y)
            .unwrap();
    let mut errors = 0;
    for i in 0..data.n() {
        let mean = brute_force_cavity_mean(&k, &post.alpha, &pi, i);
        let margin = data.y[i] * mean;
        assert!(
            (loo.loo.loo_margins[i] - margin).abs() <= 1e-8 * (1.0 + margin.abs()),
            "row {i}: {} vs {margin}",
            loo.loo.loo_margins[i]
        );
        errors += usize::from(!(margin > 0.0));
    }
    let rate = errors as f64 / data.n() as f64;
    assert_eq!(report.loo_error, Some(rate));
    assert_eq!(report.loo_estimator, Some(pacgp::loo::LooEstimator::Cavity));
    let exact = CertifyOptions {
        loo: LooRequest::Mode(pacgp::loo::LooMode::Exact),
        ..Default::default()
    };
    let e = model.certify(&data, &exact).unwrap_err().to_string();
    assert!(
        e.contains("cavities") && e.contains("again for every row"),
        "{e}"
    );
}
