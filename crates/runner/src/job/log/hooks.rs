//! What the job loop does with log.rs, as methods of `Runner`: kept apart so that
//! log.rs, which the loop names, imports nothing of the loop's (issue 30).

use std::sync::atomic::Ordering;

use iolab_stats::Dir;

use super::Logs;
use crate::job::Runner;

impl Runner<'_> {
    /// The job's logs, their time 0 now (or at the end of the ramp).
    pub(in crate::job) fn attach_logs(&mut self, logs: Option<Box<Logs>>) {
        self.logs = logs;
        // --bandwidth-log writes no line while a job ramps (job/log/agg.rs).
        let ramping = self.ramping;
        self.progress.ramping.store(ramping, Ordering::Relaxed);
        let (now, sync) = (self.now, self.eng.caps().sync_only);
        if let Some(l) = &mut self.logs {
            // fio records slat only for I/O that was queued, never for a synchronous engine.
            l.slat_on &= !sync;
            l.start(now);
        }
    }

    /// After the ramp: the logs start again from now.
    pub(in crate::job) fn restart_logs(&mut self) {
        self.progress.ramping.store(false, Ordering::Relaxed);
        let now = self.now;
        if let Some(l) = &mut self.logs {
            l.start(now);
        }
    }

    /// A completion, logged if it did I/O and the ramp is over.
    #[inline]
    pub(in crate::job) fn log_done(
        &mut self,
        d: &iolab_engine::Done,
        dir: Option<Dir>,
        issue: u64,
        submit: u64,
    ) {
        let (Some(l), Ok(n), Some(dir), false) = (&mut self.logs, &d.result, dir, self.ramping)
        else {
            return;
        };
        let rec = [self.rec.clat, self.rec.lat, self.rec.slat && l.slat_on];
        l.done(
            &mut self.stats,
            dir,
            *n as u64,
            d.req.offset,
            [issue, submit, self.now],
            rec,
            d.req.ioprio,
        );
    }

    /// Rate samples and flushes; called with the loop's tick.
    #[inline]
    pub(in crate::job) fn log_tick(&mut self) {
        if let (Some(l), false) = (&mut self.logs, self.ramping) {
            l.tick(&self.stats, self.now, self.sample_until);
        }
    }

    /// When the logs next have something to do (`u64::MAX`: never; not while ramping).
    pub(in crate::job) fn logs_due(&self) -> u64 {
        match (&self.logs, self.ramping) {
            (Some(l), false) => l.next_due(),
            _ => u64::MAX,
        }
    }

    /// The job's end (also after a stop or an error).
    pub(in crate::job) fn finish_logs(&mut self) {
        let now = self.clock.now();
        if let Some(l) = &mut self.logs {
            l.finish(now);
        }
    }
}
