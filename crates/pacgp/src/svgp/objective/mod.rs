//! The sparse variational classifier's objective over `[θ…, vec(Z), m, vech(L_q)]`, streamed
//! over row blocks ([`crate::regression::row_blocks`]): the negative evidence lower bound per
//! point, or the PAC-Bayes bound of the Gibbs classifier (through the one [`MinimisedBound`],
//! as every bound-trained method).
//!
//! One pass per evaluation. Per block b (B rows): `F_b = K(Z, X_b)`, `V_b = L_uu⁻¹F_b`,
//! `U_b = SV_b`, `μ = V_bᵀm`, `σ_i² = max(k_ii − ‖V_i‖², 0) + V_iᵀU_i` (eq. 12.1); with the
//! per-point adjoints `(μ̄_i, σ̄_i²)` of the data term (the sum of [`super::point`]'s terms):
//! `V̄ = m μ̄ᵀ + 2 U diag(σ̄²) − 2 V diag(σ̄²·[k_ii > ‖V_i‖²])`, `F̄ = L_uu⁻ᵀV̄` (θ and Z through
//! `F̄` and the diagonal), and the M×M sums from which `L̄_uu`, `L̄_q` and then `K_uu`'s
//! adjoint ([`crate::linalg::cholesky_adjoint`]) follow once per evaluation
//! (`SvgpObjective::assemble`). About 5·M²B flops per block with the gradient (two triangular
//! solves, one product, one symmetric rank-B update), 3·M²B without.

use faer::linalg::matmul::matmul;
use faer::{Accum, Mat, MatRef, Par};

use crate::certificate::GibbsClassifier;
use crate::error::{Error, Result};
use crate::kernel::Kernel;
use crate::linalg::{self, cholesky_adjoint_from_product, symmetrise_from_lower, Cholesky};
use crate::objective::bound::MinimisedBound;
use crate::optim::Objective;
use crate::regression::row_blocks::{recycle, scratch, scratch_zeroed, Streaming};
use crate::regression::whitened_blocks::{
    kuu_factor, mat_t_vec_seq, mat_vec_seq, GradPart, SparseData,
};

use super::point::{expected_ln_lik, gibbs_risk, Link, PointTerm};
use super::{SvgpLayout, WhitenedPrior, WhitenedQ};

mod on_data;
pub use on_data::SvgpObjective;

/// Rows per block of a minibatch's objective (fixed, not derived from the thread count: the
/// same bits on any number of threads).
pub const BATCH_BLOCK_ROWS: usize = 256;

/// What the objective minimises.
#[derive(Clone, Debug)]
pub enum SvgpCriterion {
    /// The negative evidence lower bound per point, `−(Σ_i E[ln p(y_i | f_i)] − KL)/N`
    /// (eq. 12.3) with this link.
    Elbo(Link),
    /// The PAC-Bayes bound on `classifier`'s Gibbs risk (eq. 12.4).
    Bound {
        /// δ, confidence term, kl or Pinsker, and θ's price (its grid, or a coarse prior's
        /// surrogate).
        bound: MinimisedBound,
        /// The Gibbs classifier whose 0-1 risk is bounded.
        classifier: GibbsClassifier,
    },
}

impl SvgpCriterion {
    /// The per-point term of the data part at the marginal `N(μ, σ²)` of a row labelled `y`
    /// (a loss to minimise): the negative expected log-likelihood, or the Gibbs risk.
    pub fn point(&self, y: f64, mean: f64, var: f64) -> PointTerm {
        match self {
            SvgpCriterion::Elbo(link) => {
                let t = expected_ln_lik(*link, y, mean, var);
                PointTerm {
                    value: -t.value,
                    d_mean: -t.d_mean,
                    d_var: -t.d_var,
                }
            }
            SvgpCriterion::Bound { classifier, .. } => gibbs_risk(classifier, y, mean, var),
        }
    }
}

/// One evaluation's parts.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SvgpTerms {
    /// The data term per point: the negative expected log-likelihood (ELBO) or the empirical
    /// Gibbs risk (bound).
    pub data_term: f64,
    /// `KL(q(v)‖N(0, I))`, or against a split prior's `q_A(v)`.
    pub kl: f64,
    /// The objective's value.
    pub value: f64,
}

