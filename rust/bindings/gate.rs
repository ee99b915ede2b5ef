//! The gate for Python: its stateless scores (novelty, concentration, vMF
//! samples, SAGE's threshold, routing) and its stateful classes
//! (ThresholdState, ScopeState, a pure vector index, with ScoreResult).

use numpy::ndarray::Array2;
use numpy::{IntoPyArray, PyArray1, PyArray2};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};

use super::validate::{dims, finite_rows, matrix, matrix_and_queries, matrix_and_query, non_empty, opt_float, opt_pair, output_size, slice, vector, Arg};
use crate::error::err;
use crate::gate::novelty::{self, KnnScore};
use crate::gate::threshold::{self, ThresholdParams};
use crate::gate::{kappa, route as routing, scope, vmf};

const K_EXAMPLE: &str = "the default is k=10";
const ID_EXAMPLE: &str = "ids are the store's int64 sequence numbers";
const CLIP_EXAMPLE: &str = "SAGE uses clip=(1e-3, 50.0)";

type F32Array<'py> = Bound<'py, PyArray1<f32>>;
type Batch<'py> = (Bound<'py, PyArray1<f32>>, Bound<'py, PyArray1<i64>>, Bound<'py, PyArray1<f32>>);

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
    crate::kernels::vector::check_unit(ms, "mu")?;
    let kappa = kappa.float(py, "kappa")?;
    let n = n.count(py, "n", 0, "pass the number of samples, e.g. n=1000")?;
    let seed = seed.seed(py, "seed")?;
    let d = ms.len();
    output_size(n, d, "the sample")?;
    let out = py.detach(|| vmf::sample(ms, kappa, n, seed))?;
    let arr = Array2::from_shape_vec((n, d), out).map_err(|e| PyErr::from(err!(Shape: "{e}")))?;
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
        return Err(PyErr::from(err!(InvalidVector: "top_sims[{i}] = {} is not a cosine in [-1, 1]; pass cosines of unit vectors", ts[i])));
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

/// ids and cosines of the nearest rows, best first.
type Nearest<'py> = (Bound<'py, PyArray1<i64>>, Bound<'py, PyArray1<f32>>);

#[pyclass(name = "ThresholdState", module = "memsieve._core")]
#[derive(Clone)]
pub struct PyThresholdState {
    pub(crate) inner: threshold::ThresholdState,
}

#[pymethods]
impl PyThresholdState {
    /// Every parameter is required: GateConfig (python/memsieve/config.py)
    /// is their one source, so the core keeps no defaults of its own.
    #[new]
    #[pyo3(signature = (*, gamma, tau_min, tau_max, kappa_c, prior_share, prior_weight))]
    fn new(py: Python<'_>, gamma: Arg<'_>, tau_min: Arg<'_>, tau_max: Arg<'_>, kappa_c: Arg<'_>, prior_share: Arg<'_>, prior_weight: Arg<'_>) -> PyResult<Self> {
        let p = ThresholdParams {
            gamma: gamma.float(py, "gamma")?,
            tau_min: tau_min.float(py, "tau_min")?,
            tau_max: tau_max.float(py, "tau_max")?,
            kappa_c: kappa_c.float(py, "kappa_c")?,
            prior_share: prior_share.float(py, "prior_share")?,
            prior_weight: prior_weight.float(py, "prior_weight")?,
        };
        Ok(PyThresholdState { inner: threshold::ThresholdState::new(p)? })
    }

    fn on_add(&mut self, py: Python<'_>, share: Arg<'_>) -> PyResult<()> {
        Ok(self.inner.on_add(share.float(py, "share")?)?)
    }

    fn on_remove(&mut self, py: Python<'_>, share: Arg<'_>) -> PyResult<()> {
        Ok(self.inner.on_remove(share.float(py, "share")?)?)
    }

    /// The parameters, by name (as passed, or as stored in the bytes).
    #[getter]
    fn params<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let p = &self.inner.params;
        let out = PyDict::new(py);
        for (k, v) in [
            ("gamma", p.gamma),
            ("tau_min", p.tau_min),
            ("tau_max", p.tau_max),
            ("kappa_c", p.kappa_c),
            ("prior_share", p.prior_share),
            ("prior_weight", p.prior_weight),
        ] {
            out.set_item(k, v)?;
        }
        Ok(out)
    }

    #[getter]
    fn count(&self) -> u64 {
        self.inner.count()
    }

    #[getter]
    fn mean_share(&self) -> f64 {
        self.inner.mean_share()
    }

    #[getter]
    fn kappa(&self) -> f64 {
        self.inner.kappa()
    }

    #[getter]
    fn tau(&self) -> f64 {
        self.inner.tau()
    }

    fn to_bytes<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, &self.inner.to_bytes())
    }

    #[staticmethod]
    fn from_bytes(data: &Bound<'_, PyAny>) -> PyResult<Self> {
        let b = data.cast::<PyBytes>().map_err(|_| {
            PyErr::from(err!(State: "from_bytes expects bytes from ThresholdState.to_bytes(); pass bytes(data)"))
        })?;
        Ok(PyThresholdState { inner: threshold::ThresholdState::from_bytes(b.as_bytes())? })
    }

    fn __repr__(&self) -> String {
        format!(
            "ThresholdState(count={}, mean_share={:.4}, kappa={:.3}, tau={:.4})",
            self.inner.count(),
            self.inner.mean_share(),
            self.inner.kappa(),
            self.inner.tau()
        )
    }
}

