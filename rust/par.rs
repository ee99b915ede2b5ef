//! Row-parallel scans: a large matrix is cut into fixed contiguous chunks of
//! rows, each chunk is scanned by the single-thread kernel, and the partial
//! results are merged in chunk order.
//!
//! The chunking depends only on (n, d), never on the thread count or on which
//! thread finishes first, so a given input always gives the same result.
//! Threads: `MEMSIEVE_THREADS`, else `RAYON_NUM_THREADS`, else every core the
//! OS reports; a value of 1 turns the parallel path off. The count is read once,
//! on the first scan large enough to use it.

use std::ops::Range;
use std::sync::OnceLock;

use rayon::prelude::*;

use crate::simd::ROW_BLOCK;

/// Matrix elements (rows x d) from which a scan is split across threads.
///
/// Measured on the 2-vCPU Sapphire Rapids VM of benches/RESULTS.md (d = 384,
/// k = 10 top-k scan, serial against 2 threads, criterion-style medians): the
/// parallel scan ties the serial one at about 1.5k rows (0.6 M elements, 2.2 MiB,
/// where the wake-up of a second thread costs as much as the half scan it saves)
/// and wins from 3k rows on (serial 64 us, parallel 50 us at 3k; 2.1 ms against
/// 1.1 ms at 50k). The threshold sits at 4k rows of d = 384 to stay clear of
/// the tie on a loaded machine.
pub const PAR_MIN_ELEMENTS: usize = 4096 * 384;

/// Elements per chunk (about 1 MiB of float32), rounded down to whole row blocks
/// so that a chunk scans exactly the blocks the serial scan would.
const CHUNK_ELEMENTS: usize = 1 << 18;

/// How a scan is run: `Auto` picks by size; the others force a path (tests, benches).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Plan {
    Auto,
    Serial,
    Chunked,
}

fn configured_threads() -> usize {
    for var in ["MEMSIEVE_THREADS", "RAYON_NUM_THREADS"] {
        if let Some(n) = std::env::var(var).ok().and_then(|s| s.trim().parse::<usize>().ok()) {
            if n > 0 {
                return n;
            }
        }
    }
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// memsieve's own pool, so scans never queue behind other rayon users in the process.
fn pool() -> Option<&'static rayon::ThreadPool> {
    static POOL: OnceLock<Option<rayon::ThreadPool>> = OnceLock::new();
    POOL.get_or_init(|| {
        let n = configured_threads();
        if n <= 1 {
            return None;
        }
        rayon::ThreadPoolBuilder::new().num_threads(n).thread_name(|i| format!("memsieve-scan-{i}")).build().ok()
    })
    .as_ref()
}

/// Threads a large scan uses (1 when the parallel path is off).
pub fn threads() -> usize {
    pool().map_or(1, |p| p.current_num_threads())
}

/// Rows per chunk for width `d`: a whole number of row blocks.
pub fn chunk_rows(d: usize) -> usize {
    (CHUNK_ELEMENTS / d.max(1) / ROW_BLOCK).max(1) * ROW_BLOCK
}

/// The fixed row ranges a chunked scan of `n` rows of width `d` visits.
pub fn row_chunks(n: usize, d: usize) -> Vec<Range<usize>> {
    let step = chunk_rows(d);
    (0..n).step_by(step).map(|r| r..(r + step).min(n)).collect()
}

/// Whether `plan` scans `n` rows of width `d` in chunks.
pub fn chunked(plan: Plan, n: usize, d: usize) -> bool {
    match plan {
        Plan::Serial => false,
        Plan::Chunked => true,
        Plan::Auto => pool().is_some() && n.saturating_mul(d) >= PAR_MIN_ELEMENTS,
    }
}

/// `f` over the row ranges of `plan`, results in row order: one range `0..n`
/// when serial, else the fixed chunks, run on the pool when there is one.
pub fn map_rows<T, F>(plan: Plan, n: usize, d: usize, f: F) -> Vec<T>
where
    T: Send,
    F: Fn(Range<usize>) -> T + Sync + Send,
{
    if !chunked(plan, n, d) {
        return vec![f(0..n)];
    }
    let chunks = row_chunks(n, d);
    match pool() {
        Some(p) => p.install(|| chunks.into_par_iter().map(&f).collect()),
        None => chunks.into_iter().map(f).collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_cover_rows_in_order_on_block_boundaries() {
        for (n, d) in [(0usize, 384usize), (1, 384), (700, 384), (100_000, 384), (5000, 7), (3, 1_000_000)] {
            let ch = row_chunks(n, d);
            assert_eq!(ch.iter().map(|r| r.len()).sum::<usize>(), n);
            for w in ch.windows(2) {
                assert_eq!(w[0].end, w[1].start);
                assert_eq!(w[0].start % ROW_BLOCK, 0);
            }
            let got: Vec<usize> = map_rows(Plan::Chunked, n, d, |r| r.start);
            assert_eq!(got, ch.iter().map(|r| r.start).collect::<Vec<_>>());
        }
        assert_eq!(map_rows(Plan::Serial, 10, 4, |r| r), vec![0..10]);
    }
}
