//! Every kernel path this CPU can run, forced one at a time: each agrees with
//! the portable path within float32 rounding, scores a row the same wherever
//! it sits, and gives bit-identical results serial, chunked and repeated.

use crate::kernels::par::{self, Plan};
use crate::kernels::scan::{Scan, Want};
use crate::kernels::simd::{self, Isa, ROW_BLOCK};
use crate::kernels::sweep::{scan_queries_on, scan_query_on};
use crate::kernels::topk::TopK;

fn data(n: usize, seed: u64) -> Vec<f32> {
    let mut r = crate::linalg::rng::Rng::new(seed);
    (0..n).map(|_| r.normal() as f32).collect()
}

fn unit_rows(n: usize, d: usize, seed: u64) -> Vec<f32> {
    let mut m = data(n * d, seed);
    for row in m.chunks_mut(d) {
        let nn = row.iter().map(|x| x * x).sum::<f32>().sqrt();
        row.iter_mut().for_each(|x| *x /= nn);
    }
    m
}

/// |a - b| within float32 rounding of a sum of `d` products of unit-scale values.
fn near(a: f32, b: f32, scale: f32) -> bool {
    (a - b).abs() <= 1e-5 * scale.max(1.0)
}

fn paths() -> Vec<Isa> {
    let p = Isa::available();
    assert!(p.contains(&Isa::Portable));
    p
}

#[test]
fn every_path_agrees_with_portable_on_odd_shapes() {
    for isa in paths() {
        for d in [1usize, 7, 15, 16, 17, 37, 64, 100, 384, 385] {
            for nrows in [1usize, 5, 8, 9, 13, 64, 257] {
                let m = data(nrows * d, d as u64 + 1);
                let qs = data(67 * d, 99);
                let scale = (d as f32).sqrt() * 4.0;
                let (mut want, mut got) = (vec![0f32; nrows], vec![0f32; nrows]);
                simd::dots_rows_on(Isa::Portable, &m, d, &qs[..d], &mut want);
                simd::dots_rows_on(isa, &m, d, &qs[..d], &mut got);
                for i in 0..nrows {
                    assert!(near(got[i], want[i], scale), "{isa:?} d={d} row {i}: {} {}", got[i], want[i]);
                    let one = simd::dot_on(isa, &m[i * d..(i + 1) * d], &qs[..d]);
                    assert!(near(one, want[i], scale), "{isa:?} dot d={d}");
                }
                for nq in [1usize, 3, 16, 17, 67] {
                    let (mut want, mut got) = (vec![0f32; nq * nrows], vec![0f32; nq * nrows]);
                    simd::dots_rows_multi_on(Isa::Portable, &m, d, &qs[..nq * d], nq, &mut want);
                    simd::dots_rows_multi_on(isa, &m, d, &qs[..nq * d], nq, &mut got);
                    for (i, (g, w)) in got.iter().zip(&want).enumerate() {
                        assert!(near(*g, *w, scale), "{isa:?} multi d={d} nq={nq} at {i}: {g} {w}");
                    }
                }
            }
        }
        let a = data(100_003, 5);
        let want: f64 = a.iter().map(|&v| v as f64).sum();
        assert!((simd::sum_on(isa, &a) - want).abs() < 1e-2, "{isa:?} sum");
    }
}

#[test]
fn every_path_scores_a_row_the_same_wherever_it_sits() {
    let d = 37;
    let n = ROW_BLOCK + 13;
    let m = data(n * d, 11);
    let mut rev = Vec::new();
    for r in m.chunks(d).rev() {
        rev.extend_from_slice(r);
    }
    let qs = data(70 * d, 4);
    for isa in paths() {
        let (mut a, mut b) = (vec![0f32; n], vec![0f32; n]);
        simd::dots_rows_on(isa, &m, d, &qs[..d], &mut a);
        simd::dots_rows_on(isa, &rev, d, &qs[..d], &mut b);
        b.reverse();
        assert_eq!(a, b, "{isa:?}");
        // A row alone gives the bits it gets inside a block.
        let mut one = [0f32];
        simd::dots_rows_on(isa, &m[5 * d..6 * d], d, &qs[..d], &mut one);
        assert_eq!(one[0], a[5], "{isa:?}");
        let nq = 70;
        let (mut a, mut b) = (vec![0f32; nq * n], vec![0f32; nq * n]);
        simd::dots_rows_multi_on(isa, &m, d, &qs, nq, &mut a);
        simd::dots_rows_multi_on(isa, &rev, d, &qs, nq, &mut b);
        for j in 0..nq {
            b[j * n..(j + 1) * n].reverse();
        }
        assert_eq!(a, b, "{isa:?} multi");
        // The batch scan gives the same bits as the block kernel, for every query.
        let mut s = vec![0f32; nq * n];
        simd::scan_batch_on(isa, &m, d, &qs, |j, r0, sims| s[j * n + r0..j * n + r0 + sims.len()].copy_from_slice(sims));
        assert_eq!(s, a, "{isa:?} scan_batch");
    }
}

