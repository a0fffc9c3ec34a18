//! The bound on part B as a differentiable objective of Q's free parameters (with one
//! noise pair, or per-point noises): two latent families of [`crate::objective::bound`].

use super::*;
use crate::bounds::BoundValue;
use crate::objective::bound::{BoundObjective, LatentFamily, MinimisedBound, RiskAndKl};

/// Q on B with one noise pair over `[ln σ_m², ln σ_v², ln s]` (docs/math.md §9.3.1), under
/// P_A's mean and covariance on B.
pub struct SplitFamily<'a> {
    prior_b: &'a PriorAt,
    y_b: &'a [f64],
    loss: RegressionLoss,
}

/// The B-part bound over [`SplitFamily`], with its gradient.
pub type SplitBoundObjective<'a> = BoundObjective<SplitFamily<'a>>;

impl<'a> BoundObjective<SplitFamily<'a>> {
    /// The bound on B for P_A's mean and covariance on B and the loss.
    pub fn new(
        prior_b: &'a PriorAt,
        y_b: &'a [f64],
        loss: RegressionLoss,
        bound: MinimisedBound,
    ) -> Self {
        Self::over(SplitFamily { prior_b, y_b, loss }, bound)
    }

    /// `(R_{S_B}, KL(Q‖P_A))` at `p`.
    pub fn risk_and_kl(&self, p: &[f64]) -> Result<(f64, f64)> {
        let f = self.family();
        let q = q_on_b(f.prior_b, f.y_b, SplitPosteriorParams::from_ln(p))?;
        let r = crate::loss::gibbs_risk_regression(f.y_b, &q.marginals, &f.loss)?;
        Ok((r, q.kl))
    }
}

/// One evaluation of [`SplitFamily`]: Q on B and the risk's partials in `σ_m²`, `σ_v²`, `s`.
pub struct SplitEvaluation {
    q: QOnB,
    d_risk: [f64; 3],
    cv2_diag: Vec<f64>,
}

impl LatentFamily for SplitFamily<'_> {
    type Evaluation = SplitEvaluation;

    fn dim(&self) -> usize {
        3
    }

    fn sample_size(&self) -> usize {
        self.y_b.len()
    }

    fn n_theta(&self) -> usize {
        0
    }

    fn evaluate(&self, p: &[f64]) -> Result<(RiskAndKl, SplitEvaluation)> {
        let q = q_on_b(self.prior_b, self.y_b, SplitPosteriorParams::from_ln(p))?;
        let n = self.y_b.len();
        let nf = n as f64;
        let (sm, sv, s) = (q.params.noise_mean, q.params.noise_cov, q.params.scale);
        let (mut risk, mut drm, mut drv, mut drs) = (0.0, 0.0, 0.0, 0.0);
        let cv2_diag = linalg::col_sq_norms(&q.cv_inv);
        for i in 0..n {
            let (m, v) = (q.marginals.mean[i], q.marginals.var[i]);
            let pr = self.loss.point_risk(self.y_b[i], m, v);
            risk += pr.risk / nf;
            // ∂m_i/∂σ_m² = −α_i + σ_m² β_i; ∂v_i/∂σ_v² = s(1 − 2σ_v²[C_v⁻¹]_ii + σ_v⁴[C_v⁻²]_ii);
            // ∂v_i/∂s = v_i/s.
            let ci = q.cv_inv[(i, i)];
            drm += pr.d_mean * (-q.alpha[i] + sm * q.beta[i]) / nf;
            drv += pr.d_var * s * (1.0 - 2.0 * sv * ci + sv * sv * cv2_diag[i]) / nf;
            drs += pr.d_var * v / s / nf;
        }
        let rk = RiskAndKl::new(risk, q.kl);
        let eval = SplitEvaluation {
            q,
            d_risk: [drm, drv, drs],
            cv2_diag,
        };
        Ok((rk, eval))
    }

    fn pull_back(&self, _p: &[f64], ev: SplitEvaluation, b: &BoundValue) -> Result<Vec<f64>> {
        let SplitEvaluation {
            q,
            d_risk: [drm, drv, drs],
            cv2_diag,
        } = ev;
        let n = self.y_b.len();
        let nf = n as f64;
        let (sm, sv, s) = (q.params.noise_mean, q.params.noise_cov, q.params.scale);
        let (d_q, d_c) = (b.d_risk, b.d_complexity);
        let tr: f64 = (0..n).map(|i| q.cv_inv[(i, i)]).sum();
        let tr2: f64 = cv2_diag.iter().sum();
        // ∂KL/∂σ_m² = −αᵀα + σ_m² αᵀβ; ∂KL/∂σ_v² = ½[(s + 1) tr C_v⁻¹ − s σ_v² tr C_v⁻² − N/σ_v²];
        // ∂KL/∂s = ½[σ_v² tr C_v⁻¹ − N/s].
        let dkm = -linalg::dot(&q.alpha, &q.alpha) + sm * linalg::dot(&q.alpha, &q.beta);
        let dkv = 0.5 * ((s + 1.0) * tr - s * sv * tr2 - nf / sv);
        let dks = 0.5 * (sv * tr - nf / s);
        Ok(vec![
            sm * (d_q * drm + d_c * dkm / nf),
            sv * (d_q * drv + d_c * dkv / nf),
            s * (d_q * drs + d_c * dks / nf),
        ])
    }
}

