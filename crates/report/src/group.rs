//! The "Run status group" figures, rebuilt from per-job results the way fio's
//! `__show_run_stats` builds them. Used by the reader (fio's JSON has no group figures); the
//! benchmark may fill `Report::groups` itself.

use crate::model::{GroupReport, JobReport};

/// One [`GroupReport`] per group id present, in ascending order.
pub fn groups_from_jobs(jobs: &[JobReport]) -> Vec<GroupReport> {
    let mut groups: Vec<GroupReport> = Vec::new();
    for j in jobs {
        let idx = match groups.iter().position(|g| g.groupid == j.groupid) {
            Some(i) => i,
            None => {
                groups.push(GroupReport {
                    groupid: j.groupid,
                    units: j.units,
                    ..Default::default()
                });
                groups.len() - 1
            }
        };
        let g = &mut groups[idx];
        g.units = j.units;
        g.mixed |= j.unified == crate::model::Unified::Mixed;
        for (gd, d) in g.dirs.iter_mut().zip(j.dirs()) {
            if d.runtime == 0 {
                continue;
            }
            if gd.min_run == 0 || d.runtime < gd.min_run {
                gd.min_run = d.runtime;
            }
            gd.max_run = gd.max_run.max(d.runtime);
            let bw = d.io_bytes.saturating_mul(1000) / d.runtime;
            if gd.min_bw == 0 || bw < gd.min_bw {
                gd.min_bw = bw;
            }
            gd.max_bw = gd.max_bw.max(bw);
            gd.io_bytes += d.io_bytes;
        }
    }
    for g in &mut groups {
        for d in &mut g.dirs {
            d.agg_bw = d
                .io_bytes
                .saturating_mul(1000)
                .checked_div(d.max_run)
                .unwrap_or(0);
        }
    }
    groups.sort_by_key(|g| g.groupid);
    groups
}
