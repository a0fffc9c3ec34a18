//! A stationary kernel with lengthscales tied over groups of inputs (`se-groups(…)`, the
//! default on one-hot inputs) is the ARD kernel whose lengthscales are equal within each
//! group: the same matrices, and θ-gradients that are the ARD gradients summed per group.

use faer::Mat;
use pacgp::gradcheck::{assert_gradient_close, Tolerance};
use pacgp::kernel::Kernel;

/// Inputs 0 and 4 alone, inputs 1–3 one group (a three-level one-hot column), 5–6 another.
const GROUPS: [usize; 4] = [1, 3, 1, 2];
const D: usize = 7;

/// Points whose one-hot block (inputs 1–3) holds one indicator set per row, the rest numbers.
fn inputs(n: usize, shift: f64) -> Mat<f64> {
    Mat::from_fn(n, D, |i, t| match t {
        1..=3 => f64::from(u8::from((i + usize::from(shift > 0.0)) % 3 == t - 1)),
        _ => ((i * 7 + t * 5) % 11) as f64 / 5.5 - 1.0 + shift * t as f64,
    })
}

/// The grouped kernel `σ²·k` for `spec_stem` with group lengthscales `ln_l` and its ARD twin
/// (each group's lengthscale repeated over its inputs).
fn twins(stem: &str, ln_var: f64, ln_l: &[f64]) -> (Kernel, Kernel) {
    let mut grouped = Kernel::from_spec(&Kernel::groups_spec(stem, &GROUPS), D).unwrap();
    let mut theta = vec![ln_var];
    theta.extend_from_slice(ln_l);
    grouped.set_params(&theta).unwrap();
    let mut ard = Kernel::from_spec(&format!("{stem}-ard"), D).unwrap();
    let mut ard_theta = vec![ln_var];
    for (&n, &l) in GROUPS.iter().zip(ln_l) {
        ard_theta.extend(std::iter::repeat_n(l, n));
    }
    ard.set_params(&ard_theta).unwrap();
    (grouped, ard)
}

fn weights(n: usize, m: usize) -> Mat<f64> {
    Mat::from_fn(n, m, |i, j| ((i * 3 + j * 11) % 7) as f64 / 7.0 - 0.4)
}

/// `[g₀, then the per-input entries summed over GROUPS]`: an ARD gradient in the grouped θ.
fn summed_over_groups(ard: &[f64]) -> Vec<f64> {
    let mut out = vec![ard[0]];
    let mut start = 1;
    for &n in &GROUPS {
        out.push(ard[start..start + n].iter().sum());
        start += n;
    }
    out
}

fn assert_close(a: &[f64], b: &[f64], tol: f64, what: &str) {
    assert_eq!(a.len(), b.len(), "{what}: lengths");
    for (i, (x, y)) in a.iter().zip(b).enumerate() {
        assert!(
            (x - y).abs() <= tol * (1.0 + x.abs()),
            "{what}[{i}]: {x} vs {y}"
        );
    }
}

fn max_abs_diff(a: &Mat<f64>, b: &Mat<f64>) -> f64 {
    let mut m = 0.0f64;
    for j in 0..a.ncols() {
        for i in 0..a.nrows() {
            m = m.max((a[(i, j)] - b[(i, j)]).abs());
        }
    }
    m
}

const STEMS: [&str; 3] = ["se", "matern52", "matern12"];
const LN_L: [f64; 4] = [0.3, -0.5, 0.8, 0.1];

#[test]
fn grouped_kernel_is_ard_with_equal_lengthscales_in_each_group() {
    let (x, z) = (inputs(11, 0.0), inputs(5, 0.3));
    for stem in STEMS {
        let (grouped, ard) = twins(stem, 0.2, &LN_L);
        assert_eq!(
            grouped.n_params(),
            1 + GROUPS.len(),
            "{stem}: one θ per group"
        );
        let gram = max_abs_diff(
            &grouped.gram(x.as_ref()).unwrap(),
            &ard.gram(x.as_ref()).unwrap(),
        );
        let cross = max_abs_diff(
            &grouped.cross(x.as_ref(), z.as_ref()).unwrap(),
            &ard.cross(x.as_ref(), z.as_ref()).unwrap(),
        );
        let inducing = max_abs_diff(
            &grouped.inducing_cross(z.as_ref(), x.as_ref()).unwrap(),
            &ard.inducing_cross(z.as_ref(), x.as_ref()).unwrap(),
        );
        assert!(
            gram <= 1e-12 && cross <= 1e-12 && inducing <= 1e-12,
            "{stem}"
        );
        let row = |m: &Mat<f64>, i: usize| (0..D).map(|t| m[(i, t)]).collect::<Vec<_>>();
        let (a, b) = (row(&x, 2), row(&z, 1));
        assert!(
            (grouped.eval(&a, &b) - ard.eval(&a, &b)).abs() <= 1e-12,
            "{stem}: eval"
        );
        assert_eq!(
            grouped.diag(x.as_ref()),
            ard.diag(x.as_ref()),
            "{stem}: diag"
        );
    }
}

