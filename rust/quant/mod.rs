//! An int8 copy of a scope's rows, scanned first, and a top-k that is exactly
//! the float32 one.
//!
//! Each row r is stored as codes c = round(r / s) in [-127, 127] with a
//! per-row scale s = max|r| / 127, beside its float32 row (which stays: it
//! re-scores the candidates, and SAGE's log-sum-exp reads every row). The
//! query is quantized to int16, so a row's approximate cosine is an exact
//! integer dot times two scales. For r̂ = s c and q̂ its query's codes,
//!
//!   r.q - r̂.q̂ = (r - r̂).q + r̂.(q - q̂),  so  |r.q - r̂.q̂| <= |r - r̂| |q| + |r̂| |q - q̂|,
//!
//! and each row gets a lower and an upper bound on its float32 cosine (plus
//! the float32 kernel's own rounding, `slack`). Every row whose upper bound
//! reaches the k-th best lower bound is re-scored in float32: any other row
//! is below k rows for certain. The re-scored rows go through the same
//! top-k buffer as a float32 scan, in row order, so ids, order, ties and
//! cosines are those of the float32 scan, bit for bit, on every path.

use std::ops::Range;

mod kernels;

use self::kernels::{QPath, LANES};
use crate::error::{bail, err, Result};
use crate::kernels::par::{self, Plan};
use crate::kernels::simd::{self, Isa, ROW_BLOCK};
use crate::kernels::topk::{check_k, TopK};

/// The widest rows the int8 copy takes. The query's top code is
/// i32::MAX / (127 * d), so that no dot product overflows; at this width it is
/// still 258, and wider rows would leave the query too coarse to bound well
/// (and, past about 16.9M, with no code at all).
pub const MAX_INT8_DIM: usize = 1 << 16;

/// How a scope stores its vectors.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Storage {
    /// float32 rows only (the default).
    Float32,
    /// float32 rows plus an int8 copy that the top-k scans read first.
    Int8,
}

impl Storage {
    pub fn parse(s: &str) -> Result<Storage> {
        match s {
            "float32" => Ok(Storage::Float32),
            "int8" => Ok(Storage::Int8),
            other => Err(err!(Config: "vectors {other:?} is not a storage; use \"float32\" (the default) or \"int8\"")),
        }
    }

    /// Refuse a width this storage cannot scan exactly.
    pub fn check_dim(self, dim: usize) -> Result<()> {
        if self == Storage::Int8 && dim > MAX_INT8_DIM {
            bail!(
                Config: "vectors=\"int8\" takes rows of width up to {MAX_INT8_DIM}, got {dim}; use vectors=\"float32\""
            );
        }
        Ok(())
    }

    pub fn name(self) -> &'static str {
        match self {
            Storage::Float32 => "float32",
            Storage::Int8 => "int8",
        }
    }
}

/// The two norms a row's error bound needs: |r - r̂| (its quantization
/// error) and |r̂|.
#[derive(Clone, Copy, Debug)]
struct RowNorms {
    err: f64,
    norm: f64,
}

/// The int8 rows of a scope, kept in the float32 rows' order.
#[derive(Clone, Debug)]
pub struct QuantRows {
    dim: usize,
    stride: usize,
    codes: Vec<i8>,
    /// Per-row scales apart from the norms: the scan's first test reads only these.
    scales: Vec<f64>,
    norms: Vec<RowNorms>,
    /// The largest norms any row has had (never lowered on removal, so only
    /// ever too large): a bound for every row at once, which lets the scan
    /// skip the far rows without reading their norms.
    widest: RowNorms,
}

fn stride_of(dim: usize) -> usize {
    dim.div_ceil(LANES) * LANES
}

impl QuantRows {
    pub fn new(dim: usize) -> Self {
        QuantRows {
            dim,
            stride: stride_of(dim),
            codes: Vec::new(),
            scales: Vec::new(),
            norms: Vec::new(),
            widest: RowNorms { err: 0.0, norm: 0.0 },
        }
    }

