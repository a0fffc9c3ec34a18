//! Coarse non-uniform hyperparameter prior (tighter-bounds spec §2): per kernel component
//! `u_t = ln θ_t` on the grid `G_h = {−6, −6 + h, …, 6}`, a product prior
//!
//! `π_t(u) = exp(−(u − m_t)²/(2τ²)) / Σ_{g∈G_h} exp(−(g − m_t)²/(2τ²))`  (spec §2.1),
//!
//! or the uniform `1/|G_h|`. Centres, τ and h are fixed in the library before any data is seen
//! (spec §7 item 2: h = 0.25, m = 0 for ln σ_f², m = 1 for ln ℓ, τ = 1.5). The certificate
//! pays `−ln π(θ̂)` at the snapped θ̂; during optimisation the smooth surrogate
//! `Σ_t (u_t − m_t)²/(2τ²) + Σ_t ln Z_t` is used, which equals `−ln π` on the grid.

use serde::{Deserialize, Serialize};

use crate::bounds::SnapGrid;
use crate::certificate::PenaltyTerm;
use crate::error::{Error, Result};
use crate::kernel::Kernel;

/// Shape of the per-component prior over the grid.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "shape")]
pub enum HyperPriorShape {
    /// `1/|G_h|` for every grid value.
    Uniform,
    /// Discretised Gaussian in ln space with width τ around the component's centre.
    Gaussian {
        /// Width τ in ln space.
        tau: f64,
    },
}

/// A prior over the kernel's ln-space hyperparameters on a coarse grid, fixed in advance.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct HyperPrior {
    /// Grid step h in ln space.
    pub step: f64,
    /// Lower end of the grid.
    pub min_log: f64,
    /// Upper end of the grid.
    pub max_log: f64,
    /// Uniform or discretised Gaussian.
    pub shape: HyperPriorShape,
    /// Centre for ln-lengthscale components (`ln ℓ`).
    pub centre_lengthscale: f64,
    /// Centre for every other component (`ln σ_f²`, variances, offsets).
    pub centre_other: f64,
}

impl HyperPrior {
    /// Spec §7 item 2's discretised Gaussian: h = 0.25 on [−6, 6], τ = 1.5, centres 1 (ln ℓ)
    /// and 0 (ln σ_f² and the rest); standardised inputs and targets make these defensible.
    pub fn gaussian() -> Self {
        Self {
            step: 0.25,
            min_log: -6.0,
            max_log: 6.0,
            shape: HyperPriorShape::Gaussian { tau: 1.5 },
            centre_lengthscale: 1.0,
            centre_other: 0.0,
        }
    }

    /// The uniform prior on the same coarse grid (h = 0.25, `ln 49` per component).
    pub fn uniform() -> Self {
        Self {
            shape: HyperPriorShape::Uniform,
            ..Self::gaussian()
        }
    }

    /// Check the settings (positive step dividing the range, positive τ).
    pub fn validate(&self) -> Result<()> {
        let span = (self.max_log - self.min_log) / self.step;
        if !(self.step > 0.0
            && span.is_finite()
            && span >= 0.0
            && (span - span.round()).abs() < 1e-9)
        {
            return Err(Error::InvalidParameter {
                name: "hyperparameter prior step",
                value: self.step,
                reason: "must be positive and divide the grid's range",
            });
        }
        if let HyperPriorShape::Gaussian { tau } = self.shape {
            if !(tau > 0.0 && tau.is_finite()) {
                return Err(Error::InvalidParameter {
                    name: "hyperparameter prior width tau",
                    value: tau,
                    reason: "must be positive and finite",
                });
            }
        }
        Ok(())
    }

    /// Number of grid values per component, `|G_h|`.
    pub fn points(&self) -> usize {
        ((self.max_log - self.min_log) / self.step).round() as usize + 1
    }

    /// The grid values of one component.
    pub fn grid(&self) -> Vec<f64> {
        (0..self.points())
            .map(|j| self.min_log + j as f64 * self.step)
            .collect()
    }

