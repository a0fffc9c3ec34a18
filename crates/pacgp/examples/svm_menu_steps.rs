//! The certified SVM's default menu on a CSV, candidate by candidate: for each lengthscale
//! `{½, 1, 2}·√D` and C ∈ {0.1, 1, 10, 100} the bias-free SMO on `k + 1` (standardised
//! inputs, the menu's shared kernel rows), its steps, its support vectors and its
//! linear-response leave-one-out errors, then the twelve solves' time.
//!
//! ```text
//! cargo run --release -p pacgp --example svm_menu_steps -- DATA.csv [--drop a,b]
//! ```
#![allow(missing_docs)]

use std::time::Instant;

use pacgp::data::{load_csv_classification, CsvOptions, Standardizer};
use pacgp::kernel::Kernel;
use pacgp::loo::LooClassification;
use pacgp::plan::{default_slacks, svm_lengthscales, svm_prior_kernel};
use pacgp::svm::loo::svm_loo_margins;
use pacgp::svm::{KernelRows, SharedRows, SvmConfig};

/// The allocator of the `pacgp` binary and the Python module (see the CLI's main.rs).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let path = args
        .first()
        .ok_or("usage: svm_menu_steps DATA.csv [--drop a,b]")?;
    let drop_columns = match args.iter().position(|a| a == "--drop") {
        Some(i) => args
            .get(i + 1)
            .ok_or("--drop needs a value")?
            .split(',')
            .map(String::from)
            .collect(),
        None => vec![],
    };
    let opts = CsvOptions {
        drop_columns,
        ..Default::default()
    };
    let (data, _) = load_csv_classification(path, &opts)?;
    let x = Standardizer::fit(data.x.as_ref(), &data.feature_names)?.transform(data.x.as_ref())?;
    let y = &data.y;
    let start = Instant::now();
    for l in svm_lengthscales(x.ncols()) {
        let k = svm_prior_kernel(&Kernel::se_iso(l, 1.0));
        let shared = SharedRows::new(&k, x.as_ref())?;
        for slack in default_slacks(false) {
            let rows = shared.shifted(slack.diagonal_shift());
            let cfg = SvmConfig {
                slack,
                bias: false,
                ..Default::default()
            };
            let fit = pacgp::svm::solve(&rows, y, &cfg, None)?;
            let loo = svm_loo_margins(&fit, &rows as &dyn KernelRows, y)
                .map(|m| LooClassification::from_margins(m, 0).errors.to_string())
                .unwrap_or_else(|e| format!("failed ({e})"));
            println!(
                "l = {l:.3}, {slack:?}: {} steps, {} margin / {} bound SVs, LR-LOO errors {loo}",
                fit.report.iterations,
                fit.sets.margin_sv.len(),
                fit.sets.bound_sv.len()
            );
        }
    }
    println!(
        "twelve solves and their LOO: {:.1} ms",
        start.elapsed().as_secs_f64() * 1e3
    );
    Ok(())
}
