//! AVX-512F kernels (16 lanes, 32 registers).
//!
//! Every function here is `unsafe` and `#[target_feature]`: the safe front in
//! `simd.rs` calls them only after `Isa::Avx512.checked()`. Loads past the
//! last full vector are masked, so no kernel reads outside its slices.
//!
//! Each row's result is computed by the same instruction sequence wherever
//! the row sits in a block (short last groups repeat their last row), so a
//! score never depends on the order of the rows or on how they are chunked.

use std::arch::x86_64::*;

use crate::kernels::gemm::{row_tiles, TopLists};

/// Rows per pass of the single-query scan: one query load serves eight rows,
/// whose eight accumulators are enough independent FMA chains.
const ROWS: usize = 8;
/// Floats ahead of the read floor's loads that it prefetches (12 KiB):
/// measured 2-10% faster than the hardware prefetcher alone at 1k-100k rows.
const SUM_AHEAD: usize = 3072;
/// Rows per micro-tile of the batch kernel. Six rather than four: each
/// coordinate's four query loads (from L2, see `tile`) then feed 24 FMAs
/// instead of 16. On an Intel Xeon with two 512-bit FMA ports the 4 x 4 tile
/// ran at about half the FMA peak, held by those loads, and 6 x 4 was
/// 1.2-1.3x faster side by side (micro-kernel alone, 960 rows); on the AMD
/// EPYC, whose FMA peak is lower, 6 x 4 ran within 1% of 4 x 4.
const MR: usize = 6;
/// Queries per packed panel (one register).
pub const PANEL: usize = 16;
/// Panels per micro-tile: 6 rows x 4 panels = 24 accumulators, plus 4 query
/// registers and a broadcast, in 29 of the 32 registers; 10 loads feed 24
/// FMAs.
pub const MAX_PANELS: usize = 4;
/// Queries one call of the batch kernel handles.
pub const QUERY_BLOCK: usize = PANEL * MAX_PANELS;

#[inline(always)]
fn mask(n: usize) -> __mmask16 {
    ((1u32 << n) - 1) as __mmask16
}

/// Dot product with four 16-lane FMA chains and a masked tail.
#[target_feature(enable = "avx512f")]
pub unsafe fn dot(a: &[f32], b: &[f32]) -> f32 {
    let n = a.len().min(b.len());
    let (pa, pb) = (a.as_ptr(), b.as_ptr());
    let mut acc = [_mm512_setzero_ps(); 4];
    let mut i = 0;
    while i + 64 <= n {
        for (l, a) in acc.iter_mut().enumerate() {
            *a = _mm512_fmadd_ps(_mm512_loadu_ps(pa.add(i + 16 * l)), _mm512_loadu_ps(pb.add(i + 16 * l)), *a);
        }
        i += 64;
    }
    while i + 16 <= n {
        acc[0] = _mm512_fmadd_ps(_mm512_loadu_ps(pa.add(i)), _mm512_loadu_ps(pb.add(i)), acc[0]);
        i += 16;
    }
    if i < n {
        let m = mask(n - i);
        acc[1] = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m, pa.add(i)), _mm512_maskz_loadu_ps(m, pb.add(i)), acc[1]);
    }
    _mm512_reduce_add_ps(_mm512_add_ps(_mm512_add_ps(acc[0], acc[1]), _mm512_add_ps(acc[2], acc[3])))
}

/// One level of the transposing sum: 128-bit lanes of x and y paired by
/// the two shuffles and added.
#[inline]
#[target_feature(enable = "avx512f")]
unsafe fn fold_lanes<const LO: i32, const HI: i32>(x: __m512, y: __m512) -> __m512 {
    _mm512_add_ps(_mm512_shuffle_f32x4::<LO>(x, y), _mm512_shuffle_f32x4::<HI>(x, y))
}

