//! The (w, C) validation grid on MNIST 2 vs 3 (seed 003 §4.2): the kernel of a grid cell, the
//! grid's bounds and errors, and the PCA preprocessing of the seed.

use super::*;

/// One cell of the (w, C) grid of seed 003 §4.2.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GridCell {
    /// Inverse squared width w of `k = C exp(−w‖x − x'‖²/(2d))`.
    pub w: f64,
    /// Signal scale C.
    pub c: f64,
    /// The scores (train = the training half, test = the validation half).
    #[serde(flatten)]
    pub scores: ClassScores,
}

/// Seed 003's kernel `C exp(−w‖x−x'‖²/(2d))` as an SE kernel: lengthscale `√(d/w)`, variance C.
pub fn w_c_kernel(w: f64, c: f64, d: usize) -> Result<Kernel> {
    if !(w > 0.0 && c > 0.0 && w.is_finite() && c.is_finite()) {
        return Err(Error::InvalidParameter {
            name: "kernel width w or scale C",
            value: if w > 0.0 { c } else { w },
            reason: "must be positive and finite",
        });
    }
    Ok(Kernel::se_iso((d as f64 / w).sqrt(), c))
}

/// Seed 003 §4.2: fit `method` on `train` for every (w, C) and score it on `test`; each cell's
/// bound is for that kernel alone (no penalty: the table is a map, not a selection).
pub fn w_c_grid(
    train: (MatRef<'_, f64>, &[f64]),
    test: (MatRef<'_, f64>, &[f64]),
    ws: &[f64],
    cs: &[f64],
    method: &InferenceMethod,
    lik: &Likelihood,
    delta: f64,
    term: ConfidenceTerm,
    progress: &mut dyn FnMut(usize),
) -> Result<Vec<GridCell>> {
    let d = train.0.ncols();
    let mut out = Vec::new();
    for &w in ws {
        for &c in cs {
            let k = w_c_kernel(w, c, d)?;
            let fit = method.fit(&k, lik, train.0, train.1)?;
            let scores = score(&fit, lik, train, test, delta, 0.0, term)?;
            out.push(GridCell { w, c, scores });
            progress(out.len());
        }
    }
    Ok(out)
}

/// Project `train` and `test` rows onto the `k` leading principal axes of `train` (centred
/// with its mean), then standardise every component with training statistics (seed 003 §4.2
/// preprocesses MNIST by PCA and normalisation).
pub fn pca_standardise(
    train: MatRef<'_, f64>,
    test: MatRef<'_, f64>,
    k: usize,
) -> Result<(Mat<f64>, Mat<f64>)> {
    let (n, d) = (train.nrows(), train.ncols());
    if !(k >= 1 && k <= d) || n < 2 || test.ncols() != d {
        return Err(Error::InvalidParameter {
            name: "PCA components",
            value: k as f64,
            reason: "must lie in 1..=D, with at least two training rows and matching columns",
        });
    }
    let mean: Vec<f64> = (0..d)
        .map(|j| (0..n).map(|i| train[(i, j)]).sum::<f64>() / n as f64)
        .collect();
    let centre = |x: MatRef<'_, f64>| Mat::from_fn(x.nrows(), d, |i, j| x[(i, j)] - mean[j]);
    let (xc, tc) = (centre(train), centre(test));
    let cov = xc.transpose() * &xc;
    let eig = cov
        .self_adjoint_eigen(faer::Side::Lower)
        .map_err(|_| Error::Numerical {
            what: "PCA",
            message: "eigendecomposition of the covariance did not converge".into(),
        })?;
    // Eigenvalues come in increasing order: the last k columns are the leading axes.
    let u = eig.U();
    let axes = Mat::from_fn(d, k, |i, j| u[(i, d - 1 - j)]);
    let (ptr, pte) = (&xc * &axes, &tc * &axes);
    let names: Vec<String> = (0..k).map(|j| format!("pc{j}")).collect();
    let sc = Standardizer::fit(ptr.as_ref(), &names)?;
    Ok((sc.transform(ptr.as_ref())?, sc.transform(pte.as_ref())?))
}

/// Project onto the `k` leading principal axes of `train` and whiten them (as
/// [`pca_standardise`]), then scale every vector to unit length: seed 003 §4.2 "employ\[s\]
/// PCA and normalized every vector". With the kernel's `w/(2d)` this puts the lowest bound
/// in the seed's region w ≈ 0.1–1 (whitened components alone put it near w = 0.01).
pub fn pca_unit_vectors(
    train: MatRef<'_, f64>,
    test: MatRef<'_, f64>,
    k: usize,
) -> Result<(Mat<f64>, Mat<f64>)> {
    let (p, q) = pca_standardise(train, test, k)?;
    let unit = |m: Mat<f64>| {
        let norms: Vec<f64> = (0..m.nrows())
            .map(|i| (0..k).map(|j| m[(i, j)] * m[(i, j)]).sum::<f64>().sqrt())
            .collect();
        Mat::from_fn(m.nrows(), k, |i, j| {
            if norms[i] > 0.0 {
                m[(i, j)] / norms[i]
            } else {
                0.0
            }
        })
    };
    Ok((unit(p), unit(q)))
}

/// MNIST 2 vs 3 (seed 003 §4.2): `n_train` images drawn (seed 0) from the pool rows that are
/// not in the official test set (`t10k_index = −1`), tested on the test file; pixels scaled
/// to [0, 1], projected on `components` principal axes, whitened and scaled to unit length
/// ([`pca_unit_vectors`]).
/// Labels: 2 → −1, 3 → +1.
pub fn mnist_2v3(
    pool: &std::path::Path,
    test: &std::path::Path,
    n_train: usize,
    components: usize,
) -> Result<TrainTest> {
    let opts = crate::data::CsvOptions {
        target: crate::data::TargetSpec::Name("label".into()),
        ..Default::default()
    };
    let (pool, _) = crate::data::load_csv_classification(pool, &opts)?;
    let (test, _) = crate::data::load_csv_classification(test, &opts)?;
    if pool.feature_names.first().map(String::as_str) != Some("t10k_index") {
        return Err(Error::InvalidSpec {
            spec: pool.feature_names.first().cloned().unwrap_or_default(),
            reason: "the MNIST pool's first column must be t10k_index".into(),
        });
    }
    let disjoint: Vec<usize> = (0..pool.n()).filter(|&i| pool.x[(i, 0)] < 0.0).collect();
    let chosen: Vec<usize> = permutation(disjoint.len(), 0)
        .iter()
        .take(n_train)
        .map(|&k| disjoint[k])
        .collect();
    let train = pool.subset(&chosen);
    let pixels = |d: &Dataset| Mat::from_fn(d.n(), d.d() - 1, |i, j| d.x[(i, j + 1)] / 255.0);
    let (x, xt) = pca_unit_vectors(pixels(&train).as_ref(), pixels(&test).as_ref(), components)?;
    Ok(TrainTest {
        x,
        y: train.y,
        xt,
        yt: test.y,
    })
}

// ---------------------------------------------------------------------------------------
// The experiments' settings, fixed here so that any caller reruns the seed's tables.

/// Settings of the (w, C) grid on MNIST 2 vs 3 (seed 003 §4.2).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MnistGridSettings {
    /// Training images (disjoint from the test set).
    pub n_train: usize,
    /// IVM's active set d.
    pub active_set: usize,
    /// Principal components kept (the seed does not say how many).
    pub pca_components: usize,
    /// Inverse squared widths w.
    pub ws: Vec<f64>,
    /// Signal scales C.
    pub cs: Vec<f64>,
}

impl MnistGridSettings {
    /// The seed's: 3000 images, d = 300, w ∈ 10⁻⁴…10³, C ∈ 10¹…10⁸.
    pub fn paper() -> Self {
        Self {
            n_train: 3000,
            active_set: 300,
            pca_components: 50,
            ws: (-4..=3).map(|e| 10f64.powi(e)).collect(),
            cs: (1..=8).map(|e| 10f64.powi(e)).collect(),
        }
    }

    /// 1000 images, d = 100, a 3×3 grid.
    pub fn quick() -> Self {
        Self {
            n_train: 1000,
            active_set: 100,
            pca_components: 50,
            ws: vec![1e-2, 1e0, 1e2],
            cs: vec![1e1, 1e4, 1e7],
        }
    }
}

/// A [`GridCell`] as one flat CSV record.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GridRecord {
    /// Inverse squared width w.
    pub w: f64,
    /// Signal scale C.
    pub c: f64,
    /// Training Gibbs error.
    pub train_gibbs: f64,
    /// Validation Gibbs error.
    pub test_gibbs: f64,
    /// The seed's "gap error bound".
    pub gap: f64,
    /// Estimated Gibbs error upper bound.
    pub bound: f64,
    /// Training 0-1 error.
    pub train_error: f64,
    /// Validation 0-1 error.
    pub test_error: f64,
    /// `KL(Q‖P)`.
    pub kl: f64,
}

impl From<&GridCell> for GridRecord {
    fn from(g: &GridCell) -> Self {
        let s = &g.scores;
        Self {
            w: g.w,
            c: g.c,
            train_gibbs: s.train_gibbs,
            test_gibbs: s.test_gibbs,
            gap: s.gap,
            bound: s.bound,
            train_error: s.train_error,
            test_error: s.test_error,
            kl: s.kl,
        }
    }
}
