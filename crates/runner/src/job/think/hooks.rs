//! What the job loop does with think.rs, as methods of `Runner`: kept apart so that
//! think.rs, which the loop names, imports nothing of the loop's (issue 30).

use crate::job::Runner;

impl Runner<'_> {
    /// The think is over: the windows that closed meanwhile are sampled (fio's helper thread
    /// samples while the job thinks).
    pub(in crate::job) fn after_think(&mut self) {
        self.tick();
    }
}