    pub fn len(&self) -> usize {
        self.scales.len()
    }

    pub fn is_empty(&self) -> bool {
        self.scales.is_empty()
    }

    /// Bytes the copy adds to the float32 rows.
    pub fn bytes(&self) -> usize {
        self.codes.len() + self.len() * (std::mem::size_of::<f64>() + std::mem::size_of::<RowNorms>())
    }

    /// Append a finite, non-zero row (the scope validated it).
    pub fn push(&mut self, v: &[f32]) {
        debug_assert_eq!(v.len(), self.dim);
        let amax = v.iter().fold(0f32, |a, &x| a.max(x.abs()));
        let scale = amax as f64 / 127.0;
        let (mut err, mut norm) = (0f64, 0f64);
        self.codes.reserve(self.stride);
        for &x in v {
            let c = (x as f64 / scale).round().clamp(-127.0, 127.0);
            self.codes.push(c as i8);
            let back = c * scale;
            err += (x as f64 - back).powi(2);
            norm += back * back;
        }
        self.codes.resize(self.codes.len() + self.stride - self.dim, 0);
        let n = RowNorms { err: err.sqrt(), norm: norm.sqrt() };
        self.widest = RowNorms { err: self.widest.err.max(n.err), norm: self.widest.norm.max(n.norm) };
        self.scales.push(scale);
        self.norms.push(n);
    }

    /// Remove row `row` by moving the last row into its place, as the float32 rows do.
    pub fn swap_remove(&mut self, row: usize) {
        let (st, last) = (self.stride, self.len() - 1);
        if row != last {
            self.codes.copy_within(last * st..(last + 1) * st, row * st);
        }
        self.codes.truncate(last * st);
        self.scales.swap_remove(row);
        self.norms.swap_remove(row);
    }
}

/// A query as int16 codes, with its scale and the norms of the bound.
struct QueryCode {
    codes: Vec<i16>,
    scale: f64,
    err: f64,
    norm: f64,
}

impl QueryCode {
    /// The largest code is chosen so that no dot of `stride` int8 codes can
    /// overflow an i32 (at d = 384 it is 32767, i16's own limit).
    fn new(q: &[f32], stride: usize) -> Self {
        let top = (i32::MAX as f64 / (127.0 * stride as f64)).floor().min(i16::MAX as f64);
        let amax = q.iter().fold(0f32, |a, &x| a.max(x.abs())) as f64;
        let scale = if amax > 0.0 { amax / top } else { 1.0 };
        let mut codes = vec![0i16; stride];
        let (mut err, mut norm) = (0f64, 0f64);
        for (c, &x) in codes.iter_mut().zip(q) {
            let k = (x as f64 / scale).round().clamp(-top, top);
            *c = k as i16;
            err += (x as f64 - k * scale).powi(2);
            norm += (x as f64).powi(2);
        }
        QueryCode { codes, scale, err: err.sqrt(), norm: norm.sqrt() }
    }
}

/// What the float32 kernel's rounding and the f64/f32 conversions can move a
/// cosine by: |fl(r.q) - r.q| <= d eps |r| |q| for a d-term dot (with |r|,
/// |q| <= 1 + 1e-3 as the scope admits), doubled, plus 1e-6 for the rest.
fn slack(dim: usize) -> f64 {
    2.0 * dim as f64 * f32::EPSILON as f64 * 1.01 + 1e-6
}

/// One chunk's part: the k best lower bounds, and the rows that may still
/// belong to the top k (upper bound, row).
struct Part {
    lower: TopK,
    cands: Vec<(f32, usize)>,
}

