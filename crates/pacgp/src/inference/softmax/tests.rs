//! The softmax Laplace against dense brute force (the `nC × nC` matrices formed and factored
//! directly), against the binary logistic Laplace for two classes, and its evidence gradient
//! against central differences.

use faer::Mat;

use super::evidence::{softmax_evidence_gradient, softmax_mode};
use super::*;
use crate::gradcheck::{assert_gradient_close, Tolerance};
use crate::kernel::Kernel;
use crate::likelihood::Likelihood;
use crate::linalg::{Cholesky, JitterPolicy};

fn toy(n: usize, classes: usize) -> (Mat<f64>, Vec<usize>) {
    let x = Mat::from_fn(n, 2, |i, j| {
        let t = i as f64 * 0.7;
        if j == 0 {
            t.sin() * 1.3
        } else {
            (0.5 * t).cos() + 0.1 * t
        }
    });
    let y = (0..n).map(|i| (i * 7 + i / 3) % classes).collect();
    (x, y)
}

fn tight() -> SoftmaxConfig {
    SoftmaxConfig {
        max_iter: 200,
        tol: 1e-15,
    }
}

/// Dense `W = D − ΠΠᵀ` (class-major) at `π`.
fn dense_w(pi: &[Vec<f64>]) -> Mat<f64> {
    let (c, n) = (pi.len(), pi[0].len());
    Mat::from_fn(n * c, n * c, |r, s| {
        let (a, i) = (r / n, r % n);
        let (b, j) = (s / n, s % n);
        if i != j {
            return 0.0;
        }
        f64::from(a == b) * pi[a][i] - pi[a][i] * pi[b][i]
    })
}

/// Block-diagonal `diag(K, …, K)`.
fn block_diag(k: &Mat<f64>, c: usize) -> Mat<f64> {
    let n = k.nrows();
    Mat::from_fn(n * c, n * c, |r, s| {
        if r / n == s / n {
            k[(r % n, s % n)]
        } else {
            0.0
        }
    })
}

fn chol(a: &Mat<f64>) -> Cholesky {
    Cholesky::factor(a.as_ref(), &JitterPolicy::none(), "test").unwrap()
}

