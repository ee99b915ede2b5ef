//! Stateless kernels: similarities, concentration, novelty, projection, SAGE's threshold, routing.

use numpy::ndarray::Array2;
use numpy::{IntoPyArray, PyArray1, PyArray2};
use pyo3::prelude::*;

use super::validate::{dims, finite_rows, matrix_and_query, matrix_and_queries, non_empty, opt_float, opt_pair, output_size, slice, vector, Arg};
use crate::error::CoreError;
use crate::{kappa, novelty, projection, route as routing, threshold, vmf};

type F32Array<'py> = Bound<'py, PyArray1<f32>>;
type Batch<'py> = (Bound<'py, PyArray1<f32>>, Bound<'py, PyArray1<i64>>, Bound<'py, PyArray1<f32>>);

const K_EXAMPLE: &str = "the default is k=10";
const CLIP_EXAMPLE: &str = "SAGE uses clip=(1e-3, 50.0)";

#[pyfunction]
fn similarities<'py>(py: Python<'py>, matrix: &Bound<'py, PyAny>, query: &Bound<'py, PyAny>) -> PyResult<F32Array<'py>> {
    let mq = matrix_and_query(matrix, query)?;
    let (ms, d, qs) = (slice(&mq.m)?, mq.d, slice(&mq.q)?);
    let out = py.detach(|| novelty::similarities(ms, d, qs, novelty::Plan::Auto));
    Ok(PyArray1::from_vec(py, out))
}

#[pyfunction]
fn similarities_batch<'py>(py: Python<'py>, matrix: &Bound<'py, PyAny>, queries: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyArray2<f32>>> {
    let mq = matrix_and_queries(matrix, queries)?;
    let (n, d, b) = (mq.n, mq.d, mq.b);
    output_size(b, n, "the similarity matrix")?;
    let (ms, qs) = (slice(&mq.m)?, slice(&mq.q)?);
    let out = py.detach(|| novelty::similarities_batch(ms, d, qs, novelty::Plan::Auto));
    let arr = Array2::from_shape_vec((b, n), out).map_err(|e| PyErr::from(CoreError::Shape(e.to_string())))?;
    Ok(arr.into_pyarray(py))
}

#[pyfunction]
#[pyo3(signature = (matrix, *, clip=None))]
fn kappa_banerjee(py: Python<'_>, matrix: &Bound<'_, PyAny>, clip: Option<Arg<'_>>) -> PyResult<f64> {
    let clip = opt_pair(py, clip, "clip", CLIP_EXAMPLE)?;
    let m = super::validate::matrix(matrix, "matrix")?;
    let (n, d) = dims(&m, "matrix")?;
    non_empty(n, d, "matrix")?;
    let ms = slice(&m)?;
    Ok(py.detach(|| kappa::banerjee(ms, d, clip))?)
}

#[pyfunction]
#[pyo3(signature = (mean_share, *, c=Arg::Float(4.0), max_kappa=Arg::Float(1e4)), text_signature = "(mean_share, *, c=4.0, max_kappa=10000.0)")]
fn kappa_from_spacing(py: Python<'_>, mean_share: Arg<'_>, c: Arg<'_>, max_kappa: Arg<'_>) -> PyResult<f64> {
    let (m, c, max_kappa) = (mean_share.float(py, "mean_share")?, c.float(py, "c")?, max_kappa.float(py, "max_kappa")?);
    Ok(kappa::from_spacing(m, c, max_kappa)?)
}

#[pyfunction]
#[pyo3(signature = (mu, kappa, n, *, seed))]
fn sample_vmf<'py>(py: Python<'py>, mu: &Bound<'py, PyAny>, kappa: Arg<'py>, n: Arg<'py>, seed: Arg<'py>) -> PyResult<Bound<'py, PyArray2<f32>>> {
    let m = vector(mu, "mu")?;
    let ms = slice(&m)?;
    crate::vector::check_unit(ms, "mu")?;
    let kappa = kappa.float(py, "kappa")?;
    let n = n.count(py, "n", 0, "pass the number of samples, e.g. n=1000")?;
    let seed = seed.seed(py, "seed")?;
    let d = ms.len();
    output_size(n, d, "the sample")?;
    let out = py.detach(|| vmf::sample(ms, kappa, n, seed))?;
    let arr = Array2::from_shape_vec((n, d), out).map_err(|e| PyErr::from(CoreError::Shape(e.to_string())))?;
    Ok(arr.into_pyarray(py))
}

#[pyfunction]
fn novelty_sage(py: Python<'_>, matrix: &Bound<'_, PyAny>, query: &Bound<'_, PyAny>, kappa: Arg<'_>) -> PyResult<f64> {
    let mq = matrix_and_query(matrix, query)?;
    let (ms, d, qs) = (slice(&mq.m)?, mq.d, slice(&mq.q)?);
    let kappa = kappa.float(py, "kappa")?;
    Ok(py.detach(|| novelty::sage(ms, d, qs, kappa))?)
}

