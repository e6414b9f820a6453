//! fio's loops: when a loop ends (`loops=N`, or each pass over the files of a time_based
//! job) fio closes the job's files and opens them again, which drops their page cache again
//! (`invalidate`, default 1) and advises the access pattern again; with `unlink_each_loop` it
//! removes them in between, so that a writer creates them anew and a reader fails (ENOENT).
//! Without this a buffered job reads its second pass from the cache fio had dropped.

use iolab_workload::JobPlan;

mod hooks;

/// Where the job's loops end: the generator's passes (fio's, see workload's `Passes`), or,
/// where it keeps none (time_based, offload...), bytes issued.
pub(super) struct EachLoop {
    /// Bytes of one loop; 0 when nothing happens between loops.
    every: u64,
    issued: u64,
    next: u64,
    unlink: bool,
    /// The files are closed and opened again between loops.
    reopen: bool,
    /// The loops are the generator's passes: `pass` is the one under way, `on` whether
    /// anything happens between them (a reopen, end_fsync's syncs, the iolog's lines).
    kept: bool,
    on: bool,
    pass: u32,
    /// refill_buffers over loops=N: each loop's writes draw their data from the buffer
    /// stream's seed again (fio's clear_io_state reseeds buf_state), so that every loop
    /// writes the first loop's bytes.
    reseed: bool,
}

impl EachLoop {
    /// `fs_op`: the engine's requests are file-system operations (filestat, filecreate...),
    /// which move no data: there is no cache to drop, and reopening every file each loop
    /// (2000 of them in a metadata job) would cost as much as the loop itself. `kept`: the
    /// generator keeps fio's passes.
    pub(super) fn of(plan: &JobPlan, fs_op: bool, kept: bool) -> EachLoop {
        let spec = &plan.spec;
        let loops = spec.time_based || spec.loops > 1;
        let acts = spec.unlink_each_loop || plan.invalidate && !fs_op;
        let reseed =
            plan.buffers.refill && spec.loops > 1 && !spec.time_based && plan.pattern.reseed;
        let reopen = loops && acts && plan.engine.kind.needs_files();
        let every = if (reopen || (loops && reseed && plan.engine.kind.needs_files())) && !kept {
            plan.pattern.loop_bytes
        } else {
            0
        };
        let syncs = plan.end_fsync || plan.fsync_on_close;
        EachLoop {
            every,
            issued: 0,
            next: every,
            unlink: spec.unlink_each_loop,
            reopen,
            kept,
            on: kept
                && (reopen
                    || reseed
                    || syncs
                    || spec.write_iolog.is_some()
                    || crate::job::verify::Verifier::each_loop(plan)),
            pass: 1,
            reseed,
        }
    }

    /// Whether the I/O in hand starts another loop: the generator's pass moved on, or the
    /// loops so far have been issued in full.
    #[inline]
    pub(super) fn due(&self, pass: u32) -> bool {
        match self.kept {
            true => self.on && pass != self.pass,
            false => self.every > 0 && self.issued >= self.next,
        }
    }

    #[inline]
    pub(super) fn issued(&mut self, len: u64) {
        self.issued += len;
    }
}
