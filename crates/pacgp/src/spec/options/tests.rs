//! Unit tests of `crate::spec::options`, in a file of their own beside the code.

use super::*;

fn opts() -> FitOptions {
    FitOptions::default()
}

#[test]
fn defaults_fill_each_method() {
    for (name, _) in MethodName::NAMES {
        let method: MethodName = name.parse().unwrap();
        let o = FitOptions {
            epsilon: (!method.is_classifier()).then_some(1.0),
            ..opts()
        };
        let spec = o.check(method).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(spec.method_name(), method);
        assert_eq!(spec.delta, DEFAULT_DELTA);
    }
}

#[test]
fn a_kernel_given_to_a_classifier_is_fitted_by_ml2_unless_select_says() {
    let with = |method, select| {
        FitOptions {
            kernel: Some("matern52".into()),
            select,
            ..opts()
        }
        .check(method)
    };
    for method in [MethodName::Laplace, MethodName::Ep, MethodName::Ivm] {
        let spec = with(method, None).unwrap();
        let Method::Classifier(c) = &spec.method else {
            panic!("{method}: not a classifier spec")
        };
        assert!(
            matches!(&c.hypers, ClassifierHypers::Grid { kernel } if kernel == "matern52"),
            "{method}: {c:?}"
        );
        assert_eq!(spec, with(method, Some(Selection::Ml2)).unwrap());
        let e = with(method, Some(Selection::Bound)).unwrap_err();
        assert_eq!(e.option, SpecOption::Kernel, "{e}");
    }
    let softmax = FitOptions {
        kernel: Some("matern52".into()),
        multiclass: Some(MultiClass::Softmax),
        ..opts()
    }
    .check(MethodName::Laplace)
    .unwrap();
    assert!(
        matches!(&softmax.method, Method::Softmax(SoftmaxSpec { hypers: ClassifierHypers::Grid { kernel } }) if kernel == "matern52"),
        "{softmax:?}"
    );
    // Mean field and SOGP have no ML-II: the kernel is refused, not a select never given.
    for method in [MethodName::MeanField, MethodName::Sogp] {
        let e = with(method, None).unwrap_err();
        assert_eq!(e.option, SpecOption::Kernel, "{e}");
        assert!(e.to_string().contains("laplace, ep and ivm"), "{e}");
    }
}

#[test]
fn leave_one_out_is_computed_where_the_model_has_one() {
    use crate::loo::LooMode;
    let check = |method, o: FitOptions| -> FitSpec { (*o.check(method).unwrap()).clone() };
    let eps = || FitOptions {
        epsilon: Some(1.0),
        ..opts()
    };
    let with_loo = [
        check(MethodName::Gpr, opts()),
        check(MethodName::PacSgp, eps()),
        check(MethodName::Laplace, opts()),
        check(MethodName::Svm, opts()),
        check(MethodName::Ep, opts()).into_one_vs_rest(),
    ];
    for spec in &with_loo {
        assert!(spec.has_leave_one_out(), "{spec:?}");
        let auto = spec.leave_one_out(LooRequest::Auto).unwrap();
        assert_eq!(auto, Some(LooMode::Approx));
        let exact = LooRequest::Mode(LooMode::Exact);
        assert_eq!(spec.leave_one_out(exact).unwrap(), Some(LooMode::Exact));
    }
    // pac-gpc's is its sites' cavities: the approximation, never refits.
    for spec in [
        check(MethodName::PacGpc, opts()),
        check(MethodName::PacGpc, opts()).into_one_vs_rest(),
    ] {
        assert!(spec.has_leave_one_out(), "{spec:?}");
        let auto = spec.leave_one_out(LooRequest::Auto).unwrap();
        assert_eq!(auto, Some(LooMode::Approx));
        for mode in [LooMode::Exact, LooMode::Both] {
            let e = spec.leave_one_out(LooRequest::Mode(mode)).unwrap_err();
            assert!(e.to_string().contains("cavities"), "{e}");
        }
    }
    // svgp's and pac-svgp's are their rows' sites removed from q(u), softmax's its rows'
    // K-dimensional sites removed: the approximation only.
    let softmax = FitOptions {
        multiclass: Some(MultiClass::Softmax),
        ..opts()
    };
    for (method, o, why) in [
        (MethodName::Svgp, opts(), "removed from q(u)"),
        (MethodName::PacSvgp, opts(), "removed from q(u)"),
        (MethodName::Laplace, softmax, "mode again"),
    ] {
        let spec = check(method, o);
        assert_eq!(
            spec.leave_one_out(LooRequest::Auto).unwrap(),
            Some(LooMode::Approx)
        );
        let e = spec
            .leave_one_out(LooRequest::Mode(LooMode::Exact))
            .unwrap_err();
        assert!(e.to_string().contains(why), "{e}");
    }
    let split = || Some(SplitFraction::Menu);
    let without = [
        check(
            MethodName::PacSvgp,
            FitOptions {
                prior: split(),
                ..opts()
            },
        ),
        check(
            MethodName::PacGp,
            FitOptions {
                prior: split(),
                ..eps()
            },
        ),
        check(
            MethodName::PacSgp,
            FitOptions {
                prior: split(),
                ..eps()
            },
        ),
        check(
            MethodName::Laplace,
            FitOptions {
                prior: split(),
                ..opts()
            },
        ),
    ];
    for spec in &without {
        assert!(!spec.has_leave_one_out(), "{spec:?}");
        assert_eq!(spec.leave_one_out(LooRequest::Auto).unwrap(), None);
        assert_eq!(spec.leave_one_out(LooRequest::None).unwrap(), None);
        let e = spec
            .leave_one_out(LooRequest::Mode(LooMode::Approx))
            .unwrap_err();
        assert!(
            matches!(e, crate::Error::NoLeaveOneOut { .. }),
            "{spec:?}: {e}"
        );
    }
}