#[pyfunction]
fn novelty_sage_batch<'py>(py: Python<'py>, matrix: &Bound<'py, PyAny>, queries: &Bound<'py, PyAny>, kappa: Arg<'py>) -> PyResult<F32Array<'py>> {
    let mq = matrix_and_queries(matrix, queries)?;
    let kappa = kappa.float(py, "kappa")?;
    let d = mq.d;
    let (ms, qs) = (slice(&mq.m)?, slice(&mq.q)?);
    let v = py.detach(|| novelty::sage_batch(ms, d, qs, kappa))?;
    Ok(PyArray1::from_vec(py, v.into_iter().map(|x| x as f32).collect()))
}

fn single(r: &novelty::KnnScore) -> (f64, i64, f64) {
    match r.nearest() {
        Some((row, s)) => (r.novelty, row as i64, s as f64),
        None => (f64::INFINITY, -1, f64::NAN),
    }
}

fn batch_out<'py>(py: Python<'py>, rs: Vec<novelty::KnnScore>) -> Batch<'py> {
    let (mut nov, mut row, mut cos) = (Vec::with_capacity(rs.len()), Vec::with_capacity(rs.len()), Vec::with_capacity(rs.len()));
    for r in &rs {
        let (a, b, c) = single(r);
        nov.push(a as f32);
        row.push(b);
        cos.push(c as f32);
    }
    (PyArray1::from_vec(py, nov), PyArray1::from_vec(py, row), PyArray1::from_vec(py, cos))
}

#[pyfunction]
fn novelty_knn(py: Python<'_>, matrix: &Bound<'_, PyAny>, query: &Bound<'_, PyAny>, kappa: Arg<'_>, k: Arg<'_>) -> PyResult<(f64, i64, f64)> {
    let mq = matrix_and_query(matrix, query)?;
    let (ms, d, qs) = (slice(&mq.m)?, mq.d, slice(&mq.q)?);
    let kappa = kappa.float(py, "kappa")?;
    let k = k.count(py, "k", 1, K_EXAMPLE)?;
    let r = py.detach(|| novelty::knn(ms, d, qs, kappa, k))?;
    Ok(single(&r))
}

#[pyfunction]
fn novelty_knn_batch<'py>(py: Python<'py>, matrix: &Bound<'py, PyAny>, queries: &Bound<'py, PyAny>, kappa: Arg<'py>, k: Arg<'py>) -> PyResult<Batch<'py>> {
    let mq = matrix_and_queries(matrix, queries)?;
    let d = mq.d;
    let (ms, qs) = (slice(&mq.m)?, slice(&mq.q)?);
    let kappa = kappa.float(py, "kappa")?;
    let k = k.count(py, "k", 1, K_EXAMPLE)?;
    let rs = py.detach(|| novelty::knn_batch(ms, d, qs, kappa, k))?;
    Ok(batch_out(py, rs))
}

#[pyfunction]
fn novelty_from_topk(py: Python<'_>, top_sims: &Bound<'_, PyAny>, kappa: Arg<'_>) -> PyResult<f64> {
    let t = vector(top_sims, "top_sims")?;
    let kappa = kappa.float(py, "kappa")?;
    let ts = slice(&t)?;
    novelty::check_kappa(kappa)?;
    if let Some(i) = ts.iter().position(|s| !(s.is_finite() && s.abs() <= 1.0 + 1e-3)) {
        return Err(PyErr::from(CoreError::InvalidVector(format!(
            "top_sims[{i}] = {} is not a cosine in [-1, 1]; pass cosines of unit vectors",
            ts[i]
        ))));
    }
    Ok(novelty::knn_from_sims(ts, kappa))
}

#[pyfunction]
fn novelty_maxcos(py: Python<'_>, matrix: &Bound<'_, PyAny>, query: &Bound<'_, PyAny>) -> PyResult<(f64, i64, f64)> {
    let mq = matrix_and_query(matrix, query)?;
    let (ms, d, qs) = (slice(&mq.m)?, mq.d, slice(&mq.q)?);
    let r = py.detach(|| novelty::maxcos(ms, d, qs))?;
    Ok(single(&r))
}

#[pyfunction]
fn novelty_maxcos_batch<'py>(py: Python<'py>, matrix: &Bound<'py, PyAny>, queries: &Bound<'py, PyAny>) -> PyResult<Batch<'py>> {
    let mq = matrix_and_queries(matrix, queries)?;
    let d = mq.d;
    let (ms, qs) = (slice(&mq.m)?, slice(&mq.q)?);
    let rs = py.detach(|| novelty::maxcos_batch(ms, d, qs))?;
    Ok(batch_out(py, rs))
}

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
    let arr = Array2::from_shape_vec((n, k), out).map_err(|e| PyErr::from(CoreError::Shape(e.to_string())))?;
    Ok(arr.into_pyarray(py))
}

