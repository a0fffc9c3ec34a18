//! Leave-one-out of the sparse variational classifier (`svgp`, `pac-svgp`; docs/math.md §12,
//! eqs. 12.6–12.8): each training row enters `q(u)` as a rank-one Gaussian site, and the model
//! without row i is `q(u)` with that site removed (not refitted: the other rows' sites stay, as
//! LA-LOO's and LOO-EP's do).
//!
//! With `p_i = K_uu⁻¹k(Z, x_i)`, the row's expected log-likelihood `E_i(μ_i, σ_i²)` (12.3), its
//! slope `g_i = ∂E_i/∂μ_i` and curvature `λ_i = −2∂E_i/∂σ_i² ≥ 0` (a log-concave link), the
//! ELBO's stationary point in `q(u) = N(m_u, Σ_u)` is
//!
//! `Σ_u⁻¹ = K_uu⁻¹ + Σ_i λ_i p_i p_iᵀ`,  `Σ_u⁻¹m_u = Σ_i (g_i + λ_i μ_i) p_i`   (12.6)
//!
//! (site i: precision `λ_i` and shift `g_i + λ_i μ_i` along `p_i`). Removing it, with
//! `c_i(x) = p_xᵀΣ_u p_i` and `s_i = c_i(x_i)`, by Sherman–Morrison:
//!
//! `μ_{−i}(x) = μ(x) − g_i c_i(x)/(1 − λ_i s_i)`,
//! `σ²_{−i}(x) = σ²(x) + λ_i c_i(x)²/(1 − λ_i s_i)`   (12.7)
//!
//! The bound-trained `q(u)` (pac-svgp) is the stationary point of `B(R_S, C)`: the same with
//! `E_i = −β r_i`, `r_i` the row's Gibbs risk (12.4) and `β = (∂B/∂R_S)/(∂B/∂C)` at the fit
//! (12.8); its `λ_i` is negative on misclassified rows.
//!
//! At `x_i` this is EP's cavity of the site. The stored posterior keeps `Σ_u` as `L_Σ L_Σᵀ`,
//! so `c_i(x) = w(x)ᵀw_i` with `w(x) = L_Σᵀ K_uu⁻¹ k(Z, x)` (M numbers per input): `O(NM²)`
//! once for the training rows, then `O(NM)` per input.

use faer::{Mat, MatRef};

use super::{ApproxLoo, LatentLoo, LooClassification, LooEstimator};
use crate::error::{Error, Result};
use crate::posterior::{GaussianPosterior, Marginals};
use crate::svgp::point::PointTerm;
use crate::svgp::SvgpCriterion;

/// Training rows read at once: a block's `w` and marginals (M × 4096 numbers each).
const ROWS: usize = 4096;

/// The leave-one-out functions of a sparse variational posterior (module doc): the training
/// rows' `w_i`, the coefficients of eq. 12.7 and the leave-one-out marginals at the rows.
pub struct InducingSiteLoo<'a> {
    /// The posterior the sites were read from.
    post: &'a GaussianPosterior,
    /// `w_i = L_Σᵀ K_uu⁻¹ k(Z, x_i)`, column i (M×N).
    w: Mat<f64>,
    /// `−g_i/(1 − λ_i s_i)`: the mean's shift per unit of `c_i(x)`.
    mean_coef: Vec<f64>,
    /// `λ_i/(1 − λ_i s_i)`: the variance's growth per unit of `c_i(x)²`.
    var_coef: Vec<f64>,
    /// `N(μ_{−i}(x_i), σ²_{−i}(x_i))`.
    training: LatentLoo,
}

/// Row i's site in `q(u)` (eq. 12.6) and what removing it keeps of its direction.
struct Site {
    /// `g_i = ∂E_i/∂μ_i`.
    g: f64,
    /// `λ_i = −2∂E_i/∂σ_i²`.
    lambda: f64,
    /// `1 − λ_i s_i`.
    keep: f64,
}

