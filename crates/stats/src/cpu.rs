//! Per-thread CPU usage, as fio's `getrusage(RUSAGE_THREAD)` accounting reports it.
//!
//! This crate forbids `unsafe`, so instead of calling `getrusage` it reads the same kernel
//! counters from `/proc/thread-self/stat` (minflt, majflt, utime, stime) and
//! `/proc/thread-self/status` (voluntary and nonvoluntary context switches).
//!
//! Resolution: utime/stime in `/proc` are in clock ticks, `sysconf(_SC_CLK_TCK)`, which Linux
//! fixes at 100 for user space on every architecture (`USER_HZ`), so times here are multiples of
//! 10 ms. getrusage reports microseconds. Over a run of seconds that is a small error; for exact
//! per-I/O CPU cost the engine crate should expose a safe `getrusage(RUSAGE_THREAD)` wrapper
//! and [`CpuUsage::from_rusage`] takes its fields as they are.

use std::fs;
use std::ops::{AddAssign, Sub};

use crate::error::{Error, Result};

/// Linux `USER_HZ`: the unit of utime/stime in `/proc`.
pub const CLK_TCK: u64 = 100;

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
    /// Snapshot of the calling thread.
    pub fn thread() -> Result<Self> {
        const STAT: &str = "/proc/thread-self/stat";
        const STATUS: &str = "/proc/thread-self/status";
        let stat = fs::read_to_string(STAT).map_err(|e| Error::io(STAT, e))?;
        let status = fs::read_to_string(STATUS).map_err(|e| Error::io(STATUS, e))?;
        Self::parse(&stat, &status)
    }

    /// Build from the contents of `/proc/<tid>/stat` and `/proc/<tid>/status`.
    pub fn parse(stat: &str, status: &str) -> Result<Self> {
        // The command name (field 2) is in parentheses and may itself hold spaces or ')', so
        // fields are counted from the last ')'. After it comes field 3 (state).
        let rest = stat
            .rfind(')')
            .map(|i| &stat[i + 1..])
            .ok_or(Error::parse("stat", "no ')' after the command name"))?;
        let fields: Vec<&str> = rest.split_ascii_whitespace().collect();
        let field = |n: usize, what: &'static str| -> Result<u64> {
            fields
                .get(n - 3)
                .and_then(|s| s.parse().ok())
                .ok_or(Error::parse("stat", what))
        };
        let minf = field(10, "minflt (field 10)")?;
        let majf = field(12, "majflt (field 12)")?;
        let utime = field(14, "utime (field 14)")?;
        let stime = field(15, "stime (field 15)")?;

        let mut vol = None;
        let mut invol = None;
        for line in status.lines() {
            if let Some(v) = line.strip_prefix("voluntary_ctxt_switches:") {
                vol = v.trim().parse::<u64>().ok();
            } else if let Some(v) = line.strip_prefix("nonvoluntary_ctxt_switches:") {
                invol = v.trim().parse::<u64>().ok();
            }
        }
        let vol = vol.ok_or(Error::parse("status", "voluntary_ctxt_switches"))?;
        let invol = invol.ok_or(Error::parse("status", "nonvoluntary_ctxt_switches"))?;

        Ok(Self {
            user_us: utime * (1_000_000 / CLK_TCK),
            sys_us: stime * (1_000_000 / CLK_TCK),
            ctx: vol + invol,
            majf,
            minf,
        })
    }

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

    // From a real /proc/thread-self/stat, with a command name holding ") (" to test the parse.
    const STAT: &str = "4242 (a) (b) S 4200 4242 4200 34816 4242 4194304 1234 0 7 0 \
                        153 42 0 0 20 0 3 0 123456 12345678 1000 18446744073709551615 \
                        1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0";
    const STATUS: &str = "Name:\tfio\nState:\tS (sleeping)\nThreads:\t3\n\
                          voluntary_ctxt_switches:\t321\nnonvoluntary_ctxt_switches:\t12\n";

    #[test]
    fn parses_fixture() {
        let c = CpuUsage::parse(STAT, STATUS).unwrap();
        assert_eq!(
            c,
            CpuUsage {
                user_us: 1_530_000,
                sys_us: 420_000,
                ctx: 333,
                majf: 7,
                minf: 1234,
            }
        );
        assert_eq!(c.usr_percent(3060), 50.0);
        assert!(CpuUsage::parse("4242 (x", STATUS).is_err());
        assert!(CpuUsage::parse(STAT, "Name:\tx\n").is_err());
    }

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
    }

    #[test]
    fn reads_own_thread() {
        // /proc is always there on Linux; the counters only grow.
        let a = CpuUsage::thread().unwrap();
        let mut x = 0u64;
        for i in 0..1_000_000u64 {
            x = x.wrapping_mul(31).wrapping_add(i);
        }
        std::hint::black_box(x);
        let b = CpuUsage::thread().unwrap();
        assert!(b.user_us + b.sys_us >= a.user_us + a.sys_us);
        assert!(b.minf >= a.minf);
    }
}
