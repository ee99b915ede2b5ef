//! Thresholds: SAGE's adaptive threshold as published, and memsieve's
//! per-scope ThresholdState, which updates in O(1) on add and on delete.
//!
//! ThresholdState keeps no defaults: its parameters come from the caller
//! (python/memsieve/config.py's GateConfig is their one source).

use crate::error::{bail, ensure, err, Result};
use crate::gate::kappa;
use crate::linalg::projection::Pca;

/// Returned by `sage_density` when the PCA bounding box has zero volume (a
/// component with no spread, e.g. fewer distinct rows than components):
/// the density is then unbounded and this finite stand-in keeps tau* at its floor.
pub const DENSITY_CAP: f64 = 1e300;

fn finite(name: &str, v: f64, fix: &str) -> Result<()> {
    if !v.is_finite() {
        bail!(Config: "{name} must be finite, got {v}; {fix}");
    }
    Ok(())
}

/// SAGE's target threshold tau0 * exp(-lam * rho) + tau_min.
pub fn sage_tau_star(rho: f64, tau0: f64, tau_min: f64, lam: f64) -> Result<f64> {
    if rho.is_nan() || rho < 0.0 {
        bail!(Config: "rho must be >= 0, got {rho}; pass sage_density(matrix)");
    }
    finite("tau0", tau0, "SAGE uses tau0=0.5")?;
    finite("tau_min", tau_min, "SAGE uses tau_min=0.05")?;
    finite("lam", lam, "SAGE uses lam=2.0")?;
    Ok(tau0 * (-lam * rho).exp() + tau_min)
}

/// alpha * prev + (1 - alpha) * tau_star; without a previous value, tau_star.
pub fn sage_ema(prev: Option<f64>, tau_star: f64, alpha: f64) -> Result<f64> {
    if !(0.0..=1.0).contains(&alpha) {
        bail!(Config: "alpha must be in [0, 1], got {alpha}; SAGE uses alpha=0.9");
    }
    finite("tau_star", tau_star, "pass sage_tau_star(rho)")?;
    match prev {
        None => Ok(tau_star),
        Some(p) => {
            finite("prev_tau", p, "pass None for the first update")?;
            Ok(alpha * p + (1.0 - alpha) * tau_star)
        }
    }
}

/// SAGE's density proxy n / V, V the volume of the bounding box of the rows
/// after PCA to min(n_components, n, d) components. Zero volume -> DENSITY_CAP.
pub fn sage_density(matrix: &[f32], d: usize, n_components: usize) -> Result<f64> {
    let n = matrix.len().checked_div(d).unwrap_or(0);
    if n == 0 {
        bail!(Shape: "sage_density needs at least one row, got 0; SAGE has no density for an empty scope");
    }
    if n_components == 0 {
        bail!(Config: "n_components must be >= 1, got 0; SAGE uses 16");
    }
    let k = n_components.min(n).min(d);
    let pca = Pca::fit(matrix, d, k)?;
    let proj = pca.transform64(matrix);
    // Sum of log ranges: the volume of 16 small ranges underflows quickly.
    let mut log_v = 0f64;
    let mut first_range = 0f64;
    for j in 0..k {
        let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
        for row in proj.chunks_exact(k) {
            lo = lo.min(row[j]);
            hi = hi.max(row[j]);
        }
        let range = hi - lo;
        if j == 0 {
            first_range = range;
        }
        // A range at rounding-noise level is a component without spread (fewer
        // rows than components): treat the box as flat rather than report noise.
        // (NaN ranges, from a degenerate fit, count as flat too.)
        if range.partial_cmp(&(1e-9 * first_range)) != Some(std::cmp::Ordering::Greater) {
            return Ok(DENSITY_CAP);
        }
        log_v += range.ln();
    }
    let rho = ((n as f64).ln() - log_v).exp();
    Ok(if rho.is_finite() { rho.min(DENSITY_CAP) } else { DENSITY_CAP })
}

