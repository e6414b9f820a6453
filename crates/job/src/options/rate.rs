//! Rate limits and latency targets.

use super::prelude::*;

/// The definitions, one entry per option, laid out by hand.
#[rustfmt::skip]
pub(super) static OPTIONS: &[OptDef] = &[
    imp!(Rate, "rate", [], PerDirSize, None, "Bandwidth cap in bytes/s, per direction",
        |s, a| a.per_dir_size(&mut s.rate)),
    imp!(Rate, "rate_min", ["ratemin"], PerDirSize, None, "Minimum bandwidth, per direction",
        |s, a| a.per_dir_size(&mut s.rate_min)),
    imp!(Rate, "rate_iops", [], PerDirInt, None, "IOPS cap, per direction",
        |s, a| a.per_dir_int(&mut s.rate_iops)),
    imp!(Rate, "rate_iops_min", [], PerDirInt, None, "Minimum IOPS, per direction",
        |s, a| a.per_dir_int(&mut s.rate_iops_min)),
    imp!(Rate, "rate_process", [], Choice(&["linear", "poisson"]), Some("linear"), "How rate-limited I/O is spaced",
        |s, a| {
            s.rate_process = if a.choice()? == "poisson" {
                RateProcess::Poisson
            } else {
                RateProcess::Linear
            };
            Ok(())
        }),
    imp!(Rate, "rate_cycle", ["ratecycle"], Int, Some("1000"), "Window over which rate_min is judged (ms)",
        |s, a| { s.rate_cycle = a.count()?.max(1); Ok(()) }),
    imp!(Rate, "rate_ignore_thinktime", [], Bool, None, "Keep the rate's schedule through thinktime instead of catching up after it",
        |s, a| { s.rate_ignore_thinktime = a.flag()?; Ok(()) }),
    imp!(Rate, "max_latency", [], Str, None, "End the job with ETIMEDOUT when an I/O takes longer (us by default), per direction",
        |s, a| {
            let f = |x: &str| value::parse_time(x, US).map(|t| t.us.saturating_mul(1000));
            s.max_latency.update(value::parse_per_dir(a.v, false, f)?);
            Ok(())
        }),
    imp!(Rate, "latency_target", [], Time(US), None, "Find the highest depth whose latency stays under this (us by default)",
        |s, a| { s.latency_target = Some(a.time(US)?).filter(|d| !d.is_zero()); Ok(()) }),
    imp!(Rate, "latency_window", [], Time(US), None, "How long each depth is tried for latency_target (us by default)",
        |s, a| { s.latency_window = a.time(US)?; Ok(()) }),
    imp!(Rate, "latency_percentile", [], FloatList, Some("100"), "Percentage of I/Os that must meet latency_target",
        |s, a| {
            let p = value::parse_float(a.v)?;
            if !(0.0..=100.0).contains(&p) {
                return Err(format!("out of range: {p} (0 to 100)"));
            }
            s.latency_percentile = p;
            Ok(())
        }),
    imp!(Rate, "latency_run", [], Bool, Some("0"), "Keep adjusting the depth to latency_target instead of ending when found",
        |s, a| { s.latency_run = a.flag()?; Ok(()) }),
];

#[cfg(test)]
pub(super) mod tests {
    use std::time::Duration;

    use crate::options::testing::{spec, Acts, Refused};
    use crate::spec::RateProcess;
    use crate::value::PerDir;

    /// Each definition at work: a value fio takes, and the field it must set.
    #[rustfmt::skip]
    pub(in crate::options) static ACTS: &[Acts] = &[
        (&["rate=1m"], |s| s.rate == PerDir::all(1 << 20)),
        (&["rate=1m,2m"], |s| (s.rate.read, s.rate.write, s.rate.trim) == (1 << 20, 2 << 20, 2 << 20)),
        (&["rate_min=512k"], |s| s.rate_min == PerDir::all(512 << 10)),
        (&["ratemin=,1m"], |s| (s.rate_min.read, s.rate_min.write) == (0, 1 << 20)),
        (&["rate_iops=100"], |s| s.rate_iops == PerDir::all(100)),
        (&["rate_iops_min=10"], |s| s.rate_iops_min == PerDir::all(10)),
        (&["rate_process=poisson"], |s| s.rate_process == RateProcess::Poisson),
        (&["rate_cycle=250"], |s| s.rate_cycle == 250),
        (&["rate_ignore_thinktime=1"], |s| s.rate_ignore_thinktime),
        // Kept in nanoseconds; microseconds by default.
        (&["max_latency=100"], |s| s.max_latency == PerDir::all(100_000)),
        (&["max_latency=10ms,20ms"], |s| (s.max_latency.read, s.max_latency.write) == (10_000_000, 20_000_000)),
        (&["latency_target=500"], |s| s.latency_target == Some(Duration::from_micros(500))),
        (&["latency_target=10ms"], |s| s.latency_target == Some(Duration::from_millis(10))),
        (&["latency_window=1s"], |s| s.latency_window == Duration::from_secs(1)),
        (&["latency_percentile=99.9"], |s| s.latency_percentile == 99.9),
        (&["latency_run=1"], |s| s.latency_run),
    ];

    /// Values fio refuses (negative rates: iolab's, where fio would wrap them).
    pub(in crate::options) static REFUSED: &[Refused] = &[
        &["rate_iops=-1,-1"],
        &["rate_iops_min=-5,"],
        &["rate_process=exponential"],
        &["rate_cycle=-1"],
        &["rate_ignore_thinktime=2"],
        &["max_latency=abc"],
        &["latency_percentile=101"],
        &["latency_run"],
    ];

    crate::options::testing::table_tests!();

    #[test]
    fn rate_cycle_is_milliseconds_of_the_min_rate_window() {
        assert_eq!(spec(&[]).rate_cycle, 1000);
        assert_eq!(spec(&["ratecycle=250"]).rate_cycle, 250);
    }

    #[test]
    fn rates_are_per_direction() {
        let s = spec(&["rate_iops=100,", "rate=1m,2m"]);
        assert_eq!((s.rate_iops.read, s.rate_iops.write), (100, 0));
        assert_eq!((s.rate.read, s.rate.write), (1 << 20, 2 << 20));
        assert_eq!(
            spec(&["rate_process=poisson"]).rate_process,
            RateProcess::Poisson
        );
    }
}
