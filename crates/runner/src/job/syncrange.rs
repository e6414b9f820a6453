//! Syncs every N writes: fio's `fsync=N` and `fdatasync=N` (a request in the queue) and
//! `sync_file_range=flags[:N]` (sync_file_range(2) over the range of each file written since
//! the last call, with nothing in flight, as fio's engines do it outside their queue; timed as
//! a sync). As in fio, each is due when the next I/O is asked for, so none follows the last
//! writes of the job.

use iolab_engine::{FileId, Req};
use iolab_workload::{IoUnit, JobPlan};

use super::{Runner, SyncAcct};
use crate::joberr::site;

/// The writes since the last call, per file slot.
pub(super) struct SyncRange {
    flags: u32,
    every: u32,
    writes: u32,
    /// Per file slot: (first byte, end) written since the last call; end 0 when none.
    ranges: Vec<(u64, u64)>,
}

impl SyncRange {
    /// Whether sync_file_range is set (the loop calls its hooks only then).
    pub(super) fn active(&self) -> bool {
        self.every > 0
    }

    /// The job's sync_file_range=flags[:N] over its files.
    pub(super) fn of(plan: &JobPlan) -> SyncRange {
        let s = &plan.spec;
        SyncRange::new(s.sync_file_range, s.sync_file_range_nr, plan.files.len())
    }

    pub(super) fn new(flags: u32, every: u32, files: usize) -> SyncRange {
        SyncRange {
            flags,
            every: if flags == 0 { 0 } else { every.max(1) },
            writes: 0,
            ranges: vec![(0, 0); if flags == 0 { 0 } else { files }],
        }
    }

    /// A write of `len` bytes at `offset` of file slot `file` was issued.
    #[inline]
    pub(super) fn wrote(&mut self, file: usize, offset: u64, len: u64) {
        if self.every == 0 {
            return;
        }
        self.writes += 1;
        if let Some(r) = self.ranges.get_mut(file) {
            *r = if r.1 == 0 {
                (offset, offset + len)
            } else {
                (r.0.min(offset), r.1.max(offset + len))
            };
        }
    }

    /// Whether N writes have been issued since the last call (checked when there is a next
    /// I/O: as fio, no call follows the last writes).
    #[inline]
    pub(super) fn due(&self) -> bool {
        self.every > 0 && self.writes >= self.every
    }
}

impl Runner<'_> {
    /// Whether a sync is due, as fio's get_rw_ddir has it: the last request was no sync and
    /// the writes so far are a multiple of fsync=N (an fsync) or else of fdatasync=N (an
    /// fdatasync), so that fsync=2 with fdatasync=3 syncs after writes 2, 3, 4, 6, 8, 9...
    #[inline]
    pub(super) fn fsync_due(&self) -> bool {
        self.sync_may_follow && (self.fsync_now() || self.fdatasync_now())
    }

    fn fsync_now(&self) -> bool {
        let n = u64::from(self.plan.fsync_every);
        n > 0 && self.writes_issued > 0 && self.writes_issued.is_multiple_of(n)
    }

    fn fdatasync_now(&self) -> bool {
        let n = u64::from(self.plan.fdatasync_every);
        n > 0 && self.writes_issued > 0 && self.writes_issued.is_multiple_of(n)
    }

    /// The fsync (fdatasync) that is due, `io` held back to follow it.
    /// The sync goes to the file of the I/O drawn (a job of one file, or past its bytes);
    /// in a job of several files a sync due before the draw takes the next file's turn
    /// instead ([`Runner::fsync_next_file`]).
    pub(super) fn fsync_before(&mut self, io: IoUnit) -> Option<Req> {
        self.held = Some(io);
        self.sync_of(io.file)
    }

    /// The fsync (fdatasync) that is due in a job of several files, before the next I/O is
    /// drawn: as fio, it takes the next file's turn, and the I/O after it the turn after.
    pub(super) fn fsync_next_file(&mut self) -> Option<Req> {
        let fi = self.gen.pick_for_sync();
        self.sync_of(fi)
    }

    /// The sync due after the job's last write, with no I/O to follow it.
    pub(super) fn fsync_last(&mut self) -> Option<Req> {
        self.sync_of(self.last_write_file)
    }

    /// The sync due, to file slot `fi`.
    fn sync_of(&mut self, fi: usize) -> Option<Req> {
        let data_only = !self.fsync_now();
        self.sync_may_follow = false;
        if !self.open_for(fi) {
            return None;
        }
        // fio's JSON counts the fsyncs alone in sync total_ios; both in the latency.
        let acct = match data_only {
            true => SyncAcct::LatOnly,
            false => SyncAcct::Counted,
        };
        let slot = self.take_sync_slot(acct)?;
        Some(Req::sync(self.files[fi], data_only).with_tag(u64::from(slot)))
    }

    /// Waits for what is in flight, then syncs each file's written range. False when the
    /// job must stop (the error is recorded).
    pub(super) fn sync_ranges(&mut self) -> bool {
        self.sync_range.writes = 0;
        if self.commit().and_then(|()| self.drain()).is_err() {
            return false;
        }
        let flags = self.sync_range.flags;
        for i in 0..self.sync_range.ranges.len() {
            let (start, end) = std::mem::take(&mut self.sync_range.ranges[i]);
            let open = self.files.get(i).filter(|f| **f != FileId::CLOSED);
            let Some(&file) = open.filter(|_| end > 0) else {
                continue;
            };
            // fio times it with the syncs but does not count it in their total_ios.
            let t0 = self.clock.now();
            let r = self.eng.sync_range(file, start, end - start, flags);
            self.now = self.clock.now();
            match r {
                Ok(()) => self.stats.record_sync(self.now - t0),
                Err(e) => {
                    let msg = format!("sync_file_range: {e}");
                    self.fail(&e, msg, "sync_file_range", site!());
                    return false;
                }
            }
        }
        true
    }
}
