//! Latency and per-direction statistics: fio's slat/clat/lat, io counts, bw/iops samples and
//! the coarse `latency_ns/us/ms` distribution.

use std::ops::AddAssign;

use crate::hist::Histogram;
use crate::moments::Moments;

/// One latency kind (slat, clat, lat or sync) of one direction: fio's `io_stat` plus its
/// `io_u_plat` histogram.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LatStats {
    /// min/max/mean/stddev.
    pub moments: Moments,
    /// fio's log-linear histogram, for percentiles and json+ bins.
    pub hist: Histogram,
}

impl LatStats {
    /// Empty.
    pub fn new() -> Self {
        Self::default()
    }

    /// Record one latency in nanoseconds.
    #[inline]
    pub fn record(&mut self, ns: u64) {
        self.hist.record(ns);
        self.moments.add(ns);
    }

    /// Record one latency in the moments only: fio fills the histograms of slat and lat only
    /// for slat_percentiles and lat_percentiles (nothing else reads them), and a histogram
    /// bucket costs ~20 instructions per I/O.
    #[inline]
    pub fn record_moments(&mut self, ns: u64) {
        self.moments.add(ns);
    }

    /// Number of latencies recorded.
    pub fn samples(&self) -> u64 {
        self.moments.samples()
    }

    /// Percentiles as fio prints them, over `moments.samples()` (fio's choice of `nr`).
    pub fn percentiles(&self, list: &[f64]) -> Vec<(f64, u64)> {
        self.hist.percentiles_of(list, self.moments.samples())
    }
}

impl AddAssign<&LatStats> for LatStats {
    fn add_assign(&mut self, rhs: &LatStats) {
        self.moments += &rhs.moments;
        self.hist += &rhs.hist;
    }
}

/// Upper bounds (exclusive) of fio's `io_u_lat_n` and `io_u_lat_u` buckets, and their JSON keys.
pub const LAT_NU_KEYS: [&str; 10] = [
    "2", "4", "10", "20", "50", "100", "250", "500", "750", "1000",
];
/// JSON keys of fio's `io_u_lat_m` buckets.
pub const LAT_M_KEYS: [&str; 12] = [
    "2", "4", "10", "20", "50", "100", "250", "500", "750", "1000", "2000", ">=2000",
];

/// fio's `latency_ns` / `latency_us` / `latency_ms` counters (`io_u_lat_n/u/m`): completion
/// latencies of reads, writes and trims in coarse decimal buckets, per job.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LatDist {
    /// Under 1 µs: 0-1, 2-3, 4-9, 10-19, 20-49, 50-99, 100-249, 250-499, 500-749, 750-999 ns.
    pub ns: [u64; 10],
    /// 1 µs to under 1 ms, same bounds in µs.
    pub us: [u64; 10],
    /// From 1 ms, same bounds in ms then 1000-1999 and >= 2000.
    pub ms: [u64; 12],
}

/// Bucket of a value in fio's 1-2-4-10-20-50-100-250-500-750-1000-2000 scheme, by bisection:
/// four comparisons rather than up to eleven (this runs for every I/O).
#[inline]
fn decimal_bucket(v: u64) -> usize {
    if v < 50 {
        if v < 4 {
            usize::from(v >= 2)
        } else if v < 10 {
            2
        } else if v < 20 {
            3
        } else {
            4
        }
    } else if v < 500 {
        if v < 100 {
            5
        } else if v < 250 {
            6
        } else {
            7
        }
    } else if v < 1000 {
        if v < 750 {
            8
        } else {
            9
        }
    } else if v < 2000 {
        10
    } else {
        11
    }
}

impl LatDist {
    /// Count one completion latency (fio's `io_u_mark_latency`).
    #[inline]
    pub fn mark(&mut self, ns: u64) {
        if ns < 1_000 {
            self.ns[decimal_bucket(ns)] += 1;
        } else if ns < 1_000_000 {
            self.us[decimal_bucket(ns / 1_000)] += 1;
        } else {
            self.ms[decimal_bucket(ns / 1_000_000)] += 1;
        }
    }

