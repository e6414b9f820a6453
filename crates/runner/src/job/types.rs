//! What the job's parts share, below all of them: what a job hands back, what stops it, the
//! run's clock, how a sync is counted. Nothing of the runner's own is imported here.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use iolab_engine::SysCalls;
use iolab_stats::{Dir, JobStats};
use iolab_sys as sys;
use iolab_workload::Dir as WDir;

use super::rates::Rates;

/// What a job thread hands back.
#[derive(Debug)]
pub struct JobOutcome {
    pub name: String,
    pub clone: u32,
    pub group: u32,
    pub stats: JobStats,
    /// Time measured (after ramp), milliseconds.
    pub runtime_ms: u64,
    /// First error (errno, message) where the job stopped on one.
    pub error: Option<(i32, String)>,
    /// The same error as fio details it after `err=N` on the job line
    /// (`file:job.rs:812, func=io_u error, error=No space left on device`).
    pub error_detail: Option<String>,
    pub engine: String,
    pub syscalls: SysCalls,
    /// I/Os whose completion failed but the job went on (continue_on_error).
    pub errors_ignored: u64,
    /// IOPS over time: (ms since the measured period started, IOPS).
    pub iops_series: Vec<(u64, f64)>,
    /// When the job's I/O started and ended, ns on the run's clock (after startdelay and
    /// wait_for): what ordering (stonewall, wait_for) can be checked against.
    pub started_ns: u64,
    pub ended_ns: u64,
    /// Mean completion latency per sampling interval: (ms, ns).
    pub lat_series: Vec<(u64, f64)>,
    /// Every bandwidth and IOPS sample, when [`crate::keep_rate_series`] asked for them (an
    /// MPI run sums them across ranks on a common time base).
    pub rates: Rates,
}

/// What ends a job early: a signal, or a job with `exitall` that finished.
pub struct Stops<'a> {
    pub signal: &'a AtomicBool,
    /// The job's group was told to stop (exitall; see exits.rs).
    pub exit_all: &'a AtomicBool,
    /// Every group's flag in the phase (exit_what=stonewall, all).
    pub phase: &'a [(u32, AtomicBool)],
    /// No later phase runs (exit_what=all).
    pub run: &'a AtomicBool,
    /// cpuio's exit_on_io_done: set when the phase's jobs that do I/O have all ended (a
    /// flag never set for other jobs).
    pub io_done: &'a AtomicBool,
}

impl Stops<'_> {
    #[inline]
    pub fn is_set(&self) -> bool {
        self.signal.load(Ordering::Relaxed)
            || self.exit_all.load(Ordering::Relaxed)
            || self.io_done.load(Ordering::Relaxed)
    }

    /// Sleeps for `d`, or less when a stop comes: it is checked every [`STOP_POLL`], so that
    /// startdelay, thinktime and the like end within that of Ctrl-C. False when stopped.
    pub fn pause(&self, d: Duration) -> bool {
        let end = Instant::now() + d;
        loop {
            if self.is_set() {
                return false;
            }
            let left = end.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return true;
            }
            std::thread::sleep(left.min(STOP_POLL));
        }
    }
}

/// How often a waiting job looks at the stop flags.
pub(crate) const STOP_POLL: Duration = Duration::from_millis(50);

/// How long I/O in flight at a stop (Ctrl-C, exitall) gets to complete.
pub(super) const STOP_GRACE: Duration = Duration::from_millis(100);

/// What fio 3.33 counts of a sync: an fsync in `sync.total_ios` and its latency; an
/// fdatasync its latency alone (fio's JSON shows the fsyncs' count only); the end_fsync and
/// fsync_on_close syncs neither.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum SyncAcct {
    Counted,
    LatOnly,
    Uncounted,
}

/// The clock every job of a run shares, so sample windows line up: nanoseconds since the
/// run started (the TSC where it is invariant, else CLOCK_MONOTONIC; see iolab_sys::clock).
pub type Clock = sys::clock::Clock;

pub(super) fn stat_dir(d: WDir) -> Dir {
    match d {
        WDir::Read => Dir::Read,
        WDir::Write => Dir::Write,
        WDir::Trim => Dir::Trim,
    }
}
