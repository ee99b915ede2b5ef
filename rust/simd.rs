//! Dot products and the blocked row scan every scoring kernel is built on.
//!
//! The portable path keeps 16 independent f32 accumulators so that LLVM can
//! vectorize the reduction without reassociating it (stable Rust has no fast
//! math). On x86-64 an AVX2+FMA path is chosen once at run time; the wheel
//! itself is compiled for the baseline target, so it still runs everywhere.

use std::sync::OnceLock;

/// Rows scored per block: the similarities of one block live on the stack,
/// so no kernel ever allocates an N-sized temporary.
pub const ROW_BLOCK: usize = 256;
/// Queries sharing one pass over a block of rows in the batch kernels.
pub const QUERY_BLOCK: usize = 8;

#[inline(always)]
fn dot_portable(a: &[f32], b: &[f32]) -> f32 {
    let n = a.len().min(b.len());
    let (a, b) = (&a[..n], &b[..n]);
    let mut acc = [0f32; 16];
    let mut ca = a.chunks_exact(16);
    let mut cb = b.chunks_exact(16);
    for (x, y) in (&mut ca).zip(&mut cb) {
        for l in 0..16 {
            acc[l] += x[l] * y[l];
        }
    }
    let mut tail = 0f32;
    for (x, y) in ca.remainder().iter().zip(cb.remainder()) {
        tail += x * y;
    }
    // Pairwise fold keeps the rounding error of the reduction small.
    let mut w = 8;
    while w > 0 {
        for l in 0..w {
            acc[l] += acc[l + w];
        }
        w /= 2;
    }
    acc[0] + tail
}

#[inline(always)]
fn sum_portable(a: &[f32]) -> f64 {
    let mut acc = [0f32; 16];
    let mut c = a.chunks_exact(16);
    for x in &mut c {
        for l in 0..16 {
            acc[l] += x[l];
        }
    }
    let mut s: f64 = c.remainder().iter().map(|&v| v as f64).sum();
    for v in acc {
        s += v as f64;
    }
    s
}

#[cfg(target_arch = "x86_64")]
mod avx2 {
    use std::arch::x86_64::*;

    #[inline(always)]
    unsafe fn hsum(v: __m256) -> f32 {
        let lo = _mm256_castps256_ps128(v);
        let hi = _mm256_extractf128_ps(v, 1);
        let s = _mm_add_ps(lo, hi);
        let s = _mm_add_ps(s, _mm_movehl_ps(s, s));
        let s = _mm_add_ss(s, _mm_shuffle_ps(s, s, 0x55));
        _mm_cvtss_f32(s)
    }