impl Site {
    /// Row i's site from its loss `ℓ_i` (the criterion's per-point term, `E_i = −β ℓ_i`) with
    /// its partials, the weight β and `s_i = ‖w_i‖²`; refused where `1 − λ_i s_i` is not
    /// positive ([`InducingSiteLoo::new`]).
    fn of(i: usize, loss: PointTerm, beta: f64, s: f64) -> Result<Self> {
        let (g, lambda) = (-beta * loss.d_mean, 2.0 * beta * loss.d_var);
        let keep = 1.0 - lambda * s;
        if !(keep > 0.0 && g.is_finite()) {
            return Err(Error::Numerical {
                what: "sparse variational leave-one-out",
                message: format!(
                    "row {i}'s site has slope {g:.3e}, curvature λ = {lambda:.3e} and \
                     1 − λs = {keep:.3e}: q(u) is not near the stationary point of its criterion"
                ),
            });
        }
        Ok(Self { g, lambda, keep })
    }
}

/// One training row as the scan reads it: its marginal, `s_i = ‖w_i‖²` and its loss.
struct Row {
    mean: f64,
    var: f64,
    s: f64,
    loss: PointTerm,
}

impl<'a> InducingSiteLoo<'a> {
    /// The functions of `post` (a dense-form posterior over inducing inputs) fitted by
    /// `criterion` on the standardised inputs `x` and ±1 labels `y`. Refused where a site's
    /// `1 − λ_i s_i` is not positive (`q(u)` far from its criterion's stationary point: eq.
    /// 12.6 cannot hold).
    pub fn new(
        post: &'a GaussianPosterior,
        criterion: &SvgpCriterion,
        x: MatRef<'_, f64>,
        y: &[f64],
    ) -> Result<Self> {
        let (n, m) = (y.len(), post.n_basis());
        let mut w = crate::memory::try_zeros(m, n, "w_i = L_Σᵀ K_uu⁻¹ k(Z, x_i) of every row")?;
        let (mean_coef, var_coef, training) = scan(post, criterion, x, y, |lo, wb| {
            w.as_mut().subcols_mut(lo, wb.ncols()).copy_from(wb);
        })?;
        Ok(Self {
            post,
            w,
            mean_coef,
            var_coef,
            training,
        })
    }

    /// Number of training rows.
    pub fn n(&self) -> usize {
        self.mean_coef.len()
    }

    /// `N(μ_{−i}(x_i), σ²_{−i}(x_i))` of every training row.
    pub fn training(&self) -> &LatentLoo {
        &self.training
    }

    /// The leave-one-out marginals of every training row's model at the rows of `block`
    /// (standardised inputs), flattened to row `i·nb + j` (model −i at `x_j`), by eq. 12.7.
    pub fn at(&self, block: MatRef<'_, f64>) -> Result<Marginals> {
        let (n, nb) = (self.n(), block.nrows());
        let (full, wx) = self.post.predict_with_basis_factor(block)?;
        let c = crate::linalg::try_product(self.w.transpose(), wx.as_ref(), "c_i(x) = w_iᵀw(x)")?;
        let (mut mean, mut var) = (Vec::with_capacity(n * nb), Vec::with_capacity(n * nb));
        for i in 0..n {
            for j in 0..nb {
                let cij = c[(i, j)];
                mean.push(full.mean[j] + self.mean_coef[i] * cij);
                var.push(full.var[j] + self.var_coef[i] * cij * cij);
            }
        }
        Ok(Marginals { mean, var })
    }
}

