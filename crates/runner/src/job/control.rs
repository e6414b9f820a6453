//! What the run-time control options (error policy, latency target, steady state) hand to
//! the job's statistics when it ends.

use super::Runner;

impl Runner<'_> {
    /// fio's io_u_quiesce: what the engine holds completes (a request held back, busy or not
    /// yet due, is not in the engine and is left alone). Errors end the job through `fail`.
    pub(super) fn quiesce(&mut self) {
        if self.commit().is_err() {
            return;
        }
        while self.eng.in_flight() > 0 {
            let n = self.eng.in_flight();
            if self.reap(n, None).is_err() {
                return;
            }
        }
    }

    /// Copies the control options' results into the job's statistics.
    pub(super) fn seal_control(&mut self) {
        self.stats.total_err = self.errors.total;
        self.stats.first_error = if self.errors.reported() {
            self.errors.first
        } else {
            0
        };
        self.stats.latency_qd = self.lat.chosen();
        // In a group judged as a whole, its last job (the sampler) holds the group's window.
        self.stats.steady = match &self.steady_group {
            Some(l) if !l.sampler => None,
            _ => self.steady.result(),
        };
    }
}
