//! Pacing around thinktime and rate limits: `thinktime_blocks_type` (count issued or completed
//! I/Os towards thinktime_blocks), `thinktime_iotime` (think after this long doing I/O),
//! `rate_ignore_thinktime` (no catch-up after thinking) and `rate_cycle` (the window rate_min
//! is judged over), as fio's handle_thinktime and check_min_rate.

use std::time::Duration;

use iolab_workload::JobPlan;

use super::{Runner, Stops};

/// When the job last thought: the block count and the time then.
pub(super) struct ThinkState {
    blocks: u64,
    at: u64,
}

impl ThinkState {
    /// Not thought yet: I/O time counts from `now`, the job's start.
    pub(super) fn since(now: u64) -> ThinkState {
        ThinkState { blocks: 0, at: now }
    }
}

/// rate_cycle in ns.
pub(super) fn rate_cycle_ns(plan: &JobPlan) -> u64 {
    plan.spec.rate_cycle.max(1).saturating_mul(1_000_000)
}

/// Whether a minimum rate (rate_min, rate_iops_min) is set for any direction.
pub(super) fn has_min_rate(plan: &JobPlan) -> bool {
    plan.rate
        .min_bytes_per_sec
        .iter()
        .chain(&plan.rate.min_iops)
        .any(|&v| v > 0)
}

impl Runner<'_> {
    /// fio's handle_thinktime test, after an I/O was queued: whether to think now.
    #[inline]
    pub(super) fn think_due(&mut self) -> bool {
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
    pub(super) fn think_now(&mut self, stop: &Stops<'_>) -> std::io::Result<()> {
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
    pub(super) fn thinks(&self) -> bool {
        self.plan.thinktime > Duration::ZERO
    }
}
