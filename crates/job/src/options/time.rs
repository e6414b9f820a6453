//! Time: runtime, ramps, delays, think time, steady state.

use super::prelude::*;

/// The definitions, one entry per option, laid out by hand.
#[rustfmt::skip]
pub(super) static OPTIONS: &[OptDef] = &[
    imp!(Time, "runtime", ["timeout"], Time(S), Some("0"), "Stop after this long (seconds by default)",
        |s, a| { s.runtime = Some(a.time(TimeUnit::Seconds)?).filter(|d| !d.is_zero()); Ok(()) }),
    imp!(Time, "time_based", [], Flag, None, "Run for the whole runtime, repeating the workload",
        |s, a| { s.time_based = a.flag()?; Ok(()) }),
    imp!(Time, "ramp_time", [], Time(S), None, "Run this long before recording figures",
        |s, a| { s.ramp_time = a.time(TimeUnit::Seconds)?; Ok(()) }),
    imp!(Time, "startdelay", [], Time(S), Some("0"), "Wait this long before starting",
        |s, a| { s.startdelay = a.time(TimeUnit::Seconds)?; Ok(()) }),
    imp!(Time, "thinktime", [], Time(US), Some("0"), "Pause between I/Os (microseconds by default)",
        |s, a| { s.thinktime = a.time(TimeUnit::Micros)?; Ok(()) }),
    imp!(Time, "thinktime_spin", [], Time(US), Some("0"), "Spin this part of thinktime instead of sleeping",
        |s, a| { s.thinktime_spin = a.time(TimeUnit::Micros)?; Ok(()) }),
    imp!(Time, "thinktime_blocks", [], Int, None, "Think after this many blocks (1 unless set)",
        |s, a| { s.thinktime_blocks = to_u32(a.int()?)?.max(1); Ok(()) }),
    imp!(Time, "clocksource", [], Choice(&["gettimeofday", "clock_gettime", "cpu"]), None, "Clock latencies are read from: gettimeofday (microseconds), clock_gettime (CLOCK_MONOTONIC), cpu (the TSC)",
        |s, a| {
            s.clocksource = match a.choice()? {
                "gettimeofday" => ClockSource::Gettimeofday,
                "clock_gettime" => ClockSource::ClockGettime,
                _ => ClockSource::Cpu,
            };
            Ok(())
        }),
    imp!(Time, "thinktime_blocks_type", [], Choice(&["complete", "issue"]), Some("complete"), "Count thinktime_blocks as completed or issued I/Os",
        |s, a| { s.thinktime_blocks_issue = a.choice()? == "issue"; Ok(()) }),
    imp!(Time, "thinktime_iotime", [], Time(S), Some("0"), "Think after this long doing I/O (seconds by default)",
        |s, a| { s.thinktime_iotime = a.time(S)?; Ok(()) }),
    imp!(Steadystate, "steadystate", ["ss"], Str, Some("iops_slope:0.01%"), "Steady-state criterion and limit: iops, iops_slope, bw, bw_slope, then :limit[%]",
        |s, a| { s.steadystate = control::parse_steadystate(a.v, a.kb)?; Ok(()) }),
    imp!(Steadystate, "steadystate_duration", ["ss_dur"], Time(S), Some("0"), "End the job once steady over this long (seconds by default; 0: off)",
        |s, a| { s.steadystate_duration = a.time(S)?; Ok(()) }),
    imp!(Steadystate, "steadystate_ramp_time", ["ss_ramp"], Time(S), Some("0"), "Wait this long before collecting steady-state data",
        |s, a| { s.steadystate_ramp_time = a.time(S)?; Ok(()) }),
    imp!(Steadystate, "steadystate_check_interval", [], Time(S), Some("1"), "Steady-state sample interval; the window holds duration/interval samples (newer fio's; 1 s in fio 3.33)",
        |s, a| {
            let d = a.time(S)?;
            if d < std::time::Duration::from_millis(1) {
                return Err("must be at least 1ms".into());
            }
            s.steadystate_check_interval = d;
            Ok(())
        }),
];

#[cfg(test)]
pub(super) mod tests {
    use std::time::Duration;

    use crate::control::{Steady, SteadyKind};
    use crate::options::testing::{spec, Acts, Refused};
    use crate::spec::ClockSource;