    /// Percentages as fio prints them (`stat_calc_lat`): relative to `total` (fio uses the
    /// number of reads + writes + trims issued), and at least 0.01 for a non-empty bucket.
    pub fn percents<const N: usize>(counts: &[u64; N], total: u64) -> [f64; N] {
        let mut out = [0.0; N];
        if total == 0 {
            return out;
        }
        for (o, &c) in out.iter_mut().zip(counts) {
            *o = c as f64 / total as f64 * 100.0;
            if *o < 0.01 && c != 0 {
                *o = 0.01;
            }
        }
        out
    }
}

impl AddAssign<&LatDist> for LatDist {
    fn add_assign(&mut self, rhs: &LatDist) {
        add_arrays(&mut self.ns, &rhs.ns);
        add_arrays(&mut self.us, &rhs.us);
        add_arrays(&mut self.ms, &rhs.ms);
    }
}

pub(crate) fn add_arrays<const N: usize>(a: &mut [u64; N], b: &[u64; N]) {
    for (x, y) in a.iter_mut().zip(b) {
        *x += *y;
    }
}

/// Everything fio reports for one direction (read, write or trim) of a job.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DirStats {
    /// Bytes transferred (fio's `io_bytes`).
    pub io_bytes: u64,
    /// I/Os issued (fio's `total_io_u`, JSON `total_ios`): counted when queued.
    pub total_ios: u64,
    /// I/Os completed successfully (fio's `io_blocks`; drives the IOPS samples).
    pub done_ios: u64,
    /// Short I/Os (JSON `short_ios`).
    pub short_ios: u64,
    /// Dropped I/Os (JSON `drop_ios`).
    pub drop_ios: u64,
    /// Time this direction ran, in milliseconds (fio's `runtime`); merged as the maximum.
    pub runtime_ms: u64,
    /// Submission latency (async engines only).
    pub slat: LatStats,
    /// Completion latency: submission to completion.
    pub clat: LatStats,
    /// Total latency: issue to completion.
    pub lat: LatStats,
    /// Under a rate limit: from when the I/O was due to completion (iolab's addition; it
    /// includes the time an I/O waited because the job fell behind its schedule, which `lat`,
    /// counted from issue, leaves out). Empty without a rate limit.
    pub due_lat: LatStats,
    /// Per I/O priority (fio's `clat_prio`, under the cmdprio options): the completion (or,
    /// with lat_percentiles, total) latency of the I/Os of each priority. Entry 0 is the
    /// job's own priority; empty without cmdprio.
    pub prios: Vec<PrioLat>,
    /// Bandwidth samples in KiB/s.
    pub bw: Moments,
    /// IOPS samples.
    pub iops: Moments,
}

impl DirStats {
    /// Empty.
    pub fn new() -> Self {
        Self::default()
    }

    /// Bandwidth over the run in bytes/s as fio computes it: `1000 * io_bytes / runtime_ms`
    /// (integer division), 0 without runtime.
    pub fn bw_bytes(&self) -> u64 {
        if self.runtime_ms == 0 {
            0
        } else {
            (u128::from(self.io_bytes) * 1000 / u128::from(self.runtime_ms)) as u64
        }
    }

    /// Bandwidth in KiB/s as fio's JSON `bw`: `bw_bytes / 1024`.
    pub fn bw_kib(&self) -> u64 {
        self.bw_bytes() / 1024
    }

    /// IOPS as fio's JSON `iops`: `1000.0 * total_ios / runtime_ms`.
    pub fn iops(&self) -> f64 {
        if self.runtime_ms == 0 {
            0.0
        } else {
            1000.0 * self.total_ios as f64 / self.runtime_ms as f64
        }
    }
}

