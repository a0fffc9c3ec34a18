//! Data-dependent GP prior (docs/math.md §9.3; Ambroladze et al. 2007, Parrado-Hernández
//! et al. 2012): a seeded random permutation splits the sample into part A (fraction F) and
//! part B. θ, the prior noise σ_A² (ML-II) and the scalers are fitted on A alone, and the prior
//! is the GP posterior given A — still a GP, with mean `μ_A` and covariance `K_A` on `X_B`
//! (docs/math.md §9.3.1):
//!
//! `L_A L_Aᵀ = K_AA + σ_A² I`, `W = L_A⁻¹ K_AB`, `μ_A = Wᵀ L_A⁻¹ y_A`, `K_A = K_BB − WᵀW`.
//!
//! The posterior updates P_A with S_B, with free `(σ_m², σ_v², s)`:
//! `q(f_B) = N(μ_A + K_A C_m⁻¹ r, s·(K_A − K_A C_v⁻¹ K_A))`, `r = y_B − μ_A`,
//! `C_m = K_A + σ_m² I`, `C_v = K_A + σ_v² I`, and `Q(f) = ∫ P_A(f | f_B) q(f_B) df_B`, so
//!
//! `KL(Q‖P_A) = ½[s σ_v² tr C_v⁻¹ + αᵀK_Aα − N_B − N_B ln s − N_B ln σ_v² + ln det C_v]`,
//! `α = C_m⁻¹ r` (docs/math.md §9.3.1). The certificate is evaluated on B only (`N = N_B`); a menu
//! of fractions fixed in advance ([`crate::objective::gp_split::SPLIT_FRACTIONS`]) costs `ln 3` when
//! the bound picks one.
//! Cost per evaluation O(N_B³) after one O(N_A³ + N_A² N_B) prior.
//!
//! The richer posterior (docs/math.md §9.4.2 on this prior): per-point noises `σ_m² → diag(λ_m,i)`,
//! `σ_v² → diag(λ_v,i)` on B (`PointNoise`, `SplitPointNoiseObjective`,
//! `fit_split_prior_point_noise`), KL as above with `σ_v² tr C_v⁻¹ → Σ_i λ_v,i (C_v⁻¹)_ii`,
//! `N ln σ_v² → Σ_i ln λ_v,i`; the terms and gradients are PAC-GP's per-point ones
//! ([`crate::objective::pac_gp_hetero`]) with `K → K_A`, `y → y_B − μ_A` and the scale s.

use faer::{Mat, MatRef};
use serde::{Deserialize, Serialize};

use crate::bounds::{BoundKind, BoundTarget, ConfidenceTerm, CATONI_GRID};
use crate::certificate::{Certificate, CertificateSpec, GibbsLoss, PenaltyTerm};
use crate::data::{Dataset, SampleSplit, Standardizer, TargetScaler};
use crate::error::{Error, Result};
use crate::kernel::{start, Kernel};
use crate::linalg::{self, Cholesky, JitterPolicy};
use crate::loss::RegressionLoss;
use crate::optim::{self, boxes, LbfgsConfig, Objective, OptimReport, Restarts};
use crate::posterior::{GaussianKlTerms, GaussianPosterior, Marginals, Prior, PriorAt};
use crate::regression::exact::{fit_ml2, MlConfig};
use crate::regression::point_noise::PointNoiseEval;
use crate::select::Menu;

mod fit;
mod objective;
mod posterior;
pub use fit::*;
pub use objective::*;
pub use posterior::*;

/// The menu of split fractions fixed in advance (docs/math.md §9.3).
pub const SPLIT_FRACTIONS: [f64; 3] = [0.3, 0.5, 0.7];

/// Box for `ln s`, the posterior's covariance scale.
pub const LN_SCALE_BOUNDS: (f64, f64) = (-6.0, 3.0);

/// Which fraction F of the sample forms part A.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SplitFraction {
    /// One fraction fixed before seeing the data (no charge).
    Fixed(f64),
    /// The best of [`SPLIT_FRACTIONS`] by the bound, charged `ln 3`.
    Menu,
}

