//! What the GEMM batch kernels of `simd_avx512` and `simd_avx2` share:
//! the walk of a block of rows in micro-tiles (`row_tiles`) and the top-k
//! lists their fused variants fill (`TopLists`).
//!
//! The lists are flat arrays: an insertion is a short shift in place (no Vec
//! growth, no memmove call), and the bars sit side by side so that a kernel
//! compares a register's worth of them with one load. With 64 queries the
//! inserts of `TopK` cost 17% of a serial 1k-row batch and a third of a
//! chunked one. Every list is the one `TopK::push` would build from the same
//! cosines in the same row order, and `into_topk` hands them back as `TopK`s.

use crate::topk::TopK;

/// Walk the rows of a block in micro-tiles of `MR` rows: `f(r, ri, valid)`
/// gets the tile's row pointers, its first row and how many of its rows are
/// real. A short last tile repeats its last row, so a row gets the same
/// arithmetic wherever it sits; the pointers step from tile to tile (rather
/// than being derived from the index) so that they stay in registers.
#[inline(always)]
pub(crate) fn row_tiles<const MR: usize>(rows: &[f32], d: usize, mut f: impl FnMut(&[*const f32; MR], usize, usize)) {
    let nrows = rows.len() / d;
    let base = rows.as_ptr();
    let mut r = [base; MR];
    for (t, p) in r.iter_mut().enumerate() {
        *p = base.wrapping_add(t * d);
    }
    let mut ri = 0;
    while ri + MR <= nrows {
        f(&r, ri, MR);
        for p in r.iter_mut() {
            *p = p.wrapping_add(MR * d);
        }
        ri += MR;
    }
    if ri < nrows {
        for (t, p) in r.iter_mut().enumerate() {
            *p = base.wrapping_add((ri + t).min(nrows - 1) * d);
        }
        f(&r, ri, nrows - ri);
    }
}

/// k best (cosine, row) pairs for each of `nq` queries, best first, ties to
/// the lower row (rows arrive in increasing order).
pub struct TopLists {
    k: usize,
    /// Slots per list: min(k, rows of the chunk), so a huge k allocates
    /// for the rows only.
    cap: usize,
    len: Vec<usize>,
    sims: Vec<f32>,
    rows: Vec<usize>,
    /// `bars[j]`: the cosine a row must beat to enter list j (-inf until it
    /// holds k), padded with -inf to whole blocks of `pad` lanes.
    bars: Vec<f32>,
}

impl TopLists {
    /// Empty lists for `nq` queries over at most `rows` rows; `pad` rounds
    /// the bars up to the kernel's query block.
    pub fn new(k: usize, nq: usize, rows: usize, pad: usize) -> Self {
        let cap = k.min(rows);
        TopLists {
            k,
            cap,
            len: vec![0; nq],
            sims: vec![0.0; nq * cap],
            rows: vec![0; nq * cap],
            bars: vec![f32::NEG_INFINITY; nq.div_ceil(pad.max(1)) * pad.max(1)],
        }
    }

    /// Every query's bar, padded (see `new`).
    #[inline]
    pub fn bars(&self) -> &[f32] {
        &self.bars
    }

    /// Offer cosine `s` of `row` to list `j`: the caller has checked that it
    /// beats `bars()[j]` (so it is not NaN).
    #[inline]
    pub fn push(&mut self, j: usize, s: f32, row: usize) {
        let n = self.len[j];
        let base = j * self.cap;
        let (sims, rows) = (&mut self.sims[base..base + self.cap], &mut self.rows[base..base + self.cap]);
        // A full list drops its last entry; equal cosines stay ahead.
        let mut i = if n == self.k { n - 1 } else { n };
        while i > 0 && sims[i - 1] < s {
            sims[i] = sims[i - 1];
            rows[i] = rows[i - 1];
            i -= 1;
        }
        sims[i] = s;
        rows[i] = row;
        if n < self.k {
            self.len[j] = n + 1;
        }
        if self.len[j] == self.k {
            self.bars[j] = sims[self.k - 1];
        }
    }

    /// Offer the cosines `sims[l]` of `row` whose bit l is set in `bits` to
    /// lists `j0 + l` (the lanes of one kernel register that beat their bars).
    #[inline]
    pub fn push_lanes(&mut self, sims: &[f32], mut bits: u32, j0: usize, row: usize) {
        while bits != 0 {
            let l = bits.trailing_zeros() as usize;
            bits &= bits - 1;
            self.push(j0 + l, sims[l], row);
        }
    }

    /// The lists as `TopK`s, in query order.
    pub fn into_topk(self) -> Vec<TopK> {
        (0..self.len.len())
            .map(|j| {
                let base = j * self.cap;
                let mut t = TopK::new(self.k, self.len[j]);
                // Best first: each push lands at the end, so nothing moves.
                for i in base..base + self.len[j] {
                    t.push(self.sims[i], self.rows[i]);
                }
                t
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_equal_topk_pushes_with_ties_and_small_chunks() {
        let mut r = crate::rng::Rng::new(3);
        // Coarse values so that ties are common.
        let s: Vec<f32> = (0..500).map(|_| (r.normal() * 4.0).round() as f32 / 4.0).collect();
        for (k, rows) in [(1usize, 500usize), (3, 500), (10, 500), (10, 7), (1000, 500), (usize::MAX, 500)] {
            let mut lists = TopLists::new(k, 2, rows, 16);
            let mut want = [TopK::new(k, rows), TopK::new(k, rows)];
            for (i, &v) in s.iter().take(rows).enumerate() {
                for (j, w) in want.iter_mut().enumerate() {
                    let v = if j == 0 { v } else { -v };
                    w.push(v, i);
                    if v > lists.bars()[j] {
                        lists.push(j, v, i);
                    }
                    assert_eq!(lists.bars()[j], w.bar(), "k={k} row {i}");
                }
            }
            for (got, w) in lists.into_topk().iter().zip(&want) {
                assert_eq!((&got.sims, &got.rows), (&w.sims, &w.rows), "k={k}");
                assert_eq!(got.bar(), w.bar());
            }
        }
    }
}
