//! The engine comparison: one row per engine and depth, findings in plain words, and the
//! machine it ran on. Built by the runner's `compare`, written as a table (here), JSON, or
//! HTML with plots (`html.rs`).

use crate::model::Report;

/// The completion-latency percentiles each row carries, in `CompareRow::clat_pct` order.
pub const CLAT_PCT: [f64; 6] = [50.0, 90.0, 99.0, 99.9, 99.99, 99.999];

/// One engine at one depth.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct CompareRow {
    /// What ran, e.g. `io_uring (sqpoll)`.
    pub label: String,
    /// fio's engine name.
    pub engine: String,
    /// Requested I/O depth: per job for asynchronous engines, and the number of jobs (each at
    /// depth 1) for synchronous ones.
    pub depth: u32,
    /// Jobs (threads): a synchronous engine reaches depth N with N jobs.
    pub jobs: u32,
    pub iops: f64,
    /// Bytes per second.
    pub bw_bytes: f64,
    /// Completion latency, ns: the mean, and the percentiles [`CLAT_PCT`] in that order.
    pub clat_mean: f64,
    pub clat_pct: [u64; 6],
    /// Submission latency mean, ns (0 for synchronous engines).
    pub slat_mean: f64,
    /// CPU, percent of one core over the run, user and system.
    pub usr_cpu: f64,
    pub sys_cpu: f64,
    /// CPU time per I/O, ns.
    pub cpu_ns_per_io: f64,
    /// System calls per I/O (counted by the engine layer).
    pub syscalls_per_io: f64,
    /// Context switches per I/O.
    pub ctx_per_io: f64,
    /// I/Os in flight on average (IOPS × mean total latency, Little's law) against `depth`×`jobs`.
    pub achieved_depth: f64,
    /// Device utilisation over the run, percent (None when not on a block device).
    pub disk_util: Option<f64>,
    /// Device reads+writes the kernel counted over the run.
    pub disk_ios: Option<u64>,
    /// fio-shaped result of this run (for plots: percentiles, histograms).
    pub report: Report,
    /// Bandwidth/IOPS over time: (ms since start, IOPS) samples.
    pub iops_series: Vec<(u64, f64)>,
    /// Mean completion latency per sampling interval: (ms since start, ns).
    pub lat_series: Vec<(u64, f64)>,
    /// Why this row has no figures (mode refused or failed), if so.
    pub error: Option<String>,
}

/// A conclusion drawn from the rows, with its evidence and what to do about it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Finding {
    /// One line: what happened.
    pub title: String,
    /// The numbers that show it.
    pub evidence: String,
    /// What to do.
    pub advice: String,
}

/// The machine a comparison ran on.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Machine {
    pub kernel: String,
    pub cpu: String,
    pub cpus: u32,
    pub device: String,
    pub filesystem: String,
    pub scheduler: String,
}

/// A whole comparison.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Comparison {
    /// The workload, as fio options (`rw=randread`, `bs=4k`, ...).
    pub workload: Vec<(String, String)>,
    pub rows: Vec<CompareRow>,
    pub findings: Vec<Finding>,
    pub machine: Machine,
    /// When it ran (fio's date format).
    pub time: String,
}

