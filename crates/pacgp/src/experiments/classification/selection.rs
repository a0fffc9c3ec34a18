//! The selected points of IVM and SOGP on a 2-D three-Gaussian problem (seed 003 §3.4) and
//! risk–coverage curves for selective classification (§4.4).

use super::*;

/// Seed 003 §3.4's data: three unit Gaussians at (−5, 0), (0, 0), (5, 0) with equal weights;
/// the middle one is class +1, the outer two class −1.
pub fn three_gaussians(n: usize, seed: u64) -> (Mat<f64>, Vec<f64>) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut x = Mat::zeros(n, 2);
    let mut y = vec![0.0; n];
    for i in 0..n {
        let comp: usize = rng.gen_range(0..3);
        let cx = [-5.0, 0.0, 5.0][comp];
        let (a, b): (f64, f64) = (
            StandardNormal.sample(&mut rng),
            StandardNormal.sample(&mut rng),
        );
        x[(i, 0)] = cx + a;
        x[(i, 1)] = b;
        y[i] = if comp == 1 { 1.0 } else { -1.0 };
    }
    (x, y)
}

/// Risk–coverage curves of one fit on a test set, one per confidence ordering (§4.4).
pub fn risk_coverage_curves(
    fit: &ClassifierFit,
    lik: &Likelihood,
    test: (MatRef<'_, f64>, &[f64]),
    orderings: &[ConfidenceScore],
) -> Result<Vec<Vec<(f64, f64)>>> {
    let m = fit.posterior.predict(test.0)?;
    let pred = selective::predicted_labels(&m, lik);
    orderings
        .iter()
        .map(|o| selective::risk_coverage(test.1, &pred, &selective::confidence(&m, lik, *o)))
        .collect()
}

/// Mean test risk at one coverage level for one ordering (§4.4's curves).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RiskCoverageRow {
    /// Data set.
    pub dataset: String,
    /// `mean-over-std` (|μ/σ|) or `abs-mean` (|μ|).
    pub ordering: String,
    /// Requested coverage (fraction of test points classified).
    pub coverage: f64,
    /// Mean over the repetitions of the error rate among the accepted points.
    pub risk: f64,
}

/// Risk of a risk–coverage curve at coverage `c`: that of the smallest accepted set covering
/// at least `c` (the curve's points are in increasing coverage).
pub fn risk_at(curve: &[(f64, f64)], c: f64) -> f64 {
    curve
        .iter()
        .find(|(cov, _)| *cov >= c - 1e-12)
        .or(curve.last())
        .map_or(0.0, |(_, r)| *r)
}

/// Seed 003 §4.4: fit `method` on random draws as in [`ivm_uci`] and average the test risk at
/// each coverage level for the |μ/σ| and |μ| orderings.
pub fn risk_coverage_study(
    datasets: &[(String, Dataset)],
    method: &MethodSpec,
    setup: &UciSetup,
    coverages: &[f64],
    progress: &mut dyn FnMut(usize),
) -> Result<Vec<RiskCoverageRow>> {
    let orderings = [
        ("mean-over-std", ConfidenceScore::MeanOverStd),
        ("abs-mean", ConfidenceScore::AbsMean),
    ];
    let mut out = Vec::new();
    let mut done = 0;
    for (name, data) in datasets {
        let mut sums = vec![vec![0.0; coverages.len()]; orderings.len()];
        for rep in 0..setup.reps {
            let tt = draw_two_classes(data, setup.n_train, setup.n_test, rep as u64)?;
            let fit = setup.best_fit(method, &tt)?;
            let scores: Vec<ConfidenceScore> = orderings.iter().map(|o| o.1).collect();
            let curves =
                risk_coverage_curves(&fit, &method.likelihood, (tt.xt.as_ref(), &tt.yt), &scores)?;
            for (k, curve) in curves.iter().enumerate() {
                for (j, &c) in coverages.iter().enumerate() {
                    sums[k][j] += risk_at(curve, c);
                }
            }
            done += 1;
            progress(done);
        }
        for (k, (oname, _)) in orderings.iter().enumerate() {
            for (j, &c) in coverages.iter().enumerate() {
                out.push(RiskCoverageRow {
                    dataset: name.clone(),
                    ordering: (*oname).into(),
                    coverage: c,
                    risk: sums[k][j] / setup.reps as f64,
                });
            }
        }
    }
    Ok(out)
}

/// A labelled 2-D point (the §3.4 data as CSV rows).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LabelledPoint {
    /// First input.
    pub x1: f64,
    /// Second input.
    pub x2: f64,
    /// Label ±1.
    pub y: f64,
}

/// The points one method keeps on the §3.4 problem.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Selection {
    /// `ivm` or `sogp`.
    pub method: String,
    /// Indices of the kept points.
    pub selected: Vec<usize>,
}

/// Seed 003 §3.4: 200 points of [`three_gaussians`] (seed 0), SE(l = 1), probit; the 50
/// points IVM and SOGP keep.
pub fn selection_2d() -> Result<(Vec<LabelledPoint>, Vec<Selection>)> {
    let (x, y) = three_gaussians(200, 0);
    let kernel = Kernel::se_iso(1.0, 1.0);
    let lik = Likelihood::probit();
    let mut out = Vec::new();
    for spec in seed_003_methods(50).into_iter().take(2) {
        let fit = spec.method.fit(&kernel, &lik, x.as_ref(), &y)?;
        out.push(Selection {
            method: spec.name,
            selected: fit.basis_indices.clone().unwrap_or_default(),
        });
    }
    let points = (0..y.len())
        .map(|i| LabelledPoint {
            x1: x[(i, 0)],
            x2: x[(i, 1)],
            y: y[i],
        })
        .collect();
    Ok((points, out))
}
