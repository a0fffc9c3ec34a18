//! The words of a fit's options: every option value a user types (`pac-gp`, `kmeans`,
//! `split:auto`, ...) is parsed here and only here; the CLI's argument parser and the Python
//! module both call these `FromStr` impls and list [`Named::NAMES`] in their help.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::bounds::ConfidenceTerm;
use crate::certificate::GibbsPredictor;
use crate::conformal::{
    IntervalMethod, IntervalScore, DEFAULT_CALIBRATION_SPLIT, DEFAULT_CV_FOLDS,
};
use crate::data::{MissingPolicy, UnknownCategory};
use crate::loo::LooMode;
use crate::objective::gp_split::SplitFraction;
use crate::regression::inducing_init::InducingInit;
use crate::svm::SvmSolver;
use crate::vocabulary::named;
pub use crate::vocabulary::{one_of, BadValue, LikelihoodName, MethodName, Named};

named!(MissingPolicy {
    MissingPolicy::Reject => "error": "a missing cell is an error naming its line and column (default)",
    MissingPolicy::DropRows => "drop": "leave out rows with a missing cell in a column used",
    MissingPolicy::Zero => "zero": "read a missing input as 0 (all zeros for a category)",
    MissingPolicy::Mean => "mean": "fill a missing input with the training mean of its column",
});

named!(UnknownCategory {
    UnknownCategory::Error => "error": "an error naming the column and the value",
    UnknownCategory::Ignore => "ignore": "an all-zero code",
});

/// How a classifier learns more than two classes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum MultiClass {
    /// K binary classifiers, class k against the rest, certified together.
    OneVsRest,
    /// The multi-class Laplace approximation with the softmax likelihood (laplace only).
    Softmax,
}

named!(MultiClass {
    MultiClass::OneVsRest => "one-vs-rest": "K binary classifiers of the method, class k against the rest; the Gibbs classifier argmax_k f_k(x), its KL and prices summed over the classes (the default for more than two classes)",
    MultiClass::Softmax => "softmax": "laplace only: the multi-class Laplace approximation with the softmax likelihood (Rasmussen & Williams Alg. 3.3), one shared kernel; its coupled Gibbs risk is sampled and bounded at a share of δ",
});

/// How a classifier's kernel hyperparameters are chosen.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Selection {
    /// The lowest bound among nine SE kernels fixed in advance (`ln 9`).
    Bound,
    /// ML-II from the kernel, snapped onto the PAC grid (`T·ln 1201`).
    Ml2,
}

named!(Selection {
    Selection::Bound => "bound": "the lowest PAC-Bayes bound among nine isotropic SE kernels fixed in advance (penalty ln 9)",
    Selection::Ml2 => "ml2": "ML-II from the kernel inside the PAC grid's range, snapped onto the grid (penalty T·ln 1201)",
});

named!(InducingInit {
    InducingInit::KMeans => "kmeans": "Lloyd's k-means (20 iterations) from a seeded random subset of the training inputs",
    InducingInit::Subset => "subset": "a seeded random subset of the training inputs",
    InducingInit::Greedy => "greedy": "training inputs chosen by κ-greedy ΔR selection (T. Zhang, Algorithm 3)",
});

named!(SvmSolver {
    SvmSolver::Smo => "smo": "SMO with second-order working-set selection, shrinking and a kernel cache",
    SvmSolver::Adatron => "adatron": "the parallel kernel Adatron (Opper & Winther §17.7)",
});

/// The SVM's slack penalty, by name (its C or v is another option).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SlackKind {
    /// `C Σ ξ_i` (box `0 ≤ α ≤ C`).
    Linear,
    /// `Σ ξ_i²/(2v)` (v on the kernel's diagonal).
    Quadratic,
}

named!(SlackKind {
    SlackKind::Linear => "linear": "C Σ ξ_i (box 0 ≤ α ≤ C)",
    SlackKind::Quadratic => "quadratic": "Σ ξ_i²/(2v) (v on the kernel's diagonal, Opper & Winther eq. 17.16)",
});

/// A coarse prior over ln θ instead of the 0.01 grid.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HyperPriorName {
    /// Uniform over the coarse grid (`ln 49` per hyperparameter).
    Uniform,
    /// Discretised Gaussian over the coarse grid.
    Gaussian,
}

