//! The library's option words on the command line: clap parses every option value with the
//! library's own parser (`FromStr` of `pacgp::spec::values`) and lists the library's words in
//! its help; a [`pacgp::spec::SpecError`] is worded with the flags a user typed.

use std::ffi::OsStr;
use std::marker::PhantomData;
use std::str::FromStr;

use clap::builder::{PossibleValue, TypedValueParser};
use clap::error::ErrorKind;
use pacgp::data::TableOption;
use pacgp::spec::values::{one_of, BadValue};
use pacgp::spec::{MethodName, Named, SpecOption, Wording};

/// A clap value parser for a library option value of fixed words.
#[derive(Clone, Copy, Debug)]
pub struct Words<T>(PhantomData<T>);

/// The parser of `T`'s words.
pub fn words<T>() -> Words<T> {
    Words(PhantomData)
}

impl<T> TypedValueParser for Words<T>
where
    T: Named + FromStr<Err = BadValue> + Clone + Send + Sync + 'static,
{
    type Value = T;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &OsStr,
    ) -> Result<T, clap::Error> {
        let text = value.to_string_lossy();
        text.parse::<T>().map_err(|e| {
            let flag = arg
                .and_then(|a| a.get_long())
                .map(|l| format!("--{l}"))
                .unwrap_or_default();
            clap::Error::raw(ErrorKind::InvalidValue, format!("invalid {flag}: {e}\n"))
                .with_cmd(cmd)
        })
    }

    fn possible_values(&self) -> Option<Box<dyn Iterator<Item = PossibleValue> + '_>> {
        Some(Box::new(
            T::NAMES
                .iter()
                .map(|(n, h)| PossibleValue::new(*n).help(*h)),
        ))
    }
}

/// A clap value parser for a library value with a payload (`split:F`, `auto|t`, `catoni:λ`).
pub fn parsed<T: FromStr<Err = BadValue>>(s: &str) -> Result<T, String> {
    s.parse::<T>().map_err(|e| e.to_string())
}

/// A clap value parser for `--memory-limit` (the library reads the size).
pub fn memory_limit(s: &str) -> Result<pacgp::memory::MemoryLimit, String> {
    pacgp::memory::MemoryLimit::parse(s).map_err(|e| e.to_string())
}

/// The command line's names of the fit spec's options.
pub struct CliWording;

impl Wording for CliWording {
    fn option(&self, option: SpecOption) -> String {
        use SpecOption as O;
        let flag = match option {
            O::Snap => "no-snap",
            O::Inducing => "inducing",
            O::ActiveSet => "active-set",
            O::InducingInit => "inducing-init",
            O::MaxIter => "max-iter",
            O::BatchSize => "batch-size",
            O::InputNoise => "input-noise",
            O::HyperPrior => "hyper-prior",
            O::PriorScale => "prior-scale",
            O::PriorKernel => "prior-kernel",
            O::BothDirections => "both-directions",
            O::NoiseInit => "noise-init",
            O::IntervalScore => "interval-score",
            O::CertifyHoldout => "certify-holdout",
            other => other.name(),
        };
        format!("--{flag}")
    }

    fn method(&self, method: MethodName) -> String {
        format!("--method {method}")
    }

    fn without_loo(&self) -> String {
        "--loo none".into()
    }

    fn table_option(&self, option: TableOption) -> String {
        format!("--{}", option.name().replace('_', "-"))
    }

    fn table_setting(&self, option: TableOption, values: &[&str]) -> Option<String> {
        let flag = self.table_option(option);
        Some(match values {
            [] => flag,
            values => format!("{flag} {}", one_of(values)),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every option but the initial noise (not a flag of `fit`) is worded as one of `fit`'s
    /// flags.
    #[test]
    fn every_option_is_a_fit_flag() {
        use clap::CommandFactory;
        let cmd = crate::cli::Cli::command();
        let fit = cmd.find_subcommand("fit").expect("fit");
        let flags: Vec<String> = fit
            .get_arguments()
            .filter_map(|a| a.get_long().map(|l| format!("--{l}")))
            .collect();
        for o in SpecOption::ALL {
            if matches!(o, SpecOption::NoiseInit | SpecOption::Predictor) {
                continue;
            }
            let w = CliWording.option(o);
            assert!(flags.contains(&w), "{o:?} → {w} is not a flag of fit");
        }
        for o in TableOption::ALL {
            let w = CliWording.table_option(o);
            assert!(flags.contains(&w), "{o:?} → {w} is not a flag of fit");
        }
    }
}
