//! Novelty scores of a candidate against a scope's rows, in one pass with no
//! N-sized temporaries: a streaming log-sum-exp and a small top-k buffer.

use crate::error::{ensure, Result};
use crate::kernels::par::Plan;
use crate::kernels::scan::Want;
use crate::kernels::sweep::{scan_queries, scan_query};
use crate::kernels::topk::{check_k, TopK};

pub fn check_kappa(kappa: f64) -> Result<()> {
    ensure!(
        kappa.is_finite() && kappa > 0.0,
        Config: "kappa must be finite and > 0, got {kappa}; use kappa_from_spacing or a positive constant such as 50.0"
    );
    Ok(())
}

/// SAGE's log-mean-exp novelty from a finished log-sum-exp over n rows.
pub fn sage_from_lse(lse: f64, n: usize, kappa: f64) -> f64 {
    if n == 0 {
        return f64::INFINITY;
    }
    let s = ((lse - (n as f64).ln()) / kappa).clamp(-1.0, 1.0);
    1.0 - s
}

/// memsieve's novelty from top-k cosines (any order): 1 - lse(kappa s)/kappa.
pub fn knn_from_sims(top: &[f32], kappa: f64) -> f64 {
    if top.is_empty() {
        return f64::INFINITY;
    }
    let smax = top.iter().fold(f64::NEG_INFINITY, |a, &b| a.max(b as f64));
    // 1 - s_max - ln(sum_j exp(-kappa (s_max - s_j))) / kappa; the s_max term is exp(0) = 1.
    let tail: f64 = top.iter().map(|&s| (-kappa * (smax - s as f64)).exp()).sum();
    1.0 - smax - tail.ln() / kappa
}

/// SAGE's novelty of one query over all n rows; empty -> +inf.
pub fn sage(matrix: &[f32], d: usize, q: &[f32], kappa: f64) -> Result<f64> {
    sage_with(matrix, d, q, kappa, Plan::Auto)
}

pub fn sage_with(matrix: &[f32], d: usize, q: &[f32], kappa: f64, plan: Plan) -> Result<f64> {
    check_kappa(kappa)?;
    let w = Want { k: None, kappa: Some(kappa), check: true };
    let lse = scan_query(matrix, d, q, w, plan)?.lse.expect("lse wanted");
    Ok(sage_from_lse(lse.value(), lse.rows(), kappa))
}

/// Result of a top-k scan: novelty, the k best (cosine, row) pairs.
#[derive(Clone, Debug)]
pub struct KnnScore {
    pub novelty: f64,
    pub top: TopK,
}

impl KnnScore {
    pub fn nearest(&self) -> Option<(usize, f32)> {
        self.top.rows.first().map(|&r| (r, self.top.sims[0]))
    }
}

/// The k nearest rows of one query.
pub fn topk(matrix: &[f32], d: usize, q: &[f32], k: usize) -> Result<TopK> {
    topk_with(matrix, d, q, k, Plan::Auto)
}

pub fn topk_with(matrix: &[f32], d: usize, q: &[f32], k: usize, plan: Plan) -> Result<TopK> {
    check_k(k)?;
    let w = Want { k: Some(k), kappa: None, check: true };
    Ok(scan_query(matrix, d, q, w, plan)?.top.expect("top-k wanted"))
}

/// memsieve's novelty over the k nearest rows; empty -> +inf.
pub fn knn(matrix: &[f32], d: usize, q: &[f32], kappa: f64, k: usize) -> Result<KnnScore> {
    knn_with(matrix, d, q, kappa, k, Plan::Auto)
}

pub fn knn_with(matrix: &[f32], d: usize, q: &[f32], kappa: f64, k: usize, plan: Plan) -> Result<KnnScore> {
    check_kappa(kappa)?;
    let top = topk_with(matrix, d, q, k, plan)?;
    Ok(KnnScore { novelty: knn_from_sims(&top.sims, kappa), top })
}

fn maxcos_of(top: TopK) -> KnnScore {
    let novelty = top.sims.first().map_or(f64::INFINITY, |&s| 1.0 - s as f64);
    KnnScore { novelty, top }
}

/// 1 - max cosine; empty -> +inf.
pub fn maxcos(matrix: &[f32], d: usize, q: &[f32]) -> Result<KnnScore> {
    Ok(maxcos_of(topk(matrix, d, q, 1)?))
}

