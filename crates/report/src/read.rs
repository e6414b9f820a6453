//! Reading fio's JSON and json+ output back into the model (`iolab report RESULTS.json`).
//!
//! Strict about types where fio is strict (numbers must be numbers), lenient about absence:
//! a missing key leaves the model's default, so output of older or newer fio versions loads.
//! The text-only fields are filled as well as the JSON allows: groups are rebuilt the way fio
//! builds them, the header and `jobs=N` from the job options.

use serde_json::{Map, Value};

use crate::json::{DEPTH_KEYS, LAT_KEYS, SUBMIT_KEYS};
use crate::model::{
    DirReport, DiskAggr, DiskUtil, JobHeader, JobReport, LatReport, PrioReport, Report, SyncReport,
    Units,
};
use crate::ReportError;

type Obj = Map<String, Value>;

/// Parses fio's `--output-format=json` or `json+` output.
pub fn read_fio_json(text: &str) -> Result<Report, ReportError> {
    let root: Value = serde_json::from_str(text).map_err(|e| ReportError::Json(e.to_string()))?;
    let root = root
        .as_object()
        .ok_or_else(|| bad("", "the root is not an object"))?;
    let mut r = Report {
        fio_version: string(root, "fio version")?,
        timestamp: uint(root, "timestamp")?,
        timestamp_ms: uint(root, "timestamp_ms")?,
        time: string(root, "time")?,
        global_options: options(root, "global options")?,
        ..Report::default()
    };
    for (i, j) in array(root, "jobs")?.iter().enumerate() {
        let j = j
            .as_object()
            .ok_or_else(|| bad(&format!("jobs[{i}]"), "not an object"))?;
        r.jobs.push(job(j, &r.global_options)?);
    }
    for (i, d) in array(root, "disk_util")?.iter().enumerate() {
        let d = d
            .as_object()
            .ok_or_else(|| bad(&format!("disk_util[{i}]"), "not an object"))?;
        r.disk_util.push(disk(d)?);
    }
    set_members(&mut r.jobs);
    r.groups = crate::group::groups_from_jobs(&r.jobs);
    for j in &mut r.jobs {
        let agg = r
            .groups
            .iter()
            .find(|g| g.groupid == j.groupid)
            .map(|g| g.dirs.clone());
        restore_precision(j, agg.as_ref());
    }
    count_threads(&mut r);
    drop_clone_headers(&mut r.jobs);
    Ok(r)
}

/// JSON does not say whether numjobs clones were reported together (group_reporting):
/// without it fio lists each clone under the same name, so a job listed fewer times than its
/// numjobs was a group of members; otherwise each entry is one job.
fn set_members(jobs: &mut [JobReport]) {
    let listed = |j: &JobReport| {
        jobs.iter()
            .filter(|o| o.jobname == j.jobname && o.groupid == j.groupid)
            .count() as u32
    };
    let members: Vec<u32> = jobs
        .iter()
        .map(|j| if listed(j) >= j.members { 1 } else { j.members })
        .collect();
    for (j, m) in jobs.iter_mut().zip(members) {
        j.members = m;
    }
}

/// fio's "Starting N threads/processes": `thread` (a bare flag, stored as an empty value)
/// makes a job a thread, not a process.
fn count_threads(r: &mut Report) {
    let is_thread = |j: &JobReport| {
        j.job_options
            .iter()
            .chain(&r.global_options)
            .any(|(k, _)| k == "thread")
    };
    r.nr_threads = r
        .jobs
        .iter()
        .filter(|j| is_thread(j))
        .map(|j| j.members)
        .sum();
    r.nr_processes = r
        .jobs
        .iter()
        .filter(|j| !is_thread(j))
        .map(|j| j.members)
        .sum();
}

/// fio prints one header per job section (clones get a "..." line): drop the clones' own.
fn drop_clone_headers(jobs: &mut [JobReport]) {
    let mut seen: Vec<(String, u32)> = Vec::new();
    for j in jobs {
        let key = (j.jobname.clone(), j.groupid);
        if seen.contains(&key) {
            j.header = None;
        } else {
            seen.push(key);
        }
    }
}

