//! A bm25 inverted index over one scope's texts.
//!
//! Every statistic (postings, document lengths, document frequencies, N and
//! the average length) belongs to one `KeywordIndex`, and memsieve keeps one
//! index per scope, so one scope's writes can never move another's ranking or
//! reveal its vocabulary: isolation holds by construction.
//!
//! Scoring is Okapi bm25 with k1 = 1.2 and b = 0.75:
//!
//! ```text
//! score(d, q) = Σ_{t ∈ q} idf(t) · tf(t,d)·(k1+1) / (tf(t,d) + k1·(1 − b + b·|d|/avgdl))
//! idf(t)      = ln(1 + (N − df(t) + 0.5) / (df(t) + 0.5))
//! ```
//!
//! The idf is the Lucene form: always positive, so a term in most documents
//! still counts a little instead of subtracting. Query terms are distinct and
//! summed in the order of their text, so a document's score depends only on
//! the index's statistics and the query's term set, never on insertion or
//! slot order: an index built by any add/remove sequence scores bit for bit
//! like one built fresh from the survivors.
//!
//! Removal tombstones a slot and fixes the statistics at once; the dead
//! postings are skipped by searches and dropped when a quarter of the slots
//! are dead (an O(postings) rebuild, amortized over those removals).

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::Mutex;

use rustc_hash::FxHashMap;

use crate::error::{bail, err, Result};
use crate::text::for_each_token;

pub mod search;

/// bm25's term-frequency saturation.
pub const K1: f64 = 1.2;
/// bm25's length normalization.
pub const B: f64 = 0.75;

/// Document length of a removed slot.
pub(crate) const DEAD: u32 = u32::MAX;
/// Compaction runs once this many slots, and a quarter of all, are dead.
const COMPACT_MIN_DEAD: usize = 64;

#[derive(Clone, Copy, Debug)]
struct Posting {
    slot: u32,
    tf: u32,
}

#[derive(Debug, Default)]
struct Term {
    text: String,
    df: u32,
    /// Ascending by slot (slots are only appended), dead slots included.
    postings: Vec<Posting>,
}

#[derive(Debug)]
struct Doc {
    id: i64,
    /// (term id, tf), ascending by term id; empty once removed.
    terms: Box<[(u32, u32)]>,
}

/// Hashes i64 ids with the splitmix64 finalizer: ids are the store's row
/// ids, not attacker-chosen strings, and SipHash would dominate the id-to-slot
/// lookups of a large allow-list.
#[derive(Default, Clone, Copy)]
pub(crate) struct IdHasher(u64);

impl Hasher for IdHasher {
    fn finish(&self) -> u64 {
        let mut z = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = self.0.rotate_left(8) ^ b as u64;
        }
    }

    fn write_i64(&mut self, v: i64) {
        self.0 = v as u64;
    }
}

type IdMap<V> = HashMap<i64, V, BuildHasherDefault<IdHasher>>;

/// Reused per-search buffers; all zero/false between searches.
#[derive(Debug, Default)]
pub(crate) struct Scratch {
    pub(crate) acc: Vec<f64>,
    pub(crate) touched: Vec<u32>,
}

/// One scope's bm25 index. See the module docs for the formula.
#[derive(Debug, Default)]
pub struct KeywordIndex {
    term_ids: FxHashMap<String, u32>,
    terms: Vec<Term>,
    docs: Vec<Doc>,
    /// Token count per slot, `DEAD` once removed.
    lens: Vec<u32>,
    slot_of: IdMap<u32>,
    total_len: u64,
    dead: usize,
    pub(crate) scratch: Mutex<Scratch>,
}

/// One term's bm25 contribution; the single place the formula lives, so
/// every search path gives identical bits.
#[inline]
pub(crate) fn term_score(idf: f64, tf: u32, len: u32, avg_len: f64) -> f64 {
    let tf = tf as f64;
    idf * (tf * (K1 + 1.0)) / (tf + K1 * (1.0 - B + B * len as f64 / avg_len))
}

impl KeywordIndex {
    pub fn new() -> Self {
        Self::default()
    }

    /// Number of documents (N).
    pub fn len(&self) -> usize {
        self.slot_of.len()
    }

    pub fn is_empty(&self) -> bool {
        self.slot_of.is_empty()
    }

    pub fn contains(&self, id: i64) -> bool {
        self.slot_of.contains_key(&id)
    }

    /// Mean document length in tokens (0 when empty).
    pub fn avg_len(&self) -> f64 {
        if self.is_empty() {
            0.0
        } else {
            self.total_len as f64 / self.len() as f64
        }
    }