/// What turns the sums over the rows into the objective and its gradient: the kernel's
/// structure, where the parameters live, the criterion and the sample size N. The in-process
/// objective ([`SvgpObjective`]) and a map-reduce over data shards
/// ([`SvgpAssembly::shard_sums`] on each shard, [`SvgpAssembly::combine`] of their sum) share it.
#[derive(Clone, Debug)]
pub struct SvgpAssembly {
    kernel: Kernel,
    layout: SvgpLayout,
    criterion: SvgpCriterion,
    /// The sample size N the KL is spread over and the bound is taken at.
    n_total: usize,
    /// The prior on the whitened values: `N(0, I)` when `None`, else a split prior's `q_A`.
    prior: Option<WhitenedPrior>,
}

/// One shard's (or minibatch's) sums at the parameters, with the parts of their gradient: what
/// a map-reduce evaluation adds over shards before [`SvgpAssembly::combine`]. Sums over
/// disjoint rows add ([`SvgpShardSums::add`]).
#[derive(Clone, Debug, PartialEq)]
pub struct SvgpShardSums {
    /// The number of rows summed.
    pub rows: usize,
    /// `Σ_i` of the per-point data term (a loss: negative expected log-likelihood, or the
    /// Gibbs risk).
    pub data_sum: f64,
    /// Its derivative in θ through `K(Z, X)` and `diag K(X)`.
    pub theta: Vec<f64>,
    /// Its derivative in Z through `K(Z, X)` (M×D).
    pub dz: Mat<f64>,
    /// `[P | D]` on their lower triangles (M × 2M): `P = Σ V diag(σ̄²) Vᵀ`,
    /// `D = Σ_{clamped i} σ̄_i² V_iV_iᵀ`.
    pub p_and_d: Mat<f64>,
    /// `m̄ = Σ V μ̄`.
    pub mean_bar: Vec<f64>,
}

impl SvgpShardSums {
    /// `self ← self + other` (sums over disjoint rows).
    pub fn add(&mut self, other: &SvgpShardSums) -> Result<()> {
        let same = self.theta.len() == other.theta.len()
            && self.mean_bar.len() == other.mean_bar.len()
            && self.dz.shape() == other.dz.shape()
            && self.p_and_d.shape() == other.p_and_d.shape();
        if !same {
            return Err(shard_shape_error(self, other));
        }
        self.rows += other.rows;
        self.data_sum += other.data_sum;
        self.theta
            .iter_mut()
            .zip(&other.theta)
            .for_each(|(a, b)| *a += b);
        self.mean_bar
            .iter_mut()
            .zip(&other.mean_bar)
            .for_each(|(a, b)| *a += b);
        self.dz += &other.dz;
        self.p_and_d += &other.p_and_d;
        Ok(())
    }

    fn of_part(rows: usize, data_sum: f64, part: GradPart) -> Self {
        Self {
            rows,
            data_sum,
            theta: part.theta,
            dz: part.dz,
            p_and_d: part.mm,
            mean_bar: part.scalars[1..].to_vec(),
        }
    }
}

fn shard_shape_error(a: &SvgpShardSums, b: &SvgpShardSums) -> Error {
    Error::ShapeMismatch {
        what: "shard sums",
        expected: format!(
            "{} θ, {}×{} Z, {} inducing inputs",
            a.theta.len(),
            a.dz.nrows(),
            a.dz.ncols(),
            a.mean_bar.len()
        ),
        found: format!(
            "{} θ, {}×{} Z, {} inducing inputs",
            b.theta.len(),
            b.dz.nrows(),
            b.dz.ncols(),
            b.mean_bar.len()
        ),
    }
}

/// The sums of one pass: the data term's sum and, with the gradient, its parts.
struct PassSums {
    rows: usize,
    data_sum: f64,
    grad: Option<GradPart>,
}

/// One evaluation's factors at the parameters: the kernel at θ, Z, q(v), `K(Z, Z)`, `L_uu` and
/// `S = L_qL_qᵀ`.
struct Factors {
    kernel: Kernel,
    z: Mat<f64>,
    q: WhitenedQ,
    kzz: Mat<f64>,
    l_uu: Cholesky,
    s_cov: Mat<f64>,
}