/// Fixed-point scale of the share sum: integer sums make add-then-remove
/// restore the state bit for bit, which floating-point sums would not.
const FIX_SCALE: f64 = (1u64 << 40) as f64;
const MAGIC: &[u8; 4] = b"MSTS";
const VERSION: u8 = 1;
const ENCODED_LEN: usize = 4 + 1 + 6 * 8 + 8 + 16 + 8;
const BODY_LEN: usize = ENCODED_LEN - 8;

/// FNV-1a over the encoded body, so that any flipped byte is caught.
fn checksum(data: &[u8]) -> u64 {
    data.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| (h ^ b as u64).wrapping_mul(0x0000_0100_0000_01b3))
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ThresholdParams {
    pub gamma: f64,
    pub tau_min: f64,
    pub tau_max: f64,
    pub kappa_c: f64,
    /// The share a scope that has recorded nothing is assumed to take in.
    pub prior_share: f64,
    /// How many records the prior counts as.
    pub prior_weight: f64,
}

impl ThresholdParams {
    pub fn validate(&self) -> Result<()> {
        let p = self;
        ensure!(
            p.gamma.is_finite() && p.gamma > 0.0,
            Config: "gamma must be finite and > 0, got {}; GateConfig's default is 0.62", p.gamma
        );
        ensure!(
            p.tau_min.is_finite() && p.tau_max.is_finite() && 0.0 <= p.tau_min && p.tau_min <= p.tau_max,
            Config: "need 0 <= tau_min <= tau_max, both finite, got tau_min={} tau_max={}; GateConfig's defaults are 0.05 and 0.5", p.tau_min, p.tau_max
        );
        ensure!(
            p.kappa_c.is_finite() && p.kappa_c > 0.0,
            Config: "kappa_c must be finite and > 0, got {}; GateConfig's default is 4.0", p.kappa_c
        );
        if !(-1.0..=1.0).contains(&p.prior_share) {
            bail!(Config: "prior_share must lie in [-1, 1], got {}; GateConfig's default is 0.5", p.prior_share);
        }
        ensure!(
            p.prior_weight.is_finite() && p.prior_weight >= 0.0,
            Config: "prior_weight must be finite and >= 0, got {}; GateConfig's default is 8.0", p.prior_weight
        );
        Ok(())
    }
}

/// memsieve's per-scope threshold: the sum and count of the shares the gate
/// records, shrunk towards a prior. A share is 1 - novelty of a scored
/// candidate (clamped to [-1, 1]): how much of it the scope already holds.
/// tau = gamma * (1 - mean share) is then gamma times the scope's mean novelty.
#[derive(Clone, Debug, PartialEq)]
pub struct ThresholdState {
    pub params: ThresholdParams,
    count: u64,
    sum_fixed: i128,
}

fn quantize(share: f64) -> Result<i128> {
    ensure!(
        share.is_finite() && share.abs() <= 1.0 + 1e-4,
        Config: "share must lie in [-1, 1] (1 - novelty, clamped), or be nan for the first memory, got {share}; pass ScopeGate.share(score)"
    );
    Ok((share.clamp(-1.0, 1.0) * FIX_SCALE).round() as i128)
}

impl ThresholdState {
    pub fn new(params: ThresholdParams) -> Result<Self> {
        params.validate()?;
        Ok(ThresholdState { params, count: 0, sum_fixed: 0 })
    }

    /// Record a share (NaN: the scope was empty, nothing to learn from).
    pub fn on_add(&mut self, share: f64) -> Result<()> {
        if share.is_nan() {
            return Ok(());
        }
        let q = quantize(share)?;
        self.count += 1;
        self.sum_fixed += q;
        Ok(())
    }

    /// Undo `on_add(share)`.
    pub fn on_remove(&mut self, share: f64) -> Result<()> {
        if share.is_nan() {
            return Ok(());
        }
        let q = quantize(share)?;
        if self.count == 0 {
            bail!(
                State: "on_remove({share}) on a threshold that holds no memories; call it only for memories passed to on_add"
            );
        }
        self.count -= 1;
        self.sum_fixed -= q;
        Ok(())
    }

