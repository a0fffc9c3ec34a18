//! The SVM of seed 001 §17.4–17.7: SMO reproduces libsvm's dual (fixture written by
//! `tests/fixtures/gen_svm_libsvm.py` through scikit-learn's SVC), the parallel kernel
//! Adatron and SMO agree on α, b and W for both slack penalties with and without bias, the
//! Kuhn–Tucker conditions hold, a tiny kernel cache and shrinking do not change the answer,
//! and bad input gives typed errors.

mod common;

use faer::Mat;
use pacgp::error::Error;
use pacgp::inference::ConvergenceStatus;
use pacgp::kernel::Kernel;
use pacgp::svm::loo::svm_exact_loo_gram;
use pacgp::svm::{svm, svm_precomputed, Slack, SvmConfig, SvmFit, SvmSolver};

struct Case {
    slack: Slack,
    alpha: Vec<f64>,
    b: f64,
    w: f64,
    loo: Vec<f64>,
}

fn fixture() -> (Mat<f64>, Vec<f64>, f64, Vec<f64>, Vec<Case>) {
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/svm_libsvm.json");
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let xs = v["x"].as_array().unwrap();
    let x = Mat::from_fn(xs.len(), 2, |i, j| xs[i][j].as_f64().unwrap());
    let nums = |a: &serde_json::Value| -> Vec<f64> {
        a.as_array()
            .unwrap()
            .iter()
            .map(|t| t.as_f64().unwrap())
            .collect()
    };
    let cases = v["cases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| Case {
            slack: if c["slack"] == "linear" {
                Slack::Linear {
                    c: c["c"].as_f64().unwrap(),
                }
            } else {
                Slack::Quadratic {
                    v: c["v"].as_f64().unwrap(),
                }
            },
            alpha: nums(&c["alpha"]),
            b: c["b"].as_f64().unwrap(),
            w: c["dual_objective"].as_f64().unwrap(),
            loo: nums(&c["loo_margins"]),
        })
        .collect();
    (
        x,
        nums(&v["y"]),
        v["lengthscale"].as_f64().unwrap(),
        nums(&v["k_row0"]),
        cases,
    )
}

fn tight(slack: Slack, bias: bool, solver: SvmSolver) -> SvmConfig {
    SvmConfig {
        slack,
        bias,
        solver,
        tol: match solver {
            SvmSolver::Smo => 1e-11,
            SvmSolver::Adatron => 1e-22,
        },
        max_iter: 5_000_000,
        ..Default::default()
    }
}

/// libsvm (scikit-learn's SVC, tol 1e-12) on the same precomputed kernel: W to 1e-6
/// relative (it agrees to ~1e-13). b to 1e-5 absolute and α to 1e-4 relative: libsvm
/// caches `Q` in single precision (`Qfloat`), which moves its b by ~2e-6 and α by ~2e-5 at
/// C = 10, while W, stationary at the optimum, moves only at second order.
#[test]
fn smo_reproduces_libsvm() {
    let (x, y, l, row0, cases) = fixture();
    let k = Kernel::se_iso(l, 1.0);
    let gram = k.gram(x.as_ref()).unwrap();
    for (j, r) in row0.iter().enumerate() {
        assert!(
            (gram[(0, j)] - r).abs() < 1e-14,
            "kernel convention at (0, {j})"
        );
    }
    for case in &cases {
        for solver in [SvmSolver::Smo, SvmSolver::Adatron] {
            let cfg = tight(case.slack, true, solver);
            for fit in [
                svm(&k, x.as_ref(), &y, &cfg).unwrap(),
                svm_precomputed(gram.as_ref(), &y, &cfg).unwrap(),
            ] {
                assert_eq!(fit.report.status, ConvergenceStatus::Converged);
                let rel = (fit.dual_objective - case.w).abs() / case.w.abs();
                eprintln!(
                    "{:?} {solver:?}: W = {} (libsvm {}), rel {rel:.1e}, b = {} ({}), {} iterations",
                    case.slack, fit.dual_objective, case.w, fit.b, case.b, fit.report.iterations
                );
                assert!(rel < 1e-6, "{:?} {solver:?}: W rel {rel}", case.slack);
                assert!((fit.b - case.b).abs() < 1e-5, "b {} vs {}", fit.b, case.b);
                for i in 0..y.len() {
                    let (a, b) = (fit.alpha[i], case.alpha[i]);
                    assert!((a - b).abs() < 1e-4 * b.abs().max(1.0), "α_{i}: {a} vs {b}");
                }
            }
        }
    }
}

