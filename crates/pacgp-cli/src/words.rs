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

/// A clap value parser for `--time-limit` (the library reads the duration).
pub fn time_limit(s: &str) -> Result<std::time::Duration, String> {
    pacgp::optim::stop::parse_time_limit(s).map_err(|e| e.to_string())
}

/// The command line's names of the fit spec's options, for the command that ran: a message
/// names a flag the command accepts, or says whose it is (`fit's --bound`), and suggests a
/// table-reading setting only where the command has the flag (`evaluate` reads a file the way
/// the model's fit did and has no `--missing`; `split` has no `--no-header`).
pub struct CliWording {
    /// The command that ran.
    command: String,
    /// Every command's long flags (`--missing`, …), by command name.
    flags: Vec<(String, Vec<String>)>,
}

/// The commands a message may send a user to for a flag the command that ran lacks, in order.
const OWNERS: [&str; 5] = ["fit", "certify", "predict", "evaluate", "split"];

impl CliWording {
    /// The wording for subcommand `name` (`fit`, `evaluate`, …), with every subcommand's flags
    /// from the command line's clap `cli` (given by the caller, so this module does not import
    /// the parser that imports it).
    pub fn for_command(cli: &clap::Command, name: &str) -> Self {
        let flags = cli
            .get_subcommands()
            .map(|c| {
                let longs = c
                    .get_arguments()
                    .filter_map(|a| a.get_long().map(|l| format!("--{l}")))
                    .collect();
                (c.get_name().to_string(), longs)
            })
            .collect();
        Self {
            command: name.to_string(),
            flags,
        }
    }

    /// Whether command `name` accepts `flag`.
    fn has(&self, name: &str, flag: &str) -> bool {
        self.flags
            .iter()
            .any(|(c, f)| c == name && f.iter().any(|x| x == flag))
    }

    /// `--long` where the command that ran accepts it, else `fit's --long` (or the first other
    /// command of [`OWNERS`] that has it).
    fn flag(&self, long: &str) -> String {
        let flag = format!("--{long}");
        if self.has(&self.command, &flag) {
            return flag;
        }
        match OWNERS.iter().find(|c| self.has(c, &flag)) {
            Some(owner) => format!("{owner}'s {flag}"),
            None => flag,
        }
    }
}

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
            O::SharedKernel => "shared-kernel",
            other => other.name(),
        };
        self.flag(flag)
    }

    fn method(&self, method: MethodName) -> String {
        format!("{} {method}", self.flag("method"))
    }

    fn without_loo(&self) -> String {
        format!("{} none", self.flag("loo"))
    }

    /// The flag where the command has it, else `fit`'s (a file read by `predict`, `evaluate`
    /// or `certify` is read as the model's fit read its own).
    fn table_option(&self, option: TableOption) -> String {
        self.flag(&option.name().replace('_', "-"))
    }

    fn table_setting(&self, option: TableOption, values: &[&str]) -> Option<String> {
        let flag = format!("--{}", option.name().replace('_', "-"));
        if !self.has(&self.command, &flag) {
            return None;
        }
        Some(match values {
            [] => flag,
            values => format!("{flag} {}", one_of(values)),
        })
    }
}

#[cfg(test)]
mod tests {
    /// The command line's clap command.
    fn cli() -> clap::Command {
        <crate::cli::Cli as clap::CommandFactory>::command()
    }

    use super::*;

    /// Options of the library's spec with no flag of fit: the initial noise, the predictor
    /// (certify's --predictor) and the Python estimators' scikit-learn parameters (`alpha`,
    /// θ kept as given, `normalize_y`); no spec check raises them from the command line.
    fn without_fit_flag(o: SpecOption) -> bool {
        use SpecOption as O;
        matches!(
            o,
            O::NoiseInit | O::Predictor | O::Alpha | O::KernelParams | O::NormalizeY
        )
    }

