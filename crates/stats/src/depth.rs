//! I/O depth, submit and complete distributions (fio's `io_u_map`, `io_u_submit`,
//! `io_u_complete`).
//!
//! fio counts them at these points, and callers should do the same to get fio's figures:
//! - engine without `commit` (sync engines): after each `queue`, `mark_submit(1)` and
//!   `mark_complete(1)`; and when `queue` completed the I/O at once, `mark_depth(depth, 1)`.
//! - `commit` of `n` queued I/Os: `mark_depth(depth, n)` then `mark_submit(n)`.
//! - each `reap`/getevents returning `n` (also 0): `mark_complete(n)`.
//!
//! `depth` is the number of I/Os the job holds at that moment (fio's `cur_depth`, which counts
//! an I/O from the moment it is taken from the free list until it is put back).

use std::ops::AddAssign;

use crate::lat::add_arrays;

/// JSON keys of `iodepth_level`.
pub const DEPTH_KEYS: [&str; 7] = ["1", "2", "4", "8", "16", "32", ">=64"];
/// JSON keys of `iodepth_submit` and `iodepth_complete`.
pub const BATCH_KEYS: [&str; 7] = ["0", "4", "8", "16", "32", "64", ">=64"];

/// Depth and batch distributions of one job.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DepthStats {
    /// I/Os by depth at submission: 1, 2-3, 4-7, 8-15, 16-31, 32-63, >= 64 (fio's `io_u_map`).
    pub depth: [u64; 7],
    /// Submit calls by batch size: 0, 1-4, 5-8, 9-16, 17-32, 33-64, > 64 (fio's `io_u_submit`).
    pub submit: [u64; 7],
    /// Reap calls by completions returned, same buckets (fio's `io_u_complete`).
    pub complete: [u64; 7],
    /// Number of submit calls counted (fio's `total_submit`).
    pub total_submit: u64,
    /// Number of reap calls counted (fio's `total_complete`).
    pub total_complete: u64,
}

/// fio's `io_u_mark_depth` bucket for `cur_depth`. Note fio's `switch` sends 0 to the last
/// bucket through `default:`; a caller never has depth 0 at submission, and this keeps fio's map.
#[inline]
pub fn depth_bucket(cur_depth: u32) -> usize {
    // The buckets are powers of two: the bucket is log2, capped (one instruction each
    // instead of a chain of comparisons; the test below checks every value against fio's map).
    cur_depth.checked_ilog2().map_or(6, |l| l.min(6) as usize)
}

/// fio's `__io_u_mark_map` bucket for a batch of `nr`: 0, 1-4, 5-8, 9-16, 17-32, 33-64, > 64.
#[inline]
pub fn batch_bucket(nr: u32) -> usize {
    if nr == 0 {
        return 0;
    }
    // nr - 1 in 0..4 is bucket 1, then one bucket per power of two.
    ((nr - 1) | 3).ilog2().min(6) as usize
}

impl DepthStats {
    /// `nr` I/Os handed to the kernel while the job held `cur_depth` I/Os.
    #[inline]
    pub fn mark_depth(&mut self, cur_depth: u32, nr: u32) {
        self.depth[depth_bucket(cur_depth)] += u64::from(nr);
    }

    /// One submit call that handed over `nr` I/Os.
    #[inline]
    pub fn mark_submit(&mut self, nr: u32) {
        self.submit[batch_bucket(nr)] += 1;
        self.total_submit += 1;
    }

    /// One reap call that returned `nr` completions.
    #[inline]
    pub fn mark_complete(&mut self, nr: u32) {
        self.complete[batch_bucket(nr)] += 1;
        self.total_complete += 1;
    }

    /// `iodepth_level` percentages; fio divides by the reads + writes + trims issued, which is
    /// why a job with fsyncs can show more than 100% at depth 1.
    pub fn depth_percents(&self, total_rw_ios: u64) -> [f64; 7] {
        dist_percents(&self.depth, total_rw_ios)
    }

