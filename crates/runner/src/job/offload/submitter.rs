//! One submitter thread of the offload pool: it takes a request from the job thread, submits
//! it on its own depth-1 engine, waits for it and hands it back with its times.

use std::io;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, SyncSender};
use std::sync::Arc;

use iolab_engine::{Done, Engine, FileId, Queued, SysCalls};
use iolab_job::debug;
use iolab_stats::CpuUsage;
use iolab_sys as sys;

use super::{Back, Work};
use crate::job::{Clock, STOP_POLL};

/// `job.clone.sN`, the job's part cut to keep the whole within Linux's 15 bytes.
pub(super) fn thread_name(job: &str, clone: u32, i: usize) -> String {
    let tail = format!(".{clone}.s{i}");
    let job = job.replace('\0', "_");
    let mut end = job.len().min(15usize.saturating_sub(tail.len()));
    while !job.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}{tail}", &job[..end])
}

/// One submitter thread: its engine's files, the clock, and the stop.
pub(super) struct Submitter {
    pub(super) me: u16,
    pub(super) files: Vec<FileId>,
    pub(super) clock: Clock,
    pub(super) quit: Arc<AtomicBool>,
    /// `--debug=rate`: fio's lines of which thread submitted each I/O.
    pub(super) debug: bool,
}

impl Submitter {
    pub(super) fn run(
        self,
        mut eng: Box<dyn Engine>,
        rx: Receiver<Work>,
        back: SyncSender<Back>,
    ) -> (SysCalls, CpuUsage) {
        let cpu0 = usage();
        let tid = sys::gettid();
        let mut out = Vec::with_capacity(1);
        while let Ok(w) = rx.recv() {
            let tag = w.req.tag;
            if self.debug {
                debug::line(
                    debug::RATE,
                    tid,
                    format_args!("io_u 0x{tag:x} queued by {tid}"),
                );
            }
            let b = self.one(&mut *eng, w, &mut out);
            if self.debug {
                // fio's FIO_Q_COMPLETED (0) or FIO_Q_QUEUED (1).
                let ret = !matches!(b, Back::Done { queued: false, .. }) as u8;
                debug::line(
                    debug::RATE,
                    tid,
                    format_args!("io_u 0x{tag:x} ret {ret} by {tid}"),
                );
            }
            if back.send(b).is_err() {
                break;
            }
        }
        (eng.syscalls(), usage() - cpu0)
    }

    /// Submits one request and waits for it.
    fn one(&self, eng: &mut dyn Engine, w: Work, out: &mut Vec<Done>) -> Back {
        let Work { mut req, file } = w;
        let (job_file, tag) = (req.file, req.tag);
        match self.files.get(file as usize) {
            Some(f) => req.file = *f,
            None => {
                let e = io::Error::other(format!("offload: no file {file} in the submitter"));
                return self.done(
                    Done {
                        req,
                        result: Err(e),
                    },
                    0,
                    0,
                    false,
                    job_file,
                );
            }
        }
        let t = self.clock.now();
        match eng.queue(req) {
            Queued::Done(d) => {
                let end = self.clock.now();
                self.done(d, t, end, false, job_file)
            }
            // A depth-1 engine with nothing in flight is not busy; if one says so, the
            // request fails rather than spinning.
            Queued::Busy(req) => {
                let e = io::Error::from_raw_os_error(libc::EBUSY);
                self.done(
                    Done {
                        req,
                        result: Err(e),
                    },
                    t,
                    t,
                    false,
                    job_file,
                )
            }
            Queued::Queued => match self.wait(eng, out) {
                Ok(submit) => {
                    let end = self.clock.now();
                    match out.pop() {
                        Some(d) => self.done(d, submit, end, true, job_file),
                        None => self.failed(tag, io::Error::other("reap returned nothing"), "reap"),
                    }
                }
                Err((e, func)) => self.failed(tag, e, func),
            },
        }
    }

    /// Commits the request and reaps it; its submission time is read after the commit, as
    /// fio's issue_time. A stop cancels it (it still comes back, with ECANCELED).
    fn wait(
        &self,
        eng: &mut dyn Engine,
        out: &mut Vec<Done>,
    ) -> Result<u64, (io::Error, &'static str)> {
        eng.commit().map_err(|e| (e, "io commit"))?;
        let submit = self.clock.now();
        let mut cancelled = false;
        loop {
            let n = eng
                .reap(1, 1, Some(STOP_POLL), out)
                .map_err(|e| (e, "td_io_getevents"))?;
            if n > 0 {
                return Ok(submit);
            }
            if !cancelled && self.quit.load(Ordering::Relaxed) {
                eng.cancel();
                cancelled = true;
            }
        }
    }

    fn done(&self, mut d: Done, submit: u64, end: u64, queued: bool, file: FileId) -> Back {
        d.req.file = file;
        Back::Done {
            worker: self.me,
            done: d,
            submit,
            end,
            queued,
        }
    }

    fn failed(&self, tag: u64, err: io::Error, func: &'static str) -> Back {
        Back::Failed {
            worker: self.me,
            tag,
            err,
            func,
        }
    }
}

fn usage() -> CpuUsage {
    crate::job::usage()
}

#[cfg(test)]
mod tests {
    use super::thread_name;

    #[test]
    fn submitter_names_fit_linux_and_keep_their_number() {
        let n = thread_name("a-very-long-job-name", 3, 12);
        assert!(n.len() <= 15, "{n}");
        assert!(n.ends_with(".3.s12"), "{n}");
        assert_eq!(thread_name("t", 0, 1), "t.0.s1");
        assert!(thread_name("ééééééééé", 0, 1).len() <= 15);
        assert!(!thread_name("a\0b", 0, 1).contains('\0'));
    }
}
