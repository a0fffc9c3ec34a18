//! Leave-one-out predictions at **new** inputs without refits: `μ_{−i}(x)` and `σ²_{−i}(x)`
//! for every training point i and every test input x, by removing point i's Gaussian site
//! from the posterior (a rank-one downdate). This is what jackknife+ needs
//! ([`crate::conformal`]); at the training inputs it is the closed-form LOO of
//! [`super::closed_form`] and [`super::cavity`].
//!
//! **The downdate.** Let point i enter the posterior `N(m, S)` over the latent vector through
//! one Gaussian site on `g_i = a_iᵀu` of precision `τ_i` and natural mean `τ_i y_i`. With
//! `s_i = a_iᵀSa_i`, `m_i = a_iᵀm` and the posterior covariance `c_i(x) = Cov_Q(f(x), g_i)`,
//! Sherman–Morrison on `S⁻¹ − τ_i a_ia_iᵀ` gives, for any x,
//!
//! `μ_{−i}(x) = μ(x) − c_i(x)·γ_i`,  `γ_i = τ_i(y_i − m_i)/(1 − τ_i s_i)`,
//!
//! `v_{−i}(x) = v(x) + κ_i·c_i(x)²`,  `κ_i = τ_i/(1 − τ_i s_i)`,
//!
//! and the predictive variance of a new observation adds the noise σ². Cost: the training
//! part once (below), then `O(N·N*)` per block of N* test inputs on top of `c(x)`.
//!
//! **Exact GP regression** (site form, `π_i = 1/σ²`, `B = I + K/σ²` = `C/σ²`, `C = K + σ²I`):
//! `c(x) = σ²C⁻¹k(X, x) = B⁻¹k(X, x)`, `γ_i = α_i/[B⁻¹]_ii`, `κ_i = 1/(σ²[B⁻¹]_ii)`; so
//! `μ_{−i}(x) = μ(x) − [C⁻¹k(X,x)]_i α_i/[C⁻¹]_ii` and `v_{−i}(x) = v(x) + [C⁻¹k(X,x)]_i²/[C⁻¹]_ii`,
//! which at `x = x_i` are GPML eq. 5.12. `c(x)` costs one solve with the stored factor,
//! `N²` flops per test input; `[B⁻¹]_ii` one `L⁻¹` (`N³/3`). Any jitter in `B` acts as noise
//! in both the fit and the downdate, so they stay consistent. With a noise `λ_i` of its own
//! on every row (`C = K + Λ`, `π_i = 1/λ_i`, `B = ΠCΠ` with `Π = Λ^{-½}`, scikit-learn's
//! `alpha`): `c(x) = ΛC⁻¹k(X, x) = Π^{-1}B⁻¹Πk(X, x)`, `γ_i = α_i/[B⁻¹]_ii`,
//! `κ_i = 1/(λ_i[B⁻¹]_ii)`, and `y_i − μ_{−i}(x_i) = λ_iα_i/[B⁻¹]_ii`.
//!
//! **Sparse regression** at fixed `(θ, σ², Z)` (VFE, FITC, DTC, PAC-SGP's FITC form, Zhang's
//! greedy DTC model; whitened form `Σ_u = L B⁻¹ Lᵀ`, `L Lᵀ = K_uu`, `B = I + VΛ⁻¹Vᵀ`,
//! `V = L⁻¹K_uf`): `a_i = K_uu⁻¹k_u(x_i)`, `τ_i = 1/Λ_i` with `Λ_i = σ² + α_s(k_ii − Q_ii)`;
//! `c_i(x) = (L_B⁻¹v_x)ᵀ(L_B⁻¹v_i)` with `v = L⁻¹k_u(·)`, `s_i = ‖L_B⁻¹v_i‖²`,
//! `m_i = k_u(x_i)ᵀα`. This needs the training inputs and targets (a sparse posterior keeps
//! only Z); `O(NM²)` once, then `O(N·N*·M)`. At `x = x_i` it is [`super::sparse_gp_loo`].
//!
//! **Leaving out a group** G of rows together (rows with identical inputs, so that a copy of
//! point i cannot stay in the model that predicts it): Woodbury on `S⁻¹ − A_G T_G A_Gᵀ` gives
//! the block form of the same formulas, `μ_{−G}(x) = μ(x) − c_G(x)ᵀγ_G` and
//! `v_{−G}(x) = v(x) + c_G(x)ᵀ κ_G c_G(x)` with `κ_G = (T_G⁻¹ − S_GG)⁻¹`, `γ_G = κ_G(y_G − m_G)`
//! (`S_GG = A_GᵀSA_G`; a group of one is the rank-one case). Exact GP: `κ_G = [B⁻¹]_GG⁻¹/σ²`,
//! `γ_G = [B⁻¹]_GG⁻¹α_G`, so `y_G − μ_{−G}(X_G) = σ²γ_G = [C⁻¹]_GG⁻¹(C⁻¹y)_G` and the
//! predictive covariance of `y_G` is `[C⁻¹]_GG⁻¹` (the block form of GPML eq. 5.12).
//! Sparse: `κ_G = (diag Λ_G − W_GᵀW_G)⁻¹`. Cost: the grouped columns of `B⁻¹` (exact) and
//! one small factor per group.
//!
//! **A classifier's Gaussian sites** (Laplace: `π_i = W_i`, the curvature at the mode; EP:
//! the site precisions `τ̃_i`; IVM: its ADF sites, the basis its active set; the basis the N
//! training inputs otherwise, [`LooDowndate::sites`]). The
//! site-form posterior is GP regression on pseudo-targets `ỹ_i = ν̃_i/π_i` with noise `1/π_i`,
//! where `ν̃_i = α_i + π_iμ_i` ([`super::cavity`]). With `g_i = f_i`, `s_i = Σ_ii`,
//! `1 − π_iΣ_ii = [B⁻¹]_ii` (`B = I + Π½KΠ½`): `γ_i = α_i/[B⁻¹]_ii`, `κ_i = π_i/[B⁻¹]_ii`, and
//! `c(x) = Cov_Q(f_B, f(x)) = (I + KΠ)⁻¹k(X, x) = Π^{−½}B⁻¹Π½k(X, x)`, since
//! `I + KΠ = Π^{−½}BΠ½`: the exact GP's per-row form, one solve with the stored factor
//! (`2N²` per test input), neither `K` nor the `N²·N*` product of
//! `k(X, x) − KΠ½B⁻¹Π½k(X, x)`. No noise is added: `v_{−i}(x)` is the latent
//! variance, which the likelihood's predictive turns into class probabilities. At `x = x_i`
//! this is the cavity `N(μ_{−i}, v_{−i})` of [`super::cavity`] (LA-LOO, LOO-EP): removing site
//! i leaves the other sites as fitted with it (no refit of the mode or of EP's other sites).
//! Cost: the cavities' one `L⁻¹` (`N³/3`, [`LooDowndate::sites_with_cavities`] hands them
//! over), then `O(N²·N*)`; the downdate keeps `O(N)` beside the posterior.
//!
//! Here: the rank-one downdate of the site forms (exact GP, a classifier's sites) and its
//! evaluation at new inputs; in `block`: the groups' `κ_G` (dense or Woodbury); in `sparse`:
//! the sparse regressors' constructors.