/// Exact LOO by warm-started refits (only SVs refitted) against libsvm's N cold refits:
/// the same margins `y_l f^{\l}(x_l)` to 1e-4 (libsvm's single-precision `Q` again), the
/// same decisions.
#[test]
fn exact_loo_reproduces_libsvm_refits() {
    let (x, y, l, _, cases) = fixture();
    let k = Kernel::se_iso(l, 1.0);
    let gram = k.gram(x.as_ref()).unwrap();
    for case in &cases {
        let cfg = tight(case.slack, true, SvmSolver::Smo);
        let fit = svm_precomputed(gram.as_ref(), &y, &cfg).unwrap();
        let e = svm_exact_loo_gram(gram.as_ref(), &y, &cfg, &fit).unwrap();
        let mut worst = 0.0f64;
        for i in 0..y.len() {
            let (a, b) = (e.loo.loo_margins[i], case.loo[i]);
            worst = worst.max((a - b).abs());
            assert!(
                (a - b).abs() < 1e-4 * b.abs().max(1.0),
                "{:?} LOO margin {i}: {a} vs {b}",
                case.slack
            );
            assert_eq!(a > 0.0, b > 0.0);
        }
        eprintln!(
            "{:?}: exact LOO {} errors, worst margin gap to libsvm {worst:.1e}",
            case.slack, e.loo.errors
        );
    }
}

/// Kuhn–Tucker conditions written out from the kernel: `y_i(f_i + b) ≥ 1` at α = 0, `= 1` on
/// margin SVs, `≤ 1` at α = C; `Σ y α = 0` with a bias; W recomputed by hand.
fn check_kkt(fit: &SvmFit, k: &Mat<f64>, y: &[f64], tol: f64) {
    let n = y.len();
    let v = fit.slack.diagonal_shift();
    let c = fit.slack.upper();
    let mut w = fit.alpha.iter().sum::<f64>();
    for i in 0..n {
        let f: f64 = (0..n)
            .map(|j| (k[(i, j)] + if i == j { v } else { 0.0 }) * y[j] * fit.alpha[j])
            .sum();
        w -= 0.5 * fit.alpha[i] * y[i] * f;
        let m = y[i] * (f + fit.b);
        assert!((m - fit.margins[i]).abs() < 1e-9, "margin {i}");
        let a = fit.alpha[i];
        if a <= 0.0 {
            assert!(m >= 1.0 - tol, "non-SV {i}: margin {m}");
        } else if a >= c {
            assert!(m <= 1.0 + tol, "bound SV {i}: margin {m}");
        } else {
            assert!((m - 1.0).abs() < tol, "margin SV {i}: margin {m}");
        }
        // decision value: noise-free f + b
        assert!((fit.decision[i] - (f - v * y[i] * a + fit.b)).abs() < 1e-9);
    }
    assert!((w - fit.dual_objective).abs() < 1e-9 * w.abs().max(1.0));
    if fit.bias {
        let s: f64 = (0..n).map(|i| y[i] * fit.alpha[i]).sum();
        assert!(s.abs() < 1e-9, "Σ y α = {s}");
    } else {
        assert_eq!(fit.b, 0.0);
    }
    let total = fit.sets.non_sv.len() + fit.sets.margin_sv.len() + fit.sets.bound_sv.len();
    assert_eq!(total, n);
}