#[test]
fn options_that_do_not_apply_are_refused_by_name() {
    let e = FitOptions {
        epsilon: Some(1.0),
        ..opts()
    }
    .check(MethodName::Laplace)
    .unwrap_err();
    assert_eq!(e.option, SpecOption::Epsilon);
    assert!(
        matches!(e.problem, SpecProblem::NotApplicable { .. }),
        "{e}"
    );
    let e = FitOptions {
        kappa: Some(0.1),
        ..opts()
    }
    .check(MethodName::Ep)
    .unwrap_err();
    assert_eq!(e.option, SpecOption::Kappa);
    let e = FitOptions {
        epsilon: Some(1.0),
        restarts: Some(2),
        ..opts()
    }
    .check(MethodName::PacGp)
    .unwrap_err();
    assert_eq!(e.option, SpecOption::Restarts);
}

#[test]
fn ranges_are_checked_before_any_data() {
    let e = FitOptions {
        epsilon: Some(-1.0),
        ..opts()
    }
    .check(MethodName::PacGp)
    .unwrap_err();
    assert_eq!(e.option, SpecOption::Epsilon);
    assert!(e.to_string().contains("-1"), "{e}");
    let e = FitOptions {
        epsilon: Some(1.0),
        delta: Some(1.5),
        prior: Some(SplitFraction::Menu),
        ..opts()
    }
    .check(MethodName::PacGp)
    .unwrap_err();
    assert_eq!(e.option, SpecOption::Delta);
    let e = FitOptions {
        lengthscale: Some(0.0),
        ..opts()
    }
    .check(MethodName::Svm)
    .unwrap_err();
    assert_eq!(e.option, SpecOption::Lengthscale);
    let e = FitOptions {
        kernel: Some("se+".into()),
        ..opts()
    }
    .check(MethodName::Gpr)
    .unwrap_err();
    assert_eq!(e.option, SpecOption::Kernel);
}

