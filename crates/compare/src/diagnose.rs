//! Plain-words findings from the rows: what each engine's figures mean, with the evidence
//! and what to do. Engines are told apart by their capabilities (`Caps`), never by name.

use iolab_engine::Caps;
use iolab_report::compare::{human_count, human_ns, CompareRow, Finding};

/// What the findings need to know about the workload.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Workload {
    /// Files opened with O_DIRECT.
    pub direct: bool,
    /// The workload reads (the page-cache finding is about reads).
    pub reads: bool,
}

/// What a row the interrupt left out says (`trials::combine`).
pub const NOT_RUN: &str = "interrupted before it ran";

/// A spread between trials, (max - min) / median, beyond which a finding says the runs of one
/// variant disagree.
pub const SPREAD: f64 = 0.10;

/// The figures whose spread over trials is worth a finding (the others follow from these or
/// are tails that no two runs share).
const SPREAD_FIGURES: [&str; 4] = ["IOPS", "clat mean", "p99", "CPU/IO"];

/// One finding for every variant whose trials disagree by more than [`SPREAD`]: their figures
/// are less certain than one run would make them look, and a difference between variants
/// smaller than that spread is noise.
fn spread_all(rows: &[CompareRow]) -> Option<Finding> {
    let wide: Vec<(String, String)> = rows
        .iter()
        .filter_map(|r| Some((r.title(), spread(r)?)))
        .collect();
    let n = rows.iter().map(|r| r.trials.len()).max().unwrap_or(0);
    (!wide.is_empty()).then(|| Finding {
        title: format!(
            "the trials of {} disagree by more than {:.0}% (of {n} trials each)",
            wide.iter()
                .map(|w| w.0.as_str())
                .collect::<Vec<_>>()
                .join(", "),
            SPREAD * 100.0
        ),
        evidence: (wide.iter())
            .map(|(t, e)| format!("{t}: {e}"))
            .collect::<Vec<_>>()
            .join("; "),
        advice: "treat differences smaller than these spreads as noise; look for other \
                 processes using the CPU or the device during the run, or the device's own \
                 variance (write caches, garbage collection), and run longer (--runtime) or \
                 more trials (--trials)"
            .into(),
    })
}

/// What disagrees among a row's trials by more than [`SPREAD`], in words; `None`: nothing.
fn spread(r: &CompareRow) -> Option<String> {
    if r.error.is_some() || r.trials.len() < 2 {
        return None;
    }
    let mut wide = Vec::new();
    for col in iolab_report::columns::COLUMNS
        .iter()
        .filter(|c| SPREAD_FIGURES.contains(&c.short))
    {
        let vals: Vec<f64> = r.trials.iter().filter_map(|t| (col.val)(t)).collect();
        let (Some(lo), Some(hi)) = (
            vals.iter().copied().reduce(f64::min),
            vals.iter().copied().reduce(f64::max),
        ) else {
            continue;
        };
        let Some(mid) = iolab_report::interval::median(&vals).filter(|&m| m > 0.0) else {
            continue;
        };
        let share = (hi - lo) / mid;
        if share > SPREAD {
            wide.push(format!(
                "{} from {} to {} (median {}, spread {:.0}%)",
                col.short,
                (col.text)(lo),
                (col.text)(hi),
                (col.text)(mid),
                share * 100.0
            ));
        }
    }
    (!wide.is_empty()).then(|| wide.join(", "))
}

/// A submitting thread inside submission at least this share of its time did little else.
const MOSTLY: f64 = 0.5;

/// Findings for `rows`; `caps[i]` is what row `i`'s engine can do (`None`: not known, and no
/// engine-specific finding is drawn for it).
pub fn diagnose(rows: &[CompareRow], caps: &[Option<Caps>], w: Workload) -> Vec<Finding> {
    let ran: Vec<(&CompareRow, Option<&Caps>)> = rows
        .iter()
        .zip(
            caps.iter()
                .map(Option::as_ref)
                .chain(std::iter::repeat(None)),
        )
        .filter(|(r, _)| r.error.is_none() && r.iops > 0.0)
        .collect();
    let mut out = Vec::new();
    for &(r, c) in &ran {
        out.extend(synchronous(r, c, w));
    }
    out.extend(serialised(&ran));
    out.extend(spread_all(rows));
    // A row the interrupt left out is named in the comparison's "interrupted" line.
    let refused = |r: &&CompareRow| r.error.as_deref().is_some_and(|e| e != NOT_RUN);
    for r in rows.iter().filter(refused) {
        out.push(Finding {
            title: format!("{} did not run", r.label),
            evidence: r.error.clone().unwrap_or_default(),
            advice: "the mode was refused up front, not silently replaced: see the message for what the machine lacks".into(),
        });
    }
    out.extend(device_bound(&ran));
    if !w.direct && w.reads {
        // Only engines that read data can be served from the cache: a metadata operation
        // (Caps::fs_op) or a request that moves no data reaches the device rarely by nature.
        let reads_data = |c: Option<&Caps>| c.is_none_or(|c| c.moves_data && c.fs_op.is_none());
        out.extend(
            ran.iter()
                .filter(|(_, c)| reads_data(*c))
                .filter_map(|(r, _)| page_cache(r)),
        );
    }
    out
}

