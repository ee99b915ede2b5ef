//! PyO3 bindings, one file per stage of the crate: validate, release the
//! GIL, hand arrays back without copying. This file only assembles the module.

use pyo3::prelude::*;

mod errors;
mod gate;
mod kernels;
mod keyword;
mod linalg;
mod pairs;
mod quant;
mod text;
mod validate;

use errors::exceptions;

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    let e = exceptions(py)?;
    m.add("MemsieveError", e.base.bind(py))?;
    m.add("InvalidVectorError", e.invalid_vector.bind(py))?;
    m.add("ShapeError", e.shape.bind(py))?;
    m.add("DtypeError", e.dtype.bind(py))?;
    m.add("ConfigError", e.config.bind(py))?;
    m.add("StateError", e.state.bind(py))?;
    // The stub's type aliases, so that `from memsieve._core import F32, Route` works at run time.
    let np = py.import("numpy")?;
    let f32_alias = py.import("numpy.typing")?.getattr("NDArray")?.get_item(np.getattr("float32")?)?;
    m.add("F32", f32_alias)?;
    // A Union of three Literals, which is how type checkers see Literal["ADD", "BAND", "NOOP"].
    let typing = py.import("typing")?;
    let literal = typing.getattr("Literal")?;
    let parts = (literal.get_item("ADD")?, literal.get_item("BAND")?, literal.get_item("NOOP")?);
    m.add("Route", typing.getattr("Union")?.get_item(parts)?)?;
    kernels::register(m)?;
    gate::register(m)?;
    keyword::register(m)?;
    text::register(m)?;
    linalg::register(m)?;
    pairs::register(m)?;
    Ok(())
}
