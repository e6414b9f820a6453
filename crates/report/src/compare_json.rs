//! Compare's JSON: the comparison written as `iolab compare --output-format=json` writes it,
//! and read back (by `iolab report`) into the same model.

use crate::columns::COLUMNS;
use crate::compare::{CompareRow, Comparison, Finding, HostShare, Machine, Source, CLAT_PCT};
use crate::model::Report;

/// The comparison as JSON: the summary rows and findings, plus every run's fio-shaped result.
/// A figure the source lacks is `null`.
pub fn write_compare_json(c: &Comparison, out: &mut impl std::io::Write) -> std::io::Result<()> {
    use serde_json::{json, Value};
    let rows: Vec<Value> = c.rows.iter().map(row_json).collect();
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
            "interrupted": c.interrupted,
            "interval_method": format!("median of the trials; interval by {}, aiming at {:.0}% coverage (with fewer than 6 trials [min, max], which covers less: 75% for 3)", crate::interval::METHOD, crate::interval::TARGET * 100.0),
            "workload": c.workload.iter().map(|(k, v)| (k.clone(), Value::String(v.clone()))).collect::<serde_json::Map<_, _>>(),
            "machine": {"kernel": m.kernel, "cpu": m.cpu, "cpus": m.cpus, "device": m.device, "filesystem": m.filesystem, "scheduler": m.scheduler},
            "rows": rows,
            "findings": c.findings.iter().map(|f| json!({"title": f.title, "evidence": f.evidence, "advice": f.advice})).collect::<Vec<_>>(),
        },
        "runs": runs,
    });
    let mut v = v;
    if let Some(q) = &c.qos {
        v["iolab compare"]["qos"] = crate::qos::qos_json(q);
    }
    serde_json::to_writer_pretty(&mut *out, &v).map_err(std::io::Error::other)?;
    writeln!(out)
}

/// One row (or one trial's row) as JSON: its figures, each trial's, and for a row of several
/// trials each column's median with its interval.
fn row_json(r: &CompareRow) -> serde_json::Value {
    use serde_json::{json, Value};
    let pct: serde_json::Map<String, Value> = CLAT_PCT
        .iter()
        .zip(r.clat_pct)
        .map(|(p, v)| (format!("{p:.6}"), json!(v)))
        .collect();
    let mut v = json!({
        "label": r.label, "engine": r.engine, "iodepth": r.depth, "jobs": r.jobs,
        "iops": r.iops, "bw_bytes": r.bw_bytes, "clat_mean_ns": r.clat_mean,
        "clat_percentile_ns": pct, "clat_samples": r.clat_samples,
        "slat_mean_ns": r.slat_mean, "submit_share": r.submit_share,
        "usr_cpu": r.usr_cpu, "sys_cpu": r.sys_cpu,
        "cpu_ns_per_io": r.cpu_ns_per_io, "syscalls_per_io": r.syscalls_per_io,
        "ctx_per_io": r.ctx_per_io, "achieved_depth": r.achieved_depth,
        "disk_util": r.disk_util, "disk_ios": r.disk_ios, "error": r.error,
        "iops_series": r.iops_series, "lat_series_ns": r.lat_series,
        "hosts": r.hosts.iter().map(|h| json!({
            "hostname": h.hostname, "rank": h.rank, "iops": h.iops, "ios": h.ios,
            "bw_bytes": h.bw_bytes, "clat_mean_ns": h.clat_mean,
            "clat_p99_ns": h.clat_p99, "usr_cpu": h.usr_cpu, "sys_cpu": h.sys_cpu,
            "error": h.error,
        })).collect::<Vec<_>>(),
    });
    if let Some(t) = r.started_ms {
        v["start_ms"] = json!(t);
    }
    if !r.trials.is_empty() {
        v["trials"] = Value::Array(r.trials.iter().map(row_json).collect());
        let intervals: serde_json::Map<String, Value> = (COLUMNS.iter())
            .filter_map(|c| {
                let i = c.interval(r).filter(|_| r.trials.len() > 1)?;
                let each: Vec<Option<f64>> = r.trials.iter().map(|t| (c.val)(t)).collect();
                Some((
                    c.head.to_string(),
                    json!({"trials": each, "median": i.median, "low": i.low, "high": i.high,
                           "coverage": i.coverage}),
                ))
            })
            .collect();
        v["intervals"] = Value::Object(intervals);
    }
    v
}

/// A row's "hosts" as [`write_compare_json`] wrote them.
fn hosts(r: &serde_json::Value) -> Vec<HostShare> {
    use serde_json::Value;
    let f = |h: &Value, k: &str| h.get(k).and_then(Value::as_f64);
    (r.get("hosts")
        .and_then(Value::as_array)
        .into_iter()
        .flatten())
    .map(|h| HostShare {
        hostname: h
            .get("hostname")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string(),
        rank: h.get("rank").and_then(Value::as_u64).unwrap_or(0) as u32,
        iops: f(h, "iops").unwrap_or(0.0),
        ios: h.get("ios").and_then(Value::as_u64).unwrap_or(0),
        bw_bytes: f(h, "bw_bytes").unwrap_or(0.0),
        clat_mean: f(h, "clat_mean_ns"),
        clat_p99: h.get("clat_p99_ns").and_then(Value::as_u64),
        usr_cpu: f(h, "usr_cpu"),
        sys_cpu: f(h, "sys_cpu"),
        error: h.get("error").and_then(Value::as_str).map(String::from),
    })
    .collect()
}