impl SvgpAssembly {
    /// The assembly of `m` inducing inputs on `d` inputs over a sample of `n_total` rows.
    pub fn new(
        kernel: &Kernel,
        m: usize,
        d: usize,
        criterion: SvgpCriterion,
        n_total: usize,
    ) -> Result<Self> {
        kernel.check_input_dim(d)?;
        crate::regression::greedy::check_inducing_count(m, n_total)?;
        Ok(Self {
            kernel: kernel.clone(),
            layout: SvgpLayout {
                nk: kernel.n_params(),
                m,
                d,
            },
            criterion,
            n_total,
            prior: None,
        })
    }

    /// The same assembly with the KL taken against a split prior's `q_A(v)` (θ and Z pinned
    /// at the prior's) instead of `N(0, I)`.
    pub fn with_prior(mut self, prior: WhitenedPrior) -> Result<Self> {
        let SvgpLayout { m, d, .. } = self.layout;
        if prior.z.shape() != (m, d) || prior.theta.len() != self.layout.nk {
            return Err(Error::ShapeMismatch {
                what: "split prior of the sparse variational classifier",
                expected: format!("{m}×{d} inducing inputs, {} θ", self.layout.nk),
                found: format!(
                    "{}×{} inducing inputs, {} θ",
                    prior.z.nrows(),
                    prior.z.ncols(),
                    prior.theta.len()
                ),
            });
        }
        self.prior = Some(prior);
        Ok(self)
    }

    /// Where the parameters live.
    pub fn layout(&self) -> SvgpLayout {
        self.layout
    }

    /// The kernel structure θ is read into.
    pub fn kernel(&self) -> &Kernel {
        &self.kernel
    }

    /// The criterion minimised.
    pub fn criterion(&self) -> &SvgpCriterion {
        &self.criterion
    }

    /// The sample size N.
    pub fn n_total(&self) -> usize {
        self.n_total
    }

    /// One shard's sums at `p` on its rows `(x, y)` (y in ±1), streamed as `stream` says
    /// (on the pool's threads): the map step of a map-reduce evaluation.
    pub fn shard_sums(
        &self,
        p: &[f64],
        x: MatRef<'_, f64>,
        y: &[f64],
        stream: &Streaming,
    ) -> Result<SvgpShardSums> {
        self.check_rows(x, y, "shard")?;
        crate::data::check_finite(x, "shard inputs")?;
        if let Some(bad) = y.iter().find(|&&v| v != 1.0 && v != -1.0) {
            return Err(Error::InvalidParameter {
                name: "shard label",
                value: *bad,
                reason: "labels of a shard are −1 or +1",
            });
        }
        let f = self.factors(p)?;
        if y.is_empty() {
            return Ok(self.empty_sums());
        }
        let sums = self.pass(&f, x, y, stream, true)?;
        let part = sums.grad.expect("the pass was asked for its gradient");
        Ok(SvgpShardSums::of_part(sums.rows, sums.data_sum, part))
    }

    /// The objective's terms and gradient at `p` from the sums over all N rows (the reduce
    /// step): the same as the in-process objective's, to rounding.
    pub fn combine(&self, p: &[f64], sums: &SvgpShardSums) -> Result<(SvgpTerms, Vec<f64>)> {
        let SvgpLayout { nk, m, d } = self.layout;
        let shapes = sums.theta.len() == nk
            && sums.mean_bar.len() == m
            && sums.dz.shape() == (m, d)
            && sums.p_and_d.shape() == (m, 2 * m);
        if !shapes || sums.rows == 0 {
            return Err(Error::ShapeMismatch {
                what: "summed shard sums",
                expected: format!("at least one row, {nk} θ, {m}×{d} Z, {m} inducing inputs"),
                found: format!(
                    "{} rows, {} θ, {}×{} Z, {} inducing inputs",
                    sums.rows,
                    sums.theta.len(),
                    sums.dz.nrows(),
                    sums.dz.ncols(),
                    sums.mean_bar.len()
                ),
            });
        }
        let f = self.factors(p)?;
        let mut scalars = vec![sums.data_sum];
        scalars.extend(&sums.mean_bar);
        let pass = PassSums {
            rows: sums.rows,
            data_sum: sums.data_sum,
            grad: Some(GradPart {
                theta: sums.theta.clone(),
                dz: sums.dz.clone(),
                mm: sums.p_and_d.clone(),
                scalars,
            }),
        };
        self.finish(&f, pass)
    }

