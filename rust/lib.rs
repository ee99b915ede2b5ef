//! memsieve's Rust core: the numeric kernels of the novelty gate (pure Rust,
//! in the modules below) and a thin PyO3 binding layer (`bindings`).

pub mod error;

mod bindings;
