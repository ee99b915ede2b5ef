//! Integer dot products of int8 rows with an int16 query: the scan kernels of
//! the quantized copy (`quant`).
//!
//! Every path computes the same exact integer sum (no rounding, and integer
//! addition is associative), so the portable, AVX2 and AVX-512 paths return
//! bit-identical dots whatever their lane layout or row grouping. The caller
//! (`quant::QueryCode`) scales the query so that no sum can overflow an i32.
//!
//! Rows and the query are zero-padded to a multiple of `LANES`, so no kernel
//! has a tail: a padded code is 0 and adds nothing.

#[cfg(target_arch = "x86_64")]
use std::arch::x86_64::*;

use crate::kernels::isa::Isa;

/// Codes per step of the widest kernel (one 512-bit register of int16); row
/// strides are a multiple of it.
pub const LANES: usize = 32;

/// Which integer kernel runs. It follows the float path `isa::isa()` chose,
/// narrowed to the integer extensions the CPU has.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
// The x86-64 variants exist everywhere so that the enum reads the same on every target.
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
pub enum QPath {
    Portable,
    /// AVX2: sign-extend 16 codes to int16, `vpmaddwd`, `vpaddd`.
    Avx2,
    /// AVX-512BW: 32 codes per `vpmovsxbw` + `vpmaddwd` + `vpaddd`.
    Avx512Bw,
    /// AVX-512 VNNI: `vpdpwssd` fuses the multiply-add and the accumulate.
    Avx512Vnni,
}

impl QPath {
    /// The integer path of a float path (which the CPU is known to run).
    pub fn of(isa: Isa) -> QPath {
        match isa {
            #[cfg(target_arch = "x86_64")]
            Isa::Avx512 if is_x86_feature_detected!("avx512bw") => {
                if is_x86_feature_detected!("avx512vnni") {
                    QPath::Avx512Vnni
                } else {
                    QPath::Avx512Bw
                }
            }
            #[cfg(target_arch = "x86_64")]
            Isa::Avx512 | Isa::Avx2 => QPath::Avx2,
            // aarch64 and the portable path: plain Rust, which LLVM vectorizes (NEON on aarch64).
            _ => QPath::Portable,
        }
    }

    /// Every path this CPU can run, best first (the tests run each).
    #[cfg(test)]
    pub fn available() -> Vec<QPath> {
        let mut out: Vec<QPath> = Isa::available().into_iter().map(QPath::of).collect();
        #[cfg(target_arch = "x86_64")]
        if out.contains(&QPath::Avx512Vnni) {
            out.insert(1, QPath::Avx512Bw);
        }
        out.dedup();
        out
    }
}

/// `out[i] = rows[i] . q` exactly, for int8 rows of `stride` codes.
///
/// # Panics
/// Unless `stride` is a non-zero multiple of `LANES`, `q.len() == stride`,
/// `rows.len() == out.len() * stride`, and the CPU runs `path` (it must come
/// from `QPath::of` or `QPath::available`).
pub fn dots(path: QPath, rows: &[i8], stride: usize, q: &[i16], out: &mut [i32]) {
    assert!(stride > 0 && stride % LANES == 0, "stride {stride} must be a non-zero multiple of {LANES}");
    assert_eq!(q.len(), stride, "the query holds {} codes, the rows {stride}", q.len());
    assert_eq!(rows.len(), out.len() * stride, "out must hold one value per row");
    match path {
        #[cfg(target_arch = "x86_64")]
        QPath::Avx512Vnni => {
            assert!(is_x86_feature_detected!("avx512vnni") && is_x86_feature_detected!("avx512bw"));
            // SAFETY: the CPU has the features; shapes were checked above.
            unsafe { dots_vnni(rows, stride, q, out) }
        }
        #[cfg(target_arch = "x86_64")]
        QPath::Avx512Bw => {
            assert!(is_x86_feature_detected!("avx512bw"));
            // SAFETY: as above.
            unsafe { dots_bw(rows, stride, q, out) }
        }
        #[cfg(target_arch = "x86_64")]
        QPath::Avx2 => {
            assert!(is_x86_feature_detected!("avx2"));
            // SAFETY: as above.
            unsafe { dots_avx2(rows, stride, q, out) }
        }
        _ => dots_portable(rows, stride, q, out),
    }
}

