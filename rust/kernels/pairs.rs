//! Every pair of rows at or above a cosine threshold: the candidate search of
//! scheduled consolidation.
//!
//! A scope of n unit rows has n(n-1)/2 pairs; at 100k rows the full
//! similarity matrix would be 40 GB of float32. The kernel never holds it:
//! the upper triangle is visited in tiles of `QUERY_BLOCK` x `TILE_ROWS`
//! similarities (128 KiB of scratch per tile), and only the pairs with
//! `sim >= min_sim` are kept. The output is bounded too: past `max_pairs`
//! the scan stops with a `Config` error that says to raise the threshold,
//! instead of allocating without limit.
//!
//! Row ranges are split across threads with `par::map_rows` (fixed chunks,
//! merged in row order), so the result is the same for any thread count:
//! pairs sorted by (i, j) with i < j.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use crate::error::{bail, Result};
use crate::kernels::par::{self, Plan};
use crate::kernels::simd;

/// Query rows whose similarities are computed together against one tile.
pub const QUERY_BLOCK: usize = 64;
/// Rows of one tile of the triangle (a multiple of `simd::ROW_BLOCK`).
pub const TILE_ROWS: usize = 512;
/// The default bound of the output: 16M pairs (192 MiB of indices and values).
pub const DEFAULT_MAX_PAIRS: usize = 1 << 24;

/// The pairs found: `left[k] < right[k]` are row numbers, `sim[k]` their cosine.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Pairs {
    pub left: Vec<u32>,
    pub right: Vec<u32>,
    pub sim: Vec<f32>,
}

impl Pairs {
    pub fn len(&self) -> usize {
        self.sim.len()
    }

    pub fn is_empty(&self) -> bool {
        self.sim.is_empty()
    }

    fn push(&mut self, i: usize, j: usize, s: f32) {
        self.left.push(i as u32);
        self.right.push(j as u32);
        self.sim.push(s);
    }

    fn extend(&mut self, other: Pairs) {
        self.left.extend(other.left);
        self.right.extend(other.right);
        self.sim.extend(other.sim);
    }
}

/// Check the inputs of `pairs_above`: a row-major (n, d) matrix of finite unit rows.
pub fn check(matrix: &[f32], d: usize, min_sim: f32, max_pairs: usize) -> Result<usize> {
    if d == 0 || matrix.len() % d != 0 {
        bail!(
            Shape: "expected a row-major (n, d) matrix with d >= 1, got {} values for d = {d}; pass embedding rows", matrix.len()
        );
    }
    let n = matrix.len() / d;
    if n > u32::MAX as usize {
        bail!(Shape: "the matrix has {n} rows, over 2^32; consolidate smaller scopes");
    }
    if !min_sim.is_finite() || !(-1.0..=1.0).contains(&min_sim) {
        bail!(Config: "min_sim must be a cosine in [-1, 1], got {min_sim}; consolidation defaults to 0.7");
    }
    if max_pairs == 0 {
        bail!(Config: "max_pairs must be >= 1, got 0; the default is 2^24");
    }
    for (i, row) in matrix.chunks_exact(d).enumerate() {
        crate::kernels::vector::check_unit(row, &format!("matrix row {i}"))?;
    }
    Ok(n)
}

/// Every pair (i, j), i < j, of rows with `rows[i] . rows[j] >= min_sim`, sorted by (i, j).
///
/// # Errors
/// `Shape` or `InvalidVector` for a malformed matrix, `Config` for a
/// threshold outside [-1, 1] or when more than `max_pairs` pairs qualify.
pub fn pairs_above(matrix: &[f32], d: usize, min_sim: f32, max_pairs: usize, plan: Plan) -> Result<Pairs> {
    let n = check(matrix, d, min_sim, max_pairs)?;
    let found = AtomicUsize::new(0);
    let over = AtomicBool::new(false);
    let parts = par::map_rows(plan, n, d, |rows| {
        let mut out = Pairs::default();
        let mut scratch = vec![0f32; QUERY_BLOCK * TILE_ROWS];
        let mut q0 = rows.start;
        while q0 < rows.end && !over.load(Ordering::Relaxed) {
            let q1 = (q0 + QUERY_BLOCK).min(rows.end);
            let before = out.len();
            block(matrix, d, n, q0..q1, min_sim, &mut scratch, &mut out);
            // One shared count across threads: the bound holds for the whole
            // output, checked after every block, so no chunk runs far past it.
            let added = out.len() - before;
            if found.fetch_add(added, Ordering::Relaxed) + added > max_pairs {
                over.store(true, Ordering::Relaxed);
            }
            q0 = q1;
        }
        out
    });
    let total: usize = parts.iter().map(Pairs::len).sum();
    if over.load(Ordering::Relaxed) || total > max_pairs {
        bail!(
            Config: "more than {max_pairs} pairs have a cosine >= {min_sim}; raise min_sim (or max_pairs) so the pairs fit in memory"
        );
    }
    let mut all = Pairs::default();
    for p in parts {
        all.extend(p);
    }
    Ok(all)
}