/// An asynchronous engine that ran synchronously, or kept few I/Os in flight.
fn synchronous(r: &CompareRow, c: Option<&Caps>, w: Workload) -> Option<Finding> {
    let c = c?;
    let share = r.submit_share.unwrap_or(0.0);
    let slat = r.slat_mean.unwrap_or(0.0);
    let evidence = || {
        format!(
            "the submitting thread spent {:.0}% of its time inside submission, {} per submission \
             (queueing alone takes a few microseconds); {} IOPS",
            share * 100.0,
            human_ns(slat),
            human_count(r.iops)
        )
    };
    // Linux AIO on a buffered file does the read or write inside io_submit, however fast
    // (from the page cache it is a copy): the thread did the I/O, so "async" was synchronous.
    if c.buffered_submit_blocks && !w.direct && share >= MOSTLY {
        return Some(Finding {
            title: format!("{} ran synchronously", r.label),
            evidence: evidence(),
            advice: "the file is not opened with O_DIRECT, and Linux AIO then does the I/O inside \
                     io_submit before returning, so the depth asked for was never in flight; use \
                     direct=1, or io_uring, which hands blocking buffered I/O to its workers"
                .into(),
        });
    }
    let is_async = !c.sync_only && r.jobs == 1 && r.depth > 1;
    // Any other asynchronous engine whose submissions took far longer than queueing takes:
    // the I/O itself happened in the submit call. (Little's law depth is no evidence here:
    // completions that waited to be reaped count as "in flight".)
    if is_async && share >= 0.8 && slat >= 25_000.0 {
        return Some(Finding {
            title: format!("{} ran synchronously", r.label),
            evidence: evidence(),
            advice: "submission did the I/O before returning; use direct=1, or io_uring, which \
                     hands blocking buffered I/O to its workers"
                .into(),
        });
    }
    let reached = r.achieved_depth?;
    (is_async && reached < f64::from(r.depth) * 0.5).then(|| Finding {
        title: format!("{} kept only {reached:.1} of {} I/Os in flight", r.label, r.depth),
        evidence: format!(
            "IOPS {} with mean latency {}",
            human_count(r.iops),
            human_ns(r.clat_mean.unwrap_or(0.0) + slat)
        ),
        advice: "the submitting thread is the limit (CPU or system calls per I/O); batch submissions (iodepth_batch_submit) or use SQPOLL".into(),
    })
}

/// Engines that only look asynchronous (glibc's POSIX AIO: one helper thread per file doing
/// blocking I/O) far below what the same depth gets from a real asynchronous engine.
fn serialised(ran: &[(&CompareRow, Option<&Caps>)]) -> Vec<Finding> {
    let threaded = |c: Option<&Caps>| c.is_some_and(|c| c.threaded);
    let best_other = ran
        .iter()
        .filter(|(_, c)| !threaded(*c))
        .map(|(r, _)| r.iops)
        .fold(0.0, f64::max);
    ran.iter()
        .filter(|(r, c)| threaded(*c) && r.depth > 1)
        .filter(|(r, _)| best_other > 0.0 && r.iops < best_other * 0.5)
        .map(|(r, _)| Finding {
            title: format!("{} was serialised by glibc", r.label),
            evidence: format!(
                "{} IOPS against {} for the best other engine at the same depth; {} context switches per I/O",
                human_count(r.iops),
                human_count(best_other),
                r.ctx_per_io.map_or("–".into(), |c| format!("{c:.2}"))
            ),
            advice: "glibc runs POSIX AIO on one helper thread per file doing blocking I/O, so depth on one file is an illusion; use io_uring or libaio with direct=1".into(),
        })
        .collect()
}

