//! Findings on whether the figures measure what they seem to, each with its evidence: a test
//! file on a file system in memory (its `statfs` magic), the load generator as the limit (a
//! job thread's CPU near one core), and throughput that drifts during a run. (Reads served
//! from the page cache are `diagnose`'s: they need the device's counters.)

use std::path::Path;

use iolab_report::compare::{human_count, CompareRow, Finding};

/// File systems whose files live in memory, by `statfs`'s `f_type`.
const MEMORY_FS: [(u64, &str); 2] = [(0x0102_1994, "tmpfs"), (0x8584_58f6, "ramfs")];

/// A job thread busy at least this share of one core did little but make and reap I/O.
pub const GENERATOR_BUSY: f64 = 0.90;

/// IOPS changing by more than this share from the first third of a run to the last is drift.
pub const DRIFT: f64 = 0.15;

/// Samples a run needs before its drift is judged (a third of them at least two).
const DRIFT_SAMPLES: usize = 6;

/// The memory file system under `dir`, by name and magic, if it is one.
pub fn memory_fs(dir: &Path) -> Option<(&'static str, u64)> {
    use std::os::fd::AsRawFd;
    let f = std::fs::File::open(dir).ok()?;
    let magic = iolab_sys::fs::fs_magic(f.as_raw_fd()).ok()?;
    MEMORY_FS
        .iter()
        .find(|(m, _)| *m == magic)
        .map(|&(m, n)| (n, m))
}

/// Every trust finding for `rows`, the test file's folder being on `fs` (see [`memory_fs`]).
pub fn findings(rows: &[CompareRow], fs: Option<(&str, u64)>) -> Vec<Finding> {
    let ran: Vec<&CompareRow> = (rows.iter())
        .filter(|r| r.error.is_none() && r.iops > 0.0)
        .collect();
    let mut out = Vec::new();
    if let (Some((name, magic)), false) = (fs, ran.is_empty()) {
        out.push(Finding {
            title: format!("the test file is on {name}: this measures memory"),
            evidence: format!(
                "statfs of the test file's folder says {name} (f_type {magic:#010x}); its files \
                 are pages in RAM, with no device under them"
            ),
            advice: "put the test file on the device to be measured (--directory=/mnt/that-device)"
                .into(),
        });
    }
    out.extend(generator_bound(&ran));
    out.extend(ran.iter().filter_map(|r| drift(r)));
    out
}

/// The job threads' own CPU, percent of one core each on average (user + system), from the
/// row's fio-shaped report.
fn thread_cpu(r: &CompareRow) -> Option<f64> {
    let j = r.report.jobs.first()?;
    let busy = j.usr_cpu + j.sys_cpu;
    (busy.is_finite() && busy > 0.0).then_some(busy)
}

/// The rows whose job threads were near one core each: iolab itself is the limit there.
fn generator_bound(ran: &[&CompareRow]) -> Option<Finding> {
    let bound: Vec<(&CompareRow, f64)> = (ran.iter())
        .filter_map(|r| Some((*r, thread_cpu(r)?)))
        .filter(|(_, cpu)| *cpu >= GENERATOR_BUSY * 100.0)
        .collect();
    if bound.is_empty() {
        return None;
    }
    let names: Vec<String> = bound.iter().map(|(r, _)| r.title()).collect();
    let evidence: Vec<String> = (bound.iter())
        .map(|(r, cpu)| {
            let threads = r.jobs.max(1);
            let each = match threads {
                1 => "its one job thread".to_string(),
                n => format!("each of its {n} job threads on average"),
            };
            format!(
                "{}: {each} busy {cpu:.0}% of a core at {} IOPS",
                r.title(),
                human_count(r.iops)
            )
        })
        .collect();
    Some(Finding {
        title: format!("the load generator is the limit of {}", names.join(", ")),
        evidence: format!(
            "{} (at least {:.0}% means a thread did little but make and reap I/Os)",
            evidence.join("; "),
            GENERATOR_BUSY * 100.0
        ),
        advice: "these figures are iolab's ceiling, not the engine's or the device's: spread \
                 the load over more jobs (iolab run with numjobs=N), or compare at a depth the \
                 thread can keep up with"
            .into(),
    })
}

