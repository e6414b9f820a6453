//! What the job loop does with offload.rs, as methods of `Runner`: kept apart so that
//! offload.rs, which the loop names, imports nothing of the loop's (issue 30).

use std::io;
use std::sync::atomic::Ordering;
use std::sync::mpsc::{RecvTimeoutError, TryRecvError};
use std::time::Duration;

use super::{gone, Back, Pool, Turn};
use crate::job::types::{Stops, STOP_GRACE, STOP_POLL};
use crate::job::{hot, Runner};
use crate::joberr::site;

impl Runner<'_> {
    /// The job's I/O through a submitter pool: the loop, then the end as the inline loop's
    /// (syncs at the end and the verify phase run on the job's own engine).
    pub(in crate::job) fn run_offloaded(&mut self, stop: &Stops<'_>) -> io::Result<()> {
        let plan = self.plan;
        let ramp_end = self.t0 + plan.ramp_time.as_nanos() as u64;
        let mut t = Turn {
            ramp_end,
            deadline: plan.runtime.map(|r| ramp_end + r.as_nanos() as u64),
            gen_done: false,
        };
        self.sample_until = t.deadline.unwrap_or(u64::MAX);
        self.iolog_start()?;
        if self.verify_only(stop)? {
            return Ok(());
        }
        let Some(mut pool) = self.offload.pool.take() else {
            return Err(io::Error::other("io_submit_mode=offload: no submitters"));
        };
        let looped = self.offload_loop(&mut pool, &mut t, stop);
        let ended = self.offload_end(&mut pool, &mut t, stop);
        let (calls, cpu) = pool.shutdown(plan);
        self.offload.syscalls = calls;
        self.offload.cpu = cpu;
        looped.and(ended)?;
        if stop.is_set() {
            return Ok(());
        }
        if plan.end_fsync || plan.fsync_on_close {
            self.sync_all_files()?;
        }
        self.verify_phase(stop)
    }

    fn offload_loop(&mut self, pool: &mut Pool, t: &mut Turn, stop: &Stops<'_>) -> io::Result<()> {
        loop {
            let past = t.deadline.is_some_and(|d| self.now >= d);
            if stop.is_set() || past || self.error.is_some() || self.done {
                return Ok(());
            }
            if self.ramping && self.now >= t.ramp_end {
                self.end_ramp();
            }
            let due = self.hand_out(pool, t, stop)?;
            if t.gen_done && pool.busy() == 0 && self.pending.is_none() {
                return Ok(());
            }
            let until = match (t.deadline, due) {
                (Some(d), Some(w)) => Some(d.min(w)),
                (d, w) => d.or(w),
            };
            if pool.busy() > 0 {
                let full = self.in_flight() >= self.qd() || self.pending.is_some() || t.gen_done;
                self.take_back(pool, full, until)?;
            } else if let Some(u) = until.filter(|_| due.is_some()) {
                // Nothing out and the next request not yet due: sleep to it, in slices so a
                // stop is noticed.
                let left = u
                    .saturating_sub(self.clock.now())
                    .min(STOP_POLL.as_nanos() as u64);
                std::thread::sleep(Duration::from_nanos(left));
                self.now = self.clock.now();
            } else {
                self.now = self.clock.now();
            }
            self.tick();
        }
    }

    /// Makes requests and hands them out up to the depth; returns when the pending one is due
    /// when a rate limit holds it.
    fn hand_out(
        &mut self,
        pool: &mut Pool,
        t: &mut Turn,
        stop: &Stops<'_>,
    ) -> io::Result<Option<u64>> {
        while self.in_flight() < self.qd() || self.pending.is_some() {
            if self.rec.timed {
                // fio's start_time, read by the job thread as it makes the request.
                self.now = self.clock.now();
            }
            let req = match self.pending.take() {
                Some(r) => r,
                None => {
                    if self.flow_held(stop) {
                        break;
                    }
                    // The end of a loop and sync_file_range act on the files with nothing
                    // in flight.
                    let looped = self.each_loop.due(self.gen.pass());
                    if looped || self.sync_range.due() {
                        self.collect_all(pool)?;
                    }
                    let Some(r) = self.next_logged() else {
                        t.gen_done = true;
                        break;
                    };
                    if looped {
                        pool.map_files(&self.files);
                    }
                    r
                }
            };
            if self.fops.must_wait(&req) {
                self.pending = Some(req);
                break;
            }
            let slot = req.tag as usize;
            if self.rate_limited {
                let due = self.slots[slot].due_ns;
                if due > self.now {
                    self.now = self.clock.now();
                }
                if due > self.now {
                    self.pending = Some(req);
                    return Ok(Some(due));
                }
                self.slots[slot].issue_ns = self.now;
            }
            if self.debug_io {
                self.debug_new_req(&req);
            }
            self.fops.before_queue(&req);
            let sent = pool.send(req);
            self.fops.after_queue();
            sent?;
            if self.thinks() && self.think_due() {
                self.collect_all(pool)?;
                self.think_now(stop)?;
                break;
            }
        }
        Ok(None)
    }

    /// Takes back what the submitters have done, waiting for the first when `block` (at most
    /// until `until`, and [`STOP_POLL`]).
    fn take_back(&mut self, pool: &mut Pool, block: bool, until: Option<u64>) -> io::Result<()> {
        let first = if block {
            let wait = Duration::from_nanos(hot::reap_wait_ns(until, self.now));
            match pool.from.recv_timeout(wait) {
                Ok(b) => b,
                Err(RecvTimeoutError::Timeout) => {
                    self.now = self.clock.now();
                    // A submitter that ended with a request (it panicked) never answers.
                    return if pool.lost() { Err(gone()) } else { Ok(()) };
                }
                Err(RecvTimeoutError::Disconnected) => return Err(gone()),
            }
        } else {
            match pool.from.try_recv() {
                Ok(b) => b,
                Err(TryRecvError::Empty) => return Ok(()),
                Err(TryRecvError::Disconnected) => return Err(gone()),
            }
        };
        self.now = self.clock.now();
        self.back(pool, first);
        while let Ok(b) = pool.from.try_recv() {
            self.back(pool, b);
        }
        Ok(())
    }

    /// Waits until every submitter is idle.
    fn collect_all(&mut self, pool: &mut Pool) -> io::Result<()> {
        while pool.busy() > 0 {
            self.take_back(pool, true, None)?;
        }
        Ok(())
    }

    /// One request back: its times become the submitter's, shifted to now.
    fn back(&mut self, pool: &mut Pool, b: Back) {
        let (worker, done, submit, end, queued) = match b {
            Back::Done {
                worker,
                done,
                submit,
                end,
                queued,
            } => (worker, done, submit, end, queued),
            Back::Failed {
                worker,
                tag,
                err,
                func,
            } => {
                pool.idle.push(worker);
                self.fail(&err, format!("{func}: {err}"), func, site!());
                // Never completed: its slot is free again and it was not issued, or the
                // end's drain would wait for it for ever.
                let slot = tag as u32;
                self.uncount(slot);
                self.fops.done(slot);
                self.free_slots.push(slot);
                return;
            }
        };
        pool.idle.push(worker);
        let slot = done.req.tag as usize;
        let s = &mut self.slots[slot];
        let slat = (queued && self.rec.slat)
            .then_some(s.dir)
            .flatten()
            .map(|d| (d, submit.saturating_sub(s.issue_ns)));
        // Durations, not instants, carry over: two readings on different CPUs may be a few
        // ns apart the wrong way, and nothing may end up after `now`.
        let clat = end.saturating_sub(submit);
        let lat = end.saturating_sub(s.issue_ns).max(clat);
        let to_due = if s.due_ns > 0 {
            Some(end.saturating_sub(s.due_ns))
        } else {
            None
        };
        s.submit_ns = self.now.saturating_sub(clat);
        s.issue_ns = self.now.saturating_sub(lat);
        if let Some(late) = to_due {
            s.due_ns = self.now.saturating_sub(late).max(1);
        }
        if let Some((d, ns)) = slat {
            self.stats.record_slat(d, ns);
        }
        self.stats.depth.mark_depth(1, 1);
        self.stats.depth.mark_submit(1);
        self.stats.depth.mark_complete(1);
        self.complete(done);
    }

    /// After the loop: a request never handed out goes back; after a stop (or with I/O left
    /// to do) the submitters cancel what they have not started, and what is out gets
    /// [`STOP_GRACE`] after a stop, all the time it needs otherwise, as inline.
    fn offload_end(&mut self, pool: &mut Pool, t: &mut Turn, stop: &Stops<'_>) -> io::Result<()> {
        if let Some(r) = self.pending.take() {
            self.unissue(r);
        }
        if !t.gen_done {
            self.cancelled = true;
            pool.quit.store(true, Ordering::Relaxed);
        }
        if !stop.is_set() {
            return self.collect_all(pool);
        }
        let end = self.now + STOP_GRACE.as_nanos() as u64;
        while pool.busy() > 0 && self.now < end {
            self.take_back(pool, true, Some(end))?;
        }
        Ok(())
    }
}
