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
    not!(Log, "bwavgtime", [], Int),
    not!(Log, "write_lat_log", [], Str),
    not!(Log, "write_iops_log", [], Str),
    not!(Log, "iopsavgtime", [], Int),
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
    not!(Report, "stats", [], Bool),
    not!(Report, "significant_figures", [], Int),
    not!(Report, "gtod_reduce", [], Bool),
    not!(Report, "disable_lat", [], Bool),
    not!(Report, "disable_clat", [], Bool),
    not!(Report, "disable_slat", [], Bool),
    not!(Report, "disable_bw_measurement", ["disable_bw"], Bool),
    not!(Report, "gtod_cpu", [], Int),
];

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
