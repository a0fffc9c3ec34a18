//! `pacgp` command-line tool: a thin layer over the `pacgp` library. It parses arguments,
//! loads data, calls the library, and prints (human-readable, or one JSON object with
//! `--json`). Exit status: 0 on success (also when the reader of stdout goes away early),
//! 2 for bad input or a bad path, 1 for a numerical failure.

/// `println!` that returns an error instead of panicking when stdout is closed (e.g. piped
/// into `head`); `main` ends quietly on a broken pipe.
macro_rules! out {
    ($($t:tt)*) => {{
        use std::io::Write as _;
        writeln!(std::io::stdout().lock(), $($t)*)?
    }};
}

mod cli;
mod commands;
mod output;
mod plot;
mod reproduce;
mod words;

/// mimalloc keeps freed N×N buffers for reuse; the system allocator returns each ≥ 32 MB
/// matrix to the kernel, so every factorisation and inverse paid for fresh zeroed pages
/// (a one-thread EP ML-II fit at n = 2000 took 7% longer, measured alternately).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use clap::Parser;

/// Exit status of a failure: 1 for numerical trouble, 2 for anything the user can fix.
fn exit_code(e: &anyhow::Error) -> i32 {
    if e.is::<pacgp::spec::SpecError>() || e.is::<pacgp::data::TableError>() {
        return 2;
    }
    match e.downcast_ref::<pacgp::Error>() {
        Some(pacgp::Error::Numerical { .. } | pacgp::Error::NotPositiveDefinite { .. }) => 1,
        Some(_) => 2,
        None if e.chain().any(|c| c.is::<std::io::Error>()) => 2,
        None => 1,
    }
}

/// Whether the failure is stdout going away (nothing to report).
fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

/// The error and its causes on one line, `a: b: c`, leaving out a cause whose text the line
/// already holds (the library's `Io` error displays its OS error and also returns it as its
/// source, which `{:#}` would print twice).
fn error_line(e: &anyhow::Error, wording: &words::CliWording) -> String {
    let mut line = String::new();
    for cause in e.chain() {
        // An option of the fit or of reading the table is worded with the flag the user typed.
        let text = if let Some(e) = cause.downcast_ref::<pacgp::Error>() {
            e.message(wording) + memory_hint(e)
        } else if let Some(e) = cause.downcast_ref::<pacgp::spec::SpecError>() {
            e.message(wording)
        } else if let Some(e) = cause.downcast_ref::<pacgp::data::TableError>() {
            e.message(wording)
        } else {
            cause.to_string()
        };
        if line.contains(&text) {
            continue;
        }
        if !line.is_empty() {
            line.push_str(": ");
        }
        line.push_str(&text);
    }
    line
}

/// A fit refused for the machine's memory names the flag that sets another limit.
fn memory_hint(e: &pacgp::Error) -> &'static str {
    match e {
        pacgp::Error::NotEnoughMemory {
            limit_source: pacgp::memory::LimitSource::Available,
            ..
        } => " (--memory-limit SIZE sets the limit, if more memory can be freed)",
        _ => "",
    }
}

fn main() {
    let args = cli::Cli::parse();
    if let Some(requested) = args.threads {
        let n = match pacgp::threads::resolve(requested) {
            Ok(n) => n,
            Err(e) => {
                eprintln!("error: --threads {requested}: {e}");
                std::process::exit(2);
            }
        };
        if let Err(e) = rayon::ThreadPoolBuilder::new()
            .num_threads(n)
            .build_global()
        {
            eprintln!("error: --threads {requested}: {e}");
            std::process::exit(2);
        }
    }
    let wording = words::CliWording::for_command(
        &<cli::Cli as clap::CommandFactory>::command(),
        args.command.name(),
    );
    if let Err(e) = commands::run(args) {
        if is_broken_pipe(&e) {
            std::process::exit(0);
        }
        eprintln!("error: {}", error_line(&e, &wording));
        std::process::exit(exit_code(&e));
    }
}
