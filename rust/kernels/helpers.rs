//! The helper threads of a chunked scan: they wait for the next scan by
//! spinning for a short while before they sleep, and never on the caller's CPU.
//!
//! A helper that sleeps between scans must be woken for the next one, and a
//! woken thread is not always put on an idle CPU: measured on the 2-vCPU EPYC
//! of benches/RESULTS.md, once numpy had run a matmul in the process, a
//! sleeping rayon helper started its chunk of a 64-query batch over 1k rows a
//! median 1.8-2 ms late (up to 4 ms, a scheduler tick), against 24-32 us
//! before: it had been queued behind the caller on the caller's own CPU, so
//! the caller scanned both chunks itself and the batch ran at its serial speed.
//!
//! So a helper keeps looking for the next job for `SPIN` after each one (every
//! BLAS does the same; OpenBLAS for about 0.1 s): a burst of scans finds it
//! awake, and an idle process sleeps again within a fraction of a millisecond.
//! And a helper that finds itself on the CPU its job was posted from steps
//! aside (Linux: it drops that CPU from its affinity, which moves it at once,
//! and restores the mask, which does not move it back), so that it neither
//! waits behind the caller nor, spinning afterwards, takes the caller's CPU.

use std::sync::atomic::{AtomicI32, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread;
use std::time::{Duration, Instant};

/// How long a helper keeps looking for the next scan before it sleeps.
/// Calls from Python come a few to a few tens of microseconds apart in a
/// loop of scans; 100 us covers that and costs at most that much of another
/// core after the last scan of a burst.
pub const SPIN: Duration = Duration::from_micros(100);

/// One scan's share for the helpers: it claims chunks until none is left and
/// must be safe to call after the scan ended (it then finds nothing to do).
pub type Job = Arc<dyn Fn() + Send + Sync>;

struct Board {
    /// The latest job posted, with its number; helpers run each number once.
    job: Mutex<(u64, Option<Job>)>,
    posted: AtomicU64,
    /// The CPU the latest job was posted from (-1: unknown).
    poster_cpu: AtomicI32,
    wake: Condvar,
}

/// The CPU the calling thread runs on, or -1 where that cannot be read.
fn current_cpu() -> i32 {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: sched_getcpu takes no arguments and only reads.
        unsafe { libc::sched_getcpu() }
    }
    #[cfg(not(target_os = "linux"))]
    {
        -1
    }
}

/// `n` helper threads that run every posted job.
pub struct Helpers {
    board: Arc<Board>,
    n: usize,
    pid: u32,
}

impl Helpers {
    /// Start `n` helpers named `memsieve-scan-{i}`; None if no thread starts.
    pub fn start(n: usize) -> Option<Helpers> {
        let board = Arc::new(Board { job: Mutex::new((0, None)), posted: AtomicU64::new(0), poster_cpu: AtomicI32::new(-1), wake: Condvar::new() });
        let mut started = 0;
        for i in 0..n {
            let b = Arc::clone(&board);
            if thread::Builder::new().name(format!("memsieve-scan-{i}")).spawn(move || run(&b)).is_ok() {
                started += 1;
            }
        }
        (started > 0).then_some(Helpers { board, n: started, pid: std::process::id() })
    }

    /// Helper threads running.
    pub fn len(&self) -> usize {
        self.n
    }

    /// Whether this is the process that started the helpers. A forked child
    /// inherits this struct but none of the threads, and maybe a lock a
    /// helper held at the fork, so it scans serially and never posts.
    pub fn here(&self) -> bool {
        self.pid == std::process::id()
    }

    /// Hand `job` to every helper. A job posted before a helper took the
    /// previous one replaces it; the caller of a scan never depends on a
    /// helper (it claims every chunk no one else has), so nothing is lost.
    pub fn post(&self, job: Job) {
        self.board.poster_cpu.store(current_cpu(), Ordering::Relaxed);
        let mut slot = self.board.job.lock().unwrap_or_else(|e| e.into_inner());
        slot.0 += 1;
        slot.1 = Some(job);
        self.board.posted.store(slot.0, Ordering::Release);
        drop(slot);
        self.board.wake.notify_all();
    }
}