/// Plain-words findings from the rows. `direct` and `reads` describe the workload.
pub fn diagnose(rows: &[CompareRow], direct: bool, reads: bool) -> Vec<Finding> {
    let mut out = Vec::new();
    let ok: Vec<&CompareRow> = rows
        .iter()
        .filter(|r| r.error.is_none() && r.iops > 0.0)
        .collect();
    for r in &ok {
        let requested = f64::from(r.depth);
        let is_async = r.jobs == 1 && r.depth > 1 && r.engine != "psync" && r.engine != "sync";
        // An asynchronous engine that ran synchronously: its thread spent most of the run
        // inside submission, and each submission took far longer than queueing takes (a few
        // microseconds): the I/O itself happened in the submit call. (Little's law depth is
        // no evidence here: completions that waited to be reaped count as "in flight".)
        let submit_share = r.slat_mean * r.iops / f64::from(r.jobs.max(1)) / 1e9;
        if is_async && submit_share >= 0.8 && r.slat_mean >= 25_000.0 {
            let why = if !direct && r.engine == "libaio" {
                "the file is not opened with O_DIRECT, so io_submit read the data before returning"
            } else {
                "submission did the I/O before returning"
            };
            out.push(Finding {
                title: format!("{} ran synchronously", r.label),
                evidence: format!(
                    "the submitting thread spent {:.0}% of its time inside submission, {} per submission \
                     (queueing alone takes a few microseconds); {} IOPS",
                    submit_share * 100.0,
                    human_ns(r.slat_mean),
                    human_count(r.iops)
                ),
                advice: format!("{why}; use direct=1, or io_uring, which hands blocking buffered I/O to its workers"),
            });
        } else if is_async && r.achieved_depth < requested * 0.5 {
            out.push(Finding {
                title: format!("{} kept only {:.1} of {} I/Os in flight", r.label, r.achieved_depth, r.depth),
                evidence: format!("IOPS {} with mean latency {}", human_count(r.iops), human_ns(r.clat_mean + r.slat_mean)),
                advice: "the submitting thread is the limit (CPU or system calls per I/O); batch submissions (iodepth_batch_submit) or use SQPOLL".into(),
            });
        }
    }
    // glibc's POSIX AIO looks asynchronous but serves each file with one thread doing blocking
    // I/O: far below what the same depth gets from a real asynchronous engine.
    let best_other = ok
        .iter()
        .filter(|r| r.engine != "posixaio")
        .map(|r| r.iops)
        .fold(0.0, f64::max);
    for r in ok.iter().filter(|r| r.engine == "posixaio" && r.depth > 1) {
        if best_other > 0.0 && r.iops < best_other * 0.5 {
            out.push(Finding {
                title: format!("{} was serialised by glibc", r.label),
                evidence: format!(
                    "{} IOPS against {} for the best other engine at the same depth; {:.2} context switches per I/O",
                    human_count(r.iops),
                    human_count(best_other),
                    r.ctx_per_io
                ),
                advice: "glibc runs POSIX AIO on one helper thread per file doing blocking I/O, so depth on one file is an illusion; use io_uring or libaio with direct=1".into(),
            });
        }
    }
    for r in rows.iter().filter(|r| r.error.is_some()) {
        out.push(Finding {
            title: format!("{} did not run", r.label),
            evidence: r.error.clone().unwrap_or_default(),
            advice: "the mode was refused up front, not silently replaced: see the message for what the machine lacks".into(),
        });
    }
    // The engines that reached the top IOPS all did so with the device busy all the time: the
    // device decides, and they cannot differ in IOPS. (Engines slow for their own reasons,
    // like posixaio, are left out of "the top", not allowed to hide the bottleneck.)
    let top = ok.iter().map(|r| r.iops).fold(0.0, f64::max);
    let leaders: Vec<&&CompareRow> = ok.iter().filter(|r| r.iops >= top * 0.85).collect();
    let busy = |r: &CompareRow| r.disk_util.is_some_and(|u| u >= 90.0);
    if leaders.len() >= 2 && leaders.iter().all(|r| busy(r)) {
        let lo = leaders.iter().map(|r| r.iops).fold(f64::MAX, f64::min);
        let best = leaders
            .iter()
            .min_by(|a, b| a.cpu_ns_per_io.total_cmp(&b.cpu_ns_per_io));
        let names: Vec<&str> = leaders.iter().map(|r| r.label.as_str()).collect();
        out.push(Finding {
            title: "the device is the bottleneck".into(),
            evidence: format!(
                "{} reached {} to {} IOPS with the device {:.0}% or more busy",
                names.join(", "),
                human_count(lo),
                human_count(top),
                leaders.iter().filter_map(|r| r.disk_util).fold(f64::MAX, f64::min)
            ),
            advice: match best {
                Some(b) => format!(
                    "these engines cannot differ in IOPS here; compare CPU time per I/O instead: {} is cheapest at {}",
                    b.label,
                    human_ns(b.cpu_ns_per_io)
                ),
                None => "compare CPU time per I/O instead".into(),
            },
        });
    }
    // Buffered reads that hardly touched the device came from memory.
    if !direct && reads {
        for r in &ok {
            let total = r.iops
                * r.report
                    .jobs
                    .first()
                    .map(|j| j.read.runtime as f64 / 1000.0)
                    .unwrap_or(0.0);
            if let Some(dev) = r.disk_ios {
                if total > 1000.0 && (dev as f64) < total * 0.1 {
                    out.push(Finding {
                        title: format!("{} was served from the page cache", r.label),
                        evidence: format!("{:.0} reads, {dev} reached the device", total),
                        advice: "these figures measure memory, not the disk: use direct=1 or a file larger than RAM".into(),
                    });
                }
            }
        }
    }
    out
}

