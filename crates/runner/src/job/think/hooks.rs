//! The job loop's side of think.rs: what the runner does with it, as methods of `Runner`
//! (kept apart so that think.rs, which job.rs names, names nothing of job.rs).

use crate::job::Runner;

impl Runner<'_> {
    /// The think is over: the windows that closed meanwhile are sampled (fio's helper thread
    /// samples while the job thinks).
    pub(in crate::job) fn after_think(&mut self) {
        self.tick();
    }
}
