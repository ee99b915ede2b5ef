//! Dot products and the blocked row scans every scoring kernel is built on,
//! dispatched to the instruction set `isa::isa()` chose at run time.
//!
//! The wheel is compiled for the baseline target, so it runs everywhere; the
//! AVX-512 (`avx512`), AVX2+FMA (`avx2`) and NEON (`neon`)
//! kernels are `#[target_feature]` functions entered only on CPUs that have
//! them. Every `*_on` function takes the path explicitly, for tests and
//! benches of each path on one machine; the others use the chosen one.

pub use crate::kernels::isa::{isa, Isa};

#[cfg(target_arch = "x86_64")]
mod avx2;
#[cfg(target_arch = "x86_64")]
mod avx512;
#[cfg(target_arch = "aarch64")]
mod neon;
mod portable;

/// Rows scored per block: the similarities of one block live on the stack,
/// so no kernel ever allocates an N-sized temporary.
pub const ROW_BLOCK: usize = 256;
/// Queries sharing one pass over a block of rows in the batch kernels (the
/// AVX-512 path uses its own, wider block).
pub const QUERY_BLOCK: usize = 8;

/// Run the kernel `$f` of the path `$isa` (after checking the CPU has it).
macro_rules! dispatch {
    ($isa:expr, $f:ident($($a:expr),*)) => {
        match $isa.checked() {
            #[cfg(target_arch = "x86_64")]
            // SAFETY: checked() verified AVX-512F, AVX2 and FMA.
            Isa::Avx512 => unsafe { avx512::$f($($a),*) },
            #[cfg(target_arch = "x86_64")]
            // SAFETY: checked() verified AVX2 and FMA.
            Isa::Avx2 => unsafe { avx2::$f($($a),*) },
            #[cfg(target_arch = "aarch64")]
            // SAFETY: NEON is in the aarch64 baseline.
            Isa::Neon => unsafe { neon::$f($($a),*) },
            _ => portable::$f($($a),*),
        }
    };
}

/// Dot product of two equal-length slices.
///
/// # Panics
/// If the lengths differ.
pub fn dot(a: &[f32], b: &[f32]) -> f32 {
    dot_on(isa(), a, b)
}

/// `dot` on a given path.
///
/// # Panics
/// If the lengths differ or the CPU lacks the path.
pub fn dot_on(isa: Isa, a: &[f32], b: &[f32]) -> f32 {
    assert_eq!(a.len(), b.len(), "dot of slices of different lengths");
    dispatch!(isa, dot(a, b))
}

/// Portable dot product, exposed for benchmarks of the fallback path.
pub fn dot_fallback(a: &[f32], b: &[f32]) -> f32 {
    portable::dot(a, b)
}

/// The shape contract of the row kernels, checked at the safe boundary
/// because the SIMD paths read `rows`, `q` and `qs` through raw pointers.
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
    dots_rows_on(isa(), rows, d, q, out)
}

/// `dots_rows` on a given path (panics also if the CPU lacks it).
pub fn dots_rows_on(isa: Isa, rows: &[f32], d: usize, q: &[f32], out: &mut [f32]) {
    check_rows(rows, d, q, 1, out);
    if rows.is_empty() {
        return;
    }
    dispatch!(isa, dots_rows(rows, d, q, out))
}

/// `out[j * nrows + i] = rows[i] . qs[j]` for `nq` queries stored row-major.
///
/// # Panics
/// Unless `d >= 1`, `rows.len()` is a multiple of `d`, `qs.len() == nq * d`
/// and `out.len() == nq * rows.len() / d`.
pub fn dots_rows_multi(rows: &[f32], d: usize, qs: &[f32], nq: usize, out: &mut [f32]) {
    dots_rows_multi_on(isa(), rows, d, qs, nq, out)
}

/// `dots_rows_multi` on a given path (panics also if the CPU lacks it).
pub fn dots_rows_multi_on(isa: Isa, rows: &[f32], d: usize, qs: &[f32], nq: usize, out: &mut [f32]) {
    check_rows(rows, d, qs, nq, out);
    if rows.is_empty() || nq == 0 {
        return;
    }
    #[cfg(target_arch = "x86_64")]
    if let Some(g) = Gemm::of(isa.checked()) {
        let nrows = rows.len() / d;
        for j0 in (0..nq).step_by(g.block) {
            let qn = g.block.min(nq - j0);
            let packed = pack_panels(&qs[j0 * d..(j0 + qn) * d], qn, d, g.panel);
            // SAFETY: Gemm::of checked the CPU; packed holds qn queries of width d.
            unsafe { (g.kernel)(rows, d, &packed, qn, &mut out[j0 * nrows..(j0 + qn) * nrows]) };
        }
        return;
    }
    // NEON and portable batches go row by row.
    let _ = isa.checked();
    portable::dots_rows_multi(rows, d, qs, nq, out)
}