use faer::{Mat, MatRef};

use crate::error::{Error, Result};
use crate::memory::{try_from_fn, try_zeros};
use crate::posterior::{Covariance, GaussianPosterior};

use super::LatentLoo;
use block::{block_inverse, Block, BlockInverse};

mod block;
mod sparse;
#[cfg(test)]
mod tests;

/// How `c_i(x) = Cov_Q(f(x), g_i)` is computed for a block of test inputs.
#[derive(Clone, Debug)]
enum CrossCov {
    /// The site form (exact GP, a classifier's sites): `c(x) = D⁻¹B⁻¹D k(X, x)` with
    /// `D = diag(√π)` and the stored factor of `B = I + DKD` (module doc); `scaled: false`
    /// where every row has the one noise σ² and `D` cancels (`c(x) = B⁻¹k(X, x)`).
    Sites {
        /// Whether the rows are scaled by `√π_i` (and back).
        scaled: bool,
    },
    /// Sparse: `c(x) = Wᵀ L_B⁻¹ L⁻¹ k_u(x)` with `W = L_B⁻¹ L⁻¹ K_uf` (M×N).
    Whitened {
        /// `W = L_B⁻¹ V` (M×N).
        w: Mat<f64>,
    },
}

/// Leave-one-out residuals and predictive variances at the training inputs (for a
/// classifier's sites, of the pseudo-targets `ỹ_i = ν̃_i/π_i` with noise `1/π_i`).
#[derive(Clone, Debug, PartialEq)]
pub struct TrainingLoo {
    /// `y_i − μ_{−i}(x_i)`.
    pub residual: Vec<f64>,
    /// `σ²_{−i}(x_i)`: predictive variance of `y_i` given the other points (noise included).
    pub var: Vec<f64>,
}

