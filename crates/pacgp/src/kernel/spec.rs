//! Parse kernel specifications for the command line: `se-ard`, `matern32`, `linear`,
//! `poly2`, `const`, combined with `+` and `*` (`*` binds tighter). A stationary kernel may
//! tie the lengthscales of consecutive inputs: `se-groups(1,1,4,2)` has one lengthscale for
//! each of inputs 1 and 2, one shared by inputs 3–6 and one by inputs 7–8 (the one-hot
//! inputs of one table column are such a group).

use super::{Kernel, Profile};
use crate::error::{Error, Result};

const HELP: &str = "use se, se-ard, matern12, matern32, matern52 (each with optional -ard, \
or -groups(n1,n2,...) for one lengthscale per run of n1, n2, ... inputs), linear, linear-ard, \
poly<degree>, const, joined by + and *";

impl Kernel {
    /// Most base kernels an expression may hold. Each adds hyperparameters (D of them for an
    /// `-ard` kernel) and a level of nesting that every kernel evaluation walks; 32 is far
    /// beyond any useful expression, while 3,333 factors made a fit run for minutes.
    pub const MAX_BASE_KERNELS: usize = 32;

    /// Highest polynomial degree accepted: `(x·x'/l² + c)^p` beyond this overflows or
    /// underflows f64 for any input not within a few percent of the unit sphere.
    pub const MAX_POLY_DEGREE: u32 = 64;

    /// Build a kernel from a specification for inputs with `d` columns. Every base kernel
    /// except `const` carries its own signal variance (initial values 1). At most
    /// [`Kernel::MAX_BASE_KERNELS`] base kernels, checked before anything is built. The
    /// groups of a `-groups(…)` kernel must cover the `d` inputs exactly.
    pub fn from_spec(spec: &str, d: usize) -> Result<Kernel> {
        let kernel = Self::parse_spec(spec, d)?;
        kernel.check_input_dim(d).map_err(|e| Error::InvalidSpec {
            spec: spec.to_string(),
            reason: e.to_string(),
        })?;
        Ok(kernel)
    }

    /// Whether `spec` is a kernel specification (its grammar and sizes), for any number of
    /// inputs: what a fit option is checked against before the data are read.
    pub fn check_spec_grammar(spec: &str) -> Result<()> {
        Self::parse_spec(spec, 1).map(|_| ())
    }

    /// The specification of the stationary kernel `stem` (`se`, `matern52`, …) with one
    /// lengthscale per group of consecutive inputs of the given sizes, e.g. `se-groups(1,1,4)`;
    /// [`Kernel::from_spec`] reads it back.
    pub fn groups_spec(stem: &str, sizes: &[usize]) -> String {
        let sizes: Vec<String> = sizes.iter().map(usize::to_string).collect();
        format!("{stem}-groups({})", sizes.join(","))
    }

    /// [`Kernel::from_spec`] without checking a grouped kernel's groups against `d`.
    fn parse_spec(spec: &str, d: usize) -> Result<Kernel> {
        let bad = |reason: String| Error::InvalidSpec {
            spec: spec.to_string(),
            reason,
        };
        let n_base = 1 + spec.matches(['+', '*']).count();
        if n_base > Self::MAX_BASE_KERNELS {
            return Err(bad(format!(
                "{n_base} base kernels joined by + and *; at most {} are allowed",
                Self::MAX_BASE_KERNELS
            )));
        }
        let sum_terms: Vec<&str> = spec.split('+').collect();
        let mut total: Option<Kernel> = None;
        for term in sum_terms {
            let mut prod: Option<Kernel> = None;
            for factor in term.split('*') {
                let k = base(factor.trim().to_ascii_lowercase().as_str(), d).map_err(&bad)?;
                prod = Some(match prod {
                    None => k,
                    Some(p) => Kernel::Product {
                        left: Box::new(p),
                        right: Box::new(k),
                    },
                });
            }
            let prod = prod.ok_or_else(|| bad("empty term".into()))?;
            total = Some(match total {
                None => prod,
                Some(t) => Kernel::Sum {
                    left: Box::new(t),
                    right: Box::new(prod),
                },
            });
        }
        total.ok_or_else(|| bad("empty specification".into()))
    }

