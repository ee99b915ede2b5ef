//! Dimension reduction: a seeded Gaussian random projection and PCA.

use crate::linalg::eigen::symmetric_eigen;
use crate::error::{bail, Result};
use crate::linalg::rng::Rng;
use crate::kernels::simd;

/// Normalize each row of width `w` in place; all-zero rows stay zero.
pub fn normalize_rows(x: &mut [f32], w: usize) {
    for row in x.chunks_exact_mut(w) {
        let n = row.iter().map(|&v| v as f64 * v as f64).sum::<f64>().sqrt();
        if n > 0.0 {
            let inv = (1.0 / n) as f32;
            row.iter_mut().for_each(|v| *v *= inv);
        }
    }
}

/// The (out_dim, d) Gaussian matrix with entries N(0, 1/out_dim) drawn from `seed`.
pub fn projection_matrix(d: usize, out_dim: usize, seed: u64) -> Vec<f32> {
    let mut rng = Rng::new(seed);
    let scale = 1.0 / (out_dim as f64).sqrt();
    (0..out_dim * d).map(|_| (rng.normal() * scale) as f32).collect()
}

/// Project (n, d) rows to (n, out_dim) with a seeded Gaussian matrix.
pub fn random_projection(x: &[f32], d: usize, out_dim: usize, seed: u64, normalize: bool) -> Result<Vec<f32>> {
    if out_dim == 0 {
        bail!(Config: "out_dim must be >= 1, got 0; pass e.g. out_dim=64");
    }
    let r = projection_matrix(d, out_dim, seed);
    let n = x.len() / d;
    let mut out = vec![0f32; n * out_dim];
    for (row, o) in x.chunks_exact(d).zip(out.chunks_exact_mut(out_dim)) {
        simd::dots_rows(&r, d, row, o);
    }
    if normalize {
        normalize_rows(&mut out, out_dim);
    }
    Ok(out)
}

/// Principal components fitted by an exact eigen-decomposition of the covariance.
#[derive(Clone, Debug)]
pub struct Pca {
    pub n_components: usize,
    pub dim: usize,
    /// (n_components, dim), unit rows, sign fixed so the largest entry is positive.
    pub components: Vec<f32>,
    /// The same components in f64, used by the transform so that a direction
    /// without spread projects to rounding noise (~1e-16), not f32 noise.
    components64: Vec<f64>,
    pub mean: Vec<f32>,
    mean64: Vec<f64>,
    /// Variance along each component, descending.
    pub variances: Vec<f64>,
}

impl Pca {
    pub fn fit(x: &[f32], d: usize, n_components: usize) -> Result<Pca> {
        let n = x.len().checked_div(d).unwrap_or(0);
        if n_components == 0 || n_components > n.min(d) {
            bail!(
                Shape: "n_components={n_components} must be in [1, min(n, d)] = [1, {}] for {n} rows of width {d}; fit on more rows or ask for fewer components", n.min(d)
            );
        }
        let mut mean = vec![0f64; d];
        for row in x.chunks_exact(d) {
            for (m, &v) in mean.iter_mut().zip(row) {
                *m += v as f64;
            }
        }
        mean.iter_mut().for_each(|m| *m /= n as f64);
        if mean.iter().any(|m| !m.is_finite()) {
            bail!(InvalidVector: "rows hold NaN or inf; clean them with np.isfinite before PCA");
        }
        // Upper triangle of the scatter matrix; each inner loop is an axpy, which vectorizes.
        let mut c = vec![0f64; d * d];
        let mut xc = vec![0f64; d];
        for row in x.chunks_exact(d) {
            for ((o, &v), m) in xc.iter_mut().zip(row).zip(&mean) {
                *o = v as f64 - m;
            }
            for i in 0..d {
                let xi = xc[i];
                let ci = &mut c[i * d + i..(i + 1) * d];
                for (cv, &xj) in ci.iter_mut().zip(&xc[i..]) {
                    *cv += xi * xj;
                }
            }
        }
        let denom = (n.max(2) - 1) as f64;
        for i in 0..d {
            for j in i..d {
                let v = c[i * d + j] / denom;
                c[i * d + j] = v;
                c[j * d + i] = v;
            }
        }
        let (vals, vecs) = symmetric_eigen(&c, d);
        let mut components64 = Vec::with_capacity(n_components * d);
        for t in 0..n_components {
            let v = &vecs[t * d..(t + 1) * d];
            let big = v.iter().fold(0f64, |a, &b| if b.abs() > a.abs() { b } else { a });
            let sign = if big < 0.0 { -1.0 } else { 1.0 };
            components64.extend(v.iter().map(|&x| x * sign));
        }
        Ok(Pca {
            n_components,
            dim: d,
            components: components64.iter().map(|&x| x as f32).collect(),
            components64,
            mean: mean.iter().map(|&m| m as f32).collect(),
            mean64: mean,
            variances: vals[..n_components].to_vec(),
        })
    }

    /// (n, dim) -> (n, n_components) in f64, centred on the fitted mean.
    pub fn transform64(&self, x: &[f32]) -> Vec<f64> {
        let (d, k) = (self.dim, self.n_components);
        let n = x.len() / d;
        let mut out = vec![0f64; n * k];
        let mut xc = vec![0f64; d];
        for (row, o) in x.chunks_exact(d).zip(out.chunks_exact_mut(k)) {
            for ((t, &v), &m) in xc.iter_mut().zip(row).zip(&self.mean64) {
                *t = v as f64 - m;
            }
            for (j, oj) in o.iter_mut().enumerate() {
                let comp = &self.components64[j * d..(j + 1) * d];
                *oj = comp.iter().zip(&xc).map(|(&a, &b)| a * b).sum();
            }
        }
        out
    }

    pub fn transform(&self, x: &[f32], normalize: bool) -> Vec<f32> {
        let mut out: Vec<f32> = self.transform64(x).into_iter().map(|v| v as f32).collect();
        if normalize {
            normalize_rows(&mut out, self.n_components);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::CoreError;

    #[test]
    fn projection_is_seeded_and_linear() {
        let d = 10;
        let x: Vec<f32> = (0..3 * d).map(|i| (i as f32 * 0.37).sin()).collect();
        let a = random_projection(&x, d, 4, 1, false).unwrap();
        assert_eq!(a, random_projection(&x, d, 4, 1, false).unwrap());
        assert_ne!(a, random_projection(&x, d, 4, 2, false).unwrap());
        let r = projection_matrix(d, 4, 1);
        for i in 0..3 {
            for j in 0..4 {
                let want: f32 = (0..d).map(|k| x[i * d + k] * r[j * d + k]).sum();
                assert!((a[i * 4 + j] - want).abs() < 1e-5);
            }
        }
        let b = random_projection(&x, d, 4, 1, true).unwrap();
        for row in b.chunks(4) {
            assert!((row.iter().map(|v| v * v).sum::<f32>() - 1.0).abs() < 1e-5);
        }
    }

    #[test]
    fn pca_finds_the_dominant_axis() {
        let d = 5;
        let mut rng = Rng::new(3);
        let mut x = Vec::new();
        for _ in 0..500 {
            let t = rng.normal() * 10.0;
            for j in 0..d {
                x.push((if j == 2 { t } else { rng.normal() * 0.1 }) as f32);
            }
        }
        let p = Pca::fit(&x, d, 2).unwrap();
        assert!(p.components[2] > 0.999);
        assert!(p.variances[0] > 50.0 && p.variances[1] < 0.1);
        assert!(matches!(Pca::fit(&x[..2 * d], d, 3), Err(CoreError::Shape(_))));
    }
}
