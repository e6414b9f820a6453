//! Requests on their way back: handing the queued ones to the engine (one clock reading is
//! everyone's submission time), reaping (one reading is everyone's completion time), and
//! recording each completion or the error that stops the job.

use std::time::Duration;

use iolab_engine::Done;
use iolab_sys as sys;

use super::{hot, Runner, SyncAcct};
use crate::joberr::{site, JobError};

impl Runner<'_> {
    /// Hands what is queued to the kernel; one clock reading is everyone's submission time.
    #[inline(never)]
    pub(super) fn commit_queued(&mut self) -> std::io::Result<()> {
        if self.queued.is_empty() {
            return Ok(());
        }
        let n = self.queued.len() as u32;
        let depth = self.in_flight() as u32;
        // fio marks the depth before the engine's commit and the submit once it succeeded.
        self.stats.depth.mark_depth(depth, n);
        let refused = |errno| Err(std::io::Error::from_raw_os_error(errno));
        let committed = match self.eng.commit() {
            Ok(_) if self.refuses_at_commit => self.eng.take_refused().map_or(Ok(()), refused),
            Ok(_) => Ok(()),
            Err(e) => Err(e),
        };
        if let Err(e) = committed {
            // fio 3.33: a refused submission is the commit's error, which ends the job at once
            // (continue_on_error has no say), with no io_u error line.
            let name = self.eng.kind().name();
            eprintln!("iolab: {name}: the kernel refused the submission: {e}");
            self.fail(&e, format!("commit: {e}"), "io commit", site!());
            // The refused requests are back already (never in the kernel): collected now, or
            // the end of the job would wait for them.
            loop {
                let before = self.eng.in_flight();
                if before == 0 || self.reap(0, Some(self.now)).is_err() {
                    break;
                }
                if self.eng.in_flight() == before {
                    break;
                }
            }
            return Err(e);
        }
        self.stats.depth.mark_submit(n);
        if self.rec.timed {
            self.now = self.clock.now();
            for &slot in &self.queued {
                let s = &mut self.slots[slot as usize];
                s.submit_ns = self.now;
                match (s.dir, self.rec.slat, self.rec.slat_hist) {
                    (Some(d), true, true) => self.stats.record_slat(d, self.now - s.issue_ns),
                    (Some(d), true, false) => {
                        self.stats.record_slat_moments(d, self.now - s.issue_ns)
                    }
                    _ => {}
                }
            }
        }
        self.queued.clear();
        Ok(())
    }

    /// Reaps at least `min`; one clock reading is everyone's completion time. The wait is
    /// bounded so that a stop or the end of the runtime is noticed within [`STOP_POLL`].
    pub(super) fn reap(&mut self, min: usize, deadline: Option<u64>) -> std::io::Result<()> {
        let wait = Duration::from_nanos(hot::reap_wait_ns(deadline, self.now));
        let max = (self.plan.iodepth_batch_complete_max as usize).clamp(min.max(1), self.depth());
        let n = match self.eng.reap(min, max, Some(wait), &mut self.out) {
            Ok(n) => n,
            Err(e) => {
                self.fail(&e, format!("reap: {e}"), "td_io_getevents", site!());
                return Err(e);
            }
        };
        self.now = self.clock.now();
        self.stats.depth.mark_complete(n as u32);
        if self.hooks {
            self.complete_out::<true>();
        } else {
            self.complete_out::<false>();
        }
        Ok(())
    }

    /// Records what the last reap put in `out`, in order. A reap of one completion (the usual
    /// case at a low depth, or when each commit's completions are reaped at once) pops it:
    /// no draining iterator to set up and drop.
    #[inline(always)]
    fn complete_out<const H: bool>(&mut self) {
        if self.out.len() == 1 {
            if let Some(d) = self.out.pop() {
                self.complete_as::<H>(d);
            }
            return;
        }
        let mut out = std::mem::take(&mut self.out);
        for d in out.drain(..) {
            self.complete_as::<H>(d);
        }
        self.out = out;
    }

    /// Waits for everything in flight.
    pub(super) fn drain(&mut self) -> std::io::Result<()> {
        while self.in_flight() > 0 {
            let n = self.in_flight();
            self.reap(n, None)?;
        }
        Ok(())
    }

    /// Records a completion, every per-I/O hook called.
    pub(super) fn complete(&mut self, d: Done) {
        self.complete_as::<true>(d);
    }

    /// Records a completion. `H` false (no hook group active, job/hot.rs) leaves out verify,
    /// debug lines, priorities, connections, rate due times, latency control, range locks and
    /// log files.
    #[inline(always)]
    pub(super) fn complete_as<const H: bool>(&mut self, mut d: Done) {
        if H {
            self.block_done(&d);
        }
        if H && self.verify.is_some() {
            self.verify_done(&mut d);
        }
        if H && self.debug_io {
            self.debug_req("complete", &d.req);
        }
        let slot = d.req.tag as u32;
        let s = &self.slots[slot as usize];
        let (issue, submit, due, dir) = (s.issue_ns, s.submit_ns, s.due_ns, s.dir);
        if H {
            if dir.is_some() {
                self.act_done(issue);
            }
            self.record_prio(&d, dir, submit, issue);
        }
        match (&d.result, dir) {
            (Ok(0), Some(dir)) if H && self.connection && d.req.len > 0 => self.end_of_stream(dir),
            (Ok(n), Some(dir)) if !self.rec.all() => {
                self.record_some(dir, *n as u64, submit, issue);
                if *n < d.req.len {
                    self.stats.dir_mut(dir).short_ios += 1;
                }
            }
            (Ok(n), Some(dir)) => {
                let (bytes, clat, lat) = (*n as u64, self.now - submit, self.now - issue);
                if self.rec.lat_hist {
                    self.stats.record_completion(dir, bytes, clat, lat);
                } else {
                    self.stats
                        .record_completion_clat_hist(dir, bytes, clat, lat);
                }
                if H && due > 0 {
                    self.stats
                        .dir_mut(dir)
                        .due_lat
                        .record(self.now.saturating_sub(due));
                }
                if *n < d.req.len {
                    self.stats.dir_mut(dir).short_ios += 1;
                }
            }
            (Ok(_), None) => {
                if self.slots[slot as usize].sync != SyncAcct::Uncounted {
                    self.stats.record_sync(self.now - issue);
                }
            }
            (Err(e), _) if self.stopped_mid_io(e) || self.fops.device_full(e, &d.req) => {
                // Never done: not issued either, as fio puts a cancelled io_u back.
                self.uncount(slot);
            }
            (Err(_), _) => self.io_error(&d, dir),
        }
        if H {
            if let (Ok(_), Some(dir)) = (&d.result, dir) {
                self.check_latency(&d.req, dir, issue);
            }
            self.fops.done(slot);
            self.trim_order.done(slot);
            self.log_done(&d, dir, issue, submit);
        }
        self.free_slots.push(slot);
        if d.req.op.is_data() {
            self.free.push(d.req.buf);
        }
    }

    /// Whether a failed completion is I/O that a stop ended rather than an I/O error: cancelled
    /// at the end (ECANCELED), or woken out of a blocked call by the stop (EINTR, see
    /// iolab_sys::interrupt).
    pub(super) fn stopped_mid_io(&self, e: &std::io::Error) -> bool {
        match e.raw_os_error() {
            Some(libc::ECANCELED) => self.cancelled,
            Some(libc::EINTR) => sys::interrupt::woken(),
            _ => false,
        }
    }

    /// Records the error that stops the job (the first one only), with its real errno (EIO
    /// only when the error has none, as fio's default).
    pub(super) fn fail(
        &mut self,
        e: &std::io::Error,
        message: String,
        func: &'static str,
        at: &'static str,
    ) {
        if self.error.is_none() {
            self.error = Some(JobError {
                errno: iolab_engine::errno_of(e),
                message,
                func,
                site: at,
            });
        }
    }
}