fn num(r: &serde_json::Value, k: &str) -> Option<f64> {
    r.get(k).and_then(serde_json::Value::as_f64)
}

fn text(r: &serde_json::Value, k: &str) -> String {
    (r.get(k).and_then(serde_json::Value::as_str))
        .unwrap_or("")
        .to_string()
}

fn series(r: &serde_json::Value, k: &str) -> Vec<(u64, f64)> {
    (r.get(k)
        .and_then(serde_json::Value::as_array)
        .into_iter()
        .flatten())
    .filter_map(|p| Some((p.get(0)?.as_u64()?, p.get(1)?.as_f64()?)))
    .collect()
}

/// One row as [`write_compare_json`] wrote it; a row that ran takes the next run's report.
fn read_row(r: &serde_json::Value, reports: &mut impl Iterator<Item = Report>) -> CompareRow {
    use serde_json::Value;
    let f = num;
    let error = r.get("error").and_then(Value::as_str).map(String::from);
    let pct = r.get("clat_percentile_ns");
    let mut clat_pct = [None; 6];
    for (slot, p) in CLAT_PCT.iter().enumerate() {
        clat_pct[slot] = pct.and_then(|m| m.get(format!("{p:.6}"))?.as_u64());
    }
    CompareRow {
        label: text(r, "label"),
        engine: text(r, "engine"),
        depth: f(r, "iodepth").unwrap_or(1.0) as u32,
        jobs: f(r, "jobs").unwrap_or(1.0) as u32,
        iops: f(r, "iops").unwrap_or(0.0),
        bw_bytes: f(r, "bw_bytes").unwrap_or(0.0),
        clat_mean: f(r, "clat_mean_ns"),
        clat_pct,
        clat_samples: r.get("clat_samples").and_then(Value::as_u64).unwrap_or(0),
        slat_mean: f(r, "slat_mean_ns"),
        submit_share: f(r, "submit_share"),
        usr_cpu: f(r, "usr_cpu"),
        sys_cpu: f(r, "sys_cpu"),
        cpu_ns_per_io: f(r, "cpu_ns_per_io"),
        syscalls_per_io: f(r, "syscalls_per_io"),
        ctx_per_io: f(r, "ctx_per_io"),
        achieved_depth: f(r, "achieved_depth"),
        disk_util: f(r, "disk_util"),
        disk_ios: r.get("disk_ios").and_then(Value::as_u64),
        report: match error {
            None if r.get("start_ms").is_none() => reports.next().unwrap_or_default(),
            None => Report::default(),
            Some(_) => Report::default(),
        },
        iops_series: series(r, "iops_series"),
        lat_series: series(r, "lat_series_ns"),
        error,
        hosts: hosts(r),
        trials: (r
            .get("trials")
            .and_then(Value::as_array)
            .into_iter()
            .flatten())
        .map(|t| read_row(t, &mut std::iter::empty()))
        .collect(),
        started_ms: r.get("start_ms").and_then(Value::as_u64),
    }
}

/// Reads back what [`write_compare_json`] wrote (`v` holds the key "iolab compare"): the rows
/// as they were derived when the comparison ran, with each run's fio-shaped result.
pub fn read_compare_json(v: &serde_json::Value) -> Result<Comparison, crate::ReportError> {
    use serde_json::Value;
    let c = v.get("iolab compare").cloned().unwrap_or_default();
    let list = |v: &Value, k: &str| {
        v.get(k)
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default()
    };
    let mut reports = Vec::new();
    for r in list(v, "runs") {
        reports.push(crate::read_fio_json(&r.to_string())?);
    }
    let mut reports = reports.into_iter();
    let rows = list(&c, "rows")
        .iter()
        .map(|r| read_row(r, &mut reports))
        .collect();
    let findings = (list(&c, "findings").iter())
        .map(|x| Finding {
            title: text(x, "title"),
            evidence: text(x, "evidence"),
            advice: text(x, "advice"),
        })
        .collect();
    let m = c.get("machine").cloned().unwrap_or_default();
    let workload = (c
        .get("workload")
        .and_then(Value::as_object)
        .into_iter()
        .flatten())
    .map(|(k, v)| (k.clone(), v.as_str().unwrap_or("").to_string()))
    .collect();
    Ok(Comparison {
        source: Source::Compare,
        workload,
        rows,
        findings,
        machine: Machine {
            kernel: text(&m, "kernel"),
            cpu: text(&m, "cpu"),
            cpus: num(&m, "cpus").unwrap_or(0.0) as u32,
            device: text(&m, "device"),
            filesystem: text(&m, "filesystem"),
            scheduler: text(&m, "scheduler"),
        },
        time: text(&c, "time"),
        interrupted: c
            .get("interrupted")
            .and_then(Value::as_str)
            .map(String::from),
        qos: c.get("qos").map(crate::qos::read_qos_json),
    })
}
