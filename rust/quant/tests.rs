//! The int8 scan's top-k against the float32 scan's, on every path.

use super::*;
use crate::error::CoreError;
use crate::kernels::scan::Want;
use crate::kernels::sweep;
use crate::linalg::rng::Rng;

fn unit_rows(n: usize, d: usize, seed: u64) -> Vec<f32> {
    let mut r = Rng::new(seed);
    let mut m: Vec<f32> = (0..n * d).map(|_| r.normal() as f32).collect();
    for row in m.chunks_mut(d) {
        let nn = row.iter().map(|x| x * x).sum::<f32>().sqrt();
        row.iter_mut().for_each(|x| *x /= nn);
    }
    m
}

/// Rows clustered around a few centres, with exact duplicates and near
/// duplicates: where the int8 bounds overlap most and ties decide the order.
fn clustered(n: usize, d: usize, seed: u64) -> Vec<f32> {
    let centres = unit_rows(7, d, seed);
    let noise = unit_rows(n, d, seed + 1);
    let mut m = Vec::with_capacity(n * d);
    for i in 0..n {
        let c = &centres[(i % 7) * d..(i % 7 + 1) * d];
        let eps = [0.02f32, 0.1, 0.4][i % 3];
        let mut row: Vec<f32> = c.iter().zip(&noise[i * d..(i + 1) * d]).map(|(a, b)| a + eps * b).collect();
        let nn = row.iter().map(|x| x * x).sum::<f32>().sqrt();
        row.iter_mut().for_each(|x| *x /= nn);
        m.extend(row);
    }
    if n > 10 {
        let dup = m[5 * d..6 * d].to_vec();
        for r in [9, n / 2, n - 1] {
            m[r * d..(r + 1) * d].copy_from_slice(&dup);
        }
    }
    m
}

fn quant(m: &[f32], d: usize) -> QuantRows {
    let mut qr = QuantRows::new(d);
    m.chunks(d).for_each(|r| qr.push(r));
    qr
}

fn f32_topk(isa: Isa, m: &[f32], d: usize, q: &[f32], k: usize, plan: Plan) -> TopK {
    let w = Want { k: Some(k), kappa: None, check: true };
    sweep::scan_query_on(isa, m, d, q, w, plan).unwrap().top.unwrap()
}

fn assert_same(a: &TopK, b: &TopK, what: &str) {
    assert_eq!(a.rows, b.rows, "{what}");
    let bits = |t: &TopK| t.sims.iter().map(|s| s.to_bits()).collect::<Vec<_>>();
    assert_eq!(bits(a), bits(b), "{what}");
}

#[test]
fn top_k_is_the_float32_one_bit_for_bit_on_every_path() {
    for (n, d) in [(1usize, 384usize), (40, 384), (700, 384), (3000, 37), (1500, 1000)] {
        let m = clustered(n, d, n as u64);
        let qr = quant(&m, d);
        let mut qs = m[(5 % n) * d..(5 % n + 1) * d].to_vec();
        qs.extend(unit_rows(6, d, 99));
        qs.extend_from_slice(&m[(n / 3) * d..(n / 3 + 1) * d]);
        for isa in Isa::available() {
            for q in qs.chunks(d) {
                for k in [1, 10, 64, n + 5] {
                    let want = f32_topk(isa, &m, d, q, k, Plan::Serial);
                    let (got, rescored) = topk_on(isa, &qr, &m, q, k, Plan::Serial).unwrap();
                    assert_same(&got, &want, &format!("{isa:?} n={n} d={d} k={k}"));
                    assert!(rescored >= want.rows.len() && rescored <= n);
                }
            }
        }
    }
}

#[test]
fn few_rows_are_rescored_and_chunks_change_nothing() {
    let (d, c) = (384, par::chunk_rows(96));
    let n = par::PAR_MIN_ELEMENTS / 96 + 3 * c + 77;
    let m = clustered(n, d, 5);
    let qr = quant(&m, d);
    for q in unit_rows(4, d, 6).chunks(d).chain([&m[5 * d..6 * d]]) {
        let (a, ra) = topk_on(simd::isa(), &qr, &m, q, 10, Plan::Serial).unwrap();
        let (b, rb) = topk_on(simd::isa(), &qr, &m, q, 10, Plan::Chunked).unwrap();
        assert_same(&a, &b, "serial vs chunked");
        assert_eq!(ra, rb);
        assert_same(&a, &f32_topk(simd::isa(), &m, d, q, 10, Plan::Chunked), "vs float32");
    }
    // The duplicates of row 5 tie at the top and come out in row order.
    let (top, _) = topk_on(simd::isa(), &qr, &m, &m[5 * d..6 * d], 4, Plan::Chunked).unwrap();
    assert_eq!(top.rows, vec![5, 9, n / 2, n - 1]);
    // The bound is about 0.01 in cosine: of rows spread like embeddings, a
    // sliver is re-scored (tight clusters, as above, re-score more).
    let spread = unit_rows(n, d, 9);
    let qr = quant(&spread, d);
    for q in unit_rows(3, d, 10).chunks(d).chain([&spread[..d]]) {
        let (_, r) = topk_on(simd::isa(), &qr, &spread, q, 10, Plan::Auto).unwrap();
        assert!(r < n / 100, "{r} of {n} re-scored");
    }
}