/// Rows above the parallel threshold, a duplicate of row 3 in a later chunk.
fn big(d: usize) -> Vec<f32> {
    let n = par::PAR_MIN_ELEMENTS / d + 2 * par::chunk_rows(d) + 45;
    let mut m = unit_rows(n, d, 31);
    let dup = m[3 * d..4 * d].to_vec();
    let at = 2 * par::chunk_rows(d) + 1;
    m[at * d..(at + 1) * d].copy_from_slice(&dup);
    m
}

fn bits(s: &Scan) -> (Vec<u32>, Vec<usize>, u64, usize) {
    let top = s.top.as_ref().expect("top-k wanted");
    let lse = s.lse.as_ref().expect("lse wanted");
    (top.sims.iter().map(|x| x.to_bits()).collect(), top.rows.clone(), lse.value().to_bits(), lse.rows())
}

#[test]
fn every_path_is_deterministic_across_plans_and_runs() {
    let d = 48;
    let m = big(d);
    let n = m.len() / d;
    assert!(par::row_chunks(n, d).len() >= 3);
    let mut qs = m[3 * d..4 * d].to_vec();
    qs.extend(unit_rows(20, d, 32));
    let w = Want { k: Some(10), kappa: Some(30.0), check: true };
    let reference: Vec<Scan> = scan_queries_on(Isa::Portable, &m, d, &qs, w, Plan::Serial).unwrap();
    for isa in paths() {
        let serial = scan_queries_on(isa, &m, d, &qs, w, Plan::Serial).unwrap();
        for _ in 0..3 {
            for plan in [Plan::Chunked, Plan::Auto, Plan::Serial] {
                let again = scan_queries_on(isa, &m, d, &qs, w, plan).unwrap();
                for (a, b) in serial.iter().zip(&again) {
                    let (x, y) = (bits(a), bits(b));
                    assert_eq!((&x.0, &x.1, x.3), (&y.0, &y.1, y.3), "{isa:?} {plan:?} top-k");
                    // Chunks fold the per-block sums in another f64 order only.
                    let (u, v) = (f64::from_bits(x.2), f64::from_bits(y.2));
                    assert!(u == v || (u - v).abs() <= 1e-12 * u.abs(), "{isa:?} {plan:?}: {u} {v}");
                }
            }
        }
        for (j, q) in qs.chunks(d).enumerate() {
            let one = bits(&scan_query_on(isa, &m, d, q, w, Plan::Serial).unwrap());
            let chunked = bits(&scan_query_on(isa, &m, d, q, w, Plan::Chunked).unwrap());
            assert_eq!((&one.0, &one.1), (&chunked.0, &chunked.1), "{isa:?} query {j}");
            let (r, s) = (bits(&reference[j]), bits(&serial[j]));
            // Across paths: the same nearest rows, cosines within rounding.
            assert_eq!(r.1[..3], s.1[..3], "{isa:?} query {j}");
            for (a, b) in r.0.iter().zip(&s.0) {
                assert!(near(f32::from_bits(*a), f32::from_bits(*b), 1.0), "{isa:?} query {j}");
            }
            let (a, b) = (f64::from_bits(r.2), f64::from_bits(s.2));
            assert!((a - b).abs() <= 1e-4, "{isa:?} lse {a} {b}");
        }
        // The duplicate of row 3 ties with it at the top, the lower row first.
        let top = &serial[0].top.as_ref().unwrap().rows;
        assert_eq!(top[..2], [3, 2 * par::chunk_rows(d) + 1], "{isa:?}");
    }
}

