//! The error enum shared by every kernel. The binding layer maps each variant
//! to a Python exception class under `memsieve.MemsieveError`.

use std::fmt;

#[derive(Debug, Clone, PartialEq)]
pub enum CoreError {
    /// NaN/inf values or a zero-norm vector.
    InvalidVector(String),
    /// Wrong rank, width, emptiness or layout.
    Shape(String),
    /// A parameter out of its valid range.
    Config(String),
    /// Corrupt serialized state, or an unknown or duplicate id.
    State(String),
}

impl fmt::Display for CoreError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CoreError::InvalidVector(m)
            | CoreError::Shape(m)
            | CoreError::Config(m)
            | CoreError::State(m) => f.write_str(m),
        }
    }
}

impl std::error::Error for CoreError {}

pub type Result<T> = std::result::Result<T, CoreError>;

/// A `CoreError` of the named kind with a formatted message, in the spirit of
/// polars' `polars_err!`: `err!(State: "id {id} is unknown; add it first")`.
/// Messages start lowercase, carry the offending values and say the fix.
macro_rules! err {
    ($kind:ident: $($fmt:tt)+) => {
        $crate::error::CoreError::$kind(format!($($fmt)+))
    };
}

/// Return early with `err!(..)`: `bail!(Config: "k must be >= 1, got {k}; pass k=8")`.
/// The error is `.into()`-converted, so a binding returning `PyResult` can bail too.
macro_rules! bail {
    ($kind:ident: $($fmt:tt)+) => {
        return Err($crate::error::err!($kind: $($fmt)+).into())
    };
}

/// `bail!` unless the condition holds: `ensure!(n > 0, Shape: "...")`.
macro_rules! ensure {
    ($cond:expr, $kind:ident: $($fmt:tt)+) => {
        if !$cond {
            $crate::error::bail!($kind: $($fmt)+);
        }
    };
}

pub(crate) use {bail, ensure, err};
