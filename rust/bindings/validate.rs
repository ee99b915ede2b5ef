//! Extraction and validation of numpy arguments: dtype, rank, layout, width,
//! emptiness and finiteness, each failing with a typed error and a fix.

use numpy::{PyArray1, PyArray2, PyArrayDescrMethods, PyArrayMethods, PyReadonlyArray1, PyReadonlyArray2, PyUntypedArray, PyUntypedArrayMethods};
use pyo3::prelude::*;

use super::dtype_error;
use crate::error::{CoreError, Result};

const FIX_F32: &str = "use np.ascontiguousarray(x, dtype=np.float32)";

fn untyped<'a, 'py>(
    obj: &'a Bound<'py, PyAny>,
    name: &str,
    want: &str,
) -> PyResult<&'a Bound<'py, PyUntypedArray>> {
    obj.cast::<PyUntypedArray>().map_err(|_| {
        let ty = obj.get_type().name().map(|n| n.to_string()).unwrap_or_else(|_| "?".into());
        dtype_error(obj.py(), format!("expected {name} as a numpy float32 array {want}, got {ty}; {FIX_F32}"))
    })
}

fn check_layout(py: Python<'_>, a: &Bound<'_, PyUntypedArray>, name: &str, rank: usize, want: &str, elem: &str) -> PyResult<()> {
    let dt = a.dtype();
    let ok = match elem {
        "float32" => dt.is_equiv_to(&numpy::dtype::<f32>(py)),
        _ => dt.is_equiv_to(&numpy::dtype::<i64>(py)),
    };
    let fix = if elem == "float32" { FIX_F32 } else { "use np.ascontiguousarray(ids, dtype=np.int64)" };
    if !ok {
        return Err(dtype_error(py, format!("expected {name} as {elem} {want}, got {dt} {:?}; {fix}", a.shape())));
    }
    if a.ndim() != rank {
        return Err(CoreError::Shape(format!(
            "expected {name} of shape {want}, got {} dimension(s) {:?}; reshape it, e.g. x.reshape({})",
            a.ndim(),
            a.shape(),
            if rank == 1 { "-1" } else { "1, -1" }
        ))
        .into());
    }
    if !a.is_c_contiguous() {
        return Err(CoreError::Shape(format!("expected {name} C-contiguous {want}, got a strided view {:?}; {fix}", a.shape())).into());
    }
    Ok(())
}

fn borrow_err(name: &str) -> PyErr {
    CoreError::Shape(format!("{name} is being written by another borrower; pass a copy (x.copy())")).into()
}

/// A float32 C-contiguous (n, d) array.
pub(crate) fn matrix<'py>(obj: &Bound<'py, PyAny>, name: &str) -> PyResult<PyReadonlyArray2<'py, f32>> {
    let py = obj.py();
    let a = untyped(obj, name, "(n, d)")?;
    check_layout(py, a, name, 2, "(n, d)", "float32")?;
    let arr = a.cast::<PyArray2<f32>>().map_err(|_| dtype_error(py, format!("expected {name} as float32; {FIX_F32}")))?;
    arr.try_readonly().map_err(|_| borrow_err(name))
}

/// A float32 C-contiguous (d,) array.
pub(crate) fn vector<'py>(obj: &Bound<'py, PyAny>, name: &str) -> PyResult<PyReadonlyArray1<'py, f32>> {
    let py = obj.py();
    let a = untyped(obj, name, "(d,)")?;
    check_layout(py, a, name, 1, "(d,)", "float32")?;
    let arr = a.cast::<PyArray1<f32>>().map_err(|_| dtype_error(py, format!("expected {name} as float32; {FIX_F32}")))?;
    arr.try_readonly().map_err(|_| borrow_err(name))
}

/// An int64 C-contiguous (n,) array.
pub(crate) fn ids<'py>(obj: &Bound<'py, PyAny>, name: &str) -> PyResult<PyReadonlyArray1<'py, i64>> {
    let py = obj.py();
    let a = obj.cast::<PyUntypedArray>().map_err(|_| {
        dtype_error(py, format!("expected {name} as a numpy int64 array (n,); use np.asarray(ids, dtype=np.int64)"))
    })?;
    check_layout(py, a, name, 1, "(n,)", "int64")?;
    let arr = a.cast::<PyArray1<i64>>().map_err(|_| dtype_error(py, format!("expected {name} as int64")))?;
    arr.try_readonly().map_err(|_| borrow_err(name))
}