    /// The sums over no rows.
    fn empty_sums(&self) -> SvgpShardSums {
        let SvgpLayout { nk, m, d } = self.layout;
        SvgpShardSums {
            rows: 0,
            data_sum: 0.0,
            theta: vec![0.0; nk],
            dz: crate::memory::zeros(m, d),
            p_and_d: crate::memory::zeros(m, 2 * m),
            mean_bar: vec![0.0; m],
        }
    }

    fn check_rows(&self, x: MatRef<'_, f64>, y: &[f64], what: &'static str) -> Result<()> {
        if x.nrows() != y.len() || x.ncols() != self.layout.d {
            return Err(Error::ShapeMismatch {
                what,
                expected: format!("one label per row of {} inputs", self.layout.d),
                found: format!(
                    "{} rows of {} inputs, {} labels",
                    x.nrows(),
                    x.ncols(),
                    y.len()
                ),
            });
        }
        Ok(())
    }

    fn factors(&self, p: &[f64]) -> Result<Factors> {
        let (kernel, z, q) = self.layout.unpack(&self.kernel, p)?;
        let (kzz, l_uu) = kuu_factor(&kernel, z.as_ref())?;
        let mut s_cov = crate::memory::zeros(self.layout.m, self.layout.m);
        linalg::syrk_lower_add(s_cov.as_mut(), q.sqrt.as_ref(), None);
        symmetrise_from_lower(&mut s_cov);
        Ok(Factors {
            kernel,
            z,
            q,
            kzz,
            l_uu,
            s_cov,
        })
    }

    /// The terms and, with the pass's gradient parts, the gradient
    /// `[θ…, vec(Z), m, vech(L_q)]`: the data term is the mean over the pass's rows, the KL
    /// spread over N.
    fn finish(&self, f: &Factors, sums: PassSums) -> Result<(SvgpTerms, Vec<f64>)> {
        let n = self.n_total as f64;
        let (kl, kl_mean, kl_sqrt) = match &self.prior {
            None => f.q.kl_with_gradient(),
            Some(prior) => prior.kl_with_gradient(&f.kernel, f.z.as_ref(), &f.q)?,
        };
        let data_term = sums.data_sum / sums.rows as f64;
        if !(data_term.is_finite() && kl.is_finite()) {
            return Err(Error::Numerical {
                what: "sparse variational classifier",
                message: format!("data term {data_term:.6e}, KL {kl:.6e}"),
            });
        }
        // value = a·data_term + c(KL); the data part's gradient is scaled by a, the KL's by c'.
        let mut penalty = None;
        let (value, a, c) = match &self.criterion {
            SvgpCriterion::Elbo(_) => (data_term + kl / n, 1.0, 1.0 / n),
            SvgpCriterion::Bound { bound, .. } => {
                let at = bound.at(&f.kernel.params(), data_term, kl, self.n_total);
                penalty = Some(at.clone());
                (at.value.value, at.value.d_risk, at.value.d_complexity / n)
            }
        };
        let terms = SvgpTerms {
            data_term,
            kl,
            value,
        };
        let Some(parts) = sums.grad else {
            return Ok((terms, Vec::new()));
        };
        let adjoints = Adjoints {
            scale: a / sums.rows as f64,
            kl_scale: c,
            kl_mean: &kl_mean,
            kl_sqrt: &kl_sqrt,
        };
        let mut grad = self.assemble(f, parts, &adjoints);
        // θ's leading entries take a coarse hyperparameter prior's share (none on the grid).
        if let Some(at) = penalty {
            at.add_penalty_gradient(&mut grad);
        }
        Ok((terms, grad))
    }