/// The grid of Catoni's λ fixed in advance (charged `ln 5`) when `grid`, else the one
/// confidence term `term` (free).
pub fn catoni_menu(grid: bool, term: ConfidenceTerm) -> Menu<ConfidenceTerm> {
    if grid {
        Menu::charged(
            CATONI_GRID
                .iter()
                .map(|&lambda| ConfidenceTerm::Catoni { lambda })
                .collect(),
            "Catoni λ (geometric in [0.3, 3])",
        )
    } else {
        Menu::free(vec![term], "confidence term", "in advance")
    }
}

impl SplitFraction {
    /// The menu of fractions the bound chooses among (charged `ln k`).
    pub fn menu(&self) -> Result<Menu<f64>> {
        Ok(Menu::charged(self.candidates()?, "split fraction F"))
    }

    /// The candidate fractions and the union-bound menu size.
    pub fn candidates(&self) -> Result<Vec<f64>> {
        match *self {
            SplitFraction::Fixed(f) if f > 0.0 && f < 1.0 => Ok(vec![f]),
            SplitFraction::Fixed(f) => Err(Error::InvalidParameter {
                name: "split fraction F",
                value: f,
                reason: "must lie in (0, 1)",
            }),
            SplitFraction::Menu => Ok(SPLIT_FRACTIONS.to_vec()),
        }
    }
}

/// A regression sample split for a data-dependent prior: the rows of parts A and B, the
/// scalers fitted on part A alone, and both parts standardised by them.
#[derive(Clone, Debug)]
pub struct RegressionParts {
    /// Rows of part A (indices into the sample as given).
    pub a: Vec<usize>,
    /// Rows of part B.
    pub b: Vec<usize>,
    /// Input scaler fitted on A.
    pub x_scaler: Standardizer,
    /// Target scaler fitted on A.
    pub y_scaler: TargetScaler,
    /// Part A's inputs and targets, standardised.
    pub x_a: Mat<f64>,
    /// Part A's targets, standardised.
    pub y_a: Vec<f64>,
    /// Part B's inputs, standardised.
    pub x_b: Mat<f64>,
    /// Part B's targets, standardised.
    pub y_b: Vec<f64>,
}

impl RegressionParts {
    /// The seeded split of `train` at `fraction` ([`SampleSplit`]), scalers fitted on part A.
    pub fn of(train: &Dataset, fraction: f64, seed: u64) -> Result<Self> {
        let (a, b) = SampleSplit::new(fraction, seed).parts(train)?;
        let (part_a, part_b) = (train.subset(&a), train.subset(&b));
        let x_scaler = Standardizer::fit(part_a.x.as_ref(), &part_a.feature_names)?;
        let y_scaler = TargetScaler::fit_column(&part_a.y, &part_a.target_name)?;
        Ok(Self {
            x_a: x_scaler.transform(part_a.x.as_ref())?,
            y_a: y_scaler.transform(&part_a.y),
            x_b: x_scaler.transform(part_b.x.as_ref())?,
            y_b: y_scaler.transform(&part_b.y),
            a,
            b,
            x_scaler,
            y_scaler,
        })
    }
}

/// The prior P_A: the GP posterior given part A (θ_A, σ_A² fitted there).
#[derive(Clone, Debug)]
pub struct SplitPrior {
    /// Kernel with θ_A.
    pub kernel: Kernel,
    /// Prior noise σ_A² of part A.
    pub noise_a: f64,
    /// Inputs of part A (standardised).
    pub x_a: Mat<f64>,
    /// Targets of part A (standardised).
    pub y_a: Vec<f64>,
    /// P_A: the shared posterior of part A as a conditioned prior ([`SplitPrior::posterior`]).
    p_a: Prior,
    /// Where ML-II on part A started, when the wide start moved it ([`SplitPrior::fit_ml2`]).
    pub start_note: Option<String>,
}

impl SplitPrior {
    /// P_A from a kernel with fixed θ_A, noise σ_A² and part A's data.
    pub fn new(kernel: Kernel, noise_a: f64, x_a: Mat<f64>, y_a: &[f64]) -> Result<Self> {
        crate::regression::exact::check_regression_inputs(x_a.as_ref(), y_a)?;
        let k = kernel.gram(x_a.as_ref())?;
        let chol_a = Cholesky::factor_plus_diag(
            k.as_ref(),
            |_| noise_a,
            &JitterPolicy::default(),
            "K_AA + σ_A²I",
        )?;
        let alpha_a = chol_a.solve_vec(y_a);
        let p_a = Prior::conditioned(exact_posterior(&kernel, &k, noise_a, &x_a, alpha_a)?);
        Ok(Self {
            kernel,
            noise_a,
            x_a,
            y_a: y_a.to_vec(),
            p_a,
            start_note: None,
        })
    }

