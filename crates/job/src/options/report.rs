//! Reporting: percentiles, grouping of directions, logs.

use super::prelude::*;
use crate::logs::WindowValue;

/// The definitions, one entry per option, laid out by hand.
#[rustfmt::skip]
pub(super) static OPTIONS: &[OptDef] = &[
    imp!(Report, "percentile_list", [], FloatList, Some("1:5:10:20:30:40:50:60:70:80:90:95:99:99.5:99.9:99.95:99.99"), "Percentiles to report",
        |s, a| {
            let l = value::parse_float_list(a.v)?;
            if l.iter().any(|p| !(0.0..=100.0).contains(p)) || l.len() > 20 {
                return Err("percentiles must be within 0-100, at most 20 of them".into());
            }
            s.percentile_list = l;
            s.percentile_precision = a
                .v
                .split(':')
                .map(|p| p.trim().split_once('.').map_or(0, |(_, d)| d.len()))
                .max()
                .unwrap_or(0);
            Ok(())
        }),
    imp!(Report, "clat_percentiles", [], Bool, Some("1"), "Report completion latency percentiles",
        |s, a| { s.clat_percentiles = a.flag()?; Ok(()) }),
    imp!(Report, "lat_percentiles", [], Bool, Some("0"), "Report total latency percentiles",
        |s, a| { s.lat_percentiles = a.flag()?; Ok(()) }),
    imp!(Report, "slat_percentiles", [], Bool, Some("0"), "Report submission latency percentiles",
        |s, a| { s.slat_percentiles = a.flag()?; Ok(()) }),
    imp!(Report, "unified_rw_reporting", [], Choice(&["none", "mixed", "both", "0", "1", "2"]), Some("none"), "Report reads and writes together: none, mixed, both",
        |s, a| {
            s.unified_rw_reporting = match a.choice()? {
                "mixed" | "1" => UnifiedRw::Mixed,
                "both" | "2" => UnifiedRw::Both,
                _ => UnifiedRw::None,
            };
            Ok(())
        }),
    imp!(Report, "disk_util", [], Bool, Some("1"), "Report disk utilisation",
        |s, a| { s.disk_util = a.flag()?; Ok(()) }),
    imp!(Log, "per_job_logs", [], Bool, Some("1"), "Include the job's number in log file names",
        |s, a| { s.logs.per_job = a.flag()?; Ok(()) }),
    imp!(Log, "write_bw_log", [], StrOrBare, None, "Write a bandwidth log, PREFIX_bw.N.log (bare: the job's name)",
        |s, a| { s.logs.bw = Some(a.v.to_string()); Ok(()) }),
    imp!(Log, "bwavgtime", [], Int, Some("500"), "Bandwidth sample window (ms)",
        |s, a| { s.bwavgtime = window(a.int()?)?; Ok(()) }),
    imp!(Log, "write_lat_log", [], StrOrBare, None, "Write latency logs, PREFIX_{lat,clat,slat}.N.log (bare: the job's name)",
        |s, a| { s.logs.lat = Some(a.v.to_string()); Ok(()) }),
    imp!(Log, "write_iops_log", [], StrOrBare, None, "Write an IOPS log, PREFIX_iops.N.log (bare: the job's name)",
        |s, a| { s.logs.iops = Some(a.v.to_string()); Ok(()) }),
    imp!(Log, "iopsavgtime", [], Int, Some("500"), "IOPS sample window (ms)",
        |s, a| { s.iopsavgtime = window(a.int()?)?; Ok(()) }),
    imp!(Log, "log_entries", [], Int, Some("1024"), "Initial entries of fio's in-memory logs (iolab writes logs as it goes: checked only)",
        |_, a| { let n = a.int()?; if (1024..=1_048_576).contains(&n) { Ok(()) } else { Err("must be 1024 to 1048576".into()) } }),
    imp!(Log, "log_avg_msec", [], Int, Some("0"), "Average bw/iops/lat logs over this period of time (ms; 0: a line per I/O)",
        |s, a| { s.logs.avg_msec = a.count()?; Ok(()) }),
    imp!(Log, "log_hist_msec", [], Int, Some("0"), "Write a completion latency histogram line at this interval (ms)",
        |s, a| { s.logs.hist_msec = a.count()?; Ok(()) }),
    imp!(Log, "log_hist_coarseness", [], Int, Some("0"), "Sum histogram bins in groups of 2^N (0-6)",
        |s, a| {
            s.logs.hist_coarseness = u32::try_from(a.int()?).ok().filter(|n| *n <= 6).ok_or("must be 0 to 6")?;
            Ok(())
        }),
    imp!(Log, "write_hist_log", [], StrOrBare, None, "Write a latency histogram log, PREFIX_clat_hist.N.log (bare: the job's name)",
        |s, a| { s.logs.hist = Some(a.v.to_string()); Ok(()) }),
    imp!(Log, "log_max_value", [], Bool, Some("0"), "Log the largest sample of a window instead of the mean",
        |s, a| { s.logs.window = if a.flag()? { WindowValue::Max } else { WindowValue::Mean }; Ok(()) }),
    imp!(Log, "log_window_value", [], Choice(&["avg", "mean", "max", "both"]), Some("avg"), "What a window's line holds: avg, max, or both (fio 3.4x)",
        |s, a| {
            s.logs.window = match a.choice()? { "max" => WindowValue::Max, "both" => WindowValue::Both, _ => WindowValue::Mean };
            Ok(())
        }),
    imp!(Log, "log_offset", [], Bool, Some("0"), "Include the offset of each I/O in log lines",
        |s, a| { s.logs.offset = a.flag()?; Ok(()) }),
    imp!(Log, "log_prio", [], Bool, Some("0"), "Log the I/O's priority value (hex) instead of whether it is real-time",
        |s, a| { s.logs.prio = a.flag()?; Ok(()) }),
    imp!(Log, "log_issue_time", [], Bool, Some("0"), "Add each I/O's issue time (ns) to clat and slat log lines (fio 3.36)",
        |s, a| { s.logs.issue_time = a.flag()?; Ok(()) }),
    imp!(Log, "log_compression", [], Int, None, "Compress logs in chunks of this size (1k-512M; written compressed with log_store_compressed)",
        |s, a| {
            let n = a.count()?;
            if !(1024..=512 << 20).contains(&n) { return Err("must be 1024 to 536870912".into()); }
            s.logs.compression = n;
            Ok(())
        }),
    imp!(Log, "log_compression_cpus", [], Str, None, "CPUs the job's log compression thread runs on (as cpus_allowed; iolab compresses the logs stored compressed)",
        |s, a| { s.logs.compression_cpus = Some(crate::place::parse_list(a.v)?); Ok(()) }),
    imp!(Log, "log_store_compressed", [], Bool, None, "Store logs zlib-compressed, PREFIX_bw.N.log.fz (read back with --inflate-log)",
        |s, a| { s.logs.store_compressed = a.flag()?; Ok(()) }),
    imp!(Log, "log_unix_epoch", [], Bool, None, "Log times as ms since the Unix epoch",
        |s, a| { s.logs.unix_epoch = a.flag()?; Ok(()) }),
    imp!(Log, "log_alternate_epoch", [], Bool, None, "Log times as ms since the epoch of log_alternate_epoch_clock_id",
        |s, a| { s.logs.alternate_epoch = a.flag()?; Ok(()) }),
    imp!(Log, "log_alternate_epoch_clock_id", [], Int, None, "The clock_gettime clock whose epoch log_alternate_epoch uses (0: CLOCK_REALTIME)",
        |s, a| { s.logs.clock_id = i32::try_from(a.int()?).ok().filter(|c| *c >= 0).ok_or("must be a clock id")?; Ok(()) }),
    imp!(Report, "block_error_percentiles", [], Bool, Some("0"), "Count the trims of each trim-sized block until it fails and report their percentiles (one file)",
        |s, a| { s.block_error_percentiles = a.flag()?; Ok(()) }),
    imp!(Report, "stats", [], Bool, Some("1"), "Collect and report this job's statistics",
        |s, a| { s.stats = a.flag()?; Ok(()) }),
    imp!(Report, "significant_figures", [], Int, Some("4"), "Significant figures of sizes and rates in normal output (1-10)",
        |s, a| {
            s.significant_figures = u32::try_from(a.int()?)
                .ok()
                .filter(|n| (1..=10).contains(n))
                .ok_or("must be 1 to 10")?;
            Ok(())
        }),
    imp!(Report, "gtod_reduce", [], Bool, Some("0"), "Measure no latencies and read the clock as little as possible",
        |s, a| {
            // As fio: =1 sets the others, =0 leaves them alone.
            if a.flag()? {
                s.gtod_reduce = true;
                (s.disable_lat, s.disable_clat, s.disable_slat, s.disable_bw) = (true, true, true, true);
                (s.clat_percentiles, s.lat_percentiles, s.slat_percentiles) = (false, false, false);
            }
            Ok(())
        }),
    imp!(Report, "disable_lat", [], Bool, Some("0"), "Do not measure total latency",
        |s, a| { s.disable_lat = a.flag()?; Ok(()) }),
    imp!(Report, "disable_clat", [], Bool, Some("0"), "Do not measure completion latency",
        |s, a| { s.disable_clat = a.flag()?; Ok(()) }),
    imp!(Report, "disable_slat", [], Bool, Some("0"), "Do not measure submission latency",
        |s, a| { s.disable_slat = a.flag()?; Ok(()) }),
    imp!(Report, "disable_bw_measurement", ["disable_bw"], Bool, Some("0"), "Do not time I/Os for bandwidth (with disable_clat and disable_slat: no issue times at all)",
        |s, a| { s.disable_bw = a.flag()?; Ok(()) }),
    imp!(Report, "gtod_cpu", [], Int, None, "A thread on this CPU reads the time of day without pause; jobs read the time it keeps (whole microseconds)",
        |s, a| { s.gtod_cpu = Some(u32::try_from(a.int()?).map_err(|_| "must be a CPU number")?); Ok(()) }),
];

