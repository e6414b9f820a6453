//! The per-I/O clock. Reading CLOCK_MONOTONIC through the vDSO costs ~30 ns here; `rdtsc`
//! costs ~12 ns. With two readings per I/O that difference is a quarter of the runner's own
//! cost on the null engine, so, as fio does with `clocksource=cpu`, we use the TSC where the
//! CPU says it is invariant (constant_tsc and nonstop_tsc), calibrated against
//! CLOCK_MONOTONIC, and CLOCK_MONOTONIC everywhere else. `IOLAB_CLOCK=monotonic` forces it.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

use super::monotonic_ns;

/// fio's gtod_cpu: the time of day (µs) one thread keeps reading into here, for every job's
/// clock to load instead of asking the kernel (process-wide, as fio's `fio_ts`).
static KEPT_US: AtomicU64 = AtomicU64::new(0);

/// Reads the time of day into the kept time; the gtod thread calls it without pause.
pub fn keep_time() {
    KEPT_US.store(realtime_us(), Relaxed);
}

/// Nanoseconds since the clock was started.
#[derive(Clone, Copy, Debug)]
pub struct Clock {
    kind: Kind,
}

#[derive(Clone, Copy, Debug)]
enum Kind {
    Monotonic {
        base: u64,
    },
    /// gettimeofday(2): microseconds, as fio's clocksource=gettimeofday.
    Gettimeofday {
        base: u64,
    },
    /// The time [`keep_time`] last stored (fio's gtod_cpu offload).
    Kept {
        base: u64,
    },
    /// ns = (ticks - base) * mult >> 32
    #[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
    Tsc {
        base: u64,
        mult: u64,
    },
}

impl Clock {
    /// The best clock this machine offers, started now.
    pub fn start() -> Clock {
        let forced = std::env::var("IOLAB_CLOCK").is_ok_and(|v| v == "monotonic");
        if !forced && invariant_tsc() {
            if let Some(c) = Clock::tsc() {
                return c;
            }
        }
        Clock::monotonic()
    }

    /// CLOCK_MONOTONIC, started now.
    pub fn monotonic() -> Clock {
        Clock {
            kind: Kind::Monotonic {
                base: monotonic_ns(),
            },
        }
    }

    /// gettimeofday(2), started now: readings are whole microseconds.
    pub fn gettimeofday() -> Clock {
        Clock {
            kind: Kind::Gettimeofday {
                base: realtime_us(),
            },
        }
    }

    /// The time a thread calling [`keep_time`] keeps, started now: whole microseconds, as
    /// fresh as that thread's last reading.
    pub fn kept() -> Clock {
        keep_time();
        Clock {
            kind: Kind::Kept {
                base: KEPT_US.load(Relaxed),
            },
        }
    }

    /// The TSC, calibrated now, where the CPU says it is invariant; None elsewhere.
    pub fn cpu() -> Option<Clock> {
        if invariant_tsc() {
            Clock::tsc()
        } else {
            None
        }
    }

    /// Which clock this is, for reports.
    pub fn name(&self) -> &'static str {
        match self.kind {
            Kind::Monotonic { .. } => "clock_gettime",
            Kind::Gettimeofday { .. } => "gettimeofday",
            Kind::Kept { .. } => "gettimeofday (gtod_cpu thread)",
            Kind::Tsc { .. } => "tsc",
        }
    }

    #[inline]
    pub fn now(&self) -> u64 {
        match self.kind {
            Kind::Monotonic { base } => monotonic_ns().wrapping_sub(base),
            Kind::Gettimeofday { base } => realtime_us().wrapping_sub(base).wrapping_mul(1000),
            Kind::Kept { base } => KEPT_US.load(Relaxed).wrapping_sub(base).wrapping_mul(1000),
            Kind::Tsc { base, mult } => {
                ((u128::from(ticks().wrapping_sub(base)) * u128::from(mult)) >> 32) as u64
            }
        }
    }

    /// Calibrates the TSC against CLOCK_MONOTONIC over ~20 ms (an error of a few parts per
    /// million: nanoseconds over a latency, milliseconds over an hour).
    fn tsc() -> Option<Clock> {
        if !cfg!(target_arch = "x86_64") {
            return None;
        }
        let (t0, n0) = (ticks(), monotonic_ns());
        std::thread::sleep(std::time::Duration::from_millis(20));
        let (t1, n1) = (ticks(), monotonic_ns());
        let (dt, dn) = (t1.checked_sub(t0)?, n1.checked_sub(n0)?);
        if dt == 0 || dn == 0 {
            return None;
        }
        let mult = ((u128::from(dn) << 32) / u128::from(dt)) as u64;
        Some(Clock {
            kind: Kind::Tsc {
                base: ticks(),
                mult,
            },
        })
    }
}

/// Microseconds since the epoch, from gettimeofday(2).
fn realtime_us() -> u64 {
    let mut tv = libc::timeval {
        tv_sec: 0,
        tv_usec: 0,
    };
    // SAFETY: gettimeofday writes one timeval into the pointer, which points at `tv`; the
    // time zone argument may be null.
    unsafe { libc::gettimeofday(&mut tv, std::ptr::null_mut()) };
    tv.tv_sec as u64 * 1_000_000 + tv.tv_usec as u64
}

fn invariant_tsc() -> bool {
    if !cfg!(target_arch = "x86_64") {
        return false;
    }
    let Ok(info) = std::fs::read_to_string("/proc/cpuinfo") else {
        return false;
    };
    let flags = info.lines().find(|l| l.starts_with("flags")).unwrap_or("");
    let has = |f: &str| flags.split_whitespace().any(|x| x == f);
    has("constant_tsc") && has("nonstop_tsc")
}

#[inline]
fn ticks() -> u64 {
    #[cfg(target_arch = "x86_64")]
    {
        // SAFETY: rdtsc reads a counter; it has no memory effects and exists on every x86_64.
        unsafe { core::arch::x86_64::_rdtsc() }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        monotonic_ns()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gettimeofday_reads_whole_microseconds() {
        let c = Clock::gettimeofday();
        std::thread::sleep(std::time::Duration::from_millis(2));
        let t = c.now();
        assert_eq!(t % 1000, 0, "{t}");
        assert!(t >= 2_000_000, "{t}");
        assert_eq!(c.name(), "gettimeofday");
    }

    #[test]
    fn the_clock_agrees_with_clock_monotonic() {
        let c = Clock::start();
        let m = Clock::monotonic();
        std::thread::sleep(std::time::Duration::from_millis(50));
        let (a, b) = (c.now(), m.now());
        // Both started within microseconds of each other; after 50 ms they agree to 1%.
        let diff = a.abs_diff(b) as f64;
        assert!(
            diff < b as f64 * 0.01 + 100_000.0,
            "{} {a} vs monotonic {b}",
            c.name()
        );
        assert!(a >= 50_000_000, "{a}");
    }
}
