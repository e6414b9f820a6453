//! fio's `unlink_each_loop`: with `loops=N`, the job's files are removed when each loop but
//! the last is done, and opened again (created, for a job that writes) for the next one. A job
//! that only reads then fails to open them, as fio's does (ENOENT).

use iolab_workload::JobPlan;

use super::fileops::FileOps;
use super::Runner;
use crate::joberr::site;

/// Where the job's loops end, in bytes issued.
pub(super) struct EachLoop {
    /// Bytes of one loop; 0 when the option is off or there is one loop.
    every: u64,
    issued: u64,
    next: u64,
}

impl EachLoop {
    pub(super) fn of(plan: &JobPlan) -> EachLoop {
        let loops = u64::from(plan.spec.loops.max(1));
        let every = match plan.pattern.bytes {
            Some(b) if plan.spec.unlink_each_loop && loops > 1 => b / loops,
            _ => 0,
        };
        EachLoop {
            every,
            issued: 0,
            next: every,
        }
    }

    /// Whether the loops so far have been issued in full, so the I/O in hand starts another.
    #[inline]
    pub(super) fn due(&self) -> bool {
        self.every > 0 && self.issued >= self.next
    }

    #[inline]
    pub(super) fn issued(&mut self, len: u64) {
        self.issued += len;
    }
}

impl Runner<'_> {
    /// Ends a loop: waits for its I/O, removes the files and opens them again. False when the
    /// job must stop (the error is recorded, as fio's open error is).
    pub(super) fn next_loop(&mut self) -> bool {
        self.each_loop.next += self.each_loop.every;
        if self.commit().and_then(|()| self.drain()).is_err() {
            return false;
        }
        for (id, f) in self.files.iter().zip(&self.plan.files) {
            let _ = self.eng.remove_file(*id);
            let _ = std::fs::remove_file(&f.path);
        }
        match crate::setup::open_files(self.plan, &mut *self.eng) {
            Ok(ids) => {
                self.fops = FileOps::new(self.plan, &ids, self.depth());
                self.files = ids;
                true
            }
            Err(e) => {
                let msg = e.to_string();
                let io = match e {
                    crate::BenchError::File(_, _, io) => io,
                    _ => std::io::Error::other(msg.clone()),
                };
                self.fail(&io, msg, "open", site!());
                false
            }
        }
    }
}