/// A sample window: at least 1 ms.
fn window(ms: i64) -> Result<u64, String> {
    u64::try_from(ms)
        .ok()
        .filter(|n| *n > 0)
        .ok_or_else(|| format!("must be at least 1 (ms), not {ms}"))
}

#[cfg(test)]
pub(super) mod tests {
    use crate::logs::WindowValue;
    use crate::options::testing::{applied, spec, Acts, Refused};
    use crate::spec::UnifiedRw;

    /// Each definition at work: a value fio takes, and the field it must set.
    #[rustfmt::skip]
    pub(in crate::options) static ACTS: &[Acts] = &[
        (&["percentile_list=50:99.9"], |s| s.percentile_list == [50.0, 99.9] && s.percentile_precision == 1),
        (&["clat_percentiles=0"], |s| !s.clat_percentiles),
        (&["lat_percentiles=1"], |s| s.lat_percentiles),
        (&["slat_percentiles=1"], |s| s.slat_percentiles),
        (&["unified_rw_reporting=mixed"], |s| s.unified_rw_reporting == UnifiedRw::Mixed),
        (&["unified_rw_reporting=2"], |s| s.unified_rw_reporting == UnifiedRw::Both),
        (&["disk_util=0"], |s| !s.disk_util),
        (&["per_job_logs=0"], |s| !s.logs.per_job),
        (&["write_bw_log=run1"], |s| s.logs.bw.as_deref() == Some("run1")),
        (&["write_bw_log"], |s| s.logs.bw.as_deref() == Some("")),
        (&["bwavgtime=1000"], |s| s.bwavgtime == 1000),
        (&["write_lat_log=run1"], |s| s.logs.lat.as_deref() == Some("run1")),
        (&["write_iops_log=run1"], |s| s.logs.iops.as_deref() == Some("run1")),
        (&["iopsavgtime=250"], |s| s.iopsavgtime == 250),
        (&["log_avg_msec=1000"], |s| s.logs.avg_msec == 1000),
        (&["log_hist_msec=100"], |s| s.logs.hist_msec == 100),
        (&["log_hist_coarseness=3"], |s| s.logs.hist_coarseness == 3),
        (&["write_hist_log=run1"], |s| s.logs.hist.as_deref() == Some("run1")),
        (&["log_max_value=1"], |s| s.logs.window == WindowValue::Max),
        (&["log_window_value=both"], |s| s.logs.window == WindowValue::Both),
        (&["log_max_value=1", "log_window_value=avg"], |s| s.logs.window == WindowValue::Mean),
        (&["log_offset=1"], |s| s.logs.offset),
        (&["log_prio=1"], |s| s.logs.prio),
        (&["log_issue_time=1"], |s| s.logs.issue_time),
        (&["log_compression=1m"], |s| s.logs.compression == 1 << 20),
        (&["log_compression_cpus=0-1,3"], |s| s.logs.compression_cpus == Some(vec![0, 1, 3])),
        (&["log_store_compressed=1"], |s| s.logs.store_compressed),
        (&["log_unix_epoch=1"], |s| s.logs.unix_epoch),
        (&["log_alternate_epoch=1"], |s| s.logs.alternate_epoch),
        (&["log_alternate_epoch_clock_id=1"], |s| s.logs.clock_id == libc::CLOCK_MONOTONIC),
        (&["block_error_percentiles=1"], |s| s.block_error_percentiles),
        (&["stats=0"], |s| !s.stats),
        (&["significant_figures=6"], |s| s.significant_figures == 6),
        (&["gtod_reduce=1"], |s| {
            s.gtod_reduce && s.disable_lat && s.disable_clat && s.disable_slat && s.disable_bw
                && !s.clat_percentiles
        }),
        (&["disable_lat=1"], |s| s.disable_lat),
        (&["disable_clat=1"], |s| s.disable_clat),
        (&["disable_slat=1"], |s| s.disable_slat),
        (&["disable_bw_measurement=1"], |s| s.disable_bw),
        (&["disable_bw=1"], |s| s.disable_bw),
        (&["gtod_cpu=1"], |s| s.gtod_cpu == Some(1)),
    ];

