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
mod tests {
    use crate::options::testing::spec;
    use crate::spec::RateProcess;

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
