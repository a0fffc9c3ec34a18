//! Dot-product kernels: linear `Σ_t v_t x_t z_t` and polynomial `(x·z/l² + c)^p`.

/// `Σ_t v_t x_t z_t` with `v = exp(ln_v)` (one shared or one per input).
pub(super) fn linear(ln_v: &[f64], x: &[f64], z: &[f64]) -> f64 {
    (0..x.len())
        .map(|t| ln_v[if ln_v.len() == 1 { 0 } else { t }].exp() * x[t] * z[t])
        .sum()
}

/// `∂/∂ln v_t` of the linear kernel, appended to `out`.
pub(super) fn linear_grad(ln_v: &[f64], x: &[f64], z: &[f64], out: &mut Vec<f64>) {
    if ln_v.len() == 1 {
        out.push(linear(ln_v, x, z));
    } else {
        out.extend((0..x.len()).map(|t| ln_v[t].exp() * x[t] * z[t]));
    }
}

/// `(k, ∂k/∂ln c, ∂k/∂ln l)` of `k = (x·z/l² + c)^p`.
pub(super) fn polynomial(p: u32, ln_c: f64, ln_l: f64, x: &[f64], z: &[f64]) -> (f64, f64, f64) {
    let xz = crate::linalg::dot(x, z) * (-2.0 * ln_l).exp();
    let s = xz + ln_c.exp();
    let pf = p as f64;
    let dk_ds = pf * s.powi(p as i32 - 1);
    (s.powi(p as i32), dk_ds * ln_c.exp(), dk_ds * (-2.0 * xz))
}

/// `∂k/∂x_t = p s^{p−1} z_t / l²` of the polynomial kernel.
pub(super) fn polynomial_grad_x(
    p: u32,
    ln_c: f64,
    ln_l: f64,
    x: &[f64],
    z: &[f64],
    out: &mut [f64],
) {
    let inv_l2 = (-2.0 * ln_l).exp();
    let s = crate::linalg::dot(x, z) * inv_l2 + ln_c.exp();
    let f = p as f64 * s.powi(p as i32 - 1) * inv_l2;
    for t in 0..x.len() {
        out[t] = f * z[t];
    }
}