fn scan_chunk(path: QPath, qr: &QuantRows, qc: &QueryCode, k: usize, rows: Range<usize>) -> Part {
    let st = qr.stride;
    let mut part = Part { lower: TopK::new(k, rows.len()), cands: Vec::new() };
    let mut dots = [0i32; ROW_BLOCK];
    let sl = slack(qr.dim);
    let bound = |n: &RowNorms| n.err * qc.norm + n.norm * qc.err + sl;
    // Every row's bound is below this; 1e-6 more keeps a skipped row's upper
    // bound strictly under the bar after its rounding to f32.
    let widest = bound(&qr.widest) + 1e-6;
    for b0 in rows.clone().step_by(ROW_BLOCK) {
        let n = ROW_BLOCK.min(rows.end - b0);
        kernels::dots(path, &qr.codes[b0 * st..(b0 + n) * st], st, &qc.codes, &mut dots[..n]);
        for (i, (&dot, &scale)) in dots[..n].iter().zip(&qr.scales[b0..b0 + n]).enumerate() {
            let approx = dot as f64 * scale * qc.scale;
            // A row this far below the bar can neither enter the k best lower
            // bounds nor reach them with its upper bound.
            let bar = part.lower.bar() as f64;
            if approx + widest < bar {
                continue;
            }
            let b = bound(&qr.norms[b0 + i]);
            part.lower.push((approx - b) as f32, b0 + i);
            let hi = (approx + b) as f32;
            if hi >= part.lower.bar() {
                part.cands.push((hi, b0 + i));
            }
        }
        // The bar only rises: drop what it has passed, so the list stays near k.
        if part.cands.len() > 4 * k.min(rows.len()) + ROW_BLOCK {
            let bar = part.lower.bar();
            part.cands.retain(|c| c.0 >= bar);
        }
    }
    part
}

/// The k nearest rows of `q`, exactly as `novelty::topk` over `matrix` gives
/// them, found by scanning `qr` (the int8 copy of `matrix`) first.
pub fn topk(qr: &QuantRows, matrix: &[f32], q: &[f32], k: usize, plan: Plan) -> Result<TopK> {
    topk_on(simd::isa(), qr, matrix, q, k, plan).map(|(top, _)| top)
}

/// `topk` on a given path, also returning how many rows were re-scored.
pub fn topk_on(isa: Isa, qr: &QuantRows, matrix: &[f32], q: &[f32], k: usize, plan: Plan) -> Result<(TopK, usize)> {
    check_k(k)?;
    let (d, n) = (qr.dim, qr.len());
    if matrix.len() != n * d || q.len() != d {
        bail!(
            Shape: "the int8 copy holds {n} rows of width {d}, the float32 rows {} values and the query {}; keep them in step", matrix.len(), q.len()
        );
    }
    let path = QPath::of(isa.checked());
    let qc = QueryCode::new(q, qr.stride);
    // The chunks are fixed by (n, d) and the candidate set below depends only
    // on each row's bounds, so neither threads nor chunking change the result.
    let parts = par::map_rows(plan, n, qr.stride / 4, |rows| scan_chunk(path, qr, &qc, k, rows));
    let mut lowers = Vec::with_capacity(parts.len());
    let mut cands = Vec::new();
    for p in parts {
        lowers.push(p.lower);
        cands.extend(p.cands);
    }
    let bar = TopK::merge(k, lowers).bar();
    let mut rows: Vec<usize> = cands.into_iter().filter(|c| c.0 >= bar).map(|c| c.1).collect();
    rows.sort_unstable();
    let mut gathered = Vec::with_capacity(rows.len() * d);
    for &r in &rows {
        gathered.extend_from_slice(&matrix[r * d..(r + 1) * d]);
    }
    // Every row's cosine comes from the same instruction sequence wherever it
    // sits in a block (simd_avx512.rs), so these are the float32 scan's values.
    let mut sims = vec![0f32; rows.len()];
    if !rows.is_empty() {
        simd::dots_rows_on(isa, &gathered, d, q, &mut sims);
    }
    let mut top = TopK::new(k, rows.len());
    for (&r, &s) in rows.iter().zip(&sims) {
        top.push(s, r);
    }
    Ok((top, rows.len()))
}

#[cfg(test)]
mod tests;