    pub fn count(&self) -> u64 {
        self.count
    }

    /// The mean recorded share, shrunk towards `prior_share`.
    pub fn mean_share(&self) -> f64 {
        let p = &self.params;
        let w = self.count as f64 + p.prior_weight;
        if w <= 0.0 {
            return p.prior_share;
        }
        let sum = self.sum_fixed as f64 / FIX_SCALE;
        ((sum + p.prior_share * p.prior_weight) / w).clamp(-1.0, 1.0)
    }

    pub fn kappa(&self) -> f64 {
        kappa::from_spacing(self.mean_share(), self.params.kappa_c, 1e4).unwrap_or(1e4)
    }

    pub fn tau(&self) -> f64 {
        let p = &self.params;
        (p.gamma * (1.0 - self.mean_share())).clamp(p.tau_min, p.tau_max)
    }

    /// Magic "MSTS", version byte, six f64 parameters, count (u64), sum (i128),
    /// FNV-1a checksum (u64) of everything before it; little endian, 85 bytes.
    pub fn to_bytes(&self) -> Vec<u8> {
        let p = &self.params;
        let mut out = Vec::with_capacity(ENCODED_LEN);
        out.extend_from_slice(MAGIC);
        out.push(VERSION);
        for v in [p.gamma, p.tau_min, p.tau_max, p.kappa_c, p.prior_share, p.prior_weight] {
            out.extend_from_slice(&v.to_le_bytes());
        }
        out.extend_from_slice(&self.count.to_le_bytes());
        out.extend_from_slice(&self.sum_fixed.to_le_bytes());
        let sum = checksum(&out);
        out.extend_from_slice(&sum.to_le_bytes());
        out
    }

    pub fn from_bytes(data: &[u8]) -> Result<Self> {
        if data.len() != ENCODED_LEN || &data[..4] != MAGIC {
            bail!(
                State: "not a ThresholdState: expected {ENCODED_LEN} bytes starting with b\"MSTS\", got {} bytes; pass the output of ThresholdState.to_bytes()", data.len()
            );
        }
        if data[4] != VERSION {
            bail!(
                State: "unsupported ThresholdState version {} (this build reads version {VERSION}); upgrade memsieve or rebuild the state", data[4]
            );
        }
        let mut cs = [0u8; 8];
        cs.copy_from_slice(&data[BODY_LEN..]);
        if u64::from_le_bytes(cs) != checksum(&data[..BODY_LEN]) {
            bail!(
                State: "corrupt ThresholdState: checksum mismatch; the bytes were altered or truncated, rebuild the state from the store"
            );
        }
        let f = |i: usize| {
            let o = 5 + 8 * i;
            let mut b = [0u8; 8];
            b.copy_from_slice(&data[o..o + 8]);
            f64::from_le_bytes(b)
        };
        let params = ThresholdParams {
            gamma: f(0),
            tau_min: f(1),
            tau_max: f(2),
            kappa_c: f(3),
            prior_share: f(4),
            prior_weight: f(5),
        };
        params.validate().map_err(|e| err!(State: "corrupt ThresholdState parameters: {e}"))?;
        let mut c = [0u8; 8];
        c.copy_from_slice(&data[53..61]);
        let count = u64::from_le_bytes(c);
        let mut s = [0u8; 16];
        s.copy_from_slice(&data[61..77]);
        let sum_fixed = i128::from_le_bytes(s);
        let limit = count as i128 * FIX_SCALE as i128;
        if sum_fixed.abs() > limit {
            bail!(
                State: "corrupt ThresholdState: the share sum {} is impossible for {count} memories; rebuild the state from the store", sum_fixed as f64 / FIX_SCALE
            );
        }
        Ok(ThresholdState { params, count, sum_fixed })
    }
}