    /// Each definition at work: a value fio takes, and the field it must set.
    #[rustfmt::skip]
    pub(in crate::options) static ACTS: &[Acts] = &[
        (&["runtime=1m"], |s| s.runtime == Some(Duration::from_secs(60))),
        (&["timeout=30"], |s| s.runtime == Some(Duration::from_secs(30))),
        (&["time_based"], |s| s.time_based),
        (&["time_based=2"], |s| s.time_based),
        (&["ramp_time=10"], |s| s.ramp_time == Duration::from_secs(10)),
        (&["ramp_time=500ms"], |s| s.ramp_time == Duration::from_millis(500)),
        (&["startdelay=5"], |s| s.startdelay == Duration::from_secs(5)),
        (&["thinktime=50"], |s| s.thinktime == Duration::from_micros(50)),
        (&["thinktime=2ms"], |s| s.thinktime == Duration::from_millis(2)),
        (&["thinktime_spin=20"], |s| s.thinktime_spin == Duration::from_micros(20)),
        (&["thinktime_blocks=8"], |s| s.thinktime_blocks == 8),
        (&["clocksource=cpu"], |s| s.clocksource == ClockSource::Cpu),
        (&["clocksource=gettimeofday"], |s| s.clocksource == ClockSource::Gettimeofday),
        (&["thinktime_blocks_type=issue"], |s| s.thinktime_blocks_issue),
        (&["thinktime_iotime=2"], |s| s.thinktime_iotime == Duration::from_secs(2)),
        (&["steadystate=iops:5%"], |s| s.steadystate == Steady { kind: SteadyKind::Iops, limit: 5.0, pct: true }),
        (&["ss=bw_slope:1m"], |s| s.steadystate == Steady { kind: SteadyKind::BwSlope, limit: 1048576.0, pct: false }),
        (&["steadystate_duration=60"], |s| s.steadystate_duration == Duration::from_secs(60)),
        (&["ss_dur=2m"], |s| s.steadystate_duration == Duration::from_secs(120)),
        (&["steadystate_ramp_time=5"], |s| s.steadystate_ramp_time == Duration::from_secs(5)),
        (&["ss_ramp=5"], |s| s.steadystate_ramp_time == Duration::from_secs(5)),
        (&["steadystate_check_interval=2"], |s| s.steadystate_check_interval == Duration::from_secs(2)),
    ];

    /// Values fio refuses.
    pub(in crate::options) static REFUSED: &[Refused] = &[
        &["runtime=abc"],
        &["thinktime_blocks=-1"],
        &["clocksource=rdtsc"],
        &["thinktime_blocks_type=submit"],
        &["steadystate=lat:5"],
        &["steadystate=iops"],
        &["steadystate_duration=abc"],
        &["steadystate_check_interval=0"],
    ];

    crate::options::testing::table_tests!();

    #[test]
    fn regression_a_flag_set_to_2_was_refused_where_fio_takes_any_integer() {
        // fio 3.33 runs `time_based=2` time based; iolab refused it as not 0 or 1. A boolean
        // that needs its value still takes only 0 or 1, as fio's maximum of 1 for it.
        assert!(spec(&["time_based=2"]).time_based);
        assert!(!spec(&["time_based", "time_based=0"]).time_based);
        assert!(crate::options::testing::applied(&["time_based=yes"]).is_err());
        assert!(crate::options::testing::applied(&["end_fsync=2"]).is_err());
    }

    #[test]
    fn clocksource_names_fios_three_clocks() {
        use crate::spec::ClockSource;
        assert_eq!(spec(&[]).clocksource, ClockSource::Auto);
        let c = |v: &str| spec(&[v]).clocksource;
        assert_eq!(c("clocksource=gettimeofday"), ClockSource::Gettimeofday);
        assert_eq!(c("clocksource=clock_gettime"), ClockSource::ClockGettime);
        assert_eq!(c("clocksource=cpu"), ClockSource::Cpu);
    }

    #[test]
    fn runtime_is_seconds_and_zero_means_none() {
        assert_eq!(spec(&["runtime=1m"]).runtime, Some(Duration::from_secs(60)));
        assert_eq!(spec(&["runtime=5"]).runtime, Some(Duration::from_secs(5)));
        assert_eq!(spec(&["runtime=0"]).runtime, None);
    }

    #[test]
    fn thinktime_is_microseconds() {
        assert_eq!(spec(&["thinktime=50"]).thinktime, Duration::from_micros(50));
        assert_eq!(spec(&["thinktime_blocks=0"]).thinktime_blocks, 1);
    }
}