/// The engines that reached the top IOPS all did so with the device busy all the time: the
/// device decides, and they cannot differ in IOPS. (Engines slow for their own reasons, like
/// posixaio, are left out of "the top", not allowed to hide the bottleneck.)
fn device_bound(ran: &[(&CompareRow, Option<&Caps>)]) -> Option<Finding> {
    let top = ran.iter().map(|(r, _)| r.iops).fold(0.0, f64::max);
    let leaders: Vec<&CompareRow> = ran
        .iter()
        .map(|(r, _)| *r)
        .filter(|r| r.iops >= top * 0.85)
        .collect();
    let busy = |r: &CompareRow| r.disk_util.is_some_and(|u| u >= 90.0);
    if leaders.len() < 2 || !leaders.iter().all(|r| busy(r)) {
        return None;
    }
    let lo = leaders.iter().map(|r| r.iops).fold(f64::MAX, f64::min);
    let cheapest = leaders
        .iter()
        .filter_map(|r| Some((r, r.cpu_ns_per_io?)))
        .min_by(|a, b| a.1.total_cmp(&b.1));
    let names: Vec<&str> = leaders.iter().map(|r| r.label.as_str()).collect();
    Some(Finding {
        title: "the device is the bottleneck".into(),
        evidence: format!(
            "{} reached {} to {} IOPS with the device {:.0}% or more busy",
            names.join(", "),
            human_count(lo),
            human_count(top),
            leaders.iter().filter_map(|r| r.disk_util).fold(f64::MAX, f64::min)
        ),
        advice: match cheapest {
            Some((r, ns)) => format!(
                "these engines cannot differ in IOPS here; compare CPU time per I/O instead: {} is cheapest at {}",
                r.label,
                human_ns(ns)
            ),
            None => "compare CPU time per I/O instead".into(),
        },
    })
}