    /// Centre `m_t` of every hyperparameter of `kernel` (by its name: lengthscales or not).
    pub fn centres(&self, kernel: &Kernel) -> Vec<f64> {
        kernel
            .param_names()
            .iter()
            .map(|n| {
                if n.contains("lengthscale") {
                    self.centre_lengthscale
                } else {
                    self.centre_other
                }
            })
            .collect()
    }

    /// `ln Z_t` of a component with centre `m` (`ln|G_h|` for the uniform prior).
    fn ln_normaliser(&self, m: f64) -> f64 {
        match self.shape {
            HyperPriorShape::Uniform => (self.points() as f64).ln(),
            HyperPriorShape::Gaussian { tau } => {
                let e: Vec<f64> = self
                    .grid()
                    .iter()
                    .map(|g| -(g - m).powi(2) / (2.0 * tau * tau))
                    .collect();
                let top = e.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
                top + e.iter().map(|v| (v - top).exp()).sum::<f64>().ln()
            }
        }
    }

    /// Smooth surrogate of `−ln π(θ)` and its gradient (spec §2.1); equal to `−ln π` on the
    /// grid.
    pub fn surrogate(&self, theta: &[f64], centres: &[f64]) -> (f64, Vec<f64>) {
        let mut value = 0.0;
        let mut grad = vec![0.0; theta.len()];
        for (t, (u, m)) in theta.iter().zip(centres).enumerate() {
            value += self.ln_normaliser(*m);
            if let HyperPriorShape::Gaussian { tau } = self.shape {
                value += (u - m).powi(2) / (2.0 * tau * tau);
                grad[t] = (u - m) / (tau * tau);
            }
        }
        (value, grad)
    }

    /// The prior's grid, which the driver snaps θ onto.
    pub fn snap_grid(&self) -> SnapGrid {
        SnapGrid::Spaced {
            min_log: self.min_log,
            max_log: self.max_log,
            step: self.step,
        }
    }

    /// Round every component to the nearest grid value (clamped to the range).
    pub fn snap(&self, theta: &[f64]) -> Vec<f64> {
        self.snap_grid().round(theta)
    }

    /// `−ln π(θ)` of a θ on the grid, the certificate's price; an error off the grid.
    pub fn penalty(&self, theta: &[f64], centres: &[f64]) -> Result<f64> {
        for u in theta {
            let j = (u - self.min_log) / self.step;
            if !((j - j.round()).abs() < 1e-9
                && j.round() >= 0.0
                && j.round() < self.points() as f64)
            {
                return Err(Error::InvalidParameter {
                    name: "hyperparameter (ln space)",
                    value: *u,
                    reason: "is not on the prior's grid",
                });
            }
        }
        Ok(self.surrogate(theta, centres).0)
    }