named!(HyperPriorName {
    HyperPriorName::Uniform => "uniform": "uniform over the coarse grid (step 0.25 on [−6, 6]; ln 49 per hyperparameter)",
    HyperPriorName::Gaussian => "gaussian": "discretised Gaussian over the coarse grid (centres 1 for ln ℓ, 0 otherwise, τ = 1.5)",
});

/// The confidence constant of a trained bound.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Xi {
    /// `ln(2√N/δ)` (Maurer; the PAC-GP paper's).
    Maurer,
    /// `ln(ξ(N)/δ)`, the exact ξ(N) Maurer bounds by 2√N.
    Sharp,
}

named!(Xi {
    Xi::Maurer => "maurer": "ln(2√N/δ) (Maurer; the PAC-GP paper's)",
    Xi::Sharp => "sharp": "ln(ξ(N)/δ), the exact constant Maurer bounds by 2√N (about 0.45 nats tighter)",
});

/// Which inequality a fit minimises or certifies with.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BoundName {
    /// `kl⁻¹(R_S, C)`.
    Kl,
    /// Pinsker's `R_S + √(C/2)` (pac-gp, pac-sgp).
    Sqrt,
    /// Catoni's bound at a λ fixed on part A of a split prior.
    Catoni,
}

named!(BoundName {
    BoundName::Kl => "kl": "the kl bound kl⁻¹(R_S, C)",
    BoundName::Sqrt => "sqrt": "the Pinsker form R_S + √(C/2) (pac-gp, pac-sgp)",
    BoundName::Catoni => "catoni": "Catoni's bound at a λ fixed on a nested split of part A (classifier split prior)",
});

/// The split prior's covariance scale t (`GP(μ_A, t·k_A)`).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PriorScale {
    /// A given t > 0.
    Fixed(f64),
    /// The best of 1, ½, ¼, ⅛, 1/16 on a nested split of part A (no charge).
    Auto,
}

impl FromStr for PriorScale {
    type Err = BadValue;
    fn from_str(s: &str) -> Result<Self, BadValue> {
        match s.trim() {
            "auto" => Ok(PriorScale::Auto),
            t => t
                .parse::<f64>()
                .map(PriorScale::Fixed)
                .map_err(|_| BadValue {
                    given: s.to_string(),
                    allowed: "auto or a positive number".into(),
                }),
        }
    }
}

impl fmt::Display for PriorScale {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PriorScale::Fixed(t) => write!(f, "{t}"),
            PriorScale::Auto => f.write_str("auto"),
        }
    }
}

/// The kernel structure of the classifier split prior's `P_A`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PriorKernel {
    /// The kernel option's structure.
    Kernel,
    /// SE iso or the kernel option's structure, chosen on a nested split of part A.
    Auto,
}

named!(PriorKernel {
    PriorKernel::Kernel => "kernel": "the kernel option's structure (default se-ard), θ by ML-II on part A",
    PriorKernel::Auto => "auto": "SE iso or the kernel option's structure, whichever a nested split of part A predicts the lower certificate for (no charge)",
});

named!(GibbsPredictor {
    GibbsPredictor::Latent => "latent": "sign(f(x) + b), f ~ Q",
    GibbsPredictor::Noisy => "noisy": "sign(f(x) + ξ + b), f ~ Q, ξ the probit's label noise",
});

named!(LooMode {
    LooMode::Approx => "approx": "the fast approximation (closed form, cavities or linear response)",
    LooMode::Exact => "exact": "exact leave-one-out by N refits",
    LooMode::Both => "both": "both",
});

/// What `certify` is asked for beside the bound: the fast leave-one-out where the model has
/// one, a given mode, or no leave-one-out.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum LooRequest {
    /// The fast approximation where the model has a leave-one-out estimate, none otherwise
    /// ([`crate::spec::FitSpec::has_leave_one_out`]).
    #[default]
    Auto,
    /// A leave-one-out estimate of this mode (an error for a model that has none).
    Mode(LooMode),
    /// No leave-one-out estimate.
    None,
}

named!(LooRequest {
    LooRequest::Auto => "auto": "the fast approximation where the model has a leave-one-out estimate, none where it has not (a split prior); pac-gpc's is its sites' cavities, svgp's and pac-svgp's their sites removed from q(u): the default",
    LooRequest::Mode(LooMode::Approx) => "approx": "the fast approximation (closed form, cavities or linear response)",
    LooRequest::Mode(LooMode::Exact) => "exact": "exact leave-one-out by N refits",
    LooRequest::Mode(LooMode::Both) => "both": "both",
    LooRequest::None => "none": "no leave-one-out estimate",
});

