//! Routing a novelty score to ADD, BAND or NOOP.

use crate::error::{bail, ensure, Result};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Route {
    Add,
    Band,
    Noop,
}

impl Route {
    pub fn as_str(self) -> &'static str {
        match self {
            Route::Add => "ADD",
            Route::Band => "BAND",
            Route::Noop => "NOOP",
        }
    }
}

/// novelty >= tau + delta -> ADD; tau <= novelty < tau + delta -> BAND; else NOOP.
/// novelty may be +inf (an empty scope), which is always ADD.
pub fn route(novelty: f64, tau: f64, delta: f64) -> Result<Route> {
    if novelty.is_nan() {
        bail!(Config: "novelty is NaN; score the candidate against a finite, normalized scope");
    }
    if !tau.is_finite() {
        bail!(Config: "tau must be finite, got {tau}; use ThresholdState.tau or a fixed value such as 0.2");
    }
    ensure!(
        delta.is_finite() && delta >= 0.0,
        Config: "delta must be finite and >= 0, got {delta}; use 0.0 for no band"
    );
    Ok(if novelty >= tau + delta {
        Route::Add
    } else if novelty >= tau {
        Route::Band
    } else {
        Route::Noop
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn regions() {
        assert_eq!(route(0.5, 0.2, 0.1).unwrap(), Route::Add);
        assert_eq!(route(0.3 + 1e-12, 0.2, 0.1).unwrap(), Route::Add);
        assert_eq!(route(0.25, 0.2, 0.1).unwrap(), Route::Band);
        assert_eq!(route(0.2, 0.2, 0.1).unwrap(), Route::Band);
        assert_eq!(route(0.1, 0.2, 0.1).unwrap(), Route::Noop);
        assert_eq!(route(0.2, 0.2, 0.0).unwrap(), Route::Add);
        assert_eq!(route(f64::INFINITY, 0.2, 0.0).unwrap(), Route::Add);
        assert!(route(f64::NAN, 0.2, 0.0).is_err());
        assert!(route(0.1, 0.2, -0.1).is_err());
    }
}
