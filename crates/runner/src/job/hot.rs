//! What keeps per-batch work out of the per-I/O path: the loop's periodic duties (bandwidth
//! and IOPS samples, the rate_min check, the status line) share one deadline, so between two
//! of them a completion costs one comparison instead of one per duty.
//!
//! A hook that does something every N milliseconds joins in by adding its own next due time
//! to [`Runner::next_tick_at`]. A hook that runs per I/O is called as `if H { self.hook() }`
//! in the loop's functions (generic over `const H: bool`), and its option joins
//! [`Runner::hooks_wanted`]: a job with no such option runs the loop compiled with `H` false,
//! where the hooks are not there at all (not even a test of a flag each).

use super::types::STOP_POLL;

mod hooks;

/// How long a reap may wait, in ns: [`STOP_POLL`], or less up to the deadline, but at least
/// 100 µs (integer arithmetic: this runs once per reap).
#[inline]
pub(super) fn reap_wait_ns(deadline: Option<u64>, now: u64) -> u64 {
    let poll = STOP_POLL.as_nanos() as u64;
    match deadline {
        Some(d) => d.saturating_sub(now).clamp(100_000, poll),
        None => poll,
    }
}
