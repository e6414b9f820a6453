//! Per-thread CPU usage, as fio's `getrusage(RUSAGE_THREAD)` accounting reports it. The
//! engine crate reads the counters (`sys::thread_usage`, a safe getrusage wrapper);
//! [`CpuUsage::from_rusage`] takes its fields as they are, in microseconds.

use std::ops::{AddAssign, Sub};

/// CPU time, context switches and page faults of one thread over an interval (or, for a
/// snapshot, since the thread started).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CpuUsage {
    /// User time in microseconds.
    pub user_us: u64,
    /// System time in microseconds.
    pub sys_us: u64,
    /// Voluntary + involuntary context switches (fio's `ctx`).
    pub ctx: u64,
    /// Major page faults (fio's `majf`).
    pub majf: u64,
    /// Minor page faults (fio's `minf`).
    pub minf: u64,
}

impl CpuUsage {
    /// Build from `struct rusage` fields (times as seconds + microseconds).
    pub fn from_rusage(
        utime: (u64, u64),
        stime: (u64, u64),
        nvcsw: u64,
        nivcsw: u64,
        majflt: u64,
        minflt: u64,
    ) -> Self {
        Self {
            user_us: utime.0 * 1_000_000 + utime.1,
            sys_us: stime.0 * 1_000_000 + stime.1,
            ctx: nvcsw + nivcsw,
            majf: majflt,
            minf: minflt,
        }
    }

    /// fio's `usr_cpu`: user time in percent of `runtime_ms` (fio's `total_run_time`).
    /// fio keeps CPU time in whole milliseconds, and so does this.
    pub fn usr_percent(&self, runtime_ms: u64) -> f64 {
        percent(self.user_us / 1000, runtime_ms)
    }

    /// fio's `sys_cpu`.
    pub fn sys_percent(&self, runtime_ms: u64) -> f64 {
        percent(self.sys_us / 1000, runtime_ms)
    }
}

fn percent(ms: u64, runtime_ms: u64) -> f64 {
    if runtime_ms == 0 {
        0.0
    } else {
        ms as f64 * 100.0 / runtime_ms as f64
    }
}

/// Usage between two snapshots of the same thread (`later - earlier`).
impl Sub for CpuUsage {
    type Output = CpuUsage;
    fn sub(self, earlier: CpuUsage) -> CpuUsage {
        CpuUsage {
            user_us: self.user_us.saturating_sub(earlier.user_us),
            sys_us: self.sys_us.saturating_sub(earlier.sys_us),
            ctx: self.ctx.saturating_sub(earlier.ctx),
            majf: self.majf.saturating_sub(earlier.majf),
            minf: self.minf.saturating_sub(earlier.minf),
        }
    }
}

impl AddAssign<&CpuUsage> for CpuUsage {
    fn add_assign(&mut self, rhs: &CpuUsage) {
        self.user_us += rhs.user_us;
        self.sys_us += rhs.sys_us;
        self.ctx += rhs.ctx;
        self.majf += rhs.majf;
        self.minf += rhs.minf;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn difference_and_sum() {
        let a = CpuUsage::from_rusage((1, 500_000), (0, 250_000), 10, 2, 0, 100);
        let b = CpuUsage::from_rusage((2, 0), (0, 750_000), 15, 3, 1, 180);
        let d = b - a;
        assert_eq!(
            d,
            CpuUsage::from_rusage((0, 500_000), (0, 500_000), 5, 1, 1, 80)
        );
        let mut s = d;
        s += &d;
        assert_eq!(s.user_us, 1_000_000);
        assert_eq!(s.ctx, 12);
        assert_eq!(s.usr_percent(4000), 25.0);
        assert_eq!(s.sys_percent(0), 0.0);
    }
}
