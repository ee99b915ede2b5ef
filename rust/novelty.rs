//! Novelty scores of a candidate against a scope's rows, in one pass with no
//! N-sized temporaries: a streaming log-sum-exp and a small top-k buffer.

use crate::error::{CoreError, Result};
use crate::simd;

/// The k best (cosine, row) pairs seen so far, best first. k is small (8-16),
/// so an insertion buffer beats a heap.
#[derive(Clone, Debug)]
pub struct TopK {
    k: usize,
    pub sims: Vec<f32>,
    pub rows: Vec<usize>,
}

impl TopK {
    pub fn new(k: usize) -> Self {
        TopK { k, sims: Vec::with_capacity(k + 1), rows: Vec::with_capacity(k + 1) }
    }

    #[inline]
    pub fn push(&mut self, s: f32, row: usize) {
        if self.sims.len() == self.k {
            // Ties keep the earlier row, so the result is stable in row order.
            if s <= self.sims[self.k - 1] {
                return;
            }
            self.sims.pop();
            self.rows.pop();
        }
        let mut i = self.sims.len();
        while i > 0 && self.sims[i - 1] < s {
            i -= 1;
        }
        self.sims.insert(i, s);
        self.rows.insert(i, row);
    }

    #[inline]
    pub fn push_block(&mut self, row0: usize, sims: &[f32]) {
        for (i, &s) in sims.iter().enumerate() {
            if self.sims.len() < self.k || s > self.sims[self.k - 1] {
                self.push(s, row0 + i);
            }
        }
    }
}

/// Running log-sum-exp of kappa * s: a running max and a rescaled sum.
#[derive(Clone, Debug)]
pub struct StreamLse {
    kappa: f64,
    max: f64,
    sum: f64,
    n: usize,
}

impl StreamLse {
    pub fn new(kappa: f64) -> Self {
        StreamLse { kappa, max: f64::NEG_INFINITY, sum: 0.0, n: 0 }
    }

    #[inline]
    pub fn push_block(&mut self, sims: &[f32]) {
        let bmax = sims.iter().fold(f32::NEG_INFINITY, |a, &b| a.max(b));
        let m = self.kappa * bmax as f64;
        if m > self.max {
            self.sum *= (self.max - m).exp();
            self.max = m;
        }
        let (k, mx) = (self.kappa as f32, self.max as f32);
        let mut s = 0f64;
        for &x in sims {
            s += (k * x - mx).exp() as f64;
        }
        self.sum += s;
        self.n += sims.len();
    }

    pub fn value(&self) -> f64 {
        self.max + self.sum.ln()
    }
}

pub fn check_kappa(kappa: f64) -> Result<()> {
    if !(kappa.is_finite() && kappa > 0.0) {
        return Err(CoreError::Config(format!(
            "kappa must be finite and > 0, got {kappa}; use kappa_from_spacing or a positive constant such as 50.0"
        )));
    }
    Ok(())
}

pub fn check_k(k: usize) -> Result<()> {
    if k == 0 {
        return Err(CoreError::Config("k must be >= 1, got 0; the default is k=10".into()));
    }
    Ok(())
}

fn nonfinite(sims: &[f32], row0: usize) -> Result<()> {
    if let Some(i) = sims.iter().position(|s| !s.is_finite()) {
        return Err(CoreError::InvalidVector(format!(
            "matrix row {} holds NaN or inf (its similarity is {}); drop or re-embed that row",
            row0 + i,
            sims[i]
        )));
    }
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
    check_kappa(kappa)?;
    let mut lse = StreamLse::new(kappa);
    let mut err = Ok(());
    simd::scan(matrix, d, q, |r0, s| {
        if err.is_ok() {
            err = nonfinite(s, r0);
        }
        lse.push_block(s);
    });
    err?;
    Ok(sage_from_lse(lse.value(), lse.n, kappa))
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
    check_k(k)?;
    let mut top = TopK::new(k);
    let mut err = Ok(());
    simd::scan(matrix, d, q, |r0, s| {
        if err.is_ok() {
            err = nonfinite(s, r0);
        }
        top.push_block(r0, s);
    });
    err?;
    Ok(top)
}

/// memsieve's novelty over the k nearest rows; empty -> +inf.
pub fn knn(matrix: &[f32], d: usize, q: &[f32], kappa: f64, k: usize) -> Result<KnnScore> {
    check_kappa(kappa)?;
    let top = topk(matrix, d, q, k)?;
    Ok(KnnScore { novelty: knn_from_sims(&top.sims, kappa), top })
}

/// 1 - max cosine; empty -> +inf.
pub fn maxcos(matrix: &[f32], d: usize, q: &[f32]) -> Result<KnnScore> {
    let top = topk(matrix, d, q, 1)?;
    let novelty = top.sims.first().map_or(f64::INFINITY, |&s| 1.0 - s as f64);
    Ok(KnnScore { novelty, top })
}

/// Top-k lists of a batch of queries, each block of rows read once per query block.
pub fn topk_batch(matrix: &[f32], d: usize, queries: &[f32], k: usize) -> Result<Vec<TopK>> {
    check_k(k)?;
    let nq = queries.len() / d.max(1);
    let mut tops = vec![TopK::new(k); nq];
    let mut err = Ok(());
    simd::scan_batch(matrix, d, queries, |j, r0, s| {
        if err.is_ok() {
            err = nonfinite(s, r0);
        }
        tops[j].push_block(r0, s);
    });
    err?;
    Ok(tops)
}

pub fn knn_batch(matrix: &[f32], d: usize, queries: &[f32], kappa: f64, k: usize) -> Result<Vec<KnnScore>> {
    check_kappa(kappa)?;
    Ok(topk_batch(matrix, d, queries, k)?
        .into_iter()
        .map(|top| KnnScore { novelty: knn_from_sims(&top.sims, kappa), top })
        .collect())
}

pub fn maxcos_batch(matrix: &[f32], d: usize, queries: &[f32]) -> Result<Vec<KnnScore>> {
    Ok(topk_batch(matrix, d, queries, 1)?
        .into_iter()
        .map(|top| {
            let novelty = top.sims.first().map_or(f64::INFINITY, |&s| 1.0 - s as f64);
            KnnScore { novelty, top }
        })
        .collect())
}

pub fn sage_batch(matrix: &[f32], d: usize, queries: &[f32], kappa: f64) -> Result<Vec<f64>> {
    check_kappa(kappa)?;
    let nq = queries.len() / d.max(1);
    let mut lses = vec![StreamLse::new(kappa); nq];
    let mut err = Ok(());
    simd::scan_batch(matrix, d, queries, |j, r0, s| {
        if err.is_ok() {
            err = nonfinite(s, r0);
        }
        lses[j].push_block(s);
    });
    err?;
    Ok(lses.iter().map(|l| sage_from_lse(l.value(), l.n, kappa)).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unit_rows(n: usize, d: usize, seed: u64) -> Vec<f32> {
        let mut r = crate::rng::Rng::new(seed);
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
}
