//! What the job loop does with trim.rs, as methods of `Runner`: kept apart so that
//! trim.rs, which the loop names, imports nothing of the loop's (issue 30).

use iolab_engine::Req;
use iolab_stats::Dir;

use crate::job::Runner;

impl Runner<'_> {
    /// trim_backlog: a trim to issue instead of the next I/O of the workload.
    pub(in crate::job) fn trim_backlog_req(&mut self) -> Option<Req> {
        if self.free_slots.is_empty() {
            return None;
        }
        let w = self.verify.as_deref_mut()?.trim_next()?;
        let slot = self.take_slot(Some(Dir::Trim))?;
        self.stats.issued(Dir::Trim);
        self.slots[slot as usize].due_ns = 0;
        let file = self.files[w.file as usize];
        Some(Req::trim(file, w.offset, w.len as usize).with_tag(slot as u64))
    }
}