/// Leave-one-out predictives at a block of test inputs: row i, column j is the model without
/// training point i at test input j.
#[derive(Clone, Debug)]
pub struct LooAtPoints {
    /// `μ_{−i}(x_j)` (N×N*).
    pub mean: Mat<f64>,
    /// `σ²_{−i}(x_j)`, noise included (N×N*; a classifier's sites: the latent variance).
    pub var: Mat<f64>,
}

/// A fitted GP regressor's leave-one-out (or leave-one-group-out), ready to be evaluated at new
/// inputs (module doc).
#[derive(Clone, Debug)]
pub struct LooDowndate<'a> {
    post: &'a GaussianPosterior,
    noise: f64,
    cross: CrossCov,
    /// `γ_i` (within its group's `γ_G` for a grouped row).
    gain: Vec<f64>,
    /// `κ_i` (rows left out alone).
    kappa: Vec<f64>,
    /// Groups of rows left out together.
    blocks: Vec<Block>,
    /// The block of every row (`None`: left out alone).
    block_of: Vec<Option<usize>>,
    /// The LOO at the training inputs.
    pub training: TrainingLoo,
}

impl<'a> LooDowndate<'a> {
    /// Exact GP regression: `post` is the site-form posterior of an exact GP with noise σ²
    /// (every `√π_i = 1/σ`, the basis being the N training inputs), or with row noises
    /// `λ_i = 1/π_i ≥ σ²` (known variances on top of σ², module doc); σ² is what a new
    /// observation adds.
    pub fn exact(post: &'a GaussianPosterior, noise: f64) -> Result<Self> {
        Self::exact_by_groups(post, noise, &[])
    }

    /// [`LooDowndate::exact`] leaving each of `groups` out together (disjoint sets of at least
    /// two rows, e.g. [`crate::data::input_groups`]); the other rows are left out alone, to
    /// the same bits as without groups.
    pub fn exact_by_groups(
        post: &'a GaussianPosterior,
        noise: f64,
        groups: &[Vec<usize>],
    ) -> Result<Self> {
        let Covariance::Sites { sqrt_pi, chol_b } = &post.cov else {
            return Err(not_exact());
        };
        let (lambda, uniform) = row_noises(sqrt_pi, noise)?;
        let binv_diag = chol_b.inverse_diag()?;
        check_positive(&binv_diag, "[B⁻¹]_ii of the exact GP")?;
        // C = Π⁻¹BΠ⁻¹: [C⁻¹]_ii = [B⁻¹]_ii/λ_i; the jitter j in B is noise λ_i·j in C.
        let j = chol_b.jitter();
        let alpha = &post.alpha;
        let training = TrainingLoo {
            residual: (0..alpha.len())
                .map(|i| lambda[i] * alpha[i] / binv_diag[i])
                .collect(),
            var: (0..alpha.len())
                .map(|i| {
                    let l = lambda[i];
                    (l / binv_diag[i] - l * (1.0 + j)).max(0.0) + l
                })
                .collect(),
        };
        let mut d = Self {
            post,
            noise,
            cross: CrossCov::Sites { scaled: !uniform },
            gain: (0..alpha.len()).map(|i| alpha[i] / binv_diag[i]).collect(),
            kappa: (0..alpha.len())
                .map(|i| 1.0 / (lambda[i] * binv_diag[i]))
                .collect(),
            blocks: Vec::new(),
            block_of: vec![None; alpha.len()],
            training,
        };
        check_groups(groups, alpha.len())?;
        if groups.is_empty() {
            return Ok(d);
        }
        // The grouped columns of B⁻¹: B⁻¹E with E the unit columns of the grouped rows.
        let members: Vec<usize> = groups.iter().flatten().copied().collect();
        let mut cols = try_zeros(alpha.len(), members.len(), "the grouped columns of B⁻¹")?;
        for (c, &i) in members.iter().enumerate() {
            cols[(i, c)] = 1.0;
        }
        chol_b.solve_in_place(cols.as_mut());
        let mut first = 0;
        for g in groups {
            // [B⁻¹]_GG, its inverse M; γ_G = ΠMΠ⁻¹α_G, κ_G = ΠMΠ, y_G − μ_{−G} = Π⁻¹MΠ⁻¹α_G
            // (with every λ_i = σ²: Mα_G, M/σ², σ²Mα_G; module doc).
            let bgg = Mat::from_fn(g.len(), g.len(), |a, b| cols[(g[a], first + b)]);
            first += g.len();
            let inv = block_inverse(bgg, "[B⁻¹]_GG of a group of the exact GP")?;
            // γ_G = W M W⁻¹ α_G with W = Π (the identity where every row has noise σ²).
            let w: Vec<f64> = match uniform {
                true => vec![1.0; g.len()],
                false => g.iter().map(|&i| sqrt_pi[i]).collect(),
            };
            let alpha_g: Vec<f64> = g.iter().zip(&w).map(|(&i, w)| alpha[i] / w).collect();
            let m_alpha = crate::linalg::mat_vec(&inv, &alpha_g);
            for (a, &i) in g.iter().enumerate() {
                d.gain[i] = w[a] * m_alpha[a];
                d.training.residual[i] = lambda[i] * d.gain[i];
                d.training.var[i] =
                    (lambda[i] * inv[(a, a)] - lambda[i] * (1.0 + j)).max(0.0) + lambda[i];
            }
            let kappa = Mat::from_fn(g.len(), g.len(), |a, b| match uniform {
                true => inv[(a, b)] / noise,
                false => w[a] * inv[(a, b)] * w[b],
            });
            d.push_block(g, BlockInverse::Dense(kappa));
        }
        Ok(d)
    }