/// The slice of a validated array (always contiguous after the checks above).
pub(crate) fn slice<'a, T: numpy::Element, D: numpy::ndarray::Dimension>(
    a: &'a numpy::PyReadonlyArray<'_, T, D>,
) -> Result<&'a [T]> {
    a.as_slice().map_err(|_| CoreError::Shape("array is not contiguous; use np.ascontiguousarray(x)".into()))
}

/// Shape of a matrix as (rows, width), requiring width >= 1.
pub(crate) fn dims(m: &PyReadonlyArray2<'_, f32>, name: &str) -> Result<(usize, usize)> {
    let s = m.shape();
    if s[1] == 0 {
        return Err(CoreError::Shape(format!("expected {name} of shape (n, d) with d >= 1, got {s:?}; pass embedding rows")));
    }
    Ok((s[0], s[1]))
}

/// Require at least one row.
pub(crate) fn non_empty(n: usize, d: usize, name: &str) -> Result<()> {
    if n == 0 {
        return Err(CoreError::Shape(format!(
            "expected {name} with at least one row, got shape (0, {d}); pass a non-empty array"
        )));
    }
    Ok(())
}

/// A query that must match the matrix width and be a finite unit vector.
pub(crate) fn query_against(q: &[f32], d: usize, name: &str) -> Result<()> {
    if q.len() != d {
        return Err(CoreError::Shape(format!(
            "expected {name} of width {d} to match the matrix, got ({},); embed both with the same model",
            q.len()
        )));
    }
    crate::vector::check_unit(q, name)
}

/// Every row of a (b, d) query block checked like `query_against`.
pub(crate) fn queries_against(qs: &[f32], b: usize, qd: usize, d: usize) -> Result<()> {
    if qd != d {
        return Err(CoreError::Shape(format!(
            "expected queries of shape (b, {d}) to match the matrix, got ({b}, {qd}); embed both with the same model"
        )));
    }
    non_empty(b, qd, "queries")?;
    for (i, q) in qs.chunks_exact(d).enumerate() {
        crate::vector::check_unit(q, &format!("queries row {i}"))?;
    }
    Ok(())
}

/// A scope matrix and a block of queries, each validated and checked against the other.
pub(crate) struct MatrixQueries<'py> {
    pub m: PyReadonlyArray2<'py, f32>,
    pub q: PyReadonlyArray2<'py, f32>,
    pub n: usize,
    pub d: usize,
    pub b: usize,
}

pub(crate) fn matrix_and_queries<'py>(
    matrix_obj: &Bound<'py, PyAny>,
    queries_obj: &Bound<'py, PyAny>,
) -> PyResult<MatrixQueries<'py>> {
    let m = matrix(matrix_obj, "matrix")?;
    let (n, d) = dims(&m, "matrix")?;
    let q = matrix(queries_obj, "queries")?;
    let (b, qd) = (q.shape()[0], q.shape()[1]);
    queries_against(slice(&q)?, b, qd, d)?;
    Ok(MatrixQueries { m, q, n, d, b })
}

/// A count-like integer argument that must be >= `min`.
pub(crate) fn count(v: i64, name: &str, min: i64, example: &str) -> Result<usize> {
    if v < min {
        return Err(CoreError::Config(format!("{name} must be >= {min}, got {v}; {example}")));
    }
    usize::try_from(v).map_err(|_| CoreError::Config(format!("{name}={v} is too large; {example}")))
}

/// Every row finite (projection inputs need not be unit vectors).
pub(crate) fn finite_rows(x: &[f32], name: &str) -> Result<()> {
    if let Some(i) = x.iter().position(|v| !v.is_finite()) {
        return Err(CoreError::InvalidVector(format!(
            "{name} holds {} at flat index {i}; values must be finite, clean them with np.nan_to_num or drop the row",
            x[i]
        )));
    }
    Ok(())
}

/// Refuse outputs too large to allocate, which would abort the process
/// instead of raising: `rows * width` float32 values at most 2^32.
pub(crate) fn output_size(rows: usize, width: usize, what: &str) -> Result<()> {
    match rows.checked_mul(width) {
        Some(n) if n <= 1 << 32 => Ok(()),
        _ => Err(CoreError::Config(format!(
            "{what} would hold {rows} x {width} values, over the 2^32 limit; ask for fewer rows or a smaller width"
        ))),
    }
}
