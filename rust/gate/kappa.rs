//! Concentration estimates for the vMF kernel.

use crate::error::{bail, ensure, Result};

/// Value returned for R == 1 when no clip is given: a finite stand-in for +inf.
pub const UNCLIPPED_MAX: f64 = 1e6;

/// Validate an optional (lo, hi) clip range.
pub fn check_clip(clip: Option<(f64, f64)>) -> Result<()> {
    if let Some((lo, hi)) = clip {
        ensure!(
            lo.is_finite() && hi.is_finite() && lo > 0.0 && lo <= hi,
            Config: "clip must be (lo, hi) with 0 < lo <= hi, both finite, got ({lo}, {hi}); SAGE uses clip=(1e-3, 50.0)"
        );
    }
    Ok(())
}

/// Banerjee et al.'s R(d - R^2)/(1 - R^2) from the mean resultant length R.
pub fn banerjee_from_r(r: f64, d: usize, clip: Option<(f64, f64)>) -> Result<f64> {
    check_clip(clip)?;
    let r = r.clamp(0.0, 1.0);
    let r2 = r * r;
    let d = d as f64;
    let denom = 1.0 - r2;
    let raw = if denom <= 0.0 { f64::INFINITY } else { r * (d - r2) / denom };
    Ok(match clip {
        Some((lo, hi)) => raw.clamp(lo, hi),
        None => raw.min(UNCLIPPED_MAX),
    })
}

/// Banerjee's kappa over the rows of an (n, d) matrix (n >= 1).
pub fn banerjee(matrix: &[f32], d: usize, clip: Option<(f64, f64)>) -> Result<f64> {
    check_clip(clip)?;
    let n = matrix.len().checked_div(d).unwrap_or(0);
    if n == 0 {
        bail!(
            Shape: "kappa_banerjee needs at least one row, got an empty matrix; estimate kappa once the scope holds vectors"
        );
    }
    let mut sum = vec![0f64; d];
    for row in matrix.chunks_exact(d) {
        for (s, &v) in sum.iter_mut().zip(row) {
            *s += v as f64;
        }
    }
    let r = sum.iter().map(|s| s * s).sum::<f64>().sqrt() / n as f64;
    if !r.is_finite() {
        bail!(InvalidVector: "matrix holds NaN or inf; clean the rows with np.isfinite before estimating kappa");
    }
    banerjee_from_r(r, d, clip)
}

/// memsieve's kappa = min(c / (1 - m), max_kappa), m the scope's mean share
/// (1 - its mean novelty, which for dense scopes is near the typical
/// nearest-neighbour cosine): a neighbour a typical novelty further away than
/// the nearest then weighs e^-c as much.
pub fn from_spacing(mean_share: f64, c: f64, max_kappa: f64) -> Result<f64> {
    if !(-1.0..=1.0).contains(&mean_share) {
        bail!(Config: "mean_share must lie in [-1, 1], got {mean_share}; pass ThresholdState.mean_share");
    }
    ensure!(c.is_finite() && c > 0.0, Config: "c must be finite and > 0, got {c}; the default is c=4.0");
    ensure!(
        max_kappa.is_finite() && max_kappa > 0.0,
        Config: "max_kappa must be finite and > 0, got {max_kappa}; the default is max_kappa=1e4"
    );
    let gap = 1.0 - mean_share;
    if gap <= 0.0 {
        return Ok(max_kappa);
    }
    Ok((c / gap).min(max_kappa))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::CoreError;

    #[test]
    fn banerjee_formula_and_clip() {
        let k = banerjee_from_r(0.5, 10, None).unwrap();
        assert!((k - 0.5 * (10.0 - 0.25) / 0.75).abs() < 1e-12);
        assert_eq!(banerjee_from_r(1.0, 10, None).unwrap(), UNCLIPPED_MAX);
        assert_eq!(banerjee_from_r(1.0, 10, Some((1e-3, 50.0))).unwrap(), 50.0);
        assert_eq!(banerjee_from_r(0.0, 10, Some((1e-3, 50.0))).unwrap(), 1e-3);
        assert!(banerjee_from_r(0.5, 10, Some((2.0, 1.0))).is_err());
    }

    #[test]
    fn banerjee_of_identical_rows_saturates() {
        let m = [0.6f32, 0.8, 0.6, 0.8];
        assert_eq!(banerjee(&m, 2, Some((1e-3, 50.0))).unwrap(), 50.0);
        assert!(matches!(banerjee(&[], 2, None), Err(CoreError::Shape(_))));
    }

    #[test]
    fn spacing_estimator() {
        assert!((from_spacing(0.5, 4.0, 1e4).unwrap() - 8.0).abs() < 1e-12);
        assert_eq!(from_spacing(1.0, 4.0, 1e4).unwrap(), 1e4);
        assert_eq!(from_spacing(0.99999999, 4.0, 100.0).unwrap(), 100.0);
        assert!(from_spacing(f64::NAN, 4.0, 1e4).is_err());
        assert!(from_spacing(0.5, 0.0, 1e4).is_err());
    }
}
