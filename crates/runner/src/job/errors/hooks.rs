//! What the job loop does with errors.rs, as methods of `Runner`: kept apart so that
//! errors.rs, which the loop names, imports nothing of the loop's (issue 30).

use iolab_engine::{Done, FileId, Req};
use iolab_stats::Dir;

use crate::job::Runner;
use crate::joberr::{site, strerror};

impl Runner<'_> {
    /// A completion that failed: counted and passed over where the policy allows, else the
    /// error that ends the job.
    pub(in crate::job) fn io_error(&mut self, d: &Done, dir: Option<Dir>) {
        let Err(e) = &d.result else { return };
        let errno = iolab_engine::errno_of(e);
        let msg = d.error_message(self.eng.kind().name()).unwrap_or_default();
        if self.errors.forgive(dir, errno) {
            self.errors_ignored += 1;
            if self.errors.dump {
                self.print_io_error(d, errno, &msg, true);
            }
            return;
        }
        if self.error.is_none() {
            if self.eng.caps().sync_only {
                self.errors.fatal_in_queue(dir, errno);
            }
            self.print_io_error(d, errno, &msg, true);
            let first = dir.is_some_and(|d| self.stats.dir(d).total_ios == 1);
            if errno == libc::EINVAL && self.plan.direct && first {
                // fio's hint when the first I/O of its direction fails so, word for word as
                // scripts look for it, where fio prints it (with the informational lines).
                crate::layout::info(format_args!(
                    "fio: first direct IO errored. File system may not support direct IO, or \
                     iomem_align= is bad, or invalid block size. Try setting direct=0."
                ));
            }
            self.fail(e, msg, "io_u error", site!());
        } else if self.error.as_ref().is_some_and(|e| e.func != "io commit") {
            // fio says so of each failed I/O it collects after the first (io_uring's and
            // posixaio's in flight); the requests a refused commit hands back are not I/O.
            self.print_io_error(d, errno, &msg, false);
        }
    }

    /// A failed I/O on standard error: fio 3.33's line (io_u.c's `__io_u_log_error`, which
    /// scripts look for), then, with `own`, iolab's, which names the engine and the errno and
    /// says more where the engine knows more (O_DIRECT's alignment).
    fn print_io_error(&self, d: &Done, errno: i32, msg: &str, own: bool) {
        let r = &d.req;
        let file = self.file_name(r.file);
        let fio = format!(
            "fio: io_u error on file {file}: {}: {} offset={}, buflen={}",
            strerror(errno),
            r.op.ddir_name(),
            r.offset,
            r.len
        );
        match own {
            true => eprintln!("{fio}\niolab: {msg}"),
            false => eprintln!("{fio}"),
        }
    }

    /// The job's name for one of its files (fio's file_name), as its messages say it.
    fn file_name(&self, id: FileId) -> String {
        let at = self.files.iter().position(|f| *f == id);
        let file = at.and_then(|i| self.plan.files.get(i));
        file.map_or(String::new(), |f| f.path.display().to_string())
    }

    /// An I/O over max_latency: fio's lat_fatal, an ETIMEDOUT the error policy judges like
    /// any other (ignore_error=,ETIMEDOUT lets the job go on).
    pub(in crate::job) fn over_max_latency(
        &mut self,
        req: &Req,
        dir: Dir,
        lat_ns: u64,
        max_ns: u64,
    ) {
        if self.errors.forgive(Some(dir), libc::ETIMEDOUT) {
            self.errors_ignored += 1;
            return;
        }
        if self.error.is_none() {
            // fio 3.33's lat_fatal line, which names the I/O.
            eprintln!(
                "fio: latency of {lat_ns} nsec exceeds specified max ({max_ns} nsec): {} {} {} {}",
                self.file_name(req.file),
                req.op.ddir_name(),
                req.offset,
                req.len
            );
            let e = std::io::Error::from_raw_os_error(libc::ETIMEDOUT);
            self.fail(
                &e,
                "max latency exceeded".into(),
                "max latency exceeded",
                site!(),
            );
        }
    }
}
