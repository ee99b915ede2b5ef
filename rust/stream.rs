//! The two accumulators every scan feeds, one row block at a time: the k best
//! rows (`TopK`) and a running log-sum-exp (`StreamLse`). Both merge partials
//! of consecutive row ranges, so chunked scans give the serial result.

use crate::simd;

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

/// Exponents below this (relative to the largest seen) add less than e^-50 of
/// the sum each: they cannot change an f64 sum even over 1e9 rows, so the exp is skipped.
const LSE_CUTOFF: f64 = 50.0;

/// Running log-sum-exp of kappa * s: a running max and a rescaled sum.
///
/// Each row block is summed against its own maximum and then folded in, so a
/// block contributes the same partial wherever a scan starts: chunked and
/// serial scans differ only in the order of the final f64 folds.
#[derive(Clone, Debug)]
pub struct StreamLse {
    kappa: f64,
    max: f64,
    sum: f64,
    n: usize,
}

impl StreamLse {
    pub fn new(kappa: f64) -> Self {
        StreamLse { kappa, max: f64::NEG_INFINITY, sum: 0.0, n: 0 }
    }

    fn fold(&mut self, max: f64, sum: f64) {
        if max == f64::NEG_INFINITY {
            return;
        }
        if max > self.max {
            self.sum = self.sum * (self.max - max).exp() + sum;
            self.max = max;
        } else {
            self.sum += sum * (max - self.max).exp();
        }
    }

    #[inline]
    pub fn push_block(&mut self, sims: &[f32]) {
        self.n += sims.len();
        let bmax = simd::max(sims);
        let m = self.kappa * bmax as f64;
        // A whole block far below the running max adds nothing an f64 can hold.
        if sims.is_empty() || m < self.max - LSE_CUTOFF {
            return;
        }
        let (k, mx) = (self.kappa as f32, m as f32);
        let floor = -LSE_CUTOFF as f32;
        let mut acc = [0f64; 4];
        for (i, &x) in sims.iter().enumerate() {
            let t = k * x - mx;
            if t > floor {
                acc[i & 3] += t.exp() as f64;
            }
        }
        self.fold(m, (acc[0] + acc[1]) + (acc[2] + acc[3]));
    }

    /// Fold in the partial of a later, disjoint range of rows.
    pub fn merge(&mut self, other: &StreamLse) {
        self.fold(other.max, other.sum);
        self.n += other.n;
    }

    pub fn value(&self) -> f64 {
        self.max + self.sum.ln()
    }

    pub fn rows(&self) -> usize {
        self.n
    }
}