#[test]
fn group_gradient_is_the_sum_of_the_ard_gradients_in_the_group() {
    let (x, z) = (inputs(9, 0.0), inputs(4, 0.2));
    let gw = weights(9, 4);
    let gs = weights(9, 9);
    let gs = &gs + gs.transpose();
    let gzx = weights(4, 9);
    for stem in STEMS {
        let (grouped, ard) = twins(stem, -0.1, &LN_L);
        let cross = |k: &Kernel| k.cross_grad_contract(x.as_ref(), z.as_ref(), gw.as_ref());
        assert_close(
            &cross(&grouped),
            &summed_over_groups(&cross(&ard)),
            1e-12,
            stem,
        );
        let sym = |k: &Kernel| k.gram_grad_contract_symmetric(x.as_ref(), gs.as_ref(), None);
        assert_close(&sym(&grouped), &summed_over_groups(&sym(&ard)), 1e-12, stem);
        let adjoint = |k: &Kernel| {
            let kzx = k.cross(z.as_ref(), x.as_ref()).unwrap();
            k.cross_adjoint(z.as_ref(), x.as_ref(), kzx, &gzx)
        };
        let ((tg, dzg), (ta, dza)) = (adjoint(&grouped), adjoint(&ard));
        assert_close(&tg, &summed_over_groups(&ta), 1e-12, stem);
        assert!(max_abs_diff(&dzg, &dza) <= 1e-12, "{stem}: ∂/∂Z");
        let mut pointwise = Vec::new();
        let (a, b) = ((0..D).map(|t| x[(3, t)]).collect::<Vec<_>>(), vec![0.5; D]);
        grouped.eval_grad(&a, &b, &mut pointwise);
        let mut pointwise_ard = Vec::new();
        ard.eval_grad(&a, &b, &mut pointwise_ard);
        assert_close(&pointwise, &summed_over_groups(&pointwise_ard), 1e-12, stem);
    }
}

#[test]
fn group_gradient_matches_finite_differences() {
    let (x, z) = (inputs(9, 0.0), inputs(4, 0.2));
    let gw = weights(9, 4);
    for stem in ["se", "matern32"] {
        let (grouped, _) = twins(stem, 0.15, &LN_L);
        let value = |theta: &[f64]| {
            let mut k = grouped.clone();
            k.set_params(theta).unwrap();
            let c = k.cross(x.as_ref(), z.as_ref()).unwrap();
            (0..4)
                .flat_map(|j| (0..9).map(move |i| (i, j)))
                .map(|(i, j)| gw[(i, j)] * c[(i, j)])
                .sum::<f64>()
        };
        let analytic = grouped.cross_grad_contract(x.as_ref(), z.as_ref(), gw.as_ref());
        let tol = Tolerance::mixed(1e-6);
        assert_gradient_close(value, &grouped.params(), &analytic, 1e-6, tol, stem);
    }
}

#[test]
fn groups_must_cover_the_inputs() {
    assert!(Kernel::from_spec("se-groups(1,3,1,2)", D).is_ok());
    for d in [6, 8] {
        assert!(
            matches!(
                Kernel::from_spec("se-groups(1,3,1,2)", d),
                Err(pacgp::Error::InvalidSpec { .. })
            ),
            "groups of 7 inputs on {d}"
        );
    }
    assert_eq!(Kernel::groups_spec("se", &GROUPS), "se-groups(1,3,1,2)");
}

#[test]
fn model_files_keep_old_kernels_unchanged_and_round_trip_groups() {
    // An ungrouped kernel is written as before (no `groups` key), so old files read the same.
    let ard = Kernel::from_spec("se-ard", 3).unwrap();
    let text = serde_json::to_string(&ard).unwrap();
    assert!(!text.contains("groups"), "{text}");
    let (grouped, _) = twins("se", 0.0, &LN_L);
    let text = serde_json::to_string(&grouped).unwrap();
    assert!(text.contains(r#""groups":[1,3,1,2]"#), "{text}");
    let back: Kernel = serde_json::from_str(&text).unwrap();
    assert_eq!(back, grouped);
}
