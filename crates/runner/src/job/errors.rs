//! fio's error policy for failed I/O: `continue_on_error` says which error types (read, write,
//! verify) may be non-fatal, `ignore_error` which errnos of each type are (EIO and EILSEQ
//! unless given), `error_dump` whether non-fatal ones are printed too. A non-fatal error is
//! counted (fio's `total_err`, `first_error`) and the job goes on; any other ends the job.

use iolab_engine::{Done, FileId, Req};
use iolab_job::control::{self, ERR_READ, ERR_VERIFY, ERR_WRITE};
use iolab_job::JobSpec;
use iolab_stats::Dir;

use super::Runner;
use crate::joberr::{site, strerror};

/// What a job does with a failed I/O, and what it has let pass.
pub(super) struct ErrorPolicy {
    /// fio's continue_on_error bits, with those `ignore_error` sets.
    classes: u8,
    /// Per error type (read, write, verify), the errnos that are non-fatal.
    lists: [Vec<i32>; 3],
    dump: bool,
    pub(super) total: u64,
    pub(super) first: i32,
}

impl ErrorPolicy {
    pub(super) fn of(s: &JobSpec) -> ErrorPolicy {
        let mut classes = control::continue_classes(s.continue_on_error);
        let default = vec![libc::EIO, libc::EILSEQ];
        let lists = [0, 1, 2].map(|i| match &s.ignore_error[i] {
            Some(l) => {
                // As fio: a list given for a type lets that type go on.
                classes |= 1 << i;
                l.clone()
            }
            None => default.clone(),
        });
        ErrorPolicy {
            classes,
            lists,
            dump: s.error_dump,
            total: 0,
            first: 0,
        }
    }

    /// Whether the job reports error counts (fio prints them when continue_on_error is set).
    pub(super) fn reported(&self) -> bool {
        self.classes != 0
    }

    /// fio's td_error_type: EILSEQ is a verify error, else the I/O's direction decides.
    fn class(dir: Option<Dir>, errno: i32) -> (u8, usize) {
        match dir {
            _ if errno == libc::EILSEQ => (ERR_VERIFY, 2),
            Some(Dir::Read) => (ERR_READ, 0),
            _ => (ERR_WRITE, 1),
        }
    }

    fn count(&mut self, errno: i32) {
        self.total += 1;
        if self.first == 0 {
            self.first = errno;
        }
    }

    /// Whether `errno` of an I/O in `dir` (None: a sync) is non-fatal; if so it is counted.
    pub(super) fn forgive(&mut self, dir: Option<Dir>, errno: i32) -> bool {
        let (bit, idx) = Self::class(dir, errno);
        if self.classes & bit == 0 || !self.lists[idx].contains(&errno) {
            return false;
        }
        self.count(errno);
        true
    }

    /// A fatal error that ends the job: counted too where continue_on_error covers its type,
    /// as fio counts it when its loop stops at an I/O that completed as it was queued (a
    /// sync engine's; fio's asynchronous completions end the job uncounted).
    pub(super) fn fatal_in_queue(&mut self, dir: Option<Dir>, errno: i32) {
        if self.classes & Self::class(dir, errno).0 != 0 {
            self.count(errno);
        }
    }
}

impl Runner<'_> {
    /// A completion that failed: counted and passed over where the policy allows, else the
    /// error that ends the job.
    pub(super) fn io_error(&mut self, d: &Done, dir: Option<Dir>) {
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
    pub(super) fn over_max_latency(&mut self, req: &Req, dir: Dir, lat_ns: u64, max_ns: u64) {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn policy(opts: &[(&str, &str)]) -> ErrorPolicy {
        let mut s = JobSpec::default();
        for (k, v) in opts {
            match *k {
                "continue_on_error" => s.continue_on_error = control_word(v),
                "ignore_error" => {
                    s.ignore_error = control::parse_ignore_error(v).unwrap();
                }
                _ => unreachable!(),
            }
        }
        ErrorPolicy::of(&s)
    }

    fn control_word(v: &str) -> &'static str {
        ["none", "read", "write", "io", "verify", "all"]
            .into_iter()
            .find(|w| *w == v)
            .unwrap()
    }

    #[test]
    fn classes_choose_which_directions_go_on() {
        let mut p = policy(&[("continue_on_error", "read")]);
        assert!(p.forgive(Some(Dir::Read), libc::EIO));
        assert!(!p.forgive(Some(Dir::Write), libc::EIO));
        // Only the non-fatal errnos: ENOSPC ends the job even with continue_on_error=all.
        let mut p = policy(&[("continue_on_error", "all")]);
        assert!(!p.forgive(Some(Dir::Write), libc::ENOSPC));
        assert!(p.forgive(None, libc::EIO));
        assert_eq!((p.total, p.first), (1, libc::EIO));
        // The fatal one is counted too when it ends a sync engine's job (fio).
        p.fatal_in_queue(Some(Dir::Write), libc::ENOSPC);
        assert_eq!((p.total, p.first), (2, libc::EIO));
        let mut p = policy(&[("continue_on_error", "read")]);
        p.fatal_in_queue(Some(Dir::Write), libc::ENOSPC);
        assert_eq!((p.total, p.first), (0, 0));
        let mut p = policy(&[("continue_on_error", "verify")]);
        assert!(p.forgive(Some(Dir::Read), libc::EILSEQ));
        assert!(!p.forgive(Some(Dir::Read), libc::EIO));
    }

    #[test]
    fn ignore_error_replaces_the_list_and_turns_its_type_on() {
        let mut p = policy(&[("ignore_error", ",ENOSPC:122")]);
        assert!(p.reported());
        assert!(p.forgive(Some(Dir::Write), libc::ENOSPC));
        assert!(!p.forgive(Some(Dir::Write), libc::EIO));
        assert!(!p.forgive(Some(Dir::Read), libc::EIO));
        assert!(!policy(&[]).reported());
    }
}
