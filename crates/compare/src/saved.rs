//! Comparisons from saved results, for `iolab report`: compare's own JSON (read back as it
//! was written), fio's (or `iolab run`'s) JSON and json+ (one row per job, made by the same
//! derivation as compare's rows, with the same findings), and fio's log files.

use iolab_report::compare::{CompareRow, Comparison, Machine, Source};
use iolab_report::compare_json::read_compare_json;
use iolab_report::{Report, ReportError};

use crate::diagnose::{diagnose, Workload};
use crate::row::{derive, RunFacts};

/// A comparison from a saved JSON file: compare's, or fio's. Figures fio's output does not
/// carry (system calls, the machine) stay empty and are shown as missing.
pub fn from_json(text: &str) -> Result<Comparison, ReportError> {
    let v: serde_json::Value =
        serde_json::from_str(text).map_err(|e| ReportError::Json(e.to_string()))?;
    if v.get("iolab compare").is_some() {
        return read_compare_json(&v);
    }
    Ok(from_fio(iolab_report::read_fio_json(text)?))
}

/// One row per job of fio's report, with the engine's capabilities where this machine can
/// open the engine (for the findings), and the workload as the jobs' options.
fn from_fio(report: Report) -> Comparison {
    let disk = report.disk_util.first();
    let mut caps = Vec::new();
    let rows: Vec<CompareRow> = report
        .jobs
        .iter()
        .map(|j| {
            let opt = |k: &str| option(&j.job_options, k);
            let engine = opt("ioengine").unwrap_or_else(|| "psync".into());
            let depth = opt("iodepth").and_then(|d| d.parse().ok()).unwrap_or(1);
            caps.push(crate::Variant::parse(&engine).and_then(|v| v.caps(depth)));
            derive(
                j,
                RunFacts {
                    label: j.jobname.clone(),
                    engine,
                    depth,
                    jobs: j.members.max(1),
                    disk_util: disk.map(|d| d.util),
                    disk_ios: disk.map(|d| d.read_ios + d.write_ios),
                    ..RunFacts::default()
                },
            )
        })
        .collect();
    let options = report
        .jobs
        .first()
        .map(|j| j.job_options.clone())
        .unwrap_or_default();
    let w = Workload {
        direct: option(&options, "direct").is_some_and(|v| v == "1"),
        reads: !matches!(
            option(&options, "rw").as_deref(),
            Some("write" | "randwrite")
        ),
    };
    Comparison {
        source: Source::FioJson {
            version: report.fio_version.clone(),
        },
        workload: fio_workload(&report),
        findings: diagnose(&rows, &caps, w),
        machine: Machine {
            device: disk.map(|d| d.name.clone()).unwrap_or_default(),
            ..Machine::default()
        },
        time: report.time.clone(),
        rows,
        interrupted: None,
        qos: None,
    }
}

fn option(opts: &[(String, String)], k: &str) -> Option<String> {
    opts.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone())
}

/// The first job's options, then what the table's rows vary: engines, depths, sizes and jobs
/// over all jobs (fio's defaults where a job does not say, since fio leaves them out).
fn fio_workload(report: &Report) -> Vec<(String, String)> {
    let mut w: Vec<(String, String)> = report
        .jobs
        .first()
        .map(|j| j.job_options.clone())
        .unwrap_or_default();
    w.retain(|(k, _)| !matches!(k.as_str(), "ioengine" | "iodepth" | "size" | "numjobs"));
    let all = |k: &str, default: &str| {
        let mut vals: Vec<String> = Vec::new();
        for j in &report.jobs {
            let v = option(&j.job_options, k).unwrap_or_else(|| default.to_string());
            if !vals.contains(&v) {
                vals.push(v);
            }
        }
        vals.join(", ")
    };
    w.push(("engines".into(), all("ioengine", "psync")));
    w.push(("iodepth".into(), all("iodepth", "1")));
    w.push(("size".into(), all("size", "–")));
    w.push(("numjobs".into(), all("numjobs", "1")));
    w
}

