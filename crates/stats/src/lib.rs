//! Statistics of a benchmark job, computed as fio computes them.
//!
//! - [`Histogram`]: fio's log-linear latency histogram (6 bits, 29 groups, 1856 buckets) with
//!   fio's percentile walk and json+ bin values.
//! - [`Moments`]: min/max/mean/stddev with fio's running update and fio's merge.
//! - [`LatStats`], [`DirStats`], [`SyncStats`], [`LatDist`]: slat/clat/lat per direction,
//!   io counts, bw/iops samples, the `latency_ns/us/ms` buckets.
//! - [`DepthStats`]: I/O depth, submit and complete distributions.
//! - [`Sampler`]: bandwidth and IOPS samples every 500 ms.
//! - [`CpuUsage`], [`DiskStats`]/[`DiskUtil`]: per-thread CPU and block device counters.
//! - [`JobStats`]: all of it for one job; `+=` folds jobs together for group_reporting exactly as
//!   fio's `sum_thread_stats`.
//!
//! Nothing here reads a clock or allocates per I/O: callers pass nanosecond timestamps and
//! latencies, and the recording methods are a few integer operations plus fio's running mean.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod block;
pub mod cpu;
pub mod depth;
pub mod disk;
pub mod error;
pub mod hist;
pub mod lat;
pub mod moments;
pub mod sample;

use std::ops::AddAssign;

pub use cpu::CpuUsage;
pub use depth::DepthStats;
pub use disk::{DiskStats, DiskUtil};
pub use error::{Error, Result};
pub use hist::{Histogram, DEFAULT_PERCENTILES};
pub use lat::{DirStats, LatDist, LatStats, PrioLat, SyncStats};
pub use moments::{Moments, Summary};
pub use sample::{Sample, SampleKind, Sampler};

/// Data direction, in fio's order (`DDIR_READ`, `DDIR_WRITE`, `DDIR_TRIM`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Dir {
    /// Read.
    Read = 0,
    /// Write.
    Write = 1,
    /// Trim (discard).
    Trim = 2,
}

impl Dir {
    /// All three, in fio's order.
    pub const ALL: [Dir; 3] = [Dir::Read, Dir::Write, Dir::Trim];

    /// fio's name: `read`, `write`, `trim` (the JSON keys).
    pub fn name(self) -> &'static str {
        match self {
            Dir::Read => "read",
            Dir::Write => "write",
            Dir::Trim => "trim",
        }
    }
}

/// Everything fio reports about one job (fio's `struct thread_stat`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct JobStats {
    /// Read, write, trim; index with `Dir as usize` or [`JobStats::dir`].
    pub dirs: [DirStats; 3],
    /// fsync/fdatasync/sync_file_range.
    pub sync: SyncStats,
    /// `latency_ns/us/ms` buckets over read/write/trim completion latencies.
    pub lat_dist: LatDist,
    /// Depth, submit and complete distributions.
    pub depth: DepthStats,
    /// CPU used by the job's thread(s).
    pub cpu: CpuUsage,
    /// Wall time the job ran, ms (fio's `total_run_time`, the base of usr/sys percent);
    /// summed when merged, as fio does.
    pub total_run_time_ms: u64,
    /// Number of jobs folded in (fio's `members`; a fresh job counts 1 once it has run).
    pub members: u32,
    /// Errors continue_on_error went on after (fio's `total_err_count`).
    pub total_err: u64,
    /// The first one's errno (fio's `first_error`, 0 for none).
    pub first_error: i32,
    /// The depth a latency_target search settled on (fio's `latency_qd`); 0 = no search.
    pub latency_qd: u32,
    /// What steady-state detection saw (fio's `ss_*`), where it was on.
    pub steady: Option<SteadyStats>,
    /// zonemode=zbd: zones whose write pointer the job reset (fio's `nr_zone_resets`).
    pub zone_resets: u64,
    /// block_error_percentiles: each trim block's state and trim count ([`block`]); empty
    /// unless the job asked.
    pub block_infos: Vec<u32>,
    /// `--profile=act`: per hour-long slice, the I/Os over 1, 8 and 64 ms, then all I/Os.
    pub act_slices: Vec<[u64; 4]>,
}

/// Steady-state detection of one job (or of its group): fio's `ss_*` fields of thread_stat.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SteadyStats {
    /// The criterion fell below its limit: the job was ended there.
    pub attained: bool,
    /// The last value of the criterion (slope or deviation, in % where the limit is).
    pub criterion: f64,
    /// Largest distance of a sample from the window's mean (deviation criteria).
    pub max_deviation: f64,
    /// Least-squares slope of the window (slope criteria).
    pub slope: f64,
    /// The window's IOPS samples, oldest first.
    pub iops: Vec<u64>,
    /// The window's bandwidth samples (bytes per second), oldest first.
    pub bw: Vec<u64>,
}

impl JobStats {
    /// Empty statistics for one job.
    pub fn new() -> Self {
        Self {
            members: 1,
            ..Self::default()
        }
    }