/// `123ns`, `45.6us`, `7.89ms`.
pub fn human_ns(ns: f64) -> String {
    if ns < 1_000.0 {
        format!("{ns:.0}ns")
    } else if ns < 1_000_000.0 {
        format!("{:.1}us", ns / 1e3)
    } else if ns < 1_000_000_000.0 {
        format!("{:.2}ms", ns / 1e6)
    } else {
        format!("{:.2}s", ns / 1e9)
    }
}

/// `71.0k`, `1.25M`.
pub fn human_count(v: f64) -> String {
    if v >= 1e6 {
        format!("{:.2}M", v / 1e6)
    } else if v >= 1e3 {
        format!("{:.1}k", v / 1e3)
    } else {
        format!("{v:.0}")
    }
}

fn human_bytes(v: f64) -> String {
    if v >= 1024.0 * 1024.0 * 1024.0 {
        format!("{:.2}GiB/s", v / (1024.0 * 1024.0 * 1024.0))
    } else {
        format!("{:.1}MiB/s", v / (1024.0 * 1024.0))
    }
}

/// A table column: heading, value of a row, whether higher is better, formatting.
type Column<'a> = (
    &'a str,
    &'a dyn Fn(&CompareRow) -> f64,
    bool,
    &'a dyn Fn(f64) -> String,
);

