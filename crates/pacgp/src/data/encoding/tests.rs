//! Tables of the shape of issue 43's flights file (a text column of many values, a date
//! column, coded inputs too large to allocate), and tables the coding refuses (fuzz findings).

use super::apply::check_encoded_size;
use super::*;

/// `n` rows: `dest` (`levels` distinct codes), `distance` (a number), `time_hour` (an ISO
/// date-time), `arr_delay` (the target).
fn flights(n: usize, levels: usize) -> Table {
    let rows = (0..n)
        .map(|i| {
            let cells = vec![
                format!("D{}", (i * 7919) % levels),
                format!("{}", 100 + (i * 37) % 2000),
                format!("2013-01-{:02} {:02}:00:00", 1 + i % 28, i % 24),
                format!("{}", (i % 61) as f64 - 30.0),
            ];
            (i as u64 + 2, cells)
        })
        .collect();
    Table {
        source: "flights.csv".into(),
        header: ["dest", "distance", "time_hour", "arr_delay"]
            .map(String::from)
            .to_vec(),
        rows,
    }
}

fn auto(max_categories: Option<usize>) -> CodingOptions {
    CodingOptions {
        categorical: Categorical::Auto,
        missing: MissingPolicy::DropRows,
        max_categories,
        ..Default::default()
    }
}

/// A text column of 600 values over 5 000 rows is refused by the default cap of 50, naming
/// the column and its count; a cap above it codes it (600 inputs).
#[test]
fn a_column_of_more_values_than_the_cap_is_refused() {
    let t = flights(5_000, 600);
    let inputs = [0, 1]; // dest, distance
    let e = InputCoding::fit(&t, &inputs, Some(3), &auto(None)).unwrap_err();
    match &e {
        Error::Table(TableError::TooManyCategories {
            column,
            distinct,
            cap,
            ..
        }) => assert_eq!((column.as_str(), *distinct, *cap), ("dest", 600, 50)),
        other => panic!("{other:?}"),
    }
    let m = e.to_string();
    for part in ["'dest' has 600 distinct values", "50 categories", "drop"] {
        assert!(m.contains(part), "{m} lacks {part}");
    }
    let fitted = InputCoding::fit(&t, &inputs, Some(3), &auto(Some(600))).unwrap();
    assert_eq!(fitted.coding.input_names().len(), 601);
    // Named columns are capped too.
    let named = CodingOptions {
        categorical: Categorical::Named(vec!["dest".into()]),
        ..auto(None)
    };
    assert!(InputCoding::fit(&t, &inputs, Some(3), &named).is_err());
    // 50 values are within the default cap.
    assert!(InputCoding::fit(&flights(500, 50), &inputs, Some(3), &auto(None)).is_ok());
}

/// A column of ISO date-times found by `auto` is refused with the way forward, not coded as
/// one input per distinct hour (168 here, within a cap of 1 000).
#[test]
fn a_date_column_is_refused_not_one_hot_coded() {
    let t = flights(2_000, 10);
    let e = InputCoding::fit(&t, &[0, 1, 2], Some(3), &auto(Some(1_000))).unwrap_err();
    match &e {
        Error::Table(TableError::DateColumn { column, line, .. }) => {
            assert_eq!((column.as_str(), *line), ("time_hour", 2))
        }
        other => panic!("{other:?}"),
    }
    assert!(e.to_string().contains("days since 1970-01-01"), "{e}");
    // Dates alone, and the words that are not dates.
    for cell in [
        "2013-01-01",
        "2013-01-01T05:15",
        "2013-01-01 05:15:00.5+01:00",
    ] {
        assert!(is_iso_datetime(cell), "{cell}");
    }
    for cell in [
        "2013/01/01",
        "20130101",
        "JFK",
        "2013-1-1",
        "2013-01-01 noon",
    ] {
        assert!(!is_iso_datetime(cell), "{cell}");
    }
}

/// The coded matrix's size is counted before it is allocated: an overflow or a size beyond
/// the memory is a typed error, not the allocator's abort.
#[test]
fn coded_inputs_too_large_are_a_typed_error() {
    let e = check_encoded_size("t.csv", usize::MAX, 2).unwrap_err();
    assert!(
        matches!(
            e,
            Error::Table(TableError::EncodedTooLarge { bytes: None, .. })
        ),
        "{e:?}"
    );
    assert!(e.to_string().contains("64 bits"), "{e}");
    // 2⁴⁰ rows × 8 inputs: 64 TiB, countable, more than any machine here has.
    if crate::memory::available_memory().is_some() {
        let e = check_encoded_size("t.csv", 1 << 40, 8).unwrap_err();
        assert!(e.to_string().contains("available"), "{e}");
    }
    assert!(check_encoded_size("t.csv", 1_000, 10).is_ok());
}

/// Found by the encoder fuzz target (issue 43): a table naming two columns alike was fitted
/// by position and applied by name, so the coding read the first column for the second (a
/// category "unknown" in its own training table, or the wrong column's numbers). Such a
/// table is refused at fit and at apply, as the CSV reader refuses such a header.
#[test]
fn a_table_naming_two_columns_alike_is_refused() {
    let table = Table {
        source: "X".into(),
        header: vec!["a".into(), "a".into()],
        rows: vec![
            (2, vec!["1".into(), "x".into()]),
            (3, vec!["2".into(), "y".into()]),
        ],
    };
    let opts = CodingOptions {
        categorical: Categorical::Auto,
        ..Default::default()
    };
    let e = InputCoding::fit(&table, &[0, 1], None, &opts).unwrap_err();
    assert!(
        matches!(&e, Error::DuplicateColumn { name, first: 1, second: 2, .. } if name == "a"),
        "{e}"
    );
    let coding = InputCoding::default();
    let e = coding.apply(&table, &["a".into()], None).unwrap_err();
    assert!(matches!(e, Error::DuplicateColumn { .. }), "{e}");
}

/// A row narrower than the header, or a column index past the last, is a typed error naming
/// it (the CSV reader and the Python bridge never hand one over; a library caller may).
#[test]
fn a_ragged_table_or_a_column_past_the_last_is_refused() {
    let mut table = Table {
        source: "X".into(),
        header: vec!["a".into(), "y".into()],
        rows: vec![(2, vec!["1".into(), "0".into()]), (3, vec!["2".into()])],
    };
    let opts = CodingOptions::default();
    let e = InputCoding::fit(&table, &[0], Some(1), &opts).unwrap_err();
    assert!(matches!(e, Error::Csv { line: 3, .. }), "{e}");
    assert!(
        e.to_string().contains("1 fields, but the header has 2"),
        "{e}"
    );
    table.rows[1].1.push("1".into());
    let e = InputCoding::fit(&table, &[0], Some(2), &opts).unwrap_err();
    assert!(e.to_string().contains("table column index"), "{e}");
    let fitted = InputCoding::fit(&table, &[0], Some(1), &opts).unwrap();
    assert!(fitted.coding.apply(&table, &["a".into()], Some(5)).is_err());
}
