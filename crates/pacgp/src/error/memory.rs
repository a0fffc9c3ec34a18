//! How errors word memory: a byte count in three digits and where a limit comes from (the
//! numbers themselves are [`crate::cost`]'s, which sits above the errors).

/// Where a memory limit comes from, for messages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LimitSource {
    /// The machine's available memory.
    Available,
    /// A limit the user gave.
    Given,
}

/// `8.2 GB`, `612 MB`, `12 kB` (powers of 1000, three significant digits at most).
pub fn shown_bytes(bytes: u64) -> String {
    let b = bytes as f64;
    let (value, unit) = match bytes {
        0..=999 => return format!("{bytes} B"),
        1_000..=999_999 => (b / 1e3, "kB"),
        1_000_000..=999_999_999 => (b / 1e6, "MB"),
        1_000_000_000..=999_999_999_999 => (b / 1e9, "GB"),
        _ => (b / 1e12, "TB"),
    };
    if value >= 100.0 {
        format!("{value:.0} {unit}")
    } else if value >= 10.0 {
        format!("{value:.1} {unit}")
    } else {
        format!("{value:.2} {unit}")
    }
}
