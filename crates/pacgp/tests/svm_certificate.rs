//! The SVM's PAC-Bayes certificate as a GP MAP (seed 001 §17.4, Langford & Shawe-Taylor
//! 2002): KL and Gibbs error of the shifted prior against direct evaluation, the bound
//! against `bounds::pac_bayes_bound`, and the Wisconsin figure against Laplace's.

mod common;

use faer::Mat;
use pacgp::bounds::{pac_bayes_bound, BoundKind, ConfidenceTerm};
use pacgp::data::Standardizer;
use pacgp::error::Error;
use pacgp::kernel::Kernel;
use pacgp::special::normal_cdf;
use pacgp::svm::certificate::{svm_certificate, svm_posterior, SvmCertificateConfig};
use pacgp::svm::{svm, Slack, SvmConfig};

/// `k + σ_b²`: the bias as a constant term of the prior kernel.
fn prior(l: f64, bias_var: f64) -> Kernel {
    Kernel::Sum {
        left: Box::new(Kernel::se_iso(l, 1.0)),
        right: Box::new(Kernel::Constant {
            ln_variance: bias_var.ln(),
        }),
    }
}

fn bias_free(slack: Slack) -> SvmConfig {
    SvmConfig {
        slack,
        bias: false,
        tol: 1e-10,
        ..Default::default()
    }
}

fn row(x: &Mat<f64>, i: usize) -> Vec<f64> {
    (0..x.ncols()).map(|j| x[(i, j)]).collect()
}

#[test]
fn kl_and_gibbs_error_match_direct_evaluation() {
    let (x, y) = common::toy_shifted(50, 0.01);
    let k = prior(0.9, 0.5);
    let n = y.len();
    for slack in [Slack::Linear { c: 2.0 }, Slack::Quadratic { v: 0.3 }] {
        let fit = svm(&k, x.as_ref(), &y, &bias_free(slack)).unwrap();
        let rows: Vec<Vec<f64>> = (0..n).map(|i| row(&x, i)).collect();
        let w: Vec<f64> = (0..n).map(|i| y[i] * fit.alpha[i]).collect();
        let f: Vec<f64> = (0..n)
            .map(|i| (0..n).map(|j| k.eval(&rows[i], &rows[j]) * w[j]).sum())
            .collect();
        let wkw: f64 = (0..n).map(|i| w[i] * f[i]).sum();
        for mu in [0.5, 3.0] {
            let q = svm_posterior(&k, x.as_ref(), &y, &fit, mu).unwrap();
            let kl = q.kl_to_prior().unwrap();
            let want = 0.5 * mu * mu * wkw;
            assert!((kl - want).abs() < 1e-10 * want, "KL {kl} vs {want}");
            let p = q.predict(x.as_ref()).unwrap();
            let mut gibbs = 0.0;
            for i in 0..n {
                let kii = k.eval(&rows[i], &rows[i]);
                assert!((p.mean[i] - mu * f[i]).abs() < 1e-10);
                assert!((p.var[i] - kii).abs() < 1e-12, "prior variance");
                gibbs += normal_cdf(-mu * y[i] * f[i] / kii.sqrt()) / n as f64;
            }
            let got = pacgp::loss::gibbs_error_classification(&y, &p, 0.0, None).unwrap();
            assert!((got - gibbs).abs() < 1e-12, "Gibbs {got} vs {gibbs}");
        }
        let cfg = SvmCertificateConfig::default();
        let cert = svm_certificate(&k, x.as_ref(), &y, &fit, &cfg).unwrap();
        let c = &cert.certificate;
        let pen = (cfg.mu.len() as f64).ln();
        assert!((c.penalty - pen).abs() < 1e-12);
        assert!((c.kl - 0.5 * cert.mu * cert.mu * wkw).abs() < 1e-9 * c.kl);
        let b = pac_bayes_bound(
            c.empirical_risk,
            c.kl,
            n,
            0.01,
            pen,
            BoundKind::Kl,
            ConfidenceTerm::Maurer,
        )
        .unwrap();
        assert!((c.bound - b).abs() < 1e-12);
        let min = cert
            .per_mu
            .iter()
            .map(|p| p.1)
            .fold(f64::INFINITY, f64::min);
        assert!((c.bound - min).abs() < 1e-12);
        assert!(c.bound > c.empirical_risk && c.bound < 1.0);
    }
}

#[test]
fn a_fitted_bias_is_rejected() {
    let (x, y) = common::toy_shifted(30, 0.01);
    let k = Kernel::se_iso(1.0, 1.0);
    let fit = svm(&k, x.as_ref(), &y, &SvmConfig::default()).unwrap();
    let r = svm_posterior(&k, x.as_ref(), &y, &fit, 1.0);
    assert!(matches!(r, Err(Error::Unsupported(_))));
    let fit = svm(&k, x.as_ref(), &y, &bias_free(Slack::Linear { c: 1.0 })).unwrap();
    assert!(svm_posterior(&k, x.as_ref(), &y, &fit, 0.0).is_err());
    let empty = SvmCertificateConfig {
        mu: pacgp::select::Menu::charged(vec![], "μ"),
        ..Default::default()
    };
    assert!(svm_certificate(&k, x.as_ref(), &y, &fit, &empty).is_err());
}

