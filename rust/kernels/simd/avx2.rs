//! AVX2+FMA kernels (8 lanes, 16 registers).
//!
//! Every function here is `unsafe` and `#[target_feature]`: the safe front in
//! `simd.rs` calls them only after `Isa::Avx2.checked()`.

use std::arch::x86_64::*;

use crate::kernels::gemm::{row_tiles, TopLists};

#[inline]
#[target_feature(enable = "avx2")]
unsafe fn hsum(v: __m256) -> f32 {
    let lo = _mm256_castps256_ps128(v);
    let hi = _mm256_extractf128_ps(v, 1);
    let s = _mm_add_ps(lo, hi);
    let s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    let s = _mm_add_ss(s, _mm_shuffle_ps(s, s, 0x55));
    _mm_cvtss_f32(s)
}

/// Dot product with four independent 8-lane FMA chains.
#[inline]
#[target_feature(enable = "avx2,fma")]
pub unsafe fn dot(a: &[f32], b: &[f32]) -> f32 {
    let n = a.len().min(b.len());
    let (pa, pb) = (a.as_ptr(), b.as_ptr());
    let mut a0 = _mm256_setzero_ps();
    let mut a1 = _mm256_setzero_ps();
    let mut a2 = _mm256_setzero_ps();
    let mut a3 = _mm256_setzero_ps();
    let mut i = 0;
    while i + 32 <= n {
        a0 = _mm256_fmadd_ps(_mm256_loadu_ps(pa.add(i)), _mm256_loadu_ps(pb.add(i)), a0);
        a1 = _mm256_fmadd_ps(_mm256_loadu_ps(pa.add(i + 8)), _mm256_loadu_ps(pb.add(i + 8)), a1);
        a2 = _mm256_fmadd_ps(_mm256_loadu_ps(pa.add(i + 16)), _mm256_loadu_ps(pb.add(i + 16)), a2);
        a3 = _mm256_fmadd_ps(_mm256_loadu_ps(pa.add(i + 24)), _mm256_loadu_ps(pb.add(i + 24)), a3);
        i += 32;
    }
    while i + 8 <= n {
        a0 = _mm256_fmadd_ps(_mm256_loadu_ps(pa.add(i)), _mm256_loadu_ps(pb.add(i)), a0);
        i += 8;
    }
    let mut s = hsum(_mm256_add_ps(_mm256_add_ps(a0, a1), _mm256_add_ps(a2, a3)));
    while i < n {
        s += *pa.add(i) * *pb.add(i);
        i += 1;
    }
    s
}

/// Similarities of one query with four rows at a time: each query chunk
/// is loaded once for four rows, and two accumulators per row give eight
/// independent FMA chains (enough to hide the FMA latency).
///
/// Each load is paired with a prefetch of the same offset in the next group
/// of four rows, and the row pointers are carried from group to group (when
/// derived from the group index, LLVM recomputed them at every load).
/// Measured in a pure-Rust A/B on the AMD EPYC VM (d = 384, one thread):
/// 13.5 / 138 / 4,874 us at 1k / 10k / 100k rows against 17.8 / 205 /
/// 7,236 us for the same arithmetic without both changes.
#[target_feature(enable = "avx2,fma")]
pub unsafe fn dots_rows(rows: &[f32], d: usize, q: &[f32], out: &mut [f32]) {
    let pq = q.as_ptr();
    let ahead = 4 * d;
    // A short last group repeats its last row (row_tiles), so every row is
    // summed in the same order wherever it sits: scores do not depend on row order.
    row_tiles::<4>(rows, d, |r, ri, valid| {
        let z = _mm256_setzero_ps();
        let mut a = [z; 4];
        let mut b = [z; 4];
        let mut i = 0;
        while i + 16 <= d {
            let qa = _mm256_loadu_ps(pq.add(i));
            let qb = _mm256_loadu_ps(pq.add(i + 8));
            for t in 0..4 {
                // A prefetch never faults, even past the end of the rows.
                _mm_prefetch::<_MM_HINT_T0>(r[t].wrapping_add(i + ahead) as *const i8);
                a[t] = _mm256_fmadd_ps(_mm256_loadu_ps(r[t].add(i)), qa, a[t]);
                b[t] = _mm256_fmadd_ps(_mm256_loadu_ps(r[t].add(i + 8)), qb, b[t]);
            }
            i += 16;
        }
        if i + 8 <= d {
            let qa = _mm256_loadu_ps(pq.add(i));
            for t in 0..4 {
                a[t] = _mm256_fmadd_ps(_mm256_loadu_ps(r[t].add(i)), qa, a[t]);
            }
            i += 8;
        }
        let mut s = [0f32; 4];
        for t in 0..4 {
            s[t] = hsum(_mm256_add_ps(a[t], b[t]));
        }
        while i < d {
            let qv = *pq.add(i);
            for (t, v) in s.iter_mut().enumerate() {
                *v += *r[t].add(i) * qv;
            }
            i += 1;
        }
        out[ri..ri + valid].copy_from_slice(&s[..valid]);
    });
}

