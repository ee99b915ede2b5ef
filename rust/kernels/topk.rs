//! The k best rows of a scan (`TopK`), kept apart from the SIMD layer: the
//! AVX-512 micro-kernel fills it directly, and it needs no kernel itself.

use crate::error::{bail, Result};

pub fn check_k(k: usize) -> Result<()> {
    if k == 0 {
        bail!(Config: "k must be >= 1, got 0; the default is k=10");
    }
    Ok(())
}

/// Up to this k, `merge` pushes entries into one list instead of sorting them.
const PUSH_MERGE_MAX_K: usize = 64;

/// The k best (cosine, row) pairs seen so far, best first, ties to the lower
/// row. k is small (8-16), so an insertion buffer beats a heap.
#[derive(Clone, Debug)]
pub struct TopK {
    k: usize,
    /// The cosine a row must beat to enter: -inf until k rows are held.
    bar: f32,
    pub sims: Vec<f32>,
    pub rows: Vec<usize>,
}

impl TopK {
    /// A buffer for the k best of at most `rows` rows. It reserves room for
    /// min(k, rows) entries, never k: k comes from the caller (a search limit)
    /// and may be far larger than any scope, or than memory.
    pub fn new(k: usize, rows: usize) -> Self {
        let cap = k.min(rows) + 1;
        TopK { k, bar: f32::NEG_INFINITY, sims: Vec::with_capacity(cap), rows: Vec::with_capacity(cap) }
    }

    /// Insert a row known to beat the bar (or any row while fewer than k are held).
    #[cold]
    fn insert(&mut self, s: f32, row: usize) {
        if self.sims.len() == self.k {
            self.sims.pop();
            self.rows.pop();
        }
        // Equal cosines stay ahead: rows arrive in increasing order, so ties keep the lower row.
        let mut i = self.sims.len();
        while i > 0 && self.sims[i - 1] < s {
            i -= 1;
        }
        self.sims.insert(i, s);
        self.rows.insert(i, row);
        if self.sims.len() == self.k {
            self.bar = self.sims[self.k - 1];
        }
    }

    /// The cosine a row must beat to enter (-inf until k rows are held).
    #[inline]
    pub fn bar(&self) -> f32 {
        self.bar
    }

    #[inline]
    pub fn push(&mut self, s: f32, row: usize) {
        if s > self.bar || (self.sims.len() < self.k && !s.is_nan()) {
            self.insert(s, row);
        }
    }

    /// Offer a block of finite cosines whose first row is `row0`. The hot loop
    /// is one compare per row; rows fill the buffer on the cold path.
    #[inline]
    pub fn push_block(&mut self, row0: usize, sims: &[f32]) {
        let mut i = 0;
        while self.sims.len() < self.k && i < sims.len() {
            self.insert(sims[i], row0 + i);
            i += 1;
        }
        for (j, &s) in sims.iter().enumerate().skip(i) {
            if s > self.bar {
                self.insert(s, row0 + j);
            }
        }
    }

    /// Merge top-k lists of disjoint row ranges given in row order: the result
    /// is the list one scan over all rows would give (ties to the lower row).
    ///
    /// For small k each part's entries are pushed in turn: parts come in row
    /// order, so `push`'s tie rule holds, most entries fail the bar at one
    /// compare, and nothing is sorted or allocated per entry. A 1M-row scan
    /// merges 1,954 chunk lists; sorting their 19,540 entries cost about 5% of
    /// the scan. Large k (a search limit) sorts instead of inserting.
    pub fn merge(k: usize, parts: impl IntoIterator<Item = TopK>) -> TopK {
        let parts: Vec<TopK> = parts.into_iter().collect();
        let total: usize = parts.iter().map(|p| p.sims.len()).sum();
        if k <= PUSH_MERGE_MAX_K {
            let mut top = TopK::new(k, total);
            for p in parts {
                for (s, r) in p.sims.into_iter().zip(p.rows) {
                    top.push(s, r);
                }
            }
            return top;
        }
        let mut all: Vec<(f32, usize)> = Vec::with_capacity(total);
        for p in parts {
            all.extend(p.sims.into_iter().zip(p.rows));
        }
        // Equal cosines (0.0 and -0.0 included, as `push` sees them) keep row order.
        all.sort_by(|a, b| b.0.partial_cmp(&a.0).unwrap_or(std::cmp::Ordering::Equal).then(a.1.cmp(&b.1)));
        all.truncate(k);
        let mut top = TopK::new(k, all.len());
        for (s, r) in all {
            top.sims.push(s);
            top.rows.push(r);
        }
        if top.sims.len() == k {
            top.bar = top.sims[k - 1];
        }
        top
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scan(k: usize, rows: &[(f32, usize)]) -> TopK {
        let mut t = TopK::new(k, rows.len());
        for &(s, r) in rows {
            t.push(s, r);
        }
        t
    }

    #[test]
    fn merging_parts_gives_the_one_scan_list_for_small_and_large_k() {
        // Cosines with many ties (and 0.0 beside -0.0) over 3,000 rows, cut into parts.
        let mut x = 7u64;
        let cos: Vec<(f32, usize)> = (0..3000)
            .map(|r| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                let v = ((x % 21) as f32 - 10.0) / 10.0;
                (if r % 97 == 0 { -0.0 } else { v }, r)
            })
            .collect();
        for k in [1, 3, 10, 64, 65, 200, 5000] {
            let whole = scan(k, &cos);
            for cut in [1, 7, 256, 1000] {
                let parts: Vec<TopK> = cos.chunks(cut).map(|c| scan(k, c)).collect();
                let m = TopK::merge(k, parts);
                assert_eq!(m.rows, whole.rows, "k={k} cut={cut}");
                assert_eq!(m.sims.iter().map(|s| s.to_bits()).collect::<Vec<_>>(),
                           whole.sims.iter().map(|s| s.to_bits()).collect::<Vec<_>>());
                assert_eq!(m.bar().to_bits(), whole.bar().to_bits());
            }
        }
    }
}