/// Wisconsin, all 683 complete rows standardised (as the README's Laplace figure): the SVM's
/// certificate over a grid of 4 lengthscales × 3 slacks × 2 bias variances σ_b² ∈ {1, 0.1}
/// (the constant term of the prior), paying ln 24 + ln 17: bound 0.150 (l = 3, linear slack
/// C = 1, σ_b² = 0.1, μ = √2). Disclosure: σ_b² = 0.1 was added to the grid after the first
/// run with σ_b² = 1 alone (ln 12 + ln 17) gave 0.172, so the 0.150 is not a certificate
/// fixed before seeing this sample; 0.172 is. Prints the bound for the report; the README's Laplace
/// classifier certifies 0.136 on the same rows with δ = 0.01 and Maurer's constant.
#[test]
fn wisconsin_certificate() {
    let data = common::breast_cancer();
    let s = Standardizer::fit(data.x.as_ref(), &data.feature_names).unwrap();
    let x = s.transform(data.x.as_ref()).unwrap();
    let y = data.y;
    let ls = [2.0, 3.0, (9.0f64 / 0.3).sqrt(), 8.0];
    let slacks = [
        Slack::Quadratic { v: 1.3 },
        Slack::Quadratic { v: 0.3 },
        Slack::Linear { c: 1.0 },
    ];
    let bias_vars = [1.0, 0.1];
    let extra = ((ls.len() * slacks.len() * bias_vars.len()) as f64).ln();
    let mut best = (
        f64::INFINITY,
        0.0,
        Slack::Linear { c: 1.0 },
        0.0,
        0.0,
        0.0,
        0.0,
    );
    for (&l, &bv) in ls
        .iter()
        .flat_map(|l| bias_vars.iter().map(move |b| (l, b)))
    {
        for &slack in &slacks {
            let k = prior(l, bv);
            let fit = svm(&k, x.as_ref(), &y, &bias_free(slack)).unwrap();
            let cfg = SvmCertificateConfig {
                choices: vec![pacgp::certificate::PenaltyTerm {
                    what: "kernel × slack × bias variance".into(),
                    nats: extra,
                }],
                ..Default::default()
            };
            let c = svm_certificate(&k, x.as_ref(), &y, &fit, &cfg).unwrap();
            let cc = &c.certificate;
            assert!(cc.bound.is_finite() && cc.bound > cc.empirical_risk && cc.bound <= 1.0);
            if cc.bound < best.0 {
                best = (cc.bound, l, slack, c.mu, cc.kl, cc.empirical_risk, bv);
            }
        }
    }
    eprintln!(
        "Wisconsin SVM certificate: bound {:.4} at l = {:.3}, {:?}, bias variance {}, mu = {}, KL {:.2}, Gibbs error {:.4} (Laplace: 0.136)",
        best.0, best.1, best.2, best.6, best.3, best.4, best.5
    );
    assert!(best.0 < 0.5);
}

/// `certify` right after `fit` takes the SVM's leave-one-out from the fit's own dual solution;
/// a model read back from its file solves the dual again. Both give the same certificate and
/// the same leave-one-out, to the bit, on the sample in its order and in reverse.
#[test]
fn certify_after_fit_equals_certify_of_the_saved_model() {
    use pacgp::model::{CertifyOptions, FittedModel};
    use pacgp::spec::{FitOptions, MethodName};
    let opts = pacgp::data::CsvOptions {
        drop_columns: vec!["sample_code_number".into()],
        ..Default::default()
    };
    let (data, labels) = pacgp::data::load_csv_classification(
        std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../../data/breast-cancer-wisconsin/breast_cancer_wisconsin_complete683.csv"),
        &opts,
    )
    .unwrap();
    let spec = FitOptions {
        c: Some(1.0),
        lengthscale: Some(4.5f64.sqrt()),
        ..Default::default()
    }
    .check(MethodName::Svm)
    .unwrap();
    let fresh = pacgp::fit::fit(&spec, &data, labels).unwrap();
    let text = serde_json::to_string(&fresh).unwrap();
    let loaded = FittedModel::from_json(&text, "m.json").unwrap();
    let certify = CertifyOptions::default();
    let (a, b) = (
        fresh.certify(&data, &certify).unwrap(),
        loaded.certify(&data, &certify).unwrap(),
    );
    assert_eq!(a[0].certificate.bound, b[0].certificate.bound);
    assert!(a[0].loo_error.is_some());
    assert_eq!(a[0].loo_error, b[0].loo_error);
    // The same rows in another order are the training sample too, but the fit's solution is
    // indexed by its own row order: the fresh model solves again, as the loaded one does.
    let reversed = data.subset(&(0..data.n()).rev().collect::<Vec<_>>());
    let (c, d) = (
        fresh.certify(&reversed, &certify).unwrap(),
        loaded.certify(&reversed, &certify).unwrap(),
    );
    assert_eq!(c[0].loo_error, d[0].loo_error);
    assert_eq!(c[0].certificate.bound, d[0].certificate.bound);
}
