//! fio's error policy for failed I/O: `continue_on_error` says which error types (read, write,
//! verify) may be non-fatal, `ignore_error` which errnos of each type are (EIO and EILSEQ
//! unless given), `error_dump` whether non-fatal ones are printed too. A non-fatal error is
//! counted (fio's `total_err`, `first_error`) and the job goes on; any other ends the job.

use iolab_job::control::{self, ERR_READ, ERR_VERIFY, ERR_WRITE};
use iolab_job::JobSpec;
use iolab_stats::Dir;

mod hooks;

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
