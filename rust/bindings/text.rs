//! The tokenizer for Python, and how a text argument is read.
//!
//! Text is read lossily: a lone surrogate (which no store could hold either)
//! becomes U+FFFD, which is no word, instead of failing the call. A non-str
//! where text is expected is a DtypeError that names the argument.

use std::borrow::Cow;

use pyo3::prelude::*;
use pyo3::types::PyString;

use super::errors::dtype_error;
use crate::text;

pub(super) fn type_name(obj: &Bound<'_, PyAny>) -> String {
    obj.get_type().name().map(|n| n.to_string()).unwrap_or_default()
}

/// A str argument, read lossily; anything else is a DtypeError naming the
/// argument (PyO3 would raise a bare TypeError).
pub(super) fn text_arg<'a>(obj: &'a Bound<'_, PyAny>, name: &str) -> PyResult<Cow<'a, str>> {
    let s = obj.cast::<PyString>().map_err(|_| {
        dtype_error(obj.py(), format!("{name} must be a str, got {}; pass str({name})", type_name(obj)))
    })?;
    Ok(s.to_string_lossy())
}

#[pyfunction]
fn tokenize(text: &Bound<'_, PyAny>) -> PyResult<Vec<String>> {
    Ok(text::terms(&text_arg(text, "text")?))
}

#[pyfunction]
fn tokenize_kinds(text: &Bound<'_, PyAny>) -> PyResult<Vec<(String, String, &'static str)>> {
    Ok(text::tokenize(&text_arg(text, "text")?).into_iter().map(|t| (t.term, t.surface, t.kind.as_str())).collect())
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(tokenize, m)?)?;
    m.add_function(wrap_pyfunction!(tokenize_kinds, m)?)?;
    Ok(())
}