/// The eight horizontal sums of eight accumulators, as one 8-lane vector, by
/// a transposing tree: every row gets the same pairing of lanes in the same
/// order, whichever slot it occupies.
#[inline]
#[target_feature(enable = "avx512f")]
unsafe fn hsum8(a: &[__m512; ROWS]) -> __m256 {
    // 512 -> 256 per row: rows (0,1), (2,3), ... share one register.
    const LO2: i32 = 0b01_00_01_00;
    const HI2: i32 = 0b11_10_11_10;
    let s01 = fold_lanes::<LO2, HI2>(a[0], a[1]);
    let s23 = fold_lanes::<LO2, HI2>(a[2], a[3]);
    let s45 = fold_lanes::<LO2, HI2>(a[4], a[5]);
    let s67 = fold_lanes::<LO2, HI2>(a[6], a[7]);
    // 256 -> 128 per row: four rows per register, one per 128-bit lane.
    const LO1: i32 = 0b10_00_10_00;
    const HI1: i32 = 0b11_01_11_01;
    let t = fold_lanes::<LO1, HI1>(s01, s23);
    let u = fold_lanes::<LO1, HI1>(s45, s67);
    // 128 -> 64 -> 32 inside each lane: rows 0-3 land in element 0 of their
    // lane, rows 4-7 in element 2.
    let v = _mm512_add_ps(_mm512_shuffle_ps::<0b10_00_10_00>(t, u), _mm512_shuffle_ps::<0b11_01_11_01>(t, u));
    let w = _mm512_add_ps(v, _mm512_permute_ps::<0b10_11_00_01>(v));
    let idx = _mm512_setr_epi32(0, 4, 8, 12, 2, 6, 10, 14, 0, 0, 0, 0, 0, 0, 0, 0);
    _mm512_castps512_ps256(_mm512_permutexvar_ps(idx, w))
}

/// The similarities of eight rows with one query.
#[inline]
#[target_feature(enable = "avx512f,avx2,fma")]
unsafe fn group8<const PF: bool>(r: &[*const f32; ROWS], pq: *const f32, d: usize) -> __m256 {
    let full = d - d % PANEL;
    let mut acc = [_mm512_setzero_ps(); ROWS];
    let mut i = 0;
    let ahead = ROWS * d;
    while i < full {
        let qv = _mm512_loadu_ps(pq.add(i));
        for t in 0..ROWS {
            // The next group's line at this offset (a prefetch never
            // faults, even past the end of the rows).
            if PF {
                _mm_prefetch::<_MM_HINT_T0>(r[t].wrapping_add(i + ahead) as *const i8);
            }
            acc[t] = _mm512_fmadd_ps(_mm512_loadu_ps(r[t].add(i)), qv, acc[t]);
        }
        i += PANEL;
    }
    if full < d {
        let m = mask(d % PANEL);
        let qv = _mm512_maskz_loadu_ps(m, pq.add(full));
        for t in 0..ROWS {
            acc[t] = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m, r[t].add(full)), qv, acc[t]);
        }
    }
    hsum8(&acc)
}

/// Similarities of one query with every row of a row-major block, eight rows
/// per pass.
#[target_feature(enable = "avx512f,avx2,fma")]
pub unsafe fn dots_rows(rows: &[f32], d: usize, q: &[f32], out: &mut [f32]) {
    dots_rows_pf::<false>(rows, d, q, out)
}

/// `dots_rows` that also prefetches the next group of rows: faster when the
/// matrix streams from far away (see `simd::FAR_BYTES`), slower from near.
#[target_feature(enable = "avx512f,avx2,fma")]
pub unsafe fn dots_rows_far(rows: &[f32], d: usize, q: &[f32], out: &mut [f32]) {
    dots_rows_pf::<true>(rows, d, q, out)
}

#[target_feature(enable = "avx512f,avx2,fma")]
unsafe fn dots_rows_pf<const PF: bool>(rows: &[f32], d: usize, q: &[f32], out: &mut [f32]) {
    let pq = q.as_ptr();
    // A short last group repeats its last row (row_tiles): same arithmetic per row.
    row_tiles::<ROWS>(rows, d, |r, ri, valid| {
        let s = group8::<PF>(r, pq, d);
        if valid == ROWS {
            _mm256_storeu_ps(out.as_mut_ptr().add(ri), s);
        } else {
            let mut tmp = [0f32; ROWS];
            _mm256_storeu_ps(tmp.as_mut_ptr(), s);
            out[ri..ri + valid].copy_from_slice(&tmp[..valid]);
        }
    });
}

/// The sums of one micro-tile: `MR` rows by `P` panels of queries.
type Acc<const P: usize> = [[__m512; P]; MR];

