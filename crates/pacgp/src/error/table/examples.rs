//! One error of every kind ([`TableError::examples`]): the catalogue front ends test their wording
//! against, checked complete by an exhaustive match.

use super::*;

impl TableError {
    /// One error of every kind, for front ends' tests of their wording (every flag a message
    /// suggests must be one the command accepts).
    pub fn examples() -> Vec<TableError> {
        let bad = BadValue {
            given: "maybe".into(),
            allowed: "drop, zero or mean".into(),
        };
        let p = || "f.csv".to_string();
        let c = || "a".to_string();
        let all = vec![
            TableError::Unparsable {
                option: TableOption::Missing,
                bad,
            },
            TableError::CategoricalAutoAndNames,
            TableError::MissingValue {
                line: 3,
                column: c(),
                cell: "NA".into(),
                read_as_missing: "empty, ?, NA".into(),
            },
            TableError::MissingTarget {
                line: 3,
                column: c(),
                cell: String::new(),
                read_as_missing: "empty, ?, NA".into(),
            },
            TableError::LabelReadAsMissing {
                path: p(),
                column: c(),
                line: 2,
                cell: "NA".into(),
                rows: 50,
                read_as_missing: Box::default(),
            },
            TableError::NoCompleteRows { path: p() },
            TableError::TextColumns {
                path: p(),
                found: "'a' ('x' at line 2)".into(),
                names: vec![c()],
            },
            TableError::BadNumbers {
                path: p(),
                column: c(),
                cells: vec![(4, "1,234".into())],
                bad: 1,
                of: 100,
            },
            TableError::CategoricalNotInput { column: c() },
            TableError::UnknownCategory {
                path: p(),
                line: 2,
                column: c(),
                value: "z".into(),
                known: "x, y".into(),
            },
            TableError::HeaderLooksLikeData {
                path: p(),
                first: "1,2,3".into(),
            },
            TableError::DroppedTarget { column: c() },
            TableError::OnlyTargetLeft {
                path: p(),
                dropped: vec![c()],
                target: "y".into(),
            },
            TableError::TargetNotNumber {
                path: p(),
                line: 2,
                column: "y".into(),
                cell: "cat".into(),
            },
            TableError::TooManyCategories {
                path: p(),
                column: c(),
                distinct: 400,
                cap: 50,
            },
            TableError::DateColumn {
                path: p(),
                column: c(),
                line: 2,
                cell: "2020-01-01".into(),
            },
            TableError::EncodedTooLarge {
                path: p(),
                rows: 10,
                inputs: 10,
                bytes: Some(800),
                available: Some(100),
            },
            TableError::PositiveForNumbers,
            TableError::PositiveForClasses {
                k: 3,
                classes: "a, b, c".into(),
            },
            TableError::PositiveNotALabel {
                given: "z".into(),
                negative: "a".into(),
                positive: "b".into(),
            },
        ];
        debug_assert_eq!(
            all.iter()
                .map(Self::kind)
                .collect::<std::collections::BTreeSet<_>>()
                .len(),
            Self::KINDS
        );
        all
    }

    /// How many kinds there are ([`TableError::kind`]).
    pub(super) const KINDS: usize = 20;

    /// The kind's index: an exhaustive match, so a new kind fails to compile here until
    /// [`TableError::examples`] has one.
    pub(super) fn kind(&self) -> usize {
        use TableError as E;
        match self {
            E::Unparsable { .. } => 0,
            E::CategoricalAutoAndNames => 1,
            E::MissingValue { .. } => 2,
            E::MissingTarget { .. } => 3,
            E::LabelReadAsMissing { .. } => 4,
            E::NoCompleteRows { .. } => 5,
            E::TextColumns { .. } => 6,
            E::BadNumbers { .. } => 7,
            E::CategoricalNotInput { .. } => 8,
            E::UnknownCategory { .. } => 9,
            E::HeaderLooksLikeData { .. } => 10,
            E::DroppedTarget { .. } => 11,
            E::OnlyTargetLeft { .. } => 12,
            E::TargetNotNumber { .. } => 13,
            E::TooManyCategories { .. } => 14,
            E::DateColumn { .. } => 15,
            E::EncodedTooLarge { .. } => 16,
            E::PositiveForNumbers => 17,
            E::PositiveForClasses { .. } => 18,
            E::PositiveNotALabel { .. } => 19,
        }
    }
}
