//! AVX2+FMA kernels (8 lanes, 16 registers).
//!
//! Every function here is `unsafe` and `#[target_feature]`: the safe front in
//! `simd.rs` calls them only after `Isa::Avx2.checked()`.

use std::arch::x86_64::*;

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
#[target_feature(enable = "avx2,fma")]
pub unsafe fn dots_rows(rows: &[f32], d: usize, q: &[f32], out: &mut [f32]) {
    let nrows = (rows.len() / d).min(out.len());
    let pq = q.as_ptr();
    let base = rows.as_ptr();
    // A short last group repeats its last row, so every row is summed in
    // the same order wherever it sits: scores do not depend on row order.
    let row = |i: usize| base.add(i.min(nrows - 1) * d);
    let mut ri = 0;
    while ri < nrows {
        let (r0, r1, r2, r3) = (row(ri), row(ri + 1), row(ri + 2), row(ri + 3));
        let z = _mm256_setzero_ps();
        let (mut a0, mut a1, mut a2, mut a3) = (z, z, z, z);
        let (mut b0, mut b1, mut b2, mut b3) = (z, z, z, z);
        let mut i = 0;
        while i + 16 <= d {
            let qa = _mm256_loadu_ps(pq.add(i));
            let qb = _mm256_loadu_ps(pq.add(i + 8));
            a0 = _mm256_fmadd_ps(_mm256_loadu_ps(r0.add(i)), qa, a0);
            a1 = _mm256_fmadd_ps(_mm256_loadu_ps(r1.add(i)), qa, a1);
            a2 = _mm256_fmadd_ps(_mm256_loadu_ps(r2.add(i)), qa, a2);
            a3 = _mm256_fmadd_ps(_mm256_loadu_ps(r3.add(i)), qa, a3);
            b0 = _mm256_fmadd_ps(_mm256_loadu_ps(r0.add(i + 8)), qb, b0);
            b1 = _mm256_fmadd_ps(_mm256_loadu_ps(r1.add(i + 8)), qb, b1);
            b2 = _mm256_fmadd_ps(_mm256_loadu_ps(r2.add(i + 8)), qb, b2);
            b3 = _mm256_fmadd_ps(_mm256_loadu_ps(r3.add(i + 8)), qb, b3);
            i += 16;
        }
        if i + 8 <= d {
            let qa = _mm256_loadu_ps(pq.add(i));
            a0 = _mm256_fmadd_ps(_mm256_loadu_ps(r0.add(i)), qa, a0);
            a1 = _mm256_fmadd_ps(_mm256_loadu_ps(r1.add(i)), qa, a1);
            a2 = _mm256_fmadd_ps(_mm256_loadu_ps(r2.add(i)), qa, a2);
            a3 = _mm256_fmadd_ps(_mm256_loadu_ps(r3.add(i)), qa, a3);
            i += 8;
        }
        let mut s = [
            hsum(_mm256_add_ps(a0, b0)),
            hsum(_mm256_add_ps(a1, b1)),
            hsum(_mm256_add_ps(a2, b2)),
            hsum(_mm256_add_ps(a3, b3)),
        ];
        while i < d {
            let qv = *pq.add(i);
            s[0] += *r0.add(i) * qv;
            s[1] += *r1.add(i) * qv;
            s[2] += *r2.add(i) * qv;
            s[3] += *r3.add(i) * qv;
            i += 1;
        }
        let valid = (nrows - ri).min(4);
        out[ri..ri + valid].copy_from_slice(&s[..valid]);
        ri += 4;
    }
}

/// Similarities of `nq` queries with each row. Two rows times four
/// queries share one loop (eight independent FMA chains, six loads per
/// eight FMAs); every row is loaded from memory once per query block.
#[target_feature(enable = "avx2,fma")]
pub unsafe fn dots_rows_multi(rows: &[f32], d: usize, qs: &[f32], nq: usize, out: &mut [f32]) {
    let nrows = rows.len() / d;
    let pq = qs.as_ptr();
    let base = rows.as_ptr();
    let mut ri = 0;
    while ri < nrows {
        // An odd last row is paired with itself (same arithmetic, see dots_rows).
        let pair = ri + 1 < nrows;
        let r0 = base.add(ri * d);
        let r1 = if pair { r0.add(d) } else { r0 };
        let mut j = 0;
        while j + 4 <= nq {
            let p0 = pq.add(j * d);
            let (p1, p2, p3) = (p0.add(d), p0.add(2 * d), p0.add(3 * d));
            let z = _mm256_setzero_ps();
            let (mut a0, mut a1, mut a2, mut a3) = (z, z, z, z);
            let (mut b0, mut b1, mut b2, mut b3) = (z, z, z, z);
            let mut i = 0;
            while i + 8 <= d {
                let x = _mm256_loadu_ps(r0.add(i));
                let y = _mm256_loadu_ps(r1.add(i));
                let q0 = _mm256_loadu_ps(p0.add(i));
                a0 = _mm256_fmadd_ps(x, q0, a0);
                b0 = _mm256_fmadd_ps(y, q0, b0);
                let q1 = _mm256_loadu_ps(p1.add(i));
                a1 = _mm256_fmadd_ps(x, q1, a1);
                b1 = _mm256_fmadd_ps(y, q1, b1);
                let q2 = _mm256_loadu_ps(p2.add(i));
                a2 = _mm256_fmadd_ps(x, q2, a2);
                b2 = _mm256_fmadd_ps(y, q2, b2);
                let q3 = _mm256_loadu_ps(p3.add(i));
                a3 = _mm256_fmadd_ps(x, q3, a3);
                b3 = _mm256_fmadd_ps(y, q3, b3);
                i += 8;
            }
            let mut s = [hsum(a0), hsum(a1), hsum(a2), hsum(a3), hsum(b0), hsum(b1), hsum(b2), hsum(b3)];
            while i < d {
                let (x, y) = (*r0.add(i), *r1.add(i));
                for t in 0..4 {
                    let qv = *pq.add((j + t) * d + i);
                    s[t] += x * qv;
                    s[4 + t] += y * qv;
                }
                i += 1;
            }
            for t in 0..4 {
                out[(j + t) * nrows + ri] = s[t];
                if pair {
                    out[(j + t) * nrows + ri + 1] = s[4 + t];
                }
            }
            j += 4;
        }
        while j < nq {
            let q = &qs[j * d..(j + 1) * d];
            out[j * nrows + ri] = dot(&rows[ri * d..(ri + 1) * d], q);
            if pair {
                out[j * nrows + ri + 1] = dot(&rows[(ri + 1) * d..(ri + 2) * d], q);
            }
            j += 1;
        }
        ri += 2;
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