    /// Whether [`LooDowndate::exact_by_groups`] applies to `post` with `noise` and `groups`, in
    /// `O(N)`: a site form whose row noises are σ² or more, a factor of `B` with a positive,
    /// finite diagonal, and disjoint groups of at least two rows. Its other checks cannot fail
    /// then (`[B⁻¹]_ii ≥ 1/L_ii² > 0`, and `[B⁻¹]_GG` is a principal block of the positive
    /// definite `B⁻¹`), so a fit can refuse a model without a downdate before it is stored,
    /// without the downdate's `N³/3` and its `N²` solve per grouped row.
    pub fn check_exact(post: &GaussianPosterior, noise: f64, groups: &[Vec<usize>]) -> Result<()> {
        let Covariance::Sites { sqrt_pi, chol_b } = &post.cov else {
            return Err(not_exact());
        };
        row_noises(sqrt_pi, noise)?;
        let l = chol_b.l();
        let diag: Vec<f64> = (0..chol_b.dim()).map(|i| l[(i, i)]).collect();
        check_positive(&diag, "the diagonal of the exact GP's factor of B")?;
        check_groups(groups, post.alpha.len())
    }

    /// Record `rows` as a block left out together with `κ_G = kappa`.
    fn push_block(&mut self, rows: &[usize], kappa: BlockInverse) {
        for &i in rows {
            self.block_of[i] = Some(self.blocks.len());
        }
        self.blocks.push(Block {
            rows: rows.to_vec(),
            kappa,
        });
    }

    /// A classifier's site-form posterior over its basis points (Laplace, EP and pac-gpc: the
    /// N training inputs; IVM: its active set; module doc): `γ_i = α_i/[B⁻¹]_ii`, `κ_i = π_i/[B⁻¹]_ii`, latent variances (no
    /// noise). Every site precision must be positive (a site of precision 0 carries no label).
    pub fn sites(post: &'a GaussianPosterior) -> Result<Self> {
        Ok(Self::sites_with_cavities(post)?.0)
    }

