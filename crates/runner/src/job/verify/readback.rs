//! The read back phases of verify: after the write phase (or instead of it, `verify_only`),
//! at the end of each loop, every remembered block is read back and checked.

use iolab_engine::{Op, Queued, Req};
use iolab_stats::Dir;
use iolab_workload::Dir as WDir;

use super::{History, Role, Written};
use crate::job::{Runner, Stops};
use crate::joberr::site;

impl Runner<'_> {
    /// verify_only: the workload is generated but not written; what it would have written
    /// is then checked. True when this run is such a run (and is over).
    pub(in crate::job) fn verify_only(&mut self, stop: &Stops<'_>) -> std::io::Result<bool> {
        if let Some(e) = self.verify.as_deref_mut().and_then(|v| v.pool_err.take()) {
            return Err(std::io::Error::other(e));
        }
        // A job that does not write has nothing to replay: under verify_only it reads and
        // checks as it would without (fio's dry run is for jobs that write).
        let p = &self.plan.pattern;
        if !self.verify.as_ref().is_some_and(|v| v.only) || !(p.write || p.trimwrite) {
            return Ok(false);
        }
        while let Some(io) = self.gen.next_io() {
            if stop.is_set() {
                break;
            }
            self.iolog_file_used(io.file);
            let (issued, pass) = (self.gen.issued(), self.gen.pass());
            let Some(v) = self.verify.as_deref_mut() else {
                break;
            };
            if io.dir == WDir::Write {
                let w = v.next_write(&io, issued, pass);
                match v.was_written(&w) {
                    Some(true) => v.remember(w),
                    _ => break,
                }
            }
            v.after_read = io.dir == WDir::Read;
            v.dry_trims();
        }
        self.verify_phase(stop)?;
        Ok(true)
    }

    /// fio's do_verify: every remembered block is read back and checked.
    pub(in crate::job) fn verify_phase(&mut self, stop: &Stops<'_>) -> std::io::Result<()> {
        self.verify_reads(Some(stop))
    }

    /// With loops counted in bytes, when the generator has issued a loop in full: its writes
    /// are read back before the next loop starts, as fio does. (Where the generator keeps
    /// fio's passes, the pass's end decides: [`Runner::verify_pass_end`].)
    pub(super) fn verify_loop_end(&mut self) {
        let issued = self.gen.issued();
        if self.gen.passes_kept() || self.verify.as_ref().is_none_or(|v| issued < v.loop_at) {
            return;
        }
        self.verify_loop_read_back();
    }

    /// Whether a pass's end reads its writes back (verify with loops, on a generator that
    /// keeps fio's passes, a loop before the last).
    pub(in crate::job) fn verify_pass_due(&self) -> bool {
        self.gen.passes_kept()
            && (self.verify.as_deref()).is_some_and(|v| v.loop_at != u64::MAX && v.loops_left > 0)
    }

    /// A pass of the generator ended where a loop of fio's does (its files done, or its
    /// bytes): the loop's writes are read back before the next begins. False when the job
    /// must stop.
    pub(in crate::job) fn verify_pass_end(&mut self) -> bool {
        self.verify_loop_read_back();
        !self.done
    }

    /// A loop's writes read back (after its syncs); a failure ends the job.
    fn verify_loop_read_back(&mut self) {
        let Some(v) = self.verify.as_deref_mut() else {
            return;
        };
        v.loops_left = v.loops_left.saturating_sub(1);
        v.loop_at = match v.loops_left {
            0 => u64::MAX,
            _ => v.loop_at.saturating_add(v.pass_bytes),
        };
        let mut done = self.commit().and_then(|()| self.drain());
        if self.plan.end_fsync || self.plan.fsync_on_close {
            // fio's end_fsync closes each loop's write phase, before its read back.
            done = done.and_then(|()| self.sync_all_files());
        }
        if let Err(e) = done.and_then(|()| self.verify_reads(None)) {
            self.fail(&e, format!("verify: {e}"), "do_verify", site!());
            self.done = true;
        }
        // Stopped during the read back: no next loop either.
        self.done |= iolab_sys::interrupt::woken();
    }

    /// Reads back every remembered block and checks it; a stop ends it early.
    fn verify_reads(&mut self, stop: Option<&Stops<'_>>) -> std::io::Result<()> {
        let fake = !self.eng.caps().moves_data;
        // fio keeps the writes of a job with a random map in the order they were issued and
        // reads them back in it; other jobs' writes it sorts by file and offset, as kept here.
        // An lfsr job's files have no map in fio (the lfsr stands in for it): sorted.
        let p = &self.plan.pattern;
        let write_order = p.random && p.random_map && !p.lfsr;
        let mut todo = match self.verify.as_deref_mut() {
            Some(v) if v.do_verify || v.only => {
                v.fake = fake;
                v.verified = true;
                // What the backlog had yet to check is checked now.
                v.pending.clear();
                v.due = 0;
                let mut history = std::mem::take(&mut v.history);
                match v.replay.as_mut() {
                    Some(r) => Todo::List(std::mem::take(r).into_iter()),
                    None if write_order => {
                        let mut all = history.take_all();
                        all.sort_unstable_by_key(|w| w.numberio);
                        Todo::List(all.into_iter())
                    }
                    // Taken from the map one by one: no second copy of the history.
                    None => Todo::Map(history),
                }
            }
            _ => return Ok(()),
        };
        let from = self.clock.now();
        self.now = from;
        // A loop's read back has no Stops at hand: a stop wakes the job's thread too.
        let stopped = || stop.is_some_and(Stops::is_set) || iolab_sys::interrupt::woken();
        // As fio's do_verify, the read back counts against the runtime: a phase the runtime
        // ended is not read back, and one the runtime ends stops there.
        let deadline = self.sample_until;
        if !stopped() && self.error.is_none() && self.now < deadline {
            self.iolog_close_all();
        }
        // A block the engine was too busy to take, tried again first.
        let mut held: Option<Written> = None;
        let mut more = true;
        while more && !stopped() && self.error.is_none() && self.now < deadline && !self.fatal_met()
        {
            // A synchronous engine completes each read inside this loop: it looks for the stop.
            while self.in_flight() < self.depth()
                && self.error.is_none()
                && !self.fatal_met()
                && !stopped()
                && self.now < deadline
            {
                let Some(w) = held.take().or_else(|| todo.next()) else {
                    more = false;
                    break;
                };
                if !self.verify_read(w)? {
                    held = Some(w);
                    break;
                }
            }
            self.commit()?;
            if self.eng.in_flight() > 0 {
                self.reap(1, None)?;
                self.now = self.clock.now();
            } else if held.is_some() {
                // Busy with nothing in flight: give the engine a moment.
                std::thread::sleep(std::time::Duration::from_millis(1));
            }
        }
        let drained = self.drain();
        self.verify_async_collect(Some(usize::MAX));
        let took = self.clock.now().saturating_sub(from);
        if let Some(v) = self.verify.as_deref_mut() {
            v.verify_ns += took;
        }
        drained
    }

    /// Issues one read back; false when the engine is busy.
    fn verify_read(&mut self, w: Written) -> std::io::Result<bool> {
        if self.free.is_empty() || !self.open_for(w.file as usize) {
            return Ok(false);
        }
        let (Some(slot), Some(buf)) = (self.take_slot(Some(Dir::Read)), self.free.pop()) else {
            return Ok(false);
        };
        self.stats.issued(Dir::Read);
        if let Some(v) = self.verify.as_deref_mut() {
            v.slots[slot as usize] = Some(Role::Check(w));
        }
        let file = self.files[w.file as usize];
        let req = Req::data(Op::Read, file, w.offset, w.len as usize, buf).with_tag(slot as u64);
        self.now = self.clock.now();
        self.iolog_readback(&req);
        self.slots[slot as usize].submit_ns = self.now;
        if self.debug_io {
            self.debug_req("queue", &req);
        }
        match self.eng.queue(req) {
            Queued::Done(d) => {
                self.now = self.clock.now();
                self.complete(d);
            }
            Queued::Queued => self.queued.push(slot),
            Queued::Busy(r) => {
                self.unissue(r);
                return Ok(false);
            }
        }
        Ok(true)
    }
}

/// The blocks a read back goes through: a list (write order, experimental_verify's replay)
/// or the history itself, emptied as it goes.
enum Todo {
    List(std::vec::IntoIter<Written>),
    Map(History),
}

impl Todo {
    fn next(&mut self) -> Option<Written> {
        match self {
            Todo::List(l) => l.next(),
            Todo::Map(h) => h.pop_first(),
        }
    }
}
