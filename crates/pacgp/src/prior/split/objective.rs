//! The bound on part B as a differentiable objective of Q's free parameters (with one
//! noise pair, or per-point noises).

use super::*;

/// The B-part bound over `[ln σ_m², ln σ_v², ln s]` (docs/math.md §9.3.1), with its gradient.
pub struct SplitBoundObjective<'a> {
    prior_b: &'a PriorAt,
    y_b: &'a [f64],
    loss: RegressionLoss,
    /// The kl bound on B (δ, confidence term, the penalty).
    target: BoundTarget,
}

impl<'a> SplitBoundObjective<'a> {
    /// The bound on B for P_A's mean and covariance on B, the loss, δ, the menu penalty and
    /// the confidence term.
    pub fn new(
        prior_b: &'a PriorAt,
        y_b: &'a [f64],
        loss: RegressionLoss,
        delta: f64,
        penalty: f64,
        term: ConfidenceTerm,
    ) -> Self {
        Self {
            prior_b,
            y_b,
            loss,
            target: BoundTarget {
                delta,
                term,
                kind: BoundKind::Kl,
                penalty,
            },
        }
    }

    /// `(R_{S_B}, KL(Q‖P_A))` at `p`.
    pub fn risk_and_kl(&self, p: &[f64]) -> Result<(f64, f64)> {
        let q = q_on_b(self.prior_b, self.y_b, SplitPosteriorParams::from_ln(p))?;
        let r = crate::loss::gibbs_risk_regression(self.y_b, &q.marginals, &self.loss)?;
        Ok((r, q.kl))
    }
}

impl Objective for SplitBoundObjective<'_> {
    fn dim(&self) -> usize {
        3
    }

    fn value_and_gradient(&self, p: &[f64]) -> Result<(f64, Vec<f64>)> {
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
        let b = self.target.at(risk, q.kl, n);
        let (value, d_q, d_c) = (b.value, b.d_risk, b.d_complexity);
        let tr: f64 = (0..n).map(|i| q.cv_inv[(i, i)]).sum();
        let tr2: f64 = cv2_diag.iter().sum();
        // ∂KL/∂σ_m² = −αᵀα + σ_m² αᵀβ; ∂KL/∂σ_v² = ½[(s + 1) tr C_v⁻¹ − s σ_v² tr C_v⁻² − N/σ_v²];
        // ∂KL/∂s = ½[σ_v² tr C_v⁻¹ − N/s].
        let dkm = -linalg::dot(&q.alpha, &q.alpha) + sm * linalg::dot(&q.alpha, &q.beta);
        let dkv = 0.5 * ((s + 1.0) * tr - s * sv * tr2 - nf / sv);
        let dks = 0.5 * (sv * tr - nf / s);
        let grad = vec![
            sm * (d_q * drm + d_c * dkm / nf),
            sv * (d_q * drv + d_c * dkv / nf),
            s * (d_q * drs + d_c * dks / nf),
        ];
        Ok((value, grad))
    }
}

/// The B-part bound with per-point noises over `[ln λ_m (N_B); ln λ_v (N_B); ln s]` (docs/math.md
/// §9.3.1, §9.4.2), with its analytic gradient (PAC-GP's per-point-noise gradients with `K → K_A`,
/// `y → y_B − μ_A`, plus `∂/∂s`).
pub struct SplitPointNoiseObjective<'a> {
    prior_b: &'a PriorAt,
    y_b: &'a [f64],
    r: Vec<f64>,
    loss: RegressionLoss,
    /// The kl bound on B (δ, confidence term, the penalty).
    target: BoundTarget,
}

impl<'a> SplitPointNoiseObjective<'a> {
    /// The bound on B for P_A's mean and covariance on B, the loss, δ, the penalty and the
    /// confidence term.
    pub fn new(
        prior_b: &'a PriorAt,
        y_b: &'a [f64],
        loss: RegressionLoss,
        delta: f64,
        penalty: f64,
        term: ConfidenceTerm,
    ) -> Self {
        Self {
            prior_b,
            y_b,
            r: residual(prior_b, y_b),
            loss,
            target: BoundTarget {
                delta,
                term,
                kind: BoundKind::Kl,
                penalty,
            },
        }
    }

    /// Q's terms at `p`.
    fn evaluate(&self, p: &[f64]) -> Result<PointNoiseEval> {
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

    /// `(R_{S_B}, KL(Q‖P_A))` at `p`.
    pub fn risk_and_kl(&self, p: &[f64]) -> Result<(f64, f64)> {
        let e = self.evaluate(p)?;
        Ok((e.risk, e.kl))
    }

    /// The start at a homoscedastic Q: `[ln σ_m² …; ln σ_v² …; ln s]`.
    pub fn start(&self, params: &SplitPosteriorParams) -> Vec<f64> {
        let n = self.y_b.len();
        let mut x0 = vec![params.noise_mean.ln(); n];
        x0.extend(std::iter::repeat_n(params.noise_cov.ln(), n));
        x0.push(params.scale.ln());
        x0
    }
}

impl Objective for SplitPointNoiseObjective<'_> {
    fn dim(&self) -> usize {
        2 * self.y_b.len() + 1
    }

    fn value_and_gradient(&self, p: &[f64]) -> Result<(f64, Vec<f64>)> {
        let e = self.evaluate(p)?;
        let n = self.y_b.len();
        let b = self.target.at(e.risk, e.kl, n);
        let (value, d_q, d_c) = (b.value, b.d_risk, b.d_complexity);
        let (h, u) = e.adjoints();
        let (d_lm, d_lv, d_s) = e.noise_gradients(d_q / n as f64, d_c / n as f64, &h, &u);
        let mut grad: Vec<f64> = d_lm.iter().zip(&e.lm).map(|(d, l)| l * d).collect();
        grad.extend(d_lv.iter().zip(&e.lv).map(|(d, l)| l * d));
        grad.push(e.scale * d_s);
        Ok((value, grad))
    }
}