/// Queries per packed panel (one register).
pub const PANEL: usize = 8;
/// Rows per micro-tile: 6 rows x 2 panels = 12 accumulators, 2 query
/// registers and a broadcast in 16 registers; 8 loads feed 12 FMAs. Measured
/// (64 queries, d = 384, 1k-10k rows) 8.5-8.7 G ymm FMA/s against 7.6-8.3 for
/// 4 x 2 tiles, the peak of a register-only loop being 8.1-8.8.
const MR: usize = 6;
/// Queries one call of the batch kernel handles.
pub const QUERY_BLOCK: usize = 2 * PANEL;

/// The sums of one micro-tile: `MR` rows by `P` panels of queries.
type Acc<const P: usize> = [[__m256; P]; MR];

/// One micro-tile: each (row, query) value is one FMA chain over the
/// coordinates in order, the same in every tile position.
#[inline]
#[target_feature(enable = "avx2,fma")]
unsafe fn tile<const P: usize>(r: &[*const f32; MR], d: usize, pk: *const f32) -> Acc<P> {
    let mut acc = [[_mm256_setzero_ps(); P]; MR];
    for p in 0..d {
        let qp = pk.add(p * P * PANEL);
        let mut qv = [_mm256_setzero_ps(); P];
        for (pn, v) in qv.iter_mut().enumerate() {
            *v = _mm256_loadu_ps(qp.add(pn * PANEL));
        }
        for t in 0..MR {
            let b = _mm256_broadcast_ss(&*r[t].add(p));
            for pn in 0..P {
                acc[t][pn] = _mm256_fmadd_ps(b, qv[pn], acc[t][pn]);
            }
        }
    }
    acc
}

/// The GEMM micro-kernel over a block: `out[j * nrows + i] = rows[i] . q_j`.
#[target_feature(enable = "avx2,fma")]
unsafe fn tiles<const P: usize>(rows: &[f32], d: usize, packed: &[f32], nq: usize, out: &mut [f32]) {
    let nrows = rows.len() / d;
    let mut tmp = [0f32; PANEL];
    row_tiles::<MR>(rows, d, |r, ri, valid| {
        let acc = tile::<P>(r, d, packed.as_ptr());
        for (t, a) in acc.iter().enumerate().take(valid) {
            for (pn, v) in a.iter().enumerate() {
                _mm256_storeu_ps(tmp.as_mut_ptr(), *v);
                let j0 = pn * PANEL;
                for (l, &s) in tmp.iter().enumerate().take(nq.saturating_sub(j0).min(PANEL)) {
                    out[(j0 + l) * nrows + ri + t] = s;
                }
            }
        }
    });
}

