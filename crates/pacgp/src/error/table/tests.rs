//! Unit tests of `crate::error::table`, in a file of their own beside the code.

use super::*;

/// The examples hold one error of every kind.
#[test]
fn examples_cover_every_kind() {
    let kinds: std::collections::BTreeSet<usize> = TableError::examples()
        .iter()
        .map(TableError::kind)
        .collect();
    assert_eq!(kinds, (0..TableError::KINDS).collect());
}

#[test]
fn thousands_separators_are_recognised() {
    for yes in ["1,234", "-12,345,678.5", "999,000"] {
        assert!(thousands_separated(yes), "{yes}");
    }
    for no in ["1234", "1,23", "abc", "1,234x", ",123", "1,,234", "1.5,000"] {
        assert!(!thousands_separated(no), "{no}");
    }
}

/// The library's own wording names options by their library names and no flag.
#[test]
fn library_wording_names_no_flag() {
    let cases = [
        TableError::MissingValue {
            line: 3,
            column: "a".into(),
            cell: "NA".into(),
            read_as_missing: "empty, ?, NA".into(),
        },
        TableError::TextColumns {
            path: "f.csv".into(),
            found: "'b' ('x' at line 2)".into(),
            names: vec!["b".into()],
        },
        TableError::DroppedTarget { column: "y".into() },
        TableError::PositiveForNumbers,
    ];
    for e in cases {
        let m = e.to_string();
        assert!(!m.contains("--"), "{m}");
        let o = e.option().expect("names an option");
        assert!(m.contains(o.name()), "{m} lacks {}", o.name());
    }
}