#[test]
fn missing_and_conflicting_options() {
    let e = opts().check(MethodName::PacSgp).unwrap_err();
    assert!(matches!(e.problem, SpecProblem::Missing { .. }));
    let e = FitOptions {
        epsilon: Some(1.0),
        prior: Some(SplitFraction::Menu),
        hyper_prior: Some(HyperPriorName::Gaussian),
        ..opts()
    }
    .check(MethodName::PacGp)
    .unwrap_err();
    assert!(matches!(e.problem, SpecProblem::Conflict { .. }));
    let e = FitOptions {
        epsilon: Some(1.0),
        prior: Some(SplitFraction::Menu),
        ..opts()
    }
    .check(MethodName::PacGpSqrt)
    .unwrap_err();
    assert_eq!(e.option, SpecOption::Prior);
    let e = FitOptions {
        prior: Some(SplitFraction::Menu),
        likelihood: Some(LikelihoodName::Logistic),
        ..opts()
    }
    .check(MethodName::Laplace)
    .unwrap_err();
    assert_eq!(e.option, SpecOption::Likelihood);
}

#[test]
fn a_spec_survives_its_file_form() {
    let spec = FitOptions {
        prior: Some(SplitFraction::Fixed(0.4)),
        bound: Some(BoundName::Catoni),
        prior_scale: Some(PriorScale::Auto),
        both_directions: Some(true),
        ..opts()
    }
    .check(MethodName::PacGpc)
    .unwrap();
    let text = serde_json::to_string(&spec).unwrap();
    let back: CheckedFitSpec = serde_json::from_str(&text).unwrap();
    assert_eq!(back, spec);
    // A file whose spec is out of range is refused on reading.
    let bad = text.replace("\"delta\":0.01", "\"delta\":2.0");
    assert!(serde_json::from_str::<CheckedFitSpec>(&bad).is_err());
    // An option that belongs to no variant is refused too.
    let bad = text.replace(
        "\"both_directions\":true",
        "\"both_directions\":true,\"x\":1",
    );
    assert!(serde_json::from_str::<CheckedFitSpec>(&bad).is_err());
}

#[test]
fn basis_sizes_resolve_against_the_sample() {
    let spec = FitOptions {
        epsilon: Some(1.0),
        ..opts()
    }
    .check(MethodName::Vfe)
    .unwrap();
    let (s, notes) = spec.for_sample(40).unwrap();
    assert!(matches!(&s.method, Method::Sparse(p) if p.inducing == Some(40)));
    assert_eq!(notes.len(), 1);
    let spec = FitOptions {
        inducing: Some(50),
        ..opts()
    }
    .check(MethodName::Fitc)
    .unwrap();
    let e = spec.for_sample(40).unwrap_err();
    assert_eq!(e.option, SpecOption::Inducing);
    assert!(e.to_string().contains("N = 40"), "{e}");
}

/// A one-vs-rest spec's binary method answers for it through its home, but is itself one
/// binary method: a one-vs-rest of a one-vs-rest (possible in a hand-written model file) is
/// refused, as is a split prior inside one.
#[test]
fn one_vs_rest_members_are_binary_methods_without_a_split_prior() {
    let svm = opts().check(MethodName::Svm).unwrap();
    let ovr = (*svm.clone()).clone().into_one_vs_rest();
    assert!(ovr.clone().check().is_ok());
    assert_eq!(ovr.method.home().name(), MethodName::Svm);
    let nested = ovr.into_one_vs_rest().check().unwrap_err();
    assert_eq!(nested.option, SpecOption::MultiClass, "{nested}");
    let split = FitOptions {
        prior: Some(SplitFraction::Fixed(0.5)),
        ..opts()
    }
    .check(MethodName::PacSvgp)
    .unwrap();
    let e = (*split).clone().into_one_vs_rest().check().unwrap_err();
    assert_eq!(e.option, SpecOption::Prior, "{e}");
    // jackknife+ on a split prior's posterior is a conflict with the prior, for svgp too.
    let with_jackknife = FitSpec {
        intervals: Some(IntervalSpec {
            method: IntervalMethod::JackknifePlus,
            score: IntervalScore::Lac,
        }),
        ..(*split).clone()
    };
    let e = with_jackknife.clone().check().unwrap_err();
    assert_eq!(e.option, SpecOption::Intervals, "{e}");
    assert!(e.to_string().contains("split-conformal"), "{e}");
    // Inside one-vs-rest the split prior itself is the error, before any interval rule.
    let e = with_jackknife.into_one_vs_rest().check().unwrap_err();
    assert_eq!(e.option, SpecOption::Prior, "{e}");
}