/// Top-k lists of a batch of queries, each block of rows read once per query block.
pub fn topk_batch(matrix: &[f32], d: usize, queries: &[f32], k: usize) -> Result<Vec<TopK>> {
    topk_batch_with(matrix, d, queries, k, Plan::Auto)
}

pub fn topk_batch_with(matrix: &[f32], d: usize, queries: &[f32], k: usize, plan: Plan) -> Result<Vec<TopK>> {
    check_k(k)?;
    let w = Want { k: Some(k), kappa: None, check: true };
    Ok(scan_queries(matrix, d, queries, w, plan)?.into_iter().map(|s| s.top.expect("top-k wanted")).collect())
}

pub fn knn_batch(matrix: &[f32], d: usize, queries: &[f32], kappa: f64, k: usize) -> Result<Vec<KnnScore>> {
    knn_batch_with(matrix, d, queries, kappa, k, Plan::Auto)
}

pub fn knn_batch_with(matrix: &[f32], d: usize, queries: &[f32], kappa: f64, k: usize, plan: Plan) -> Result<Vec<KnnScore>> {
    check_kappa(kappa)?;
    Ok(topk_batch_with(matrix, d, queries, k, plan)?
        .into_iter()
        .map(|top| KnnScore { novelty: knn_from_sims(&top.sims, kappa), top })
        .collect())
}

pub fn maxcos_batch(matrix: &[f32], d: usize, queries: &[f32]) -> Result<Vec<KnnScore>> {
    Ok(topk_batch(matrix, d, queries, 1)?.into_iter().map(maxcos_of).collect())
}

pub fn sage_batch(matrix: &[f32], d: usize, queries: &[f32], kappa: f64) -> Result<Vec<f64>> {
    sage_batch_with(matrix, d, queries, kappa, Plan::Auto)
}

