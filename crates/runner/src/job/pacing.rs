//! Pacing around thinktime and rate limits: `thinktime_blocks_type` (count issued or completed
//! I/Os towards thinktime_blocks), `thinktime_iotime` (think after this long doing I/O),
//! `rate_ignore_thinktime` (no catch-up after thinking) and `rate_cycle` (the window rate_min
//! is judged over), as fio's handle_thinktime and check_min_rate.

use iolab_workload::JobPlan;

mod hooks;

/// When the job last thought: the block count and the time then.
pub(super) struct ThinkState {
    blocks: u64,
    at: u64,
}

impl ThinkState {
    /// Not thought yet: I/O time counts from `now`, the job's start.
    pub(super) fn since(now: u64) -> ThinkState {
        ThinkState { blocks: 0, at: now }
    }
}

/// rate_cycle in ns.
pub(super) fn rate_cycle_ns(plan: &JobPlan) -> u64 {
    plan.spec.rate_cycle.max(1).saturating_mul(1_000_000)
}

/// Whether a minimum rate (rate_min, rate_iops_min) is set for any direction.
pub(super) fn has_min_rate(plan: &JobPlan) -> bool {
    plan.rate
        .min_bytes_per_sec
        .iter()
        .chain(&plan.rate.min_iops)
        .any(|&v| v > 0)
}