    /// The gradient `[θ…, vec(Z), m, vech(L_q)]` from the pass's parts and the KL's gradient.
    /// With the block sums `P = Σ V diag(σ̄²) Vᵀ`, `D = Σ_{clamped i} σ̄_i² V_iV_iᵀ` and
    /// `m̄ = Σ V μ̄`: `Σ_b V̄_bV_bᵀ = m m̄ᵀ + 2(S − I)P + 2D`, so `L̄_uu = −L_uu⁻ᵀ(m m̄ᵀ + 2(S −
    /// I)P + 2D)` and `L̄_q = 2 P L_q`, O(M³) once per evaluation.
    fn assemble(&self, f: &Factors, parts: GradPart, adj: &Adjoints<'_>) -> Vec<f64> {
        let SvgpLayout { m, d, .. } = self.layout;
        let mut p_sum = parts.mm.as_ref().subcols(0, m).to_owned();
        let mut d_sum = parts.mm.as_ref().subcols(m, m).to_owned();
        symmetrise_from_lower(&mut p_sum);
        symmetrise_from_lower(&mut d_sum);
        let mean_bar = &parts.scalars[1..];
        // `P L_q` (for L̄_q) and `S P = L_q (P L_q)ᵀ` from it: two triangular products.
        let lq_bar = linalg::product_with_lower(p_sum.as_ref(), false, f.q.sqrt.as_ref(), true);
        let sp = linalg::product_with_lower(f.q.sqrt.as_ref(), true, lq_bar.transpose(), false);
        // L̄_uu = −L_uu⁻ᵀX, so L_uuᵀL̄_uu = −X: K_uu's adjoint without forming L̄_uu.
        let minus_x = Mat::from_fn(m, m, |i, j| {
            -(f.q.mean[i] * mean_bar[j] + 2.0 * (sp[(i, j)] - p_sum[(i, j)] + d_sum[(i, j)]))
        });
        let g = cholesky_adjoint_from_product(&f.l_uu, minus_x.as_ref());
        let (g_theta, g_z) =
            f.kernel
                .inducing_gram_adjoint(f.z.as_ref(), f.kzz.as_ref(), g.as_ref());
        let scale = adj.scale;
        let mut grad: Vec<f64> = parts
            .theta
            .iter()
            .zip(&g_theta)
            .map(|(a, b)| scale * (a + b))
            .collect();
        for a in 0..m {
            for t in 0..d {
                grad.push(scale * (parts.dz[(a, t)] + g_z[(a, t)]));
            }
        }
        let c = adj.kl_scale;
        grad.extend((0..m).map(|i| scale * mean_bar[i] + c * adj.kl_mean[i]));
        let combined = Mat::from_fn(m, m, |i, j| {
            2.0 * scale * lq_bar[(i, j)] + c * adj.kl_sqrt[(i, j)]
        });
        self.layout.pack_lower(&combined, &mut grad);
        grad
    }

    /// The one pass over `(x, y)`'s row blocks: the data term's sum and, with `with_grad`, the
    /// block parts of its gradient (`mm` = `[P | D]` on their lower triangles, `scalars` =
    /// `[Σ loss, m̄…]`, θ and Z through `F̄`).
    fn pass(
        &self,
        f: &Factors,
        x: MatRef<'_, f64>,
        y: &[f64],
        stream: &Streaming,
        with_grad: bool,
    ) -> Result<PassSums> {
        let data = SparseData::new(&f.kernel, x, y, f.z.as_ref(), stream);
        let (data_sum, grad) = data.blocks.sum(
            vec![],
            &|b, _| self.block(&data, b, f, with_grad),
            &|acc: &mut (f64, Option<GradPart>), other| {
                acc.0 += other.0;
                if let (Some(a), Some(o)) = (acc.1.as_mut(), other.1) {
                    a.add(o);
                }
            },
        )?;
        Ok(PassSums {
            rows: y.len(),
            data_sum,
            grad,
        })
    }

