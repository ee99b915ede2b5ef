//! Stateful classes: ThresholdState, ScopeState (a pure vector index, with ScoreResult) and Pca.

use numpy::ndarray::Array2;
use numpy::{IntoPyArray, PyArray1, PyArray2};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};

use super::validate::{dims, finite_rows, matrix, non_empty, opt_pair, output_size, slice, vector, Arg};
use crate::error::CoreError;
use crate::novelty::KnnScore;
use crate::projection;
use crate::scope;
use crate::threshold::{self, ThresholdParams};

const K_EXAMPLE: &str = "the default is k=10";
const ID_EXAMPLE: &str = "ids are the store's int64 sequence numbers";

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
            PyErr::from(CoreError::State("from_bytes expects bytes from ThresholdState.to_bytes(); pass bytes(data)".into()))
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
            return Err(PyErr::from(CoreError::Shape(format!(
                "expected vectors of shape (n, {}), got width {d}; embed with the scope's model",
                self.inner.dim()
            ))));
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
            .map_err(|e| PyErr::from(CoreError::Shape(e.to_string())))?;
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

#[pyclass(name = "Pca", module = "memsieve._core")]
pub struct PyPca {
    requested: usize,
    fitted: Option<projection::Pca>,
}

impl PyPca {
    fn fitted(&self) -> PyResult<&projection::Pca> {
        self.fitted
            .as_ref()
            .ok_or_else(|| PyErr::from(CoreError::State("this Pca is not fitted; call fit(x) first".into())))
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
            return Err(PyErr::from(CoreError::Shape(format!(
                "expected x of shape (n, {}) like the fitted rows, got width {d}; transform rows of the same model",
                p.dim
            ))));
        }
        let xs = slice(&m)?;
        finite_rows(xs, "x")?;
        let out = py.detach(|| p.transform(xs, normalize));
        let arr = Array2::from_shape_vec((n, p.n_components), out).map_err(|e| PyErr::from(CoreError::Shape(e.to_string())))?;
        Ok(arr.into_pyarray(py))
    }

    #[getter]
    fn components<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray2<f32>>> {
        let p = self.fitted()?;
        let arr = Array2::from_shape_vec((p.n_components, p.dim), p.components.clone())
            .map_err(|e| PyErr::from(CoreError::Shape(e.to_string())))?;
        Ok(arr.into_pyarray(py))
    }

    #[getter]
    fn mean<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray1<f32>>> {
        Ok(PyArray1::from_slice(py, &self.fitted()?.mean))
    }
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyThresholdState>()?;
    m.add_class::<ScoreResult>()?;
    m.add_class::<PyScopeState>()?;
    m.add_class::<PyPca>()?;
    Ok(())
}