/// The mean of `v`.
fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len().max(1) as f64
}

/// A row whose IOPS moved by more than [`DRIFT`] from the first third of its samples to the
/// last.
fn drift(r: &CompareRow) -> Option<Finding> {
    let v: Vec<f64> = r.iops_series.iter().map(|p| p.1).collect();
    if v.len() < DRIFT_SAMPLES {
        return None;
    }
    let third = v.len() / 3;
    let (first, last) = (mean(&v[..third]), mean(&v[v.len() - third..]));
    if first <= 0.0 {
        return None;
    }
    let change = (last - first) / first;
    (change.abs() > DRIFT).then(|| Finding {
        title: format!(
            "{}'s throughput drifted {} during the run",
            r.title(),
            if change < 0.0 { "down" } else { "up" }
        ),
        evidence: format!(
            "{} IOPS on average over the first third of its {} samples, {} over the last third \
             ({:+.0}%, more than {:.0}%)",
            human_count(first),
            v.len(),
            human_count(last),
            change * 100.0,
            DRIFT * 100.0
        ),
        advice: "the run did not reach a steady state (a write cache filling, garbage \
                 collection, thermal throttling, other load): precondition the device, run \
                 longer (--runtime), or let fio's steadystate= end the run when it is steady"
            .into(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use iolab_report::{JobReport, Report};

    fn row(label: &str, jobs: u32, cpu: f64, series: &[f64]) -> CompareRow {
        CompareRow {
            label: label.into(),
            depth: jobs,
            jobs,
            iops: 1000.0,
            report: Report {
                jobs: vec![JobReport {
                    usr_cpu: cpu / 2.0,
                    sys_cpu: cpu / 2.0,
                    ..JobReport::default()
                }],
                ..Report::default()
            },
            iops_series: (series.iter().enumerate())
                .map(|(i, &v)| (i as u64 * 500, v))
                .collect(),
            ..CompareRow::default()
        }
    }

    #[test]
    fn a_busy_job_thread_is_the_generators_limit_and_an_idle_one_is_not() {
        let f = findings(
            &[row("null", 1, 99.0, &[]), row("psync", 4, 30.0, &[])],
            None,
        );
        assert_eq!(f.len(), 1, "{f:?}");
        assert_eq!(f[0].title, "the load generator is the limit of null (1)");
        assert!(
            f[0].evidence
                .contains("its one job thread busy 99% of a core"),
            "{f:?}"
        );
        assert!(f[0].advice.contains("numjobs"), "{f:?}");
    }

    #[test]
    fn throughput_that_moves_over_the_run_is_drift_and_noise_is_not() {
        let steady = [100.0, 104.0, 97.0, 101.0, 99.0, 103.0];
        assert!(findings(&[row("a", 1, 10.0, &steady)], None).is_empty());
        let falling = [100.0, 100.0, 90.0, 80.0, 70.0, 70.0];
        let f = findings(&[row("a", 1, 10.0, &falling)], None);
        assert_eq!(f.len(), 1, "{f:?}");
        assert!(f[0].title.contains("drifted down"), "{f:?}");
        assert!(f[0].evidence.contains("(-30%"), "{f:?}");
        // Too few samples to say.
        assert!(findings(&[row("a", 1, 10.0, &falling[..4])], None).is_empty());
    }

    #[test]
    fn a_file_in_memory_is_named_with_its_magic() {
        let f = findings(&[row("a", 1, 10.0, &[])], Some(("tmpfs", 0x0102_1994)));
        assert!(f[0].title.ends_with("this measures memory"), "{f:?}");
        assert!(f[0].evidence.contains("f_type 0x01021994"), "{f:?}");
    }
}