/// The comparison as a table with the best value of each column marked `*`, then the
/// findings.
pub fn write_table(c: &Comparison, out: &mut impl std::io::Write) -> std::io::Result<()> {
    let ok: Vec<&CompareRow> = c.rows.iter().filter(|r| r.error.is_none()).collect();
    let best = |f: &dyn Fn(&CompareRow) -> f64, high: bool| -> f64 {
        let it = ok.iter().map(|r| f(r));
        if high {
            it.fold(f64::MIN, f64::max)
        } else {
            it.fold(f64::MAX, f64::min)
        }
    };
    let cols: [Column<'_>; 14] = [
        ("IOPS", &|r| r.iops, true, &human_count),
        ("BW", &|r| r.bw_bytes, true, &human_bytes),
        ("clat mean", &|r| r.clat_mean, false, &human_ns),
        ("p50", &|r| r.clat_pct[0] as f64, false, &human_ns),
        ("p99", &|r| r.clat_pct[2] as f64, false, &human_ns),
        ("p99.9", &|r| r.clat_pct[3] as f64, false, &human_ns),
        ("p99.99", &|r| r.clat_pct[4] as f64, false, &human_ns),
        ("p99.999", &|r| r.clat_pct[5] as f64, false, &human_ns),
        ("usr%", &|r| r.usr_cpu, false, &|v| format!("{v:.1}")),
        ("sys%", &|r| r.sys_cpu, false, &|v| format!("{v:.1}")),
        ("CPU/IO", &|r| r.cpu_ns_per_io, false, &human_ns),
        ("calls/IO", &|r| r.syscalls_per_io, false, &|v| {
            format!("{v:.2}")
        }),
        ("ctx/IO", &|r| r.ctx_per_io, false, &|v| format!("{v:.3}")),
        ("depth", &|r| r.achieved_depth, true, &|v| format!("{v:.1}")),
    ];
    let w = c
        .rows
        .iter()
        .map(|r| r.label.len() + 8)
        .max()
        .unwrap_or(10)
        .max(14);
    write!(out, "{:<w$}", "engine (depth)")?;
    for (name, ..) in &cols {
        write!(out, " {name:>10}")?;
    }
    writeln!(out)?;
    for r in &c.rows {
        let jobs = if r.jobs > 1 {
            format!(" x{}", r.jobs)
        } else {
            String::new()
        };
        write!(out, "{:<w$}", format!("{} ({}{jobs})", r.label, r.depth))?;
        if let Some(e) = &r.error {
            writeln!(out, " did not run: {e}")?;
            continue;
        }
        for (i, (_, f, high, fmt)) in cols.iter().enumerate() {
            let v = f(r);
            // Marked only where the rows differ: a column of equal values has no best.
            let differs = best(*f, true) != best(*f, false);
            let mark = ok.len() > 1 && i != 13 && differs && v == best(*f, *high);
            let mut cell = fmt(v);
            if i == 13 {
                cell = format!("{cell}/{}", r.depth);
            }
            write!(out, " {:>10}", if mark { format!("*{cell}") } else { cell })?;
        }
        writeln!(out)?;
    }
    writeln!(out, "\n* best in the column. depth: I/Os in flight on average (IOPS x mean latency) / requested.")?;
    if c.rows.iter().any(|r| r.jobs > 1) {
        writeln!(out, "xN: a synchronous engine reaches depth N with N threads (jobs), as a fair comparison must.")?;
    }
    if !c.findings.is_empty() {
        writeln!(out, "\nFindings:")?;
        for f in &c.findings {
            writeln!(
                out,
                "- {}.\n  Evidence: {}.\n  What to do: {}.",
                f.title, f.evidence, f.advice
            )?;
        }
    }
    Ok(())
}

/// The comparison as JSON: the summary rows and findings, plus every run's fio-shaped result.
pub fn write_compare_json(c: &Comparison, out: &mut impl std::io::Write) -> std::io::Result<()> {
    use serde_json::{json, Value};
    let rows: Vec<Value> = c
        .rows
        .iter()
        .map(|r| {
            json!({
                "label": r.label, "engine": r.engine, "iodepth": r.depth, "jobs": r.jobs,
                "iops": r.iops, "bw_bytes": r.bw_bytes, "clat_mean_ns": r.clat_mean,
                "clat_percentile_ns": {
                    "50.000000": r.clat_pct[0], "90.000000": r.clat_pct[1], "99.000000": r.clat_pct[2],
                    "99.900000": r.clat_pct[3], "99.990000": r.clat_pct[4], "99.999000": r.clat_pct[5]
                },
                "slat_mean_ns": r.slat_mean, "usr_cpu": r.usr_cpu, "sys_cpu": r.sys_cpu,
                "cpu_ns_per_io": r.cpu_ns_per_io, "syscalls_per_io": r.syscalls_per_io,
                "ctx_per_io": r.ctx_per_io, "achieved_depth": r.achieved_depth,
                "disk_util": r.disk_util, "disk_ios": r.disk_ios, "error": r.error,
                "iops_series": r.iops_series, "lat_series_ns": r.lat_series,
            })
        })
        .collect();
    let mut runs = Vec::new();
    for r in c.rows.iter().filter(|r| r.error.is_none()) {
        let mut buf = Vec::new();
        // json+ (with the histogram bins), so a report made from this file can draw them.
        crate::write_json(&r.report, true, &mut buf)?;
        runs.push(serde_json::from_slice::<Value>(&buf).map_err(std::io::Error::other)?);
    }
    let m = &c.machine;
    let v = json!({
        "iolab compare": {
            "time": c.time,
            "workload": c.workload.iter().map(|(k, v)| (k.clone(), Value::String(v.clone()))).collect::<serde_json::Map<_, _>>(),
            "machine": {"kernel": m.kernel, "cpu": m.cpu, "cpus": m.cpus, "device": m.device, "filesystem": m.filesystem, "scheduler": m.scheduler},
            "rows": rows,
            "findings": c.findings.iter().map(|f| json!({"title": f.title, "evidence": f.evidence, "advice": f.advice})).collect::<Vec<_>>(),
        },
        "runs": runs,
    });
    serde_json::to_writer_pretty(&mut *out, &v).map_err(std::io::Error::other)?;
    writeln!(out)
}

