//! The k best rows of a scan (`TopK`), kept apart from the SIMD layer: the
//! AVX-512 micro-kernel fills it directly, and it needs no kernel itself.

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
    pub fn merge(k: usize, parts: impl IntoIterator<Item = TopK>) -> TopK {
        let mut all: Vec<(f32, usize)> = Vec::new();
        for p in parts {
            all.extend(p.sims.into_iter().zip(p.rows));
        }
        all.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
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