    /// One block's share of [`Self::pass`]: `V = L_uu⁻¹F`, `U = SV` (one product), the
    /// marginals `μ = Vᵀm`, `σ² = max(k − ‖V_i‖², 0) + V_iᵀU_i`, the per-point terms, then
    /// `V̄ = m μ̄ᵀ + 2U diag(σ̄²) − 2V diag(σ̄²·[unclamped])` (in U's storage), `F̄ = L_uu⁻ᵀV̄`
    /// and the sums `P`, `D`, `m̄` of [`Self::assemble`]: about 5·M²B flops.
    fn block(
        &self,
        data: &SparseData<'_>,
        b: usize,
        fac: &Factors,
        with_grad: bool,
    ) -> Result<(f64, Option<GradPart>)> {
        let (m, q) = (self.layout.m, &fac.q);
        let r = data.blocks.range(b);
        let nb = r.len();
        let f = data.kzx(b)?;
        let v = SparseData::whiten(&fac.l_uu, &f);
        let kd = data.kernel.diag(data.x.subrows(r.start, nb));
        let mu = mat_t_vec_seq(v.as_ref(), &q.mean);
        let mut u = scratch(m, nb);
        matmul(
            u.as_mut(),
            Accum::Replace,
            fac.s_cov.as_ref(),
            v.as_ref(),
            1.0,
            Par::Seq,
        );
        let (mut g_mean, mut g_var, mut g_kdiag) = (vec![0.0; nb], vec![0.0; nb], vec![0.0; nb]);
        let mut data_sum = 0.0;
        // The rows' quadratures call glibc's exp, log and log1p after the products above.
        crate::vector_math::clear_upper_vector_state();
        for k in 0..nb {
            let vk = v.col_as_slice(k);
            let qi: f64 = vk.iter().map(|v| v * v).sum();
            let wi: f64 = vk.iter().zip(u.col_as_slice(k)).map(|(v, u)| v * u).sum();
            let resid = kd[k] - qi;
            let t = self
                .criterion
                .point(data.y[r.start + k], mu[k], resid.max(0.0) + wi);
            data_sum += t.value;
            (g_mean[k], g_var[k]) = (t.d_mean, t.d_var);
            g_kdiag[k] = if resid > 0.0 { t.d_var } else { 0.0 };
        }
        if !with_grad {
            recycle(f);
            recycle(v);
            recycle(u);
            return Ok((data_sum, None));
        }
        let mut mm = scratch_zeroed(m, 2 * m);
        linalg::syrk_lower_add(mm.as_mut().subcols_mut(0, m), v.as_ref(), Some(&g_var));
        for k in (0..nb).filter(|&k| g_kdiag[k] != g_var[k]) {
            let vk = v.col_as_slice(k);
            for j in 0..m {
                for i in j..m {
                    mm[(i, m + j)] += g_var[k] * vk[i] * vk[j];
                }
            }
        }
        let mean_bar = mat_vec_seq(v.as_ref(), &g_mean);
        for k in 0..nb {
            let (gm, gv, gk) = (g_mean[k], g_var[k], g_kdiag[k]);
            let vk = v.col_as_slice(k);
            for (a, x) in u.col_as_slice_mut(k).iter_mut().enumerate() {
                *x = 2.0 * gv * *x + q.mean[a] * gm - 2.0 * gk * vk[a];
            }
        }
        recycle(v);
        fac.l_uu.solve_upper_in_place_seq(u.as_mut());
        let mut scalars = vec![data_sum];
        scalars.extend(mean_bar);
        let part = GradPart::of_block(data, b, f, u, &g_kdiag, mm, scalars);
        Ok((data_sum, Some(part)))
    }
}

/// What [`SvgpAssembly::assemble`] needs besides the pass's parts and the factors.
struct Adjoints<'q> {
    /// The data term sum's weight in the objective.
    scale: f64,
    /// The KL's weight in the objective.
    kl_scale: f64,
    kl_mean: &'q [f64],
    kl_sqrt: &'q Mat<f64>,
}

/// The inputs a sparse variational classifier takes: finite inputs of the kernel's width,
/// labels ±1 with both classes, and `1 ≤ M ≤ N` inducing inputs.
pub(crate) fn check_classifier_inputs(
    kernel: &Kernel,
    x: MatRef<'_, f64>,
    y: &[f64],
    m: usize,
) -> Result<()> {
    if x.nrows() != y.len() {
        return Err(Error::ShapeMismatch {
            what: "labels",
            expected: format!("{} (one per input row)", x.nrows()),
            found: format!("{}", y.len()),
        });
    }
    crate::data::check_finite(x, "training inputs")?;
    crate::data::check_binary_labels(y)?;
    kernel.check_input_dim(x.ncols())?;
    crate::regression::greedy::check_inducing_count(m, x.nrows())
}
