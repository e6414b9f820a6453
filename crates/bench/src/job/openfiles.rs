//! fio's `openfiles`: at most that many of the job's files are open at once. The generator
//! keeps the files in use (`IoGen::in_use`: a file leaves when its span is done and the next
//! one comes in); the runner opens a file when its first I/O comes and closes, just before,
//! the open files that are no longer in use, as fio closes a file when it is done and opens
//! the next (`set_io_u_file`). Without the option every file is opened at setup and the check
//! is one branch on a flag.

use iolab_engine::{sys, FileId};
use iolab_job::debug;
use iolab_workload::JobPlan;

use super::fileops::FileOps;
use super::Runner;

/// How many of the job's files are opened at setup: all of them, or fio's `openfiles` when
/// it is smaller (the generator starts with the first that many in use).
pub(crate) fn open_at_start(plan: &JobPlan) -> usize {
    let n = plan.files.len();
    match plan.pattern.open_files {
        k @ 1.. if k < n => k,
        _ => n,
    }
}

impl Runner<'_> {
    /// Makes sure file `fi` is open before an I/O to it. False when the job must stop (the
    /// open failed; the error is recorded as fio records its open error).
    #[inline]
    pub(super) fn open_for(&mut self, fi: usize) -> bool {
        self.files.get(fi) != Some(&FileId::CLOSED) || self.swap_in(fi)
    }

    /// Closes the open files the generator no longer uses (after their I/O has completed)
    /// and opens `fi`.
    #[cold]
    fn swap_in(&mut self, fi: usize) -> bool {
        if self.commit().and_then(|()| self.drain()).is_err() {
            return false;
        }
        // Once per file swapped, not per I/O.
        let keep = self.gen.in_use().unwrap_or(&[]).to_vec();
        self.close_where(fi, |i| !keep.contains(&i));
        // A read back (verify) may want a file outside the generator's set: one in use
        // makes room then, so that the limit holds.
        let limit = crate::job::open_at_start(self.plan);
        if self.files.iter().filter(|f| **f != FileId::CLOSED).count() >= limit {
            self.close_where(fi, |_| true);
        }
        match crate::setup::open_one(self.plan, fi, &mut *self.eng) {
            Ok(id) => {
                self.files[fi] = id;
                self.iolog_file(fi, id, true);
                self.fops = FileOps::new(self.plan, &self.files, self.depth());
                true
            }
            Err(e) => {
                self.fail_open(e);
                false
            }
        }
    }

    /// Closes every open file but `fi` for which `close` says so.
    fn close_where(&mut self, fi: usize, close: impl Fn(usize) -> bool) {
        let dbg = debug::on(debug::FILE);
        for i in 0..self.files.len() {
            let id = self.files[i];
            if i == fi || id == FileId::CLOSED || !close(i) {
                continue;
            }
            if dbg {
                let p = self.plan.files[i].path.display();
                debug::line(debug::FILE, sys::gettid(), format_args!("fd close {p}"));
            }
            let _ = self.eng.remove_file(id);
            self.files[i] = FileId::CLOSED;
            self.iolog_file(i, id, false);
        }
    }
}