/// The paths whose batch top-k runs fused in the GEMM micro-kernel.
fn fused_paths() -> Vec<Isa> {
    paths().into_iter().filter(|i| matches!(i, Isa::Avx512 | Isa::Avx2)).collect()
}

/// The lists `TopK::push_block` builds from a path's unfused block cosines.
fn unfused_topk(isa: Isa, m: &[f32], d: usize, qs: &[f32], kk: usize) -> Vec<TopK> {
    let (n, nq) = (m.len() / d, qs.len() / d);
    let mut want: Vec<TopK> = (0..nq).map(|_| TopK::new(kk, n)).collect();
    simd::scan_batch_on(isa, m, d, qs, |j, r0, s| want[j].push_block(r0, s));
    want
}

fn assert_same_lists(fused: &[Scan], want: &[TopK], what: &str) {
    assert_eq!(fused.len(), want.len());
    for (j, (f, u)) in fused.iter().zip(want).enumerate() {
        let f = f.top.as_ref().unwrap();
        assert_eq!(f.rows, u.rows, "{what} query {j}");
        assert_eq!(f.sims.iter().map(|x| x.to_bits()).collect::<Vec<_>>(), u.sims.iter().map(|x| x.to_bits()).collect::<Vec<_>>(), "{what} query {j}");
    }
}

#[test]
fn fused_batch_top_k_equals_the_unfused_scan_bit_for_bit() {
    // The GEMM paths fold top-k into the micro-kernel; their lists must be
    // exactly those push_block builds from the same path's block cosines.
    let d = 37;
    let n = 3 * ROW_BLOCK + 29;
    let mut m = unit_rows(n, d, 41);
    let dup = m[7 * d..8 * d].to_vec();
    m[(ROW_BLOCK + 3) * d..(ROW_BLOCK + 4) * d].copy_from_slice(&dup);
    for isa in fused_paths() {
        for nq in [1usize, 8, 16, 17, 70] {
            let mut qs = m[7 * d..8 * d].to_vec();
            qs.extend(unit_rows(nq - 1, d, 42));
            for kk in [1usize, 10, 1000] {
                let w = Want { k: Some(kk), kappa: None, check: true };
                let fused = scan_queries_on(isa, &m, d, &qs, w, Plan::Serial).unwrap();
                assert_same_lists(&fused, &unfused_topk(isa, &m, d, &qs, kk), &format!("{isa:?} nq={nq} k={kk}"));
                assert_eq!(fused[0].top.as_ref().unwrap().rows[..2.min(kk)], [7, ROW_BLOCK + 3][..2.min(kk)]);
            }
        }
    }
    // A bad row is reported as the unfused scans report it.
    let mut bad = m.clone();
    bad[(2 * ROW_BLOCK + 5) * d + 3] = f32::NAN;
    bad[(2 * ROW_BLOCK + 9) * d] = f32::INFINITY;
    let qs = unit_rows(20, d, 43);
    let w = Want { k: Some(5), kappa: None, check: true };
    let msg = |isa| match scan_queries_on(isa, &bad, d, &qs, w, Plan::Serial) {
        Err(e) => e.to_string(),
        Ok(_) => panic!("{isa:?} accepted a NaN row"),
    };
    let want = msg(Isa::Portable);
    assert!(want.contains(&format!("matrix row {} ", 2 * ROW_BLOCK + 5)), "{want}");
    for isa in fused_paths() {
        assert_eq!(msg(isa).split(" (its").next(), want.split(" (its").next(), "{isa:?}");
        // Without the check (rows validated on insertion) the scan still completes.
        let w = Want { k: Some(5), kappa: None, check: false };
        assert!(scan_queries_on(isa, &bad, d, &qs, w, Plan::Serial).is_ok(), "{isa:?}");
    }
}