    /// Values fio refuses (negative numbers: iolab's, where fio would wrap them).
    pub(in crate::options) static REFUSED: &[Refused] = &[
        &["percentile_list=101"],
        &["percentile_list=abc"],
        &["clat_percentiles=2"],
        &["unified_rw_reporting=3"],
        &["iopsavgtime=-1"],
        &["bwavgtime=-1"],
        // log_entries only checks its value: fio's range.
        &["log_entries=100"],
        &["log_entries=2000000"],
        &["log_avg_msec=-1"],
        &["log_window_value=min"],
        &["log_compression=100"],
        &["log_alternate_epoch_clock_id=-1"],
        &["stats"],
        &["significant_figures=0"],
        &["significant_figures=11"],
        &["gtod_cpu=-1"],
    ];

    crate::options::testing::table_tests!();

    #[test]
    fn percentile_list_is_bounded() {
        assert_eq!(
            spec(&["percentile_list=50:99"]).percentile_list,
            [50.0, 99.0]
        );
        assert!(applied(&["percentile_list=101"]).is_err());
        let many = format!("percentile_list={}", ["1"; 21].join(":"));
        assert!(applied(&[many.as_str()]).is_err());
    }

    #[test]
    fn gtod_reduce_disables_every_latency_and_percentiles() {
        let s = spec(&["gtod_reduce=1"]);
        assert!(s.disable_lat && s.disable_clat && s.disable_slat && s.disable_bw);
        assert!(!s.clat_percentiles && !s.lat_percentiles);
        let s = spec(&["disable_clat=1", "gtod_reduce=0"]);
        assert!(s.disable_clat && !s.disable_lat && s.clat_percentiles);
        assert!(spec(&[]).stats && !spec(&["stats=0"]).stats);
    }

    #[test]
    fn unified_rw_reporting_takes_words_and_numbers() {
        assert_eq!(
            spec(&["unified_rw_reporting=1"]).unified_rw_reporting,
            UnifiedRw::Mixed
        );
        assert_eq!(
            spec(&["unified_rw_reporting=both"]).unified_rw_reporting,
            UnifiedRw::Both
        );
    }

    #[test]
    fn block_error_percentiles_is_a_boolean_off_by_default() {
        assert!(!spec(&[]).block_error_percentiles);
        assert!(spec(&["block_error_percentiles=1"]).block_error_percentiles);
        assert!(applied(&["block_error_percentiles=2"]).is_err());
    }

    #[test]
    fn gtod_cpu_has_no_default_and_takes_a_cpu() {
        assert_eq!(spec(&[]).gtod_cpu, None);
        assert_eq!(spec(&["gtod_cpu=1"]).gtod_cpu, Some(1));
        assert!(applied(&["gtod_cpu=-1"]).is_err());
    }
}
