//! Checks on the vectors the gate accepts: finite, non-zero, unit norm.

use crate::error::{bail, Result};

/// How far from 1 a norm may be before a vector counts as not normalized.
pub const NORM_TOLERANCE: f64 = 1e-3;

/// Check that `v` is finite with unit L2 norm; `what` names it in the message.
pub fn check_unit(v: &[f32], what: &str) -> Result<()> {
    let mut n2 = 0f64;
    for (i, &x) in v.iter().enumerate() {
        if !x.is_finite() {
            bail!(InvalidVector: "{what} holds {x} at index {i}; vectors must be finite, re-embed or drop it");
        }
        n2 += x as f64 * x as f64;
    }
    let n = n2.sqrt();
    if n == 0.0 {
        bail!(InvalidVector: "{what} has zero norm; a zero vector has no direction, embed non-empty text");
    }
    if (n - 1.0).abs() > NORM_TOLERANCE {
        bail!(
            InvalidVector: "{what} has norm {n:.6}, expected 1 (within {NORM_TOLERANCE}); normalize it with v / np.linalg.norm(v)"
        );
    }
    Ok(())
}

/// Check that `v` is finite and not all zero (inputs to projections, which need not be unit).
pub fn check_finite_nonzero(v: &[f32], what: &str) -> Result<()> {
    let mut any = false;
    for (i, &x) in v.iter().enumerate() {
        if !x.is_finite() {
            bail!(
                InvalidVector: "{what} holds {x} at index {i}; values must be finite, clean them with np.nan_to_num or drop the row"
            );
        }
        any |= x != 0.0;
    }
    if !any {
        bail!(InvalidVector: "{what} is all zeros; it has no direction, drop it");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::CoreError;

    #[test]
    fn checks() {
        assert!(check_unit(&[0.6, 0.8], "q").is_ok());
        assert!(matches!(check_unit(&[0.0, 0.0], "q"), Err(CoreError::InvalidVector(_))));
        assert!(matches!(check_unit(&[f32::NAN, 1.0], "q"), Err(CoreError::InvalidVector(_))));
        assert!(matches!(check_unit(&[3.0, 4.0], "q"), Err(CoreError::InvalidVector(_))));
        assert!(check_finite_nonzero(&[3.0, 4.0], "x").is_ok());
        assert!(check_finite_nonzero(&[0.0, 0.0], "x").is_err());
    }
}
