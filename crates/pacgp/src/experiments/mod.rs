//! The seed papers' experiments as library functions returning tables.

pub mod classification;
pub mod opper_winther;
pub mod pac_gp;
pub mod pac_sgp;
pub mod tighter_bounds;
pub mod tighter_classifiers;
pub mod zhang;
