//! Row-parallel scans: a large matrix is cut into fixed contiguous chunks of
//! rows, each chunk is scanned by the single-thread kernel, and the partial
//! results are merged in chunk order.
//!
//! The chunking depends only on (n, d), never on the thread count or on which
//! thread finishes first, so a given input always gives the same result.
//! Threads: `MEMSIEVE_THREADS`, else `RAYON_NUM_THREADS`, at most every core
//! the OS reports (the default); a value of 1 turns the parallel path off.
//! The count is read once, on the first scan large enough to use it.

use std::ops::Range;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::panic::{self, AssertUnwindSafe};
use std::sync::{Arc, Mutex, OnceLock};
use std::thread;

use crate::kernels::helpers::Helpers;
use crate::kernels::simd::ROW_BLOCK;

/// Matrix elements (rows x d) from which a scan is split across threads.
///
/// Measured 2026-12-01 on the 2-vCPU VM of benches/RESULTS.md, idle (load 0.1),
/// d = 384, median of 5 round-robin rounds, serial against 2 threads (k = 10
/// top-k / SAGE log-sum-exp): 1k rows 51/43 us and 78/58 us, 1.5k rows 81/76 us
/// (about a tie: waking the second thread costs what half the scan saves), 2k
/// rows 154/97 us, 3k rows 252/190 us, 10k rows 1.89/0.73 ms, 50k rows
/// 11.6/6.9 ms. With the other vCPU busy (load 4.5) the split never paid (50k
/// rows 36/45 ms), so `MEMSIEVE_THREADS=1` suits a loaded host. The threshold
/// sits at 4k rows of d = 384, twice the measured crossover, so that the
/// split is not taken where a little load would turn the gain into a loss.
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
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    for var in ["MEMSIEVE_THREADS", "RAYON_NUM_THREADS"] {
        if let Some(n) = std::env::var(var).ok().and_then(|s| s.trim().parse::<usize>().ok()) {
            if n > 0 {
                // No more than the cores: the helpers spin after each scan, and
                // one beyond the cores would only spin against the others.
                return n.min(cores);
            }
        }
    }
    cores
}

/// memsieve's own helper threads (kernels/helpers.rs): the calling thread
/// scans too, so n threads in all are the caller and n - 1 helpers.
fn pool() -> Option<&'static Helpers> {
    static POOL: OnceLock<Option<Helpers>> = OnceLock::new();
    POOL.get_or_init(|| {
        let n = configured_threads();
        if n <= 1 {
            return None;
        }
        Helpers::start(n - 1)
    })
    .as_ref()
    .filter(|h| h.here())
}