#[pyclass(name = "ScoreResult", module = "memsieve._core", frozen)]
pub struct ScoreResult {
    #[pyo3(get)]
    novelty: f64,
    #[pyo3(get)]
    nearest_id: Option<i64>,
    #[pyo3(get)]
    nearest_cos: f64,
    #[pyo3(get)]
    kappa: f64,
    #[pyo3(get)]
    top_ids: Vec<i64>,
    #[pyo3(get)]
    top_cos: Vec<f64>,
}

#[pymethods]
impl ScoreResult {
    fn __repr__(&self) -> String {
        format!(
            "ScoreResult(novelty={:.6}, nearest_id={}, nearest_cos={:.6}, kappa={:.3}, k={})",
            self.novelty,
            self.nearest_id.map_or("None".to_string(), |i| i.to_string()),
            self.nearest_cos,
            self.kappa,
            self.top_ids.len()
        )
    }
}

#[pyclass(name = "ScopeState", module = "memsieve._core")]
pub struct PyScopeState {
    inner: scope::ScopeState,
}

impl PyScopeState {
    /// Check a query and k, then run one scan of the scope with the GIL released.
    fn scan<T: Send>(
        &self,
        py: Python<'_>,
        query: &Bound<'_, PyAny>,
        k: Arg<'_>,
        example: &str,
        f: impl FnOnce(&scope::ScopeState, &[f32], usize) -> crate::error::Result<T> + Send,
    ) -> PyResult<T> {
        let q = vector(query, "query")?;
        let qs = slice(&q)?;
        let k = k.count(py, "k", 1, example)?;
        let inner = &self.inner;
        Ok(py.detach(|| f(inner, qs, k))?)
    }

    fn result(&self, r: KnnScore, kappa: f64) -> ScoreResult {
        let top_ids: Vec<i64> = r.top.rows.iter().map(|&row| self.inner.id_of(row)).collect();
        let top_cos: Vec<f64> = r.top.sims.iter().map(|&s| s as f64).collect();
        ScoreResult {
            novelty: r.novelty,
            nearest_id: top_ids.first().copied(),
            nearest_cos: top_cos.first().copied().unwrap_or(f64::NAN),
            kappa,
            top_ids,
            top_cos,
        }
    }
}

#[pymethods]
impl PyScopeState {
    #[new]
    #[pyo3(signature = (dim, *, vectors=None), text_signature = "(dim, *, vectors='float32')")]
    fn new(py: Python<'_>, dim: Arg<'_>, vectors: Option<&Bound<'_, PyAny>>) -> PyResult<Self> {
        let dim = dim.count(py, "dim", 1, "pass the embedding width, e.g. 384")?;
        output_size(1, dim, "a scope row")?;
        let storage = super::quant::storage(py, vectors)?;
        Ok(PyScopeState { inner: scope::ScopeState::with_storage(dim, storage)? })
    }