/// A comparison from fio's log files (write_bw_log / write_iops_log / write_lat_log:
/// `time_ms, value, ddir, bs[, offset]` per line), one row per job prefix (`name` of
/// `name_iops.1.log`): IOPS and latency over time, and their means. `files` are (file name,
/// contents).
pub fn comparison_from_logs(files: &[(String, String)]) -> Result<Comparison, ReportError> {
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
                ReportError::Json(format!(
                    "{base}: not a fio log (name_iops|bw|lat|clat|slat.N.log)"
                ))
            })?;
        let points = log_points(base, text, kind)?;
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
        fill_from_log(&mut rows[idx], kind, points);
    }
    Ok(Comparison {
        rows,
        source: Source::FioLogs,
        ..Comparison::default()
    })
}

/// A log's (time, value) points; the values of one time are summed over directions (a mixed
/// job logs reads and writes), except for latencies.
fn log_points(base: &str, text: &str, kind: &str) -> Result<Vec<(u64, f64)>, ReportError> {
    let mut points: Vec<(u64, f64)> = Vec::new();
    for (n, line) in text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
    {
        let mut f = line.split(',').map(str::trim);
        let parse = |v: Option<&str>| v.and_then(|x| x.parse::<f64>().ok());
        let (Some(t), Some(v)) = (parse(f.next()), parse(f.next())) else {
            return Err(ReportError::Json(format!(
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
    Ok(points)
}

/// The row's figure that a log of `kind` gives: its mean, and for IOPS and latency the series.
/// A total latency (`lat`) speaks for the completion latency only where no clat log did.
fn fill_from_log(r: &mut CompareRow, kind: &str, points: Vec<(u64, f64)>) {
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
            r.clat_mean = Some(mean(&points)).filter(|_| !points.is_empty());
            r.lat_series = points;
        }
        "slat" => r.slat_mean = Some(mean(&points)).filter(|_| !points.is_empty()),
        _ => {
            if r.lat_series.is_empty() {
                r.clat_mean = Some(mean(&points)).filter(|_| !points.is_empty());
                r.lat_series = points;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        let c = comparison_from_logs(&files).expect("logs");
        assert_eq!(c.rows.len(), 1);
        assert_eq!(c.source, Source::FioLogs);
        let r = &c.rows[0];
        assert_eq!(r.label, "lg");
        assert_eq!(r.iops_series, vec![(500, 1_355_130.0), (1000, 2_024_468.0)]);
        assert_eq!(r.clat_mean, Some(62.5));
        assert_eq!(r.syscalls_per_io, None);
        let bad = comparison_from_logs(&[("x.log".to_string(), String::new())]).unwrap_err();
        assert!(bad.to_string().contains("not a fio log"), "{bad}");
    }

    fn fio_jsonplus() -> Comparison {
        let text = include_str!("../../report/tests/data/fio-3.33-libaio-randread.jsonplus");
        from_json(text).expect("fio's json+ reads")
    }

    /// Regression: a page from fio's JSON was titled "iolab compare" and showed fio's missing
    /// p99.999 as 0 ns.
    #[test]
    fn fio_json_is_a_fio_source_with_missing_figures_left_empty() {
        let c = fio_jsonplus();
        assert!(matches!(&c.source, Source::FioJson { version } if version.starts_with("fio-")));
        let r = &c.rows[0];
        assert_eq!(r.engine, "libaio");
        assert!(r.iops > 0.0 && r.clat_mean.is_some());
        assert_eq!(r.syscalls_per_io, None, "fio does not count system calls");
        assert_eq!(r.clat_pct[5], None, "fio's default list stops at 99.99");
        let keys: Vec<&str> = c.workload.iter().map(|(k, _)| k.as_str()).collect();
        for k in ["engines", "iodepth", "size", "numjobs"] {
            assert!(keys.contains(&k), "{k} missing from {keys:?}");
        }
    }
}
