//! `pacgp split`: train and test files from one data file.

use anyhow::Result;
use pacgp::data;

use crate::cli::*;

/// `pacgp split`: train and test files from one data file by a seeded permutation.
pub(super) fn split(a: SplitArgs) -> Result<()> {
    let (train_default, test_default) = data::default_split_paths(&a.data);
    let train = a.out_train.unwrap_or(train_default);
    let test = a.out_test.unwrap_or(test_default);
    let done = data::split_file(&a.data, a.test_fraction, a.seed, &train, &test)?;
    if a.json {
        out!("{}", serde_json::to_string(&done)?);
    } else {
        out!(
            "wrote {} training rows to {} and {} test rows to {}",
            done.n_train,
            done.train_path.display(),
            done.n_test,
            done.test_path.display()
        );
    }
    Ok(())
}
