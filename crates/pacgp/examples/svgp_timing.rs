//! Seconds per evaluation of the sparse variational classifier's objective + gradient on
//! synthetic data of `make_data.py`'s classification shape (D = 8; `benches/common`), for the
//! performance page's comparison with GPflow's full-batch step at the same N and M.
//!
//! `cargo run --release -p pacgp --example svgp_timing -- N M [REPEATS [BATCH]]` prints the
//! seconds of each evaluation (the first includes the pools' first touches) and the flop bound
//! (5·N·M² flops at 104 GFLOP/s, two cores' DGEMM peak); with BATCH, each evaluation is a
//! minibatch step's (`SvgpObjective::on_batch` on BATCH rows, the bound 5·BATCH·M² + 6·M³).

#[path = "../benches/common/mod.rs"]
mod common;

use std::time::Instant;

use faer::Mat;
use pacgp::optim::Objective;
use pacgp::svgp::point::Link;
use pacgp::svgp::{SvgpCriterion, SvgpObjective, WhitenedQ};

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    let args: Vec<usize> = std::env::args()
        .skip(1)
        .map(|a| a.parse().expect("N M [REPEATS] as whole numbers"))
        .collect();
    let (n, m) = (args[0], args[1]);
    let repeats = args.get(2).copied().unwrap_or(3);
    let batch = args.get(3).copied();
    let (x, y) = common::synth_clf(n, 8);
    let kernel = common::kernel();
    let z = Mat::from_fn(m, 8, |a, t| x[(a * 7 % n, t)]);
    let mut q = WhitenedQ::prior(m);
    q.mean.iter_mut().for_each(|v| *v = 0.1);
    (0..m).for_each(|j| q.sqrt[(j, j)] = 0.5);
    let obj = SvgpObjective::new(
        &kernel,
        x.as_ref(),
        &y,
        m,
        SvgpCriterion::Elbo(Link::Probit),
    )
    .unwrap();
    let p = obj.layout().pack(&kernel, z.as_ref(), &q);
    let (rows, m3) = match batch {
        Some(b) => (b, 6.0 * (m * m * m) as f64),
        None => (n, 0.0),
    };
    let step = batch.map(|b| obj.on_batch(x.subrows(0, b), &y[..b]).unwrap());
    let obj = step.as_ref().unwrap_or(&obj);
    let bound = (5.0 * rows as f64 * (m * m) as f64 + m3) / 104e9;
    println!("N = {n}, M = {m}, {rows} rows: flop bound {bound:.3} s per objective + gradient");
    for r in 0..repeats {
        let t = Instant::now();
        let (v, g) = obj.value_and_gradient(&p).unwrap();
        let s = t.elapsed().as_secs_f64();
        println!(
            "evaluation {r}: {s:.3} s ({:.2}× the bound), value {v:.6}, |g| {:.3e}",
            s / bound,
            g.iter().map(|g| g * g).sum::<f64>().sqrt()
        );
    }
}