    /// One direction.
    #[inline]
    pub fn dir(&self, d: Dir) -> &DirStats {
        &self.dirs[d as usize]
    }

    /// One direction, mutable.
    #[inline]
    pub fn dir_mut(&mut self, d: Dir) -> &mut DirStats {
        &mut self.dirs[d as usize]
    }

    /// An I/O was issued (fio counts `total_ios` when the engine accepts it).
    #[inline]
    pub fn issued(&mut self, d: Dir) {
        self.dirs[d as usize].total_ios += 1;
    }

    /// A sync was issued.
    #[inline]
    pub fn issued_sync(&mut self) {
        self.sync.total_ios += 1;
    }

    /// Submission latency of one I/O (async engines).
    #[inline]
    pub fn record_slat(&mut self, d: Dir, ns: u64) {
        self.dirs[d as usize].slat.record(ns);
    }

    /// Submission latency of one I/O, without its histogram (see [`LatStats::record_moments`]:
    /// fio fills it only for slat_percentiles).
    #[inline]
    pub fn record_slat_moments(&mut self, d: Dir, ns: u64) {
        self.dirs[d as usize].slat.record_moments(ns);
    }

    /// One I/O completed successfully with `bytes` transferred, `clat_ns` from submission and
    /// `lat_ns` from issue. Also counts it in `latency_ns/us/ms`, from clat as fio does.
    #[inline]
    pub fn record_completion(&mut self, d: Dir, bytes: u64, clat_ns: u64, lat_ns: u64) {
        let ds = &mut self.dirs[d as usize];
        ds.io_bytes += bytes;
        ds.done_ios += 1;
        ds.clat.record(clat_ns);
        ds.lat.record(lat_ns);
        self.lat_dist.mark(clat_ns);
    }

    /// As [`JobStats::record_completion`], the total latency in its moments only (see
    /// [`LatStats::record_moments`]: fio fills its histogram only for lat_percentiles).
    #[inline(always)]
    pub fn record_completion_clat_hist(&mut self, d: Dir, bytes: u64, clat_ns: u64, lat_ns: u64) {
        let ds = &mut self.dirs[d as usize];
        ds.io_bytes += bytes;
        ds.done_ios += 1;
        ds.clat.record(clat_ns);
        ds.lat.record_moments(lat_ns);
        self.lat_dist.mark(clat_ns);
    }

    /// A completion whose latencies are not measured (fio's disable_* options): the bytes and
    /// the count only.
    #[inline]
    pub fn record_done(&mut self, d: Dir, bytes: u64) {
        let ds = &mut self.dirs[d as usize];
        ds.io_bytes += bytes;
        ds.done_ios += 1;
    }

    /// A completion latency alone, with the latency buckets fio derives from it.
    #[inline]
    pub fn record_clat(&mut self, d: Dir, clat_ns: u64) {
        self.dirs[d as usize].clat.record(clat_ns);
        self.lat_dist.mark(clat_ns);
    }

    /// One sync completed after `ns`.
    #[inline]
    pub fn record_sync(&mut self, ns: u64) {
        self.sync.lat.record(ns);
    }

    /// Bytes completed per direction (what the bandwidth [`Sampler`] reads).
    #[inline]
    pub fn bytes_done(&self) -> [u64; 3] {
        [
            self.dirs[0].io_bytes,
            self.dirs[1].io_bytes,
            self.dirs[2].io_bytes,
        ]
    }

    /// I/Os completed per direction (what the IOPS [`Sampler`] reads).
    #[inline]
    pub fn ios_done(&self) -> [u64; 3] {
        [
            self.dirs[0].done_ios,
            self.dirs[1].done_ios,
            self.dirs[2].done_ios,
        ]
    }

    /// Let a bandwidth sampler and an IOPS sampler take their samples if due. Call once per
    /// completion batch; when neither is due this is two comparisons.
    /// Returns the IOPS sample when one was taken (for IOPS-over-time series and logs).
    #[inline]
    pub fn sample(&mut self, now_ns: u64, bw: &mut Sampler, iops: &mut Sampler) -> Option<Sample> {
        self.sample_both(now_ns, bw, iops)[1]
    }

    /// [`JobStats::sample`], returning the bandwidth sample too: `[bw, iops]`.
    pub fn sample_both(
        &mut self,
        now_ns: u64,
        bw: &mut Sampler,
        iops: &mut Sampler,
    ) -> [Option<Sample>; 2] {
        let mut out = [None, None];
        if bw.due(now_ns) {
            let counters = self.bytes_done();
            let [r, w, t] = &mut self.dirs;
            out[0] = bw.check(now_ns, counters, &mut [&mut r.bw, &mut w.bw, &mut t.bw]);
        }
        if iops.due(now_ns) {
            let counters = self.ios_done();
            let [r, w, t] = &mut self.dirs;
            out[1] = iops.check(
                now_ns,
                counters,
                &mut [&mut r.iops, &mut w.iops, &mut t.iops],
            );
        }
        out
    }