/// A comparison rebuilt from saved results, for `iolab report`: iolab compare's JSON (its rows
/// and runs), or fio's (or iolab run's) JSON / json+, one row per job. Figures a file does not
/// carry (system calls per I/O from fio, the machine) stay empty.
pub fn comparison_from_json(text: &str) -> Result<Comparison, crate::ReportError> {
    let v: serde_json::Value =
        serde_json::from_str(text).map_err(|e| crate::ReportError::Json(e.to_string()))?;
    if let Some(c) = v.get("iolab compare") {
        let runs = v
            .get("runs")
            .and_then(|r| r.as_array())
            .cloned()
            .unwrap_or_default();
        let mut run_reports = Vec::new();
        for r in &runs {
            run_reports.push(crate::read_fio_json(&r.to_string())?);
        }
        let num = |r: &serde_json::Value, k: &str| r.get(k).and_then(|x| x.as_f64()).unwrap_or(0.0);
        let text_of = |r: &serde_json::Value, k: &str| {
            r.get(k).and_then(|x| x.as_str()).unwrap_or("").to_string()
        };
        let mut reports = run_reports.into_iter();
        let rows = c
            .get("rows")
            .and_then(|r| r.as_array())
            .map(|rows| {
                rows.iter()
                    .map(|r| {
                        let error = r.get("error").and_then(|e| e.as_str()).map(String::from);
                        let pct = r.get("clat_percentile_ns");
                        let mut clat_pct = [0u64; 6];
                        for (i, p) in CLAT_PCT.iter().enumerate() {
                            clat_pct[i] = pct
                                .and_then(|m| m.get(format!("{p:.6}")))
                                .and_then(|x| x.as_u64())
                                .unwrap_or(0);
                        }
                        CompareRow {
                            label: text_of(r, "label"),
                            engine: text_of(r, "engine"),
                            depth: num(r, "iodepth") as u32,
                            jobs: num(r, "jobs") as u32,
                            iops: num(r, "iops"),
                            bw_bytes: num(r, "bw_bytes"),
                            clat_mean: num(r, "clat_mean_ns"),
                            clat_pct,
                            slat_mean: num(r, "slat_mean_ns"),
                            usr_cpu: num(r, "usr_cpu"),
                            sys_cpu: num(r, "sys_cpu"),
                            cpu_ns_per_io: num(r, "cpu_ns_per_io"),
                            syscalls_per_io: num(r, "syscalls_per_io"),
                            ctx_per_io: num(r, "ctx_per_io"),
                            achieved_depth: num(r, "achieved_depth"),
                            disk_util: r.get("disk_util").and_then(|x| x.as_f64()),
                            disk_ios: r.get("disk_ios").and_then(|x| x.as_u64()),
                            report: if error.is_none() {
                                reports.next().unwrap_or_default()
                            } else {
                                Report::default()
                            },
                            iops_series: series(r, "iops_series"),
                            lat_series: series(r, "lat_series_ns"),
                            error,
                        }
                    })
                    .collect()
            })
            .unwrap_or_default();
        let findings = c
            .get("findings")
            .and_then(|f| f.as_array())
            .map(|fs| {
                fs.iter()
                    .map(|f| Finding {
                        title: text_of(f, "title"),
                        evidence: text_of(f, "evidence"),
                        advice: text_of(f, "advice"),
                    })
                    .collect()
            })
            .unwrap_or_default();
        let m = c.get("machine").cloned().unwrap_or_default();
        return Ok(Comparison {
            workload: c
                .get("workload")
                .and_then(|w| w.as_object())
                .map(|o| {
                    o.iter()
                        .map(|(k, v)| (k.clone(), v.as_str().unwrap_or("").to_string()))
                        .collect()
                })
                .unwrap_or_default(),
            rows,
            findings,
            machine: Machine {
                kernel: text_of(&m, "kernel"),
                cpu: text_of(&m, "cpu"),
                cpus: num(&m, "cpus") as u32,
                device: text_of(&m, "device"),
                filesystem: text_of(&m, "filesystem"),
                scheduler: text_of(&m, "scheduler"),
            },
            time: text_of(c, "time"),
        });
    }
    let report = crate::read_fio_json(text)?;
    let rows: Vec<CompareRow> = report
        .jobs
        .iter()
        .map(|j| row_from_job(j, &report))
        .collect();
    let first = report.jobs.first();
    let opt = |k: &str| {
        first.and_then(|j| {
            j.job_options
                .iter()
                .find(|(n, _)| n == k)
                .map(|(_, v)| v.clone())
        })
    };
    let direct = opt("direct").is_some_and(|v| v == "1");
    let reads = !matches!(opt("rw").as_deref(), Some("write" | "randwrite"));
    Ok(Comparison {
        workload: first.map(|j| j.job_options.clone()).unwrap_or_default(),
        findings: diagnose(&rows, direct, reads),
        machine: Machine {
            device: report
                .disk_util
                .first()
                .map(|d| d.name.clone())
                .unwrap_or_default(),
            ..Machine::default()
        },
        time: report.time.clone(),
        rows,
    })
}

