//! What the job loop does with pacing.rs, as methods of `Runner`: kept apart so that
//! pacing.rs, which the loop names, imports nothing of the loop's (issue 30).

use std::time::Duration;

use crate::job::types::Stops;
use crate::job::Runner;

impl Runner<'_> {
    /// fio's handle_thinktime test, after an I/O was queued: whether to think now.
    #[inline]
    pub(in crate::job) fn think_due(&mut self) -> bool {
        let s = &self.plan.spec;
        let iotime = s.thinktime_iotime.as_nanos() as u64;
        if iotime > 0 {
            if self.now.saturating_sub(self.thought.at) >= iotime + s.thinktime.as_nanos() as u64 {
                return true;
            }
            // thinktime_blocks counts only where it was set (its default 1 would think after
            // every I/O).
            if s.thinktime_blocks == 0 {
                return false;
            }
        }
        let b: u64 = if s.thinktime_blocks_issue {
            self.stats.dirs.iter().map(|d| d.total_ios).sum()
        } else {
            self.stats.ios_done().iter().sum()
        };
        // The figures restart after ramp_time.
        let last = if b < self.thought.blocks {
            0
        } else {
            self.thought.blocks
        };
        b >= last + u64::from(s.thinktime_blocks.max(1))
    }

    /// Completes what is in flight, thinks, and notes when; with rate_ignore_thinktime the
    /// rate's schedule moves on by the time spent, so no burst catches up on it.
    pub(in crate::job) fn think_now(&mut self, stop: &Stops<'_>) -> std::io::Result<()> {
        self.commit()?;
        self.drain()?;
        let before = self.now;
        self.think(stop);
        let spent = self.now.saturating_sub(before);
        if self.rate_limited && self.plan.spec.rate_ignore_thinktime {
            for d in &mut self.next_due {
                *d += spent;
            }
        }
        let s = &self.plan.spec;
        self.thought.blocks = if s.thinktime_blocks_issue {
            self.stats.dirs.iter().map(|d| d.total_ios).sum()
        } else {
            self.stats.ios_done().iter().sum()
        };
        self.thought.at = self.now;
        Ok(())
    }

    /// Whether thinktime is on at all.
    #[inline]
    pub(in crate::job) fn thinks(&self) -> bool {
        self.plan.thinktime > Duration::ZERO
    }
}
