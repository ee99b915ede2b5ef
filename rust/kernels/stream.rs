//! The two accumulators every scan feeds, one row block at a time: the k best
//! rows (`TopK`) and a running log-sum-exp (`StreamLse`). Both merge partials
//! of consecutive row ranges, so chunked scans give the serial result.

use crate::kernels::simd;

/// Exponents below this (relative to the largest seen) add less than e^-50 of
/// the sum each: they cannot change an f64 sum even over 1e9 rows, so the exp is skipped.
const LSE_CUTOFF: f64 = 50.0;

/// Running log-sum-exp of kappa * s: a running max and a rescaled sum.
///
/// Each row block is summed against its own maximum and then folded in, so a
/// block contributes the same partial wherever a scan starts: chunked and
/// serial scans differ only in the order of the final f64 folds.
#[derive(Clone, Debug)]
pub struct StreamLse {
    kappa: f64,
    max: f64,
    sum: f64,
    n: usize,
}

impl StreamLse {
    pub fn new(kappa: f64) -> Self {
        StreamLse { kappa, max: f64::NEG_INFINITY, sum: 0.0, n: 0 }
    }

    fn fold(&mut self, max: f64, sum: f64) {
        if max == f64::NEG_INFINITY {
            return;
        }
        if max > self.max {
            self.sum = self.sum * (self.max - max).exp() + sum;
            self.max = max;
        } else {
            self.sum += sum * (max - self.max).exp();
        }
    }

    #[inline]
    pub fn push_block(&mut self, sims: &[f32]) {
        self.n += sims.len();
        let bmax = simd::max(sims);
        let m = self.kappa * bmax as f64;
        // A whole block far below the running max adds nothing an f64 can hold.
        if sims.is_empty() || m < self.max - LSE_CUTOFF {
            return;
        }
        let (k, mx) = (self.kappa as f32, m as f32);
        let floor = -LSE_CUTOFF as f32;
        let mut acc = [0f64; 4];
        for (i, &x) in sims.iter().enumerate() {
            let t = k * x - mx;
            if t > floor {
                acc[i & 3] += t.exp() as f64;
            }
        }
        self.fold(m, (acc[0] + acc[1]) + (acc[2] + acc[3]));
    }

    /// Fold in the partial of a later, disjoint range of rows.
    pub fn merge(&mut self, other: &StreamLse) {
        self.fold(other.max, other.sum);
        self.n += other.n;
    }

    pub fn value(&self) -> f64 {
        self.max + self.sum.ln()
    }

    pub fn rows(&self) -> usize {
        self.n
    }
}