/// The parameters of memsieve 0.1.0's defaults before gamma moved to 0.62;
/// the stored fixtures below were written with them.
#[cfg(test)]
pub(crate) const TEST_PARAMS: ThresholdParams =
    ThresholdParams { gamma: 0.5, tau_min: 0.05, tau_max: 0.5, kappa_c: 4.0, prior_share: 0.5, prior_weight: 8.0 };

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::CoreError;

    #[test]
    fn sage_threshold_pieces() {
        assert!((sage_tau_star(0.0, 0.5, 0.05, 2.0).unwrap() - 0.55).abs() < 1e-12);
        assert!((sage_tau_star(1e9, 0.5, 0.05, 2.0).unwrap() - 0.05).abs() < 1e-12);
        assert_eq!(sage_ema(None, 0.3, 0.9).unwrap(), 0.3);
        assert!((sage_ema(Some(0.5), 0.1, 0.9).unwrap() - 0.46).abs() < 1e-12);
        assert!(sage_ema(Some(0.5), 0.1, 1.5).is_err());
    }

    #[test]
    fn density_of_a_box() {
        // Four corners of a 2 x 1 rectangle: the PCA box is the rectangle itself.
        let m = [0.0f32, 0.0, 2.0, 0.0, 0.0, 1.0, 2.0, 1.0];
        let rho = sage_density(&m, 2, 16).unwrap();
        assert!((rho - 4.0 / 2.0).abs() < 1e-9, "{rho}");
        assert_eq!(sage_density(&m[..2], 2, 16).unwrap(), DENSITY_CAP);
    }

    #[test]
    fn state_add_remove_is_exact() {
        let mut t = ThresholdState::new(TEST_PARAMS).unwrap();
        assert!((t.mean_share() - 0.5).abs() < 1e-12);
        t.on_add(f64::NAN).unwrap();
        assert_eq!(t.count(), 0);
        for c in [0.3, 0.71, 0.123456789] {
            t.on_add(c).unwrap();
        }
        let before = t.to_bytes();
        t.on_add(0.987654321).unwrap();
        t.on_remove(0.987654321).unwrap();
        assert_eq!(t.to_bytes(), before);
        let want = (0.3 + 0.71 + 0.123456789 + 0.5 * 8.0) / 11.0;
        assert!((t.mean_share() - want).abs() < 1e-9);
        assert!((t.tau() - (0.5 * (1.0 - want)).clamp(0.05, 0.5)).abs() < 1e-9);
        assert!((t.kappa() - 4.0 / (1.0 - want)).abs() < 1e-6);
        assert_eq!(ThresholdState::from_bytes(&before).unwrap().to_bytes(), before);
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig {
            cases: 256, failure_persistence: None, ..proptest::prelude::ProptestConfig::default()
        })]

        /// on_remove(s) after on_add(s) leaves the bytes (and tau, kappa) as they were.
        #[test]
        fn add_then_remove_restores_the_state(
            history in proptest::collection::vec(-1.0f64..=1.0, 0..24),
            share in -1.0f64..=1.0,
        ) {
            let mut t = ThresholdState::new(TEST_PARAMS).unwrap();
            history.iter().for_each(|&s| t.on_add(s).unwrap());
            let (before, tau, kappa) = (t.to_bytes(), t.tau(), t.kappa());
            t.on_add(share).unwrap();
            t.on_remove(share).unwrap();
            proptest::prop_assert_eq!(t.to_bytes(), before);
            proptest::prop_assert_eq!((t.tau().to_bits(), t.kappa().to_bits()), (tau.to_bits(), kappa.to_bits()));
        }

        /// The state depends on the multiset of shares only: any order of adds,
        /// and removing every share in any order returns to the fresh state.
        #[test]
        fn the_state_is_a_function_of_the_shares(
            shares in proptest::collection::vec(-1.0f64..=1.0, 1..24),
            seed in proptest::prelude::any::<u64>(),
        ) {
            let mut perm = shares.clone();
            let mut r = crate::linalg::rng::Rng::new(seed);
            for i in (1..perm.len()).rev() {
                perm.swap(i, (r.next_u64() % (i as u64 + 1)) as usize);
            }
            let (mut a, mut b) = (ThresholdState::new(TEST_PARAMS).unwrap(), ThresholdState::new(TEST_PARAMS).unwrap());
            shares.iter().for_each(|&s| a.on_add(s).unwrap());
            perm.iter().for_each(|&s| b.on_add(s).unwrap());
            proptest::prop_assert_eq!(a.to_bytes(), b.to_bytes());
            shares.iter().for_each(|&s| b.on_remove(s).unwrap());
            proptest::prop_assert_eq!(b.to_bytes(), ThresholdState::new(TEST_PARAMS).unwrap().to_bytes());
        }
    }

    #[test]
    fn corrupt_bytes_are_rejected() {
        let t = ThresholdState::new(TEST_PARAMS).unwrap();
        let b = t.to_bytes();
        assert!(matches!(ThresholdState::from_bytes(&b[..10]), Err(CoreError::State(_))));
        let mut v = b.clone();
        v[4] = 9;
        assert!(matches!(ThresholdState::from_bytes(&v), Err(CoreError::State(_))));
        for i in 5..b.len() {
            let mut v = b.clone();
            v[i] ^= 0x10;
            assert!(matches!(ThresholdState::from_bytes(&v), Err(CoreError::State(_))), "byte {i}");
        }
        let mut t = t;
        assert!(matches!(t.on_remove(0.5), Err(CoreError::State(_))));
    }
}

