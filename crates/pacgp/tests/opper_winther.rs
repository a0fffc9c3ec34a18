//! Seed 001 Table 17.1 and Figure 17.2 (experiments::opper_winther): the SVM's LOO and
//! 10-fold CV errors against the seed's 0.0261 and 0.0307 (±0.01), the linear-response LOO
//! within one example of exact, and the mean-field row.

mod common;

use pacgp::experiments::opper_winther::{run, OpperWintherConfig, OpperWintherResult};
use pacgp::svm::SvmSolver;

fn print(r: &OpperWintherResult) {
    for row in &r.table {
        eprintln!(
            "{:<18} l = {:.3} v = {} κ = {}: exact LOO {:?}, LR-LOO {:.4}, 10-fold CV {:.4} ({}), \
             {:.3} s with LOO, {:.3} s without, exact LOO {:?} s, {} iterations, LOO matrix {}",
            row.algorithm,
            row.lengthscale,
            row.input_noise,
            row.kappa,
            row.loo_exact,
            row.loo_approx,
            row.cv_error,
            row.cv_errors,
            row.seconds_with_loo,
            row.seconds_without_loo,
            row.seconds_exact_loo,
            row.iterations,
            row.loo_matrix_size
        );
    }
}

fn check_svm(r: &OpperWintherResult) {
    for row in r.table.iter().filter(|r| r.algorithm.starts_with("SVM")) {
        assert!((row.loo_approx - 0.0261).abs() <= 0.01, "{row:?}");
        assert!((row.cv_error - 0.0307).abs() <= 0.01, "{row:?}");
        if let Some(e) = row.loo_exact {
            let diff = ((e - row.loo_approx) * row.n_train as f64).abs().round();
            assert!(diff <= 1.0, "approx {} vs exact {e}", row.loo_approx);
        }
    }
    assert_eq!(r.figure.len(), r.table[0].n_train);
    assert!(r
        .figure
        .windows(2)
        .all(|w| w[0].alpha_svm <= w[1].alpha_svm));
}

/// At the seed's stated hyperparameters (l = √30, i.e. exp(−(0.15/9)r²); v = 1.3; κ = 0),
/// no grid, no exact LOO: the SVM's LR-LOO and 10-fold CV errors within ±0.01 of the seed's.
#[test]
fn table_17_1_at_the_seeds_hyperparameters() {
    let cfg = OpperWintherConfig {
        lengthscales: vec![30f64.sqrt()],
        input_noise: vec![1.3],
        kappas: vec![0.0],
        exact_loo: false,
        ..Default::default()
    };
    let r = run(&common::breast_cancer(), &cfg).unwrap();
    print(&r);
    check_svm(&r);
    // The Adatron with momentum: same errors, fewer sweeps.
    let fast = OpperWintherConfig {
        adatron_momentum: true,
        ..cfg
    };
    let m = run(&common::breast_cancer(), &fast).unwrap();
    print(&m);
    assert_eq!(m.table[0].cv_errors, r.table[0].cv_errors);
    assert!((m.table[0].loo_approx - r.table[0].loo_approx).abs() < 1e-12);
    assert!(m.table[0].iterations < r.table[0].iterations);
}

/// The full protocol: grids for both algorithms on the 614-example training fold, exact
/// LOO by refits for both (198 s in the dev profile, most of it the Adatron's and mean
/// field's refits; run with `cargo test -p pacgp --test opper_winther -- --ignored
/// --nocapture`). Measured: SVM l = 3, v = 1.3, LR-LOO 18/614 = 0.0293 = exact, 10-fold CV
/// 19/683 = 0.0278 (seed 0.0261, 0.0307); mean field 0.0293 = exact (seed 0.0293).
#[test]
#[ignore]
fn table_17_1_full() {
    for solver in [SvmSolver::Adatron, SvmSolver::Smo] {
        let cfg = OpperWintherConfig {
            svm_solver: solver,
            ..Default::default()
        };
        let r = run(&common::breast_cancer(), &cfg).unwrap();
        print(&r);
        check_svm(&r);
        let mf = r.table.last().unwrap();
        let e = mf.loo_exact.unwrap();
        assert!(((e - mf.loo_approx) * mf.n_train as f64).abs().round() <= 1.0);
    }
}
