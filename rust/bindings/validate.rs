//! Extraction and validation of arguments, each failing with a typed error
//! and a fix: numpy arrays (dtype, rank, layout, width, emptiness,
//! finiteness) and scalars (`Arg`: ints, floats, flags and clip pairs).

use numpy::{PyArray1, PyArray2, PyArrayDescrMethods, PyArrayMethods, PyReadonlyArray1, PyReadonlyArray2, PyUntypedArray, PyUntypedArrayMethods};
use pyo3::exceptions::PyOverflowError;
use pyo3::prelude::*;
use pyo3::types::PyTuple;

use super::errors::dtype_error;
use crate::error::{bail, err, Result};

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
        bail!(
            Shape: "expected {name} of shape {want}, got {} dimension(s) {:?}; reshape it, e.g. x.reshape({})", a.ndim(), a.shape(), if rank == 1 { "-1" } else { "1, -1" }
        );
    }
    if !a.is_c_contiguous() {
        bail!(Shape: "expected {name} C-contiguous {want}, got a strided view {:?}; {fix}", a.shape());
    }
    Ok(())
}

fn borrow_err(name: &str) -> PyErr {
    err!(Shape: "{name} is being written by another borrower; pass a copy (x.copy())").into()
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
    a.as_slice().map_err(|_| err!(Shape: "array is not contiguous; use np.ascontiguousarray(x)"))
}

/// Shape of a matrix as (rows, width), requiring width >= 1.
pub(crate) fn dims(m: &PyReadonlyArray2<'_, f32>, name: &str) -> Result<(usize, usize)> {
    let s = m.shape();
    if s[1] == 0 {
        bail!(Shape: "expected {name} of shape (n, d) with d >= 1, got {s:?}; pass embedding rows");
    }
    Ok((s[0], s[1]))
}

/// Require at least one row.
pub(crate) fn non_empty(n: usize, d: usize, name: &str) -> Result<()> {
    if n == 0 {
        bail!(Shape: "expected {name} with at least one row, got shape (0, {d}); pass a non-empty array");
    }
    Ok(())
}

/// A query that must match the matrix width and be a finite unit vector.
pub(crate) fn query_against(q: &[f32], d: usize, name: &str) -> Result<()> {
    if q.len() != d {
        bail!(
            Shape: "expected {name} of width {d} to match the matrix, got ({},); embed both with the same model", q.len()
        );
    }
    crate::kernels::vector::check_unit(q, name)
}

/// Every row of a (b, d) query block checked like `query_against`.
pub(crate) fn queries_against(qs: &[f32], b: usize, qd: usize, d: usize) -> Result<()> {
    if qd != d {
        bail!(
            Shape: "expected queries of shape (b, {d}) to match the matrix, got ({b}, {qd}); embed both with the same model"
        );
    }
    non_empty(b, qd, "queries")?;
    for (i, q) in qs.chunks_exact(d).enumerate() {
        crate::kernels::vector::check_unit(q, &format!("queries row {i}"))?;
    }
    Ok(())
}

/// A scope matrix and one query, each validated and checked against the other.
pub(crate) struct MatrixQuery<'py> {
    pub m: PyReadonlyArray2<'py, f32>,
    pub q: PyReadonlyArray1<'py, f32>,
    pub d: usize,
}

pub(crate) fn matrix_and_query<'py>(matrix_obj: &Bound<'py, PyAny>, query_obj: &Bound<'py, PyAny>) -> PyResult<MatrixQuery<'py>> {
    let m = matrix(matrix_obj, "matrix")?;
    let (_, d) = dims(&m, "matrix")?;
    let q = vector(query_obj, "query")?;
    query_against(slice(&q)?, d, "query")?;
    Ok(MatrixQuery { m, q, d })
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

/// Every row finite (projection inputs need not be unit vectors).
pub(crate) fn finite_rows(x: &[f32], name: &str) -> Result<()> {
    if let Some(i) = x.iter().position(|v| !v.is_finite()) {
        bail!(
            InvalidVector: "{name} holds {} at flat index {i}; values must be finite, clean them with np.nan_to_num or drop the row", x[i]
        );
    }
    Ok(())
}

/// The most float32 values one output may hold: 2^28 (1 GiB). A larger
/// request is refused with a ConfigError before anything is allocated, since
/// a failed allocation aborts the process instead of raising.
pub(crate) const MAX_OUTPUT_VALUES: usize = 1 << 28;

/// Refuse an output of `rows * width` values over `MAX_OUTPUT_VALUES`.
pub(crate) fn output_size(rows: usize, width: usize, what: &str) -> Result<()> {
    match rows.checked_mul(width) {
        Some(n) if n <= MAX_OUTPUT_VALUES => Ok(()),
        _ => Err(err!(Config: "{what} would hold {rows} x {width} values, over the 2^28 limit; ask for fewer rows or a smaller width")),
    }
}

/// A scalar argument exactly as Python passed it, or its signature default.
///
/// Bindings take every scalar as `Arg` rather than letting PyO3 convert it,
/// because PyO3 accepts `True` as the int 1 and raises a bare OverflowError
/// or TypeError for a huge int, None or a string; the methods below raise
/// a typed error that names the argument instead.
pub(crate) enum Arg<'py> {
    Given(Bound<'py, PyAny>),
    Int(i64),
    Float(f64),
    Flag(bool),
}

impl<'a, 'py> FromPyObject<'a, 'py> for Arg<'py> {
    type Error = PyErr;

    fn extract(obj: Borrowed<'a, 'py, PyAny>) -> PyResult<Self> {
        Ok(Arg::Given(obj.to_owned()))
    }
}