/// A `[[ms, value], ...]` array from compare's JSON.
fn series(r: &serde_json::Value, key: &str) -> Vec<(u64, f64)> {
    r.get(key)
        .and_then(|s| s.as_array())
        .map(|a| {
            a.iter()
                .filter_map(|p| Some((p.get(0)?.as_u64()?, p.get(1)?.as_f64()?)))
                .collect()
        })
        .unwrap_or_default()
}

fn row_from_job(j: &crate::JobReport, report: &Report) -> CompareRow {
    let opt = |k: &str| {
        j.job_options
            .iter()
            .find(|(n, _)| n == k)
            .map(|(_, v)| v.clone())
    };
    let engine = opt("ioengine").unwrap_or_else(|| "psync".into());
    let dirs = [&j.read, &j.write, &j.trim];
    let main = dirs
        .iter()
        .max_by_key(|d| d.total_ios)
        .copied()
        .unwrap_or(&j.read);
    let ios: u64 = dirs.iter().map(|d| d.total_ios).sum();
    let iops: f64 = dirs.iter().map(|d| d.iops).sum();
    let mut clat_pct = [0u64; 6];
    if let Some(list) = &main.clat_ns.percentiles {
        for (i, p) in CLAT_PCT.iter().enumerate() {
            clat_pct[i] = list
                .iter()
                .find(|(q, _)| (q - p).abs() < 1e-9)
                .map(|x| x.1)
                .unwrap_or(0);
        }
    }
    let cpu_ns = (j.usr_cpu + j.sys_cpu) / 100.0 * j.job_runtime as f64 * 1e6;
    let per = |x: f64| if ios > 0 { x / ios as f64 } else { 0.0 };
    let one = Report {
        jobs: vec![j.clone()],
        ..Report::default()
    };
    CompareRow {
        label: j.jobname.clone(),
        depth: opt("iodepth").and_then(|d| d.parse().ok()).unwrap_or(1),
        jobs: j.members.max(1),
        engine,
        iops,
        bw_bytes: dirs.iter().map(|d| d.bw_bytes as f64).sum(),
        clat_mean: main.clat_ns.mean,
        clat_pct,
        slat_mean: main.slat_ns.mean,
        usr_cpu: j.usr_cpu,
        sys_cpu: j.sys_cpu,
        cpu_ns_per_io: per(cpu_ns),
        ctx_per_io: per(j.ctx as f64),
        achieved_depth: iops * main.lat_ns.mean / 1e9,
        disk_util: report.disk_util.first().map(|d| d.util),
        disk_ios: report.disk_util.first().map(|d| d.read_ios + d.write_ios),
        report: one,
        ..CompareRow::default()
    }
}

