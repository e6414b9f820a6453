//! What the job loop does with eachloop.rs, as methods of `Runner`: kept apart so that
//! eachloop.rs, which the loop names, imports nothing of the loop's (issue 30).

use iolab_job::debug;
use iolab_sys as sys;

use crate::job::fileops::FileOps;
use crate::job::Runner;
use crate::joberr::site;

impl Runner<'_> {
    /// Ends a loop: waits for its I/O, syncs the files (end_fsync, fsync_on_close: fio's
    /// do_io syncs at the end of each), closes them (removing them with unlink_each_loop) and
    /// opens them again. False when the job must stop (the error is recorded, as fio's open
    /// error is).
    pub(in crate::job) fn next_loop(&mut self) -> bool {
        self.each_loop.next += self.each_loop.every;
        self.each_loop.pass = self.gen.pass();
        if self.commit().and_then(|()| self.drain()).is_err() {
            return false;
        }
        if self.each_loop.reseed {
            self.buf_rng = iolab_workload::BufStream::of(&self.plan.pattern);
        }
        if !self.each_loop.kept {
            return self.reopen_all();
        }
        if self.verify_pass_due() {
            // The loop's read back, after its syncs, with the log's lines of its end; the
            // files it opened are closed after it.
            if !self.verify_pass_end() {
                return false;
            }
            self.iolog_pass_end(false);
        } else {
            let by_files = self.gen.ended_by_files();
            self.iolog_pass_end(by_files);
            if (self.plan.end_fsync || self.plan.fsync_on_close) && self.sync_all_files().is_err() {
                return false;
            }
        }
        if self.each_loop.reopen && !self.reopen_all() {
            return false;
        }
        true
    }

    /// Closes the files (removing them with unlink_each_loop) and opens them again.
    fn reopen_all(&mut self) -> bool {
        let dbg = debug::on(debug::FILE);
        for (id, f) in self.files.iter().zip(&self.plan.files) {
            // Under openfiles some are closed already; each is unlinked all the same.
            if *id != iolab_engine::FileId::CLOSED {
                if dbg {
                    let p = f.path.display();
                    debug::line(debug::FILE, sys::gettid(), format_args!("fd close {p}"));
                }
                let _ = self.eng.remove_file(*id);
            }
            if self.each_loop.unlink {
                let _ = std::fs::remove_file(&f.path);
            }
        }
        match crate::open::open_files(self.plan, &mut *self.eng) {
            Ok(ids) => {
                self.fops = FileOps::new(self.plan, &ids, self.depth());
                self.files = ids;
                self.open.reopened(&self.files);
                self.iolog_reopened();
                true
            }
            Err(e) => {
                self.fail_open(e);
                false
            }
        }
    }
}

impl Runner<'_> {
    /// A file that would not open mid-run ends the job as fio's open error does.
    pub(in crate::job) fn fail_open(&mut self, e: crate::error::RunError) {
        let msg = e.to_string();
        let io = match e {
            crate::error::RunError::File(_, _, io) => io,
            _ => std::io::Error::other(msg.clone()),
        };
        self.fail(&io, msg, "open", site!());
    }
}
