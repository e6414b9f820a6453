//! What the job loop does with act.rs, as methods of `Runner`: kept apart so that
//! act.rs, which the loop names, imports nothing of the loop's (issue 30).

use crate::job::Runner;
use crate::joberr::site;

impl Runner<'_> {
    /// A completed data I/O issued at `issue_ns`, in act's slices when the run has them.
    #[inline]
    pub(in crate::job) fn act_done(&mut self, issue_ns: u64) {
        let now = self.now;
        let Some(a) = self.act.as_deref_mut() else {
            return;
        };
        if let Some(msg) = a.count(now.saturating_sub(issue_ns), now) {
            eprintln!("{msg}");
            let e = std::io::Error::from_raw_os_error(libc::EPERM);
            self.fail(&e, msg, "io_u error", site!());
        }
    }

    /// Hands the slices to the job's statistics at its end.
    pub(in crate::job) fn seal_act(&mut self) {
        if let Some(a) = self.act.take() {
            self.stats.act_slices = a.slices;
        }
    }
}