/// Buffered reads that hardly touched the device came from memory.
fn page_cache(r: &CompareRow) -> Option<Finding> {
    let secs = r.report.jobs.first()?.read.runtime as f64 / 1000.0;
    let total = r.iops * secs;
    let dev = r.disk_ios?;
    (total > 1000.0 && (dev as f64) < total * 0.1).then(|| Finding {
        title: format!("{} was served from the page cache", r.label),
        evidence: format!("{total:.0} reads, {dev} reached the device"),
        advice:
            "these figures measure memory, not the disk: use direct=1 or a file larger than RAM"
                .into(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use iolab_report::{DirReport, JobReport, Report};

    fn row(label: &str, depth: u32, iops: f64, slat: f64, clat: f64) -> CompareRow {
        CompareRow {
            label: label.into(),
            engine: label.into(),
            depth,
            jobs: 1,
            iops,
            slat_mean: Some(slat),
            clat_mean: Some(clat),
            // One submission per I/O: the thread's share is slat × IOPS.
            submit_share: Some(slat * iops / 1e9),
            achieved_depth: Some(iops * (slat + clat) / 1e9),
            cpu_ns_per_io: Some(1000.0),
            ..CompareRow::default()
        }
    }

    fn aio() -> Option<Caps> {
        Some(Caps {
            max_depth: 32,
            buffered_submit_blocks: true,
            ..Caps::default()
        })
    }

    fn plain_async() -> Option<Caps> {
        Some(Caps {
            max_depth: 32,
            ..Caps::default()
        })
    }

    const BUFFERED: Workload = Workload {
        direct: false,
        reads: true,
    };
    const DIRECT: Workload = Workload {
        direct: true,
        reads: true,
    };

    #[test]
    fn buffered_libaio_that_blocked_in_submit_is_called_synchronous() {
        // 30k IOPS at 32 requested, 30us spent in io_submit and 1us waiting: depth ~0.9.
        let f = diagnose(
            &[row("libaio", 32, 30_000.0, 30_000.0, 1_000.0)],
            &[aio()],
            BUFFERED,
        );
        assert!(
            f.iter()
                .any(|f| f.title == "libaio ran synchronously" && f.advice.contains("direct=1")),
            "{f:?}"
        );
    }

    /// The seed lesson: from the page cache, io_submit is quick (a copy), yet it is where the
    /// thread spent its time; the finding must not wait for slow submissions.
    #[test]
    fn cached_buffered_libaio_is_synchronous_and_from_the_page_cache_both() {
        // 300k IOPS, 3us in io_submit each: 90% of the thread. 1 s of reads, 12 reached the disk.
        let mut r = row("libaio", 16, 300_000.0, 3_000.0, 200.0);
        r.disk_ios = Some(12);
        r.report = Report {
            jobs: vec![JobReport {
                read: DirReport {
                    runtime: 1000,
                    ..DirReport::default()
                },
                ..JobReport::default()
            }],
            ..Report::default()
        };
        let f = diagnose(&[r.clone()], &[aio()], BUFFERED);
        let titles: Vec<&str> = f.iter().map(|f| f.title.as_str()).collect();
        assert!(titles.contains(&"libaio ran synchronously"), "{titles:?}");
        assert!(
            titles.contains(&"libaio was served from the page cache"),
            "{titles:?}"
        );
        let sync = &f[0];
        assert!(
            sync.evidence.contains("90%") && sync.advice.contains("io_submit"),
            "{sync:?}"
        );
        // The same figures from an engine whose submission never blocks: no such finding.
        let f = diagnose(&[r], &[plain_async()], BUFFERED);
        assert!(
            f.iter().all(|f| !f.title.contains("synchronously")),
            "{f:?}"
        );
    }

    /// Regression: filestat's stats, which never reach the device, were called "served from
    /// the page cache".
    #[test]
    fn metadata_operations_are_not_said_to_come_from_the_page_cache() {
        let mut r = row("filestat", 1, 300_000.0, 0.0, 3_000.0);
        r.disk_ios = Some(0);
        r.report = Report {
            jobs: vec![JobReport {
                read: DirReport {
                    runtime: 1000,
                    ..DirReport::default()
                },
                ..JobReport::default()
            }],
            ..Report::default()
        };
        let meta = Some(Caps {
            moves_data: false,
            sync_only: true,
            fs_op: Some(iolab_engine::FsOp::Stat),
            ..Caps::default()
        });
        let f = diagnose(&[r.clone()], &[meta], BUFFERED);
        assert!(f.iter().all(|f| !f.title.contains("page cache")), "{f:?}");
        // The same figures from an engine that reads data: the finding stands.
        let f = diagnose(&[r], &[plain_async()], BUFFERED);
        assert!(f.iter().any(|f| f.title.contains("page cache")), "{f:?}");
    }

    #[test]
    fn direct_libaio_that_filled_its_queue_is_not() {
        // 70k IOPS with 450us latency: 31.5 in flight of 32.
        let f = diagnose(
            &[row("libaio", 32, 70_000.0, 5_000.0, 445_000.0)],
            &[aio()],
            DIRECT,
        );
        assert!(
            f.iter().all(|f| !f.title.contains("synchronously")),
            "{f:?}"
        );
    }

    #[test]
    fn a_busy_device_with_equal_iops_is_named_the_bottleneck() {
        let mut a = row("libaio", 32, 70_000.0, 5_000.0, 445_000.0);
        let mut b = row("io_uring", 32, 72_000.0, 2_000.0, 440_000.0);
        a.disk_util = Some(99.0);
        b.disk_util = Some(98.5);
        b.cpu_ns_per_io = Some(500.0);
        let f = diagnose(&[a, b], &[aio(), plain_async()], DIRECT);
        let d = f
            .iter()
            .find(|f| f.title == "the device is the bottleneck")
            .expect("finding");
        assert!(d.advice.contains("io_uring"), "{d:?}");
    }

    #[test]
    fn a_slow_engine_does_not_hide_a_busy_device() {
        // As measured here with the default workload: four engines at 66-69k with vda 96-98%
        // busy, posixaio at 19k.
        let mut rows = vec![
            row("libaio", 32, 69_100.0, 5_000.0, 457_000.0),
            row("io_uring", 32, 67_400.0, 5_000.0, 467_000.0),
            row("posixaio", 32, 19_400.0, 5_000.0, 1_650_000.0),
        ];
        rows[0].disk_util = Some(97.8);
        rows[1].disk_util = Some(97.2);
        rows[2].disk_util = Some(69.0);
        rows[1].cpu_ns_per_io = Some(700.0);
        let threads = Some(Caps {
            threaded: true,
            ..Caps::default()
        });
        let f = diagnose(&rows, &[aio(), plain_async(), threads], DIRECT);
        let d = f
            .iter()
            .find(|f| f.title == "the device is the bottleneck")
            .expect("finding");
        assert!(d.evidence.starts_with("libaio, io_uring reached"), "{d:?}");
        assert!(d.advice.contains("io_uring is cheapest"), "{d:?}");
        assert!(
            f.iter()
                .any(|f| f.title == "posixaio was serialised by glibc"),
            "{f:?}"
        );
    }

    /// Issue 31: three runs gave 7.3k, 65.6k and 94.6k IOPS and nothing said so.
    #[test]
    fn trials_that_disagree_by_more_than_a_tenth_are_named_with_the_figure() {
        let with = |iops: [f64; 3]| {
            let mut r = row("io_uring", 32, iops[1], 1000.0, 50_000.0);
            r.trials = iops
                .iter()
                .map(|&i| row("io_uring", 32, i, 1000.0, 50_000.0))
                .collect();
            r
        };
        let rows = [
            with([7_300.0, 65_600.0, 94_600.0]),
            with([100e3, 104e3, 108e3]),
        ];
        let f = spread_all(&rows).expect("a finding");
        assert!(
            f.title.starts_with("the trials of io_uring (32) disagree"),
            "{f:?}"
        );
        assert!(
            f.evidence
                .starts_with("io_uring (32): IOPS from 7.3k to 94.6k"),
            "{f:?}"
        );
        assert!(
            !f.evidence.contains("clat mean"),
            "equal in every trial: {f:?}"
        );
        assert_eq!(spread(&rows[1]), None, "8% is within 10%");
        let f = diagnose(&[with([1.0, 5.0, 9.0])], &[None], Workload::default());
        assert!(f.iter().any(|f| f.title.contains("disagree")), "{f:?}");
    }
}
