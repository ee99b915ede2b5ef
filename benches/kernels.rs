//! Criterion benchmarks of the pure-Rust kernels (no Python involved).
//! Run with `cargo bench`; `MEMSIEVE_ISA=avx2|portable cargo bench` measures
//! the other kernel paths (`MEMSIEVE_PORTABLE=1` still forces portable). The `_par` rows force the
//! chunked path on every thread (`MEMSIEVE_THREADS` sets how many).

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use memsieve_core::gate::novelty;
use memsieve_core::kernels::par::Plan;
use memsieve_core::kernels::sweep;
use memsieve_core::gate::{scope, threshold};
use memsieve_core::kernels::simd;
use memsieve_core::linalg::rng::Rng;

const D: usize = 384;

fn unit_rows(n: usize, d: usize, seed: u64) -> Vec<f32> {
    let mut r = Rng::new(seed);
    let mut m: Vec<f32> = (0..n * d).map(|_| r.normal() as f32).collect();
    for row in m.chunks_mut(d) {
        let n = row.iter().map(|x| x * x).sum::<f32>().sqrt();
        row.iter_mut().for_each(|x| *x /= n);
    }
    m
}

fn dots(c: &mut Criterion) {
    let a = unit_rows(1, D, 1);
    let b = unit_rows(1, D, 2);
    let mut g = c.benchmark_group("dot384");
    g.bench_function("dispatched", |bch| bch.iter(|| simd::dot(black_box(&a), black_box(&b))));
    g.bench_function("portable", |bch| bch.iter(|| simd::dot_fallback(black_box(&a), black_box(&b))));
    g.finish();
}

fn scoring(c: &mut Criterion) {
    let mut g = c.benchmark_group("score");
    g.sample_size(20);
    for &n in &[1_000usize, 10_000, 100_000] {
        let m = unit_rows(n, D, 3);
        let q = unit_rows(1, D, 4);
        g.throughput(Throughput::Bytes((n * D * 4) as u64));
        g.bench_with_input(BenchmarkId::new("read", n), &n, |b, _| b.iter(|| simd::sum(black_box(&m))));
        g.bench_with_input(BenchmarkId::new("read_par", n), &n, |b, _| {
            b.iter(|| sweep::read_floor(black_box(&m), D, Plan::Chunked))
        });
        g.bench_with_input(BenchmarkId::new("knn_k10", n), &n, |b, _| {
            b.iter(|| novelty::knn_with(black_box(&m), D, black_box(&q), 20.0, 10, Plan::Serial).map(|r| r.novelty))
        });
        g.bench_with_input(BenchmarkId::new("knn_k10_par", n), &n, |b, _| {
            b.iter(|| novelty::knn_with(black_box(&m), D, black_box(&q), 20.0, 10, Plan::Chunked).map(|r| r.novelty))
        });
        g.bench_with_input(BenchmarkId::new("sage", n), &n, |b, _| {
            b.iter(|| novelty::sage_with(black_box(&m), D, black_box(&q), 50.0, Plan::Serial))
        });
        g.bench_with_input(BenchmarkId::new("sage_par", n), &n, |b, _| {
            b.iter(|| novelty::sage_with(black_box(&m), D, black_box(&q), 50.0, Plan::Chunked))
        });
        let qs = unit_rows(64, D, 5);
        g.bench_with_input(BenchmarkId::new("knn_batch64", n), &n, |b, _| {
            b.iter(|| novelty::knn_batch(black_box(&m), D, black_box(&qs), 20.0, 10).map(|r| r.len()))
        });
        // One thread: the fused micro-kernel alone, untouched by the other core's load.
        g.bench_with_input(BenchmarkId::new("knn_batch64_serial", n), &n, |b, _| {
            b.iter(|| novelty::knn_batch_with(black_box(&m), D, black_box(&qs), 20.0, 10, Plan::Serial).map(|r| r.len()))
        });
    }
    g.finish();
}

fn writes(c: &mut Criterion) {
    let mut g = c.benchmark_group("write");
    g.sample_size(10);
    let n = 10_000;
    let m = unit_rows(n, D, 6);
    let extra = unit_rows(1, D, 7);
    let mut s = scope::ScopeState::new(D).unwrap();
    let ids: Vec<i64> = (0..n as i64).collect();
    s.add_many(&ids, &m).unwrap();
    g.bench_function("scope_add_remove_10k", |b| {
        b.iter(|| {
            s.add(-1, black_box(&extra)).unwrap();
            s.remove(-1).unwrap()
        })
    });
    g.bench_function("sage_density_10k", |b| b.iter(|| threshold::sage_density(black_box(&m), D, 16)));
    g.finish();
}

criterion_group!(benches, dots, scoring, writes);
criterion_main!(benches);
