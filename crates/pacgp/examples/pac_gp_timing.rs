//! Timing of full kl-PAC-GP on boston (what `pacgp fit --method pac-gp --epsilon 3` does).
use pacgp::data::{self, CsvOptions};
use pacgp::spec::{FitOptions, MethodName};
use std::time::Instant;

fn main() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../data/boston-housing/boston.csv"
    );
    let opts = CsvOptions::default();
    let train = data::load_csv(path, &opts).unwrap();
    let spec = FitOptions {
        epsilon: Some(3.0),
        ..Default::default()
    }
    .check(MethodName::PacGp)
    .unwrap();
    for _ in 0..2 {
        let t = Instant::now();
        let m = pacgp::fit::fit(&spec, &train, None).unwrap();
        let r = m.report.optimiser.as_ref().unwrap();
        println!(
            "{:.3} s  bound {:.6}  iters {} evals {} term {:?}  opt value {:.8}",
            t.elapsed().as_secs_f64(),
            m.report.objective.unwrap(),
            r.iterations,
            r.evaluations,
            r.termination,
            r.value
        );
    }
}