fn bad(path: &str, what: &str) -> ReportError {
    ReportError::Shape {
        path: path.to_string(),
        what: what.to_string(),
    }
}

fn uint(o: &Obj, k: &str) -> Result<u64, ReportError> {
    match o.get(k) {
        None => Ok(0),
        Some(v) => v
            .as_u64()
            .or_else(|| v.as_f64().filter(|f| *f >= 0.0).map(|f| f as u64))
            .ok_or_else(|| bad(k, "not a non-negative number")),
    }
}

fn int(o: &Obj, k: &str) -> Result<i64, ReportError> {
    match o.get(k) {
        None => Ok(0),
        Some(v) => v.as_i64().ok_or_else(|| bad(k, "not an integer")),
    }
}

fn float(o: &Obj, k: &str) -> Result<f64, ReportError> {
    match o.get(k) {
        None => Ok(0.0),
        Some(v) => v.as_f64().ok_or_else(|| bad(k, "not a number")),
    }
}

fn string(o: &Obj, k: &str) -> Result<String, ReportError> {
    match o.get(k) {
        None => Ok(String::new()),
        Some(v) => v
            .as_str()
            .map(str::to_string)
            .ok_or_else(|| bad(k, "not a string")),
    }
}

fn object<'a>(o: &'a Obj, k: &str) -> Result<Option<&'a Obj>, ReportError> {
    match o.get(k) {
        None => Ok(None),
        Some(v) => v
            .as_object()
            .map(Some)
            .ok_or_else(|| bad(k, "not an object")),
    }
}

fn array<'a>(o: &'a Obj, k: &str) -> Result<&'a [Value], ReportError> {
    match o.get(k) {
        None => Ok(&[]),
        Some(v) => v
            .as_array()
            .map(Vec::as_slice)
            .ok_or_else(|| bad(k, "not an array")),
    }
}

