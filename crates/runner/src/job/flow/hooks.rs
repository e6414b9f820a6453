//! What the job loop does with flow.rs, as methods of `Runner`: kept apart so that
//! flow.rs, which the loop names, imports nothing of the loop's (issue 30).

use crate::job::types::Stops;
use crate::job::Runner;

impl Runner<'_> {
    /// Before an I/O: true when the flow holds this job back. As fio, what is in flight is
    /// completed and the job sleeps flow_sleep if set; else it yields and tries again.
    #[inline]
    pub(in crate::job) fn flow_held(&mut self, stop: &Stops<'_>) -> bool {
        let Some(g) = self.flow.as_mut() else {
            return false;
        };
        if !g.ahead() {
            return false;
        }
        let sleep = g.sleep;
        if sleep.is_zero() {
            std::thread::yield_now();
        } else {
            self.quiesce();
            stop.pause(sleep);
        }
        self.now = self.clock.now();
        true
    }
}
