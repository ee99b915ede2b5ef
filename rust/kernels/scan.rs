//! What one scan of a query collects (`Want`) and its partial result (`Scan`),
//! shared by the generic scans of `novelty` and the fused AVX-512 batch of
//! `fused`, so that neither module needs the other's internals.

use crate::error::{bail, Result};
use crate::kernels::simd;
use crate::kernels::stream::StreamLse;
use crate::kernels::topk::TopK;

pub(crate) fn nonfinite(sims: &[f32], row0: usize) -> Result<()> {
    // One vectorized test per block; the position is only looked for on failure.
    if simd::all_finite(sims) {
        return Ok(());
    }
    if let Some(i) = sims.iter().position(|s| !s.is_finite()) {
        bail!(
            InvalidVector: "matrix row {} holds NaN or inf (its similarity is {}); drop or re-embed that row", row0 + i, sims[i]
        );
    }
    Ok(())
}

/// What one scan of a query collects: a top-k list, a log-sum-exp, or both.
#[derive(Clone, Copy, Debug)]
pub struct Want {
    pub k: Option<usize>,
    pub kappa: Option<f64>,
    /// Check every similarity for NaN/inf (off for rows validated on insertion).
    pub check: bool,
}

/// The partial (or, merged, final) result of a scan.
#[derive(Clone, Debug)]
pub struct Scan {
    pub top: Option<TopK>,
    pub lse: Option<StreamLse>,
}

impl Scan {
    /// An empty scan of at most `rows` rows.
    pub(crate) fn new(w: Want, rows: usize) -> Self {
        Scan { top: w.k.map(|k| TopK::new(k, rows)), lse: w.kappa.map(StreamLse::new) }
    }

    pub(crate) fn push(&mut self, w: Want, row0: usize, s: &[f32]) -> Result<()> {
        if w.check {
            nonfinite(s, row0)?;
        }
        if let Some(t) = &mut self.top {
            t.push_block(row0, s);
        }
        if let Some(l) = &mut self.lse {
            l.push_block(s);
        }
        Ok(())
    }

    /// Merge partials of consecutive row ranges; the first error in row order wins.
    pub(crate) fn merge(w: Want, parts: Vec<Result<Scan>>) -> Result<Scan> {
        let parts: Vec<Scan> = parts.into_iter().collect::<Result<_>>()?;
        if parts.len() == 1 {
            return Ok(parts.into_iter().next().expect("one part"));
        }
        let mut out = Scan::new(w, 0);
        if let Some(l) = &mut out.lse {
            for p in &parts {
                l.merge(p.lse.as_ref().expect("lse wanted"));
            }
        }
        if let Some(k) = w.k {
            out.top = Some(TopK::merge(k, parts.into_iter().map(|p| p.top.expect("top-k wanted"))));
        }
        Ok(out)
    }
}
