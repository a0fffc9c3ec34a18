//! IVM with d = 300 on the 6000 MNIST 2-vs-3 images of `data/mnist-2v3/` (seed 003 §4.2's
//! setting), timed; then the test error, the Gibbs test error and Seeger's PAC-Bayes bound.
//!
//! Each image is scaled to unit Euclidean norm (seed 003 normalises every vector); kernel
//! `C·exp(−‖x − x'‖²/(2ℓ²))` with C = 10, ℓ = 0.6; probit λ = 1, b = 0. Test images that also
//! occur in the training file (README: `t10k_index ≠ −1`) are left out of the test set.
//!
//! Run: `cargo run --release -p pacgp --example ivm_mnist [d]`.

use std::time::Instant;

use faer::Mat;
use pacgp::bounds::ConfidenceTerm;
use pacgp::certificate::{Certificate, CertificateSpec, GibbsClassifier, GibbsLoss};
use pacgp::data::{load_csv_classification, CsvOptions, TargetSpec};
use pacgp::inference::ivm::{ivm, IvmConfig};
use pacgp::kernel::Kernel;
use pacgp::likelihood::Likelihood;
use pacgp::loss::bayes_error_classification;

/// Pixels (unit-norm rows), labels ±1 (3 → +1) and the `t10k_index` column.
fn load(file: &str) -> pacgp::Result<(Mat<f64>, Vec<f64>, Vec<i64>)> {
    let path = format!("{}/../../data/mnist-2v3/{file}", env!("CARGO_MANIFEST_DIR"));
    let opts = CsvOptions {
        target: TargetSpec::Name("label".into()),
        ..Default::default()
    };
    let (ds, _labels) = load_csv_classification(path, &opts)?;
    let (n, cols) = (ds.x.nrows(), ds.x.ncols());
    let t10k = (0..n).map(|i| ds.x[(i, 0)] as i64).collect();
    let mut x = Mat::from_fn(n, cols - 1, |i, j| ds.x[(i, j + 1)]);
    for i in 0..n {
        let norm = (0..cols - 1).map(|j| x[(i, j)].powi(2)).sum::<f64>().sqrt();
        for j in 0..cols - 1 {
            x[(i, j)] /= norm;
        }
    }
    Ok((x, ds.y, t10k))
}

fn main() -> pacgp::Result<()> {
    let d: usize = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(300);
    let t0 = Instant::now();
    let (x, y, t10k_train) = load("mnist_rsvd_2v3.csv.gz")?;
    let (xt, yt, t10k_test) = load("mnist_test_2v3.csv.gz")?;
    let in_train: std::collections::HashSet<i64> =
        t10k_train.iter().copied().filter(|&i| i >= 0).collect();
    let keep: Vec<usize> = (0..yt.len())
        .filter(|&i| !in_train.contains(&t10k_test[i]))
        .collect();
    let xt = Mat::from_fn(keep.len(), xt.ncols(), |r, c| xt[(keep[r], c)]);
    let yt: Vec<f64> = keep.iter().map(|&i| yt[i]).collect();
    println!(
        "loaded n = {} training, {} disjoint test images, D = {} in {:.2} s",
        y.len(),
        yt.len(),
        x.ncols(),
        t0.elapsed().as_secs_f64()
    );
    let kernel = Kernel::se_iso(0.6, 10.0);
    let lik = Likelihood::probit();
    let t1 = Instant::now();
    let fit = ivm(&kernel, &lik, x.as_ref(), &y, &IvmConfig::new(d))?;
    let fit_s = t1.elapsed().as_secs_f64();
    println!("IVM fit, d = {d}: {fit_s:.3} s");
    let train = fit.posterior.predict(x.as_ref())?;
    let test = fit.posterior.predict(xt.as_ref())?;
    let loss = GibbsLoss::Classification(GibbsClassifier::noisy(&lik));
    let spec = CertificateSpec::new(0.01, ConfidenceTerm::Seeger, vec![]);
    let c = Certificate::of_predictions(&fit.posterior, &train, &y, &loss, &spec)?;
    let gibbs_test = loss.empirical_risk(&yt, &test)?;
    println!(
        "test error {:.4}, Gibbs test error {gibbs_test:.4}, Gibbs train error {:.4}, \
         KL {:.2}, PAC-Bayes bound (δ = 0.01) {:.4}, ADF ln Z {:.2}",
        bayes_error_classification(&yt, &test, 0.0)?,
        c.empirical_risk,
        c.kl,
        c.bound,
        fit.ln_evidence.unwrap_or(f64::NAN)
    );
    Ok(())
}