/// Sixteen independent i32 lanes, which LLVM turns into vector multiply-adds.
fn dots_portable(rows: &[i8], stride: usize, q: &[i16], out: &mut [i32]) {
    for (r, o) in rows.chunks_exact(stride).zip(out.iter_mut()) {
        let mut acc = [0i32; 16];
        for (rc, qc) in r.chunks_exact(16).zip(q.chunks_exact(16)) {
            for l in 0..16 {
                acc[l] += rc[l] as i32 * qc[l] as i32;
            }
        }
        *o = acc.iter().sum();
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn dots_avx2(rows: &[i8], stride: usize, q: &[i16], out: &mut [i32]) {
    let pq = q.as_ptr();
    for (i, o) in out.iter_mut().enumerate() {
        let pr = rows.as_ptr().add(i * stride);
        let (mut a0, mut a1) = (_mm256_setzero_si256(), _mm256_setzero_si256());
        let mut j = 0;
        while j < stride {
            let r0 = _mm256_cvtepi8_epi16(_mm_loadu_si128(pr.add(j) as *const __m128i));
            let r1 = _mm256_cvtepi8_epi16(_mm_loadu_si128(pr.add(j + 16) as *const __m128i));
            let q0 = _mm256_loadu_si256(pq.add(j) as *const __m256i);
            let q1 = _mm256_loadu_si256(pq.add(j + 16) as *const __m256i);
            a0 = _mm256_add_epi32(a0, _mm256_madd_epi16(r0, q0));
            a1 = _mm256_add_epi32(a1, _mm256_madd_epi16(r1, q1));
            j += LANES;
        }
        let s = _mm256_add_epi32(a0, a1);
        let h = _mm_add_epi32(_mm256_castsi256_si128(s), _mm256_extracti128_si256::<1>(s));
        let h = _mm_add_epi32(h, _mm_shuffle_epi32::<0b01_00_11_10>(h));
        let h = _mm_add_epi32(h, _mm_shuffle_epi32::<0b10_11_00_01>(h));
        *o = _mm_cvtsi128_si32(h);
    }
}

/// The AVX-512 row loop, with `$madd(acc, rows, q)` the accumulate step.
/// One row at a time: the scan is bound by memory bandwidth, and measured at
/// 100k rows of d = 384 (one thread), interleaving 2 or 4 rows per query load
/// was 1.5x and 1.7x slower than one sequential stream (1.0 ms, the float32
/// scan's bytes per second on a quarter of the bytes).
#[cfg(target_arch = "x86_64")]
macro_rules! avx512_rows {
    ($rows:ident, $stride:ident, $q:ident, $out:ident, $madd:expr) => {{
        let pq = $q.as_ptr();
        for (i, o) in $out.iter_mut().enumerate() {
            let pr = $rows.as_ptr().add(i * $stride);
            let mut acc = _mm512_setzero_si512();
            let mut j = 0;
            while j < $stride {
                let qv = _mm512_loadu_si512(pq.add(j) as *const _);
                let rv = _mm512_cvtepi8_epi16(_mm256_loadu_si256(pr.add(j) as *const __m256i));
                acc = $madd(acc, rv, qv);
                j += LANES;
            }
            *o = _mm512_reduce_add_epi32(acc);
        }
    }};
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx512vnni")]
unsafe fn dots_vnni(rows: &[i8], stride: usize, q: &[i16], out: &mut [i32]) {
    avx512_rows!(rows, stride, q, out, |a, r, q| _mm512_dpwssd_epi32(a, r, q))
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw")]
unsafe fn dots_bw(rows: &[i8], stride: usize, q: &[i16], out: &mut [i32]) {
    avx512_rows!(rows, stride, q, out, |a, r, q| _mm512_add_epi32(a, _mm512_madd_epi16(r, q)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn codes(n: usize, seed: u64) -> Vec<i8> {
        let mut r = crate::linalg::rng::Rng::new(seed);
        (0..n).map(|_| ((r.normal() * 60.0).round().clamp(-127.0, 127.0)) as i8).collect()
    }

    #[test]
    fn every_path_gives_the_exact_integer_dot() {
        for (n, stride) in [(1usize, 32usize), (3, 64), (4, 384), (9, 416), (257, 384)] {
            let rows = codes(n * stride, n as u64);
            let mut q: Vec<i16> = codes(stride, 77).iter().map(|&c| c as i16 * 258).collect();
            // The extremes the query scaling allows.
            q[0] = i16::MAX;
            q[stride - 1] = -i16::MAX;
            let want: Vec<i32> = rows
                .chunks(stride)
                .map(|r| r.iter().zip(&q).map(|(&a, &b)| a as i64 * b as i64).sum::<i64>() as i32)
                .collect();
            for path in QPath::available() {
                let mut out = vec![0i32; n];
                dots(path, &rows, stride, &q, &mut out);
                assert_eq!(out, want, "{path:?} n={n} stride={stride}");
            }
        }
    }

    #[test]
    fn available_paths_start_with_the_chosen_one_and_end_portable() {
        let all = QPath::available();
        assert_eq!(all[0], QPath::of(Isa::best()));
        assert_eq!(*all.last().unwrap(), QPath::Portable);
    }

    #[test]
    #[should_panic(expected = "multiple of 32")]
    fn a_stride_off_the_lanes_is_refused() {
        dots(QPath::Portable, &[0; 10], 10, &[0; 10], &mut [0; 1]);
    }
}