/// The words of an interval method, with their help.
pub const INTERVAL_METHODS: [(&str, &str); 3] = [
    (
        "jackknife+",
        "jackknife+ from the closed-form leave-one-out, no refits (gpr, pac-gp, vfe, fitc, dtc, pac-sgp, greedy-sparse); coverage ≥ 1 − 2α",
    ),
    (
        "cv+[:K]",
        "CV+: the fit refitted without each of K folds (default 10); coverage ≥ 1 − 2α − O(K/N)",
    ),
    (
        "split-conformal[:F]",
        "split conformal: the fit refitted on a seeded fraction F of the sample (default 0.5), calibrated on the rest; coverage ≥ 1 − α",
    ),
];

/// `jackknife+`, `cv+`, `cv+:K`, `split-conformal` or `split-conformal:F` (ranges are the
/// spec's check).
impl FromStr for IntervalMethod {
    type Err = BadValue;
    fn from_str(s: &str) -> Result<Self, BadValue> {
        let bad = || BadValue {
            given: s.to_string(),
            allowed: "jackknife+, cv+, cv+:K (K folds), split-conformal or split-conformal:F \
                      (a fraction F for the proper training part)"
                .into(),
        };
        let key = s.trim().to_ascii_lowercase();
        let (word, value) = match key.split_once(':') {
            Some((w, v)) => (w, Some(v)),
            None => (key.as_str(), None),
        };
        match (word, value) {
            ("jackknife+", None) => Ok(IntervalMethod::JackknifePlus),
            ("cv+", None) => Ok(IntervalMethod::CvPlus {
                folds: DEFAULT_CV_FOLDS,
            }),
            ("cv+", Some(k)) => k
                .parse()
                .map(|folds| IntervalMethod::CvPlus { folds })
                .map_err(|_| bad()),
            ("split-conformal", None) => Ok(IntervalMethod::SplitConformal {
                fraction: DEFAULT_CALIBRATION_SPLIT,
            }),
            ("split-conformal", Some(f)) => f
                .parse()
                .map(|fraction| IntervalMethod::SplitConformal { fraction })
                .map_err(|_| bad()),
            _ => Err(bad()),
        }
    }
}

impl fmt::Display for IntervalMethod {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            IntervalMethod::JackknifePlus => f.write_str("jackknife+"),
            IntervalMethod::CvPlus { folds } => write!(f, "cv+:{folds}"),
            IntervalMethod::SplitConformal { fraction } => write!(f, "split-conformal:{fraction}"),
        }
    }
}

named!(IntervalScore {
    IntervalScore::Absolute => "absolute": "|y − μ(x)|: the residual (Barber et al. 2021)",
    IntervalScore::GpStd => "gp-std": "|y − μ(x)|/σ(x), σ the GP's predictive standard deviation (J+GP, Jaber et al. 2025): wider where the GP is unsure",
    IntervalScore::Lac => "lac": "classifiers: 1 − p(y|x), the least ambiguous sets (LAC, Sadinle et al. 2019): the smallest sets on average",
    IntervalScore::Aps => "aps": "classifiers: the probability of every label at least as likely as y (APS, Romano et al. 2020, not randomised): larger sets where the model is unsure",
});

/// `split:F` (F in (0, 1)) or `split:auto` (the menu 0.3, 0.5, 0.7, charged ln 3).
impl FromStr for SplitFraction {
    type Err = BadValue;
    fn from_str(s: &str) -> Result<Self, BadValue> {
        let bad = || BadValue {
            given: s.to_string(),
            allowed: "split:F (a fraction F of the sample for part A) or split:auto".into(),
        };
        match s.trim().strip_prefix("split:") {
            Some("auto") => Ok(SplitFraction::Menu),
            Some(f) => f
                .parse::<f64>()
                .map(SplitFraction::Fixed)
                .map_err(|_| bad()),
            None => Err(bad()),
        }
    }
}

impl fmt::Display for SplitFraction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SplitFraction::Fixed(v) => write!(f, "split:{v}"),
            SplitFraction::Menu => f.write_str("split:auto"),
        }
    }
}

/// The words of a certificate's confidence constant, with their help (`catoni:λ` takes a λ).
pub const CONFIDENCE_TERMS: [(&str, &str); 4] = [
    ("maurer", "ln(2√N/δ) (Maurer; tighter than Seeger's)"),
    ("seeger", "ln((N+1)/δ) (Seeger 2002)"),
    (
        "sharp",
        "ln(ξ(N)/δ), the exact constant Maurer bounds by 2√N (about 0.45 nats tighter)",
    ),
    (
        "catoni:λ",
        "Catoni's bound at a λ > 0 fixed without the sample (its confidence term ln(1/δ))",
    ),
];