fn run(board: &Board) {
    let mut seen = 0u64;
    loop {
        let since = Instant::now();
        let mut spins = 0u32;
        while board.posted.load(Ordering::Acquire) == seen {
            spins = spins.wrapping_add(1);
            // Reading the clock every 64 spins keeps the spin cheap.
            if spins.is_multiple_of(64) && since.elapsed() >= SPIN {
                let mut slot = board.job.lock().unwrap_or_else(|e| e.into_inner());
                while slot.0 == seen {
                    slot = board.wake.wait(slot).unwrap_or_else(|e| e.into_inner());
                }
                break;
            }
            std::hint::spin_loop();
        }
        let job = {
            let slot = board.job.lock().unwrap_or_else(|e| e.into_inner());
            seen = slot.0;
            slot.1.clone()
        };
        let cpu = current_cpu();
        if cpu >= 0 && cpu == board.poster_cpu.load(Ordering::Relaxed) {
            step_aside(cpu);
        }
        if let Some(job) = job {
            job();
        }
    }
}

/// Move the calling thread off `cpu` (when another CPU is allowed), leaving
/// its affinity as it was.
fn step_aside(cpu: i32) {
    #[cfg(target_os = "linux")]
    // SAFETY: cpu_set_t is plain data; the calls only read and write `set`
    // and the calling thread's own affinity.
    unsafe {
        let size = std::mem::size_of::<libc::cpu_set_t>();
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if cpu as usize >= libc::CPU_SETSIZE as usize || libc::sched_getaffinity(0, size, &mut set) != 0 {
            return;
        }
        let allowed = set;
        libc::CPU_CLR(cpu as usize, &mut set);
        if libc::CPU_COUNT(&set) > 0 && libc::sched_setaffinity(0, size, &set) == 0 {
            libc::sched_setaffinity(0, size, &allowed);
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = cpu;
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;

    fn wait_for(count: &AtomicUsize, want: usize) -> bool {
        let until = Instant::now() + Duration::from_secs(10);
        while Instant::now() < until {
            if count.load(Ordering::Acquire) >= want {
                return true;
            }
            thread::sleep(Duration::from_micros(50));
        }
        false
    }

    #[test]
    fn a_job_posted_while_helpers_spin_and_after_they_sleep_is_run() {
        let h = Helpers::start(2).expect("threads start");
        assert_eq!(h.len(), 2);
        assert!(h.here());
        let ran = Arc::new(AtomicUsize::new(0));
        let r = Arc::clone(&ran);
        h.post(Arc::new(move || {
            r.fetch_add(1, Ordering::AcqRel);
        }));
        assert!(wait_for(&ran, 2), "each helper runs a posted job once: {}", ran.load(Ordering::Acquire));
        // Well past SPIN: both helpers are asleep on the condvar now.
        thread::sleep(SPIN * 20);
        assert_eq!(ran.load(Ordering::Acquire), 2, "a job is run once per helper, never again");
        let r = Arc::clone(&ran);
        h.post(Arc::new(move || {
            r.fetch_add(10, Ordering::AcqRel);
        }));
        assert!(wait_for(&ran, 22), "a sleeping helper wakes for the next job: {}", ran.load(Ordering::Acquire));
    }

    #[test]
    fn many_posts_in_a_row_never_hang_and_the_last_one_is_always_run() {
        let h = Helpers::start(1).expect("a thread starts");
        let last = Arc::new(AtomicUsize::new(0));
        for i in 1..=2000usize {
            let l = Arc::clone(&last);
            h.post(Arc::new(move || {
                l.fetch_max(i, Ordering::AcqRel);
            }));
            if i % 500 == 0 {
                thread::sleep(SPIN * 3);
            }
        }
        // Jobs posted before the helper took the previous one are replaced,
        // but the latest is always run.
        assert!(wait_for(&last, 2000), "last job seen: {}", last.load(Ordering::Acquire));
    }
}
