//! Bandwidth and IOPS samples (fio's `bw_avg_time` / `iops_avg_time`, `__add_samples`).
//!
//! fio's helper thread wakes about every 500 ms and, per direction that moved data since the
//! last sample, adds `delta * 1000 / spent_ms / 1024` KiB/s (or `delta * 1000 / spent_ms` IOPS)
//! to the direction's bw/iops [`Moments`]. A direction with no progress in the window adds no
//! sample, but the window still restarts.
//!
//! fio also accepts a wake-up up to 1 ms early (`LOG_MSEC_SLACK`), which only absorbs timer
//! jitter: its windows are 500-501 ms in practice. A check driven by completions is never early,
//! so here a window closes at the first check at or after the full interval. Measured against
//! fio 3.33 (null engine, rate_iops=2000, runtime=3s): fio took 5 samples of 2000-2002 IOPS; the
//! same timeline here gives 5 samples of 2000 (the sixth window would close at 3000 ms, when the
//! job has ended).
//!
//! Here the job thread does the check itself: [`Sampler::due`] is one comparison against a
//! precomputed deadline, to be called once per completion batch (and on idle wake-ups, so that a
//! stalled job still restarts its window as fio's timer thread would). Timestamps are
//! nanoseconds since any fixed origin, passed in by the caller; nothing here reads a clock.

use crate::moments::Moments;

/// fio's default `bw_avg_time` and `iops_avg_time`, in milliseconds.
pub const DEFAULT_INTERVAL_MS: u64 = 500;
const NS_PER_MS: u64 = 1_000_000;

/// What a sampler turns into a rate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SampleKind {
    /// Bytes in, KiB/s out.
    BandwidthKib,
    /// Completed I/Os in, I/Os per second out.
    Iops,
}

/// One window's rates, per direction (read, write, trim); `None` where nothing moved.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Sample {
    /// End of the window, milliseconds since the sampler's start (for bw/iops logs).
    pub elapsed_ms: u64,
    /// Length of the window in milliseconds as fio measured it.
    pub spent_ms: u64,
    /// The rate added to each direction's moments, if any.
    pub rate: [Option<u64>; 3],
}

/// Turns cumulative per-direction counters into periodic rate samples.
#[derive(Clone, Debug)]
pub struct Sampler {
    kind: SampleKind,
    interval_ms: u64,
    start_ns: u64,
    last_ns: u64,
    deadline_ns: u64,
    last: [u64; 3],
}

impl Sampler {
    /// A sampler whose first window starts at `start_ns` with all counters at 0.
    /// An interval of 0 is taken as 1 ms.
    pub fn new(kind: SampleKind, interval_ms: u64, start_ns: u64) -> Self {
        let interval_ms = interval_ms.max(1);
        Self {
            kind,
            interval_ms,
            start_ns,
            last_ns: start_ns,
            deadline_ns: Self::deadline(start_ns, interval_ms),
            last: [0; 3],
        }
    }

    fn deadline(from_ns: u64, interval_ms: u64) -> u64 {
        from_ns.saturating_add(interval_ms.saturating_mul(NS_PER_MS))
    }

    /// Is a sample due at `now_ns`? One comparison.
    #[inline(always)]
    pub fn due(&self, now_ns: u64) -> bool {
        now_ns >= self.deadline_ns
    }

    /// When the current window closes: nothing is due before it, so a caller can skip
    /// [`Sampler::check`] (and everything else it does per window) until then.
    #[inline]
    pub fn deadline_ns(&self) -> u64 {
        self.deadline_ns
    }

    /// If due, close the window: add a rate sample to `out[dir]` for each direction whose
    /// counter (cumulative bytes or completed I/Os, per direction) moved, and start the next
    /// window at `now_ns`. Returns what was added, or `None` when not due.
    #[inline]
    pub fn check(
        &mut self,
        now_ns: u64,
        counters: [u64; 3],
        out: &mut [&mut Moments; 3],
    ) -> Option<Sample> {
        if !self.due(now_ns) {
            return None;
        }
        Some(self.take(now_ns, counters, out))
    }