    /// A readable one-line summary with values (not logs), e.g. `1.3·SE(l=[0.5, 2])`.
    pub fn describe(&self) -> String {
        let vals = |v: &[f64]| {
            let s: Vec<String> = v.iter().map(|x| format!("{:.4}", x.exp())).collect();
            if s.len() == 1 {
                s[0].clone()
            } else {
                format!("[{}]", s.join(", "))
            }
        };
        match self {
            Kernel::Stationary {
                profile,
                ln_lengthscale,
                groups,
            } => {
                let name = match profile {
                    Profile::SquaredExponential => "SE",
                    Profile::Matern12 => "Matern12",
                    Profile::Matern32 => "Matern32",
                    Profile::Matern52 => "Matern52",
                };
                match groups {
                    Some(sizes) => format!("{name}(l={}, groups={sizes:?})", vals(ln_lengthscale)),
                    None => format!("{name}(l={})", vals(ln_lengthscale)),
                }
            }
            Kernel::Linear { ln_variance } => format!("Linear(v={})", vals(ln_variance)),
            Kernel::Polynomial {
                degree,
                ln_offset,
                ln_lengthscale,
            } => {
                format!(
                    "Poly{degree}(c={:.4}, l={:.4})",
                    ln_offset.exp(),
                    ln_lengthscale.exp()
                )
            }
            Kernel::Constant { ln_variance } => format!("Const({:.4})", ln_variance.exp()),
            Kernel::Scale { ln_variance, inner } => {
                format!("{:.4}·{}", ln_variance.exp(), inner.describe())
            }
            Kernel::Sum { left, right } => format!("{} + {}", left.describe(), right.describe()),
            Kernel::Product { left, right } => {
                format!("({}) * ({})", left.describe(), right.describe())
            }
        }
    }
}

/// `stem-groups(n1,n2,…)` taken apart: the stem and the group sizes (each at least 1).
fn grouped(name: &str) -> Option<std::result::Result<(&str, Vec<usize>), String>> {
    let (stem, rest) = name.split_once("-groups(")?;
    let Some(list) = rest.strip_suffix(')') else {
        return Some(Err(format!("'{name}': the group sizes must end with ')'")));
    };
    let sizes: std::result::Result<Vec<usize>, String> = list
        .split(',')
        .map(|n| match n.trim().parse::<usize>() {
            Ok(n) if n > 0 => Ok(n),
            _ => Err(format!(
                "'{name}': group sizes must be whole numbers of at least 1, found '{}'",
                n.trim()
            )),
        })
        .collect();
    Some(sizes.map(|s| (stem, s)))
}

fn base(name: &str, d: usize) -> std::result::Result<Kernel, String> {
    if let Some(parts) = grouped(name) {
        let (stem, sizes) = parts?;
        let profile = stationary_profile(stem)
            .ok_or_else(|| format!("'{name}': only se and the Matérn kernels take groups"))?;
        return Ok(Kernel::Scale {
            ln_variance: 0.0,
            inner: Box::new(Kernel::Stationary {
                profile,
                ln_lengthscale: vec![0.0; sizes.len()],
                groups: Some(sizes),
            }),
        });
    }
    let (stem, ard) = match name.strip_suffix("-ard") {
        Some(s) => (s, true),
        None => (name, false),
    };
    let n = if ard { d } else { 1 };
    if let Some(profile) = stationary_profile(stem) {
        return Ok(Kernel::stationary(profile, &vec![1.0; n], 1.0));
    }
    match stem {
        "linear" => Ok(Kernel::Linear {
            ln_variance: vec![0.0; n],
        }),
        "const" if !ard => Ok(Kernel::Constant { ln_variance: 0.0 }),
        s if s.starts_with("poly") && !ard => {
            let p: u32 = s[4..]
                .parse()
                .map_err(|e: std::num::ParseIntError| match e.kind() {
                    std::num::IntErrorKind::PosOverflow => format!(
                        "'{s}': degree {} is too large (at most {})",
                        &s[4..],
                        Kernel::MAX_POLY_DEGREE
                    ),
                    _ => format!("'{s}': degree must be a whole number; {HELP}"),
                })?;
            if p == 0 || p > Kernel::MAX_POLY_DEGREE {
                return Err(format!(
                    "'{s}': degree must lie in 1..={}",
                    Kernel::MAX_POLY_DEGREE
                ));
            }
            Ok(Kernel::Scale {
                ln_variance: 0.0,
                inner: Box::new(Kernel::Polynomial {
                    degree: p,
                    ln_offset: 0.0,
                    ln_lengthscale: 0.0,
                }),
            })
        }
        "" => Err(format!("empty kernel name; {HELP}")),
        other => Err(format!("unknown kernel '{other}'; {HELP}")),
    }
}

/// The stationary profile a kernel name stands for.
fn stationary_profile(stem: &str) -> Option<Profile> {
    match stem {
        "se" | "rbf" => Some(Profile::SquaredExponential),
        "matern12" => Some(Profile::Matern12),
        "matern32" => Some(Profile::Matern32),
        "matern52" => Some(Profile::Matern52),
        _ => None,
    }
}
