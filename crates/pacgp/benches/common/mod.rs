//! What several benches share: the synthetic regression data of `shared/peers/make_data.py`
//! (x ~ U(−2, 2)^d, y = Σ sin x_j + noise, seeded ChaCha8), the SE-ARD kernel they start from,
//! and the kl-PAC-SGP bound's settings of the sparse benches.
// Each bench is its own crate and uses only part of this module.
#![allow(dead_code)]

use faer::Mat;
use pacgp::bounds::{BoundKind, ConfidenceTerm, HyperGrid};
use pacgp::kernel::Kernel;
use pacgp::loss::RegressionLoss;
use pacgp::objective::bound::MinimisedBound;
use rand::{Rng, SeedableRng};
use rand_distr::{Distribution, StandardNormal};

/// `n` points in `d` inputs: x ~ U(−2, 2)^d, y = Σ_j sin x_j + 0.1·(U(0, 1) − ½).
pub fn synth(n: usize, d: usize) -> (Mat<f64>, Vec<f64>) {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
    let x = Mat::from_fn(n, d, |_, _| rng.gen_range(-2.0..2.0));
    let y = (0..n)
        .map(|i| (0..d).map(|j| f64::sin(x[(i, j)])).sum::<f64>() + 0.1 * (rng.gen::<f64>() - 0.5))
        .collect();
    (x, y)
}

/// SE-ARD on eight inputs, unit signal variance.
pub fn kernel() -> Kernel {
    Kernel::se_ard(&[1.0, 1.2, 0.9, 1.5, 2.0, 0.8, 1.1, 1.3], 1.0)
}

/// The kl-PAC-SGP bound of the sparse benches: ε-band loss (ε = 0.6), δ = 0.01, the default
/// grid's penalty for nine hyperparameters, the kl-inverse form.
pub struct PacSgpSettings {
    pub loss: RegressionLoss,
    pub bound: MinimisedBound,
}

pub fn pac_sgp_settings() -> PacSgpSettings {
    let penalty = HyperGrid::default().penalty(9);
    PacSgpSettings {
        loss: RegressionLoss::EpsilonBand { epsilon: 0.6 },
        bound: MinimisedBound::new(0.01, ConfidenceTerm::Maurer, BoundKind::Kl, penalty).unwrap(),
    }
}

/// `n` labelled points in `d` inputs shaped as `make_data.py`'s classification sets (its
/// Gaussian noise replaced by uniform noise of the same variance): x ~ U(−2, 2)^d, label +1
/// where Σ_j sin x_j + 0.3·(U(0, 1) − ½)·√12 > 0, else −1 (seeded ChaCha8).
pub fn synth_clf(n: usize, d: usize) -> (Mat<f64>, Vec<f64>) {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(5);
    let x = Mat::from_fn(n, d, |_, _| rng.gen_range(-2.0..2.0));
    let y = (0..n)
        .map(|i| {
            let noise = 0.3 * (rng.gen::<f64>() - 0.5) * 12f64.sqrt();
            let f = (0..d).map(|j| f64::sin(x[(i, j)])).sum::<f64>() + noise;
            if f > 0.0 {
                1.0
            } else {
                -1.0
            }
        })
        .collect();
    (x, y)
}

/// `n` labelled points in eight inputs as `make_data.py`'s classification sets (its Gaussian
/// noise, seeded ChaCha8 3): x ~ U(−2, 2)^8, label +1 where Σ_j sin x_j + 0.3·e > 0, else −1.
pub fn synth_clf_gaussian(n: usize) -> (Mat<f64>, Vec<f64>) {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
    let x = Mat::from_fn(n, 8, |_, _| rng.gen_range(-2.0..2.0));
    let label = |f: f64| if f > 0.0 { 1.0 } else { -1.0 };
    let y = (0..n)
        .map(|i| {
            let e: f64 = StandardNormal.sample(&mut rng);
            label((0..8).map(|j| f64::sin(x[(i, j)])).sum::<f64>() + 0.3 * e)
        })
        .collect();
    (x, y)
}
