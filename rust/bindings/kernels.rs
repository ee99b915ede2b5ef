//! The kernels' raw results: similarities of rows to queries, the read
//! floor the scans are measured against, and the parallel plan and SIMD path
//! the crate chose.

use numpy::ndarray::Array2;
use numpy::{IntoPyArray, PyArray1, PyArray2};
use pyo3::prelude::*;

use super::validate::{dims, matrix_and_queries, matrix_and_query, output_size, slice, Arg};
use crate::error::err;
use crate::kernels::par::Plan;
use crate::kernels::sweep;

type F32Array<'py> = Bound<'py, PyArray1<f32>>;

#[pyfunction]
fn similarities<'py>(py: Python<'py>, matrix: &Bound<'py, PyAny>, query: &Bound<'py, PyAny>) -> PyResult<F32Array<'py>> {
    let mq = matrix_and_query(matrix, query)?;
    let (ms, d, qs) = (slice(&mq.m)?, mq.d, slice(&mq.q)?);
    let out = py.detach(|| sweep::similarities(ms, d, qs, Plan::Auto));
    Ok(PyArray1::from_vec(py, out))
}

#[pyfunction]
fn similarities_batch<'py>(py: Python<'py>, matrix: &Bound<'py, PyAny>, queries: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyArray2<f32>>> {
    let mq = matrix_and_queries(matrix, queries)?;
    let (n, d, b) = (mq.n, mq.d, mq.b);
    output_size(b, n, "the similarity matrix")?;
    let (ms, qs) = (slice(&mq.m)?, slice(&mq.q)?);
    let out = py.detach(|| sweep::similarities_batch(ms, d, qs, Plan::Auto));
    let arr = Array2::from_shape_vec((b, n), out).map_err(|e| PyErr::from(err!(Shape: "{e}")))?;
    Ok(arr.into_pyarray(py))
}

#[pyfunction]
#[pyo3(signature = (matrix, *, parallel=Arg::Flag(false)), text_signature = "(matrix, *, parallel=False)")]
fn _read_floor(py: Python<'_>, matrix: &Bound<'_, PyAny>, parallel: Arg<'_>) -> PyResult<f64> {
    let parallel = parallel.flag(py, "parallel")?;
    let m = super::validate::matrix(matrix, "matrix")?;
    let (_, d) = dims(&m, "matrix")?;
    let ms = slice(&m)?;
    let plan = if parallel { Plan::Chunked } else { Plan::Serial };
    Ok(py.detach(|| sweep::read_floor(ms, d, plan)))
}

#[pyfunction]
fn _parallel_config() -> (usize, usize) {
    (crate::kernels::par::threads(), crate::kernels::par::PAR_MIN_ELEMENTS)
}

#[pyfunction]
fn _isa() -> &'static str {
    crate::kernels::isa::isa().name()
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(similarities, m)?)?;
    m.add_function(wrap_pyfunction!(similarities_batch, m)?)?;
    m.add_function(wrap_pyfunction!(_read_floor, m)?)?;
    m.add_function(wrap_pyfunction!(_parallel_config, m)?)?;
    m.add_function(wrap_pyfunction!(_isa, m)?)?;
    Ok(())
}