    /// The ids, ascending.
    pub fn ids(&self) -> Vec<i64> {
        let mut ids: Vec<i64> = self.slot_of.keys().copied().collect();
        ids.sort_unstable();
        ids
    }

    /// The id of a term (a token as the tokenizer emits it), if ever seen.
    pub fn term_id(&self, term: &str) -> Option<u32> {
        self.term_ids.get(term).copied()
    }

    pub(crate) fn term_text(&self, tid: u32) -> &str {
        &self.terms[tid as usize].text
    }

    pub(crate) fn df_of(&self, tid: u32) -> u32 {
        self.terms[tid as usize].df
    }

    /// Number of documents holding `term` (0 if unknown).
    pub fn df(&self, term: &str) -> u32 {
        self.term_id(term).map_or(0, |t| self.df_of(t))
    }

    /// bm25 idf for a document frequency under this index's N.
    pub fn idf_for_df(&self, df: u32) -> f64 {
        let (n, df) = (self.len() as f64, df as f64);
        (1.0 + (n - df + 0.5) / (df + 0.5)).ln()
    }

    /// bm25 idf of `term` (a token as the tokenizer emits it).
    pub fn idf(&self, term: &str) -> f64 {
        self.idf_for_df(self.df(term))
    }

    /// Term ids of a stored document, ascending, or None if `id` is absent.
    pub(crate) fn doc_term_ids(&self, id: i64) -> Option<impl Iterator<Item = u32> + '_> {
        let slot = *self.slot_of.get(&id)?;
        Some(self.docs[slot as usize].terms.iter().map(|&(t, _)| t))
    }

    /// The distinct terms of a stored document, sorted, or None if absent.
    pub fn tokens_of(&self, id: i64) -> Option<Vec<String>> {
        let mut out: Vec<String> = self.doc_term_ids(id)?.map(|t| self.term_text(t).to_string()).collect();
        out.sort_unstable();
        Some(out)
    }

    /// Tokenize `text`, interning its terms: (term id, tf) ascending by id, and the length.
    fn analyze(&mut self, text: &str) -> (Box<[(u32, u32)]>, u32) {
        let mut ids: Vec<u32> = Vec::new();
        let (term_ids, terms) = (&mut self.term_ids, &mut self.terms);
        for_each_token(text, |term, _, _| {
            let tid = match term_ids.get(term) {
                Some(&t) => t,
                None => {
                    let t = terms.len() as u32;
                    terms.push(Term { text: term.to_string(), ..Term::default() });
                    term_ids.insert(term.to_string(), t);
                    t
                }
            };
            ids.push(tid);
        });
        let len = u32::try_from(ids.len()).unwrap_or(DEAD - 1).min(DEAD - 1);
        ids.sort_unstable();
        let mut out: Vec<(u32, u32)> = Vec::new();
        for t in ids {
            match out.last_mut() {
                Some((last, tf)) if *last == t => *tf = tf.saturating_add(1),
                _ => out.push((t, 1)),
            }
        }
        (out.into_boxed_slice(), len)
    }

    fn check_new(&self, id: i64) -> Result<()> {
        if self.contains(id) {
            bail!(State: "id {id} is already in the keyword index; use replace(id, text) to change its text");
        }
        if self.docs.len() >= (DEAD - 1) as usize {
            bail!(State: "the keyword index is full ({} slots); split the scope", self.docs.len());
        }
        Ok(())
    }

    fn slot(&self, id: i64) -> Result<u32> {
        self.slot_of.get(&id).copied().ok_or_else(|| {
            err!(State: "id {id} is not in the keyword index; add(id, text) it first")
        })
    }

    fn insert(&mut self, id: i64, terms: Box<[(u32, u32)]>, len: u32) {
        let slot = self.docs.len() as u32;
        for &(t, tf) in terms.iter() {
            let term = &mut self.terms[t as usize];
            term.df += 1;
            term.postings.push(Posting { slot, tf });
        }
        self.lens.push(len);
        self.total_len += len as u64;
        self.docs.push(Doc { id, terms });
        self.slot_of.insert(id, slot);
    }

    /// Index `text` under `id`; StateError if `id` is present.
    pub fn add(&mut self, id: i64, text: &str) -> Result<()> {
        self.check_new(id)?;
        let (terms, len) = self.analyze(text);
        self.insert(id, terms, len);
        Ok(())
    }

    /// Index many texts, all or nothing: every id is checked (new, distinct)
    /// before the first is added.
    pub fn add_many<S: AsRef<str>>(&mut self, ids: &[i64], texts: &[S]) -> Result<()> {
        if ids.len() != texts.len() {
            bail!(Shape: "got {} ids but {} texts; pass one text per id", ids.len(), texts.len());
        }
        let mut seen: std::collections::HashSet<i64, BuildHasherDefault<IdHasher>> = Default::default();
        for &id in ids {
            self.check_new(id)?;
            if !seen.insert(id) {
                bail!(State: "id {id} appears twice in ids; pass each id once");
            }
        }
        for (&id, text) in ids.iter().zip(texts) {
            let (terms, len) = self.analyze(text.as_ref());
            self.insert(id, terms, len);
        }
        Ok(())
    }

    fn remove_slot(&mut self, id: i64, slot: u32) {
        let doc = &mut self.docs[slot as usize];
        let terms = std::mem::take(&mut doc.terms);
        for &(t, _) in terms.iter() {
            let term = &mut self.terms[t as usize];
            term.df -= 1;
            if term.df == 0 {
                term.postings.clear();
            }
        }
        self.total_len -= self.lens[slot as usize] as u64;
        self.lens[slot as usize] = DEAD;
        self.slot_of.remove(&id);
        self.dead += 1;
    }

    /// Remove `id`; StateError if absent. Statistics are exact at once.
    pub fn remove(&mut self, id: i64) -> Result<()> {
        let slot = self.slot(id)?;
        self.remove_slot(id, slot);
        self.maybe_compact();
        Ok(())
    }

    /// Replace the text of `id`; StateError if absent.
    pub fn replace(&mut self, id: i64, text: &str) -> Result<()> {
        let slot = self.slot(id)?;
        let (terms, len) = self.analyze(text);
        self.remove_slot(id, slot);
        self.insert(id, terms, len);
        self.maybe_compact();
        Ok(())
    }

    fn maybe_compact(&mut self) {
        if self.dead >= COMPACT_MIN_DEAD && self.dead * 4 >= self.docs.len() {
            self.compact();
        }
    }

    /// Drop dead slots and terms no document holds; slots and term ids are
    /// renumbered in their old order, so every list stays sorted.
    pub fn compact(&mut self) {
        let mut term_map = vec![u32::MAX; self.terms.len()];
        let mut terms = Vec::new();
        for (old, t) in std::mem::take(&mut self.terms).into_iter().enumerate() {
            if t.df > 0 {
                term_map[old] = terms.len() as u32;
                terms.push(Term { text: t.text, df: t.df, postings: Vec::with_capacity(t.df as usize) });
            }
        }
        let old_docs = std::mem::take(&mut self.docs);
        let old_lens = std::mem::take(&mut self.lens);
        self.slot_of.clear();
        for (doc, len) in old_docs.into_iter().zip(old_lens) {
            if len == DEAD {
                continue;
            }
            let slot = self.docs.len() as u32;
            let remapped: Box<[(u32, u32)]> = doc.terms.iter().map(|&(t, tf)| (term_map[t as usize], tf)).collect();
            for &(t, tf) in remapped.iter() {
                terms[t as usize].postings.push(Posting { slot, tf });
            }
            self.slot_of.insert(doc.id, slot);
            self.docs.push(Doc { id: doc.id, terms: remapped });
            self.lens.push(len);
        }
        self.term_ids = terms.iter().enumerate().map(|(i, t)| (t.text.clone(), i as u32)).collect();
        self.terms = terms;
        self.dead = 0;
        *self.scratch.get_mut().unwrap_or_else(|e| e.into_inner()) = Scratch::default();
    }

    // Accessors for the search module (same crate, read-only).
    pub(crate) fn n_slots(&self) -> usize {
        self.docs.len()
    }

    pub(crate) fn live_slot(&self, id: i64) -> Option<u32> {
        self.slot_of.get(&id).copied()
    }

    pub(crate) fn slot_len(&self, slot: u32) -> u32 {
        self.lens[slot as usize]
    }

    pub(crate) fn slot_id(&self, slot: u32) -> i64 {
        self.docs[slot as usize].id
    }

    pub(crate) fn slot_tf(&self, slot: u32, tid: u32) -> Option<u32> {
        let terms = &self.docs[slot as usize].terms;
        terms.binary_search_by_key(&tid, |&(t, _)| t).ok().map(|i| terms[i].1)
    }

    /// (slot, tf) of every posting of `tid`, dead slots included.
    pub(crate) fn postings(&self, tid: u32) -> impl Iterator<Item = (u32, u32)> + '_ {
        self.terms[tid as usize].postings.iter().map(|p| (p.slot, p.tf))
    }

    pub(crate) fn postings_len(&self, tid: u32) -> usize {
        self.terms[tid as usize].postings.len()
    }
}

#[cfg(test)]
mod tests;