#[test]
fn removal_keeps_the_copy_in_step() {
    let d = 48;
    let m = unit_rows(50, d, 7);
    let mut qr = quant(&m, d);
    let mut rows: Vec<f32> = m.clone();
    for r in [0usize, 17, 47] {
        let last = rows.len() / d - 1;
        let tail = rows[last * d..].to_vec();
        rows[r * d..(r + 1) * d].copy_from_slice(&tail);
        rows.truncate(last * d);
        qr.swap_remove(r);
    }
    let fresh = quant(&rows, d);
    assert_eq!(qr.codes, fresh.codes);
    assert_eq!(qr.len(), 47);
    let q = unit_rows(1, d, 8);
    let (a, _) = topk_on(Isa::Portable, &qr, &rows, &q, 5, Plan::Serial).unwrap();
    assert_same(&a, &f32_topk(Isa::Portable, &rows, d, &q, 5, Plan::Serial), "after removals");
}

#[test]
fn bounds_hold_for_every_row() {
    let (n, d) = (2000, 384);
    let m = clustered(n, d, 11);
    let qr = quant(&m, d);
    let q = unit_rows(1, d, 12);
    let qc = QueryCode::new(&q, qr.stride);
    let part = scan_chunk(QPath::Portable, &qr, &qc, n, 0..n);
    let exact = sweep::similarities(&m, d, &q, Plan::Serial);
    let mut widest = 0f32;
    for (i, &s) in exact.iter().enumerate() {
        let at = part.lower.rows.iter().position(|&r| r == i).unwrap();
        let (lo, hi) = (part.lower.sims[at], part.cands.iter().find(|c| c.1 == i).unwrap().0);
        assert!(lo <= s && s <= hi, "row {i}: {lo} <= {s} <= {hi}");
        widest = widest.max(hi - lo);
    }
    assert!(widest < 0.03, "bounds {widest} wide");
}

#[test]
fn bad_shapes_and_names_are_errors() {
    let d = 8;
    let m = unit_rows(3, d, 13);
    let qr = quant(&m, d);
    assert!(matches!(topk(&qr, &m[..2 * d], &m[..d], 2, Plan::Auto), Err(CoreError::Shape(_))));
    assert!(matches!(topk(&qr, &m, &m[..d], 0, Plan::Auto), Err(CoreError::Config(_))));
    assert_eq!(Storage::parse("int8").unwrap(), Storage::Int8);
    match Storage::parse("float16") {
        Err(CoreError::Config(msg)) => assert!(msg.contains("\"float16\"") && msg.contains("int8"), "{msg}"),
        other => panic!("{other:?}"),
    }
    assert!(Storage::Int8.check_dim(MAX_INT8_DIM).is_ok() && Storage::Float32.check_dim(1 << 20).is_ok());
    match Storage::Int8.check_dim(MAX_INT8_DIM + 1) {
        Err(CoreError::Config(msg)) => assert!(msg.contains("65537") && msg.contains("float32"), "{msg}"),
        other => panic!("{other:?}"),
    }
    // A huge k reserves for the rows, not for k.
    let (top, _) = topk_on(Isa::Portable, &qr, &m, &m[..d], 1 << 50, Plan::Serial).unwrap();
    assert_eq!(top.rows.len(), 3);
}

/// ns per row of every int8 and float32 path over `n` rows, `reps` times.
fn probe_rates(n: usize, reps: u32) {
    let d = 384;
    let m = unit_rows(n, d, 1);
    let qr = quant(&m, d);
    let q = unit_rows(1, d, 2);
    let qc = QueryCode::new(&q, qr.stride);
    let rate = |t: std::time::Instant| t.elapsed().as_nanos() as f64 / reps as f64 / n as f64;
    for path in QPath::available() {
        let t = std::time::Instant::now();
        for _ in 0..reps {
            std::hint::black_box(scan_chunk(path, &qr, &qc, 10, 0..n));
        }
        eprintln!("n={n} int8 {path:?} scan {:.2} ns/row", rate(t));
    }
    for isa in Isa::available() {
        let t = std::time::Instant::now();
        for _ in 0..reps {
            std::hint::black_box(f32_topk(isa, &m, d, &q, 10, Plan::Serial));
        }
        eprintln!("n={n} float32 {isa:?} scan {:.2} ns/row", rate(t));
    }
}

/// In cache (256 rows) and streaming from memory (100k rows), one thread.
#[test]
#[ignore = "timing probe, run by hand"]
fn probe_rates_in_cache_and_streaming() {
    probe_rates(256, 10_000);
    probe_rates(100_000, 10);
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig {
        cases: 32, failure_persistence: None, ..proptest::prelude::ProptestConfig::default()
    })]

    /// The int8 scan with its float32 re-scoring gives the float32 top-k bit
    /// for bit, on every path, serial or chunked, for stored and fresh queries.
    #[test]
    fn int8_equals_float32_bit_for_bit(
        n in 1usize..700,
        d in 1usize..200,
        k in 1usize..40,
        seed in proptest::prelude::any::<u64>(),
        rows_clustered in proptest::prelude::any::<bool>(),
        stored_query in proptest::prelude::any::<bool>(),
        chunked in proptest::prelude::any::<bool>(),
    ) {
        let m = if rows_clustered { clustered(n, d, seed) } else { unit_rows(n, d, seed) };
        let qr = quant(&m, d);
        let q = if stored_query { m[(seed as usize % n) * d..(seed as usize % n + 1) * d].to_vec() } else { unit_rows(1, d, !seed) };
        let plan = if chunked { Plan::Chunked } else { Plan::Serial };
        for isa in Isa::available() {
            let want = f32_topk(isa, &m, d, &q, k, Plan::Serial);
            let (got, rescored) = topk_on(isa, &qr, &m, &q, k, plan).unwrap();
            let bits = |t: &TopK| (t.rows.clone(), t.sims.iter().map(|s| s.to_bits()).collect::<Vec<_>>());
            proptest::prop_assert_eq!(bits(&got), bits(&want), "{:?} n={} d={} k={}", isa, n, d, k);
            proptest::prop_assert!(rescored >= want.rows.len() && rescored <= n);
        }
    }
}
