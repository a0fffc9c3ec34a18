//! The seed papers' experiments as library functions returning tables.
