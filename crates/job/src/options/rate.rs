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
    imp!(Rate, "rate_cycle", ["ratecycle"], Int, Some("1000"), "Window over which rate_min and rate_iops_min are judged (msec)",
        |s, a| { s.rate_cycle_ns = a.count()?.max(1).saturating_mul(1_000_000); Ok(()) }),
    imp!(Rate, "rate_ignore_thinktime", [], Bool, Some("0"), "After a thinktime, go on at the rate rather than catch up on the I/O not done meanwhile",
        |s, a| { s.rate_ignore_thinktime = a.flag()?; Ok(()) }),
    not!(Rate, "max_latency", [], Time(US)),
    not!(Rate, "latency_target", [], Time(US)),
    not!(Rate, "latency_window", [], Time(US)),
    not!(Rate, "latency_percentile", [], Str),
    not!(Rate, "latency_run", [], Bool),
];

#[cfg(test)]
mod tests {
    use crate::options::testing::spec;
    use crate::spec::RateProcess;

    #[test]
    fn rate_cycle_is_milliseconds_of_the_min_rate_window() {
        assert_eq!(spec(&[]).rate_cycle_ns, 1_000_000_000);
        assert_eq!(spec(&["ratecycle=250"]).rate_cycle_ns, 250_000_000);
        assert!(spec(&["rate_ignore_thinktime=1"]).rate_ignore_thinktime);
        assert!(!spec(&[]).rate_ignore_thinktime);
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
