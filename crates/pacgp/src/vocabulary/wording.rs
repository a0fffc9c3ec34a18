//! The structured [`SpecError`] (which option, what is wrong, the allowed range) and the
//! [`Wording`] each front end gives it (`--epsilon` in the CLI, `epsilon=` in Python).

use std::fmt;

use super::{one_of, BadValue, MethodName, SpecOption, TableOption};

/// What is wrong with an option.
#[derive(Clone, Debug, PartialEq)]
pub enum SpecProblem {
    /// A value outside the option's range.
    OutOfRange {
        /// The value as given.
        value: String,
        /// The range, in words ("positive and finite", "in 1..=506").
        allowed: String,
    },
    /// A word that is not one of the option's values.
    Unparsable(BadValue),
    /// The option does not apply to the method.
    NotApplicable {
        /// The method.
        method: MethodName,
        /// Which methods or settings it applies to.
        applies_to: String,
    },
    /// The method needs the option.
    Missing {
        /// The method.
        method: MethodName,
        /// Why it is needed.
        why: String,
    },
    /// The option does not combine with another one that was given.
    Conflict {
        /// The other option.
        with: SpecOption,
        /// Why not.
        why: String,
    },
}

/// How a front end names options and methods in its messages.
pub trait Wording {
    /// The option as its users type it (`--epsilon`, `epsilon`).
    fn option(&self, option: SpecOption) -> String;
    /// The method as its users choose it (`--method laplace`, `method='laplace'`).
    fn method(&self, method: MethodName) -> String;
    /// A table-reading option as its users type it (`--missing`, `missing`).
    fn table_option(&self, option: TableOption) -> String;
    /// A table-reading option set to one of `values` (`--missing drop, zero or mean`,
    /// `missing='drop'`; no values: the flag alone), or `None` where the front end has no
    /// such option (Python reads no file, so it has no `no_header`).
    fn table_setting(&self, option: TableOption, values: &[&str]) -> Option<String>;
    /// Certifying without a leave-one-out estimate (`--loo none`, `loo='none'`).
    fn without_loo(&self) -> String;
}

/// The library's own wording (snake-case names, `method laplace`).
pub struct LibraryWording;

impl Wording for LibraryWording {
    fn option(&self, option: SpecOption) -> String {
        option.name().to_string()
    }
    fn without_loo(&self) -> String {
        "loo none".into()
    }
    fn method(&self, method: MethodName) -> String {
        format!("method {method}")
    }
    fn table_option(&self, option: TableOption) -> String {
        option.name().to_string()
    }
    fn table_setting(&self, option: TableOption, values: &[&str]) -> Option<String> {
        Some(
            format!("{} {}", option.name(), one_of(values))
                .trim_end()
                .to_string(),
        )
    }
}

/// An option that is wrong: which one, and what is wrong (front ends word it, see [`Wording`]).
#[derive(Clone, Debug, PartialEq)]
pub struct SpecError {
    /// The option.
    pub option: SpecOption,
    /// What is wrong with it.
    pub problem: SpecProblem,
}

impl SpecError {
    /// The message in a front end's words.
    pub fn message(&self, w: &dyn Wording) -> String {
        let name = w.option(self.option);
        match &self.problem {
            SpecProblem::OutOfRange { value, allowed } => {
                format!("invalid {name} {value}: must be {allowed}")
            }
            SpecProblem::Unparsable(bad) => format!("invalid {name}: {bad}"),
            SpecProblem::NotApplicable { method, applies_to } => format!(
                "{name} applies to {applies_to}, not to {}",
                w.method(*method)
            ),
            SpecProblem::Missing { method, why } => {
                format!("{} needs {name}: {why}", w.method(*method))
            }
            SpecProblem::Conflict { with, why } => {
                format!("{name} does not combine with {}: {why}", w.option(*with))
            }
        }
    }

    pub(crate) fn new(option: SpecOption, problem: SpecProblem) -> Self {
        Self { option, problem }
    }

    /// `value` is outside `allowed`.
    pub fn out_of_range(option: SpecOption, value: impl fmt::Display, allowed: &str) -> Self {
        Self::new(
            option,
            SpecProblem::OutOfRange {
                value: value.to_string(),
                allowed: allowed.to_string(),
            },
        )
    }

    /// A word that does not parse.
    pub fn unparsable(option: SpecOption, bad: BadValue) -> Self {
        Self::new(option, SpecProblem::Unparsable(bad))
    }

    /// The method needs `option`, for the reason `why`.
    pub fn missing(option: SpecOption, method: MethodName, why: &str) -> Self {
        Self::new(
            option,
            SpecProblem::Missing {
                method,
                why: why.to_string(),
            },
        )
    }

    pub(crate) fn not_for(option: SpecOption, method: MethodName, applies_to: &str) -> Self {
        Self::new(
            option,
            SpecProblem::NotApplicable {
                method,
                applies_to: applies_to.to_string(),
            },
        )
    }

    pub(crate) fn conflict(option: SpecOption, with: SpecOption, why: &str) -> Self {
        Self::new(
            option,
            SpecProblem::Conflict {
                with,
                why: why.to_string(),
            },
        )
    }
}

impl fmt::Display for SpecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message(&LibraryWording))
    }
}

impl std::error::Error for SpecError {}
