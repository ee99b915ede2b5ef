//! A scope's vectors: a pure vector index kept incrementally (add and remove
//! cost O(d)). It holds no threshold: the gate (python/memsieve/gate.py) owns
//! the scope's ThresholdState and each memory's share.

use std::collections::HashMap;

use crate::error::{bail, err, Result};
use crate::gate::kappa;
use crate::gate::novelty::{self, KnnScore};
use crate::kernels::par::Plan;
use crate::kernels::scan::Want;
use crate::kernels::sweep::scan_query;
use crate::kernels::topk::{check_k, TopK};
use crate::kernels::vector::check_unit;
use crate::quant::{self, QuantRows, Storage};

/// Fixed-point scale of the running row sum (exactly reversible, see ThresholdState).
const SUM_SCALE: f64 = (1u64 << 32) as f64;

#[derive(Clone, Debug)]
pub struct ScopeState {
    dim: usize,
    data: Vec<f32>,
    ids: Vec<i64>,
    rows: HashMap<i64, usize>,
    sum_fixed: Vec<i64>,
    /// The int8 copy the top-k scans read first (`Storage::Int8`), row for row.
    quant: Option<QuantRows>,
}

impl ScopeState {
    pub fn new(dim: usize) -> Result<Self> {
        if dim == 0 {
            bail!(Config: "dim must be >= 1, got 0; pass the embedding width, e.g. 384");
        }
        Ok(ScopeState {
            dim,
            data: Vec::new(),
            ids: Vec::new(),
            rows: HashMap::new(),
            sum_fixed: vec![0; dim],
            quant: None,
        })
    }

    /// A scope that stores its vectors as `storage` says.
    pub fn with_storage(dim: usize, storage: Storage) -> Result<Self> {
        let mut s = ScopeState::new(dim)?;
        storage.check_dim(dim)?;
        if storage == Storage::Int8 {
            s.quant = Some(QuantRows::new(dim));
        }
        Ok(s)
    }

    pub fn storage(&self) -> Storage {
        if self.quant.is_some() { Storage::Int8 } else { Storage::Float32 }
    }

    /// Bytes of the int8 copy (0 for float32 storage).
    pub fn quant_bytes(&self) -> usize {
        self.quant.as_ref().map_or(0, QuantRows::bytes)
    }

    /// The k nearest rows: from the int8 copy and a float32 re-score when the
    /// scope keeps one (the same list, see `quant`), else the float32 scan.
    fn top(&self, q: &[f32], k: usize) -> Result<TopK> {
        match &self.quant {
            Some(qr) => quant::topk(qr, &self.data, q, k, Plan::Auto),
            None => novelty::topk(&self.data, self.dim, q, k),
        }
    }

    /// How many rows a top-k of `q` re-scores in float32 (all of them without an int8 copy).
    pub fn rescored(&self, q: &[f32], k: usize) -> Result<usize> {
        self.check_query(q)?;
        match &self.quant {
            Some(qr) => Ok(quant::topk_on(crate::kernels::simd::isa(), qr, &self.data, q, k, Plan::Auto)?.1),
            None => check_k(k).map(|_| self.len()),
        }
    }

