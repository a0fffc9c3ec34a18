//! Adam (Kingma & Ba 2015, Algorithm 1) for objectives estimated on minibatches of rows, with
//! every parameter projected onto its box after each step (as the L-BFGS driver's boxes).
//!
//! The step size follows one documented schedule, [`AdamConfig::step_size`]: constant `α₀` for
//! the first half of the steps, then a cosine decay to `α₀/10` at the last step — large steps
//! while far from the optimum, small ones to settle the minibatch noise at the end.

use serde::{Deserialize, Serialize};

/// Adam's settings.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct AdamConfig {
    /// Number of steps.
    pub steps: usize,
    /// Initial step size α₀ (GPflow's and GPyTorch's examples use 0.01).
    pub learning_rate: f64,
    /// Decay of the first moment, β₁.
    pub beta1: f64,
    /// Decay of the second moment, β₂.
    pub beta2: f64,
    /// ε in the denominator.
    pub epsilon: f64,
}

impl Default for AdamConfig {
    /// The paper's β₁ = 0.9, β₂ = 0.999, ε = 1e-8; α₀ = 0.01, 2000 steps.
    fn default() -> Self {
        Self {
            steps: 2000,
            learning_rate: 0.01,
            beta1: 0.9,
            beta2: 0.999,
            epsilon: 1e-8,
        }
    }
}

impl AdamConfig {
    /// The step size at step `t` (0-based) of [`AdamConfig::steps`] = T: `α₀` for `t < T/2`,
    /// then `α₀/10 + (α₀ − α₀/10)·½(1 + cos(π·(t − T/2)/(T − 1 − T/2)))`, `α₀/10` at the last.
    pub fn step_size(&self, t: usize) -> f64 {
        let half = self.steps / 2;
        let span = self.steps.saturating_sub(half + 1);
        if t < half || span == 0 {
            return self.learning_rate;
        }
        let frac = ((t - half) as f64 / span as f64).min(1.0);
        let low = 0.1 * self.learning_rate;
        low + (self.learning_rate - low) * 0.5 * (1.0 + (std::f64::consts::PI * frac).cos())
    }
}

/// Adam's moment estimates over a parameter vector.
#[derive(Clone, Debug, PartialEq)]
pub struct Adam {
    config: AdamConfig,
    first: Vec<f64>,
    second: Vec<f64>,
    t: usize,
}

impl Adam {
    /// Zero moments for `dim` parameters.
    pub fn new(dim: usize, config: AdamConfig) -> Self {
        Self {
            config,
            first: vec![0.0; dim],
            second: vec![0.0; dim],
            t: 0,
        }
    }

    /// Steps taken so far.
    pub fn steps_taken(&self) -> usize {
        self.t
    }

    /// One step on `params` from the (stochastic) gradient `grad`, each parameter then
    /// projected onto its box in `bounds`.
    pub fn step(&mut self, params: &mut [f64], grad: &[f64], bounds: &[(f64, f64)]) {
        let c = &self.config;
        let alpha = c.step_size(self.t);
        self.t += 1;
        let (b1, b2) = (c.beta1, c.beta2);
        let correct1 = 1.0 - b1.powi(self.t as i32);
        let correct2 = 1.0 - b2.powi(self.t as i32);
        for k in 0..params.len() {
            let g = grad[k];
            self.first[k] = b1 * self.first[k] + (1.0 - b1) * g;
            self.second[k] = b2 * self.second[k] + (1.0 - b2) * g * g;
            let m_hat = self.first[k] / correct1;
            let v_hat = self.second[k] / correct2;
            let (lo, hi) = bounds[k];
            params[k] = (params[k] - alpha * m_hat / (v_hat.sqrt() + c.epsilon)).clamp(lo, hi);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The first step moves every coordinate by α₀ against its gradient's sign (the bias
    /// corrections make m̂/√v̂ = sign g), a box holds, and a convex quadratic is minimised.
    #[test]
    fn first_step_is_signed_and_a_quadratic_is_minimised() {
        let cfg = AdamConfig {
            steps: 3000,
            learning_rate: 0.05,
            ..Default::default()
        };
        let mut adam = Adam::new(3, cfg);
        let mut p = vec![1.0, -2.0, 0.5];
        let free = [(f64::NEG_INFINITY, f64::INFINITY); 3];
        adam.step(&mut p, &[4.0, -0.001, 0.0], &free);
        assert!((p[0] - 0.95).abs() < 1e-6 && (p[1] + 1.95).abs() < 1e-4 && p[2] == 0.5);
        // f = Σ w_k (p_k − c_k)², the third pinned to a box below its optimum.
        let (w, c) = ([1.0, 10.0, 0.1], [0.3, -1.0, 2.0]);
        let bounds = [free[0], free[1], (-1.0, 1.0)];
        for _ in 1..cfg.steps {
            let g: Vec<f64> = (0..3).map(|k| 2.0 * w[k] * (p[k] - c[k])).collect();
            adam.step(&mut p, &g, &bounds);
        }
        assert!(
            (p[0] - 0.3).abs() < 1e-3 && (p[1] + 1.0).abs() < 1e-3,
            "{p:?}"
        );
        assert_eq!(p[2], 1.0);
        assert_eq!(adam.steps_taken(), cfg.steps);
    }

    /// The schedule: α₀ for the first half, α₀/10 at the end, decreasing in between.
    #[test]
    fn step_size_schedule() {
        let cfg = AdamConfig {
            steps: 100,
            ..Default::default()
        };
        assert_eq!(cfg.step_size(0), 0.01);
        assert_eq!(cfg.step_size(49), 0.01);
        assert!((cfg.step_size(99) - 0.001).abs() < 1e-15);
        assert!((1..50).all(|k| cfg.step_size(50 + k) < cfg.step_size(49 + k)));
    }
}