/// Q on B with per-point noises over `[ln λ_m (N_B); ln λ_v (N_B); ln s]` (docs/math.md
/// §9.3.1, §9.4.2): PAC-GP's per-point-noise family with `K → K_A`, `y → y_B − μ_A`, and the
/// scale s.
pub struct SplitPointNoiseFamily<'a> {
    prior_b: &'a PriorAt,
    y_b: &'a [f64],
    r: Vec<f64>,
    loss: RegressionLoss,
}

/// The B-part bound over [`SplitPointNoiseFamily`], with its analytic gradient.
pub type SplitPointNoiseObjective<'a> = BoundObjective<SplitPointNoiseFamily<'a>>;

impl<'a> BoundObjective<SplitPointNoiseFamily<'a>> {
    /// The bound on B for P_A's mean and covariance on B and the loss.
    pub fn new(
        prior_b: &'a PriorAt,
        y_b: &'a [f64],
        loss: RegressionLoss,
        bound: MinimisedBound,
    ) -> Self {
        let family = SplitPointNoiseFamily {
            prior_b,
            y_b,
            r: residual(prior_b, y_b),
            loss,
        };
        Self::over(family, bound)
    }

    /// `(R_{S_B}, KL(Q‖P_A))` at `p`.
    pub fn risk_and_kl(&self, p: &[f64]) -> Result<(f64, f64)> {
        let e = self.family().noise_eval(p)?;
        Ok((e.risk, e.kl))
    }

    /// The start at a homoscedastic Q: `[ln σ_m² …; ln σ_v² …; ln s]`.
    pub fn start(&self, params: &SplitPosteriorParams) -> Vec<f64> {
        let n = self.family().y_b.len();
        let mut x0 = vec![params.noise_mean.ln(); n];
        x0.extend(std::iter::repeat_n(params.noise_cov.ln(), n));
        x0.push(params.scale.ln());
        x0
    }
}

impl SplitPointNoiseFamily<'_> {
    /// Q's terms at `p`.
    fn noise_eval(&self, p: &[f64]) -> Result<PointNoiseEval> {
        let n = self.y_b.len();
        let noise = (
            p[..n].iter().map(|l| l.exp()).collect(),
            p[n..2 * n].iter().map(|l| l.exp()).collect(),
            p[2 * n].exp(),
        );
        PointNoiseEval::new(
            &self.prior_b.cov,
            &self.r,
            self.y_b,
            noise,
            Some(&self.loss),
        )
    }
}

/// One evaluation of [`SplitPointNoiseFamily`].
pub struct SplitPointNoiseEvaluation(PointNoiseEval);

impl LatentFamily for SplitPointNoiseFamily<'_> {
    type Evaluation = SplitPointNoiseEvaluation;

    fn dim(&self) -> usize {
        2 * self.y_b.len() + 1
    }

    fn sample_size(&self) -> usize {
        self.y_b.len()
    }

    fn n_theta(&self) -> usize {
        0
    }

    fn evaluate(&self, p: &[f64]) -> Result<(RiskAndKl, SplitPointNoiseEvaluation)> {
        let e = self.noise_eval(p)?;
        Ok((RiskAndKl::new(e.risk, e.kl), SplitPointNoiseEvaluation(e)))
    }

    fn pull_back(
        &self,
        _p: &[f64],
        ev: SplitPointNoiseEvaluation,
        b: &BoundValue,
    ) -> Result<Vec<f64>> {
        let SplitPointNoiseEvaluation(e) = ev;
        let n = self.y_b.len();
        let (d_q, d_c) = (b.d_risk, b.d_complexity);
        let (h, u) = e.adjoints();
        let (d_lm, d_lv, d_s) = e.noise_gradients(d_q / n as f64, d_c / n as f64, &h, &u);
        let mut grad: Vec<f64> = d_lm.iter().zip(&e.lm).map(|(d, l)| l * d).collect();
        grad.extend(d_lv.iter().zip(&e.lv).map(|(d, l)| l * d));
        grad.push(e.scale * d_s);
        Ok(grad)
    }
}