    /// P_A with θ_A and σ_A² by ML-II on part A (the one ML-II driver; no grid, no charge).
    /// On more than [`start::WIDE_INPUTS`] inputs it starts at the median distance of part A's
    /// rows (drawn with `seed`) and stops by the stall rule, as gpr's ML-II does; `certify`
    /// refits A the same way.
    pub fn fit_ml2(kernel_init: &Kernel, x_a: Mat<f64>, y_a: Vec<f64>, seed: u64) -> Result<Self> {
        let mut ml = MlConfig::default();
        ml.lbfgs.stall = start::wide_stall(x_a.ncols());
        let (kernel, start_note) = start::wide_start_noted(
            kernel_init.clone(),
            x_a.as_ref(),
            seed,
            "leaves the evidence flat",
        );
        let (gp, _) = fit_ml2(&kernel, 0.1, x_a.clone(), y_a.clone(), &ml)?;
        let prior = Self::new(gp.kernel, gp.noise_variance, x_a, &y_a)?;
        Ok(Self {
            start_note,
            ..prior
        })
    }

    /// μ_A and K_A on `x` (docs/math.md §9.3.1): the conditioned prior of
    /// [`SplitPrior::posterior`] at the rows of `x`.
    pub fn on(&self, x: MatRef<'_, f64>) -> Result<PriorAt> {
        self.p_a.at(x)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bounds::{catoni_bound, complexity};
    use crate::special::kl_inverse;

    fn toy(n: usize) -> Dataset {
        let x = Mat::from_fn(n, 1, |i, _| ((i * 37) % n) as f64 / n as f64 * 6.0 - 3.0);
        let y = (0..n)
            .map(|i| x[(i, 0)].sin() + 0.2 * (((i * 13) % 7) as f64 - 3.0) / 3.0)
            .collect();
        Dataset::new(x, y).unwrap()
    }

    /// The Catoni lever's certificate is Catoni's closed form at a λ of the grid, with the
    /// menu's `ln 3` and the grid's `ln 5` charged and `ln(1/δ)` as the confidence term; it is
    /// never below `kl⁻¹` of the same complexity (the λ-optimum, docs/math.md §9.1).
    #[test]
    fn catoni_split_certificate_is_the_closed_form_at_a_grid_lambda() {
        let data = toy(80);
        let cfg = SplitConfig::new(0.3);
        let fit = fit_split_prior_catoni(&data, &Kernel::se_iso(1.0, 1.0), &cfg).unwrap();
        let c = &fit.certificate;
        let lambda = c.confidence_term.catoni_lambda().expect("Catoni's term");
        assert!(CATONI_GRID.contains(&lambda));
        assert!((c.penalty - 15f64.ln()).abs() < 1e-12, "{}", c.penalty);
        assert_eq!(c.n, fit.n_b());
        let cx = complexity(c.kl, c.n, 0.01, c.penalty, c.confidence_term);
        assert!((cx - (c.kl + 15f64.ln() + 100f64.ln()) / c.n as f64).abs() < 1e-14);
        assert!((c.bound - catoni_bound(c.empirical_risk, cx, lambda)).abs() < 1e-14);
        assert!(c.bound >= kl_inverse(c.empirical_risk, cx) - 1e-12);
        assert!(c.bound < 1.0);
        // The minimiser's closed-form marginals and KL on B give the certificate's risk and
        // KL (which are the shared posterior's).
        let l = RegressionLoss::band_in_standard_units(0.3, fit.y_scaler.sd).unwrap();
        let q = q_on_b(
            &fit.prior.on(fit.x_b.as_ref()).unwrap(),
            &fit.y_b,
            fit.params,
        )
        .unwrap();
        let r = crate::loss::gibbs_risk_regression(&fit.y_b, &q.marginals, &l).unwrap();
        assert!((r - c.empirical_risk).abs() < 1e-9);
        // toy(80) repeats inputs, so K_A is singular to round-off and needed jitter.
        assert!(fit.posterior.cov.jitter() > 0.0);
        assert!(
            (q.kl - c.kl).abs() < 1e-7 * (1.0 + c.kl),
            "{} vs {}",
            q.kl,
            c.kl
        );
    }
}
