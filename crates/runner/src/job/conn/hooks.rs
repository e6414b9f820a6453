//! What the job loop does with conn.rs, as methods of `Runner`: kept apart so that
//! conn.rs, which the loop names, imports nothing of the loop's (issue 30).

use iolab_stats::Dir;

use crate::job::Runner;

impl Runner<'_> {
    /// A read of 0 bytes on a connection: the peer has gone (fio's td->done; the engine says
    /// it is finished, so the job issues no more). The request was never done, so it is not
    /// counted.
    pub(in crate::job) fn end_of_stream(&mut self, dir: Dir) {
        self.stats.dir_mut(dir).total_ios -= 1;
    }
}