/// A comparison from fio's log files (write_bw_log / write_iops_log / write_lat_log:
/// `time_ms, value, ddir, bs[, offset]` per line), one row per job prefix (`name` of
/// `name_iops.1.log`): IOPS and latency over time, and their means. `files` are (file name,
/// contents).
pub fn comparison_from_logs(files: &[(String, String)]) -> Result<Comparison, crate::ReportError> {
    let mut rows: Vec<CompareRow> = Vec::new();
    for (name, text) in files {
        let base = std::path::Path::new(name)
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or(name);
        let kinds = ["_iops.", "_bw.", "_clat.", "_slat.", "_lat."];
        let (prefix, kind) = kinds
            .iter()
            .find_map(|k| base.find(k).map(|i| (&base[..i], &k[1..k.len() - 1])))
            .ok_or_else(|| {
                crate::ReportError::Json(format!(
                    "{base}: not a fio log (name_iops|bw|lat|clat|slat.N.log)"
                ))
            })?;
        // Values of one time summed over directions (a mixed job logs reads and writes).
        let mut points: Vec<(u64, f64)> = Vec::new();
        for (n, line) in text
            .lines()
            .enumerate()
            .filter(|(_, l)| !l.trim().is_empty())
        {
            let mut f = line.split(',').map(str::trim);
            let parse = |v: Option<&str>| v.and_then(|x| x.parse::<f64>().ok());
            let (Some(t), Some(v)) = (parse(f.next()), parse(f.next())) else {
                return Err(crate::ReportError::Json(format!(
                    "{base}:{}: not 'time, value, ...'",
                    n + 1
                )));
            };
            match points.last_mut() {
                Some(p) if p.0 == t as u64 && kind != "clat" && kind != "lat" && kind != "slat" => {
                    p.1 += v
                }
                _ => points.push((t as u64, v)),
            }
        }
        let idx = match rows.iter().position(|r| r.label == prefix) {
            Some(i) => i,
            None => {
                rows.push(CompareRow {
                    label: prefix.to_string(),
                    engine: String::new(),
                    depth: 1,
                    jobs: 1,
                    ..CompareRow::default()
                });
                rows.len() - 1
            }
        };
        let r = &mut rows[idx];
        let mean = |p: &[(u64, f64)]| {
            if p.is_empty() {
                0.0
            } else {
                p.iter().map(|x| x.1).sum::<f64>() / p.len() as f64
            }
        };
        match kind {
            "iops" => {
                r.iops = mean(&points);
                r.iops_series = points;
            }
            "bw" => r.bw_bytes = mean(&points) * 1024.0,
            "clat" => {
                r.clat_mean = mean(&points);
                r.lat_series = points;
            }
            "slat" => r.slat_mean = mean(&points),
            _ => {
                if r.lat_series.is_empty() {
                    r.clat_mean = mean(&points);
                    r.lat_series = points;
                }
            }
        }
    }
    Ok(Comparison {
        rows,
        ..Comparison::default()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(engine: &str, depth: u32, iops: f64, slat: f64, clat: f64) -> CompareRow {
        CompareRow {
            label: engine.into(),
            engine: engine.into(),
            depth,
            jobs: 1,
            iops,
            slat_mean: slat,
            clat_mean: clat,
            achieved_depth: iops * (slat + clat) / 1e9,
            cpu_ns_per_io: 1000.0,
            ..CompareRow::default()
        }
    }

    #[test]
    fn buffered_libaio_that_blocked_in_submit_is_called_synchronous() {
        // 30k IOPS at 32 requested, 30us spent in io_submit and 1us waiting: depth ~0.9.
        let f = diagnose(
            &[row("libaio", 32, 30_000.0, 30_000.0, 1_000.0)],
            false,
            true,
        );
        assert!(
            f.iter()
                .any(|f| f.title == "libaio ran synchronously" && f.advice.contains("direct=1")),
            "{f:?}"
        );
    }

    #[test]
    fn direct_libaio_that_filled_its_queue_is_not() {
        // 70k IOPS with 450us latency: 31.5 in flight of 32.
        let f = diagnose(
            &[row("libaio", 32, 70_000.0, 5_000.0, 445_000.0)],
            true,
            true,
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
        b.cpu_ns_per_io = 500.0;
        let f = diagnose(&[a, b], true, true);
        let d = f
            .iter()
            .find(|f| f.title == "the device is the bottleneck")
            .expect("finding");
        assert!(d.advice.contains("io_uring"), "{d:?}");
    }

    #[test]
    fn fio_log_files_become_a_row_with_series() {
        // As fio 3.33 writes them with log_avg_msec=500 (time ms, value, ddir, bs, offset).
        let files = vec![
            (
                "lg_iops.1.log".to_string(),
                "500, 1355130, 0, 0, 0\n1000, 2024468, 0, 0, 0\n".to_string(),
            ),
            (
                "lg_clat.1.log".to_string(),
                "500, 75, 0, 0, 0\n1000, 50, 0, 0, 0\n".to_string(),
            ),
        ];
        let c = comparison_from_logs(&files).unwrap();
        assert_eq!(c.rows.len(), 1);
        let r = &c.rows[0];
        assert_eq!(r.label, "lg");
        assert_eq!(r.iops_series, vec![(500, 1_355_130.0), (1000, 2_024_468.0)]);
        assert_eq!(r.clat_mean, 62.5);
        let bad = comparison_from_logs(&[("x.log".to_string(), String::new())]).unwrap_err();
        assert!(bad.to_string().contains("not a fio log"), "{bad}");
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
        rows[1].cpu_ns_per_io = 700.0;
        let f = diagnose(&rows, true, true);
        let d = f
            .iter()
            .find(|f| f.title == "the device is the bottleneck")
            .expect("finding");
        assert!(d.evidence.starts_with("libaio, io_uring reached"), "{d:?}");
        assert!(d.advice.contains("io_uring is cheapest"), "{d:?}");
    }

    #[test]
    fn the_table_marks_the_best_and_names_refused_modes() {
        let mut bad = row("io_uring", 32, 0.0, 0.0, 0.0);
        bad.label = "io_uring (hipri)".into();
        bad.error = Some("IOPOLL is not supported on vda".into());
        let c = Comparison {
            rows: vec![
                row("libaio", 32, 70_000.0, 5_000.0, 445_000.0),
                row("io_uring", 32, 72_000.0, 2_000.0, 440_000.0),
                bad,
            ],
            ..Comparison::default()
        };
        let mut s = Vec::new();
        write_table(&c, &mut s).unwrap();
        let s = String::from_utf8(s).unwrap();
        assert!(s.contains("*72.0k"), "{s}");
        assert!(
            s.contains("io_uring (hipri) (32)") && s.contains("did not run: IOPOLL"),
            "{s}"
        );
        assert!(!s.contains("*0.0MiB/s"), "equal columns have no best: {s}");
    }
}