    /// Every option but those [`without_fit_flag`] is worded as one of `fit`'s flags.
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
            if without_fit_flag(o) {
                continue;
            }
            let w = CliWording::for_command(&cli(), "fit").option(o);
            assert!(flags.contains(&w), "{o:?} → {w} is not a flag of fit");
        }
        for o in TableOption::ALL {
            let w = CliWording::for_command(&cli(), "fit").table_option(o);
            assert!(flags.contains(&w), "{o:?} → {w} is not a flag of fit");
        }
    }

    /// The long flags of subcommand `name`.
    fn flags_of(name: &str) -> Vec<String> {
        use clap::CommandFactory;
        crate::cli::Cli::command()
            .find_subcommand(name)
            .expect(name)
            .get_arguments()
            .filter_map(|a| a.get_long().map(|l| format!("--{l}")))
            .collect()
    }

    /// Every `--flag` in `message`, with the command it is worded as belonging to
    /// (`fit's --bound`), if any.
    fn flags_named(message: &str) -> Vec<(Option<&'static str>, String)> {
        let mut out = Vec::new();
        for (at, _) in message.match_indices("--") {
            let name: String = message[at + 2..]
                .chars()
                .take_while(|c| c.is_ascii_lowercase() || *c == '-')
                .collect();
            if !name.is_empty() {
                let owner = OWNERS
                    .into_iter()
                    .find(|o| message[..at].ends_with(&format!("{o}'s ")));
                out.push((owner, format!("--{name}")));
            }
        }
        out
    }

    /// The error table walked for every command (issue 43): each table error, each spec
    /// option's errors and the library errors that name a flag are worded for the command,
    /// and every flag they name is one that command accepts, or is named as another
    /// command's (`fit's --bound`) and is one of its. (`evaluate` suggested `--missing drop`
    /// and `split` `--no-header`, which neither has.)
    #[test]
    fn every_flag_a_message_names_is_one_the_command_accepts() {
        use clap::CommandFactory;
        use pacgp::data::TableError;
        use pacgp::spec::SpecError;
        let commands: Vec<String> = crate::cli::Cli::command()
            .get_subcommands()
            .map(|c| c.get_name().to_string())
            .collect();
        assert!(commands.len() >= 7, "{commands:?}");
        let mut checked = 0;
        for name in &commands {
            let own = flags_of(name);
            let w = CliWording::for_command(&cli(), name);
            let mut messages: Vec<String> = TableError::examples()
                .iter()
                .map(|e| e.message(&w))
                .collect();
            for o in SpecOption::ALL {
                if without_fit_flag(o) {
                    continue;
                }
                let e = SpecError::missing(o, MethodName::Laplace, "why");
                messages.push(e.message(&w));
                let e = SpecError::out_of_range(o, 2, "in (0, 1)");
                messages.push(e.message(&w));
            }
            for e in [
                pacgp::Error::CatoniNotFromFit {
                    lambda: 3.0,
                    trained: None,
                },
                pacgp::Error::NoLeaveOneOut {
                    model: "m",
                    why: "",
                },
            ] {
                messages.push(e.message(&w));
            }
            for m in &messages {
                for (owner, flag) in flags_named(m) {
                    let allowed = owner.map_or_else(|| own.clone(), flags_of);
                    assert!(
                        allowed.contains(&flag),
                        "`pacgp {name}`: {flag} (as {}'s) is not a flag: {m}",
                        owner.unwrap_or(name)
                    );
                    checked += 1;
                }
            }
        }
        assert!(checked > 100, "{checked}");
        // The two messages of the issue name no flag of another command now.
        let missing_target = &TableError::examples()[3];
        let m = missing_target.message(&CliWording::for_command(&cli(), "evaluate"));
        assert!(!m.contains("--missing"), "{m}");
        let header = TableError::HeaderLooksLikeData {
            path: "f.csv".into(),
            first: "1,2".into(),
        };
        let m = header.message(&CliWording::for_command(&cli(), "split"));
        assert!(
            !m.contains("--no-header") && m.contains("add a header line"),
            "{m}"
        );
        let m = header.message(&CliWording::for_command(&cli(), "fit"));
        assert!(m.contains("--no-header"), "{m}");
    }
}