/// The rows' sites read in blocks of [`ROWS`] (`O(M·ROWS)` memory beyond the results and five
/// numbers per row): eq. 12.7's coefficients `−g_i/(1 − λ_i s_i)` and `λ_i/(1 − λ_i s_i)` and
/// the leave-one-out marginals at the rows; each block's `w` (M × rows) goes to `each_block`
/// with its first row.
fn scan(
    post: &GaussianPosterior,
    criterion: &SvgpCriterion,
    x: MatRef<'_, f64>,
    y: &[f64],
    mut each_block: impl FnMut(usize, MatRef<'_, f64>),
) -> Result<(Vec<f64>, Vec<f64>, LatentLoo)> {
    if x.nrows() != y.len() {
        return Err(Error::ShapeMismatch {
            what: "labels for the sparse variational leave-one-out",
            expected: format!("{} labels (the inputs' rows)", x.nrows()),
            found: format!("{}", y.len()),
        });
    }
    let n = y.len();
    let mut rows = Vec::with_capacity(n);
    for lo in (0..n).step_by(ROWS) {
        let block = x.subrows(lo, ROWS.min(n - lo));
        let (at, wb) = post.predict_with_basis_factor(block)?;
        for r in 0..block.nrows() {
            let (mean, var) = (at.mean[r], at.var[r]);
            rows.push(Row {
                mean,
                var,
                s: wb.col(r).iter().map(|v| v * v).sum::<f64>(),
                loss: criterion.point(y[lo + r], mean, var),
            });
        }
        each_block(lo, wb.as_ref());
    }
    let beta = site_weight(post, criterion, &rows)?;
    let (mut mean_coef, mut var_coef) = (Vec::with_capacity(n), Vec::with_capacity(n));
    let mut training = LatentLoo {
        mean: Vec::with_capacity(n),
        var: Vec::with_capacity(n),
    };
    for (i, row) in rows.iter().enumerate() {
        let site = Site::of(i, row.loss, beta, row.s)?;
        mean_coef.push(-site.g / site.keep);
        var_coef.push(site.lambda / site.keep);
        training.mean.push(row.mean - site.g * row.s / site.keep);
        training
            .var
            .push(row.var + site.lambda * row.s * row.s / site.keep);
    }
    Ok((mean_coef, var_coef, training))
}

/// β of `E_i = −β ℓ_i`: 1 for the evidence lower bound (`ℓ_i = −E_i`), the bound's exchange
/// rate `(∂B/∂R_S)/(∂B/∂C)` at the fit's empirical risk and KL for the bound (eq. 12.8).
fn site_weight(post: &GaussianPosterior, criterion: &SvgpCriterion, rows: &[Row]) -> Result<f64> {
    let SvgpCriterion::Bound { bound, .. } = criterion else {
        return Ok(1.0);
    };
    let risk = rows.iter().map(|r| r.loss.value).sum::<f64>() / rows.len().max(1) as f64;
    let kl = post.kl_to_prior()?;
    let at = bound.at(&post.kernel().params(), risk, kl, rows.len());
    let beta = at.value.d_risk / at.value.d_complexity;
    if !(beta.is_finite() && beta > 0.0) {
        return Err(Error::Numerical {
            what: "sparse variational leave-one-out",
            message: format!(
                "the bound's partials ∂B/∂R = {:.3e}, ∂B/∂C = {:.3e} give no exchange rate \
                 between risk and KL",
                at.value.d_risk, at.value.d_complexity
            ),
        });
    }
    Ok(beta)
}

/// The approximate leave-one-out of a sparse variational classifier on its training rows
/// (module doc; margins `y_i μ_{−i}(x_i)`, its Gibbs and deployed classifiers being `sgn f`),
/// in `O(M·ROWS)` memory beyond the data.
pub fn inducing_site_loo(
    post: &GaussianPosterior,
    criterion: &SvgpCriterion,
    x: MatRef<'_, f64>,
    y: &[f64],
) -> Result<ApproxLoo> {
    // The rows' marginals only: no `w` is kept (M × N, 4 GB at N = 10⁶ and M = 500).
    let (_, _, training) = scan(post, criterion, x, y, |_, _| {})?;
    let margins = (0..y.len()).map(|i| y[i] * training.mean[i]).collect();
    Ok(ApproxLoo {
        estimator: LooEstimator::InducingSites,
        loo: LooClassification::from_margins(margins, 0),
    })
}