    /// Reads + writes + trims issued (fio's `ddir_rw_sum(total_io_u)`, the base of the
    /// `latency_*` and `iodepth_level` percentages).
    pub fn total_rw_ios(&self) -> u64 {
        self.dirs.iter().map(|d| d.total_ios).sum()
    }

    /// `latency_ns` percentages.
    pub fn latency_ns_percents(&self) -> [f64; 10] {
        LatDist::percents(&self.lat_dist.ns, self.total_rw_ios())
    }

    /// `latency_us` percentages.
    pub fn latency_us_percents(&self) -> [f64; 10] {
        LatDist::percents(&self.lat_dist.us, self.total_rw_ios())
    }

    /// `latency_ms` percentages.
    pub fn latency_ms_percents(&self) -> [f64; 12] {
        LatDist::percents(&self.lat_dist.ms, self.total_rw_ios())
    }

    /// `iodepth_level` percentages.
    pub fn iodepth_level_percents(&self) -> [f64; 7] {
        self.depth.depth_percents(self.total_rw_ios())
    }
}

/// fio's `sum_thread_stats` (without `unified_rw_reporting`): how group_reporting folds jobs.
impl AddAssign<&JobStats> for JobStats {
    fn add_assign(&mut self, rhs: &JobStats) {
        for (a, b) in self.dirs.iter_mut().zip(&rhs.dirs) {
            *a += b;
        }
        self.sync += &rhs.sync;
        self.lat_dist += &rhs.lat_dist;
        self.depth += &rhs.depth;
        self.cpu += &rhs.cpu;
        self.total_run_time_ms += rhs.total_run_time_ms;
        self.members += rhs.members;
        self.total_err += rhs.total_err;
        if self.first_error == 0 {
            self.first_error = rhs.first_error;
        }
        self.latency_qd = self.latency_qd.max(rhs.latency_qd);
        self.zone_resets += rhs.zone_resets;
        if self.steady.is_none() {
            self.steady.clone_from(&rhs.steady);
        }
        if self.block_infos.is_empty() {
            self.block_infos.clone_from(&rhs.block_infos);
        }
        if self.act_slices.len() < rhs.act_slices.len() {
            self.act_slices.resize(rhs.act_slices.len(), [0; 4]);
        }
        for (a, b) in self.act_slices.iter_mut().zip(&rhs.act_slices) {
            for (x, y) in a.iter_mut().zip(b) {
                *x += y;
            }
        }
    }
}

impl AddAssign for JobStats {
    fn add_assign(&mut self, rhs: JobStats) {
        *self += &rhs;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(seed: u64, n: u64) -> JobStats {
        let mut j = JobStats::new();
        let mut x = seed;
        for i in 0..n {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let d = if i % 4 == 0 { Dir::Write } else { Dir::Read };
            j.issued(d);
            j.depth.mark_depth(1, 1);
            j.depth.mark_submit(1);
            j.depth.mark_complete(1);
            let clat = 500 + x % 2_000_000;
            j.record_completion(d, 4096, clat, clat + 40);
            if i % 8 == 7 {
                j.issued_sync();
                j.record_sync(x % 90_000);
            }
        }
        j
    }

    #[test]
    fn group_merge_equals_one_job_doing_everything_for_counts_and_bins() {
        let (a, b) = (job(1, 3000), job(2, 2000));
        let mut g = JobStats::default();
        g += &a;
        g += &b;
        assert_eq!(g.members, 2);
        let r = g.dir(Dir::Read);
        assert_eq!(
            r.total_ios,
            a.dir(Dir::Read).total_ios + b.dir(Dir::Read).total_ios
        );
        let mut h = a.dir(Dir::Read).clat.hist.clone();
        h += &b.dir(Dir::Read).clat.hist;
        assert_eq!(r.clat.hist, h);
        assert_eq!(r.clat.samples(), h.count());
        assert_eq!(g.sync.lat.samples(), 375 + 250);
        assert_eq!(g.total_rw_ios(), 5000);
        let ns: u64 = g.lat_dist.ns.iter().sum::<u64>()
            + g.lat_dist.us.iter().sum::<u64>()
            + g.lat_dist.ms.iter().sum::<u64>();
        assert_eq!(ns, 5000);
        assert_eq!(g.iodepth_level_percents()[0], 100.0);
    }

    #[test]
    fn sampling_through_job_stats() {
        let mut j = JobStats::new();
        let mut bw = Sampler::new(SampleKind::BandwidthKib, 500, 0);
        let mut iops = Sampler::new(SampleKind::Iops, 500, 0);
        for ms in 1..=3000u64 {
            j.issued(Dir::Read);
            j.record_completion(Dir::Read, 4096, 1000, 1000);
            j.sample(ms * 1_000_000, &mut bw, &mut iops);
        }
        assert_eq!(j.dir(Dir::Read).bw.samples(), 6);
        assert_eq!(j.dir(Dir::Read).iops.samples(), 6);
        assert_eq!(j.dir(Dir::Write).bw.samples(), 0);
        // 500 I/Os of 4 KiB in 500 ms: 4000 KiB/s.
        assert_eq!(j.dir(Dir::Read).bw.min(), Some(4000));
    }
}
