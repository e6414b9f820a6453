//! What the job loop does with openfiles.rs, as methods of `Runner`: kept apart so that
//! openfiles.rs, which the loop names, imports nothing of the loop's (issue 30).

use iolab_engine::FileId;
use iolab_job::debug;
use iolab_sys as sys;

use super::open_limit;
use crate::job::Runner;

impl Runner<'_> {
    /// Makes sure file `fi` is open before an I/O to it. False when the job must stop (the
    /// open failed; the error is recorded as fio records its open error).
    #[inline]
    pub(in crate::job) fn open_for(&mut self, fi: usize) -> bool {
        self.files.get(fi) != Some(&FileId::CLOSED) || self.swap_in(fi)
    }

    /// Closes the open files the generator no longer uses (after their I/O has completed)
    /// and opens `fi`. Costs the files that left the generator's set since the last swap,
    /// not the job's files.
    #[cold]
    fn swap_in(&mut self, fi: usize) -> bool {
        // What is in flight completes first: engines take a new file with none in flight
        // (once per file opened, not per I/O).
        if self.commit().and_then(|()| self.drain()).is_err() {
            return false;
        }
        let limit = open_limit(self.plan);
        if self.open.count.is_none() {
            let n = self.files.iter().filter(|f| **f != FileId::CLOSED).count();
            self.open.count = Some(n);
        }
        if limit < self.files.len() {
            let mut close = std::mem::take(&mut self.open.close);
            self.gen.take_left(&mut close);
            close.append(&mut self.open.strays);
            // In the order of the files, as a scan of them all would close them.
            close.sort_unstable();
            close.dedup();
            close.retain(|&i| i != fi && !self.gen.is_in_use(i));
            self.close_each(&close);
            self.open.close = close;
            // A read back (verify) may want a file outside the generator's set: one in use
            // makes room then, so that the limit holds.
            if self.open.count.unwrap_or(0) >= limit {
                let all: Vec<usize> = (0..self.files.len()).filter(|&i| i != fi).collect();
                self.close_each(&all);
            }
        }
        match crate::open::open_one(self.plan, fi, &mut *self.eng) {
            Ok(id) => {
                self.files[fi] = id;
                self.open.count = self.open.count.map(|n| n + 1);
                if !self.gen.is_in_use(fi) {
                    self.open.strays.push(fi);
                }
                self.iolog_file(fi, id, true);
                self.fops.opened(self.plan, fi, id, self.depth());
                true
            }
            Err(e) => {
                self.fail_open(e);
                false
            }
        }
    }

    /// Closes those of `files` that are open.
    fn close_each(&mut self, files: &[usize]) {
        let dbg = debug::on(debug::FILE);
        for &i in files {
            let Some(&id) = self.files.get(i) else {
                continue;
            };
            if id == FileId::CLOSED {
                continue;
            }
            if dbg {
                let p = self.plan.files[i].path.display();
                debug::line(debug::FILE, sys::gettid(), format_args!("fd close {p}"));
            }
            let _ = self.eng.remove_file(id);
            self.files[i] = FileId::CLOSED;
            self.open.count = self.open.count.map(|n| n.saturating_sub(1));
            self.fops.closed(id);
            self.iolog_file(i, id, false);
        }
    }
}