/// How a rejected value is shown: its repr, or its size for a huge int
/// (whose repr may be too long to print, or refused by Python).
fn shown(obj: &Bound<'_, PyAny>) -> String {
    if let Ok(bits) = obj.call_method0("bit_length").and_then(|b| b.extract::<u64>()) {
        if bits > 128 {
            return format!("an int of {bits} bits");
        }
    }
    let r = obj.repr().map(|r| r.to_string()).unwrap_or_else(|_| "?".into());
    if r.chars().count() > 60 {
        format!("{}...", r.chars().take(57).collect::<String>())
    } else {
        r
    }
}

fn type_error(obj: &Bound<'_, PyAny>, name: &str, want: &str, example: &str) -> PyErr {
    let ty = obj.get_type().name().map(|n| n.to_string()).unwrap_or_else(|_| "?".into());
    // True == 1 in Python, so say why a bool is refused where a number is wanted.
    let why = if is_bool(obj) && want != "True or False" { " (a bool is not a number here)" } else { "" };
    dtype_error(obj.py(), format!("{name} must be {want}{why}, got {ty} {}; {example}", shown(obj)))
}

/// Python's bool and numpy's bool_ (PyO3 extracts exactly these as bool).
fn is_bool(obj: &Bound<'_, PyAny>) -> bool {
    obj.extract::<bool>().is_ok()
}

impl<'py> Arg<'py> {
    fn object(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        Ok(match self {
            Arg::Given(o) => o.clone(),
            Arg::Int(v) => v.into_pyobject(py)?.into_any(),
            Arg::Float(v) => v.into_pyobject(py)?.into_any(),
            Arg::Flag(v) => v.into_pyobject(py)?.to_owned().into_any(),
        })
    }

    /// The value as an i64; Err(true) when it is an integer out of range.
    fn i64_of(obj: &Bound<'py, PyAny>) -> std::result::Result<i64, bool> {
        if is_bool(obj) {
            return Err(false);
        }
        obj.extract::<i64>().map_err(|e| e.is_instance_of::<PyOverflowError>(obj.py()))
    }

    /// Any integer in i64 (an id): not a bool, a float or a numeric string.
    pub(crate) fn int(&self, py: Python<'py>, name: &str, example: &str) -> PyResult<i64> {
        let obj = self.object(py)?;
        Self::i64_of(&obj).map_err(|overflow| match overflow {
            true => err!(Config: "{name} = {} is out of range, it must fit in 64 bits; {example}", shown(&obj)).into(),
            false => type_error(&obj, name, "an integer", example),
        })
    }

    /// A size or count: an integer >= `min`.
    pub(crate) fn count(&self, py: Python<'py>, name: &str, min: usize, example: &str) -> PyResult<usize> {
        let obj = self.object(py)?;
        let out_of_range = |v: String| err!(Config: "{name} must be >= {min} (and below 2^63), got {v}; {example}").into();
        match Self::i64_of(&obj) {
            Ok(v) => usize::try_from(v).ok().filter(|&n| n >= min).ok_or_else(|| out_of_range(v.to_string())),
            Err(true) => Err(out_of_range(shown(&obj))),
            Err(false) => Err(type_error(&obj, name, "an integer", example)),
        }
    }

    /// A seed: any integer, reduced modulo 2^64 (negative and huge values wrap).
    pub(crate) fn seed(&self, py: Python<'py>, name: &str) -> PyResult<u64> {
        let obj = self.object(py)?;
        let example = "pass any int, e.g. seed=0";
        if is_bool(&obj) {
            return Err(type_error(&obj, name, "an integer", example));
        }
        let index = py.import("operator")?.getattr("index")?;
        let i = index.call1((&obj,)).map_err(|_| type_error(&obj, name, "an integer", example))?;
        i.call_method1("__and__", (u64::MAX,))?.extract::<u64>()
    }

    /// A float (an int converts); range checks are the kernels'.
    pub(crate) fn float(&self, py: Python<'py>, name: &str) -> PyResult<f64> {
        let obj = self.object(py)?;
        let example = "pass a float such as 0.5";
        if is_bool(&obj) {
            return Err(type_error(&obj, name, "a number", example));
        }
        obj.extract::<f64>().map_err(|e| {
            if e.is_instance_of::<PyOverflowError>(py) {
                err!(Config: "{name} = {} is too large for a float; {example}", shown(&obj)).into()
            } else {
                type_error(&obj, name, "a number", example)
            }
        })
    }

    /// True or False (Python's or numpy's), nothing else.
    pub(crate) fn flag(&self, py: Python<'py>, name: &str) -> PyResult<bool> {
        let obj = self.object(py)?;
        obj.extract::<bool>().map_err(|_| type_error(&obj, name, "True or False", &format!("pass {name}=True")))
    }
}

/// An optional float: None (or absent) stays None.
pub(crate) fn opt_float(py: Python<'_>, arg: Option<Arg<'_>>, name: &str) -> PyResult<Option<f64>> {
    arg.map(|a| a.float(py, name)).transpose()
}

/// An optional (lo, hi) pair of floats, such as `clip`.
pub(crate) fn opt_pair(py: Python<'_>, arg: Option<Arg<'_>>, name: &str, example: &str) -> PyResult<Option<(f64, f64)>> {
    let Some(arg) = arg else { return Ok(None) };
    let obj = arg.object(py)?;
    let t = obj.cast::<PyTuple>().ok().filter(|t| t.len() == 2).ok_or_else(|| type_error(&obj, name, "a (lo, hi) tuple or None", example))?;
    let lo = Arg::Given(t.get_item(0)?).float(py, &format!("{name}[0]"))?;
    let hi = Arg::Given(t.get_item(1)?).float(py, &format!("{name}[1]"))?;
    Ok(Some((lo, hi)))
}
