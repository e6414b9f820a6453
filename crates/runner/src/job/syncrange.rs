//! Syncs every N writes: fio's `fsync=N` and `fdatasync=N` (a request in the queue) and
//! `sync_file_range=flags[:N]` (sync_file_range(2) over the range of each file written since
//! the last call, with nothing in flight, as fio's engines do it outside their queue; timed as
//! a sync). As in fio, each is due when the next I/O is asked for, so none follows the last
//! writes of the job.

use iolab_workload::JobPlan;

mod hooks;

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