/// One micro-tile: `MR` rows against the queries packed in `P` panels.
/// Each (row, query) value is one FMA chain over the coordinates in order,
/// so it is the same in every tile position.
///
/// The 96 KiB of 64 packed queries at d = 384 do not fit L1d (48 KiB) and
/// stream from L2 for every tile. On the AMD EPYC the 4 x 4 loop still ran
/// at the FMA peak (8.0-8.8 G zmm FMA/s on 256-10k rows, a register-only
/// loop 8.1), and cutting d into 128-wide slices that stay in L1, with the
/// sums carried between slices, gained nothing from L2 or L3 and lost 25%
/// from DRAM (100k rows: 24.8 ms against 19.4 ms), where the slices break
/// the rows' sequential stream. On the Intel Xeon (a register-only loop 5.3
/// G zmm FMA/s per core) the 4 x 4 loop ran at 2.1-2.8 and 6 x 4 at 3.2-3.5;
/// 64-wide slices added another 5-10% there and are not taken, for the DRAM
/// loss above.
#[inline]
#[target_feature(enable = "avx512f,avx2,fma")]
unsafe fn tile<const P: usize>(r: &[*const f32; MR], d: usize, pk: *const f32) -> Acc<P> {
    let mut acc = [[_mm512_setzero_ps(); P]; MR];
    for p in 0..d {
        let qp = pk.add(p * P * PANEL);
        let mut qv = [_mm512_setzero_ps(); P];
        for (pn, v) in qv.iter_mut().enumerate() {
            *v = _mm512_loadu_ps(qp.add(pn * PANEL));
        }
        for t in 0..MR {
            let b = _mm512_set1_ps(*r[t].add(p));
            for pn in 0..P {
                acc[t][pn] = _mm512_fmadd_ps(b, qv[pn], acc[t][pn]);
            }
        }
    }
    acc
}

