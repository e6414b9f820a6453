//! When the job's files open. fio opens each file at its first I/O (`get_next_file`), so
//! does iolab: a job of several files starts with none open and the runner opens each when
//! its first I/O comes (its iolog shows `open` there, as fio's does). Under fio's `openfiles`
//! at most that many are open at once: the generator keeps the files in use
//! (`IoGen::in_use`: a file leaves when its span is done and the next one comes in) and the
//! runner closes, just before opening the next, the open files that are no longer in use, as
//! fio closes a file when it is done (`set_io_u_file`). A job of one file opens it at setup
//! (no I/O could come between), as do the jobs whose files are not plain files the loop owns
//! (offloaded submitters, connections, engines that make their own files, a replayed
//! iolog, which says itself when each file opens). The check on the
//! hot path is one comparison.

use iolab_engine::FileId;
use iolab_job::debug;
use iolab_sys as sys;
use iolab_workload::JobPlan;

use super::fileops::FileOps;
use super::Runner;

/// At most how many of the job's files are open at once: fio's `openfiles` when it is
/// smaller than the number of files, else all of them.
pub(crate) fn open_limit(plan: &JobPlan) -> usize {
    let n = plan.files.len();
    match plan.pattern.open_files {
        k @ 1.. if k < n => k,
        _ => n,
    }
}

/// How many of the job's files are opened at setup: under `openfiles` the first that many
/// (the generator starts with them in use); none where each opens at its first I/O; else
/// all.
pub(crate) fn open_at_start(plan: &JobPlan) -> usize {
    let n = plan.files.len();
    let limit = open_limit(plan);
    if limit < n {
        limit
    } else if n > 1
        && plan.engine.kind.needs_files()
        && !plan.spec.io_submit_offload
        && !plan.spec.create_on_open
        && plan.replay.is_none()
    {
        0
    } else {
        n
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
        // What is in flight completes first: engines take a new file with none in flight
        // (once per file opened, not per I/O).
        if self.commit().and_then(|()| self.drain()).is_err() {
            return false;
        }
        let limit = open_limit(self.plan);
        if limit < self.files.len() {
            // Sorted, so that thousands of open files are not each looked for in a list of
            // thousands (openfiles lowered to the descriptor limit).
            let mut keep = self.gen.in_use().unwrap_or(&[]).to_vec();
            keep.sort_unstable();
            self.close_where(fi, |i| keep.binary_search(&i).is_err());
            // A read back (verify) may want a file outside the generator's set: one in use
            // makes room then, so that the limit holds.
            if self.files.iter().filter(|f| **f != FileId::CLOSED).count() >= limit {
                self.close_where(fi, |_| true);
            }
        }
        match crate::open::open_one(self.plan, fi, &mut *self.eng) {
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