/// Every plan's fused batch lists are the unfused ones (repeated plans: the pool's helpers may
/// take other shares each time), and query 0's first rows are `first` (ties in row order).
fn every_plan_gives_the_unfused_lists(isa: Isa, m: &[f32], d: usize, qs: &[f32], kk: usize, first: &[usize]) {
    let w = Want { k: Some(kk), kappa: None, check: true };
    let want = unfused_topk(isa, m, d, qs, kk);
    for plan in [Plan::Serial, Plan::Chunked, Plan::Auto, Plan::Chunked] {
        let got = scan_queries_on(isa, m, d, qs, w, plan).unwrap();
        assert_same_lists(&got, &want, &format!("{isa:?} {plan:?} nq={} k={kk}", qs.len() / d));
    }
    let n = kk.min(first.len());
    assert_eq!(want[0].rows[..n], first[..n], "{isa:?} k={kk}");
}

#[test]
fn fused_batch_top_k_is_the_same_in_every_chunking() {
    // Rows over several batch chunks, exact duplicates of row 3 at chunk
    // edges so that ties straddle them: every plan merges to the serial
    // lists, which are the unfused ones. The matrix is past the size whose batches are shared
    // by query blocks, so the rows are split.
    let (n, d) = (20_000, 64);
    assert!(!par::split_by_queries(Plan::Chunked, n, d, 70, 5));
    let chunks = par::batch_chunks(n, d);
    assert!(chunks.len() >= 3);
    let (c1, c2) = (chunks[1].start, chunks[2].start);
    let mut m = unit_rows(n, d, 44);
    let dup = m[3 * d..4 * d].to_vec();
    for r in [c1 - 1, c1, c2 + 7] {
        m[r * d..(r + 1) * d].copy_from_slice(&dup);
    }
    let mut qs = dup.clone();
    qs.extend(unit_rows(69, d, 45));
    for isa in fused_paths() {
        for kk in [1usize, 4, 10] {
            every_plan_gives_the_unfused_lists(isa, &m, d, &qs, kk, &[3, c1 - 1, c1, c2 + 7]);
        }
    }
}

#[test]
fn a_batch_shared_by_query_blocks_is_the_serial_scan_bit_for_bit() {
    // A small matrix: its batch is shared by query blocks, each list seeing every row in order,
    // with no merge. Ties straddle the row blocks; a NaN row is reported as the serial scan
    // reports it, whichever block meets it first.
    let (n, d) = (3 * ROW_BLOCK + 29, 40);
    let mut m = unit_rows(n, d, 46);
    let dup = m[5 * d..6 * d].to_vec();
    for r in [ROW_BLOCK - 1, ROW_BLOCK, 2 * ROW_BLOCK + 3] {
        m[r * d..(r + 1) * d].copy_from_slice(&dup);
    }
    for isa in fused_paths() {
        for nq in [70usize, 130] {
            let mut qs = dup.clone();
            qs.extend(unit_rows(nq - 1, d, 47));
            for kk in [1usize, 4, 10, 1000] {
                every_plan_gives_the_unfused_lists(isa, &m, d, &qs, kk, &[5, ROW_BLOCK - 1, ROW_BLOCK, 2 * ROW_BLOCK + 3]);
            }
        }
        let mut bad = m.clone();
        bad[(2 * ROW_BLOCK + 7) * d + 1] = f32::NAN;
        bad[(ROW_BLOCK + 2) * d] = f32::INFINITY;
        let qs = unit_rows(70, d, 48);
        let w = Want { k: Some(5), kappa: None, check: true };
        let msg = |plan| scan_queries_on(isa, &bad, d, &qs, w, plan).err().map(|e| e.to_string());
        let serial = msg(Plan::Serial).expect("a bad row is refused");
        assert!(serial.contains(&format!("matrix row {} ", ROW_BLOCK + 2)), "{serial}");
        assert_eq!(msg(Plan::Chunked).as_deref(), Some(serial.as_str()), "{isa:?}");
        let w = Want { k: Some(5), kappa: None, check: false };
        assert!(scan_queries_on(isa, &bad, d, &qs, w, Plan::Chunked).is_ok(), "{isa:?}");
    }
    assert!(par::split_by_queries(Plan::Chunked, n, d, 70, 5));
    assert!(!par::split_by_queries(Plan::Serial, n, d, 70, 5));
    assert!(!par::split_by_queries(Plan::Chunked, n, d, 16, 1), "one block has nothing to share");
}