/// A GEMM micro-kernel over queries packed in panels (`pack_panels`):
/// `kernel(rows, d, packed, nq, out)` writes `out[j * nrows + i]` for up to
/// `block` queries; `topk(rows, d, packed, nq, row0, q0, lists)` folds the
/// same cosines straight into the top-k lists of queries `q0..q0 + nq`
/// (false if one was NaN or inf).
#[cfg(target_arch = "x86_64")]
#[derive(Clone, Copy)]
pub(crate) struct Gemm {
    pub panel: usize,
    pub block: usize,
    pub kernel: unsafe fn(&[f32], usize, &[f32], usize, &mut [f32]),
    pub topk: unsafe fn(&[f32], usize, &[f32], usize, usize, usize, &mut crate::kernels::gemm::TopLists) -> bool,
}

#[cfg(target_arch = "x86_64")]
impl Gemm {
    /// The micro-kernel of a checked path, if it has one.
    pub(crate) fn of(isa: Isa) -> Option<Gemm> {
        use self::{avx2 as a2, avx512 as a5};
        match isa {
            Isa::Avx512 => Some(Gemm { panel: a5::PANEL, block: a5::QUERY_BLOCK, kernel: a5::dots_packed, topk: a5::topk_packed }),
            Isa::Avx2 => Some(Gemm { panel: a2::PANEL, block: a2::QUERY_BLOCK, kernel: a2::dots_packed, topk: a2::topk_packed }),
            _ => None,
        }
    }

    /// `queries` (nq rows of width d) packed for this kernel, a block of
    /// `block` queries at a time: (first query, queries, panels).
    pub(crate) fn pack_blocks(self, queries: &[f32], nq: usize, d: usize) -> Vec<(usize, usize, Vec<f32>)> {
        (0..nq)
            .step_by(self.block)
            .map(|q0| {
                let qn = self.block.min(nq - q0);
                (q0, qn, pack_panels(&queries[q0 * d..(q0 + qn) * d], qn, d, self.panel))
            })
            .collect()
    }
}

/// Queries `qs[..nq * d]` transposed into panels of `panel` lanes for the
/// GEMM micro-kernels: `packed[(p * panels + j / panel) * panel + j % panel]
/// = qs[j][p]`, lanes past nq zero, so one load per coordinate serves a panel.
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
pub(crate) fn pack_panels(qs: &[f32], nq: usize, d: usize, panel: usize) -> Vec<f32> {
    let width = nq.div_ceil(panel) * panel;
    let mut out = vec![0f32; d * width];
    // In tiles of 32 coordinates, whose 8 KiB of output (at 64 queries) stay
    // in L1 while every query writes its lanes: 64 x 384 packs (with the
    // allocation) in 7.5 us, against 14.7 us query-major over the whole
    // 96 KiB output and 9.2 us coordinate-major (16-64 wide tiles: the same).
    const TILE: usize = 32;
    for (t, block) in out.chunks_mut(TILE * width).enumerate() {
        for (j, q) in qs.chunks_exact(d).take(nq).enumerate() {
            let src = &q[t * TILE..(t * TILE + TILE).min(d)];
            for (lane, &x) in block.chunks_exact_mut(width).zip(src) {
                lane[j] = x;
            }
        }
    }
    out
}

/// Sum of every element: a pass that only reads memory (the bandwidth floor).
pub fn sum(a: &[f32]) -> f64 {
    sum_on(isa(), a)
}

