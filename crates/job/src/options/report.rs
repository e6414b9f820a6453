//! Reporting: percentiles, grouping of directions, logs.

use super::prelude::*;

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
    not!(Log, "per_job_logs", [], Bool),
    not!(Log, "write_bw_log", [], Str),
    imp!(Log, "bwavgtime", [], Int, Some("500"), "Bandwidth sample window (ms)",
        |s, a| { s.bwavgtime = window(a.int()?)?; Ok(()) }),
    not!(Log, "write_lat_log", [], Str),
    not!(Log, "write_iops_log", [], Str),
    imp!(Log, "iopsavgtime", [], Int, Some("500"), "IOPS sample window (ms)",
        |s, a| { s.iopsavgtime = window(a.int()?)?; Ok(()) }),
    not!(Log, "log_entries", [], Int),
    not!(Log, "log_avg_msec", [], Int),
    not!(Log, "log_hist_msec", [], Int),
    not!(Log, "log_hist_coarseness", [], Int),
    not!(Log, "write_hist_log", [], Str),
    not!(Log, "log_max_value", [], Bool),
    not!(Log, "log_offset", [], Bool),
    not!(Log, "log_prio", [], Bool),
    not!(Log, "log_compression", [], Int),
    not!(Log, "log_compression_cpus", [], Str),
    not!(Log, "log_store_compressed", [], Bool),
    not!(Log, "log_unix_epoch", [], Bool),
    not!(Log, "log_alternate_epoch", [], Bool),
    not!(Log, "log_alternate_epoch_clock_id", [], Int),
    not!(Report, "block_error_percentiles", [], Bool),
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
    not!(Report, "gtod_cpu", [], Int),
];

/// A sample window: at least 1 ms.
fn window(ms: i64) -> Result<u64, String> {
    u64::try_from(ms)
        .ok()
        .filter(|n| *n > 0)
        .ok_or_else(|| format!("must be at least 1 (ms), not {ms}"))
}

#[cfg(test)]
mod tests {
    use crate::options::testing::{applied, spec};
    use crate::spec::UnifiedRw;

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
}