/// Threads a large scan uses (1 when the parallel path is off).
pub fn threads() -> usize {
    pool().map_or(1, |p| p.len() + 1)
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

/// The plan of a scan of `nq` queries at once: its work grows with nq, so
/// `Auto` splits it from `PAR_MIN_ELEMENTS` multiply-adds (n * d * nq) rather
/// than matrix elements. A 64-query batch over 1k rows of d = 384 is about
/// 16 single scans of 4k rows: well past the crossover measured above.
/// The chunks are the same fixed ranges, so results stay those of a serial scan.
pub fn batch_plan(plan: Plan, n: usize, d: usize, nq: usize) -> Plan {
    match plan {
        Plan::Auto if pool().is_some() && n > chunk_rows(d) && n.saturating_mul(d).saturating_mul(nq) >= PAR_MIN_ELEMENTS => {
            Plan::Chunked
        }
        p => p,
    }
}

/// Most chunks a batch scan is cut into. Each chunk fills and merges its own
/// top-k lists (k inserts per query, then about k ln(rows / k) more), which
/// with 64 queries cost as much as the multiply-adds at 10k rows in chunks
/// of 512 (measured 3.9 ms chunked against 2.0 ms serial, one thread). Eight
/// chunks still let two threads balance when one starts late.
const BATCH_CHUNKS: usize = 8;

/// The fixed row ranges of a chunked batch scan of `n` rows of width `d`:
/// whole row blocks, at least `chunk_rows(d)` rows each and at most
/// `BATCH_CHUNKS` of them. They depend only on (n, d), never on the threads.
pub fn batch_chunks(n: usize, d: usize) -> Vec<Range<usize>> {
    let step = (n.div_ceil(BATCH_CHUNKS).div_ceil(ROW_BLOCK) * ROW_BLOCK).max(chunk_rows(d));
    (0..n).step_by(step).map(|r| r..(r + step).min(n)).collect()
}

/// `f` over the row ranges of a batch of `nq` queries, results in row order:
/// `0..n` unless `batch_plan` chunks it, else the `batch_chunks`, shared with
/// the pool when there is one.
pub fn map_batch<T, F>(plan: Plan, n: usize, d: usize, nq: usize, f: F) -> Vec<T>
where
    T: Send + 'static,
    F: Fn(Range<usize>) -> T + Sync + Send,
{
    if !chunked(batch_plan(plan, n, d, nq), n, d) {
        return vec![f(0..n)];
    }
    on_pool(batch_chunks(n, d), f)
}

/// Largest matrix (bytes) whose batch scan is shared by query blocks rather than by rows.
///
/// A small matrix cuts into few row chunks (1k rows of d = 384: two, 512 and 488 rows), so a
/// helper that starts late leaves the caller waiting for the chunk it took: measured on the
/// 2-vCPU AVX2 EPYC of benches/RESULTS.md, a 64-query batch over 1k rows took a median
/// 458-532 us a call (p10 390, serial 680), and four row chunks of 256 were slower still (each
/// fills and merges 64 top-k lists). Query blocks need no merge (each list sees every row in
/// order) and a late helper takes fewer of them. Each block reads the whole matrix, which at
/// this size stays in the caches; past it rows are split as before.
pub const QUERY_SPLIT_MAX_BYTES: usize = 4 << 20;

/// Whether a batch of `nq` queries in `blocks` query blocks over `n` rows of width `d` is
/// shared by query blocks (`map_units`) instead of by rows (`map_batch`).
pub fn split_by_queries(plan: Plan, n: usize, d: usize, nq: usize, blocks: usize) -> bool {
    blocks >= 2
        && chunked(batch_plan(plan, n, d, nq), n, d)
        && n.saturating_mul(d).saturating_mul(std::mem::size_of::<f32>()) <= QUERY_SPLIT_MAX_BYTES
}

/// `f` over `0..units` (each a unit of work, as a range `i..i + 1`), shared between the
/// calling thread and the pool when there is one; results in unit order.
pub fn map_units<T, F>(units: usize, f: F) -> Vec<T>
where
    T: Send + 'static,
    F: Fn(Range<usize>) -> T + Sync + Send,
{
    on_pool((0..units).map(|i| i..i + 1).collect(), f)
}

/// `f` over `chunks`, shared with the pool when there is one and more than one chunk; results
/// in chunk order.
fn on_pool<T, F>(chunks: Vec<Range<usize>>, f: F) -> Vec<T>
where
    T: Send + 'static,
    F: Fn(Range<usize>) -> T + Sync + Send,
{
    match pool() {
        Some(p) if chunks.len() > 1 => shared(p, &chunks, &f),
        _ => chunks.into_iter().map(f).collect(),
    }
}

/// `f` over the row ranges of `plan`, results in row order: one range `0..n`
/// when serial, else the fixed chunks, shared with the pool when there is one.
pub fn map_rows<T, F>(plan: Plan, n: usize, d: usize, f: F) -> Vec<T>
where
    T: Send + 'static,
    F: Fn(Range<usize>) -> T + Sync + Send,
{
    if !chunked(plan, n, d) {
        return vec![f(0..n)];
    }
    on_pool(row_chunks(n, d), f)
}

/// One chunked scan shared between the calling thread and late-joining
/// helpers. `f` borrows the caller's data; it stays valid because the caller
/// does not return before every chunk anyone claimed is done, and a helper
/// that arrives after the last chunk was claimed never touches it.
struct Shared<T> {
    next: AtomicUsize,
    done: AtomicUsize,
    chunks: Vec<Range<usize>>,
    slots: Vec<Mutex<Option<thread::Result<T>>>>,
    f: *const (dyn Fn(Range<usize>) -> T + Sync),
}

// SAFETY: `f` is Sync and only called (through a shared reference) while the
// caller that owns it waits; results cross threads inside Mutexes (T: Send).
unsafe impl<T: Send> Send for Shared<T> {}
unsafe impl<T: Send> Sync for Shared<T> {}

impl<T> Shared<T> {
    /// Claim and scan chunks until none is left. A panic in `f` is kept in
    /// the chunk's slot (and re-raised by the caller), so a helper never
    /// takes the process down and the count of finished chunks stays exact.
    fn work(&self) {
        loop {
            let i = self.next.fetch_add(1, Ordering::Relaxed);
            let Some(rows) = self.chunks.get(i) else { break };
            // SAFETY: chunk i was claimed before the caller saw every chunk
            // done, so the caller is still waiting and `f` is alive.
            let f = unsafe { &*self.f };
            let out = panic::catch_unwind(AssertUnwindSafe(|| f(rows.clone())));
            *self.slots[i].lock().unwrap_or_else(|e| e.into_inner()) = Some(out);
            self.done.fetch_add(1, Ordering::Release);
        }
    }
}

/// Run `f` over `chunks` on the calling thread and `threads - 1` pool
/// helpers, each taking the next chunk not yet taken. The caller starts at
/// once and never waits for a helper that has not started: on a loaded host
/// (or beside another library's spinning threads) a helper may not get a
/// core for milliseconds, and the caller then scans every chunk itself at the
/// serial speed. It waits only for chunks a helper is scanning. Results land
/// in their chunk's slot, so the order (and the merged result) does not
/// depend on who ran what.
fn shared<T, F>(pool: &Helpers, chunks: &[Range<usize>], f: &F) -> Vec<T>
where
    T: Send + 'static,
    F: Fn(Range<usize>) -> T + Sync,
{
    let f: &(dyn Fn(Range<usize>) -> T + Sync) = f;
    // SAFETY: only the lifetime bound changes (same fat-pointer layout); see
    // `Shared` for why `f` outlives every call made through the pointer.
    let f: *const (dyn Fn(Range<usize>) -> T + Sync + 'static) = unsafe { std::mem::transmute(f) };
    let job = Arc::new(Shared {
        next: AtomicUsize::new(0),
        done: AtomicUsize::new(0),
        chunks: chunks.to_vec(),
        slots: chunks.iter().map(|_| Mutex::new(None)).collect(),
        f,
    });
    let theirs = Arc::clone(&job);
    pool.post(Arc::new(move || theirs.work()));
    job.work();
    let mut spins = 0u32;
    while job.done.load(Ordering::Acquire) < chunks.len() {
        // A helper is inside a chunk: it is running, so this is short.
        spins += 1;
        if spins < 64 {
            std::hint::spin_loop();
        } else {
            thread::yield_now();
        }
    }
    let mut out = Vec::with_capacity(chunks.len());
    for slot in &job.slots {
        match slot.lock().unwrap_or_else(|e| e.into_inner()).take().expect("every chunk was scanned") {
            Ok(v) => out.push(v),
            Err(p) => panic::resume_unwind(p),
        }
    }
    out
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

    #[test]
    fn a_panicking_chunk_reaches_the_caller_and_every_other_chunk_still_runs() {
        use std::sync::atomic::AtomicUsize;
        let ran = AtomicUsize::new(0);
        let n = chunk_rows(384) * 6;
        let got = panic::catch_unwind(AssertUnwindSafe(|| {
            map_rows(Plan::Chunked, n, 384, |r| {
                ran.fetch_add(1, Ordering::Relaxed);
                assert!(r.start != chunk_rows(384) * 3, "chunk 3 fails");
                r.start
            })
        }));
        assert!(got.is_err(), "the panic must propagate to the caller");
        // The caller waits for every claimed chunk before re-raising, so none
        // is still running on borrowed data when the caller unwinds.
        assert_eq!(ran.load(Ordering::Relaxed), 6);
        // The pool survives and scans again.
        assert_eq!(map_rows(Plan::Chunked, n, 384, |r| r.start).len(), 6);
    }

    #[test]
    fn results_keep_chunk_order_over_many_calls() {
        let n = chunk_rows(384) * 9 + 17;
        let want: Vec<usize> = row_chunks(n, 384).iter().map(|r| r.start).collect();
        for _ in 0..200 {
            assert_eq!(map_rows(Plan::Chunked, n, 384, |r| r.start), want);
        }
    }

    #[test]
    fn batch_chunks_cover_rows_in_few_whole_blocks() {
        for (n, d) in [(0usize, 384usize), (1, 384), (1000, 384), (10_000, 384), (1_000_000, 384), (5000, 7)] {
            let ch = batch_chunks(n, d);
            assert_eq!(ch.iter().map(|r| r.len()).sum::<usize>(), n);
            assert!(ch.len() <= BATCH_CHUNKS, "{n} rows: {} chunks", ch.len());
            for w in ch.windows(2) {
                assert_eq!(w[0].end, w[1].start);
                assert_eq!(w[0].len() % ROW_BLOCK, 0);
                assert!(w[0].len() >= chunk_rows(d));
            }
            let got: Vec<usize> = map_batch(Plan::Chunked, n, d, 64, |r| r.start);
            assert_eq!(got, ch.iter().map(|r| r.start).collect::<Vec<_>>());
        }
        assert_eq!(batch_chunks(1000, 384), vec![0..512, 512..1000]);
        assert_eq!(map_batch(Plan::Serial, 10_000, 384, 64, |r| r), vec![0..10_000]);
    }
}

