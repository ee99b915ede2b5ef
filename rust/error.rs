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
