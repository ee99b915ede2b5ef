//! The batch top-k scan of the GEMM paths (AVX-512, AVX2): the micro-kernel
//! fused with each query's top-k list, so a batch's cosines never leave the
//! registers unless they beat a query's bar (no block buffer, no scatter).
//!
//! It returns what `sweep::scan_queries_on` would return for a top-k-only
//! `Want` on the same path, bit for bit: the cosines come from the same
//! micro-tiles, reach each list in row order, and chunks merge exactly. A small matrix's
//! batch is shared by query blocks instead of rows (`par::split_by_queries`): each list
//! then sees every row in order and nothing is merged.

use crate::error::Result;
use crate::kernels::par::{self, Plan};
use crate::kernels::scan::{nonfinite, Scan, Want};
use crate::kernels::simd::{Gemm, Isa, ROW_BLOCK};
use crate::kernels::topk::TopK;
use crate::kernels::gemm::TopLists;

/// The k best rows of every query of `queries` (row-major, width d) on the
/// GEMM path `isa`.
///
/// # Panics
/// If the CPU lacks `isa` or `isa` has no GEMM micro-kernel.
pub fn topk_scans(isa: Isa, matrix: &[f32], d: usize, queries: &[f32], kk: usize, w: Want, plan: Plan) -> Result<Vec<Scan>> {
    let g = Gemm::of(isa.checked()).expect("a GEMM path");
    let n = matrix.len() / d;
    let nq = queries.len() / d;
    let packed = g.pack_blocks(queries, nq, d);
    // The rows `rows` against the query blocks `blocks` (their lists numbered from the first).
    let scan = |rows: std::ops::Range<usize>, blocks: &[(usize, usize, Vec<f32>)]| -> Result<Vec<TopK>> {
        let base = blocks.first().map_or(0, |b| b.0);
        let count = blocks.iter().map(|b| b.1).sum();
        let mut lists = TopLists::new(kk, count, rows.len(), g.block);
        let m = &matrix[rows.start * d..rows.end * d];
        for (b, blk) in m.chunks(ROW_BLOCK * d).enumerate() {
            let row0 = rows.start + b * ROW_BLOCK;
            for (q0, qn, p) in blocks {
                // SAFETY: Gemm::of checked the CPU; p holds qn packed queries of width d.
                let ok = unsafe { (g.topk)(blk, d, p, *qn, row0, *q0 - base, &mut lists) };
                if !ok && w.check {
                    first_bad(g, blk, d, p, *qn, row0)?;
                }
            }
        }
        Ok(lists.into_topk())
    };
    if par::split_by_queries(plan, n, d, nq, packed.len()) {
        // Each block's lists see every row in order: the serial scan's lists, with no merge.
        let shares = par::map_units(packed.len(), |u| scan(0..n, &packed[u]));
        if shares.iter().all(|r| r.is_ok()) {
            return Ok(shares.into_iter().flat_map(|r| r.expect("checked"))
                .map(|top| Scan { top: Some(top), lse: None })
                .collect());
        }
        // A non-finite cosine: the error the serial scan meets first (its row blocks outer).
        scan(0..n, &packed)?;
    }
    let parts = par::map_batch(plan, n, d, nq, |rows| scan(rows, &packed));
    let parts: Vec<Vec<TopK>> = parts.into_iter().collect::<Result<_>>()?;
    let mut per_query: Vec<Vec<TopK>> = (0..nq).map(|_| Vec::with_capacity(parts.len())).collect();
    for part in parts {
        for (j, t) in part.into_iter().enumerate() {
            per_query[j].push(t);
        }
    }
    Ok(per_query
        .into_iter()
        .map(|mut p| {
            let top = if p.len() == 1 { p.pop().expect("one part") } else { TopK::merge(kk, p) };
            Scan { top: Some(top), lse: None }
        })
        .collect())
}

/// The error the unfused scan reports for a block holding a NaN or inf
/// cosine: the first query's first bad row, found from the same cosines.
#[cold]
fn first_bad(g: Gemm, blk: &[f32], d: usize, packed: &[f32], qn: usize, row0: usize) -> Result<()> {
    let n = blk.len() / d;
    let mut buf = vec![0f32; qn * n];
    // SAFETY: the caller's Gemm::of checked the CPU.
    unsafe { (g.kernel)(blk, d, packed, qn, &mut buf) };
    for s in buf.chunks(n) {
        nonfinite(s, row0)?;
    }
    Ok(())
}
