//! Where a job's logs go: fio 3.33's file names for each log the job writes.

use std::path::PathBuf;

use iolab_job::logs::LogSpec;
use iolab_workload::JobPlan;

/// fio's log file name: `PREFIX_KIND.N.log`, `PREFIX_KIND.log` without per_job_logs, each
/// with `.fz` after it when stored compressed.
pub(super) fn file_name(l: &LogSpec, plan: &JobPlan, prefix: &str, kind: &str) -> PathBuf {
    let prefix = if prefix.is_empty() {
        &plan.name
    } else {
        prefix
    };
    let suffix = if l.store_compressed { "log.fz" } else { "log" };
    if !l.per_job {
        return PathBuf::from(format!("{prefix}_{kind}.{suffix}"));
    }
    PathBuf::from(format!("{prefix}_{kind}.{}.{suffix}", plan.thread_number()))
}

/// Every file the job's logs write, with its kind.
pub(super) fn files(plan: &JobPlan) -> Vec<(&'static str, PathBuf)> {
    let (s, l) = (&plan.spec, &plan.spec.logs);
    let mut out = Vec::new();
    let mut add = |prefix: &Option<String>, kind: &'static str, on: bool| {
        if let (Some(p), true) = (prefix, on) {
            out.push((kind, file_name(l, plan, p, kind)));
        }
    };
    add(&l.bw, "bw", true);
    add(&l.iops, "iops", true);
    add(&l.lat, "lat", !s.disable_lat);
    add(&l.lat, "slat", !s.disable_slat);
    add(&l.lat, "clat", !s.disable_clat);
    add(&l.hist, "clat_hist", true);
    out
}
