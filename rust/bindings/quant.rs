//! The `vectors=` option of `ScopeState`: which storage a scope keeps (see
//! `crate::quant`), refused with a typed error when it is not a known name.

use pyo3::prelude::*;
use pyo3::types::PyString;

use super::errors::dtype_error;
use crate::quant::Storage;

/// `None` means float32, the default; a str must name a storage.
pub(crate) fn storage(py: Python<'_>, vectors: Option<&Bound<'_, PyAny>>) -> PyResult<Storage> {
    let Some(v) = vectors else { return Ok(Storage::Float32) };
    let s = v.cast::<PyString>().map_err(|_| {
        let ty = v.get_type().name().map(|n| n.to_string()).unwrap_or_else(|_| "?".into());
        dtype_error(py, format!("vectors must be a str, got {ty}; pass vectors=\"float32\" or vectors=\"int8\""))
    })?;
    Ok(Storage::parse(&s.to_string_lossy())?)
}
