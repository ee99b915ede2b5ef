//! The numeric kernels every score is built on: run-time ISA choice (`isa`),
//! the dispatched SIMD dot products and row scans (`simd`), the query-batch
//! micro-kernels (`gemm`, `fused`, x86-64), the accumulators a scan feeds
//! (`topk`, `stream`, `scan`), the parallel row plan (`par`) and its helper
//! threads (`helpers`), one pass over
//! the rows (`sweep`), unit-vector checks (`vector`) and duplicate pairs (`pairs`).

#[cfg(target_arch = "x86_64")]
mod fused;
#[cfg(target_arch = "x86_64")]
mod gemm;
mod helpers;
pub mod isa;
pub mod pairs;
pub mod par;
pub mod scan;
pub mod simd;
pub mod stream;
pub mod sweep;
pub mod topk;
pub mod vector;

#[cfg(test)]
mod tests;
