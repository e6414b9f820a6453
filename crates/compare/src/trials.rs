//! A variant's runs at one depth (its trials) made into one row: every figure the median over
//! the trials, the trials kept beside it for their intervals (`iolab_report::interval`).

use iolab_report::compare::CompareRow;
use iolab_report::interval::median;

/// The row of one variant at one depth from its runs, in the order they ran. A run the
/// interrupt cut short does not count; with no run that counts, the row says why.
pub fn combine(
    runs: Vec<CompareRow>,
    label: &str,
    engine: &str,
    depth: u32,
    jobs: u32,
) -> CompareRow {
    let counted: Vec<CompareRow> = runs
        .into_iter()
        .filter(|r| !crate::run::is_cut(r))
        .collect();
    let ok: Vec<&CompareRow> = counted.iter().filter(|r| r.error.is_none()).collect();
    if ok.is_empty() {
        return counted.into_iter().next().unwrap_or_else(|| CompareRow {
            label: label.to_string(),
            engine: engine.to_string(),
            depth,
            jobs,
            error: Some(crate::diagnose::NOT_RUN.into()),
            ..CompareRow::default()
        });
    }
    // The trial of median IOPS speaks for the row where a median cannot be taken: its
    // fio-shaped report (histograms, percentile plot) and its series over time.
    let mut by_iops = ok.clone();
    by_iops.sort_by(|a, b| a.iops.total_cmp(&b.iops));
    let mut row = by_iops[(by_iops.len() - 1) / 2].clone();
    let med = |f: fn(&CompareRow) -> Option<f64>| {
        median(&ok.iter().filter_map(|r| f(r)).collect::<Vec<_>>())
    };
    row.iops = med(|r| Some(r.iops)).unwrap_or(0.0);
    row.bw_bytes = med(|r| Some(r.bw_bytes)).unwrap_or(0.0);
    row.clat_mean = med(|r| r.clat_mean);
    for slot in 0..row.clat_pct.len() {
        let v: Vec<f64> = ok
            .iter()
            .filter_map(|r| r.clat_pct[slot])
            .map(|v| v as f64)
            .collect();
        row.clat_pct[slot] = median(&v).map(|m| m.round() as u64);
    }
    // A percentile is only as sound as the shortest trial's count beyond it.
    row.clat_samples = ok.iter().map(|r| r.clat_samples).min().unwrap_or(0);
    row.slat_mean = med(|r| r.slat_mean);
    row.submit_share = med(|r| r.submit_share);
    row.usr_cpu = med(|r| r.usr_cpu);
    row.sys_cpu = med(|r| r.sys_cpu);
    row.cpu_ns_per_io = med(|r| r.cpu_ns_per_io);
    row.syscalls_per_io = med(|r| r.syscalls_per_io);
    row.ctx_per_io = med(|r| r.ctx_per_io);
    row.achieved_depth = med(|r| r.achieved_depth);
    row.disk_util = med(|r| r.disk_util);
    row.disk_ios = med(|r| r.disk_ios.map(|v| v as f64)).map(|m| m.round() as u64);
    row.started_ms = None;
    row.trials = ok
        .iter()
        .map(|&r| CompareRow {
            report: Default::default(),
            iops_series: Vec::new(),
            lat_series: Vec::new(),
            ..r.clone()
        })
        .collect();
    row
}

#[cfg(test)]
mod tests {
    use super::*;

    fn trial(iops: f64, p99: u64, at: u64) -> CompareRow {
        CompareRow {
            label: "libaio".into(),
            iops,
            clat_pct: [None, None, Some(p99), None, None, None],
            clat_samples: iops as u64,
            cpu_ns_per_io: Some(iops / 10.0),
            started_ms: Some(at),
            ..CompareRow::default()
        }
    }

    #[test]
    fn every_figure_is_the_median_of_the_trials() {
        let r = combine(
            vec![trial(100.0, 9, 0), trial(300.0, 7, 10), trial(200.0, 8, 20)],
            "libaio",
            "libaio",
            32,
            1,
        );
        assert_eq!(r.iops, 200.0);
        assert_eq!(r.clat_pct[2], Some(8));
        assert_eq!(r.cpu_ns_per_io, Some(20.0));
        assert_eq!(r.clat_samples, 100, "the shortest trial's count");
        assert_eq!(r.started_ms, None);
        let at: Vec<Option<u64>> = r.trials.iter().map(|t| t.started_ms).collect();
        assert_eq!(at, [Some(0), Some(10), Some(20)], "in the order they ran");
    }

    #[test]
    fn a_cut_run_does_not_count_and_no_run_says_so() {
        let mut cut = trial(1.0, 1, 30);
        cut.error = Some(crate::run::CUT.into());
        let r = combine(vec![trial(100.0, 9, 0), cut], "libaio", "libaio", 32, 1);
        assert_eq!((r.iops, r.trials.len()), (100.0, 1));
        let r = combine(Vec::new(), "psync", "psync", 4, 4);
        assert_eq!(r.error.as_deref(), Some("interrupted before it ran"));
        assert_eq!(r.title(), "psync (1 x 4 jobs)");
    }
}
