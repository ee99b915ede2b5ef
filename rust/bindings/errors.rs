//! The exception classes `memsieve._core` raises, and how a kernel's
//! `CoreError` becomes one.

use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyTuple, PyType};

use crate::error::CoreError;

/// The exception classes, created once at import. Each subclass also derives
/// from the builtin a caller would expect (`ValueError`, `TypeError`), which
/// `create_exception!` cannot express, so they are built with `type()`.
pub(super) struct Exceptions {
    pub base: Py<PyType>,
    pub invalid_vector: Py<PyType>,
    pub shape: Py<PyType>,
    pub dtype: Py<PyType>,
    pub config: Py<PyType>,
    pub state: Py<PyType>,
}

static EXCEPTIONS: PyOnceLock<Exceptions> = PyOnceLock::new();

fn make_class(
    py: Python<'_>,
    name: &str,
    bases: Vec<Bound<'_, PyAny>>,
    doc: &str,
) -> PyResult<Py<PyType>> {
    let ns = PyDict::new(py);
    ns.set_item("__doc__", doc)?;
    ns.set_item("__module__", "memsieve")?;
    let bases = PyTuple::new(py, bases)?;
    let cls = py
        .get_type::<PyType>()
        .call1((name, bases, ns))?
        .cast_into::<PyType>()?;
    Ok(cls.unbind())
}

pub(super) fn exceptions(py: Python<'_>) -> PyResult<&'static Exceptions> {
    EXCEPTIONS.get_or_try_init(py, || {
        let exc = py.get_type::<pyo3::exceptions::PyException>().into_any();
        let value = py.get_type::<pyo3::exceptions::PyValueError>().into_any();
        let type_err = py.get_type::<pyo3::exceptions::PyTypeError>().into_any();
        let base = make_class(py, "MemsieveError", vec![exc], "Base of every error memsieve raises.")?;
        let b = || base.bind(py).clone().into_any();
        Ok(Exceptions {
            invalid_vector: make_class(
                py,
                "InvalidVectorError",
                vec![b(), value.clone()],
                "A vector holds NaN or inf, or has zero norm.",
            )?,
            shape: make_class(
                py,
                "ShapeError",
                vec![b(), value.clone()],
                "An array has the wrong rank or width, is empty, or is not C-contiguous.",
            )?,
            dtype: make_class(py, "DtypeError", vec![b(), type_err], "An array is not float32.")?,
            config: make_class(
                py,
                "ConfigError",
                vec![b(), value],
                "A numeric parameter is out of its valid range.",
            )?,
            state: make_class(
                py,
                "StateError",
                vec![b()],
                "Serialized state is corrupt, or an id is unknown or duplicate.",
            )?,
            base,
        })
    })
}

/// Raise `cls(msg)`; used for the dtype check, which has no CoreError variant
/// because pure-Rust kernels only ever see f32.
pub(crate) fn dtype_error(py: Python<'_>, msg: String) -> PyErr {
    match exceptions(py) {
        Ok(e) => PyErr::from_type(e.dtype.bind(py).clone(), msg),
        Err(err) => err,
    }
}

fn to_py(py: Python<'_>, err: CoreError) -> PyErr {
    let e = match exceptions(py) {
        Ok(e) => e,
        Err(err) => return err,
    };
    let (cls, msg) = match err {
        CoreError::InvalidVector(m) => (&e.invalid_vector, m),
        CoreError::Shape(m) => (&e.shape, m),
        CoreError::Config(m) => (&e.config, m),
        CoreError::State(m) => (&e.state, m),
    };
    PyErr::from_type(cls.bind(py).clone(), msg)
}

/// Every kernel error becomes its Python class, so bindings can use `?` on
/// kernel results. Bindings call this with the GIL held (after `py.detach`
/// returns), so `attach` only re-enters the thread's existing attachment.
impl From<CoreError> for PyErr {
    fn from(err: CoreError) -> PyErr {
        Python::attach(|py| to_py(py, err))
    }
}
