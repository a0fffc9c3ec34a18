//! A kernel at one pair of points: `k(x, z)`, its gradient in θ and in x.

use super::*;

impl Kernel {
    /// `k(x, z)` for two points.
    pub fn eval(&self, x: &[f64], z: &[f64]) -> f64 {
        match self {
            Kernel::Stationary {
                profile,
                ln_lengthscale,
                groups,
            } => {
                let ln_l = per_input(ln_lengthscale, groups.as_deref());
                profile.value_and_slope(scaled_sqdist(&ln_l, x, z)).0
            }
            Kernel::Linear { ln_variance } => dot_product::linear(ln_variance, x, z),
            Kernel::Polynomial {
                degree,
                ln_offset,
                ln_lengthscale,
            } => dot_product::polynomial(*degree, *ln_offset, *ln_lengthscale, x, z).0,
            Kernel::Constant { ln_variance } => ln_variance.exp(),
            Kernel::Scale { ln_variance, inner } => ln_variance.exp() * inner.eval(x, z),
            Kernel::Sum { left, right } => left.eval(x, z) + right.eval(x, z),
            Kernel::Product { left, right } => left.eval(x, z) * right.eval(x, z),
        }
    }

    /// `∂k(x,z)/∂θ_k` for every k, appended to `out`.
    pub fn eval_grad(&self, x: &[f64], z: &[f64], out: &mut Vec<f64>) {
        match self {
            Kernel::Stationary {
                profile,
                ln_lengthscale,
                groups,
            } => {
                // ∂k/∂ln l_t = k'(r²) · (−2 (x_t − z_t)²/l_t²); a group's is the sum over
                // its inputs.
                let ln_l = per_input(ln_lengthscale, groups.as_deref());
                let r2 = scaled_sqdist(&ln_l, x, z);
                let slope = profile.value_and_slope(r2).1;
                if ln_l.len() == 1 {
                    out.push(-2.0 * slope * r2);
                } else {
                    let per: Vec<f64> = (0..x.len())
                        .map(|t| {
                            let d = x[t] - z[t];
                            -2.0 * slope * d * d / (2.0 * ln_l[t]).exp()
                        })
                        .collect();
                    match groups {
                        Some(sizes) => out.extend(sum_over_groups(&per, sizes)),
                        None => out.extend(per),
                    }
                }
            }
            Kernel::Linear { ln_variance } => dot_product::linear_grad(ln_variance, x, z, out),
            Kernel::Polynomial {
                degree,
                ln_offset,
                ln_lengthscale,
            } => {
                let (_, dc, dl) =
                    dot_product::polynomial(*degree, *ln_offset, *ln_lengthscale, x, z);
                out.push(dc);
                out.push(dl);
            }
            Kernel::Constant { ln_variance } => out.push(ln_variance.exp()),
            Kernel::Scale { ln_variance, inner } => {
                let s = ln_variance.exp();
                out.push(s * inner.eval(x, z));
                let start = out.len();
                inner.eval_grad(x, z, out);
                for g in &mut out[start..] {
                    *g *= s;
                }
            }
            Kernel::Sum { left, right } => {
                left.eval_grad(x, z, out);
                right.eval_grad(x, z, out);
            }
            Kernel::Product { left, right } => {
                let (kl, kr) = (left.eval(x, z), right.eval(x, z));
                let start = out.len();
                left.eval_grad(x, z, out);
                for g in &mut out[start..] {
                    *g *= kr;
                }
                let mid = out.len();
                right.eval_grad(x, z, out);
                for g in &mut out[mid..] {
                    *g *= kl;
                }
            }
        }
    }

    /// `∂k(x,z)/∂x_t` for every input dimension t, written into `out` (length D).
    pub fn eval_grad_x(&self, x: &[f64], z: &[f64], out: &mut [f64]) {
        match self {
            Kernel::Stationary {
                profile,
                ln_lengthscale,
                groups,
            } => {
                let ln_l = per_input(ln_lengthscale, groups.as_deref());
                let slope = profile.value_and_slope(scaled_sqdist(&ln_l, x, z)).1;
                for t in 0..x.len() {
                    let l2 = (2.0 * ln_l[if ln_l.len() == 1 { 0 } else { t }]).exp();
                    out[t] = 2.0 * slope * (x[t] - z[t]) / l2;
                }
            }
            Kernel::Linear { ln_variance } => {
                for t in 0..x.len() {
                    out[t] = ln_variance[if ln_variance.len() == 1 { 0 } else { t }].exp() * z[t];
                }
            }
            Kernel::Polynomial {
                degree,
                ln_offset,
                ln_lengthscale,
            } => dot_product::polynomial_grad_x(*degree, *ln_offset, *ln_lengthscale, x, z, out),
            Kernel::Constant { .. } => out.iter_mut().for_each(|o| *o = 0.0),
            Kernel::Scale { ln_variance, inner } => {
                inner.eval_grad_x(x, z, out);
                let s = ln_variance.exp();
                out.iter_mut().for_each(|g| *g *= s);
            }
            Kernel::Sum { left, right } => {
                let mut tmp = vec![0.0; out.len()];
                left.eval_grad_x(x, z, out);
                right.eval_grad_x(x, z, &mut tmp);
                out.iter_mut().zip(&tmp).for_each(|(o, t)| *o += t);
            }
            Kernel::Product { left, right } => {
                let (kl, kr) = (left.eval(x, z), right.eval(x, z));
                let mut tmp = vec![0.0; out.len()];
                left.eval_grad_x(x, z, out);
                right.eval_grad_x(x, z, &mut tmp);
                out.iter_mut()
                    .zip(&tmp)
                    .for_each(|(o, t)| *o = *o * kr + kl * t);
            }
        }
    }
}
