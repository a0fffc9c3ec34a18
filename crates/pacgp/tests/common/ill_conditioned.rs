//! `tests/fixtures/vfe_ill_conditioned.json` (gen_vfe_ill_conditioned.py): N = 2000, D = 4,
//! M = 50, σ_f² = e⁶, lengthscales ≈ e² and e^2.4 (cond(K_uu) ≈ 1.2e9 and 1e10); the VFE
//! bound, PAC-SGP's R_S and KL, and their gradients in extended precision by complex steps.

use faer::Mat;
use serde_json::Value;

/// One VFE reference point.
pub struct VfePoint {
    pub params: Vec<f64>,
    pub cond_kuu: f64,
    pub value: f64,
    pub gradient: Vec<f64>,
}

/// One PAC-SGP reference point.
pub struct PacPoint {
    pub params: Vec<f64>,
    pub alpha_s: f64,
    pub epsilon: f64,
    pub risk: f64,
    pub kl: f64,
    pub risk_gradient: Vec<f64>,
    pub kl_gradient: Vec<f64>,
}

/// The fixture's data and points.
pub struct Fixture {
    pub x: Mat<f64>,
    pub y: Vec<f64>,
    pub m: usize,
    pub vfe: Vec<VfePoint>,
    pub pac_sgp: Vec<PacPoint>,
}

fn num(v: &Value) -> f64 {
    match v {
        Value::String(s) => s.parse().unwrap(),
        v => v.as_f64().unwrap(),
    }
}

/// `f` of every element of the array `v`.
fn each<T>(v: &Value, f: impl FnMut(&Value) -> T) -> Vec<T> {
    v.as_array().unwrap().iter().map(f).collect()
}

fn nums(v: &Value) -> Vec<f64> {
    each(v, num)
}

/// The fixture, parsed.
pub fn load() -> Fixture {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/vfe_ill_conditioned.json"
    );
    let f: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let rows = each(&f["x"], nums);
    let x = Mat::from_fn(rows.len(), rows[0].len(), |i, j| rows[i][j]);
    let vfe = each(&f["points"], |p| VfePoint {
        params: nums(&p["params"]),
        cond_kuu: num(&p["cond_kuu"]),
        value: num(&p["value"]),
        gradient: nums(&p["gradient"]),
    });
    let pac_sgp = each(&f["pac_sgp"], |p| PacPoint {
        params: nums(&p["params"]),
        alpha_s: num(&p["alpha_s"]),
        epsilon: num(&p["epsilon"]),
        risk: num(&p["risk"]),
        kl: num(&p["kl"]),
        risk_gradient: nums(&p["risk_gradient"]),
        kl_gradient: nums(&p["kl_gradient"]),
    });
    Fixture {
        x,
        y: nums(&f["y"]),
        m: f["m"].as_u64().unwrap() as usize,
        vfe,
        pac_sgp,
    }
}

/// `‖got − want‖ / ‖want‖`.
pub fn rel_err(got: &[f64], want: &[f64]) -> f64 {
    let d: f64 = got.iter().zip(want).map(|(a, b)| (a - b) * (a - b)).sum();
    let w: f64 = want.iter().map(|v| v * v).sum();
    (d / w).sqrt()
}

/// cond(K_uu + jitter·I) from its eigenvalues (faer's symmetric eigensolver).
pub fn kuu_condition(kernel: &pacgp::kernel::Kernel, z: &Mat<f64>) -> f64 {
    let mut kuu = kernel.gram(z.as_ref()).unwrap();
    for i in 0..z.nrows() {
        kuu[(i, i)] += pacgp::regression::sparse::KUU_JITTER;
    }
    let ev = kuu.self_adjoint_eigenvalues(faer::Side::Lower).unwrap();
    ev[ev.len() - 1] / ev[0]
}
