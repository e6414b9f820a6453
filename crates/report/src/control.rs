//! The report's parts that the run-time control options decide: error counts
//! (continue_on_error, ignore_error), the latency target's line, and steady state.

use iolab_job::control::errors_may_pass;
use iolab_job::JobSpec;
use iolab_stats::JobStats;

use crate::model::{JobReport, SteadyReport};

/// Fills `r`'s error counts, latency target and steady state from what the job measured.
pub(crate) fn apply(r: &mut JobReport, s: &JobStats, spec: &JobSpec) {
    if errors_may_pass(spec) {
        r.errors = Some((s.total_err, i64::from(s.first_error)));
        // fio shows the first error let pass as the job's error (its exit status stays 0).
        if r.error == 0 && s.first_error != 0 {
            r.error = i64::from(s.first_error);
            let msg = std::io::Error::from_raw_os_error(s.first_error).to_string();
            let msg = msg.split(" (os error").next().unwrap_or("");
            r.verror = Some(format!("file:errors.rs, func=io_u error, error={msg}"));
        }
    }
    if let Some(t) = spec.latency_target {
        // fio: the target in ns, the window in us, the depth the search settled on.
        r.latency_target = t.as_nanos() as u64;
        r.latency_window = spec.latency_window.as_micros() as u64;
        r.latency_percentile = spec.latency_percentile;
        if s.latency_qd > 0 {
            r.latency_depth = s.latency_qd;
        }
    }
    if let Some(ss) = &s.steady {
        r.steadystate = Some(steady(ss, spec));
    }
}

fn steady(ss: &iolab_stats::SteadyStats, spec: &JobSpec) -> SteadyReport {
    let n = ss.iops.len().max(1) as u64;
    let crit = spec.steadystate;
    SteadyReport {
        ss: crit.describe(),
        duration: spec.steadystate_duration.as_secs(),
        attained: ss.attained,
        criterion: ss.criterion,
        pct: crit.pct,
        on_iops: crit.kind.iops(),
        on_slope: crit.kind.slope(),
        max_deviation: ss.max_deviation,
        slope: ss.slope,
        // fio's means are over the whole window, unfilled samples counting 0.
        bw_mean: ss.bw.iter().sum::<u64>() / n,
        iops_mean: ss.iops.iter().sum::<u64>() / n,
        bw: ss.bw.clone(),
        iops: ss.iops.clone(),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    /// fio 3.33's object for `--ss=iops:10% --ss_dur=2` on the null engine.
    const FIO_SS: &str = r#"{"ss": "iops:10.000000%", "duration": 2, "attained": 1,
        "criterion": "4.509789%", "max_deviation": 75925.0, "slope": 0.0,
        "data": {"bw_mean": 6895863061, "iops_mean": 1683560,
        "iops": [1759485, 1607635], "bw": [7206850560, 6584875563]}}"#;

    #[test]
    fn steadystate_object_reads_and_writes_back_as_fio_printed_it() {
        let doc = format!(
            r#"{{"fio version": "fio-3.33", "jobs": [{{"jobname": "ss", "steadystate": {FIO_SS}}}]}}"#
        );
        let report = crate::read::read_fio_json(&doc).unwrap();
        let ss = report.jobs[0].steadystate.as_ref().unwrap();
        assert!(ss.attained && ss.on_iops && !ss.on_slope && ss.pct);
        let mut out = Vec::new();
        crate::write_json(&report, false, &mut out).unwrap();
        let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
        let want: serde_json::Value = serde_json::from_str(FIO_SS).unwrap();
        assert_eq!(v["jobs"][0]["steadystate"], want);
    }
}
