//! The consolidation kernel: every pair of a scope's rows at or above a cosine.

use numpy::PyArray1;
use pyo3::prelude::*;

use super::validate::{dims, slice, Arg};
use crate::kernels::{pairs, par};

type PairArrays<'py> = (Bound<'py, PyArray1<i64>>, Bound<'py, PyArray1<i64>>, Bound<'py, PyArray1<f32>>);

/// `(left, right, sim)`: every pair of rows i < j with cosine >= `min_sim`, sorted by (i, j).
#[pyfunction]
#[pyo3(signature = (matrix, min_sim, *, max_pairs=Arg::Int(pairs::DEFAULT_MAX_PAIRS as i64)),
       text_signature = "(matrix, min_sim, *, max_pairs=16777216)")]
fn pairs_above<'py>(py: Python<'py>, matrix: &Bound<'py, PyAny>, min_sim: Arg<'py>, max_pairs: Arg<'py>) -> PyResult<PairArrays<'py>> {
    let min_sim = min_sim.float(py, "min_sim")? as f32;
    let max_pairs = max_pairs.count(py, "max_pairs", 1, "the default is max_pairs=16777216")?;
    let m = super::validate::matrix(matrix, "matrix")?;
    let (_, d) = dims(&m, "matrix")?;
    let ms = slice(&m)?;
    // The scan, the checks of every row and the output all run without the GIL.
    let found = py.detach(|| pairs::pairs_above(ms, d, min_sim, max_pairs, par::Plan::Auto))?;
    let left: Vec<i64> = found.left.iter().map(|&i| i64::from(i)).collect();
    let right: Vec<i64> = found.right.iter().map(|&j| i64::from(j)).collect();
    Ok((PyArray1::from_vec(py, left), PyArray1::from_vec(py, right), PyArray1::from_vec(py, found.sim)))
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(pairs_above, m)?)?;
    Ok(())
}