/// `out[j * nrows + i] = rows[i] . q_j` for `nq <= QUERY_BLOCK` queries
/// packed by `simd::pack_panels` in panels of `PANEL`.
#[target_feature(enable = "avx2,fma")]
pub unsafe fn dots_packed(rows: &[f32], d: usize, packed: &[f32], nq: usize, out: &mut [f32]) {
    match nq.div_ceil(PANEL) {
        0 => {}
        1 => tiles::<1>(rows, d, packed, nq, out),
        _ => tiles::<2>(rows, d, packed, nq, out),
    }
}

/// The micro-kernel fused with each query's top-k, as `simd_avx512`'s: a
/// tile's cosines leave the registers only for the lanes that beat their
/// query's bar, rows in increasing order. False if any cosine was NaN or inf.
#[target_feature(enable = "avx2,fma")]
unsafe fn tiles_topk<const P: usize>(rows: &[f32], d: usize, packed: &[f32], nq: usize, row0: usize, q0: usize, lists: &mut TopLists) -> bool {
    let mut lanes = [0u32; P];
    for (pn, l) in lanes.iter_mut().enumerate() {
        *l = (1u32 << nq.saturating_sub(pn * PANEL).min(PANEL)) - 1;
    }
    // 0 * x is 0 for finite x and NaN otherwise; NaN survives every add.
    let zero = _mm256_setzero_ps();
    let mut bad = zero;
    let mut tmp = [0f32; PANEL];
    row_tiles::<MR>(rows, d, |r, ri, valid| {
        let acc = tile::<P>(r, d, packed.as_ptr());
        for (t, a) in acc.iter().enumerate().take(valid) {
            for (pn, &v) in a.iter().enumerate() {
                bad = _mm256_add_ps(bad, _mm256_mul_ps(v, zero));
                let j0 = q0 + pn * PANEL;
                let bar = _mm256_loadu_ps(lists.bars().as_ptr().add(j0));
                let m = _mm256_movemask_ps(_mm256_cmp_ps::<_CMP_GT_OQ>(v, bar)) as u32 & lanes[pn];
                if m != 0 {
                    _mm256_storeu_ps(tmp.as_mut_ptr(), v);
                    lists.push_lanes8(&tmp, m, j0, row0 + ri + t);
                }
            }
        }
    });
    _mm256_movemask_ps(_mm256_cmp_ps::<_CMP_UNORD_Q>(bad, bad)) == 0
}

/// `tiles_topk` for queries `q0..q0 + nq` (`nq <= QUERY_BLOCK`, `q0` a
/// multiple of it) packed in panels of `PANEL`, into `lists` (whose bars are
/// padded to whole query blocks).
#[target_feature(enable = "avx2,fma")]
pub unsafe fn topk_packed(rows: &[f32], d: usize, packed: &[f32], nq: usize, row0: usize, q0: usize, lists: &mut TopLists) -> bool {
    assert!(nq <= QUERY_BLOCK && q0 + nq.div_ceil(PANEL) * PANEL <= lists.bars().len());
    match nq.div_ceil(PANEL) {
        0 => true,
        1 => tiles_topk::<1>(rows, d, packed, nq, row0, q0, lists),
        _ => tiles_topk::<2>(rows, d, packed, nq, row0, q0, lists),
    }
}

#[target_feature(enable = "avx2")]
pub unsafe fn sum(a: &[f32]) -> f64 {
    let n = a.len();
    let p = a.as_ptr();
    // Eight independent chains: enough to keep the adds off the critical
    // path, so that this pass runs at the speed of the loads alone.
    let mut acc = [_mm256_setzero_ps(); 8];
    let mut i = 0;
    let mut total = 0f64;
    // Flush to f64 every 64k floats so long sums keep their precision.
    while i + 64 <= n {
        let end = (i + 65536).min(n - n % 64);
        while i < end {
            for (l, a) in acc.iter_mut().enumerate() {
                *a = _mm256_add_ps(*a, _mm256_loadu_ps(p.add(i + 8 * l)));
            }
            i += 64;
        }
        for v in acc.iter_mut() {
            total += hsum(*v) as f64;
            *v = _mm256_setzero_ps();
        }
    }
    while i < n {
        total += *p.add(i) as f64;
        i += 1;
    }
    total
}
