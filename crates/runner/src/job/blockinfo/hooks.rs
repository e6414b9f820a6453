//! What the job loop does with blockinfo.rs, as methods of `Runner`: kept apart so that
//! blockinfo.rs, which the loop names, imports nothing of the loop's (issue 30).

use iolab_engine::Done;

use crate::job::Runner;

impl Runner<'_> {
    /// A completion's mark on its block, where the job keeps them.
    #[inline]
    pub(in crate::job) fn block_done(&mut self, d: &Done) {
        if let Some(b) = self.blocks.as_deref_mut() {
            b.done(d);
        }
    }

    /// Hands the blocks to the job's statistics at its end.
    pub(in crate::job) fn seal_blocks(&mut self) {
        if let Some(b) = self.blocks.take() {
            self.stats.block_infos = b.infos;
        }
    }
}
