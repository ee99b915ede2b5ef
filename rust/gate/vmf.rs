//! Sampling from the von Mises-Fisher distribution with Wood's (1994)
//! rejection algorithm, for tests and benchmarks of the kappa estimators.

use crate::error::{bail, Result};
use crate::linalg::rng::Rng;

/// The largest kappa sampled. Far above it, Wood's x0 = (1 - b) / (1 + b)
/// rounds to 1 in f64, every proposal is rejected and the loop never ends;
/// already at 1e12 a sample is mu to float32 precision.
pub const MAX_KAPPA: f64 = 1e12;

/// Draw `n` unit vectors from vMF(mu, kappa); `mu` must have unit norm and
/// length d >= 2. Returns an (n, d) row-major matrix.
pub fn sample(mu: &[f32], kappa: f64, n: usize, seed: u64) -> Result<Vec<f32>> {
    let d = mu.len();
    if d < 2 {
        bail!(Shape: "vMF sampling needs dimension >= 2, got {d}; pass a longer mean direction");
    }
    if !(0.0..=MAX_KAPPA).contains(&kappa) {
        bail!(Config: "kappa must lie in [0, 1e12] for sampling, got {kappa}; pass e.g. kappa=50.0");
    }
    let mu64: Vec<f64> = mu.iter().map(|&v| v as f64).collect();
    let norm = mu64.iter().map(|v| v * v).sum::<f64>().sqrt();
    let mu64: Vec<f64> = mu64.iter().map(|v| v / norm).collect();
    let dm1 = (d - 1) as f64;
    // b written in the cancellation-free form (d-1) / (2k + sqrt(4k^2 + (d-1)^2)).
    let b = dm1 / (2.0 * kappa + (4.0 * kappa * kappa + dm1 * dm1).sqrt());
    let x0 = (1.0 - b) / (1.0 + b);
    let c = kappa * x0 + dm1 * (1.0 - x0 * x0).ln();
    let mut rng = Rng::new(seed);
    let mut out = Vec::with_capacity(n * d);
    let mut v = vec![0f64; d];
    for _ in 0..n {
        let w = loop {
            let z = rng.beta(dm1 / 2.0, dm1 / 2.0);
            let w = (1.0 - (1.0 + b) * z) / (1.0 - (1.0 - b) * z);
            let u = rng.uniform();
            if kappa * w + dm1 * (1.0 - x0 * w).ln() - c >= u.ln() {
                break w;
            }
        };
        // A uniform direction orthogonal to mu: a Gaussian with its mu part removed.
        let vn = loop {
            for x in v.iter_mut() {
                *x = rng.normal();
            }
            let p: f64 = v.iter().zip(&mu64).map(|(a, m)| a * m).sum();
            for (x, m) in v.iter_mut().zip(&mu64) {
                *x -= p * m;
            }
            let vn = v.iter().map(|x| x * x).sum::<f64>().sqrt();
            if vn > 1e-12 {
                break vn;
            }
        };
        let r = (1.0 - w * w).max(0.0).sqrt();
        let mut row: Vec<f64> = v.iter().zip(&mu64).map(|(x, m)| w * m + r * x / vn).collect();
        let rn = row.iter().map(|x| x * x).sum::<f64>().sqrt();
        for x in row.iter_mut() {
            *x /= rn;
        }
        out.extend(row.iter().map(|&x| x as f32));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::CoreError;

    #[test]
    fn samples_are_unit_and_concentrate_with_kappa() {
        let d = 20;
        let mut mu = vec![0f32; d];
        mu[3] = 1.0;
        let mean_cos = |k: f64| {
            let s = sample(&mu, k, 2000, 7).unwrap();
            let mut t = 0.0;
            for r in s.chunks(d) {
                let n: f32 = r.iter().map(|x| x * x).sum();
                assert!((n - 1.0).abs() < 1e-5);
                t += r[3] as f64;
            }
            t / 2000.0
        };
        let (lo, hi) = (mean_cos(5.0), mean_cos(200.0));
        assert!(lo < hi && hi > 0.9, "{lo} {hi}");
        assert_eq!(sample(&mu, 5.0, 3, 1).unwrap(), sample(&mu, 5.0, 3, 1).unwrap());
    }

    #[test]
    fn rejects_bad_input() {
        assert!(matches!(sample(&[1.0], 1.0, 1, 0), Err(CoreError::Shape(_))));
        assert!(matches!(sample(&[1.0, 0.0], f64::NAN, 1, 0), Err(CoreError::Config(_))));
        // kappa = 1e20 used to loop forever (x0 == 1, every proposal rejected).
        for kappa in [1e20, f64::INFINITY, -1.0] {
            assert!(matches!(sample(&[1.0, 0.0], kappa, 1, 0), Err(CoreError::Config(_))), "{kappa}");
        }
        let s = sample(&[0.6, 0.8], MAX_KAPPA, 2, 0).unwrap();
        assert!((s[0] - 0.6).abs() < 1e-6 && (s[1] - 0.8).abs() < 1e-6, "{s:?}");
    }
}