    /// The certificate's price of `kernel`'s θ (which must be on the grid).
    pub fn penalty_term(&self, kernel: &Kernel) -> Result<PenaltyTerm> {
        let theta = kernel.params();
        let nats = self.penalty(&theta, &self.centres(kernel))?;
        let shape = match self.shape {
            HyperPriorShape::Uniform => "uniform".to_string(),
            HyperPriorShape::Gaussian { tau } => format!(
                "discretised Gaussian (τ = {tau}, centres {} for ln ℓ, {} otherwise)",
                self.centre_lengthscale, self.centre_other
            ),
        };
        Ok(PenaltyTerm {
            what: format!(
                "{} kernel hyperparameters, −ln π(θ) under a {shape} prior on ln θ ∈ [{}, {}] step {}",
                theta.len(),
                self.min_log,
                self.max_log,
                self.step
            ),
            nats,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// π sums to 1 over the grid (each component), by direct evaluation of the formula.
    #[test]
    fn prior_sums_to_one_and_the_penalty_is_minus_ln_pi() {
        for prior in [
            HyperPrior::gaussian(),
            HyperPrior::uniform(),
            HyperPrior {
                shape: HyperPriorShape::Gaussian { tau: 2.0 },
                step: 0.1,
                ..HyperPrior::gaussian()
            },
        ] {
            prior.validate().unwrap();
            for m in [0.0, 1.0, -5.9] {
                let total: f64 = prior
                    .grid()
                    .iter()
                    .map(|g| (-prior.penalty(&[*g], &[m]).unwrap()).exp())
                    .sum();
                assert!((total - 1.0).abs() < 1e-12, "{total}");
                // Direct evaluation: the unnormalised density divided by the plain sum.
                let w = |g: f64| match prior.shape {
                    HyperPriorShape::Uniform => 1.0,
                    HyperPriorShape::Gaussian { tau } => {
                        (-(g - m).powi(2) / (2.0 * tau * tau)).exp()
                    }
                };
                let z: f64 = prior.grid().iter().map(|g| w(*g)).sum();
                for g in [prior.grid()[3], prior.grid()[prior.points() / 2]] {
                    let want = -(w(g) / z).ln();
                    assert!((prior.penalty(&[g], &[m]).unwrap() - want).abs() < 1e-10);
                }
            }
        }
        assert_eq!(HyperPrior::uniform().points(), 49);
        let p = HyperPrior::uniform()
            .penalty(&[0.25, -6.0], &[0.0, 0.0])
            .unwrap();
        assert!((p - 2.0 * 49f64.ln()).abs() < 1e-12);
    }

    #[test]
    fn snapping_rounds_onto_the_grid_and_off_grid_values_are_errors() {
        let p = HyperPrior::gaussian();
        assert_eq!(
            p.snap(&[0.13, -0.13, 7.0, -9.0, 0.374]),
            vec![0.25, -0.25, 6.0, -6.0, 0.25]
        );
        assert!(p.penalty(&[0.1], &[0.0]).is_err());
        assert!(p.penalty(&[6.25], &[0.0]).is_err());
        // The surrogate's gradient by central differences.
        let (th, c) = ([0.3, -1.7], [1.0, 0.0]);
        let (_, g) = p.surrogate(&th, &c);
        crate::gradcheck::assert_gradient_close(
            |t| p.surrogate(t, &c).0,
            &th,
            &g,
            1e-5,
            crate::gradcheck::Tolerance::mixed(1e-7),
            "surrogate",
        );
        let bad = HyperPrior { step: 0.7, ..p };
        assert!(bad.validate().is_err());
    }

    /// The default centres follow the parameter names: 1 for lengthscales, 0 otherwise.
    #[test]
    fn centres_follow_the_parameter_names() {
        let k = Kernel::se_ard(&[1.0, 2.0], 1.0);
        let names = k.param_names();
        let c = HyperPrior::gaussian().centres(&k);
        for (n, c) in names.iter().zip(&c) {
            assert_eq!(*c, if n.contains("lengthscale") { 1.0 } else { 0.0 }, "{n}");
        }
        assert!(c.contains(&0.0) && c.contains(&1.0));
    }
}

/// The price of θ a PAC objective minimises: a constant (grid or menus, in nats) plus, with a
/// coarse hyperparameter prior, the smooth surrogate of `−ln π(θ)` (spec §2.1).
#[derive(Clone, Debug)]
pub struct ThetaPenalty {
    constant: f64,
    prior: Option<(HyperPrior, Vec<f64>)>,
}

impl ThetaPenalty {
    /// A penalty that does not depend on θ.
    pub fn constant(nats: f64) -> Self {
        Self {
            constant: nats,
            prior: None,
        }
    }

    /// The same constant plus `prior`'s surrogate, centred for `kernel`'s hyperparameters.
    pub fn with_prior(self, prior: HyperPrior, kernel: &Kernel) -> Result<Self> {
        prior.validate()?;
        let centres = prior.centres(kernel);
        Ok(Self {
            prior: Some((prior, centres)),
            ..self
        })
    }

    /// The penalty at the kernel's log-hyperparameters `theta` and its gradient in them.
    pub fn at(&self, theta: &[f64]) -> (f64, Vec<f64>) {
        match &self.prior {
            None => (self.constant, vec![0.0; theta.len()]),
            Some((prior, centres)) => {
                let (v, g) = prior.surrogate(theta, centres);
                (self.constant + v, g)
            }
        }
    }
}
