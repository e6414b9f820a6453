//! What a job measures and prints per I/O beyond the loop itself: which latencies it records
//! (fio's disable_* and gtod_reduce), how often an untimed job reads the clock, the outcome of
//! a job that does no I/O (create_only), and `--debug=io` lines.

use iolab_engine::{Op, Req};
use iolab_sys as sys;
use iolab_workload::BufStream;

use crate::fill::fill;

/// Base seed of dedupe_mode=working_set's buffers.
const DEDUPE_SEED: u64 = 0x0ded_f00d;
use iolab_job::debug;
use iolab_stats::{Dir, JobStats};
use iolab_workload::JobPlan;

use super::{JobOutcome, Runner};
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

impl Runner<'_> {
    /// fio's `--debug=io` line for a request (the slot stands for fio's io_u address).
    pub(super) fn debug_req(&self, what: &str, r: &Req) {
        let file = self.files.iter().position(|f| *f == r.file);
        let name = file
            .and_then(|i| self.plan.files.get(i))
            .map(|f| f.path.display());
        let ddir = match r.op {
            Op::Read => 0,
            Op::Write => 1,
            Op::Trim => 2,
            _ => 3,
        };
        debug::line(
            debug::IO,
            sys::gettid(),
            format_args!(
                "{what}: io_u 0x{:x}: off=0x{:x},len=0x{:x},ddir={ddir},file={}",
                r.tag,
                r.offset,
                r.len,
                name.map(|n| n.to_string()).unwrap_or_default()
            ),
        );
    }

    /// fio's three `--debug=io` lines for a new request: filled from the generator, prepared
    /// for the engine, queued.
    pub(super) fn debug_new_req(&self, r: &Req) {
        for what in ["fill", "prep", "queue"] {
            self.debug_req(what, r);
        }
    }

    /// fio's dedupe_percentage: that share of writes repeat an earlier buffer, the rest are
    /// the job's next unique buffer (each job has its own sequence unless dedupe_global). As
    /// fio, a repeat is the last unique buffer (before any, the first), and under
    /// dedupe_mode=working_set one of the job's first unique buffers, as many as
    /// dedupe_working_set_percentage of its blocks: fio seeds its working set from the state
    /// its unique buffers start from, so the set is the data written first.
    pub(super) fn dedupe_fill(&mut self, buf: &mut [u8]) {
        let (plan, spec) = (self.plan, &self.plan.spec);
        let salt = if spec.dedupe_global {
            0
        } else {
            plan.pattern.seed
        };
        let n = if (self.rng.below(100) as u32) >= plan.buffers.dedupe_percentage {
            self.unique_bufs += 1;
            self.unique_bufs - 1
        } else if spec.dedupe_working_set {
            let blocks: u64 =
                plan.pattern.files.iter().map(|f| f.len).sum::<u64>() / (buf.len() as u64).max(1);
            let set = (blocks * u64::from(spec.dedupe_working_set_percentage) / 100).max(1);
            self.rng.below(set)
        } else {
            self.unique_bufs.saturating_sub(1)
        };
        let seed = DEDUPE_SEED ^ (n + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        fill(buf, plan, &mut BufStream::new(seed ^ salt, false));
    }

    /// A completion when some latency is not measured: only what is asked for is recorded.
    pub(super) fn record_some(&mut self, dir: Dir, bytes: u64, submit: u64, issue: u64) {
        let rec = self.rec;
        self.stats.record_done(dir, bytes);
        if rec.clat {
            self.stats.record_clat(dir, self.now - submit);
        }
        if rec.lat && rec.lat_hist {
            self.stats.dir_mut(dir).lat.record(self.now - issue);
        } else if rec.lat {
            self.stats.dir_mut(dir).lat.record_moments(self.now - issue);
        }
    }

    /// The clock after a synchronous completion: read every time when latencies are measured,
    /// else every [`CLOCK_EVERY`] completions (the runtime and samples need no more).
    #[inline(always)]
    pub(super) fn stamp_done(&mut self) {
        if self.rec.timed {
            self.now = self.clock.now();
            return;
        }
        self.unclocked += 1;
        if self.unclocked >= CLOCK_EVERY {
            self.unclocked = 0;
            self.now = self.clock.now();
        }
    }
}