/// fio's `sum_thread_stats` for one direction: latencies pooled, bw/iops samples added (the
/// group's bandwidth is the sum of its members'), counts added, runtime the longest.
impl AddAssign<&DirStats> for DirStats {
    fn add_assign(&mut self, rhs: &DirStats) {
        self.io_bytes += rhs.io_bytes;
        self.total_ios += rhs.total_ios;
        self.done_ios += rhs.done_ios;
        self.short_ios += rhs.short_ios;
        self.drop_ios += rhs.drop_ios;
        self.runtime_ms = self.runtime_ms.max(rhs.runtime_ms);
        self.slat += &rhs.slat;
        self.clat += &rhs.clat;
        self.lat += &rhs.lat;
        self.due_lat += &rhs.due_lat;
        for p in &rhs.prios {
            match self.prios.iter_mut().find(|q| q.ioprio == p.ioprio) {
                Some(q) => q.lat += &p.lat,
                None => self.prios.push(p.clone()),
            }
        }
        self.bw.sum_pure(&rhs.bw);
        self.iops.sum_pure(&rhs.iops);
    }
}

/// The latencies of the I/Os of one priority.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PrioLat {
    /// The priority as the kernel encodes it (class << 13 | level).
    pub ioprio: u16,
    /// Their latencies.
    pub lat: LatStats,
}

/// fio's `sync` object: fsync/fdatasync/sync_file_range latencies.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SyncStats {
    /// Syncs issued (fio's `total_io_u[DDIR_SYNC]`, JSON `sync.total_ios`).
    pub total_ios: u64,
    /// Their latencies (JSON `sync.lat_ns`).
    pub lat: LatStats,
}

impl AddAssign<&SyncStats> for SyncStats {
    fn add_assign(&mut self, rhs: &SyncStats) {
        self.total_ios += rhs.total_ios;
        self.lat += &rhs.lat;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lat_dist_bucket_edges() {
        let mut d = LatDist::default();
        for ns in [0, 1, 2, 3, 4, 9, 10, 999] {
            d.mark(ns);
        }
        assert_eq!(d.ns, [2, 2, 2, 1, 0, 0, 0, 0, 0, 1]);
        for ns in [1_000, 1_999, 2_000, 999_999] {
            d.mark(ns);
        }
        assert_eq!(d.us, [2, 1, 0, 0, 0, 0, 0, 0, 0, 1]);
        for ns in [
            1_000_000,
            2_000_000,
            999_999_999,
            1_000_000_000,
            1_999_999_999,
            u64::MAX,
        ] {
            d.mark(ns);
        }
        assert_eq!(d.ms, [1, 1, 0, 0, 0, 0, 0, 0, 0, 1, 2, 1]);
    }

    #[test]
    fn lat_dist_percents_have_fio_floor() {
        let p = LatDist::percents(&[1, 0, 74_999], 100_000);
        assert_eq!(p[..2], [0.01, 0.0]);
        assert!((p[2] - 74.999).abs() < 1e-9);
        assert_eq!(LatDist::percents(&[3u64; 2], 0), [0.0; 2]);
    }

    #[test]
    fn dir_stats_merge_like_fio() {
        let mut a = DirStats {
            io_bytes: 4096,
            total_ios: 1,
            runtime_ms: 10,
            ..DirStats::default()
        };
        a.clat.record(100);
        a.bw.add(1000);
        let mut b = DirStats {
            io_bytes: 8192,
            total_ios: 2,
            runtime_ms: 30,
            ..DirStats::default()
        };
        b.clat.record(300);
        b.clat.record(500);
        b.bw.add(3000);
        a += &b;
        assert_eq!((a.io_bytes, a.total_ios, a.runtime_ms), (12288, 3, 30));
        assert_eq!(a.clat.samples(), 3);
        assert_eq!(a.clat.moments.mean(), 300.0);
        assert_eq!(a.bw.mean(), 4000.0);
        assert_eq!(a.bw_bytes(), 409_600);
        assert_eq!(a.bw_kib(), 400);
        assert_eq!(a.iops(), 100.0);
    }

    /// The bisection gives fio's buckets: each bound starts the next one.
    #[test]
    fn decimal_bucket_matches_fios_bounds() {
        let bounds = [0u64, 2, 4, 10, 20, 50, 100, 250, 500, 750, 1000, 2000];
        for v in 0..5000u64 {
            let want = bounds.iter().rposition(|&b| v >= b).unwrap();
            assert_eq!(decimal_bucket(v), want, "{v}");
        }
        assert_eq!(decimal_bucket(u64::MAX), 11);
    }
}
