//! What the job loop does with openfiles.rs, as methods of `Runner`: kept apart so that
//! openfiles.rs, which the loop names, imports nothing of the loop's (issue 30).

use iolab_engine::FileId;
use iolab_job::debug;
use iolab_sys as sys;

use super::open_limit;
use crate::job::fileops::FileOps;
use crate::job::Runner;

impl Runner<'_> {
    /// Makes sure file `fi` is open before an I/O to it. False when the job must stop (the
    /// open failed; the error is recorded as fio records its open error).
    #[inline]
    pub(in crate::job) fn open_for(&mut self, fi: usize) -> bool {
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