    /// [`LooDowndate::sites`] and the cavities `N(μ_{−i}, v_{−i})` at the training inputs it
    /// is built from ([`super::site_cavities`]), so that jackknife+'s calibration scores do not
    /// invert the factor again.
    pub fn sites_with_cavities(post: &'a GaussianPosterior) -> Result<(Self, LatentLoo)> {
        let pi: Vec<f64> = site_precisions(post)?.iter().map(|s| s * s).collect();
        let (cav, binv_diag) = super::cavity::site_cavities_and_inverse_diag(post)?;
        check_positive(&binv_diag, "[B⁻¹]_ii of the classifier's sites")?;
        let alpha = &post.alpha;
        let n = alpha.len();
        // Pseudo-observation ỹ_i with noise 1/π_i: variance v_{−i} + 1/π_i, residual
        // ỹ_i − μ_{−i} = α_i/π_i + α_i v_{−i} (ν̃_i = α_i + π_iμ_i, μ_{−i} = μ_i − α_i v_{−i}).
        let var: Vec<f64> = (0..n).map(|i| cav.var[i] + 1.0 / pi[i]).collect();
        let d = Self {
            post,
            noise: 0.0,
            cross: CrossCov::Sites { scaled: true },
            gain: (0..n).map(|i| alpha[i] / binv_diag[i]).collect(),
            kappa: (0..n).map(|i| pi[i] / binv_diag[i]).collect(),
            blocks: Vec::new(),
            block_of: vec![None; n],
            training: TrainingLoo {
                residual: (0..n).map(|i| alpha[i] * var[i]).collect(),
                var,
            },
        };
        Ok((d, cav))
    }

    /// Whether [`LooDowndate::sites`] applies to `post`, in `O(N)`: a site form with every
    /// `π_i` positive and finite. Its other checks cannot fail then (a factor of
    /// `B = I + Π½KΠ½` has `[B⁻¹]_ii ≥ 1/L_ii² > 0` and finite cavities), so a fit can refuse
    /// a model without a downdate before it is stored, without the downdate's `N³/3`.
    pub fn check_sites(post: &GaussianPosterior) -> Result<()> {
        site_precisions(post).map(|_| ())
    }

    /// Number of training points N (a classifier's: its basis points).
    pub fn n(&self) -> usize {
        self.gain.len()
    }

    /// The posterior the downdate removes points from.
    pub fn posterior(&self) -> &'a GaussianPosterior {
        self.post
    }

    /// `μ_{−i}(x_j)` and `σ²_{−i}(x_j)` for every training point i and row j of `xs`
    /// (standardised inputs, as the posterior's).
    pub fn at(&self, xs: MatRef<'_, f64>) -> Result<LooAtPoints> {
        let marg = self.post.predict(xs)?;
        let c = self.cross_cov(xs)?;
        let (n, n_test) = (self.n(), xs.nrows());
        // Each block's `c_G(x)ᵀγ_G` and `c_G(x)ᵀκ_G c_G(x)`, once for all its rows.
        let nb = self.blocks.len();
        let mut shift = try_zeros(nb, n_test, "the groups' LOO shifts at test points")?;
        let mut spread = try_zeros(nb, n_test, "the groups' LOO spreads at test points")?;
        for (b, block) in self.blocks.iter().enumerate() {
            for j in 0..n_test {
                let c_g: Vec<f64> = block.rows.iter().map(|&l| c[(l, j)]).collect();
                let gain_g: Vec<f64> = block.rows.iter().map(|&l| self.gain[l]).collect();
                shift[(b, j)] = crate::linalg::dot(&c_g, &gain_g);
                let kc = block.kappa.apply(&c_g);
                spread[(b, j)] = crate::linalg::dot(&c_g, &kc);
            }
        }
        let mean = try_from_fn(n, n_test, "LOO means at test points", |i, j| {
            match self.block_of[i] {
                None => marg.mean[j] - c[(i, j)] * self.gain[i],
                Some(b) => marg.mean[j] - shift[(b, j)],
            }
        })?;
        let var = try_from_fn(
            n,
            n_test,
            "LOO variances at test points",
            |i, j| match self.block_of[i] {
                None => marg.var[j] + self.kappa[i] * c[(i, j)] * c[(i, j)] + self.noise,
                Some(b) => marg.var[j] + spread[(b, j)] + self.noise,
            },
        )?;
        Ok(LooAtPoints { mean, var })
    }

    /// Number of groups of rows left out together.
    pub fn n_groups(&self) -> usize {
        self.blocks.len()
    }

    /// `c_i(x_j) = Cov_Q(f(x_j), g_i)` (N×N*).
    fn cross_cov(&self, xs: MatRef<'_, f64>) -> Result<Mat<f64>> {
        match (&self.cross, &self.post.cov) {
            (CrossCov::Sites { scaled }, Covariance::Sites { sqrt_pi, chol_b }) => {
                let mut c = self.post.kernel().cross(self.post.basis.as_ref(), xs)?;
                if *scaled {
                    scale_rows(&mut c, sqrt_pi.iter().copied());
                }
                chol_b.solve_in_place(c.as_mut());
                if *scaled {
                    scale_rows(&mut c, sqrt_pi.iter().map(|v| 1.0 / v));
                }
                Ok(c)
            }
            (CrossCov::Whitened { w }, Covariance::WhitenedPrecision { chol_kuu, chol_b }) => {
                let mut wx = self.post.kernel().cross(self.post.basis.as_ref(), xs)?;
                chol_kuu.solve_lower_in_place(wx.as_mut());
                chol_b.solve_lower_in_place(wx.as_mut());
                crate::linalg::try_product(
                    w.transpose(),
                    wx.as_ref(),
                    "the cross-covariances at test rows",
                )
            }
            _ => unreachable!("the constructors pair each form with its covariance"),
        }
    }
}