/// Bytes written by the ThresholdState of memsieve 0.1.0 (before nn_cos was
/// renamed share), with the values they held; stored databases carry them.
#[cfg(test)]
pub(crate) mod fixtures {
    pub struct Stored {
        pub hex: &'static str,
        pub count: u64,
        pub mean: f64,
        pub kappa: f64,
        pub tau: f64,
    }

    pub const STORED: [Stored; 3] = [
        Stored {
            // TEST_PARAMS, nothing recorded.
            hex: "4d53545301000000000000e03f9a9999999999a93f000000000000e03f0000000000001040000000000000e03f000000000000204000000000000000000000000000000000000000000000000033b00260adb22980",
            count: 0,
            mean: 0.5,
            kappa: 8.0,
            tau: 0.25,
        },
        Stored {
            // gamma 0.62; on_add 0.3, 0.71, -0.25, 0.123456789, 1.0, nan, 0.9, then on_remove 0.71.
            hex: "4d53545301d7a3703d0ad7e33f9a9999999999a93f000000000000e03f0000000000001040000000000000e03f000000000000204005000000000000006c6a10ce120200000000000000000000ab3fd83eb9093421",
            count: 5,
            mean: 0.4671889837691896,
            kappa: 7.5073522846742815,
            tau: 0.33034283006310244,
        },
        Stored {
            // gamma 0.7, tau 0.02..0.4, kappa_c 3, prior 0.3 x 5; 1000 values spread over [-1, 1].
            hex: "4d53545301666666666666e63f7b14ae47e17a943f9a9999999999d93f0000000000000840333333333333d33f0000000000001440e8030000000000001e85eb51380400000000000000000000bb437218108b6b24",
            count: 1000,
            mean: 0.005691542288556562,
            kappa: 3.017172364102152,
            tau: 0.4,
        },
    ];

    pub fn bytes(hex: &str) -> Vec<u8> {
        (0..hex.len()).step_by(2).map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap()).collect()
    }
}

#[cfg(test)]
mod stored_tests {
    use super::fixtures::{bytes, STORED};
    use super::*;

    #[test]
    fn bytes_of_stored_databases_still_load() {
        for s in STORED.iter() {
            let b = bytes(s.hex);
            let t = ThresholdState::from_bytes(&b).unwrap();
            assert_eq!(t.count(), s.count);
            assert_eq!(t.mean_share().to_bits(), s.mean.to_bits());
            assert_eq!(t.kappa().to_bits(), s.kappa.to_bits());
            assert_eq!(t.tau().to_bits(), s.tau.to_bits());
            assert_eq!(t.to_bytes(), b);
        }
    }
}