#[pyfunction]
fn route(py: Python<'_>, novelty: Arg<'_>, tau: Arg<'_>, delta: Arg<'_>) -> PyResult<&'static str> {
    let (novelty, tau, delta) = (novelty.float(py, "novelty")?, tau.float(py, "tau")?, delta.float(py, "delta")?);
    Ok(routing::route(novelty, tau, delta).map(|r| r.as_str())?)
}

#[pyfunction]
#[pyo3(signature = (rho, *, tau0=Arg::Float(0.5), tau_min=Arg::Float(0.05), lam=Arg::Float(2.0)), text_signature = "(rho, *, tau0=0.5, tau_min=0.05, lam=2.0)")]
fn sage_tau_star(py: Python<'_>, rho: Arg<'_>, tau0: Arg<'_>, tau_min: Arg<'_>, lam: Arg<'_>) -> PyResult<f64> {
    let (rho, tau0) = (rho.float(py, "rho")?, tau0.float(py, "tau0")?);
    let (tau_min, lam) = (tau_min.float(py, "tau_min")?, lam.float(py, "lam")?);
    Ok(threshold::sage_tau_star(rho, tau0, tau_min, lam)?)
}

#[pyfunction]
#[pyo3(signature = (prev_tau, tau_star, *, alpha=Arg::Float(0.9)), text_signature = "(prev_tau, tau_star, *, alpha=0.9)")]
fn sage_ema(py: Python<'_>, prev_tau: Option<Arg<'_>>, tau_star: Arg<'_>, alpha: Arg<'_>) -> PyResult<f64> {
    let prev_tau = opt_float(py, prev_tau, "prev_tau")?;
    let (tau_star, alpha) = (tau_star.float(py, "tau_star")?, alpha.float(py, "alpha")?);
    Ok(threshold::sage_ema(prev_tau, tau_star, alpha)?)
}

#[pyfunction]
#[pyo3(signature = (matrix, *, n_components=Arg::Int(16)), text_signature = "(matrix, *, n_components=16)")]
fn sage_density(py: Python<'_>, matrix: &Bound<'_, PyAny>, n_components: Arg<'_>) -> PyResult<f64> {
    let m = super::validate::matrix(matrix, "matrix")?;
    let (n, d) = dims(&m, "matrix")?;
    non_empty(n, d, "matrix")?;
    let ms = slice(&m)?;
    finite_rows(ms, "matrix")?;
    let k = n_components.count(py, "n_components", 1, "SAGE uses n_components=16")?;
    Ok(py.detach(|| threshold::sage_density(ms, d, k))?)
}

#[pyfunction]
#[pyo3(signature = (matrix, *, parallel=Arg::Flag(false)), text_signature = "(matrix, *, parallel=False)")]
fn _read_floor(py: Python<'_>, matrix: &Bound<'_, PyAny>, parallel: Arg<'_>) -> PyResult<f64> {
    let parallel = parallel.flag(py, "parallel")?;
    let m = super::validate::matrix(matrix, "matrix")?;
    let (_, d) = dims(&m, "matrix")?;
    let ms = slice(&m)?;
    let plan = if parallel { novelty::Plan::Chunked } else { novelty::Plan::Serial };
    Ok(py.detach(|| novelty::read_floor(ms, d, plan)))
}

#[pyfunction]
fn _parallel_config() -> (usize, usize) {
    (crate::par::threads(), crate::par::PAR_MIN_ELEMENTS)
}

#[pyfunction]
fn _isa() -> &'static str {
    crate::isa::isa().name()
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(similarities, m)?)?;
    m.add_function(wrap_pyfunction!(similarities_batch, m)?)?;
    m.add_function(wrap_pyfunction!(kappa_banerjee, m)?)?;
    m.add_function(wrap_pyfunction!(kappa_from_spacing, m)?)?;
    m.add_function(wrap_pyfunction!(sample_vmf, m)?)?;
    m.add_function(wrap_pyfunction!(novelty_sage, m)?)?;
    m.add_function(wrap_pyfunction!(novelty_sage_batch, m)?)?;
    m.add_function(wrap_pyfunction!(novelty_knn, m)?)?;
    m.add_function(wrap_pyfunction!(novelty_knn_batch, m)?)?;
    m.add_function(wrap_pyfunction!(novelty_from_topk, m)?)?;
    m.add_function(wrap_pyfunction!(novelty_maxcos, m)?)?;
    m.add_function(wrap_pyfunction!(novelty_maxcos_batch, m)?)?;
    m.add_function(wrap_pyfunction!(random_projection, m)?)?;
    m.add_function(wrap_pyfunction!(route, m)?)?;
    m.add_function(wrap_pyfunction!(sage_tau_star, m)?)?;
    m.add_function(wrap_pyfunction!(sage_ema, m)?)?;
    m.add_function(wrap_pyfunction!(sage_density, m)?)?;
    m.add_function(wrap_pyfunction!(_read_floor, m)?)?;
    m.add_function(wrap_pyfunction!(_parallel_config, m)?)?;
    m.add_function(wrap_pyfunction!(_isa, m)?)?;
    Ok(())
}