/// The `√π_i` of a classifier's site form, every `π_i` positive and finite (a site of
/// precision 0 carries no label), else the error [`LooDowndate::sites`] gives.
fn site_precisions(post: &GaussianPosterior) -> Result<&[f64]> {
    let Covariance::Sites { sqrt_pi, .. } = &post.cov else {
        return Err(Error::Unsupported(
            "the leave-one-out downdate of a classifier needs a site-form posterior \
             (Laplace, EP, IVM, pac-gpc)"
                .into(),
        ));
    };
    let pi: Vec<f64> = sqrt_pi.iter().map(|s| s * s).collect();
    check_positive(&pi, "site precision π_i of the classifier")?;
    Ok(sqrt_pi)
}

/// Multiply row i of `c` by the i-th factor.
fn scale_rows(c: &mut Mat<f64>, factors: impl Iterator<Item = f64> + Clone) {
    for j in 0..c.ncols() {
        for (v, f) in c.col_as_slice_mut(j).iter_mut().zip(factors.clone()) {
            *v *= f;
        }
    }
}

/// Every row's noise `λ_i = 1/π_i` of an exact GP's site form with shared noise `noise` (σ²),
/// and whether every row has σ² alone (then `λ_i = σ²` exactly, as before known variances).
fn row_noises(sqrt_pi: &[f64], noise: f64) -> Result<(Vec<f64>, bool)> {
    if !(noise >= 0.0 && noise.is_finite()) {
        return Err(not_exact());
    }
    let s = 1.0 / noise.sqrt();
    if noise > 0.0 && sqrt_pi.iter().all(|p| (p - s).abs() <= 1e-12 * s) {
        return Ok((vec![noise; sqrt_pi.len()], true));
    }
    let lambda: Vec<f64> = sqrt_pi.iter().map(|p| 1.0 / (p * p)).collect();
    // Known variances add to σ²: no row has less noise than σ² (up to rounding).
    match lambda
        .iter()
        .all(|l| l.is_finite() && *l > 0.0 && *l >= noise * (1.0 - 1e-12))
    {
        true => Ok((lambda, false)),
        false => Err(not_exact()),
    }
}

fn not_exact() -> Error {
    Error::Unsupported(
        "the exact leave-one-out downdate needs the posterior of exact GP regression (site form, \
         every site precision 1/(σ² + αᵢ) with σ² the shared noise)"
            .into(),
    )
}

/// `groups` must be disjoint sets of at least two rows below `n`.
fn check_groups(groups: &[Vec<usize>], n: usize) -> Result<()> {
    let mut seen = vec![false; n];
    for g in groups {
        let bad = |found: String| Error::ShapeMismatch {
            what: "leave-one-group-out groups",
            expected: format!("disjoint groups of at least two rows below {n}"),
            found,
        };
        if g.len() < 2 {
            return Err(bad(format!("a group of {} rows", g.len())));
        }
        for &i in g {
            if i >= n || std::mem::replace(&mut seen[i], true) {
                return Err(bad(format!("row {i}")));
            }
        }
    }
    Ok(())
}

fn check_positive(v: &[f64], what: &'static str) -> Result<()> {
    match v.iter().position(|b| !(*b > 0.0 && b.is_finite())) {
        Some(i) => Err(Error::Numerical {
            what,
            message: format!("entry {i} is {:.4e}", v[i]),
        }),
        None => Ok(()),
    }
}
