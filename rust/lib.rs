//! memsieve's Rust core: the numeric kernels of the novelty gate (pure Rust,
//! in the modules below) and a thin PyO3 binding layer (`bindings`), built
//! only with the `python` feature so that the kernels compile and test
//! without a Python.

pub mod eigen;
pub mod error;
#[cfg(target_arch = "x86_64")]
mod fused;
#[cfg(target_arch = "x86_64")]
mod gemm;
pub mod info;
pub mod isa;
pub mod kappa;
pub mod keyword;
pub mod keyword_search;
pub mod novelty;
pub mod pairs;
pub mod par;
pub mod projection;
pub mod quant;
mod quant_kernels;
pub mod rng;
pub mod route;
mod scan;
pub mod scope;
pub mod simd;
#[cfg(target_arch = "x86_64")]
mod simd_avx2;
#[cfg(target_arch = "x86_64")]
mod simd_avx512;
#[cfg(target_arch = "aarch64")]
mod simd_neon;
mod simd_portable;
#[cfg(test)]
mod simd_tests;
pub mod stream;
pub mod text;
pub mod threshold;
mod topk;
pub mod vector;
pub mod vmf;

#[cfg(feature = "python")]
mod bindings;