/// `maurer`, `seeger`, `sharp` or `catoni:λ`.
impl FromStr for ConfidenceTerm {
    type Err = BadValue;
    fn from_str(s: &str) -> Result<Self, BadValue> {
        let bad = || BadValue {
            given: s.to_string(),
            allowed: "maurer, seeger, sharp or catoni:λ".into(),
        };
        match s.trim().to_ascii_lowercase().as_str() {
            "maurer" => Ok(ConfidenceTerm::Maurer),
            "seeger" => Ok(ConfidenceTerm::Seeger),
            "sharp" => Ok(ConfidenceTerm::Sharp),
            other => match other.strip_prefix("catoni:").map(str::parse::<f64>) {
                Some(Ok(lambda)) if lambda > 0.0 && lambda.is_finite() => {
                    Ok(ConfidenceTerm::Catoni { lambda })
                }
                _ => Err(bad()),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every name parses back to its value, case and surrounding blanks aside.
    #[test]
    fn names_round_trip() {
        fn check<T: Named + FromStr<Err = BadValue> + PartialEq + fmt::Debug>() {
            assert_eq!(T::NAMES.len(), T::VALUES.len());
            for v in T::VALUES {
                assert_eq!(v.name().parse::<T>().unwrap(), *v);
                assert_eq!(
                    format!(" {} ", v.name().to_uppercase())
                        .parse::<T>()
                        .unwrap(),
                    *v
                );
            }
            let e = "no-such-word".parse::<T>().unwrap_err();
            assert!(e.allowed.contains(T::NAMES[0].0), "{e}");
        }
        check::<MethodName>();
        check::<LikelihoodName>();
        check::<Selection>();
        check::<InducingInit>();
        check::<SvmSolver>();
        check::<SlackKind>();
        check::<HyperPriorName>();
        check::<Xi>();
        check::<BoundName>();
        check::<PriorKernel>();
        check::<GibbsPredictor>();
        check::<LooMode>();
        check::<LooRequest>();
        check::<IntervalScore>();
        check::<MultiClass>();
    }

    #[test]
    fn split_and_scale_values() {
        assert_eq!("split:auto".parse(), Ok(SplitFraction::Menu));
        assert_eq!("split:0.3".parse(), Ok(SplitFraction::Fixed(0.3)));
        assert!("split:".parse::<SplitFraction>().is_err());
        assert!("0.3".parse::<SplitFraction>().is_err());
        // Ranges are the spec's check, not the parser's: split:2 parses and is refused there.
        assert_eq!("split:2".parse(), Ok(SplitFraction::Fixed(2.0)));
        assert_eq!("auto".parse(), Ok(PriorScale::Auto));
        assert_eq!("0.25".parse(), Ok(PriorScale::Fixed(0.25)));
        assert!("big".parse::<PriorScale>().is_err());
        assert_eq!(one_of(&["a", "b", "c"]), "a, b or c");
        assert_eq!("sharp".parse(), Ok(ConfidenceTerm::Sharp));
        assert_eq!(
            "catoni:0.5".parse(),
            Ok(ConfidenceTerm::Catoni { lambda: 0.5 })
        );
        assert!("catoni:-1".parse::<ConfidenceTerm>().is_err());
    }

    #[test]
    fn interval_methods() {
        for m in [
            IntervalMethod::JackknifePlus,
            IntervalMethod::CvPlus { folds: 5 },
            IntervalMethod::SplitConformal { fraction: 0.3 },
        ] {
            assert_eq!(m.to_string().parse(), Ok(m));
        }
        assert_eq!(
            "CV+".parse(),
            Ok(IntervalMethod::CvPlus {
                folds: DEFAULT_CV_FOLDS
            })
        );
        assert_eq!(
            " split-conformal ".parse(),
            Ok(IntervalMethod::SplitConformal {
                fraction: DEFAULT_CALIBRATION_SPLIT
            })
        );
        for bad in [
            "jackknife",
            "jackknife+:3",
            "cv+:x",
            "split-conformal:",
            "cv",
        ] {
            assert!(bad.parse::<IntervalMethod>().is_err(), "{bad}");
        }
    }
}