/// `sum` on a given path (panics if the CPU lacks it).
pub fn sum_on(isa: Isa, a: &[f32]) -> f64 {
    dispatch!(isa, sum(a))
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
/// `f(first_row, sims)`. The block's similarities stay in L1 while the
/// caller folds them into its top-k and log-sum-exp, so the matrix is read
/// once and nothing N-sized is written.
pub fn scan<F: FnMut(usize, &[f32])>(matrix: &[f32], d: usize, q: &[f32], f: F) {
    scan_on(isa(), matrix, d, q, f)
}

/// `scan` on a given path.
pub fn scan_on<F: FnMut(usize, &[f32])>(isa: Isa, matrix: &[f32], d: usize, q: &[f32], f: F) {
    scan_part_on(isa, matrix, d, q, matrix.len(), f)
}

/// Matrices above this many bytes stream from L3 or DRAM, where the AVX-512
/// scan gains from prefetching its next group of rows: measured (d = 384,
/// median of 30 interleaved passes, three runs) 10-15% faster at 10k rows
/// (15 MB), 10% slower at 1k rows (1.5 MB, partly in L2).
pub const FAR_BYTES: usize = 4 << 20;

/// `scan_on` over `matrix`, a part of a matrix of `total` floats (a chunk of
/// a parallel scan): the prefetch choice follows the whole, so that every
/// chunk streams the way the serial scan does. Results do not depend on it.
pub fn scan_part_on<F: FnMut(usize, &[f32])>(isa: Isa, matrix: &[f32], d: usize, q: &[f32], total: usize, mut f: F) {
    let mut buf = [0f32; ROW_BLOCK];
    #[cfg(target_arch = "x86_64")]
    let far = isa.checked() == Isa::Avx512 && total.saturating_mul(4) > FAR_BYTES;
    #[cfg(not(target_arch = "x86_64"))]
    let _ = total;
    for (b, rows) in matrix.chunks(ROW_BLOCK * d).enumerate() {
        let n = rows.len() / d;
        #[cfg(target_arch = "x86_64")]
        if far {
            check_rows(rows, d, q, 1, &buf[..n]);
            // SAFETY: AVX-512 checked above, shapes checked just now.
            unsafe { avx512::dots_rows_far(rows, d, q, &mut buf[..n]) };
            f(b * ROW_BLOCK, &buf[..n]);
            continue;
        }
        dots_rows_on(isa, rows, d, q, &mut buf[..n]);
        f(b * ROW_BLOCK, &buf[..n]);
    }
}

/// Visit the similarities of a batch of queries: `f(query, first_row, sims)`.
/// The outer loop walks blocks of rows (a block fits in L2), the inner loop
/// walks blocks of queries, so the matrix is read from memory once per batch
/// whatever the batch size; calls for one query arrive in row order.
pub fn scan_batch<F: FnMut(usize, usize, &[f32])>(matrix: &[f32], d: usize, queries: &[f32], f: F) {
    scan_batch_on(isa(), matrix, d, queries, f)
}

/// `scan_batch` on a given path.
pub fn scan_batch_on<F: FnMut(usize, usize, &[f32])>(isa: Isa, matrix: &[f32], d: usize, queries: &[f32], mut f: F) {
    let nq = queries.len() / d.max(1);
    if nq == 0 || d == 0 {
        return;
    }
    #[cfg(target_arch = "x86_64")]
    if let Some(g) = Gemm::of(isa.checked()) {
        return scan_batch_packed(g, matrix, d, queries, nq, f);
    }
    let mut buf = vec![0f32; ROW_BLOCK * QUERY_BLOCK];
    for (b, rows) in matrix.chunks(ROW_BLOCK * d).enumerate() {
        let n = rows.len() / d;
        for q0 in (0..nq).step_by(QUERY_BLOCK) {
            let qn = QUERY_BLOCK.min(nq - q0);
            let qs = &queries[q0 * d..(q0 + qn) * d];
            dots_rows_multi_on(isa, rows, d, qs, qn, &mut buf[..qn * n]);
            for j in 0..qn {
                f(q0 + j, b * ROW_BLOCK, &buf[j * n..(j + 1) * n]);
            }
        }
    }
}

/// The batch scan of a GEMM path: the queries are packed into panels once,
/// then every block of rows goes through the micro-kernel.
#[cfg(target_arch = "x86_64")]
fn scan_batch_packed<F: FnMut(usize, usize, &[f32])>(g: Gemm, matrix: &[f32], d: usize, queries: &[f32], nq: usize, mut f: F) {
    let packed = g.pack_blocks(queries, nq, d);
    let mut buf = vec![0f32; ROW_BLOCK * g.block];
    for (b, rows) in matrix.chunks(ROW_BLOCK * d).enumerate() {
        let n = rows.len() / d;
        for (q0, qn, p) in &packed {
            // SAFETY: Gemm::of checked the CPU; p holds qn queries of width d.
            unsafe { (g.kernel)(rows, d, p, *qn, &mut buf[..qn * n]) };
            for j in 0..*qn {
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