/// Adatron and SMO agree on α (1e-6), b (1e-6) and W (1e-9 relative) for linear and
/// quadratic slack, with and without bias, on the toy problem and on Wisconsin rows.
#[test]
fn adatron_and_smo_agree_and_satisfy_kkt() {
    // (a shift so that no row repeats: with duplicate rows α is not unique)
    let (x, y) = common::toy_shifted(70, 0.01);
    let k = Kernel::se_iso(0.8, 1.0);
    let gram = k.gram(x.as_ref()).unwrap();
    for slack in [
        Slack::Linear { c: 0.7 },
        Slack::Linear { c: 5.0 },
        Slack::Quadratic { v: 0.4 },
    ] {
        for bias in [true, false] {
            let s = svm(&k, x.as_ref(), &y, &tight(slack, bias, SvmSolver::Smo)).unwrap();
            for momentum in [false, true] {
                let ac = SvmConfig {
                    adatron_momentum: momentum,
                    ..tight(slack, bias, SvmSolver::Adatron)
                };
                let a = svm(&k, x.as_ref(), &y, &ac).unwrap();
                assert_eq!(a.report.status, ConvergenceStatus::Converged);
                assert_eq!(s.report.status, ConvergenceStatus::Converged);
                eprintln!(
                "{slack:?} bias {bias} momentum {momentum}: W {} / {}, b {} / {}, sweeps {}, SMO steps {}, sets {}/{}/{}",
                a.dual_objective,
                s.dual_objective,
                a.b,
                s.b,
                a.report.iterations,
                s.report.iterations,
                s.sets.non_sv.len(),
                s.sets.margin_sv.len(),
                s.sets.bound_sv.len()
            );
                let rel = (a.dual_objective - s.dual_objective).abs() / s.dual_objective;
                assert!(rel < 1e-9, "{slack:?} bias {bias}: W rel {rel}");
                assert!((a.b - s.b).abs() < 1e-6, "b {} vs {}", a.b, s.b);
                for i in 0..y.len() {
                    assert!((a.alpha[i] - s.alpha[i]).abs() < 1e-6, "α_{i}");
                }
                check_kkt(&s, &gram, &y, 1e-8);
                check_kkt(&a, &gram, &y, 1e-6);
                assert!(s.sets.margin_sv.len() > 3);
                if let Slack::Quadratic { .. } = slack {
                    assert!(s.sets.bound_sv.is_empty());
                }
            }
        }
    }
}

/// A cache of a few rows (everything recomputed and evicted) and shrinking on or off give
/// the same solution as a cache that holds K.
#[test]
fn small_cache_and_shrinking_do_not_change_the_solution() {
    let (x, y) = common::toy_shifted(300, 0.003);
    let k = Kernel::se_iso(0.6, 1.0);
    for bias in [true, false] {
        let base = tight(Slack::Linear { c: 3.0 }, bias, SvmSolver::Smo);
        let full = svm(&k, x.as_ref(), &y, &base).unwrap();
        for (cache_mb, shrinking) in [(0.0, true), (0.01, false), (0.01, true)] {
            let cfg = SvmConfig {
                cache_mb,
                shrinking,
                ..base
            };
            let f = svm(&k, x.as_ref(), &y, &cfg).unwrap();
            assert!((f.dual_objective - full.dual_objective).abs() < 1e-9 * full.dual_objective);
            for i in 0..y.len() {
                assert!((f.alpha[i] - full.alpha[i]).abs() < 1e-6);
            }
        }
    }
}

#[test]
fn budget_is_reported_not_hidden() {
    let (x, y) = common::toy(40);
    let k = Kernel::se_iso(0.8, 1.0);
    for solver in [SvmSolver::Smo, SvmSolver::Adatron] {
        let cfg = SvmConfig {
            max_iter: 2,
            solver,
            tol: 1e-12,
            ..Default::default()
        };
        let f = svm(&k, x.as_ref(), &y, &cfg).unwrap();
        assert_eq!(f.report.status, ConvergenceStatus::MaxIterations);
        assert_eq!(f.report.iterations, 2);
    }
}

