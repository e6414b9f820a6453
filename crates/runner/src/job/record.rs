//! What a job measures and prints per I/O beyond the loop itself: which latencies it records
//! (fio's disable_* and gtod_reduce), how often an untimed job reads the clock, the outcome of
//! a job that does no I/O (create_only), and `--debug=io` lines.

mod hooks;

/// Base seed of dedupe_mode=working_set's buffers.
const DEDUPE_SEED: u64 = 0x0ded_f00d;
use iolab_stats::JobStats;
use iolab_workload::JobPlan;

use super::types::JobOutcome;
use iolab_engine::SysCalls;

impl JobOutcome {
    /// A job that did no I/O (create_only).
    pub(super) fn idle(plan: &JobPlan) -> JobOutcome {
        JobOutcome {
            name: plan.name.clone(),
            clone: plan.clone,
            group: plan.group,
            stats: JobStats::new(),
            runtime_ms: 0,
            error: None,
            error_detail: None,
            engine: String::new(),
            syscalls: SysCalls::default(),
            errors_ignored: 0,
            iops_series: Vec::new(),
            started_ns: 0,
            ended_ns: 0,
            lat_series: Vec::new(),
            rates: Default::default(),
        }
    }
}

/// The latencies a job measures. With none (fio's `fio_fill_issue_time` false) no I/O is
/// stamped at issue or submission, and the clock is read once per [`CLOCK_EVERY`] completions
/// of a synchronous engine, as fio's `ts_cache_mask` under gtod_reduce.
#[derive(Clone, Copy)]
pub(super) struct Record {
    pub(super) clat: bool,
    pub(super) lat: bool,
    pub(super) slat: bool,
    /// Issue times are taken at all.
    pub(super) timed: bool,
    /// The lat and slat histograms are filled (fio's lat_percentiles, slat_percentiles: no
    /// report reads them otherwise).
    pub(super) lat_hist: bool,
    pub(super) slat_hist: bool,
}

impl Record {
    pub(super) fn of(s: &iolab_job::JobSpec) -> Record {
        Record {
            clat: !s.disable_clat,
            lat: !s.disable_lat,
            slat: !s.disable_slat,
            timed: !(s.disable_clat && s.disable_slat && s.disable_bw),
            lat_hist: s.lat_percentiles,
            slat_hist: s.slat_percentiles,
        }
    }

    pub(super) fn all(self) -> bool {
        self.clat && self.lat && self.slat
    }
}

/// Completions between clock reads of an untimed synchronous job (fio's ts_cache_mask + 1).
const CLOCK_EVERY: u32 = 64;
