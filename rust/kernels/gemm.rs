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

use std::arch::x86_64::*;

use crate::kernels::topk::TopK;

/// Slots of a list the AVX-512 kernel inserts into without a branch: one
/// compare finds the place, one permute and blend shift the tail. The scalar
/// shift loop's data-dependent exit mispredicts on most inserts: with it, a
/// 64-query batch over 1k rows took 249 us serial against 228 us, over 2k
/// rows in eight chunks 901 us against 582 us (one thread).
const SMALL: usize = 16;

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
    /// Slots per list: `SMALL` (unused slots -inf) when min(k, rows of the
    /// chunk) fits, else that minimum, so a huge k allocates for the rows only.
    slot: usize,
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
        let slot = if cap <= SMALL { SMALL } else { cap };
        TopLists {
            k,
            slot,
            len: vec![0; nq],
            sims: vec![f32::NEG_INFINITY; nq * slot],
            rows: vec![0; nq * slot],
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
        let base = j * self.slot;
        let (sims, rows) = (&mut self.sims[base..base + self.slot], &mut self.rows[base..base + self.slot]);
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
    pub fn push_lanes(&mut self, sims: &[f32], bits: u32, j0: usize, row: usize) {
        for (j, s) in Self::lanes(sims, bits, j0) {
            self.push(j, s, row);
        }
    }

    /// The lanes set in `bits`, lowest first, as (list, cosine): list `j0 + l` is offered `sims[l]`.
    #[inline(always)]
    fn lanes(sims: &[f32], mut bits: u32, j0: usize) -> impl Iterator<Item = (usize, f32)> + '_ {
        std::iter::from_fn(move || {
            (bits != 0).then(|| {
                let l = bits.trailing_zeros() as usize;
                bits &= bits - 1;
                (j0 + l, sims[l])
            })
        })
    }

    /// List j's `SMALL` slots of cosines and of rows, for the branch-free inserts.
    #[inline(always)]
    fn small_slots(&mut self, j: usize) -> (*mut f32, *mut usize) {
        let base = j * SMALL;
        (self.sims[base..base + SMALL].as_mut_ptr(), self.rows[base..base + SMALL].as_mut_ptr())
    }

    /// List j (of `SMALL` slots) took one more cosine, a full one dropping its last: its length,
    /// and its bar, slot k - 1, once it holds k.
    #[inline(always)]
    fn took_one(&mut self, j: usize) {
        self.len[j] = (self.len[j] + 1).min(self.k);
        if self.len[j] == self.k {
            self.bars[j] = self.sims[j * SMALL + self.k - 1];
        }
    }

    /// `push_lanes` for the AVX-512 kernel: lists of `SMALL` slots take the
    /// branch-free insert.
    #[target_feature(enable = "avx512f")]
    pub unsafe fn push_lanes16(&mut self, sims: &[f32], bits: u32, j0: usize, row: usize) {
        if self.slot != SMALL {
            return self.push_lanes(sims, bits, j0, row);
        }
        let keep_k = ((1u32 << self.k.min(SMALL)) - 1) as __mmask16;
        let back = _mm512_setr_epi32(0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14);
        let (back_lo, back_hi) = (_mm512_setr_epi64(0, 0, 1, 2, 3, 4, 5, 6), _mm512_setr_epi64(7, 8, 9, 10, 11, 12, 13, 14));
        for (j, s) in Self::lanes(sims, bits, j0) {
            let (ps, pr) = self.small_slots(j);
            let pr = pr as *mut i64;
            let v = _mm512_loadu_ps(ps);
            // Equal cosines stay ahead: s goes after every slot >= s, a
            // prefix of the list (-inf slots never count: s beats the bar).
            let ahead = _mm512_cmp_ps_mask::<_CMP_GE_OQ>(v, _mm512_set1_ps(s)) as u32;
            let pos = (!ahead).trailing_zeros();
            let (keep, at) = (((1u32 << pos) - 1) as __mmask16, (1u32 << pos) as __mmask16);
            let out = _mm512_mask_blend_ps(keep, _mm512_permutexvar_ps(back, v), v);
            // Slots past k drop what the shift pushed there.
            let out = _mm512_mask_mov_ps(_mm512_mask_mov_ps(out, at, _mm512_set1_ps(s)), !keep_k, _mm512_set1_ps(f32::NEG_INFINITY));
            _mm512_storeu_ps(ps, out);
            let (lo, hi) = (_mm512_loadu_epi64(pr), _mm512_loadu_epi64(pr.add(8)));
            let r = _mm512_set1_epi64(row as i64);
            let out_lo = _mm512_mask_blend_epi64(keep as __mmask8, _mm512_permutex2var_epi64(lo, back_lo, hi), lo);
            let out_hi = _mm512_mask_blend_epi64((keep >> 8) as __mmask8, _mm512_permutex2var_epi64(lo, back_hi, hi), hi);
            _mm512_storeu_epi64(pr, _mm512_mask_mov_epi64(out_lo, at as __mmask8, r));
            _mm512_storeu_epi64(pr.add(8), _mm512_mask_mov_epi64(out_hi, (at >> 8) as __mmask8, r));
            self.took_one(j);
        }
    }

    /// `push_lanes` for the AVX2 kernel: lists of `SMALL` slots take the branch-free insert of
    /// `push_lanes16` with two 8-lane registers of cosines and four 4-lane registers of rows
    /// (the scalar shift's data-dependent exit mispredicts on most inserts).
    #[target_feature(enable = "avx2")]
    pub unsafe fn push_lanes8(&mut self, sims: &[f32], bits: u32, j0: usize, row: usize) {
        if self.slot != SMALL {
            return self.push_lanes(sims, bits, j0, row);
        }
        let (idx_lo, idx_hi) = (_mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7), _mm256_setr_epi32(8, 9, 10, 11, 12, 13, 14, 15));
        let (back_lo, back_hi) = (_mm256_setr_epi32(0, 0, 1, 2, 3, 4, 5, 6), _mm256_setr_epi32(7, 0, 1, 2, 3, 4, 5, 6));
        let last_lane = _mm256_set1_epi32(7);
        for (j, s) in Self::lanes(sims, bits, j0) {
            let (ps, pr) = self.small_slots(j);
            let pr = pr as *mut __m256i;
            let (lo, hi) = (_mm256_loadu_ps(ps), _mm256_loadu_ps(ps.add(8)));
            let sv = _mm256_set1_ps(s);
            // Equal cosines stay ahead: s goes after every slot >= s, a prefix of the list. What
            // the shift pushes past slot k - 1 stays there unread: s beats the bar, slot k - 1
            // of a full list, so it always lands before it.
            let ahead = _mm256_movemask_ps(_mm256_cmp_ps::<_CMP_GE_OQ>(lo, sv)) as u32
                | (_mm256_movemask_ps(_mm256_cmp_ps::<_CMP_GE_OQ>(hi, sv)) as u32) << 8;
            let pos = (!ahead).trailing_zeros() as i32;
            let pv = _mm256_set1_epi32(pos);
            let put = |v: __m256, shifted: __m256, idx: __m256i| {
                let keep = _mm256_castsi256_ps(_mm256_cmpgt_epi32(pv, idx));
                let at = _mm256_castsi256_ps(_mm256_cmpeq_epi32(pv, idx));
                _mm256_blendv_ps(_mm256_blendv_ps(shifted, v, keep), sv, at)
            };
            let sh_lo = _mm256_permutevar8x32_ps(lo, back_lo);
            let sh_hi = _mm256_blend_ps::<1>(_mm256_permutevar8x32_ps(hi, back_hi), _mm256_permutevar8x32_ps(lo, last_lane));
            _mm256_storeu_ps(ps, put(lo, sh_lo, idx_lo));
            _mm256_storeu_ps(ps.add(8), put(hi, sh_hi, idx_hi));
            let r = [_mm256_loadu_si256(pr), _mm256_loadu_si256(pr.add(1)), _mm256_loadu_si256(pr.add(2)), _mm256_loadu_si256(pr.add(3))];
            let (rv, pv64) = (_mm256_set1_epi64x(row as i64), _mm256_set1_epi64x(pos as i64));
            for q in 0..4usize {
                // Each row moves one slot on: lane 0 takes the previous register's last row.
                let prev = _mm256_permute4x64_epi64::<0b11_11_11_11>(r[q.saturating_sub(1)]);
                let shifted = _mm256_blend_epi32::<0b11>(_mm256_permute4x64_epi64::<0b10_01_00_11>(r[q]), prev);
                let i = 4 * q as i64;
                let idx = _mm256_setr_epi64x(i, i + 1, i + 2, i + 3);
                let out = _mm256_blendv_epi8(shifted, r[q], _mm256_cmpgt_epi64(pv64, idx));
                _mm256_storeu_si256(pr.add(q), _mm256_blendv_epi8(out, rv, _mm256_cmpeq_epi64(pv64, idx)));
            }
            self.took_one(j);
        }
    }

    /// The lists as `TopK`s, in query order.
    pub fn into_topk(self) -> Vec<TopK> {
        (0..self.len.len())
            .map(|j| {
                let base = j * self.slot;
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
        let mut r = crate::linalg::rng::Rng::new(3);
        // Coarse values so that ties are common.
        let s: Vec<f32> = (0..500).map(|_| (r.normal() * 4.0).round() as f32 / 4.0).collect();
        use crate::kernels::isa::Isa;
        // 0: the scalar insert; 1 and 2: the AVX-512 and AVX2 inserts, where the CPU has them.
        let paths = [true, Isa::Avx512.supported(), Isa::Avx2.supported()];
        let cases = [(1usize, 500usize), (3, 500), (10, 500), (10, 7), (16, 500), (17, 500), (40, 30), (40, 12), (1000, 500), (usize::MAX, 500)];
        let runs = cases.into_iter().flat_map(|c| (0..3).filter(|&p| paths[p]).map(move |p| (c, p)));
        for ((k, rows), simd) in runs {
            let mut lists = TopLists::new(k, 2, rows, 16);
            let mut want = [TopK::new(k, rows), TopK::new(k, rows)];
            for (i, &v) in s.iter().take(rows).enumerate() {
                for (j, w) in want.iter_mut().enumerate() {
                    let v = if j == 0 { v } else { -v };
                    w.push(v, i);
                    if v > lists.bars()[j] {
                        match simd {
                            // SAFETY: the CPU has the path's ISA (`paths`).
                            1 => unsafe { lists.push_lanes16(&[v], 1, j, i) },
                            2 => unsafe { lists.push_lanes8(&[v], 1, j, i) },
                            _ => lists.push(j, v, i),
                        }
                    }
                    assert_eq!(lists.bars()[j], w.bar(), "k={k} row {i}");
                }
            }
            for (got, w) in lists.into_topk().iter().zip(&want) {
                assert_eq!((&got.sims, &got.rows), (&w.sims, &w.rows), "k={k} simd={simd}");
                assert_eq!(got.bar(), w.bar());
            }
        }
    }
}