    /// "float32", or "int8" when an int8 copy is scanned first.
    #[getter]
    fn storage(&self) -> &'static str {
        self.inner.storage().name()
    }

    /// Bytes the int8 copy adds to the float32 rows (0 without one).
    #[getter]
    fn quant_bytes(&self) -> usize {
        self.inner.quant_bytes()
    }

    /// How many rows a top-k of `query` re-scores in float32.
    fn rescored(&self, py: Python<'_>, query: &Bound<'_, PyAny>, k: Arg<'_>) -> PyResult<usize> {
        self.scan(py, query, k, K_EXAMPLE, |s, q, k| s.rescored(q, k))
    }

    fn __len__(&self) -> usize {
        self.inner.len()
    }

    #[getter]
    fn dim(&self) -> usize {
        self.inner.dim()
    }

    fn add(&mut self, py: Python<'_>, id: Arg<'_>, vector: &Bound<'_, PyAny>) -> PyResult<()> {
        let id = id.int(py, "id", ID_EXAMPLE)?;
        let v = super::validate::vector(vector, "vector")?;
        Ok(self.inner.add(id, slice(&v)?)?)
    }

    fn add_many(&mut self, ids: &Bound<'_, PyAny>, vectors: &Bound<'_, PyAny>) -> PyResult<()> {
        let i = super::validate::ids(ids, "ids")?;
        let m = matrix(vectors, "vectors")?;
        let (_, d) = dims(&m, "vectors")?;
        if d != self.inner.dim() {
            return Err(PyErr::from(err!(Shape: "expected vectors of shape (n, {}), got width {d}; embed with the scope's model", self.inner.dim())));
        }
        let (is, ms) = (slice(&i)?, slice(&m)?);
        Ok(self.inner.add_many(is, ms)?)
    }

    fn remove(&mut self, py: Python<'_>, id: Arg<'_>) -> PyResult<()> {
        Ok(self.inner.remove(id.int(py, "id", ID_EXAMPLE)?)?)
    }

    fn contains(&self, py: Python<'_>, id: Arg<'_>) -> PyResult<bool> {
        Ok(self.inner.contains(id.int(py, "id", ID_EXAMPLE)?))
    }

    fn ids<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<i64>> {
        PyArray1::from_slice(py, self.inner.ids())
    }

    fn vectors<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray2<f32>>> {
        let arr = Array2::from_shape_vec((self.inner.len(), self.inner.dim()), self.inner.matrix().to_vec())
            .map_err(|e| PyErr::from(err!(Shape: "{e}")))?;
        Ok(arr.into_pyarray(py))
    }

    #[pyo3(signature = (query, *, kappa, k=Arg::Int(10)), text_signature = "($self, query, *, kappa, k=10)")]
    fn score(&self, py: Python<'_>, query: &Bound<'_, PyAny>, kappa: Arg<'_>, k: Arg<'_>) -> PyResult<ScoreResult> {
        let kappa = kappa.float(py, "kappa")?;
        let r = self.scan(py, query, k, K_EXAMPLE, |s, q, k| s.score_knn(q, kappa, k))?;
        Ok(self.result(r, kappa))
    }

    #[pyo3(signature = (query, *, k=Arg::Int(10)), text_signature = "($self, query, *, k=10)")]
    fn score_maxcos(&self, py: Python<'_>, query: &Bound<'_, PyAny>, k: Arg<'_>) -> PyResult<ScoreResult> {
        let r = self.scan(py, query, k, K_EXAMPLE, |s, q, k| s.score_maxcos(q, k))?;
        Ok(self.result(r, f64::NAN))
    }

    #[pyo3(signature = (query, *, kappa, k=Arg::Int(10)), text_signature = "($self, query, *, kappa, k=10)")]
    fn score_sage(&self, py: Python<'_>, query: &Bound<'_, PyAny>, kappa: Arg<'_>, k: Arg<'_>) -> PyResult<ScoreResult> {
        let kappa = kappa.float(py, "kappa")?;
        let r = self.scan(py, query, k, K_EXAMPLE, |s, q, k| s.score_sage(q, kappa, k))?;
        Ok(self.result(r, kappa))
    }

    fn nearest<'py>(&self, py: Python<'py>, query: &Bound<'py, PyAny>, k: Arg<'py>) -> PyResult<Nearest<'py>> {
        let top = self.scan(py, query, k, "pass e.g. k=10", |s, q, k| s.nearest(q, k))?;
        let ids: Vec<i64> = top.rows.iter().map(|&r| self.inner.id_of(r)).collect();
        Ok((PyArray1::from_vec(py, ids), PyArray1::from_vec(py, top.sims)))
    }

    #[pyo3(signature = (*, clip=None))]
    fn kappa_banerjee(&self, py: Python<'_>, clip: Option<Arg<'_>>) -> PyResult<f64> {
        Ok(self.inner.kappa_banerjee(opt_pair(py, clip, "clip", "SAGE uses clip=(1e-3, 50.0)")?)?)
    }

    fn __repr__(&self) -> String {
        format!("ScopeState(dim={}, len={}, vectors={:?})", self.inner.dim(), self.inner.len(), self.inner.storage().name())
    }
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
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
    m.add_function(wrap_pyfunction!(route, m)?)?;
    m.add_function(wrap_pyfunction!(sage_tau_star, m)?)?;
    m.add_function(wrap_pyfunction!(sage_ema, m)?)?;
    m.add_function(wrap_pyfunction!(sage_density, m)?)?;
    m.add_class::<PyThresholdState>()?;
    m.add_class::<ScoreResult>()?;
    m.add_class::<PyScopeState>()?;
    Ok(())
}
