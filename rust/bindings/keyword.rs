//! KeywordIndex for Python, with the information term over its statistics.

use numpy::{IntoPyArray, PyArray1, PyUntypedArray};
use pyo3::prelude::*;
use pyo3::exceptions::PyKeyError;
use pyo3::types::{PyBool, PyMapping, PyString};

use super::errors::dtype_error;
use super::text::{text_arg, type_name};
use super::validate::{slice, Arg};
use crate::error::err;
use crate::gate::info::{self, netting, InfoParams};
use crate::text::Kind;
use crate::keyword::KeywordIndex;

const ID_EXAMPLE: &str = "ids are the store's int64 sequence numbers";
const K_EXAMPLE: &str = "pass a count such as k=10 (a larger k than the index holds is capped)";

/// The elements of an iterable that is not a str, each converted by `conv`
/// (which describes a bad element); `bad` turns a description into the error.
fn items<T>(
    obj: &Bound<'_, PyAny>,
    bad: impl Fn(String) -> PyErr,
    conv: impl Fn(&Bound<'_, PyAny>) -> std::result::Result<T, String>,
) -> PyResult<Vec<T>> {
    if obj.is_instance_of::<PyString>() {
        return Err(bad("a single str".into()));
    }
    let iter = obj.try_iter().map_err(|_| bad(type_name(obj)))?;
    let mut out = Vec::new();
    for (i, item) in iter.enumerate() {
        out.push(conv(&item?).map_err(|what| bad(format!("{what} at position {i}")))?);
    }
    Ok(out)
}

/// Ids as an int64 numpy array or any iterable of ints (list, tuple, set, range).
fn id_list(py: Python<'_>, obj: &Bound<'_, PyAny>, name: &str) -> PyResult<Vec<i64>> {
    if obj.cast::<PyUntypedArray>().is_ok() {
        let a = super::validate::ids(obj, name)?;
        return Ok(slice(&a)?.to_vec());
    }
    let bad = |what: String| {
        dtype_error(py, format!("expected {name} as an int64 array or an iterable of ints, got {what}; pass e.g. np.asarray(ids, dtype=np.int64)"))
    };
    items(obj, bad, |item| {
        if item.is_instance_of::<PyBool>() {
            return Err("bool".into());
        }
        item.extract::<i64>().map_err(|_| format!("{} {item}", type_name(item)))
    })
}

/// A list (or other iterable) of str, each checked, so a bad element is named.
fn text_list(py: Python<'_>, obj: &Bound<'_, PyAny>) -> PyResult<Vec<String>> {
    let bad = |what: String| dtype_error(py, format!("expected texts as a list of str, got {what}; pass [str(t) for t in texts]"));
    items(obj, bad, |item| {
        Ok(item.cast::<PyString>().map_err(|_| type_name(item))?.to_string_lossy().into_owned())
    })
}

type SearchOut<'py> = (Bound<'py, PyArray1<i64>>, Bound<'py, PyArray1<f32>>);

/// The information term's weights and prior, each read as a float.
fn info_params(py: Python<'_>, w_number: Arg<'_>, w_name: Arg<'_>, w_word: Arg<'_>, idf_prior: Arg<'_>, prior_weight: Arg<'_>) -> PyResult<InfoParams> {
    Ok(InfoParams {
        w_number: w_number.float(py, "w_number")?,
        w_name: w_name.float(py, "w_name")?,
        w_word: w_word.float(py, "w_word")?,
        idf_prior: idf_prior.float(py, "idf_prior")?,
        prior_weight: prior_weight.float(py, "prior_weight")?,
    })
}

/// A per-term value the caller supplies: a callable or a mapping of str to float.
fn per_term<'a, 'py>(py: Python<'py>, of: &'a Bound<'py, PyAny>, name: &'static str) -> PyResult<PerTerm<'a, 'py>> {
    if of.is_callable() || of.cast::<PyMapping>().is_ok() {
        return Ok(PerTerm { of, name });
    }
    Err(dtype_error(py, format!("{name} must be a callable or a mapping of str to float, got {}; pass e.g. a dict", type_name(of))))
}

struct PerTerm<'a, 'py> {
    of: &'a Bound<'py, PyAny>,
    name: &'static str,
}

impl PerTerm<'_, '_> {
    /// `of(key)` if callable (its own exceptions pass through), else `of[key]`.
    fn get(&self, key: &str) -> PyResult<f64> {
        let (of, name) = (self.of, self.name);
        let v = if of.is_callable() {
            of.call1((key,))?
        } else {
            of.get_item(key).map_err(|e| {
                if e.is_instance_of::<PyKeyError>(of.py()) {
                    PyErr::from(err!(Config: "{name} has no entry for {key:?}; give one for every term asked for, or pass a callable"))
                } else {
                    e
                }
            })?
        };
        if v.is_instance_of::<PyBool>() {
            return Err(dtype_error(of.py(), format!("{name}[{key:?}] must be a float, got bool; pass a float")));
        }
        v.extract::<f64>()
            .map_err(|_| dtype_error(of.py(), format!("{name}[{key:?}] must be a float, got {}; pass a float", type_name(&v))))
    }
}

#[pyclass(name = "KeywordIndex", module = "memsieve._core")]
pub struct PyKeywordIndex {
    inner: KeywordIndex,
}

#[pymethods]
impl PyKeywordIndex {
    #[new]
    fn new() -> Self {
        PyKeywordIndex { inner: KeywordIndex::new() }
    }

    fn __len__(&self) -> usize {
        self.inner.len()
    }

    fn __contains__(&self, py: Python<'_>, id: Arg<'_>) -> PyResult<bool> {
        Ok(self.inner.contains(id.int(py, "id", ID_EXAMPLE)?))
    }

    fn contains(&self, py: Python<'_>, id: Arg<'_>) -> PyResult<bool> {
        Ok(self.inner.contains(id.int(py, "id", ID_EXAMPLE)?))
    }

    fn add(&mut self, py: Python<'_>, id: Arg<'_>, text: &Bound<'_, PyAny>) -> PyResult<()> {
        let id = id.int(py, "id", ID_EXAMPLE)?;
        Ok(self.inner.add(id, &text_arg(text, "text")?)?)
    }

    fn add_many(&mut self, py: Python<'_>, ids: &Bound<'_, PyAny>, texts: &Bound<'_, PyAny>) -> PyResult<()> {
        let a = super::validate::ids(ids, "ids")?;
        let is = slice(&a)?;
        let ts = text_list(py, texts)?;
        let inner = &mut self.inner;
        Ok(py.detach(|| inner.add_many(is, &ts))?)
    }

    fn remove(&mut self, py: Python<'_>, id: Arg<'_>) -> PyResult<()> {
        Ok(self.inner.remove(id.int(py, "id", ID_EXAMPLE)?)?)
    }

    fn replace(&mut self, py: Python<'_>, id: Arg<'_>, text: &Bound<'_, PyAny>) -> PyResult<()> {
        let id = id.int(py, "id", ID_EXAMPLE)?;
        Ok(self.inner.replace(id, &text_arg(text, "text")?)?)
    }

    fn ids<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<i64>> {
        self.inner.ids().into_pyarray(py)
    }

    #[getter]
    fn avg_len(&self) -> f64 {
        self.inner.avg_len()
    }

    fn df(&self, term: &Bound<'_, PyAny>) -> PyResult<u32> {
        Ok(self.inner.df(&text_arg(term, "term")?))
    }

    fn idf(&self, term: &Bound<'_, PyAny>) -> PyResult<f64> {
        Ok(self.inner.idf(&text_arg(term, "term")?))
    }

    fn tokens_of(&self, py: Python<'_>, id: Arg<'_>) -> PyResult<Vec<String>> {
        let id = id.int(py, "id", ID_EXAMPLE)?;
        self.inner.tokens_of(id).ok_or_else(|| {
            err!(State: "id {id} is not in the keyword index; add(id, text) it first").into()
        })
    }

    #[pyo3(signature = (query, k, *, allow=None))]
    fn search<'py>(
        &self,
        py: Python<'py>,
        query: &Bound<'py, PyAny>,
        k: Arg<'py>,
        allow: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<SearchOut<'py>> {
        let k = k.count(py, "k", 0, K_EXAMPLE)?;
        let allow = allow.map(|a| id_list(py, a, "allow")).transpose()?;
        let inner = &self.inner;
        let query = text_arg(query, "query")?;
        let (ids, scores) = py.detach(|| inner.search(&query, k, allow.as_deref()));
        let scores: Vec<f32> = scores.into_iter().map(|s| s as f32).collect();
        Ok((ids.into_pyarray(py), scores.into_pyarray(py)))
    }

    #[pyo3(
        signature = (text, neighbour_ids, *, w_number=Arg::Float(2.0), w_name=Arg::Float(1.5), w_word=Arg::Float(1.0), idf_prior=Arg::Float(3.0), prior_weight=Arg::Float(10.0)),
        text_signature = "(self, text, neighbour_ids, *, w_number=2.0, w_name=1.5, w_word=1.0, idf_prior=3.0, prior_weight=10.0)"
    )]
    #[allow(clippy::too_many_arguments)]
    fn info_novelty(
        &self,
        py: Python<'_>,
        text: &Bound<'_, PyAny>,
        neighbour_ids: &Bound<'_, PyAny>,
        w_number: Arg<'_>,
        w_name: Arg<'_>,
        w_word: Arg<'_>,
        idf_prior: Arg<'_>,
        prior_weight: Arg<'_>,
    ) -> PyResult<(f64, Vec<String>)> {
        let neigh = id_list(py, neighbour_ids, "neighbour_ids")?;
        let p = info_params(py, w_number, w_name, w_word, idf_prior, prior_weight)?;
        let inner = &self.inner;
        let text = text_arg(text, "text")?;
        let r = py.detach(|| info::info_novelty(inner, &text, &neigh, &p))?;
        Ok((r.novelty, r.new_tokens))
    }

    #[pyo3(
        signature = (text, neighbour_ids, nearest, *, rarity, w_number=Arg::Float(2.0), w_name=Arg::Float(1.5), w_word=Arg::Float(1.0), idf_prior=Arg::Float(3.0), prior_weight=Arg::Float(10.0)),
        text_signature = "(self, text, neighbour_ids, nearest, *, rarity, w_number=2.0, w_name=1.5, w_word=1.0, idf_prior=3.0, prior_weight=10.0)"
    )]
    #[allow(clippy::too_many_arguments)]
    fn info_novelty_netted(
        &self,
        py: Python<'_>,
        text: &Bound<'_, PyAny>,
        neighbour_ids: &Bound<'_, PyAny>,
        nearest: Option<Arg<'_>>,
        rarity: &Bound<'_, PyAny>,
        w_number: Arg<'_>,
        w_name: Arg<'_>,
        w_word: Arg<'_>,
        idf_prior: Arg<'_>,
        prior_weight: Arg<'_>,
    ) -> PyResult<(f64, Vec<String>)> {
        let neigh = id_list(py, neighbour_ids, "neighbour_ids")?;
        let nearest = nearest.map(|a| a.int(py, "nearest", ID_EXAMPLE)).transpose()?;
        let rarity = per_term(py, rarity, "rarity")?;
        let p = info_params(py, w_number, w_name, w_word, idf_prior, prior_weight)?;
        let inner = &self.inner;
        let text = text_arg(text, "text")?;
        // The text is tokenized once, for the term and for its netting.
        let (tokens, r) = py.detach(|| {
            let tokens = netting::text_tokens(&text);
            let r = info::info_novelty_of_tokens(inner, &tokens, &neigh, &p);
            (tokens, r)
        });
        let r = r?;
        let Some(id) = nearest.filter(|_| r.novelty > 0.0) else {
            return Ok((r.novelty, r.new_tokens));
        };
        // The netting calls back into Python for the rarities, so it keeps the GIL.
        let mine = netting::distinct_terms(tokens.iter().map(|(t, s, k)| (t.as_str(), s.as_str(), *k)));
        let v = netting::net_terms_against(inner, r.novelty, &mine, id, |s| rarity.get(s), &p)?;
        Ok((v, r.new_tokens))
    }

    fn __repr__(&self) -> String {
        format!("KeywordIndex(n={}, avg_len={:.2})", self.inner.len(), self.inner.avg_len())
    }
}


