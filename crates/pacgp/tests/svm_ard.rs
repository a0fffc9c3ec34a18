//! Beyond the seed: the smoothed linear-response LOO of a quadratic-slack SVM over ARD
//! lengthscales and v (svm::ard): its gradient against central differences where the
//! support-vector set is unchanged, and L-BFGS lowering it.

mod common;

use faer::Mat;
use pacgp::optim::{minimize, LbfgsConfig, Objective};
use pacgp::svm::ard::SmoothedLoo;

/// Toy labels from the first two inputs plus a third, irrelevant input.
fn data(n: usize) -> (Mat<f64>, Vec<f64>) {
    let (x2, y) = common::toy_shifted(n, 0.013);
    let x = Mat::from_fn(n, 3, |i, j| {
        if j < 2 {
            x2[(i, j)]
        } else {
            (((i * 31) % 17) as f64 / 17.0) * 2.0 - 1.0
        }
    });
    (x, y)
}

/// Central differences with h = 1e-5: truncation O(h²) ≈ 1e-10 and SMO's stopping gap
/// 1e-13 over h ≈ 1e-8, so 1e-6 relative is loose; only where the SV set is the same at
/// both ends (the estimate is piecewise smooth).
#[test]
fn gradient_matches_central_differences() {
    let (x, y) = data(70);
    let obj = SmoothedLoo::new(x.as_ref(), &y, 4.0, 1e-13).unwrap();
    let h = 1e-5;
    let mut checked = 0;
    for p in [
        vec![0.0, -0.2, 0.3, -1.0],
        vec![-0.3, 0.1, 1.0, -0.5],
        vec![0.2, 0.2, -0.5, -2.0],
    ] {
        let e = obj.evaluate(&p).unwrap();
        assert!(e.value > 0.0 && e.value < 1.0);
        for t in 0..p.len() {
            let (mut pp, mut pm) = (p.clone(), p.clone());
            pp[t] += h;
            pm[t] -= h;
            let (ep, em) = (obj.evaluate(&pp).unwrap(), obj.evaluate(&pm).unwrap());
            if ep.support != e.support || em.support != e.support {
                continue;
            }
            checked += 1;
            let fd = (ep.value - em.value) / (2.0 * h);
            let g = e.gradient[t];
            assert!(
                (fd - g).abs() < 1e-6 * (1.0 + g.abs()),
                "p = {p:?}, t = {t}: analytic {g}, central difference {fd}"
            );
        }
    }
    eprintln!("{checked} of 12 gradient components checked");
    assert!(checked >= 8, "only {checked} components checked");
}

#[test]
fn lbfgs_lowers_the_smoothed_estimate() {
    let (x, y) = data(70);
    let obj = SmoothedLoo::new(x.as_ref(), &y, 4.0, 1e-10).unwrap();
    let p0 = vec![0.0, 0.0, 0.0, 0.0];
    let e0 = obj.value(&p0).unwrap();
    let cfg = LbfgsConfig {
        max_iter: 30,
        bounds: Some(vec![(-3.0, 3.0); 4]),
        ..Default::default()
    };
    let r = minimize(&obj, &p0, &cfg).unwrap();
    eprintln!(
        "smoothed LR-LOO {e0:.4} -> {:.4} at {:?} ({:?})",
        r.value, r.params, r.termination
    );
    assert!(r.value < e0);
    // the irrelevant third input should not end with the shortest lengthscale
    assert!(r.params[2] > r.params[0].min(r.params[1]));
}
