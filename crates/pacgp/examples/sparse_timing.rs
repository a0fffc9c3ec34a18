//! Timing of one sparse objective + gradient (VFE, FITC, kl-PAC-SGP at M = 500, D = 8; not
//! part of the library): `sparse_timing N REPS [busy]`. With `busy`, a busy loop in another
//! process (`sh -c 'while :; do :; done'`) holds one core for the whole run, as another user's
//! job would.
#[path = "../benches/common/mod.rs"]
mod common;

use common::{kernel, pac_sgp_settings, synth};
use faer::Mat;
use pacgp::objective::pac_sgp::PacSgpObjective;
use pacgp::optim::Objective;
use pacgp::regression::sparse::{NegSparseObjective, SparseMethod};
use std::time::Instant;

/// The allocator of the `pacgp` binary and the Python module (see the CLI's main.rs), so that
/// the timings are those users get.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    let raw: Vec<String> = std::env::args().skip(1).collect();
    let busy = raw.iter().any(|a| a == "busy");
    let args: Vec<usize> = raw
        .iter()
        .filter(|a| *a != "busy")
        .map(|a| a.parse().unwrap())
        .collect();
    let spinner = busy.then(|| {
        std::process::Command::new("sh")
            .args(["-c", "while :; do :; done"])
            .spawn()
            .expect("start the busy loop")
    });
    let n = args.first().copied().unwrap_or(8000);
    let reps = args.get(1).copied().unwrap_or(2);
    let m = 500;
    let k = kernel();
    let (x, y) = synth(n, 8);
    let z = Mat::from_fn(m, 8, |a, t| x[(a * 7 % n, t)]);
    let p = NegSparseObjective::pack(&k, 0.1, z.as_ref());
    for (name, method) in [("vfe", SparseMethod::Vfe), ("fitc", SparseMethod::Fitc)] {
        let o = NegSparseObjective::new(&k, method, x.as_ref(), &y, m);
        time_objective(name, n, reps, &o, &p, 6);
    }
    let b = pac_sgp_settings();
    let pac = PacSgpObjective::new(&k, x.as_ref(), &y, m, 1.0, b.loss, b.bound).unwrap();
    time_objective("pac-sgp", n, reps, &pac, &p, 8);
    if let Some(mut child) = spinner {
        child.kill().ok();
        child.wait().ok();
    }
}

/// Times `reps` evaluations of `objective`'s value and gradient at `p`, printing the value to
/// `digits` places; with `FD` set, also central differences (h = 1e-5) of three coordinates,
/// to be read against the printed gradient.
fn time_objective(
    name: &str,
    n: usize,
    reps: usize,
    objective: &impl Objective,
    p: &[f64],
    digits: usize,
) {
    for _ in 0..reps {
        let t = Instant::now();
        let (v, g) = objective.value_and_gradient(p).unwrap();
        println!(
            "{name} n={n} {:.3} s  value {v:.digits$} g0 {:.6} gz {:.6}",
            t.elapsed().as_secs_f64(),
            g[0],
            g[20]
        );
    }
    if std::env::var("FD").is_ok() {
        for idx in [0usize, 9, 20] {
            let h = 1e-5;
            let (mut pp, mut pm) = (p.to_vec(), p.to_vec());
            pp[idx] += h;
            pm[idx] -= h;
            let fd = (objective.value(&pp).unwrap() - objective.value(&pm).unwrap()) / (2.0 * h);
            println!("  fd[{idx}] = {fd:.digits$}");
        }
    }
}
