//! The default classifier menu on one seeded split of a multi-class set (the multiclass
//! table's splits), kernel by kernel: one-vs-rest Laplace (probit) with every class on the
//! same candidate `σ_f²·SE(l)`, its held-out accuracy (the class of largest vote probability)
//! and its classes' mean certificate (δ = 0.01, Maurer, `ln` of the candidates); then each class's
//! lowest-bound candidate, as `pacgp fit --method laplace` chooses, and that model's accuracy.
//! With `--wider`, five candidates beyond the menu's long, large-variance corner too.
//!
//! ```text
//! cargo run --release -p pacgp --example multiclass_menu_scan -- [digits|iris|wine] [SEED] [--wider]
//! ```
#![allow(missing_docs)]

use std::path::Path;

use pacgp::bounds::ConfidenceTerm;
use pacgp::certificate::{Certificate, CertificateSpec, GibbsClassifier, GibbsLoss, PenaltyTerm};
use pacgp::data::Standardizer;
use pacgp::experiments::multiclass::{load_multiclass_set, split};
use pacgp::inference::laplace::{laplace, LaplaceConfig};
use pacgp::kernel::Kernel;
use pacgp::likelihood::Likelihood;
use pacgp::multiclass::{argmax_rows, ln_vote_matrix};
use pacgp::plan::classifier_candidates;
use pacgp::posterior::Marginals;

/// The allocator of the `pacgp` binary and the Python module (see the CLI's main.rs).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Share of `truth` (class indices) that the classes of largest vote probability match.
fn accuracy(scores: &[Marginals], truth: &[f64]) -> Result<f64, pacgp::Error> {
    let predicted = argmax_rows(&ln_vote_matrix(scores)?);
    let right = predicted
        .iter()
        .zip(truth)
        .filter(|(p, y)| **p == **y as usize)
        .count();
    Ok(right as f64 / truth.len() as f64)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let wider = args.iter().any(|a| a == "--wider");
    let rest: Vec<&String> = args.iter().filter(|a| *a != "--wider").collect();
    let name = rest.first().map_or("digits", |s| s.as_str());
    let seed: u64 = rest.get(1).map_or(Ok(0), |s| s.parse())?;
    let (data, classes) = load_multiclass_set(Path::new("data"), name)?;
    let (train, test) = split(&data, 0.2, seed)?;
    let scaler = Standardizer::fit(train.x.as_ref(), &train.feature_names)?;
    let (x, x_test) = (
        scaler.transform(train.x.as_ref())?,
        scaler.transform(test.x.as_ref())?,
    );
    let mut candidates = classifier_candidates(x.ncols());
    if wider {
        for (sf2, l) in [
            (64.0, 8.0),
            (64.0, 16.0),
            (16.0, 32.0),
            (64.0, 32.0),
            (256.0, 16.0),
        ] {
            candidates.push(Kernel::se_iso(l, sf2));
        }
    }
    let lik = Likelihood::probit();
    let loss = GibbsLoss::Classification(GibbsClassifier::latent(&lik));
    let price = PenaltyTerm::candidates(candidates.len(), "kernel σ_f²·SE(l)");
    let spec = CertificateSpec::new(0.01, ConfidenceTerm::Maurer, vec![price]);
    println!(
        "{name}, split {seed}: {} training and {} held-out points, {} classes",
        train.n(),
        test.n(),
        classes.k()
    );
    // scores[candidate][class] on the held-out points, bounds[candidate][class].
    let (mut scores, mut bounds) = (Vec::new(), Vec::new());
    for kernel in &candidates {
        let (mut s, mut b) = (Vec::new(), Vec::new());
        for c in 0..classes.k() {
            let y: Vec<f64> = train
                .y
                .iter()
                .map(|&v| if v as usize == c { 1.0 } else { -1.0 })
                .collect();
            let fit = laplace(kernel, &lik, x.as_ref(), &y, &LaplaceConfig::default())?;
            b.push(Certificate::of_posterior(&fit.posterior, x.as_ref(), &y, &loss, &spec)?.bound);
            s.push(fit.posterior.predict(x_test.as_ref())?);
        }
        let p = kernel.params();
        println!(
            "σ_f² = {:>5.1}, l = {:>6.3}: accuracy {:.4}, classes' mean bound {:.4}",
            p[0].exp(),
            p[1].exp(),
            accuracy(&s, &test.y)?,
            b.iter().sum::<f64>() / b.len() as f64
        );
        scores.push(s);
        bounds.push(b);
    }
    let chosen: Vec<usize> = (0..classes.k())
        .map(|c| {
            (0..candidates.len())
                .min_by(|&a, &b| bounds[a][c].total_cmp(&bounds[b][c]))
                .unwrap_or(0)
        })
        .collect();
    let s: Vec<Marginals> = chosen
        .iter()
        .enumerate()
        .map(|(c, &i)| scores[i][c].clone())
        .collect();
    println!(
        "each class's lowest bound (candidates {chosen:?}): accuracy {:.4}",
        accuracy(&s, &test.y)?
    );
    Ok(())
}