#[test]
fn bad_input_gives_typed_errors() {
    let (x, y) = common::toy(12);
    let k = Kernel::se_iso(1.0, 1.0);
    let cfg = SvmConfig::default();
    for c in [0.0, -1.0, f64::NAN, f64::INFINITY] {
        let bad = SvmConfig {
            slack: Slack::Linear { c },
            ..cfg
        };
        assert!(matches!(
            svm(&k, x.as_ref(), &y, &bad),
            Err(Error::InvalidParameter { .. })
        ));
    }
    let bad = SvmConfig {
        slack: Slack::Quadratic { v: 0.0 },
        ..cfg
    };
    assert!(matches!(
        svm(&k, x.as_ref(), &y, &bad),
        Err(Error::InvalidParameter { .. })
    ));
    for t in [0.0, -1.0, f64::NAN] {
        let bad = SvmConfig { tol: t, ..cfg };
        assert!(svm(&k, x.as_ref(), &y, &bad).is_err());
    }
    assert!(matches!(
        svm(&k, x.as_ref(), &[1.0; 12], &cfg),
        Err(Error::NotBinary { .. })
    ));
    let mut y3 = y.clone();
    y3[0] = 0.5;
    assert!(svm(&k, x.as_ref(), &y3, &cfg).is_err());
    let mut xb = x.clone();
    xb[(2, 1)] = f64::NAN;
    assert!(matches!(
        svm(&k, xb.as_ref(), &y, &cfg),
        Err(Error::NonFinite { .. })
    ));
    assert!(matches!(
        svm(&k, x.as_ref(), &y[..10], &cfg),
        Err(Error::ShapeMismatch { .. })
    ));
    let gram = k.gram(x.as_ref()).unwrap();
    assert!(matches!(
        svm_precomputed(gram.as_ref(), &y[..10], &cfg),
        Err(Error::ShapeMismatch { .. })
    ));
    let wrong_dim = Kernel::se_ard(&[1.0, 1.0, 1.0], 1.0);
    assert!(svm(&wrong_dim, x.as_ref(), &y, &cfg).is_err());
}

/// With a large C the Adatron's projected steps stay large long after W has settled; it stops
/// on the relative duality gap, at a W within that gap of SMO's (P − W bounds W* − W), and
/// a sweep budget that runs out is reported as such with a note.
#[test]
fn adatron_stops_on_the_duality_gap_and_reports_its_cap() {
    let (x, y) = common::toy_shifted(70, 0.01);
    let k = Kernel::se_iso(0.8, 1.0);
    let slack = Slack::Linear { c: 5.0 };
    let s = svm(&k, x.as_ref(), &y, &tight(slack, false, SvmSolver::Smo)).unwrap();
    let cfg = SvmConfig {
        slack,
        bias: false,
        solver: SvmSolver::Adatron,
        tol: 1e-3,
        ..Default::default()
    };
    let a = svm(&k, x.as_ref(), &y, &cfg).unwrap();
    assert_eq!(
        a.report.status,
        ConvergenceStatus::Converged,
        "{:?}",
        a.report
    );
    let rel = (s.dual_objective - a.dual_objective) / s.dual_objective;
    eprintln!(
        "W {} (SMO {}), rel {rel:.2e}, {} sweeps",
        a.dual_objective, s.dual_objective, a.report.iterations
    );
    assert!((-1e-9..1e-3).contains(&rel), "W rel {rel}");

    let capped = svm(
        &k,
        x.as_ref(),
        &y,
        &SvmConfig {
            tol: 1e-12,
            max_iter: 50,
            ..cfg
        },
    )
    .unwrap();
    assert_eq!(capped.report.status, ConvergenceStatus::MaxIterations);
    assert_eq!(capped.report.iterations, 50);
    assert!(
        capped
            .report
            .notes
            .iter()
            .any(|n| n.contains("cap of 50 sweeps")),
        "{:?}",
        capped.report.notes
    );
}
