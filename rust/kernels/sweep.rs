//! One pass of a query (or a batch of queries) over every row, serial or in
//! chunks per `Plan`: the scans the gate's scores and the int8 path's
//! reference are built on, and the raw similarities and read floor.

use crate::error::Result;
use crate::kernels::par::{self, Plan};
use crate::kernels::scan::{Scan, Want};
use crate::kernels::simd::{self, Isa};

/// One query against every row, in one pass, serial or chunked per `plan`.
pub fn scan_query(matrix: &[f32], d: usize, q: &[f32], w: Want, plan: Plan) -> Result<Scan> {
    scan_query_on(simd::isa(), matrix, d, q, w, plan)
}

/// `scan_query` on a given kernel path (tests and benches of each path).
pub fn scan_query_on(isa: Isa, matrix: &[f32], d: usize, q: &[f32], w: Want, plan: Plan) -> Result<Scan> {
    let n = matrix.len() / d.max(1);
    let parts = par::map_rows(plan, n, d, |rows| {
        let mut acc = Scan::new(w, rows.len());
        let mut res = Ok(());
        simd::scan_part_on(isa, &matrix[rows.start * d..rows.end * d], d, q, matrix.len(), |r0, s| {
            if res.is_ok() {
                res = acc.push(w, rows.start + r0, s);
            }
        });
        res.map(|_| acc)
    });
    Scan::merge(w, parts)
}

/// A batch of queries against every row; the matrix is read once per chunk.
pub fn scan_queries(matrix: &[f32], d: usize, queries: &[f32], w: Want, plan: Plan) -> Result<Vec<Scan>> {
    scan_queries_on(simd::isa(), matrix, d, queries, w, plan)
}

/// `scan_queries` on a given kernel path.
pub fn scan_queries_on(isa: Isa, matrix: &[f32], d: usize, queries: &[f32], w: Want, plan: Plan) -> Result<Vec<Scan>> {
    #[cfg(target_arch = "x86_64")]
    if let (Isa::Avx512 | Isa::Avx2, Some(k), None, true) = (isa, w.k, w.kappa, d > 0) {
        return crate::kernels::fused::topk_scans(isa, matrix, d, queries, k, w, plan);
    }
    let n = matrix.len() / d.max(1);
    let nq = queries.len() / d.max(1);
    let plan = par::batch_plan(plan, n, d, nq);
    let parts = par::map_rows(plan, n, d, |rows| {
        let mut acc = vec![Scan::new(w, rows.len()); nq];
        let mut res = Ok(());
        simd::scan_batch_on(isa, &matrix[rows.start * d..rows.end * d], d, queries, |j, r0, s| {
            if res.is_ok() {
                res = acc[j].push(w, rows.start + r0, s);
            }
        });
        res.map(|_| acc)
    });
    let parts: Vec<Vec<Scan>> = parts.into_iter().collect::<Result<_>>()?;
    let mut per_query: Vec<Vec<Result<Scan>>> = (0..nq).map(|_| Vec::with_capacity(parts.len())).collect();
    for part in parts {
        for (j, s) in part.into_iter().enumerate() {
            per_query[j].push(Ok(s));
        }
    }
    per_query.into_iter().map(|p| Scan::merge(w, p)).collect()
}

/// `out[i] = rows[i] . q` for every row (the chunks of a large matrix in parallel).
pub fn similarities(matrix: &[f32], d: usize, q: &[f32], plan: Plan) -> Vec<f32> {
    let n = matrix.len() / d.max(1);
    let parts = par::map_rows(plan, n, d, |rows| {
        let mut out = vec![0f32; rows.len()];
        let part = &matrix[rows.start * d..rows.end * d];
        simd::scan_part_on(simd::isa(), part, d, q, matrix.len(), |r0, s| out[r0..r0 + s.len()].copy_from_slice(s));
        out
    });
    if parts.len() == 1 {
        return parts.into_iter().next().expect("one part");
    }
    parts.concat()
}

/// `out[j * n + i] = rows[i] . queries[j]`, row-major (b, n).
pub fn similarities_batch(matrix: &[f32], d: usize, queries: &[f32], plan: Plan) -> Vec<f32> {
    let n = matrix.len() / d.max(1);
    let nq = queries.len() / d.max(1);
    let plan = par::batch_plan(plan, n, d, nq);
    let parts = par::map_rows(plan, n, d, |rows| {
        let len = rows.len();
        let mut out = vec![0f32; nq * len];
        simd::scan_batch(&matrix[rows.start * d..rows.end * d], d, queries, |j, r0, s| {
            out[j * len + r0..j * len + r0 + s.len()].copy_from_slice(s)
        });
        (rows, out)
    });
    let mut out = vec![0f32; nq * n];
    for (rows, part) in parts {
        let len = rows.len();
        for j in 0..nq {
            out[j * n + rows.start..j * n + rows.end].copy_from_slice(&part[j * len..(j + 1) * len]);
        }
    }
    out
}

/// A pass that only reads the matrix, with the widest loads the CPU has, over
/// the scans' chunks (`Plan::Chunked`: on every thread of the pool): the
/// bandwidth floor the scans are measured against.
pub fn read_floor(matrix: &[f32], d: usize, plan: Plan) -> f64 {
    let n = matrix.len() / d.max(1);
    par::map_rows(plan, n, d, |rows| simd::sum(&matrix[rows.start * d..rows.end * d])).into_iter().sum()
}
