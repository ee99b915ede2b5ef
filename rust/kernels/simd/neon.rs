//! aarch64 NEON kernels (4 lanes, 32 registers), compiled on every aarch64
//! build: NEON is part of the aarch64 baseline, so `Isa::Neon` is always
//! supported there. The batch kernel is the portable one (row by row).
//!
//! Each row's result is computed by the same instruction sequence wherever
//! the row sits (a short last group repeats its last row), so scores never
//! depend on the order or chunking of the rows.

use std::arch::aarch64::*;

/// Rows per pass of the single-query scan: one query load serves four rows.
const ROWS: usize = 4;

/// The horizontal sum of two accumulators of one row, in a fixed order.
#[inline]
#[target_feature(enable = "neon")]
unsafe fn finish(a: float32x4_t, b: float32x4_t) -> f32 {
    vaddvq_f32(vaddq_f32(a, b))
}

/// Dot product with four 4-lane FMA chains.
#[target_feature(enable = "neon")]
pub unsafe fn dot(a: &[f32], b: &[f32]) -> f32 {
    let n = a.len().min(b.len());
    let (pa, pb) = (a.as_ptr(), b.as_ptr());
    let mut acc = [vdupq_n_f32(0.0); 4];
    let mut i = 0;
    while i + 16 <= n {
        for (l, c) in acc.iter_mut().enumerate() {
            *c = vfmaq_f32(*c, vld1q_f32(pa.add(i + 4 * l)), vld1q_f32(pb.add(i + 4 * l)));
        }
        i += 16;
    }
    while i + 4 <= n {
        acc[0] = vfmaq_f32(acc[0], vld1q_f32(pa.add(i)), vld1q_f32(pb.add(i)));
        i += 4;
    }
    let mut s = finish(vaddq_f32(acc[0], acc[1]), vaddq_f32(acc[2], acc[3]));
    while i < n {
        s += *pa.add(i) * *pb.add(i);
        i += 1;
    }
    s
}

/// The similarities of four rows with one query: two FMA chains per row
/// (even and odd 4-float chunks), eight in all.
#[inline]
#[target_feature(enable = "neon")]
unsafe fn group4(r: &[*const f32; ROWS], pq: *const f32, d: usize) -> [f32; ROWS] {
    let mut a = [vdupq_n_f32(0.0); ROWS];
    let mut b = [vdupq_n_f32(0.0); ROWS];
    let mut i = 0;
    while i + 8 <= d {
        let (qa, qb) = (vld1q_f32(pq.add(i)), vld1q_f32(pq.add(i + 4)));
        for t in 0..ROWS {
            a[t] = vfmaq_f32(a[t], vld1q_f32(r[t].add(i)), qa);
            b[t] = vfmaq_f32(b[t], vld1q_f32(r[t].add(i + 4)), qb);
        }
        i += 8;
    }
    if i + 4 <= d {
        let qa = vld1q_f32(pq.add(i));
        for t in 0..ROWS {
            a[t] = vfmaq_f32(a[t], vld1q_f32(r[t].add(i)), qa);
        }
        i += 4;
    }
    let mut s = [0f32; ROWS];
    for t in 0..ROWS {
        s[t] = finish(a[t], b[t]);
    }
    while i < d {
        let qv = *pq.add(i);
        for t in 0..ROWS {
            s[t] += *r[t].add(i) * qv;
        }
        i += 1;
    }
    s
}

/// Similarities of one query with every row of a row-major block.
#[target_feature(enable = "neon")]
pub unsafe fn dots_rows(rows: &[f32], d: usize, q: &[f32], out: &mut [f32]) {
    let nrows = (rows.len() / d).min(out.len());
    let pq = q.as_ptr();
    let base = rows.as_ptr();
    let mut ri = 0;
    while ri < nrows {
        let mut r = [base; ROWS];
        for (t, p) in r.iter_mut().enumerate() {
            *p = base.add((ri + t).min(nrows - 1) * d);
        }
        let s = group4(&r, pq, d);
        let valid = (nrows - ri).min(ROWS);
        out[ri..ri + valid].copy_from_slice(&s[..valid]);
        ri += ROWS;
    }
}

/// Sum of every element with eight 4-lane chains, flushed to f64 every 64k floats.
#[target_feature(enable = "neon")]
pub unsafe fn sum(a: &[f32]) -> f64 {
    let n = a.len();
    let p = a.as_ptr();
    let mut acc = [vdupq_n_f32(0.0); 8];
    let mut i = 0;
    let mut total = 0f64;
    while i + 32 <= n {
        let end = (i + 65536).min(n - n % 32);
        while i < end {
            for (l, c) in acc.iter_mut().enumerate() {
                *c = vaddq_f32(*c, vld1q_f32(p.add(i + 4 * l)));
            }
            i += 32;
        }
        for c in acc.iter_mut() {
            total += vaddvq_f32(*c) as f64;
            *c = vdupq_n_f32(0.0);
        }
    }
    while i < n {
        total += *p.add(i) as f64;
        i += 1;
    }
    total
}