/// The pairs of query rows `qs` with every later row, one tile of the triangle at a time.
fn block(matrix: &[f32], d: usize, n: usize, qs: std::ops::Range<usize>, min_sim: f32, scratch: &mut [f32], out: &mut Pairs) {
    let nq = qs.len();
    let queries = &matrix[qs.start * d..qs.end * d];
    // Pairs of one query are pushed tile by tile; collecting them per query
    // first keeps the (i, j) order without a sort.
    let mut per_query: Vec<Vec<(u32, f32)>> = vec![Vec::new(); nq];
    let mut t0 = qs.start + 1;
    while t0 < n {
        let t1 = (t0 + TILE_ROWS).min(n);
        let rows = &matrix[t0 * d..t1 * d];
        let nrows = t1 - t0;
        let out_tile = &mut scratch[..nq * nrows];
        simd::dots_rows_multi(rows, d, queries, nq, out_tile);
        for (a, found) in per_query.iter_mut().enumerate() {
            let i = qs.start + a;
            let sims = &out_tile[a * nrows..(a + 1) * nrows];
            // Rows of the tile at or before i are the lower triangle (or i itself).
            let first = (i + 1).saturating_sub(t0);
            for (b, &s) in sims.iter().enumerate().skip(first) {
                if s >= min_sim {
                    found.push(((t0 + b) as u32, s));
                }
            }
        }
        t0 = t1;
    }
    for (a, found) in per_query.into_iter().enumerate() {
        for (j, s) in found {
            out.push(qs.start + a, j as usize, s);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::CoreError;
    use crate::linalg::rng::Rng;

    fn unit_rows(n: usize, d: usize, seed: u64) -> Vec<f32> {
        let mut rng = Rng::new(seed);
        let mut m = Vec::with_capacity(n * d);
        for _ in 0..n {
            let row: Vec<f32> = (0..d).map(|_| rng.uniform() as f32 - 0.5).collect();
            let norm = row.iter().map(|x| (x * x) as f64).sum::<f64>().sqrt() as f32;
            m.extend(row.iter().map(|x| x / norm));
        }
        m
    }

    fn naive(m: &[f32], d: usize, min_sim: f32) -> Vec<(u32, u32)> {
        let n = m.len() / d;
        let mut out = Vec::new();
        for i in 0..n {
            for j in i + 1..n {
                if simd::dot(&m[i * d..(i + 1) * d], &m[j * d..(j + 1) * d]) >= min_sim {
                    out.push((i as u32, j as u32));
                }
            }
        }
        out
    }

    #[test]
    fn matches_the_naive_triangle_on_every_plan() {
        // 1300 rows cross several query blocks and tiles, and a ragged last tile.
        let (n, d) = (1300, 8);
        let m = unit_rows(n, d, 7);
        let want = naive(&m, d, 0.8);
        assert!(want.len() > 100, "the fixture must have pairs to find, got {}", want.len());
        for plan in [Plan::Serial, Plan::Chunked, Plan::Auto] {
            let got = pairs_above(&m, d, 0.8, DEFAULT_MAX_PAIRS, plan).unwrap();
            let pairs: Vec<(u32, u32)> = got.left.iter().copied().zip(got.right.iter().copied()).collect();
            assert_eq!(pairs, want, "plan {plan:?}");
            assert!(got.sim.iter().all(|&s| s >= 0.8));
        }
    }

    #[test]
    fn duplicates_are_found_and_self_pairs_are_not() {
        let m = vec![1.0, 0.0, 1.0, 0.0, 0.0, 1.0];
        let got = pairs_above(&m, 2, 0.99, 10, Plan::Serial).unwrap();
        assert_eq!((got.left, got.right), (vec![0], vec![1]));
        assert!((got.sim[0] - 1.0).abs() < 1e-6);
        assert!(pairs_above(&m[..2], 2, 0.5, 10, Plan::Serial).unwrap().is_empty());
        assert!(pairs_above(&[], 2, 0.5, 10, Plan::Serial).unwrap().is_empty());
    }

    #[test]
    fn too_many_pairs_is_a_config_error_not_an_allocation() {
        let m: Vec<f32> = (0..200).flat_map(|_| [1.0f32, 0.0]).collect();
        let err = pairs_above(&m, 2, 0.5, 1000, Plan::Serial).unwrap_err();
        assert!(matches!(err, CoreError::Config(ref s) if s.contains("raise min_sim")), "{err:?}");
        assert_eq!(pairs_above(&m, 2, 0.5, 200 * 199 / 2, Plan::Serial).unwrap().len(), 200 * 199 / 2);
    }

    #[test]
    fn bad_inputs_are_typed_errors() {
        assert!(matches!(pairs_above(&[1.0, 0.0, 1.0], 2, 0.5, 10, Plan::Serial), Err(CoreError::Shape(_))));
        assert!(matches!(pairs_above(&[1.0, 0.0], 0, 0.5, 10, Plan::Serial), Err(CoreError::Shape(_))));
        assert!(matches!(pairs_above(&[1.0, 0.0], 2, f32::NAN, 10, Plan::Serial), Err(CoreError::Config(_))));
        assert!(matches!(pairs_above(&[1.0, 0.0], 2, 1.5, 10, Plan::Serial), Err(CoreError::Config(_))));
        assert!(matches!(pairs_above(&[1.0, 0.0], 2, 0.5, 0, Plan::Serial), Err(CoreError::Config(_))));
        assert!(matches!(pairs_above(&[3.0, 4.0], 2, 0.5, 10, Plan::Serial), Err(CoreError::InvalidVector(_))));
        assert!(matches!(pairs_above(&[f32::NAN, 0.0], 2, 0.5, 10, Plan::Serial), Err(CoreError::InvalidVector(_))));
    }
}
