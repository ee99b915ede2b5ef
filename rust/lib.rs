//! memsieve's Rust core, one folder per stage of the pipeline: the numeric
//! `kernels` (SIMD dot products and row scans, top-k, the parallel plan), the
//! int8 row store (`quant`), the novelty `gate` (scores, threshold, kappa,
//! routing, scopes, the information term), `linalg` (eigen, projection, the
//! seeded RNG), `text` (tokens) and the `keyword` index. All of it is pure
//! Rust; the thin PyO3 layer (`bindings`) is built only with the `python`
//! feature, so the crate compiles and tests without a Python.

pub mod error;
pub mod gate;
pub mod kernels;
pub mod keyword;
pub mod linalg;
pub mod quant;
pub mod text;

#[cfg(feature = "python")]
mod bindings;