#[test]
fn mode_evidence_kl_and_predictions_match_dense_brute_force() {
    let (n, c) = (9, 3);
    let (x, y) = toy(n, c);
    let kernel = Kernel::se_iso(1.1, 2.5);
    let mode = softmax_mode(&kernel, x.as_ref(), &y, c, &tight(), None).unwrap();
    // Stationarity: f̂ = K(y − π̂).
    let y1 = one_hot(&y, c);
    for cls in 0..c {
        let r: Vec<f64> = (0..n).map(|i| y1[cls][i] - mode.pi[cls][i]).collect();
        let kr = crate::linalg::mat_vec(&mode.k, &r);
        for i in 0..n {
            assert!((kr[i] - mode.f[cls][i]).abs() < 1e-10, "f̂ ≠ K(y − π̂)");
        }
    }
    // ln q = Ψ(f̂) − ½ ln|I + KW| with |I + KW| = |K||K⁻¹ + W| (dense).
    let kb = block_diag(&mode.k, c);
    let kinv = chol(&kb).inverse().unwrap();
    let prec = &kinv + &dense_w(&mode.pi);
    let ln_det = chol(&kb).ln_det() + chol(&prec).ln_det();
    let (_, lse) = softmax(&mode.f);
    let quad: f64 = (0..c)
        .map(|cls| crate::linalg::dot(&mode.a[cls], &mode.f[cls]))
        .sum();
    let fit: f64 = (0..n).map(|i| mode.f[y[i]][i] - lse[i]).sum();
    let want = -0.5 * quad + fit - 0.5 * ln_det;
    assert!(
        (mode.ln_evidence - want).abs() < 1e-10,
        "{} vs {want}",
        mode.ln_evidence
    );
    // KL(N(f̂, Σ) ‖ N(0, K)) with Σ = (K⁻¹ + W)⁻¹.
    let sigma = chol(&prec).inverse().unwrap();
    let nc = (n * c) as f64;
    let fvec: Vec<f64> = (0..c).flat_map(|cls| mode.f[cls].clone()).collect();
    let tr = crate::linalg::trace_of_product(kinv.as_ref(), sigma.as_ref());
    let mahal = crate::linalg::dot(&fvec, &crate::linalg::mat_vec(&kinv, &fvec));
    let kl_want = 0.5 * (tr + mahal - nc + chol(&kb).ln_det() - chol(&sigma).ln_det());
    let post = SoftmaxPosterior::from_mode(&kernel, x.as_ref(), mode.clone());
    let kl = post.kl_to_prior().unwrap();
    assert!(
        (kl - kl_want).abs() < 1e-9 * (1.0 + kl_want),
        "{kl} vs {kl_want}"
    );
    // Predictions at new points: mean K*ᵀK⁻¹f̂, covariance K** − K*ᵀK⁻¹K* + K*ᵀK⁻¹ΣK⁻¹K*.
    let xt = Mat::from_fn(4, 2, |i, j| 0.3 * i as f64 - 0.5 + 0.2 * j as f64);
    let (joint, marg) = post.predict_joint(xt.as_ref()).unwrap();
    let ks = kernel.cross(x.as_ref(), xt.as_ref()).unwrap();
    let kss = kernel.gram(xt.as_ref()).unwrap();
    let ks_big = Mat::from_fn(n * c, 4 * c, |r, s| {
        if r / n == s / 4 {
            ks[(r % n, s % 4)]
        } else {
            0.0
        }
    });
    let kinv_ks = &kinv * &ks_big;
    let cov = block_diag(&kss, c) - ks_big.transpose() * &kinv_ks
        + kinv_ks.transpose() * &sigma * &kinv_ks;
    let mean = kinv_ks.transpose() * faer::Mat::from_fn(n * c, 1, |r, _| fvec[r]);
    for t in 0..4 {
        let l = &joint.chol[t];
        let got = l * l.transpose();
        for a in 0..c {
            assert!((joint.mean[(t, a)] - mean[(a * 4 + t, 0)]).abs() < 1e-9);
            assert!((marg[a].var[t] - cov[(a * 4 + t, a * 4 + t)]).abs() < 1e-9);
            for b in 0..c {
                let want = cov[(a * 4 + t, b * 4 + t)];
                assert!(
                    (got[(a, b)] - want).abs() < 1e-9,
                    "cov {a},{b} at {t}: {} vs {want}",
                    got[(a, b)]
                );
            }
        }
    }
}

/// Two classes: `f_1 − f_0 ~ GP(0, 2k)` carries the whole likelihood `σ(f_1 − f_0)` and the
/// Laplace approximation is invariant under the linear change to `(f_1 − f_0, f_1 + f_0)`, so
/// the softmax evidence and predictions equal the binary logistic Laplace's on `2k`.
#[test]
fn two_classes_equal_the_binary_logistic_laplace_on_twice_the_kernel() {
    let n = 12;
    let (x, y) = toy(n, 2);
    let kernel = Kernel::se_iso(0.9, 1.7);
    let mode = softmax_mode(&kernel, x.as_ref(), &y, 2, &tight(), None).unwrap();
    let twice = Kernel::se_iso(0.9, 3.4);
    let signs: Vec<f64> = y.iter().map(|&c| if c == 1 { 1.0 } else { -1.0 }).collect();
    let cfg = crate::inference::laplace::LaplaceConfig {
        max_iter: 200,
        tol: 1e-15,
    };
    let binary =
        crate::inference::laplace::laplace(&twice, &Likelihood::Logistic, x.as_ref(), &signs, &cfg)
            .unwrap();
    let lb = binary.ln_evidence.unwrap();
    assert!(
        (mode.ln_evidence - lb).abs() < 1e-9,
        "{} vs {lb}",
        mode.ln_evidence
    );
    let post = SoftmaxPosterior::from_mode(&kernel, x.as_ref(), mode);
    let xt = Mat::from_fn(5, 2, |i, j| 0.4 * i as f64 - 1.0 + 0.3 * j as f64);
    let (joint, _) = post.predict_joint(xt.as_ref()).unwrap();
    let m = binary.posterior.predict(xt.as_ref()).unwrap();
    for t in 0..5 {
        let l = &joint.chol[t];
        let s = l * l.transpose();
        let diff_mean = joint.mean[(t, 1)] - joint.mean[(t, 0)];
        let diff_var = s[(0, 0)] + s[(1, 1)] - 2.0 * s[(0, 1)];
        assert!(
            (diff_mean - m.mean[t]).abs() < 1e-9,
            "{diff_mean} vs {}",
            m.mean[t]
        );
        assert!(
            (diff_var - m.var[t]).abs() < 1e-9,
            "{diff_var} vs {}",
            m.var[t]
        );
    }
}