    #[cold]
    fn take(&mut self, now_ns: u64, counters: [u64; 3], out: &mut [&mut Moments; 3]) -> Sample {
        let spent = now_ns.saturating_sub(self.last_ns) / NS_PER_MS;
        let mut sample = Sample {
            elapsed_ms: now_ns.saturating_sub(self.start_ns) / NS_PER_MS,
            spent_ms: spent,
            rate: [None; 3],
        };
        for dir in 0..3 {
            let delta = counters[dir].wrapping_sub(self.last[dir]);
            if delta == 0 {
                continue;
            }
            let rate = if spent == 0 {
                0
            } else {
                let per_s = u128::from(delta) * 1000 / u128::from(spent);
                let r = match self.kind {
                    SampleKind::BandwidthKib => per_s / 1024,
                    SampleKind::Iops => per_s,
                };
                u64::try_from(r).unwrap_or(u64::MAX)
            };
            out[dir].add(rate);
            sample.rate[dir] = Some(rate);
            self.last[dir] = counters[dir];
        }
        self.last_ns = now_ns;
        self.deadline_ns = Self::deadline(now_ns, self.interval_ms);
        sample
    }

    /// The configured interval in milliseconds.
    pub fn interval_ms(&self) -> u64 {
        self.interval_ms
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = NS_PER_MS;

    fn run(kind: SampleKind, step_ns: u64, end_ns: u64, per_step: u64) -> (Moments, u64) {
        let mut s = Sampler::new(kind, 500, 0);
        let (mut r, mut w, mut t) = (Moments::new(), Moments::new(), Moments::new());
        let mut reads = 0;
        let mut checks = 0;
        let mut now = 0;
        while now < end_ns {
            now += step_ns;
            reads += per_step;
            if s.check(now, [reads, 0, 0], &mut [&mut r, &mut w, &mut t])
                .is_some()
            {
                checks += 1;
            }
        }
        assert_eq!(w.samples(), 0, "no write sample without writes");
        (r, checks)
    }

    #[test]
    fn one_sample_per_half_second() {
        // Completions every 100 us for 10 s: samples at 0.5 s, 1.0 s, ... 10 s.
        let (r, checks) = run(SampleKind::BandwidthKib, 100_000, 10_000 * MS, 4096);
        assert_eq!(checks, 20);
        assert_eq!(r.samples(), 20);
        // 5000 I/Os of 4096 B per 500 ms window = 40960000 B/s = 40000 KiB/s.
        assert_eq!(r.min(), Some(40_000));
        assert_eq!(r.max(), Some(40_000));
    }

    #[test]
    fn iops_samples() {
        // One I/O per ms for 2 s: windows of 500 ms with 500 I/Os -> 1000 IOPS.
        let (r, checks) = run(SampleKind::Iops, MS, 2000 * MS, 1);
        assert_eq!(checks, 4);
        // Ending just before the 2 s mark leaves the last window open, as fio does.
        let (_, checks) = run(SampleKind::Iops, MS, 1999 * MS, 1);
        assert_eq!(checks, 3);
        assert_eq!(r.min(), Some(1000));
        assert_eq!(r.max(), Some(1000));
    }

    #[test]
    fn same_sample_count_as_fio_for_a_3s_rate_limited_run() {
        // fio 3.33, null engine, rate_iops=2000, runtime=3: iops_samples=5, 2000-2002.
        // Completions every 0.5 ms, the last before the 3 s mark.
        let (r, checks) = run(SampleKind::Iops, MS / 2, 3000 * MS - MS / 2, 1);
        assert_eq!(checks, 5);
        assert_eq!((r.min(), r.max()), (Some(2000), Some(2000)));
    }

    #[test]
    fn idle_window_adds_no_sample_but_restarts() {
        let mut s = Sampler::new(SampleKind::Iops, 500, 0);
        let mut m = [Moments::new(), Moments::new(), Moments::new()];
        let [a, b, c] = &mut m;
        assert!(s.check(100 * MS, [5, 0, 0], &mut [a, b, c]).is_none());
        let got = s.check(600 * MS, [5, 0, 0], &mut [a, b, c]).unwrap();
        assert_eq!(got.rate, [Some(8), None, None]); // 5 * 1000 / 600
        let got = s.check(1200 * MS, [5, 0, 0], &mut [a, b, c]).unwrap();
        assert_eq!(got.rate, [None, None, None]);
        assert_eq!(got.spent_ms, 600);
        assert_eq!(m[0].samples(), 1);
    }
}