pub fn sage_batch_with(matrix: &[f32], d: usize, queries: &[f32], kappa: f64, plan: Plan) -> Result<Vec<f64>> {
    check_kappa(kappa)?;
    let w = Want { k: None, kappa: Some(kappa), check: true };
    Ok(scan_queries(matrix, d, queries, w, plan)?
        .into_iter()
        .map(|s| {
            let l = s.lse.expect("lse wanted");
            sage_from_lse(l.value(), l.rows(), kappa)
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::CoreError;
    use crate::kernels::par;
    use crate::kernels::sweep::{read_floor, similarities, similarities_batch};

    fn unit_rows(n: usize, d: usize, seed: u64) -> Vec<f32> {
        let mut r = crate::linalg::rng::Rng::new(seed);
        let mut m: Vec<f32> = (0..n * d).map(|_| r.normal() as f32).collect();
        for row in m.chunks_mut(d) {
            let nn = row.iter().map(|x| x * x).sum::<f32>().sqrt();
            row.iter_mut().for_each(|x| *x /= nn);
        }
        m
    }

    fn sims64(m: &[f32], d: usize, q: &[f32]) -> Vec<f64> {
        m.chunks(d).map(|r| r.iter().zip(q).map(|(a, b)| *a as f64 * *b as f64).sum()).collect()
    }

    #[test]
    fn sage_matches_reference() {
        let (n, d) = (1000, 37);
        let m = unit_rows(n, d, 1);
        let q = unit_rows(1, d, 2);
        let s = sims64(&m, d, &q);
        let kappa = 20.0;
        let mx = s.iter().cloned().fold(f64::MIN, f64::max) * kappa;
        let lse = mx + s.iter().map(|x| (kappa * x - mx).exp()).sum::<f64>().ln();
        let want = 1.0 - ((lse - (n as f64).ln()) / kappa).clamp(-1.0, 1.0);
        let got = sage(&m, d, &q, kappa).unwrap();
        assert!((got - want).abs() < 1e-5 * want.abs().max(1.0), "{got} {want}");
        assert_eq!(sage(&[], d, &q, kappa).unwrap(), f64::INFINITY);
    }

    #[test]
    fn knn_duplicate_never_positive_and_topk_sorted() {
        let (n, d) = (3000, 16);
        let m = unit_rows(n, d, 3);
        let q = m[5 * d..6 * d].to_vec();
        let r = knn(&m, d, &q, 50.0, 10).unwrap();
        assert!(r.novelty <= 1e-6);
        assert_eq!(r.nearest().unwrap().0, 5);
        assert!(r.top.sims.windows(2).all(|w| w[0] >= w[1]));
        let mut s = sims64(&m, d, &q);
        s.sort_by(|a, b| b.partial_cmp(a).unwrap());
        for (a, b) in r.top.sims.iter().zip(&s) {
            assert!((*a as f64 - b).abs() < 1e-5);
        }
        assert_eq!(knn(&[], d, &q, 5.0, 3).unwrap().novelty, f64::INFINITY);
    }

    #[test]
    fn batch_equals_single() {
        let (n, d) = (700, 37);
        let m = unit_rows(n, d, 4);
        let qs = unit_rows(13, d, 5);
        let b = knn_batch(&m, d, &qs, 30.0, 8).unwrap();
        let sb = sage_batch(&m, d, &qs, 30.0).unwrap();
        let mb = maxcos_batch(&m, d, &qs).unwrap();
        for j in 0..13 {
            let q = &qs[j * d..(j + 1) * d];
            let one = knn(&m, d, q, 30.0, 8).unwrap();
            assert!((one.novelty - b[j].novelty).abs() < 1e-5);
            assert_eq!(one.top.rows, b[j].top.rows);
            assert!((sage(&m, d, q, 30.0).unwrap() - sb[j]).abs() < 1e-5);
            assert_eq!(maxcos(&m, d, q).unwrap().top.rows, mb[j].top.rows);
        }
    }

    #[test]
    fn bad_parameters_and_nan_rows() {
        let m = unit_rows(4, 8, 6);
        let q = m[..8].to_vec();
        assert!(matches!(knn(&m, 8, &q, 0.0, 3), Err(CoreError::Config(_))));
        assert!(matches!(knn(&m, 8, &q, 1.0, 0), Err(CoreError::Config(_))));
        let mut bad = m.clone();
        bad[17] = f32::NAN;
        assert!(matches!(knn(&bad, 8, &q, 1.0, 3), Err(CoreError::InvalidVector(_))));
        assert!(matches!(sage(&bad, 8, &q, 1.0), Err(CoreError::InvalidVector(_))));
    }

    #[test]
    fn a_k_far_above_the_rows_allocates_for_the_rows() {
        // k = 2^50 used to reserve 2^50 entries and abort the process.
        let (n, d) = (5, 8);
        let m = unit_rows(n, d, 7);
        let qs = m[..2 * d].to_vec();
        let huge = 1usize << 50;
        let top = topk(&m, d, &qs[..d], huge).unwrap();
        assert_eq!((top.rows.len(), top.rows[0]), (n, 0));
        assert!(top.sims.capacity() <= n + 1);
        let exact = knn(&m, d, &qs[..d], 20.0, n).unwrap();
        assert_eq!(knn(&m, d, &qs[..d], 20.0, huge).unwrap().novelty, exact.novelty);
        for (j, t) in topk_batch(&m, d, &qs, huge).unwrap().iter().enumerate() {
            assert_eq!((t.rows.len(), t.rows[0]), (n, j));
        }
        assert_eq!(topk(&[], d, &qs[..d], usize::MAX).unwrap().rows.len(), 0);
    }

    /// Rows above the parallel threshold, with exact duplicates of row 3 placed
    /// in later chunks so that ties straddle chunk boundaries.
    fn big(d: usize) -> Vec<f32> {
        let n = par::PAR_MIN_ELEMENTS / d + 3 * par::chunk_rows(d) + 77;
        let mut m = unit_rows(n, d, 21);
        let dup = m[3 * d..4 * d].to_vec();
        for r in [par::chunk_rows(d) - 1, par::chunk_rows(d), 2 * par::chunk_rows(d) + 5, n - 1] {
            m[r * d..(r + 1) * d].copy_from_slice(&dup);
        }
        m
    }

    fn close(a: f64, b: f64) -> bool {
        a == b || (a - b).abs() <= 1e-12 * a.abs().max(b.abs())
    }

    #[test]
    fn chunked_scans_equal_serial_ones() {
        let d = 37;
        let m = big(d);
        let n = m.len() / d;
        assert!(n * d >= par::PAR_MIN_ELEMENTS && par::row_chunks(n, d).len() >= 4);
        let mut qs = m[3 * d..4 * d].to_vec();
        qs.extend(unit_rows(10, d, 22));
        for plan in [Plan::Chunked, Plan::Auto] {
            for q in qs.chunks(d) {
                let (a, b) = (knn_with(&m, d, q, 20.0, 10, Plan::Serial).unwrap(), knn_with(&m, d, q, 20.0, 10, plan).unwrap());
                assert_eq!(a.top.rows, b.top.rows);
                assert_eq!(a.top.sims, b.top.sims);
                assert!(close(a.novelty, b.novelty), "{} {}", a.novelty, b.novelty);
                let (a, b) = (sage_with(&m, d, q, 50.0, Plan::Serial).unwrap(), sage_with(&m, d, q, 50.0, plan).unwrap());
                assert!(close(a, b), "{a} {b}");
                assert_eq!(similarities(&m, d, q, Plan::Serial), similarities(&m, d, q, plan));
            }
            let (a, b) = (knn_batch_with(&m, d, &qs, 20.0, 7, Plan::Serial).unwrap(), knn_batch_with(&m, d, &qs, 20.0, 7, plan).unwrap());
            for (x, y) in a.iter().zip(&b) {
                assert_eq!(x.top.rows, y.top.rows);
                assert!(close(x.novelty, y.novelty));
            }
            let (a, b) = (sage_batch_with(&m, d, &qs, 50.0, Plan::Serial).unwrap(), sage_batch_with(&m, d, &qs, 50.0, plan).unwrap());
            assert!(a.iter().zip(&b).all(|(x, y)| close(*x, *y)), "{a:?} {b:?}");
            assert_eq!(similarities_batch(&m, d, &qs, Plan::Serial), similarities_batch(&m, d, &qs, plan));
            // The read floor sums in f32 lanes, so chunking only moves its rounding.
            assert!((read_floor(&m, d, Plan::Serial) - read_floor(&m, d, plan)).abs() < 1e-2);
        }
        // The duplicates of row 3 tie at the top and come out in row order.
        let top = topk_with(&m, d, &qs[..d], 5, Plan::Chunked).unwrap();
        let c = par::chunk_rows(d);
        assert_eq!(top.rows, vec![3, c - 1, c, 2 * c + 5, n - 1]);
    }

    #[test]
    fn chunked_scans_are_deterministic_and_report_the_first_bad_row() {
        let d = 37;
        let mut m = big(d);
        let q = unit_rows(1, d, 23);
        let a = sage_with(&m, d, &q, 50.0, Plan::Chunked).unwrap();
        for _ in 0..5 {
            assert_eq!(a.to_bits(), sage_with(&m, d, &q, 50.0, Plan::Chunked).unwrap().to_bits());
        }
        let c = par::chunk_rows(d);
        m[(3 * c + 2) * d] = f32::INFINITY;
        m[(c + 9) * d + 4] = f32::NAN;
        for plan in [Plan::Serial, Plan::Chunked] {
            let msg = match knn_with(&m, d, &q, 20.0, 3, plan) {
                Err(CoreError::InvalidVector(msg)) => msg,
                other => panic!("{other:?}"),
            };
            assert!(msg.contains(&format!("matrix row {} ", c + 9)), "{msg}");
            assert!(matches!(sage_batch_with(&m, d, &q, 5.0, plan), Err(CoreError::InvalidVector(_))));
        }
    }

    #[test]
    fn lse_skips_only_what_cannot_count() {
        // Far-below rows are skipped, yet the sum matches a float64 reference.
        let (n, d) = (5000, 16);
        let m = unit_rows(n, d, 24);
        let q = m[..d].to_vec();
        for kappa in [1.0, 50.0, 2000.0] {
            let s = sims64(&m, d, &q);
            let mx = s.iter().cloned().fold(f64::MIN, f64::max) * kappa;
            let lse = mx + s.iter().map(|x| (kappa * x - mx).exp()).sum::<f64>().ln();
            let want = 1.0 - ((lse - (n as f64).ln()) / kappa).clamp(-1.0, 1.0);
            let got = sage(&m, d, &q, kappa).unwrap();
            assert!((got - want).abs() < 1e-5 * want.abs().max(1e-3), "kappa {kappa}: {got} {want}");
        }
    }
}