    /// Dot product with four independent 8-lane FMA chains.
    #[inline(always)]
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
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Isa {
    Portable,
    #[cfg(target_arch = "x86_64")]
    Avx2Fma,
}

fn detect() -> Isa {
    #[cfg(target_arch = "x86_64")]
    {
        if std::env::var_os("MEMSIEVE_PORTABLE").is_none()
            && is_x86_feature_detected!("avx2")
            && is_x86_feature_detected!("fma")
        {
            return Isa::Avx2Fma;
        }
    }
    Isa::Portable
}

/// The instruction set chosen at first use (`MEMSIEVE_PORTABLE=1` forces the
/// portable path, for benchmarks and tests of the fallback).
pub fn isa() -> Isa {
    static ISA: OnceLock<Isa> = OnceLock::new();
    *ISA.get_or_init(detect)
}

/// Dot product of two equal-length slices.
///
/// # Panics
/// If the lengths differ.
pub fn dot(a: &[f32], b: &[f32]) -> f32 {
    assert_eq!(a.len(), b.len(), "dot of slices of different lengths");
    match isa() {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: the Avx2Fma variant is only chosen when the CPU reports both features.
        Isa::Avx2Fma => unsafe { avx2_dot(a, b) },
        Isa::Portable => dot_portable(a, b),
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn avx2_dot(a: &[f32], b: &[f32]) -> f32 {
    avx2::dot(a, b)
}

/// Portable dot product, exposed for benchmarks of the fallback path.
pub fn dot_fallback(a: &[f32], b: &[f32]) -> f32 {
    dot_portable(a, b)
}

/// The shape contract of the row kernels, checked at the safe boundary
/// because the AVX2 paths read `rows`, `q` and `qs` through raw pointers.
#[inline]
fn check_rows(rows: &[f32], d: usize, qs: &[f32], nq: usize, out: &[f32]) {
    assert!(d > 0, "row width d must be >= 1");
    assert_eq!(rows.len() % d, 0, "rows hold {} values, not a multiple of d = {d}", rows.len());
    assert_eq!(qs.len(), nq * d, "{nq} queries of width {d} need {} values, got {}", nq * d, qs.len());
    assert_eq!(out.len(), nq * (rows.len() / d), "out must hold one value per (query, row) pair");
}

/// `out[i] = rows[i] . q` for the rows of a row-major block of width `d`.
///
/// # Panics
/// Unless `d >= 1`, `rows.len()` is a multiple of `d`, `q.len() == d` and
/// `out.len() == rows.len() / d`.
pub fn dots_rows(rows: &[f32], d: usize, q: &[f32], out: &mut [f32]) {
    check_rows(rows, d, q, 1, out);
    match isa() {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: chosen only when AVX2 and FMA are present.
        Isa::Avx2Fma => unsafe { avx2::dots_rows(rows, d, q, out) },
        Isa::Portable => {
            for (r, o) in rows.chunks_exact(d).zip(out.iter_mut()) {
                *o = dot_portable(r, q);
            }
        }
    }
}

/// `out[j * nrows + i] = rows[i] . qs[j]` for `nq` queries stored row-major.
///
/// # Panics
/// Unless `d >= 1`, `rows.len()` is a multiple of `d`, `qs.len() == nq * d`
/// and `out.len() == nq * rows.len() / d`.
pub fn dots_rows_multi(rows: &[f32], d: usize, qs: &[f32], nq: usize, out: &mut [f32]) {
    check_rows(rows, d, qs, nq, out);
    match isa() {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: chosen only when AVX2 and FMA are present.
        Isa::Avx2Fma => unsafe { avx2::dots_rows_multi(rows, d, qs, nq, out) },
        Isa::Portable => {
            let nrows = rows.len() / d;
            for (i, r) in rows.chunks_exact(d).enumerate() {
                for j in 0..nq {
                    out[j * nrows + i] = dot_portable(r, &qs[j * d..(j + 1) * d]);
                }
            }
        }
    }
}

/// Sum of every element: a pass that only reads memory (the bandwidth floor).
pub fn sum(a: &[f32]) -> f64 {
    match isa() {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: chosen only when AVX2 is present.
        Isa::Avx2Fma => unsafe { avx2::sum(a) },
        Isa::Portable => a.chunks(65536).map(sum_portable).sum(),
    }
}

/// Largest element (-inf for an empty slice; NaN elements are ignored).
/// Eight lanes let LLVM keep the fold in vector registers.
#[inline]
pub fn max(a: &[f32]) -> f32 {
    let mut acc = [f32::NEG_INFINITY; 8];
    let mut c = a.chunks_exact(8);
    for x in &mut c {
        for l in 0..8 {
            acc[l] = if x[l] > acc[l] { x[l] } else { acc[l] };
        }
    }
    let mut m = c.remainder().iter().fold(f32::NEG_INFINITY, |m, &x| if x > m { x } else { m });
    for v in acc {
        m = if v > m { v } else { m };
    }
    m
}

/// Whether every element is finite: `0 * x` is 0 for finite x and NaN for
/// NaN or inf, so one vectorized sum answers for the whole slice.
#[inline]
pub fn all_finite(a: &[f32]) -> bool {
    let mut acc = [0f32; 8];
    let mut c = a.chunks_exact(8);
    for x in &mut c {
        for l in 0..8 {
            acc[l] += x[l] * 0.0;
        }
    }
    let tail = c.remainder().iter().fold(0f32, |s, &x| s + x * 0.0);
    (acc.iter().sum::<f32>() + tail) == 0.0
}

/// Visit the similarities of `q` with every row, one stack block at a time:
/// `f(first_row, sims)`.
pub fn scan<F: FnMut(usize, &[f32])>(matrix: &[f32], d: usize, q: &[f32], mut f: F) {
    let mut buf = [0f32; ROW_BLOCK];
    for (b, rows) in matrix.chunks(ROW_BLOCK * d).enumerate() {
        let n = rows.len() / d;
        dots_rows(rows, d, q, &mut buf[..n]);
        f(b * ROW_BLOCK, &buf[..n]);
    }
}

/// Visit the similarities of a batch of queries: `f(query, first_row, sims)`.
/// The outer loop walks blocks of rows (a block fits in L2), the inner loop
/// walks blocks of `QUERY_BLOCK` queries, so the matrix is read from memory
/// once per batch whatever the batch size; calls for one query arrive in row order.
pub fn scan_batch<F: FnMut(usize, usize, &[f32])>(matrix: &[f32], d: usize, queries: &[f32], mut f: F) {
    let nq = queries.len() / d.max(1);
    let mut buf = vec![0f32; ROW_BLOCK * QUERY_BLOCK];
    for (b, rows) in matrix.chunks(ROW_BLOCK * d).enumerate() {
        let n = rows.len() / d;
        for q0 in (0..nq).step_by(QUERY_BLOCK) {
            let qn = QUERY_BLOCK.min(nq - q0);
            let qs = &queries[q0 * d..(q0 + qn) * d];
            dots_rows_multi(rows, d, qs, qn, &mut buf[..qn * n]);
            for j in 0..qn {
                f(q0 + j, b * ROW_BLOCK, &buf[j * n..(j + 1) * n]);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn naive(a: &[f32], b: &[f32]) -> f64 {
        a.iter().zip(b).map(|(x, y)| *x as f64 * *y as f64).sum()
    }

    fn data(n: usize, seed: u32) -> Vec<f32> {
        (0..n).map(|i| (((i as u32).wrapping_mul(2654435761).wrapping_add(seed) % 1000) as f32 / 500.0) - 1.0).collect()
    }

    #[test]
    fn dot_matches_naive_for_odd_lengths() {
        for n in [0usize, 1, 7, 15, 16, 17, 37, 100, 384, 385] {
            let a = data(n, 1);
            let b = data(n, 7);
            let want = naive(&a, &b);
            assert!((dot(&a, &b) as f64 - want).abs() < 1e-4 * (1.0 + want.abs()), "n={n}");
            assert!((dot_fallback(&a, &b) as f64 - want).abs() < 1e-4 * (1.0 + want.abs()));
        }
    }

    #[test]
    fn scan_and_batch_agree_with_dot() {
        let d = 37;
        let n = 600;
        let m = data(n * d, 3);
        let qs = data(11 * d, 9);
        let mut single = vec![0f32; n];
        scan(&m, d, &qs[..d], |r0, s| single[r0..r0 + s.len()].copy_from_slice(s));
        for i in 0..n {
            let want = naive(&m[i * d..(i + 1) * d], &qs[..d]);
            assert!((single[i] as f64 - want).abs() < 1e-4, "row {i}");
        }
        let mut batch = vec![0f32; 11 * n];
        scan_batch(&m, d, &qs, |j, r0, s| batch[j * n + r0..j * n + r0 + s.len()].copy_from_slice(s));
        for j in 0..11 {
            for i in 0..n {
                let want = naive(&m[i * d..(i + 1) * d], &qs[j * d..(j + 1) * d]);
                assert!((batch[j * n + i] as f64 - want).abs() < 1e-4);
            }
        }
    }

    #[test]
    fn similarity_of_a_row_does_not_depend_on_its_position() {
        let d = 37;
        let m = data(7 * d, 11);
        let q = data(d, 2);
        let mut rev = Vec::new();
        for r in m.chunks(d).rev() {
            rev.extend_from_slice(r);
        }
        let (mut a, mut b) = (vec![0f32; 7], vec![0f32; 7]);
        dots_rows(&m, d, &q, &mut a);
        dots_rows(&rev, d, &q, &mut b);
        b.reverse();
        assert_eq!(a, b);
        let qs = data(5 * d, 4);
        let (mut a, mut b) = (vec![0f32; 35], vec![0f32; 35]);
        dots_rows_multi(&m, d, &qs, 5, &mut a);
        dots_rows_multi(&rev, d, &qs, 5, &mut b);
        for j in 0..5 {
            b[j * 7..(j + 1) * 7].reverse();
        }
        assert_eq!(a, b);
    }

    #[test]
    #[should_panic(expected = "queries of width")]
    fn dots_rows_refuses_a_short_query() {
        // The AVX2 path would read q[15] past the end through a raw pointer.
        let m = data(4 * 16, 1);
        let mut out = [0f32; 4];
        dots_rows(&m, 16, &data(15, 2), &mut out);
    }

    #[test]
    fn row_kernels_refuse_every_bad_shape() {
        let m = data(4 * 16, 1);
        let ragged = data(4 * 16 + 3, 1);
        let q = data(16, 2);
        type Case<'a> = (&'a str, Box<dyn Fn() + 'a>);
        let cases: Vec<Case> = vec![
            ("one value per", Box::new(|| dots_rows(&m, 16, &q, &mut [0f32; 3]))),
            ("not a multiple of d", Box::new(|| dots_rows(&ragged, 16, &q, &mut [0f32; 4]))),
            ("must be >= 1", Box::new(|| dots_rows(&m, 0, &q, &mut [0f32; 4]))),
            ("not a multiple of d", Box::new(|| dots_rows_multi(&ragged, 16, &data(32, 2), 2, &mut [0f32; 8]))),
            ("queries of width", Box::new(|| dots_rows_multi(&m, 16, &data(31, 2), 2, &mut [0f32; 8]))),
            ("one value per", Box::new(|| dots_rows_multi(&m, 16, &data(32, 2), 2, &mut [0f32; 7]))),
            ("different lengths", Box::new(|| {
                dot(&data(16, 1), &data(15, 2));
            })),
        ];
        for (want, f) in cases {
            let err = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).expect_err(want);
            let msg = err.downcast_ref::<String>().cloned().or_else(|| err.downcast_ref::<&str>().map(|s| s.to_string()));
            let msg = msg.unwrap_or_default();
            assert!(msg.contains(want), "{want}: {msg}");
        }
    }

    #[test]
    fn sum_reads_everything() {
        let a = data(100_003, 5);
        let want: f64 = a.iter().map(|&v| v as f64).sum();
        assert!((sum(&a) - want).abs() < 1e-2);
    }
}
