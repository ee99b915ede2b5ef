//! Linear algebra for Python: random projections and a fitted Pca.

use numpy::ndarray::Array2;
use numpy::{IntoPyArray, PyArray1, PyArray2};
use pyo3::prelude::*;

use super::validate::{dims, finite_rows, matrix, non_empty, output_size, slice, Arg};
use crate::error::err;
use crate::linalg::projection;

#[pyfunction]
#[pyo3(signature = (x, out_dim, *, seed, normalize=Arg::Flag(true)), text_signature = "(x, out_dim, *, seed, normalize=True)")]
fn random_projection<'py>(py: Python<'py>, x: &Bound<'py, PyAny>, out_dim: Arg<'py>, seed: Arg<'py>, normalize: Arg<'py>) -> PyResult<Bound<'py, PyArray2<f32>>> {
    let m = super::validate::matrix(x, "x")?;
    let (n, d) = dims(&m, "x")?;
    non_empty(n, d, "x")?;
    let xs = slice(&m)?;
    finite_rows(xs, "x")?;
    let k = out_dim.count(py, "out_dim", 1, "pass e.g. out_dim=64")?;
    let (seed, normalize) = (seed.seed(py, "seed")?, normalize.flag(py, "normalize")?);
    // Both the (out_dim, d) Gaussian matrix and the (n, out_dim) output are allocated.
    output_size(n.max(d), k, "the projection")?;
    let out = py.detach(|| projection::random_projection(xs, d, k, seed, normalize))?;
    let arr = Array2::from_shape_vec((n, k), out).map_err(|e| PyErr::from(err!(Shape: "{e}")))?;
    Ok(arr.into_pyarray(py))
}

#[pyclass(name = "Pca", module = "memsieve._core")]
pub struct PyPca {
    requested: usize,
    fitted: Option<projection::Pca>,
}

impl PyPca {
    fn fitted(&self) -> PyResult<&projection::Pca> {
        self.fitted
            .as_ref()
            .ok_or_else(|| PyErr::from(err!(State: "this Pca is not fitted; call fit(x) first")))
    }
}

#[pymethods]
impl PyPca {
    #[new]
    fn new(py: Python<'_>, n_components: Arg<'_>) -> PyResult<Self> {
        let requested = n_components.count(py, "n_components", 1, "pass e.g. n_components=16")?;
        Ok(PyPca { requested, fitted: None })
    }

    #[getter]
    fn n_components(&self) -> usize {
        self.requested
    }

    /// Width of the fitted rows; 0 before fit.
    #[getter]
    fn dim(&self) -> usize {
        self.fitted.as_ref().map_or(0, |p| p.dim)
    }

    fn fit<'py>(mut slf: PyRefMut<'py, Self>, x: &Bound<'py, PyAny>) -> PyResult<PyRefMut<'py, Self>> {
        let py = slf.py();
        let m = matrix(x, "x")?;
        let (n, d) = dims(&m, "x")?;
        non_empty(n, d, "x")?;
        let xs = slice(&m)?;
        finite_rows(xs, "x")?;
        let k = slf.requested;
        let p = py.detach(|| projection::Pca::fit(xs, d, k))?;
        slf.fitted = Some(p);
        Ok(slf)
    }

    #[pyo3(signature = (x, *, normalize=Arg::Flag(true)), text_signature = "($self, x, *, normalize=True)")]
    fn transform<'py>(&self, py: Python<'py>, x: &Bound<'py, PyAny>, normalize: Arg<'py>) -> PyResult<Bound<'py, PyArray2<f32>>> {
        let p = self.fitted()?;
        let normalize = normalize.flag(py, "normalize")?;
        let m = matrix(x, "x")?;
        let (n, d) = dims(&m, "x")?;
        if d != p.dim {
            return Err(PyErr::from(err!(Shape: "expected x of shape (n, {}) like the fitted rows, got width {d}; transform rows of the same model", p.dim)));
        }
        let xs = slice(&m)?;
        finite_rows(xs, "x")?;
        let out = py.detach(|| p.transform(xs, normalize));
        let arr = Array2::from_shape_vec((n, p.n_components), out).map_err(|e| PyErr::from(err!(Shape: "{e}")))?;
        Ok(arr.into_pyarray(py))
    }

    #[getter]
    fn components<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray2<f32>>> {
        let p = self.fitted()?;
        let arr = Array2::from_shape_vec((p.n_components, p.dim), p.components.clone())
            .map_err(|e| PyErr::from(err!(Shape: "{e}")))?;
        Ok(arr.into_pyarray(py))
    }

    #[getter]
    fn mean<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray1<f32>>> {
        Ok(PyArray1::from_slice(py, &self.fitted()?.mean))
    }
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(random_projection, m)?)?;
    m.add_class::<PyPca>()?;
    Ok(())
}
