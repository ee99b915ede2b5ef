//! bm25 ranking over a `KeywordIndex`, optionally restricted to allowed ids.
//!
//! Two plans give the same bits (both sum the same contributions, from
//! `term_score`, in the same order of query terms):
//! - term at a time: walk each query term's postings into a dense score
//!   accumulator indexed by slot (reused between searches);
//! - document at a time, when an allow-list is much smaller than the
//!   postings: look each query term up in each allowed document;
//!   otherwise the term-at-a-time candidates are kept if their id is in the
//!   (sorted) allow-list, which costs O(|allow|) only to check its order.
//!
//! The allow-list restricts the ranking itself, so a filtered search returns
//! min(k, matching allowed documents) results, never a truncated top-k.
//! Results are ordered by score descending, then id ascending.

use std::cmp::Ordering;
use std::sync::MutexGuard;

use crate::keyword::{term_score, KeywordIndex, Scratch, DEAD};
use crate::text::for_each_token;

/// A query's distinct known terms with their idf, in the order of their text.
fn query_terms(index: &KeywordIndex, query: &str) -> Vec<(u32, f64)> {
    let mut tids: Vec<u32> = Vec::new();
    for_each_token(query, |term, _, _| {
        if let Some(t) = index.term_id(term) {
            if index.df_of(t) > 0 {
                tids.push(t);
            }
        }
    });
    tids.sort_unstable();
    tids.dedup();
    tids.sort_by(|&a, &b| index.term_text(a).cmp(index.term_text(b)));
    tids.into_iter().map(|t| (t, index.idf_for_df(index.df_of(t)))).collect()
}

fn by_rank(a: &(f64, i64), b: &(f64, i64)) -> Ordering {
    b.0.total_cmp(&a.0).then(a.1.cmp(&b.1))
}

/// The best `k` of `cands`, ranked; `k` is capped at the candidate count.
fn top_k(mut cands: Vec<(f64, i64)>, k: usize) -> (Vec<i64>, Vec<f64>) {
    let k = k.min(cands.len());
    if k == 0 {
        return (Vec::new(), Vec::new());
    }
    if k < cands.len() {
        cands.select_nth_unstable_by(k - 1, by_rank);
        cands.truncate(k);
    }
    cands.sort_unstable_by(by_rank);
    cands.into_iter().map(|(s, id)| (id, s)).unzip()
}

/// The best `k` allowed candidates. The best `want` overall are selected and
/// filtered; if at least `k` of them are allowed, they hold the allowed top-k
/// (any allowed candidate outside them ranks below all of them). Otherwise
/// `want` grows fourfold. With a large allow-list this checks a few dozen ids
/// instead of every candidate.
fn top_k_allowed(mut cands: Vec<(f64, i64)>, k: usize, allowed: impl Fn(i64) -> bool) -> (Vec<i64>, Vec<f64>) {
    let mut want = k.saturating_mul(4).max(64);
    while want < cands.len() {
        cands.select_nth_unstable_by(want - 1, by_rank);
        let head: Vec<(f64, i64)> = cands[..want].iter().copied().filter(|&(_, id)| allowed(id)).collect();
        if head.len() >= k {
            return top_k(head, k);
        }
        want = want.saturating_mul(4);
    }
    cands.retain(|&(_, id)| allowed(id));
    top_k(cands, k)
}

impl KeywordIndex {
    /// The `k` best documents for `query` by bm25: (ids, scores), best first.
    ///
    /// Only documents sharing a term with the query are ranked. With
    /// `allow`, only those ids are (unknown ids are ignored, repeats count
    /// once). Never allocates more than the number of candidates, whatever `k`.
    pub fn search(&self, query: &str, k: usize, allow: Option<&[i64]>) -> (Vec<i64>, Vec<f64>) {
        let qterms = query_terms(self, query);
        if qterms.is_empty() || k == 0 {
            return (Vec::new(), Vec::new());
        }
        let avg_len = self.avg_len();
        let Some(ids) = allow else {
            return top_k(self.term_at_a_time(&qterms, avg_len), k);
        };
        // Callers usually pass ids in ascending order (from SQL); sort only if not.
        let sorted: std::borrow::Cow<'_, [i64]> = if ids.windows(2).all(|w| w[0] < w[1]) {
            std::borrow::Cow::Borrowed(ids)
        } else {
            let mut v = ids.to_vec();
            v.sort_unstable();
            v.dedup();
            std::borrow::Cow::Owned(v)
        };
        let postings: usize = qterms.iter().map(|&(t, _)| self.postings_len(t)).sum();
        if sorted.len().saturating_mul(4) < postings {
            let slots: Vec<u32> = sorted.iter().filter_map(|&id| self.live_slot(id)).collect();
            return top_k(self.doc_at_a_time(&qterms, avg_len, &slots), k);
        }
        let cands = self.term_at_a_time(&qterms, avg_len);
        top_k_allowed(cands, k, |id| sorted.binary_search(&id).is_ok())
    }

    fn doc_at_a_time(&self, qterms: &[(u32, f64)], avg_len: f64, slots: &[u32]) -> Vec<(f64, i64)> {
        let mut out = Vec::new();
        for &slot in slots {
            let len = self.slot_len(slot);
            let mut score = 0.0;
            let mut hit = false;
            for &(t, idf) in qterms {
                if let Some(tf) = self.slot_tf(slot, t) {
                    score += term_score(idf, tf, len, avg_len);
                    hit = true;
                }
            }
            if hit {
                out.push((score, self.slot_id(slot)));
            }
        }
        out
    }

    fn term_at_a_time(&self, qterms: &[(u32, f64)], avg_len: f64) -> Vec<(f64, i64)> {
        // A concurrent search (another thread, GIL released) gets its own buffers.
        let mut guard: MutexGuard<'_, Scratch>;
        let mut own = Scratch::default();
        let s: &mut Scratch = match self.scratch.try_lock() {
            Ok(g) => {
                guard = g;
                &mut guard
            }
            Err(_) => &mut own,
        };
        let n = self.n_slots();
        s.acc.resize(n, 0.0);
        for &(t, idf) in qterms {
            for (slot, tf) in self.postings(t) {
                let len = self.slot_len(slot);
                if len == DEAD {
                    continue;
                }
                let acc = &mut s.acc[slot as usize];
                if *acc == 0.0 {
                    s.touched.push(slot);
                }
                *acc += term_score(idf, tf, len, avg_len);
            }
        }
        let mut out = Vec::with_capacity(s.touched.len());
        for &slot in &s.touched {
            out.push((s.acc[slot as usize], self.slot_id(slot)));
            s.acc[slot as usize] = 0.0;
        }
        s.touched.clear();
        out
    }
}