    /// `iodepth_submit` percentages.
    pub fn submit_percents(&self) -> [f64; 7] {
        dist_percents(&self.submit, self.total_submit)
    }

    /// `iodepth_complete` percentages.
    pub fn complete_percents(&self) -> [f64; 7] {
        dist_percents(&self.complete, self.total_complete)
    }
}

/// fio's `stat_calc_dist`: percent of `total`, at least 0.1 for a non-empty bucket.
pub fn dist_percents(map: &[u64; 7], total: u64) -> [f64; 7] {
    let mut out = [0.0; 7];
    if total == 0 {
        return out;
    }
    for (o, &c) in out.iter_mut().zip(map) {
        *o = c as f64 / total as f64;
        *o *= 100.0;
        if *o < 0.1 && c != 0 {
            *o = 0.1;
        }
    }
    out
}

impl AddAssign<&DepthStats> for DepthStats {
    fn add_assign(&mut self, rhs: &DepthStats) {
        add_arrays(&mut self.depth, &rhs.depth);
        add_arrays(&mut self.submit, &rhs.submit);
        add_arrays(&mut self.complete, &rhs.complete);
        self.total_submit += rhs.total_submit;
        self.total_complete += rhs.total_complete;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bucket_edges() {
        let d: Vec<_> = [1, 2, 3, 4, 7, 8, 15, 16, 31, 32, 63, 64, 1000, 0]
            .iter()
            .map(|&x| depth_bucket(x))
            .collect();
        assert_eq!(d, [0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 6]);
        let b: Vec<_> = [0, 1, 4, 5, 8, 9, 16, 17, 32, 33, 64, 65]
            .iter()
            .map(|&x| batch_bucket(x))
            .collect();
        assert_eq!(b, [0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6]);
    }

    /// fio's maps as written in io_u.c, for the closed forms above to be checked against.
    fn fio_depth(d: u32) -> usize {
        match d {
            1 => 0,
            2..=3 => 1,
            4..=7 => 2,
            8..=15 => 3,
            16..=31 => 4,
            32..=63 => 5,
            _ => 6,
        }
    }

    fn fio_batch(nr: u32) -> usize {
        match nr {
            0 => 0,
            1..=4 => 1,
            5..=8 => 2,
            9..=16 => 3,
            17..=32 => 4,
            33..=64 => 5,
            _ => 6,
        }
    }

    #[test]
    fn buckets_are_fios_for_every_value() {
        let edges = [u32::MAX - 1, u32::MAX, 1 << 31, (1 << 31) - 1];
        for v in (0..5000).chain(edges) {
            assert_eq!(depth_bucket(v), fio_depth(v), "depth {v}");
            assert_eq!(batch_bucket(v), fio_batch(v), "batch {v}");
        }
    }

    #[test]
    fn libaio_like_run() {
        // iodepth=16, batch submit 4: commits of 4 at depths 4, 8, 12, 16.
        let mut s = DepthStats::default();
        for depth in [4, 8, 12, 16] {
            s.mark_depth(depth, 4);
            s.mark_submit(4);
        }
        s.mark_complete(8);
        s.mark_complete(8);
        assert_eq!(s.depth, [0, 0, 4, 8, 4, 0, 0]);
        assert_eq!(s.depth_percents(16), [0.0, 0.0, 25.0, 50.0, 25.0, 0.0, 0.0]);
        assert_eq!(s.submit_percents(), [0.0, 100.0, 0.0, 0.0, 0.0, 0.0, 0.0]);
        assert_eq!(s.complete_percents(), [0.0, 0.0, 100.0, 0.0, 0.0, 0.0, 0.0]);
        let mut m = s;
        m += &s;
        assert_eq!(m.total_submit, 8);
        assert_eq!(m.depth[3], 16);
        assert_eq!(dist_percents(&[1, 0, 0, 0, 0, 0, 9999], 10_000)[0], 0.1);
    }
}
