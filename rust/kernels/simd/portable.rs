//! The portable kernels: plain Rust that LLVM vectorizes for the baseline
//! target. Sixteen independent f32 accumulators let it vectorize a reduction
//! without reassociating it (stable Rust has no fast math).

#[inline(always)]
pub fn dot(a: &[f32], b: &[f32]) -> f32 {
    let n = a.len().min(b.len());
    let (a, b) = (&a[..n], &b[..n]);
    let mut acc = [0f32; 16];
    let mut ca = a.chunks_exact(16);
    let mut cb = b.chunks_exact(16);
    for (x, y) in (&mut ca).zip(&mut cb) {
        for l in 0..16 {
            acc[l] += x[l] * y[l];
        }
    }
    let mut tail = 0f32;
    for (x, y) in ca.remainder().iter().zip(cb.remainder()) {
        tail += x * y;
    }
    // Pairwise fold keeps the rounding error of the reduction small.
    let mut w = 8;
    while w > 0 {
        for l in 0..w {
            acc[l] += acc[l + w];
        }
        w /= 2;
    }
    acc[0] + tail
}

pub fn dots_rows(rows: &[f32], d: usize, q: &[f32], out: &mut [f32]) {
    for (r, o) in rows.chunks_exact(d).zip(out.iter_mut()) {
        *o = dot(r, q);
    }
}

pub fn dots_rows_multi(rows: &[f32], d: usize, qs: &[f32], nq: usize, out: &mut [f32]) {
    let nrows = rows.len() / d;
    for (i, r) in rows.chunks_exact(d).enumerate() {
        for j in 0..nq {
            out[j * nrows + i] = dot(r, &qs[j * d..(j + 1) * d]);
        }
    }
}

fn sum_block(a: &[f32]) -> f64 {
    let mut acc = [0f32; 16];
    let mut c = a.chunks_exact(16);
    for x in &mut c {
        for l in 0..16 {
            acc[l] += x[l];
        }
    }
    let mut s: f64 = c.remainder().iter().map(|&v| v as f64).sum();
    for v in acc {
        s += v as f64;
    }
    s
}

pub fn sum(a: &[f32]) -> f64 {
    a.chunks(65536).map(sum_block).sum()
}
