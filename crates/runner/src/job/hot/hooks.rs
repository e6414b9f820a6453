//! What the job loop does with hot.rs, as methods of `Runner`: kept apart so that
//! hot.rs, which the loop names, imports nothing of the loop's (issue 30).

use std::sync::atomic::Ordering;

use crate::job::Runner;

impl Runner<'_> {
    /// Whether any per-I/O hook group is active, decided once when the run starts: the loop's
    /// variant with `H` true calls them, the one with `H` false is the plain loop.
    pub(in crate::job) fn hooks_wanted(&self) -> bool {
        let (plan, b) = (self.plan, &self.plan.buffers);
        // The buffer options act on writes only (scramble_buffers is on by default, as fio's).
        let writes = plan.pattern.has(iolab_workload::Dir::Write) || plan.replay.is_some();
        let fills = writes && (b.dedupe_percentage > 0 || b.refill || b.scramble);
        let issue = self.flow.is_some()
            || self.fops.active()
            || self.finishes
            || self.iolog.on()
            || plan.fsync_every > 0
            || plan.fdatasync_every > 0
            || self.sync_range.active()
            || fills
            || self.cmdprio.is_some()
            || self.rate_limited
            || self.thinks()
            || crate::job::openfiles::open_at_start(plan) < plan.files.len();
        let complete = self.connection
            || self.lat.on
            || self.logs.is_some()
            || self.blocks.is_some()
            || self.act.is_some()
            || self.trim_order.active();
        issue || complete || self.verify.is_some() || self.debug_io
    }

    /// After each completion (sync) or reap: the status snapshot when another thread asked
    /// for one, and the periodic duties when one is due. Inlined: two comparisons.
    #[inline(always)]
    pub(in crate::job) fn tick(&mut self) {
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
    pub(in crate::job) fn commit(&mut self) -> std::io::Result<()> {
        if self.queued.is_empty() {
            return Ok(());
        }
        self.commit_queued()
    }

    /// The earliest time anything in `tick` is due (the status snapshot, asked for by another
    /// thread, is looked at on every tick regardless).
    pub(in crate::job) fn next_tick_at(&self) -> u64 {
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