/// The GEMM micro-kernel over a block: `out[j * nrows + i] = rows[i] . q_j`.
#[target_feature(enable = "avx512f,avx2,fma")]
unsafe fn tiles<const P: usize>(rows: &[f32], d: usize, packed: &[f32], nq: usize, out: &mut [f32]) {
    let nrows = rows.len() / d;
    let mut tmp = [0f32; PANEL];
    row_tiles::<MR>(rows, d, |r, ri, valid| {
        let acc = tile::<P>(r, d, packed.as_ptr());
        for (t, a) in acc.iter().enumerate().take(valid) {
            for (pn, v) in a.iter().enumerate() {
                _mm512_storeu_ps(tmp.as_mut_ptr(), *v);
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
#[target_feature(enable = "avx512f,avx2,fma")]
pub unsafe fn dots_packed(rows: &[f32], d: usize, packed: &[f32], nq: usize, out: &mut [f32]) {
    match nq.div_ceil(PANEL) {
        0 => {}
        1 => tiles::<1>(rows, d, packed, nq, out),
        2 => tiles::<2>(rows, d, packed, nq, out),
        3 => tiles::<3>(rows, d, packed, nq, out),
        _ => tiles::<4>(rows, d, packed, nq, out),
    }
}

/// Offer the lanes of `v` set in `m` (cosines of row `row` with queries
/// `j0..j0 + 16`) to their top-k lists, which refresh their bars.
#[cold]
#[inline(never)]
#[target_feature(enable = "avx512f")]
unsafe fn offer(v: __m512, m: __mmask16, j0: usize, row: usize, lists: &mut TopLists) {
    let mut tmp = [0f32; PANEL];
    _mm512_storeu_ps(tmp.as_mut_ptr(), v);
    lists.push_lanes16(&tmp, m as u32, j0, row);
}

/// The micro-kernel fused with each query's top-k: every tile's cosines are
/// compared with the queries' bars in registers, and only the lanes that
/// beat their bar leave them. Rows reach each list in increasing order, so
/// the lists are those `TopK::push_block` builds from the same cosines.
/// Returns false if any cosine was NaN or inf (the caller then redoes the
/// block the unfused way to report the first bad row).
#[target_feature(enable = "avx512f,avx2,fma")]
unsafe fn tiles_topk<const P: usize>(rows: &[f32], d: usize, packed: &[f32], nq: usize, row0: usize, q0: usize, lists: &mut TopLists) -> bool {
    let mut lanes = [0 as __mmask16; P];
    for (pn, l) in lanes.iter_mut().enumerate() {
        *l = mask(nq.saturating_sub(pn * PANEL).min(PANEL));
    }
    // 0 * x is 0 for finite x and NaN otherwise; NaN survives every add.
    let mut bad = _mm512_setzero_ps();
    row_tiles::<MR>(rows, d, |r, ri, valid| settle::<P>(&tile::<P>(r, d, packed.as_ptr()), valid, row0 + ri, &lanes, q0, lists, &mut bad));
    _mm512_cmp_ps_mask::<_CMP_UNORD_Q>(bad, bad) == 0
}

/// Fold one tile's first `valid` rows (the first is row `row`) into the
/// lists of queries `q0..`.
#[inline]
#[target_feature(enable = "avx512f")]
unsafe fn settle<const P: usize>(acc: &Acc<P>, valid: usize, row: usize, lanes: &[__mmask16; P], q0: usize, lists: &mut TopLists, bad: &mut __m512) {
    let zero = _mm512_setzero_ps();
    for (t, a) in acc.iter().enumerate().take(valid) {
        for (pn, &v) in a.iter().enumerate() {
            *bad = _mm512_add_ps(*bad, _mm512_mul_ps(v, zero));
            let j0 = q0 + pn * PANEL;
            let bar = _mm512_loadu_ps(lists.bars().as_ptr().add(j0));
            let m = _mm512_mask_cmp_ps_mask::<_CMP_GT_OQ>(lanes[pn], v, bar);
            if m != 0 {
                offer(v, m, j0, row + t, lists);
            }
        }
    }
}

/// `tiles_topk` for queries `q0..q0 + nq` (`nq <= QUERY_BLOCK`, `q0` a
/// multiple of it) packed in panels of `PANEL`, into `lists` (whose bars are
/// padded to whole query blocks).
#[target_feature(enable = "avx512f,avx2,fma")]
pub unsafe fn topk_packed(rows: &[f32], d: usize, packed: &[f32], nq: usize, row0: usize, q0: usize, lists: &mut TopLists) -> bool {
    assert!(nq <= QUERY_BLOCK && q0 + nq.div_ceil(PANEL) * PANEL <= lists.bars().len());
    match nq.div_ceil(PANEL) {
        0 => true,
        1 => tiles_topk::<1>(rows, d, packed, nq, row0, q0, lists),
        2 => tiles_topk::<2>(rows, d, packed, nq, row0, q0, lists),
        3 => tiles_topk::<3>(rows, d, packed, nq, row0, q0, lists),
        _ => tiles_topk::<4>(rows, d, packed, nq, row0, q0, lists),
    }
}

/// Sum of every element with eight 16-lane chains: the pass runs at the
/// speed of its 64-byte loads alone.
#[target_feature(enable = "avx512f")]
pub unsafe fn sum(a: &[f32]) -> f64 {
    sum_pf::<SUM_AHEAD>(a)
}

#[target_feature(enable = "avx512f")]
unsafe fn sum_pf<const AHEAD: usize>(a: &[f32]) -> f64 {
    let n = a.len();
    let p = a.as_ptr();
    let mut acc = [_mm512_setzero_ps(); 8];
    let mut i = 0;
    let mut total = 0f64;
    // Flush to f64 every 64k floats so long sums keep their precision.
    while i + 128 <= n {
        let end = (i + 65536).min(n - n % 128);
        while i < end {
            for (l, a) in acc.iter_mut().enumerate() {
                if AHEAD > 0 {
                    _mm_prefetch::<_MM_HINT_T0>(p.wrapping_add(i + 16 * l + AHEAD) as *const i8);
                }
                *a = _mm512_add_ps(*a, _mm512_loadu_ps(p.add(i + 16 * l)));
            }
            i += 128;
        }
        for v in acc.iter_mut() {
            total += _mm512_reduce_add_ps(*v) as f64;
            *v = _mm512_setzero_ps();
        }
    }
    while i < n {
        total += *p.add(i) as f64;
        i += 1;
    }
    total
}