/// The analytic evidence gradient against central differences of the evidence (step 1e-5 in
/// ln space, Newton to 1e-15 so the evidence is smooth to ~1e-13: the difference's error is
/// ~1e-9, the tolerance 1e-6 relative), for SE-ARD and a sum kernel.
#[test]
fn evidence_gradient_matches_central_differences() {
    let (n, c) = (10, 3);
    let (x, y) = toy(n, c);
    for kernel in [
        Kernel::se_ard(&[0.8, 1.6], 1.9),
        Kernel::from_spec("matern52+linear", 2).unwrap(),
    ] {
        let theta = kernel.params();
        let mode = softmax_mode(&kernel, x.as_ref(), &y, c, &tight(), None).unwrap();
        let grad = softmax_evidence_gradient(&kernel, x.as_ref(), &mode).unwrap();
        let f = |t: &[f64]| {
            let mut k = kernel.clone();
            k.set_params(t).unwrap();
            softmax_mode(&k, x.as_ref(), &y, c, &tight(), None)
                .unwrap()
                .ln_evidence
        };
        assert_gradient_close(
            f,
            &theta,
            &grad,
            crate::gradcheck::DEFAULT_STEP,
            Tolerance::mixed(1e-6),
            &kernel.describe(),
        );
    }
}

/// A warm start from a nearby mode lands on the same mode; the stored form reloads to the
/// same predictions.
#[test]
fn warm_start_and_file_round_trip() {
    let (n, c) = (15, 4);
    let (x, y) = toy(n, c);
    let k1 = Kernel::se_iso(1.0, 2.0);
    let k2 = Kernel::se_iso(1.05, 2.1);
    let m1 = softmax_mode(&k1, x.as_ref(), &y, c, &tight(), None).unwrap();
    let cold = softmax_mode(&k2, x.as_ref(), &y, c, &tight(), None).unwrap();
    let warm = softmax_mode(&k2, x.as_ref(), &y, c, &tight(), Some(&m1.f)).unwrap();
    assert!((cold.ln_evidence - warm.ln_evidence).abs() < 1e-10);
    assert!(warm.report.iterations <= cold.report.iterations);
    let post = SoftmaxPosterior::from_mode(&k2, x.as_ref(), warm);
    let text = serde_json::to_string(&post).unwrap();
    let back: SoftmaxPosterior = serde_json::from_str(&text).unwrap();
    let (a, _) = post.predict_joint(x.as_ref()).unwrap();
    let (b, _) = back.predict_joint(x.as_ref()).unwrap();
    assert_eq!(a.mean, b.mean);
    assert!((post.kl_to_prior().unwrap() - back.kl_to_prior().unwrap()).abs() < 1e-12);
    // A π that is not a probability vector is refused.
    let bad = text.replacen("\"pi\":[[", "\"pi\":[[1.5,", 1);
    assert!(serde_json::from_str::<SoftmaxPosterior>(&bad).is_err());
}