/// The information term `information` net of word substitutions: `text_terms`
/// the text's (term, surface, kind) tokens as `tokenize_kinds` gives them,
/// `memory_terms` the other memory's terms in its order, `idf` and `rarity`
/// each a callable or a mapping; `n_docs` the documents the idf is taken over.
#[pyfunction]
#[pyo3(
    signature = (information, text_terms, memory_terms, *, n_docs, idf, rarity, w_number=Arg::Float(2.0), w_name=Arg::Float(1.5), w_word=Arg::Float(1.0), idf_prior=Arg::Float(3.0), prior_weight=Arg::Float(10.0)),
    text_signature = "(information, text_terms, memory_terms, *, n_docs, idf, rarity, w_number=2.0, w_name=1.5, w_word=1.0, idf_prior=3.0, prior_weight=10.0)"
)]
#[allow(clippy::too_many_arguments)]
fn net_information(
    py: Python<'_>,
    information: Arg<'_>,
    text_terms: &Bound<'_, PyAny>,
    memory_terms: &Bound<'_, PyAny>,
    n_docs: Arg<'_>,
    idf: &Bound<'_, PyAny>,
    rarity: &Bound<'_, PyAny>,
    w_number: Arg<'_>,
    w_name: Arg<'_>,
    w_word: Arg<'_>,
    idf_prior: Arg<'_>,
    prior_weight: Arg<'_>,
) -> PyResult<f64> {
    let information = information.float(py, "information")?;
    let n = n_docs.count(py, "n_docs", 0, "pass the number of documents the idf is taken over, len(index)")?;
    let p = info_params(py, w_number, w_name, w_word, idf_prior, prior_weight)?;
    let bad_token = |what: String| {
        dtype_error(py, format!("text_terms must be (term, surface, kind) tuples of str as tokenize_kinds gives them, got {what}"))
    };
    let tokens = items(text_terms, bad_token, |t| {
        let (term, surface, kind) = t.extract::<(String, String, String)>().map_err(|_| type_name(t))?;
        let kind = match kind.as_str() {
            "number" => Kind::Number,
            "name" => Kind::Name,
            "word" => Kind::Word,
            _ => return Err(format!("the kind {kind:?} (one of 'number', 'name', 'word')")),
        };
        Ok((term, surface, kind))
    })?;
    let theirs = items(
        memory_terms,
        |what| dtype_error(py, format!("memory_terms must be an iterable of str, got {what}; pass tokens_of(id)")),
        |t| t.extract::<String>().map_err(|_| type_name(t)),
    )?;
    let (idf, rarity) = (per_term(py, idf, "idf")?, per_term(py, rarity, "rarity")?);
    let mine = netting::distinct_terms(tokens);
    netting::net_information(information, &mine, &theirs, n, |t| idf.get(t), |s| rarity.get(s), &p)
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyKeywordIndex>()?;
    m.add_function(wrap_pyfunction!(net_information, m)?)?;
    Ok(())
}