    pub fn dim(&self) -> usize {
        self.dim
    }
    pub fn len(&self) -> usize {
        self.ids.len()
    }
    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }
    pub fn ids(&self) -> &[i64] {
        &self.ids
    }
    pub fn matrix(&self) -> &[f32] {
        &self.data
    }
    pub fn contains(&self, id: i64) -> bool {
        self.rows.contains_key(&id)
    }

    fn check_dim(&self, v: &[f32], what: &str) -> Result<()> {
        if v.len() != self.dim {
            bail!(
                Shape: "{what} has width {}, this scope holds width {}; embed with the scope's model", v.len(), self.dim
            );
        }
        Ok(())
    }

    pub fn check_query(&self, q: &[f32]) -> Result<()> {
        self.check_dim(q, "query")?;
        check_unit(q, "query")
    }

    fn push_row(&mut self, id: i64, v: &[f32]) {
        self.rows.insert(id, self.ids.len());
        self.ids.push(id);
        self.data.extend_from_slice(v);
        if let Some(qr) = &mut self.quant {
            qr.push(v);
        }
        for (s, &x) in self.sum_fixed.iter_mut().zip(v) {
            *s += (x as f64 * SUM_SCALE).round() as i64;
        }
    }

    /// Store `v` under `id`.
    pub fn add(&mut self, id: i64, v: &[f32]) -> Result<()> {
        self.check_dim(v, "vector")?;
        check_unit(v, "vector")?;
        if self.rows.contains_key(&id) {
            bail!(State: "id {id} is already in this scope; remove it first or use a new id");
        }
        self.push_row(id, v);
        Ok(())
    }

    /// Store many rows; all-or-nothing.
    pub fn add_many(&mut self, ids: &[i64], vectors: &[f32]) -> Result<()> {
        if vectors.len() != ids.len() * self.dim {
            bail!(
                Shape: "got {} ids for {} rows of width {}; pass one id per row", ids.len(), vectors.len() / self.dim, self.dim
            );
        }
        let mut seen = std::collections::HashSet::with_capacity(ids.len());
        for (i, (&id, row)) in ids.iter().zip(vectors.chunks_exact(self.dim)).enumerate() {
            if self.rows.contains_key(&id) || !seen.insert(id) {
                bail!(State: "id {id} (row {i}) is duplicate; ids must be unique within a scope");
            }
            check_unit(row, &format!("row {i}"))?;
        }
        self.data.reserve(vectors.len());
        for (&id, row) in ids.iter().zip(vectors.chunks_exact(self.dim)) {
            self.push_row(id, row);
        }
        Ok(())
    }

    /// Remove `id` by swapping the last row into its place.
    pub fn remove(&mut self, id: i64) -> Result<()> {
        let row = *self
            .rows
            .get(&id)
            .ok_or_else(|| err!(State: "id {id} is not in this scope; check contains(id) first"))?;
        let d = self.dim;
        for (s, &x) in self.sum_fixed.iter_mut().zip(&self.data[row * d..(row + 1) * d]) {
            *s -= (x as f64 * SUM_SCALE).round() as i64;
        }
        let last = self.ids.len() - 1;
        if row != last {
            self.data.copy_within(last * d..(last + 1) * d, row * d);
            let moved = self.ids[last];
            self.rows.insert(moved, row);
        }
        self.data.truncate(last * d);
        if let Some(qr) = &mut self.quant {
            qr.swap_remove(row);
        }
        self.rows.remove(&id);
        self.ids.swap_remove(row);
        Ok(())
    }

    pub fn score_knn(&self, q: &[f32], kappa: f64, k: usize) -> Result<KnnScore> {
        self.check_query(q)?;
        novelty::check_kappa(kappa)?;
        let top = self.top(q, k)?;
        Ok(KnnScore { novelty: novelty::knn_from_sims(&top.sims, kappa), top })
    }

    pub fn score_maxcos(&self, q: &[f32], k: usize) -> Result<KnnScore> {
        self.check_query(q)?;
        let top = self.top(q, k)?;
        let novelty = top.sims.first().map_or(f64::INFINITY, |&s| 1.0 - s as f64);
        Ok(KnnScore { novelty, top })
    }

    /// SAGE's score over all rows, plus the k nearest (for its UPDATE target), in one pass.
    /// Its log-sum-exp needs every row's cosine, so it reads the float32 rows
    /// under either storage.
    pub fn score_sage(&self, q: &[f32], kappa: f64, k: usize) -> Result<KnnScore> {
        self.check_query(q)?;
        novelty::check_kappa(kappa)?;
        check_k(k)?;
        // Rows were validated on insertion, so every similarity is finite.
        let w = Want { k: Some(k), kappa: Some(kappa), check: false };
        let s = scan_query(&self.data, self.dim, q, w, Plan::Auto)?;
        let lse = s.lse.expect("lse wanted");
        Ok(KnnScore { novelty: novelty::sage_from_lse(lse.value(), self.len(), kappa), top: s.top.expect("top-k wanted") })
    }

    pub fn nearest(&self, q: &[f32], k: usize) -> Result<TopK> {
        self.check_query(q)?;
        self.top(q, k)
    }

    pub fn id_of(&self, row: usize) -> i64 {
        self.ids[row]
    }

    /// Banerjee's kappa from the running sum: O(d).
    pub fn kappa_banerjee(&self, clip: Option<(f64, f64)>) -> Result<f64> {
        kappa::check_clip(clip)?;
        if self.is_empty() {
            bail!(Shape: "kappa_banerjee needs a non-empty scope; add vectors first");
        }
        let norm = self.sum_fixed.iter().map(|&s| (s as f64 / SUM_SCALE).powi(2)).sum::<f64>().sqrt();
        kappa::banerjee_from_r(norm / self.len() as f64, self.dim, clip)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::CoreError;

    fn unit(d: usize, seed: u64) -> Vec<f32> {
        let mut r = crate::linalg::rng::Rng::new(seed);
        let mut v: Vec<f32> = (0..d).map(|_| r.normal() as f32).collect();
        let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        v.iter_mut().for_each(|x| *x /= n);
        v
    }

    fn scope(d: usize) -> ScopeState {
        ScopeState::new(d).unwrap()
    }

    #[test]
    fn add_then_remove_restores_state() {
        let d = 37;
        let mut s = scope(d);
        for i in 0..50 {
            s.add(i, &unit(d, i as u64)).unwrap();
        }
        let q = unit(d, 999);
        let before = (s.ids().to_vec(), s.score_knn(&q, 20.0, 5).unwrap().novelty, s.kappa_banerjee(None).unwrap());
        s.add(1000, &unit(d, 1000)).unwrap();
        s.remove(1000).unwrap();
        let after = (s.ids().to_vec(), s.score_knn(&q, 20.0, 5).unwrap().novelty, s.kappa_banerjee(None).unwrap());
        assert_eq!(before, after);
        // Removing from the middle keeps ids and rows consistent.
        s.remove(7).unwrap();
        assert!(!s.contains(7));
        for (row, &id) in s.ids().iter().enumerate() {
            assert_eq!(&s.matrix()[row * d..(row + 1) * d], unit(d, id as u64).as_slice());
        }
    }

    #[test]
    fn banerjee_from_running_sum_matches_full_scan() {
        let d = 16;
        let mut s = scope(d);
        let mut all = Vec::new();
        for i in 0..30 {
            let v = unit(d, i);
            all.extend_from_slice(&v);
            s.add(i as i64, &v).unwrap();
        }
        let a = s.kappa_banerjee(None).unwrap();
        let b = kappa::banerjee(&all, d, None).unwrap();
        assert!((a - b).abs() < 1e-6 * b, "{a} {b}");
    }

    #[test]
    fn int8_storage_answers_as_float32_through_adds_and_removes() {
        let d = 64;
        let (mut a, mut b) = (scope(d), ScopeState::with_storage(d, Storage::Int8).unwrap());
        assert_eq!((a.storage(), b.storage()), (Storage::Float32, Storage::Int8));
        let ids: Vec<i64> = (0..300).collect();
        let rows: Vec<f32> = ids.iter().flat_map(|&i| unit(d, i as u64)).collect();
        a.add_many(&ids, &rows).unwrap();
        b.add_many(&ids, &rows).unwrap();
        for id in [3, 150, 299, 0] {
            a.remove(id).unwrap();
            b.remove(id).unwrap();
        }
        b.add(1000, &unit(d, 1000)).unwrap();
        a.add(1000, &unit(d, 1000)).unwrap();
        assert!(b.quant_bytes() >= b.len() * d && a.quant_bytes() == 0);
        for seed in [7u64, 1000, 5000] {
            let q = unit(d, seed);
            let (x, y) = (a.score_knn(&q, 20.0, 10).unwrap(), b.score_knn(&q, 20.0, 10).unwrap());
            assert_eq!((x.top.rows, x.novelty.to_bits()), (y.top.rows, y.novelty.to_bits()));
            assert_eq!(a.score_maxcos(&q, 3).unwrap().top.sims, b.score_maxcos(&q, 3).unwrap().top.sims);
            assert_eq!(a.nearest(&q, 50).unwrap().rows, b.nearest(&q, 50).unwrap().rows);
            assert_eq!(a.score_sage(&q, 30.0, 5).unwrap().novelty, b.score_sage(&q, 30.0, 5).unwrap().novelty);
            assert!(b.rescored(&q, 10).unwrap() < b.len() && a.rescored(&q, 10).unwrap() == a.len());
        }
        assert!(matches!(b.score_knn(&unit(d, 1), 0.0, 3), Err(CoreError::Config(_))));
        assert!(matches!(b.nearest(&unit(d, 1), 0), Err(CoreError::Config(_))));
    }

    #[test]
    fn errors() {
        let d = 8;
        let mut s = scope(d);
        let v = unit(d, 1);
        s.add(1, &v).unwrap();
        assert!(matches!(s.add(1, &v), Err(CoreError::State(_))));
        assert!(matches!(s.remove(2), Err(CoreError::State(_))));
        assert!(matches!(s.add(2, &v[..4]), Err(CoreError::Shape(_))));
        assert!(matches!(s.add(2, &[0.0; 8]), Err(CoreError::InvalidVector(_))));
        assert!(matches!(s.add_many(&[3, 3], &[v.clone(), v.clone()].concat()), Err(CoreError::State(_))));
        assert_eq!(s.len(), 1);
    }
}
