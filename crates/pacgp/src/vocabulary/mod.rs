//! The words the library names its options, methods and table-reading options by, and the
//! structured errors built from them ([`SpecError`]), which each front end words in its own
//! terms through [`Wording`]. A leaf: it imports nothing else of the crate, so that both the
//! fit spec ([`crate::spec`]) and the error type ([`crate::error`]) stand on it.

use std::fmt;

mod method;
mod option;
mod wording;

pub use method::{LikelihoodName, MethodName, DEFAULT_BASIS};
pub use option::{shown_missing_cells, MissingCells, SpecOption, TableOption, MISSING_CELLS};
pub use wording::{LibraryWording, SpecError, SpecProblem, Wording};

/// An option value spelled as one of a fixed set of words.
pub trait Named: Sized + Copy + 'static {
    /// Every accepted word with a one-line help, in the order help lists them.
    const NAMES: &'static [(&'static str, &'static str)];
    /// The values in the order of [`Named::NAMES`].
    const VALUES: &'static [Self];

    /// The word of this value.
    fn name(self) -> &'static str;
}

/// The error of parsing an option value: the text and what would have been accepted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BadValue {
    /// The text given.
    pub given: String,
    /// What is accepted, in words.
    pub allowed: String,
}

impl fmt::Display for BadValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "'{}' is not {}", self.given, self.allowed)
    }
}

impl std::error::Error for BadValue {}

/// `a, b or c` from a list of words.
pub fn one_of(words: &[&str]) -> String {
    match words {
        [] => String::new(),
        [one] => one.to_string(),
        [init @ .., last] => format!("{} or {last}", init.join(", ")),
    }
}

/// Parse a word of `T`.
pub(crate) fn parse_named<T: Named>(s: &str) -> Result<T, BadValue> {
    let key = s.trim().to_ascii_lowercase();
    T::NAMES
        .iter()
        .position(|(n, _)| *n == key)
        .map(|i| T::VALUES[i])
        .ok_or_else(|| BadValue {
            given: s.to_string(),
            allowed: one_of(&T::NAMES.iter().map(|(n, _)| *n).collect::<Vec<_>>()),
        })
}

/// `Named`, `FromStr` and `Display` for an enum of plain words. Values are expressions
/// (`LooRequest::Mode(LooMode::Both)`); after `@cfg` they are paths, each with its `cfg`
/// (a test-only method's name).
macro_rules! named {
    ($ty:ty { $($variant:expr => $name:literal : $help:literal),+ $(,)? }) => {
        named!(@impl $ty, [$(($name, $help)),+], [$($variant),+]);
    };
    (@cfg $ty:ty { $($(#[cfg($cfg:meta)])? $variant:path => $name:literal : $help:literal),+ $(,)? }) => {
        named!(@impl $ty, [$($(#[cfg($cfg)])? ($name, $help)),+], [$($(#[cfg($cfg)])? $variant),+]);
    };
    (@impl $ty:ty, [$($names:tt)*], [$($values:tt)*]) => {
        impl $crate::vocabulary::Named for $ty {
            const NAMES: &'static [(&'static str, &'static str)] = &[$($names)*];
            const VALUES: &'static [Self] = &[$($values)*];
            fn name(self) -> &'static str {
                let i = Self::VALUES.iter().position(|v| *v == self).expect("every value is named");
                Self::NAMES[i].0
            }
        }
        impl std::str::FromStr for $ty {
            type Err = $crate::vocabulary::BadValue;
            fn from_str(s: &str) -> Result<Self, $crate::vocabulary::BadValue> {
                $crate::vocabulary::parse_named(s)
            }
        }
        impl std::fmt::Display for $ty {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str($crate::vocabulary::Named::name(*self))
            }
        }
    };
}
pub(crate) use named;
