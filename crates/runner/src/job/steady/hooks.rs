//! What the job loop does with steady.rs, as methods of `Runner`: kept apart so that
//! steady.rs, which the loop names, imports nothing of the loop's (issue 30).

use std::sync::atomic::Ordering;

use crate::job::Runner;

impl Runner<'_> {
    /// Samples when an interval has passed; ends the job once steady.
    #[inline]
    /// When steady-state detection next takes a sample (`u64::MAX` when it is off).
    pub(in crate::job) fn steady_due(&self) -> u64 {
        self.steady.next
    }

    pub(in crate::job) fn steady_tick(&mut self) {
        if let Some(l) = &self.steady_group {
            // Published at each tick: the group's sampler reads them at its interval.
            let c = &l.group.counts[l.me];
            c[0].store(self.stats.ios_done().iter().sum(), Ordering::Relaxed);
            c[1].store(self.stats.bytes_done().iter().sum(), Ordering::Relaxed);
            if l.group.attained.load(Ordering::Relaxed) {
                self.steady.out.attained = true;
                self.done = true;
                return;
            }
            if !l.sampler {
                return;
            }
        }
        if self.now < self.steady.next {
            return;
        }
        let (ios, bytes) = match &self.steady_group {
            Some(l) => l.group.counts.iter().fold((0, 0), |(i, b), c| {
                (
                    i + c[0].load(Ordering::Relaxed),
                    b + c[1].load(Ordering::Relaxed),
                )
            }),
            None => (
                self.stats.ios_done().iter().sum::<u64>(),
                self.stats.bytes_done().iter().sum::<u64>(),
            ),
        };
        let ss = &mut self.steady;
        let ms = (self.now.saturating_sub(ss.prev_at) / 1_000_000).max(1);
        // The figures restart at the end of ramp_time: what is below the last count is new.
        let d_ios = ios.checked_sub(ss.prev.0).unwrap_or(ios);
        let d_bytes = bytes.checked_sub(ss.prev.1).unwrap_or(bytes);
        ss.prev = (ios, bytes);
        ss.prev_at = self.now;
        ss.next = self.now + ss.interval_ns;
        if self.now < ss.ramp_end {
            return;
        }
        if ss.sample(d_ios * 1000 / ms, d_bytes * 1000 / ms) {
            self.done = true;
            if let Some(l) = &self.steady_group {
                l.group.attained.store(true, Ordering::Relaxed);
            }
        }
    }
}
