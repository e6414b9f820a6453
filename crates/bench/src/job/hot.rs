//! What keeps per-batch work out of the per-I/O path: the loop's periodic duties (bandwidth
//! and IOPS samples, the rate_min check, the status line) share one deadline, so between two
//! of them a completion costs one comparison instead of one per duty.
//!
//! A hook that does something every N milliseconds joins in by adding its own next due time
//! to [`Runner::next_tick_at`]; one that runs per I/O belongs behind a single flag of its own.

use std::sync::atomic::Ordering;

use super::{Runner, STOP_POLL};

impl Runner<'_> {
    /// After each completion (sync) or reap: the status snapshot when another thread asked
    /// for one, and the periodic duties when one is due. Inlined: two comparisons.
    #[inline(always)]
    pub(super) fn tick(&mut self) {
        if self.progress.want_snapshot.load(Ordering::Relaxed) {
            self.snapshot();
        }
        if self.now >= self.next_tick {
            self.tick_due();
        }
    }

    /// Hands what is queued to the engine, if anything is (the loop commits after every fill,
    /// often with nothing new).
    #[inline(always)]
    pub(super) fn commit(&mut self) -> std::io::Result<()> {
        if self.queued.is_empty() {
            return Ok(());
        }
        self.commit_queued()
    }

    /// The earliest time anything in `tick` is due (the status snapshot, asked for by another
    /// thread, is looked at on every tick regardless).
    pub(super) fn next_tick_at(&self) -> u64 {
        let mut t = self
            .bw
            .deadline_ns()
            .min(self.iops.deadline_ns())
            .min(self.next_publish);
        if self.has_min_rate {
            t = t.min(self.min_check_at);
        }
        t.min(self.logs_due())
            .min(self.steady_due())
            .min(self.latency_due())
    }
}

/// How long a reap may wait, in ns: [`STOP_POLL`], or less up to the deadline, but at least
/// 100 µs (integer arithmetic: this runs once per reap).
#[inline]
pub(super) fn reap_wait_ns(deadline: Option<u64>, now: u64) -> u64 {
    let poll = STOP_POLL.as_nanos() as u64;
    match deadline {
        Some(d) => d.saturating_sub(now).clamp(100_000, poll),
        None => poll,
    }
}