fn options(o: &Obj, k: &str) -> Result<Vec<(String, String)>, ReportError> {
    let Some(m) = object(o, k)? else {
        return Ok(Vec::new());
    };
    m.iter()
        .map(|(name, v)| {
            let v = match v {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            Ok((name.clone(), v))
        })
        .collect()
}

fn pcts<const N: usize>(o: &Obj, k: &str, keys: &[&str]) -> Result<[f64; N], ReportError> {
    let mut out = [0.0; N];
    if let Some(m) = object(o, k)? {
        for (slot, key) in out.iter_mut().zip(keys) {
            *slot = float(m, key)?;
        }
    }
    Ok(out)
}

fn job(j: &Obj, globals: &[(String, String)]) -> Result<JobReport, ReportError> {
    let job_options = options(j, "job options")?;
    let dir = |k: &str| -> Result<DirReport, ReportError> {
        object(j, k)?
            .map(dir)
            .transpose()
            .map(Option::unwrap_or_default)
    };
    let sync = match object(j, "sync")? {
        Some(s) => SyncReport {
            total_ios: uint(s, "total_ios")?,
            lat_ns: object(s, "lat_ns")?
                .map(lat)
                .transpose()?
                .unwrap_or_default(),
        },
        None => SyncReport::default(),
    };
    let errors = match (j.get("total_err"), j.get("first_error")) {
        (None, None) => None,
        _ => Some((uint(j, "total_err")?, int(j, "first_error")?)),
    };
    let mut r = JobReport {
        steadystate: object(j, "steadystate")?.map(steady).transpose()?,
        block_lifetime: None,
        jobname: string(j, "jobname")?,
        groupid: uint(j, "groupid")? as u32,
        error: int(j, "error")?,
        eta: int(j, "eta")?,
        elapsed: int(j, "elapsed")?,
        read: dir("read")?,
        write: dir("write")?,
        trim: dir("trim")?,
        sync,
        job_runtime: uint(j, "job_runtime")?,
        usr_cpu: float(j, "usr_cpu")?,
        sys_cpu: float(j, "sys_cpu")?,
        ctx: uint(j, "ctx")?,
        majf: uint(j, "majf")?,
        minf: uint(j, "minf")?,
        iodepth_level: pcts(j, "iodepth_level", &DEPTH_KEYS)?,
        iodepth_submit: pcts(j, "iodepth_submit", &SUBMIT_KEYS)?,
        iodepth_complete: pcts(j, "iodepth_complete", &SUBMIT_KEYS)?,
        latency_ns: pcts(j, "latency_ns", &LAT_KEYS)?,
        latency_us: pcts(j, "latency_us", &LAT_KEYS)?,
        latency_ms: pcts(j, "latency_ms", &LAT_KEYS)?,
        latency_depth: uint(j, "latency_depth")? as u32,
        latency_target: uint(j, "latency_target")?,
        latency_percentile: float(j, "latency_percentile")?,
        latency_window: uint(j, "latency_window")?,
        errors,
        desc: j.get("desc").map(|_| string(j, "desc")).transpose()?,
        ..JobReport::default()
    };
    r.job_options = job_options;
    infer_text_fields(&mut r, globals);
    Ok(r)
}

/// fio's `"steadystate"` object.
fn steady(o: &Obj) -> Result<crate::model::SteadyReport, ReportError> {
    let ss = string(o, "ss")?;
    let crit = string(o, "criterion")?;
    let data = object(o, "data")?;
    let list = |k: &str| -> Result<Vec<u64>, ReportError> {
        let Some(d) = data else {
            return Ok(Vec::new());
        };
        array(d, k)?
            .iter()
            .map(|v| {
                v.as_u64()
                    .ok_or_else(|| bad(k, "not a non-negative integer"))
            })
            .collect()
    };
    let mean = |k: &str| data.map_or(Ok(0), |d| uint(d, k));
    Ok(crate::model::SteadyReport {
        on_iops: ss.starts_with("iops"),
        on_slope: ss.contains("_slope"),
        duration: uint(o, "duration")?,
        attained: uint(o, "attained")? != 0,
        pct: crit.ends_with('%'),
        criterion: crit
            .trim_end_matches('%')
            .parse()
            .map_err(|_| bad("criterion", "not a number"))?,
        max_deviation: float(o, "max_deviation")?,
        slope: float(o, "slope")?,
        bw_mean: mean("bw_mean")?,
        iops_mean: mean("iops_mean")?,
        bw: list("bw")?,
        iops: list("iops")?,
        ss,
    })
}

fn dir(d: &Obj) -> Result<DirReport, ReportError> {
    let l = |k: &str| -> Result<LatReport, ReportError> {
        object(d, k)?
            .map(lat)
            .transpose()
            .map(Option::unwrap_or_default)
    };
    Ok(DirReport {
        io_bytes: uint(d, "io_bytes")?,
        io_kbytes: uint(d, "io_kbytes")?,
        bw_bytes: uint(d, "bw_bytes")?,
        bw: uint(d, "bw")?,
        iops: float(d, "iops")?,
        runtime: uint(d, "runtime")?,
        total_ios: uint(d, "total_ios")?,
        short_ios: uint(d, "short_ios")?,
        drop_ios: uint(d, "drop_ios")?,
        prios: prios(d)?,
        slat_ns: l("slat_ns")?,
        clat_ns: l("clat_ns")?,
        lat_ns: l("lat_ns")?,
        bw_min: uint(d, "bw_min")?,
        bw_max: uint(d, "bw_max")?,
        bw_agg: float(d, "bw_agg")?,
        bw_mean: float(d, "bw_mean")?,
        bw_dev: float(d, "bw_dev")?,
        bw_samples: uint(d, "bw_samples")?,
        iops_min: uint(d, "iops_min")?,
        iops_max: uint(d, "iops_max")?,
        iops_mean: float(d, "iops_mean")?,
        iops_stddev: float(d, "iops_stddev")?,
        iops_samples: uint(d, "iops_samples")?,
        cachehit: d
            .get("cachehit")
            .map(|_| float(d, "cachehit"))
            .transpose()?,
        lat_due_ns: object(d, "lat_due_ns")?.map(lat).transpose()?,
    })
}

/// fio's `"prios"` (cmdprio): each priority with its `clat_ns`, or `lat_ns` where fio's
/// lat_percentiles made the latency total.
fn prios(d: &Obj) -> Result<Vec<PrioReport>, ReportError> {
    array(d, "prios")?
        .iter()
        .map(|e| {
            let e = e.as_object().ok_or_else(|| bad("prios", "not an object"))?;
            let total = e.contains_key("lat_ns");
            let key = if total { "lat_ns" } else { "clat_ns" };
            Ok(PrioReport {
                prioclass: u32::try_from(uint(e, "prioclass")?)
                    .map_err(|_| bad("prioclass", "out of range"))?,
                prio: u32::try_from(uint(e, "prio")?).map_err(|_| bad("prio", "out of range"))?,
                total,
                lat: object(e, key)?.map(lat).transpose()?.unwrap_or_default(),
            })
        })
        .collect()
}

fn lat(o: &Obj) -> Result<LatReport, ReportError> {
    let percentiles = match object(o, "percentile")? {
        None => None,
        Some(m) => Some(
            m.iter()
                .map(|(k, _)| {
                    let p: f64 = k
                        .parse()
                        .map_err(|_| bad(k, "percentile key not a number"))?;
                    Ok((p, uint(m, k)?))
                })
                .collect::<Result<Vec<_>, ReportError>>()?,
        ),
    };
    let bins = match object(o, "bins")? {
        None => None,
        Some(m) => Some(
            m.iter()
                .map(|(k, _)| {
                    let v: u64 = k.parse().map_err(|_| bad(k, "bin key not an integer"))?;
                    Ok((v, uint(m, k)?))
                })
                .collect::<Result<Vec<_>, ReportError>>()?,
        ),
    };
    Ok(LatReport {
        min: uint(o, "min")?,
        max: uint(o, "max")?,
        mean: float(o, "mean")?,
        stddev: float(o, "stddev")?,
        n: uint(o, "N")?,
        percentiles,
        bins,
    })
}

fn disk(d: &Obj) -> Result<DiskUtil, ReportError> {
    let aggr = if d.contains_key("aggr_read_ios") {
        Some(DiskAggr {
            read_ios: uint(d, "aggr_read_ios")?,
            write_ios: uint(d, "aggr_write_ios")?,
            read_merges: uint(d, "aggr_read_merges")?,
            write_merges: uint(d, "aggr_write_merge")?,
            read_ticks: uint(d, "aggr_read_ticks")?,
            write_ticks: uint(d, "aggr_write_ticks")?,
            in_queue: uint(d, "aggr_in_queue")?,
            util: float(d, "aggr_util")?,
        })
    } else {
        None
    };
    Ok(DiskUtil {
        name: string(d, "name")?,
        read_ios: uint(d, "read_ios")?,
        write_ios: uint(d, "write_ios")?,
        read_merges: uint(d, "read_merges")?,
        write_merges: uint(d, "write_merges")?,
        read_ticks: uint(d, "read_ticks")?,
        write_ticks: uint(d, "write_ticks")?,
        in_queue: uint(d, "in_queue")?,
        util: float(d, "util")?,
        aggr,
    })
}

/// Fills the text-only fields from the job and global options, with fio's defaults for what
/// neither names: `rw=read`, `bs=4k`, `ioengine=psync`, `iodepth=1`, `kb_base=1024`.
fn infer_text_fields(r: &mut JobReport, globals: &[(String, String)]) {
    let opt = |names: &[&str]| -> Option<String> {
        for list in [&r.job_options[..], globals] {
            if let Some((_, v)) = list.iter().rev().find(|(k, _)| names.contains(&k.as_str())) {
                return Some(v.clone());
            }
        }
        None
    };
    let kb_base = opt(&["kb_base"])
        .and_then(|v| v.parse().ok())
        .unwrap_or(1024);
    // fio applies kb_base to the options parsed after it: `--bs=1m --kb_base=1000` is 1 MiB.
    let pos = |name: &str| r.job_options.iter().position(|(k, _)| k == name);
    let size_base = match (pos("kb_base"), pos("bs").or(pos("bsrange"))) {
        (Some(k), Some(b)) if k > b => 1024,
        (None, Some(_)) if globals.iter().all(|(k, _)| k != "kb_base") => 1024,
        _ => kb_base,
    };
    let bits = opt(&["unit_base"]).is_some_and(|v| v.trim() == "1");
    r.units = Units {
        kb_base,
        bits,
        ..Units::default()
    };
    let numjobs: u32 = opt(&["numjobs"])
        .and_then(|v| v.parse().ok())
        .unwrap_or(1)
        .max(1);
    r.members = numjobs;
    // What a terse line lists for a job without samples: the job's percentile_list, or fio's
    // default one (fio's JSON has no percentiles without samples).
    r.percentile_list = match opt(&["percentile_list"]) {
        Some(v) => (v.split(':'))
            .filter_map(|x| x.trim().trim_end_matches('%').parse().ok())
            .collect(),
        None => iolab_stats::hist::DEFAULT_PERCENTILES.to_vec(),
    };
    if let Some(p) = r.clat_ns_any_percentiles() {
        r.percentile_precision = crate::fmt::percentile_precision(&p);
    }
    let bs_str = opt(&["bs", "blocksize"]);
    let range_str = opt(&["bsrange", "blocksize_range"]);
    let mut bs = [(4096, 4096); 3];
    if let Some(v) = &bs_str {
        for (i, part) in per_dir(v).into_iter().enumerate() {
            if let Some(n) = part.and_then(|p| parse_size(p, size_base)) {
                bs[i] = (n, n);
            }
        }
    }
    if let Some(v) = &range_str {
        for (i, part) in per_dir(v).into_iter().enumerate() {
            let Some(part) = part else { continue };
            let mut ends = part.splitn(2, ['-', ':']).map(|s| parse_size(s, size_base));
            if let (Some(Some(lo)), Some(Some(hi))) = (ends.next(), ends.next()) {
                bs[i] = (lo, hi);
            }
        }
    }
    let ioengine = opt(&["ioengine"]).unwrap_or_else(|| "psync".to_string());
    r.header = Some(JobHeader {
        rw: opt(&["rw", "readwrite"]).unwrap_or_else(|| "read".to_string()),
        bs,
        no_io: iolab_engine::EngineKind::from_name(&ioengine).is_some_and(|k| !k.does_io()),
        ioengine,
        iodepth: opt(&["iodepth"]).and_then(|v| v.parse().ok()).unwrap_or(1),
        clones: numjobs - 1,
    });
}

/// fio's JSON keeps six decimals of the doubles it computed, and its text prints some of them
/// again with two: where the sixth-decimal value sits on a rounding tie (63.125000 printed as
/// `63.13` because fio held 63.12500000000001), only the original double gives fio's text. Each
/// such figure is a ratio of integers fio knows; recover them from the JSON figure and redo
/// fio's division, keeping the result only when it prints as the JSON did.
fn restore_precision(j: &mut JobReport, group: Option<&[crate::model::GroupDir; 3]>) {
    let refine = |v: &mut f64, exact: f64| {
        if format!("{exact:.6}") == format!("{v:.6}") {
            *v = exact;
        }
    };
    let total: u64 = j.dirs().iter().map(|d| d.total_ios).sum();
    if total > 0 {
        let t = total as f64;
        // stat_calc_lat: count / total * 100, raised to 0.01 when tiny but non-zero. fio 3.33
        // as built (Debian) evidently multiplies by the reciprocal of the total: 202 of 320
        // prints as 63.13 in its text, which only count * (1 / total) * 100 gives
        // (63.12500000000001; count / total * 100 is exactly 63.125 and prints 63.12).
        let lat = |v: &mut f64| {
            let count = (*v * t / 100.0).round();
            if count >= 1.0 {
                refine(v, count * (1.0 / t) * 100.0);
            }
        };
        j.latency_ns.iter_mut().for_each(lat);
        j.latency_us.iter_mut().for_each(lat);
        j.latency_ms.iter_mut().for_each(lat);
        j.iodepth_level.iter_mut().for_each(lat);
    }
    if j.job_runtime > 0 {
        let runt = j.job_runtime as f64;
        for cpu in [&mut j.usr_cpu, &mut j.sys_cpu] {
            let ms = (*cpu * runt / 100.0).round();
            refine(cpu, ms * 100.0 / runt);
        }
    }
    let Some(group) = group else { return };
    for (d, g) in [&mut j.read, &mut j.write, &mut j.trim]
        .into_iter()
        .zip(group)
    {
        // convert_agg_kbytes_percent: (int) mean * 100 / (agg / 1024.0), capped at 100.
        if d.bw_samples > 0 && g.agg_bw > 1024 {
            let p = (d.bw_mean as i32) as f64 * 100.0 / (g.agg_bw as f64 / 1024.0);
            refine(&mut d.bw_agg, p.min(100.0));
        }
    }
}

/// fio's per-direction lists: `8k,32k` sets read and write (trim follows write), `8k` all three,
/// `,32k` only write.
fn per_dir(v: &str) -> [Option<&str>; 3] {
    let parts: Vec<&str> = v.split(',').collect();
    let get = |i: usize| parts.get(i).copied().filter(|s| !s.is_empty());
    match parts.len() {
        1 => [get(0), get(0), get(0)],
        2 => [get(0), get(1), get(1)],
        _ => [get(0), get(1), get(2)],
    }
}

/// A block size as fio reads it (the common forms only; `iolab-job` owns the full grammar):
/// `4k` is 4096 with the default kb_base=1024, and `4KiB` is 4000 there (fio's inversion).
fn parse_size(s: &str, kb_base: u32) -> Option<u64> {
    let s = s.trim();
    let split = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
    let (num, suffix) = s.split_at(split);
    let n: u64 = num.parse().ok()?;
    let lower = suffix.to_ascii_lowercase();
    let (pow, rest) = match lower.chars().next() {
        None => return Some(n),
        Some('k') => (1, &lower[1..]),
        Some('m') => (2, &lower[1..]),
        Some('g') => (3, &lower[1..]),
        Some('t') => (4, &lower[1..]),
        Some('b') if lower == "b" => return Some(n),
        _ => return None,
    };
    let base: u64 = match (rest, kb_base) {
        ("" | "b", 1000) => 1000,
        ("" | "b", _) => 1024,
        ("ib", 1000) => 1024,
        ("ib", _) => 1000,
        _ => return None,
    };
    Some(n * base.pow(pow))
}

impl JobReport {
    fn clat_ns_any_percentiles(&self) -> Option<Vec<(f64, u64)>> {
        let d = self.dirs();
        d.iter()
            .flat_map(|d| [&d.clat_ns, &d.lat_ns, &d.slat_ns])
            .chain([&self.sync.lat_ns])
            .find_map(|l| l.percentiles.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_with_kb_base_inversion() {
        assert_eq!(parse_size("4k", 1024), Some(4096));
        assert_eq!(parse_size("4KiB", 1024), Some(4000));
        assert_eq!(parse_size("1m", 1000), Some(1_000_000));
        assert_eq!(parse_size("512", 1024), Some(512));
        assert_eq!(parse_size("x", 1024), None);
    }

    #[test]
    fn per_direction_lists() {
        assert_eq!(per_dir("8k"), [Some("8k"); 3]);
        assert_eq!(per_dir("8k,32k"), [Some("8k"), Some("32k"), Some("32k")]);
        assert_eq!(per_dir(",32k"), [None, Some("32k"), Some("32k")]);
    }

    #[test]
    fn wrong_type_is_a_shape_error() {
        let e = read_fio_json(r#"{"fio version": 3, "jobs": []}"#);
        assert!(matches!(e, Err(ReportError::Shape { .. })));
        assert!(matches!(read_fio_json("{"), Err(ReportError::Json(_))));
    }
}
