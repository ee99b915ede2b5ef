//! Informational novelty: how much of a candidate's content its nearest
//! memories do not already hold.
//!
//! ```text
//! info = Σ_{t ∈ C \ U} w(t)·idf_eff(t)  /  Σ_{t ∈ C} w(t)·idf_eff(t)
//! ```
//!
//! C is the candidate's set of distinct content terms (the tokenizer already
//! drops stopwords), U the union of the neighbours' stored terms, w(t) the
//! weight of the term's kind (the highest if it occurs with several), and
//!
//! ```text
//! idf_eff(t) = (N·idf(t) + m·idf_prior) / (N + m)
//! ```
//!
//! the scope's bm25 idf shrunk towards a prior: in a scope of a few memories
//! every idf is noise (a word seen once in two memories looks common), so
//! with N small the kinds decide, and as N grows the scope's own statistics
//! take over. A candidate with no content terms has info 0.
//!
//! Defaults: number 2.0, name 1.5, word 1.0 (a new number or name is what a
//! "new detail" usually is); idf_prior 3.0 (the idf of a term in about one
//! document in twenty); m = 10 documents.

use rustc_hash::{FxHashMap, FxHashSet};

use crate::error::{bail, err, Result};
use crate::keyword::KeywordIndex;
use crate::text::Kind;

pub mod netting;

/// Weights and prior of the information term (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct InfoParams {
    pub w_number: f64,
    pub w_name: f64,
    pub w_word: f64,
    pub idf_prior: f64,
    pub prior_weight: f64,
}

impl Default for InfoParams {
    fn default() -> Self {
        InfoParams { w_number: 2.0, w_name: 1.5, w_word: 1.0, idf_prior: 3.0, prior_weight: 10.0 }
    }
}

impl InfoParams {
    fn weight(&self, kind: Kind) -> f64 {
        match kind {
            Kind::Number => self.w_number,
            Kind::Name => self.w_name,
            Kind::Word => self.w_word,
        }
    }

    pub fn validate(&self) -> Result<()> {
        let named = [
            ("w_number", self.w_number),
            ("w_name", self.w_name),
            ("w_word", self.w_word),
            ("idf_prior", self.idf_prior),
            ("prior_weight", self.prior_weight),
        ];
        for (name, v) in named {
            if !v.is_finite() || v < 0.0 {
                bail!(Config: "{name} must be finite and >= 0, got {v}; the defaults are {:?}", InfoParams::default());
            }
        }
        Ok(())
    }
}

/// The information term and the new terms' surface forms, heaviest first.
#[derive(Clone, Debug, PartialEq)]
pub struct InfoNovelty {
    pub novelty: f64,
    pub new_tokens: Vec<String>,
}

/// One distinct content term of the candidate.
struct CandTerm {
    surface: String,
    weight: f64,
    order: usize,
}

fn idf_eff(index: &KeywordIndex, term: &str, p: &InfoParams) -> f64 {
    let n = index.len() as f64;
    let idf = index.idf(term);
    let denom = n + p.prior_weight;
    if denom == 0.0 {
        idf
    } else {
        (n * idf + p.prior_weight * p.idf_prior) / denom
    }
}

/// Informational novelty of `text` against the stored documents `neighbours`
/// of `index` (unknown neighbour ids are a StateError: the index is behind).
pub fn info_novelty(index: &KeywordIndex, text: &str, neighbours: &[i64], p: &InfoParams) -> Result<InfoNovelty> {
    info_novelty_of_tokens(index, &netting::text_tokens(text), neighbours, p)
}

/// `info_novelty` of a text given as its tokens (term, surface, kind), in text order: the
/// netting reads the same tokens (`netting::info_novelty_netted`) without tokenizing twice.
pub fn info_novelty_of_tokens(index: &KeywordIndex, tokens: &[(String, String, Kind)], neighbours: &[i64],
                              p: &InfoParams) -> Result<InfoNovelty> {
    p.validate()?;
    let mut seen: FxHashSet<u32> = FxHashSet::default();
    for &id in neighbours {
        let terms = index.doc_term_ids(id).ok_or_else(|| {
            err!(State: "neighbour id {id} is not in the keyword index; add its text before scoring against it")
        })?;
        seen.extend(terms);
    }
    let mut cand: FxHashMap<&str, CandTerm> = FxHashMap::default();
    for (term, surface, kind) in tokens {
        let w = p.weight(*kind);
        let order = cand.len();
        let e = cand.entry(term.as_str()).or_insert_with(|| CandTerm { surface: surface.clone(), weight: w, order });
        e.weight = e.weight.max(w);
    }
    let mut terms: Vec<(&str, CandTerm)> = cand.into_iter().collect();
    // Sum in text order, so the value does not depend on hash order.
    terms.sort_by_key(|(_, c)| c.order);
    let (mut total, mut new) = (0.0, 0.0);
    let mut fresh: Vec<(f64, usize, String)> = Vec::new();
    for (term, c) in terms {
        let mass = c.weight * idf_eff(index, term, p);
        total += mass;
        let known = index.term_id(term).is_some_and(|t| seen.contains(&t));
        if !known {
            new += mass;
            fresh.push((mass, c.order, c.surface));
        }
    }
    fresh.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    let novelty = if total > 0.0 { new / total } else { 0.0 };
    Ok(InfoNovelty { novelty, new_tokens: fresh.into_iter().map(|(_, _, s)| s).collect() })
}

#[cfg(test)]
mod tests;
