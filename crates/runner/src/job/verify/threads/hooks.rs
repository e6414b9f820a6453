//! What the job loop does with threads.rs, as methods of `Runner`: kept apart so that
//! threads.rs, which the loop names, imports nothing of the loop's (issue 30).

use crate::job::Runner;
use crate::verify::Written;

impl Runner<'_> {
    /// Hands a block read back to the verify threads; false when there are none.
    pub(in crate::job) fn verify_async_send(&mut self, w: Written, got: &[u8]) -> bool {
        let Some(pool) = self.verify.as_deref_mut().and_then(|v| v.pool.as_mut()) else {
            return false;
        };
        // Neither channel may fill, or the threads and this one would wait for each other.
        if pool.full() {
            self.verify_async_collect(Some(1));
        }
        if let Some(pool) = self.verify.as_deref_mut().and_then(|v| v.pool.as_mut()) {
            pool.send(w, got);
        }
        true
    }

    /// Reports what the verify threads found: what is back already (`wait` None), at least
    /// `n` blocks (`Some(n)`), or everything out (`Some(usize::MAX)`).
    pub(in crate::job) fn verify_async_collect(&mut self, wait: Option<usize>) {
        let mut left = wait.unwrap_or(0);
        loop {
            let Some(pool) = self.verify.as_deref_mut().and_then(|v| v.pool.as_mut()) else {
                return;
            };
            let Some(c) = pool.next(left > 0) else {
                return;
            };
            left = left.saturating_sub(1);
            // As inline: after the failure that ends the job, what was still being checked
            // is not reported.
            if !c.bad.is_empty() && !self.done {
                self.verify_failed(&c.bad, &c.w, &c.buf);
            }
            if let Some(pool) = self.verify.as_deref_mut().and_then(|v| v.pool.as_mut()) {
                pool.recycle(c.buf);
            }
        }
    }
}
