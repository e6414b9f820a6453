//! What the job loop does with syncrange.rs, as methods of `Runner`: kept apart so that
//! syncrange.rs, which the loop names, imports nothing of the loop's (issue 30).

use iolab_engine::{FileId, Req};
use iolab_workload::IoUnit;

use crate::job::types::SyncAcct;
use crate::job::Runner;
use crate::joberr::site;

impl Runner<'_> {
    /// Whether a sync is due, as fio's get_rw_ddir has it: the last request was no sync and
    /// the writes so far are a multiple of fsync=N (an fsync) or else of fdatasync=N (an
    /// fdatasync), so that fsync=2 with fdatasync=3 syncs after writes 2, 3, 4, 6, 8, 9...
    #[inline]
    pub(in crate::job) fn fsync_due(&self) -> bool {
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
    pub(in crate::job) fn fsync_before(&mut self, io: IoUnit) -> Option<Req> {
        self.held = Some(io);
        self.sync_of(io.file)
    }

    /// The fsync (fdatasync) that is due in a job of several files, before the next I/O is
    /// drawn: as fio, it takes the next file's turn, and the I/O after it the turn after.
    pub(in crate::job) fn fsync_next_file(&mut self) -> Option<Req> {
        let fi = self.gen.pick_for_sync();
        self.sync_of(fi)
    }

    /// The sync due after the job's last write, with no I/O to follow it.
    pub(in crate::job) fn fsync_last(&mut self) -> Option<Req> {
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
    pub(in crate::job) fn sync_ranges(&mut self) -> bool {
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