#[test]
fn prefetching_far_scans_changes_no_bit() {
    let d = 384;
    let n = 2 * ROW_BLOCK + 11;
    let m = data(n * d, 51);
    let q = data(d, 52);
    for isa in paths() {
        let (mut near, mut far) = (vec![0f32; n], vec![0f32; n]);
        simd::scan_part_on(isa, &m, d, &q, m.len(), |r0, s| near[r0..r0 + s.len()].copy_from_slice(s));
        simd::scan_part_on(isa, &m, d, &q, usize::MAX / 8, |r0, s| far[r0..r0 + s.len()].copy_from_slice(s));
        assert_eq!(near, far, "{isa:?}");
        let mut one = vec![0f32; n];
        simd::dots_rows_on(isa, &m, d, &q, &mut one);
        assert_eq!(near, one, "{isa:?}");
    }
}

/// The workload of scripts/callgrind-kernels.sh (instruction counts per
/// kernel under valgrind, which runs the AVX2 and portable paths only):
/// `MEMSIEVE_KERNEL` = none (data only, subtracted), scan, batch or read.
#[test]
#[ignore]
fn callgrind_workload() {
    let (n, d) = (10_000, 384);
    let m = unit_rows(n, d, 61);
    let qs = unit_rows(64, d, 62);
    let isa = simd::isa();
    let w = Want { k: Some(10), kappa: None, check: true };
    match std::env::var("MEMSIEVE_KERNEL").as_deref() {
        Ok("scan") => drop(std::hint::black_box(scan_query_on(isa, &m, d, &qs[..d], w, Plan::Serial))),
        Ok("batch") => drop(std::hint::black_box(scan_queries_on(isa, &m, d, &qs, w, Plan::Serial))),
        Ok("read") => drop(std::hint::black_box(simd::sum_on(isa, &m))),
        _ => drop(std::hint::black_box((m, qs))),
    }
}

fn top_bits(t: &TopK) -> (Vec<usize>, Vec<u32>) {
    (t.rows.clone(), t.sims.iter().map(|s| s.to_bits()).collect())
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig {
        cases: 12, failure_persistence: None, ..proptest::prelude::ProptestConfig::default()
    })]

    /// A chunked scan equals the serial one on every path: the same top-k rows
    /// and cosine bits, the log-sum-exp to the order of its last f64 folds. At
    /// these widths a chunk is one 256-row block, so a scan has up to five.
    #[test]
    fn a_chunked_scan_equals_the_serial_one(
        n in 0usize..1200,
        d in 1000usize..1030,
        k in 1usize..80,
        seed in proptest::prelude::any::<u64>(),
    ) {
        let m = unit_rows(n, d, seed);
        let qs = unit_rows(3, d, seed ^ 1);
        let q = &qs[..d];
        for isa in Isa::available() {
            let w = Want { k: Some(k), kappa: Some(20.0), check: true };
            let serial = scan_query_on(isa, &m, d, q, w, Plan::Serial).unwrap();
            let chunked = scan_query_on(isa, &m, d, q, w, Plan::Chunked).unwrap();
            proptest::prop_assert_eq!(top_bits(serial.top.as_ref().unwrap()), top_bits(chunked.top.as_ref().unwrap()));
            let (a, b) = (serial.lse.unwrap(), chunked.lse.unwrap());
            proptest::prop_assert_eq!(a.rows(), b.rows());
            proptest::prop_assert!(a.value() == b.value() || (a.value() - b.value()).abs() <= 1e-12 * a.value().abs(),
                "{isa:?}: lse {} vs {}", a.value(), b.value());
            // A top-k batch (the fused micro-kernels on x86-64) too.
            let w = Want { k: Some(k), kappa: None, check: true };
            let serial = scan_queries_on(isa, &m, d, &qs, w, Plan::Serial).unwrap();
            let chunked = scan_queries_on(isa, &m, d, &qs, w, Plan::Chunked).unwrap();
            for (a, b) in serial.iter().zip(&chunked) {
                proptest::prop_assert_eq!(top_bits(a.top.as_ref().unwrap()), top_bits(b.top.as_ref().unwrap()));
            }
        }
    }
}
