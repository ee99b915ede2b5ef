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

    fn bits(t: &TopK) -> (Vec<usize>, Vec<u32>, u32) {
        (t.rows.clone(), t.sims.iter().map(|s| s.to_bits()).collect(), t.bar().to_bits())
    }

    /// Cosines from a small set (many ties, 0.0 beside -0.0).
    fn tied_cosines() -> impl proptest::strategy::Strategy<Value = Vec<f32>> {
        let v = proptest::sample::select(vec![-1.0f32, -0.5, -0.0, 0.0, 0.25, 0.5, 0.75, 0.9, 1.0]);
        proptest::collection::vec(v, 0..400)
    }

    fn parts_of(k: usize, cos: &[f32], cuts: Vec<usize>, shuffle: Option<u64>) -> Vec<TopK> {
        let mut cuts: Vec<usize> = cuts.into_iter().filter(|&c| c < cos.len()).collect();
        cuts.extend([0, cos.len()]);
        cuts.sort_unstable();
        cuts.dedup();
        let mut parts: Vec<TopK> = cuts
            .windows(2)
            .map(|w| {
                let mut t = TopK::new(k, w[1] - w[0]);
                t.push_block(w[0], &cos[w[0]..w[1]]);
                t
            })
            .collect();
        if let Some(seed) = shuffle {
            let mut r = crate::linalg::rng::Rng::new(seed);
            for i in (1..parts.len()).rev() {
                parts.swap(i, (r.next_u64() % (i as u64 + 1)) as usize);
            }
        }
        parts
    }

    fn one_scan(k: usize, cos: &[f32]) -> TopK {
        let mut whole = TopK::new(k, cos.len());
        whole.push_block(0, cos);
        whole
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig {
            cases: 256, failure_persistence: None, ..proptest::prelude::ProptestConfig::default()
        })]

        /// Cut the rows anywhere, scan each part, merge the parts in row order:
        /// the one-scan list bit for bit, on both merge paths (k <= 64 and above).
        #[test]
        fn merge_in_row_order_is_the_one_scan(
            cos in tied_cosines(),
            k in 1usize..100,
            cuts in proptest::collection::vec(0usize..400, 0..6),
        ) {
            let merged = TopK::merge(k, parts_of(k, &cos, cuts, None));
            proptest::prop_assert_eq!(bits(&merged), bits(&one_scan(k, &cos)));
        }

        /// Merged in any order, the parts give the same k best cosines; the same
        /// rows too where no tie is at stake (distinct cosines) or k > 64 (the
        /// sorting path). With ties at the bar and k <= 64 the first part seen
        /// wins a tie: the scans merge in row order, which is why that holds.
        #[test]
        fn merge_in_any_order_keeps_the_k_best(
            cos in tied_cosines(),
            k in 1usize..100,
            cuts in proptest::collection::vec(0usize..400, 0..6),
            seed in proptest::prelude::any::<u64>(),
        ) {
            let whole = one_scan(k, &cos);
            let merged = TopK::merge(k, parts_of(k, &cos, cuts.clone(), Some(seed)));
            proptest::prop_assert_eq!(&merged.sims, &whole.sims);
            if k > PUSH_MERGE_MAX_K {
                proptest::prop_assert_eq!(bits(&merged), bits(&whole));
            }
            // The same rows with every cosine distinct (a permutation of n levels).
            let n = cos.len();
            let mut distinct: Vec<f32> = (0..n).map(|i| i as f32 / n.max(1) as f32).collect();
            let mut r = crate::linalg::rng::Rng::new(seed ^ 0x9e37_79b9);
            for i in (1..n).rev() {
                distinct.swap(i, (r.next_u64() % (i as u64 + 1)) as usize);
            }
            let merged = TopK::merge(k, parts_of(k, &distinct, cuts, Some(seed)));
            proptest::prop_assert_eq!(bits(&merged), bits(&one_scan(k, &distinct)));
        }
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
