//! fio's JSON and json+ output, byte for byte.
//!
//! Written by hand rather than through serde_json: fio prints every float with C's `%f` (six
//! decimals, `20201.899050`, `0.000000`), which serde_json cannot be told to do, and its layout
//! (`"key" : value`, two-space indents) is its own. The tree is built as [`J`] values in fio's
//! key order and printed by the same rules as fio's `json.c`.

use std::io::{self, Write};

use crate::model::{DirReport, DiskUtil, JobReport, LatReport, Report, SyncReport};

/// A JSON value in fio's terms: integers and floats are distinct types.
enum J {
    Int(i128),
    Float(f64),
    Str(String),
    Obj(Vec<(String, J)>),
    Arr(Vec<J>),
}

struct Obj(Vec<(String, J)>);

impl Obj {
    fn new() -> Self {
        Obj(Vec::new())
    }
    fn int(&mut self, k: &str, v: impl Into<i128>) {
        self.0.push((k.to_string(), J::Int(v.into())));
    }
    fn float(&mut self, k: &str, v: f64) {
        self.0.push((k.to_string(), J::Float(v)));
    }
    fn str(&mut self, k: &str, v: &str) {
        self.0.push((k.to_string(), J::Str(v.to_string())));
    }
    fn obj(&mut self, k: &str, v: Obj) {
        self.0.push((k.to_string(), J::Obj(v.0)));
    }
    fn arr(&mut self, k: &str, v: Vec<J>) {
        self.0.push((k.to_string(), J::Arr(v)));
    }
}

/// Writes `report` as fio's JSON (`plus`: json+, with the latency histogram bins).
pub fn write_json(report: &Report, plus: bool, out: &mut impl Write) -> io::Result<()> {
    let root = J::Obj(report_obj(report, plus).0);
    let mut s = String::new();
    print_value(&root, 0, &mut s);
    s.push('\n');
    out.write_all(s.as_bytes())
}

/// [`write_json`] on one line: a complete object a monitoring system can read line by line
/// (iolab's `--status-interval` reports; fio prints them indented over many lines).
pub fn write_json_line(report: &Report, plus: bool, out: &mut impl Write) -> io::Result<()> {
    let root = J::Obj(report_obj(report, plus).0);
    let mut s = String::new();
    print_compact(&root, &mut s);
    s.push('\n');
    out.write_all(s.as_bytes())
}

/// fio's client JSON: `report`'s head with `client_stats` in place of `jobs`: `entries` are
/// the clients' jobs, each with its host and rank, and the "All clients" ones (`None`), whose
/// `hostname` is `all_hosts`.
pub(crate) fn write_client_json(
    report: &Report,
    entries: &[(&JobReport, Option<&crate::clients::Client>)],
    all_hosts: &str,
    plus: bool,
    out: &mut impl Write,
) -> io::Result<()> {
    let mut o = report_obj(report, plus);
    let stats = entries
        .iter()
        .map(|(j, client)| {
            let mut e = job_obj(j, plus);
            match client {
                Some(c) => {
                    e.int("job_start", c.job_start_ms);
                    e.str("hostname", &c.hostname);
                    e.int("rank", c.rank);
                }
                None => e.str("hostname", all_hosts),
            }
            J::Obj(e.0)
        })
        .collect();
    for (k, v) in &mut o.0 {
        if k == "jobs" {
            *k = "client_stats".to_string();
            *v = J::Arr(stats);
            break;
        }
    }
    let mut s = String::new();
    print_value(&J::Obj(o.0), 0, &mut s);
    s.push('\n');
    out.write_all(s.as_bytes())
}

fn report_obj(r: &Report, plus: bool) -> Obj {
    let mut o = Obj::new();
    o.str("fio version", &r.fio_version);
    o.int("timestamp", r.timestamp);
    o.int("timestamp_ms", r.timestamp_ms);
    o.str("time", &r.time);
    if !r.global_options.is_empty() {
        o.obj("global options", options_obj(&r.global_options));
    }
    o.arr(
        "jobs",
        r.jobs.iter().map(|j| J::Obj(job_obj(j, plus).0)).collect(),
    );
    if !r.disk_util.is_empty() {
        o.arr(
            "disk_util",
            r.disk_util.iter().map(|d| J::Obj(disk_obj(d).0)).collect(),
        );
    }
    if let Some(c) = &r.cpu_idleness {
        let mut i = Obj::new();
        i.float("system", c.system);
        for (n, v) in c.percpu.iter().enumerate().filter(|_| c.show_percpu) {
            i.float(&format!("cpu-{n}"), *v);
        }
        i.float("unit_mean", c.unit_mean);
        i.float("unit_stddev", c.unit_stddev);
        o.obj("cpu_idleness", i);
    }
    o
}

fn options_obj(opts: &[(String, String)]) -> Obj {
    let mut o = Obj::new();
    for (k, v) in opts {
        o.str(k, v);
    }
    o
}

fn job_obj(j: &JobReport, plus: bool) -> Obj {
    let mut o = Obj::new();
    o.str("jobname", &j.jobname);
    o.int("groupid", j.groupid);
    o.int("error", j.error);
    o.int("eta", j.eta);
    o.int("elapsed", j.elapsed);
    if !j.job_options.is_empty() {
        o.obj("job options", options_obj(&j.job_options));
    }
    if j.unified == crate::model::Unified::Mixed {
        // fio 3.33: "mixed" replaces the three directions, and "sync" goes too.
        o.obj("mixed", dir_obj(&j.read, plus));
    } else {
        o.obj("read", dir_obj(&j.read, plus));
        o.obj("write", dir_obj(&j.write, plus));
        o.obj("trim", dir_obj(&j.trim, plus));
        o.obj("sync", sync_obj(&j.sync, plus));
        if let Some(m) = &j.mixed {
            o.obj("mixed", dir_obj(m, plus));
        }
    }
    o.int("job_runtime", j.job_runtime);
    o.float("usr_cpu", j.usr_cpu);
    o.float("sys_cpu", j.sys_cpu);
    o.int("ctx", j.ctx);
    o.int("majf", j.majf);
    o.int("minf", j.minf);
    o.obj("iodepth_level", pct_obj(&DEPTH_KEYS, &j.iodepth_level));
    o.obj("iodepth_submit", pct_obj(&SUBMIT_KEYS, &j.iodepth_submit));
    o.obj(
        "iodepth_complete",
        pct_obj(&SUBMIT_KEYS, &j.iodepth_complete),
    );
    o.obj("latency_ns", pct_obj(&LAT_KEYS[..10], &j.latency_ns));
    o.obj("latency_us", pct_obj(&LAT_KEYS[..10], &j.latency_us));
    o.obj("latency_ms", pct_obj(&LAT_KEYS, &j.latency_ms));
    if let Some((total, first)) = j.errors {
        o.int("total_err", total);
        o.int("first_error", first);
    }
    if j.latency_depth != 0 {
        o.int("latency_depth", j.latency_depth);
        o.int("latency_target", j.latency_target);
        o.float("latency_percentile", j.latency_percentile);
        o.int("latency_window", j.latency_window);
    }
    if let Some(ss) = &j.steadystate {
        o.obj("steadystate", steady_obj(ss));
    }
    if let Some(desc) = &j.desc {
        o.str("desc", desc);
    }
    o
}

/// fio's `"steadystate"` object (fio-plot reads it).
fn steady_obj(ss: &crate::model::SteadyReport) -> Obj {
    let mut o = Obj::new();
    o.str("ss", &ss.ss);
    o.int("duration", ss.duration);
    o.int("attained", u8::from(ss.attained));
    // fio prints the criterion from a float with %f.
    let pct = if ss.pct { "%" } else { "" };
    o.str("criterion", &format!("{:.6}{pct}", ss.criterion as f32));
    o.float("max_deviation", ss.max_deviation);
    o.float("slope", ss.slope);
    let mut data = Obj::new();
    data.int("bw_mean", ss.bw_mean);
    data.int("iops_mean", ss.iops_mean);
    data.arr("iops", ss.iops.iter().map(|&v| J::Int(v.into())).collect());
    data.arr("bw", ss.bw.iter().map(|&v| J::Int(v.into())).collect());
    o.obj("data", data);
    o
}

/// Keys of `iodepth_level`.
pub(crate) const DEPTH_KEYS: [&str; 7] = ["1", "2", "4", "8", "16", "32", ">=64"];
/// Keys of `iodepth_submit` and `iodepth_complete`.
pub(crate) const SUBMIT_KEYS: [&str; 7] = ["0", "4", "8", "16", "32", "64", ">=64"];
/// Keys of `latency_ns`/`latency_us` (first ten) and `latency_ms` (all twelve).
pub(crate) const LAT_KEYS: [&str; 12] = [
    "2", "4", "10", "20", "50", "100", "250", "500", "750", "1000", "2000", ">=2000",
];

fn pct_obj(keys: &[&str], vals: &[f64]) -> Obj {
    let mut o = Obj::new();
    for (k, v) in keys.iter().zip(vals) {
        o.float(k, *v);
    }
    o
}

fn dir_obj(d: &DirReport, plus: bool) -> Obj {
    let mut o = Obj::new();
    o.int("io_bytes", d.io_bytes);
    o.int("io_kbytes", d.io_kbytes);
    o.int("bw_bytes", d.bw_bytes);
    o.int("bw", d.bw);
    o.float("iops", d.iops);
    o.int("runtime", d.runtime);
    o.int("total_ios", d.total_ios);
    o.int("short_ios", d.short_ios);
    o.int("drop_ios", d.drop_ios);
    o.obj("slat_ns", lat_obj(&d.slat_ns, plus));
    o.obj("clat_ns", lat_obj(&d.clat_ns, plus));
    o.obj("lat_ns", lat_obj(&d.lat_ns, plus));
    if !d.prios.is_empty() {
        let list = d.prios.iter().map(|p| {
            let mut e = Obj::new();
            e.int("prioclass", p.prioclass);
            e.int("prio", p.prio);
            let key = if p.total { "lat_ns" } else { "clat_ns" };
            e.obj(key, lat_obj(&p.lat, plus));
            J::Obj(e.0)
        });
        o.arr("prios", list.collect());
    }
    if let Some(due) = &d.lat_due_ns {
        o.obj("lat_due_ns", lat_obj(due, plus));
    }
    o.int("bw_min", d.bw_min);
    o.int("bw_max", d.bw_max);
    o.float("bw_agg", d.bw_agg);
    o.float("bw_mean", d.bw_mean);
    o.float("bw_dev", d.bw_dev);
    o.int("bw_samples", d.bw_samples);
    o.int("iops_min", d.iops_min);
    o.int("iops_max", d.iops_max);
    o.float("iops_mean", d.iops_mean);
    o.float("iops_stddev", d.iops_stddev);
    o.int("iops_samples", d.iops_samples);
    if let Some(hit) = d.cachehit {
        o.float("cachehit", hit);
    }
    o
}

fn sync_obj(s: &SyncReport, plus: bool) -> Obj {
    let mut o = Obj::new();
    o.int("total_ios", s.total_ios);
    o.obj("lat_ns", lat_obj(&s.lat_ns, plus));
    o
}

fn lat_obj(l: &LatReport, plus: bool) -> Obj {
    let mut o = Obj::new();
    o.int("min", l.min);
    o.int("max", l.max);
    o.float("mean", l.mean);
    o.float("stddev", l.stddev);
    o.int("N", l.n);
    // fio prints percentiles only for a stat that has samples, and bins only with them.
    if let (Some(pcts), true) = (&l.percentiles, l.n > 0) {
        let mut p = Obj::new();
        for (pct, v) in pcts {
            p.int(&format!("{pct:.6}"), *v);
        }
        o.obj("percentile", p);
        if plus {
            let mut b = Obj::new();
            for (v, count) in l.bins.iter().flatten() {
                b.int(&v.to_string(), *count);
            }
            o.obj("bins", b);
        }
    }
    o
}

fn disk_obj(d: &DiskUtil) -> Obj {
    let mut o = Obj::new();
    o.str("name", &d.name);
    o.int("read_ios", d.read_ios);
    o.int("write_ios", d.write_ios);
    o.int("read_merges", d.read_merges);
    o.int("write_merges", d.write_merges);
    o.int("read_ticks", d.read_ticks);
    o.int("write_ticks", d.write_ticks);
    o.int("in_queue", d.in_queue);
    o.float("util", d.util);
    if let Some(a) = &d.aggr {
        o.int("aggr_read_ios", a.read_ios);
        o.int("aggr_write_ios", a.write_ios);
        o.int("aggr_read_merges", a.read_merges);
        // sic: fio spells this one without the s.
        o.int("aggr_write_merge", a.write_merges);
        o.int("aggr_read_ticks", a.read_ticks);
        o.int("aggr_write_ticks", a.write_ticks);
        o.int("aggr_in_queue", a.in_queue);
        o.float("aggr_util", a.util);
    }
    o
}

fn indent(level: usize, s: &mut String) {
    for _ in 0..level {
        s.push_str("  ");
    }
}

/// fio's `json_print_value`: a value that starts on a line indented `level` times puts its
/// members at `level + 1` and its closing bracket at `level`.
fn print_value(v: &J, level: usize, s: &mut String) {
    match v {
        J::Int(i) => s.push_str(&i.to_string()),
        J::Float(f) => s.push_str(&format!("{f:.6}")),
        J::Str(t) => push_str_escaped(t, s),
        J::Obj(pairs) => {
            s.push_str("{\n");
            for (i, (k, v)) in pairs.iter().enumerate() {
                if i > 0 {
                    s.push_str(",\n");
                }
                indent(level + 1, s);
                push_str_escaped(k, s);
                s.push_str(" : ");
                print_value(v, level + 1, s);
            }
            s.push('\n');
            indent(level, s);
            s.push('}');
        }
        J::Arr(items) => {
            s.push_str("[\n");
            for (i, v) in items.iter().enumerate() {
                if i > 0 {
                    s.push_str(",\n");
                }
                indent(level + 1, s);
                print_value(v, level + 1, s);
            }
            s.push('\n');
            indent(level, s);
            s.push(']');
        }
    }
}

/// [`print_value`] without newlines or indentation.
fn print_compact(v: &J, s: &mut String) {
    match v {
        J::Obj(pairs) => {
            s.push('{');
            for (i, (k, v)) in pairs.iter().enumerate() {
                if i > 0 {
                    s.push(',');
                }
                push_str_escaped(k, s);
                s.push(':');
                print_compact(v, s);
            }
            s.push('}');
        }
        J::Arr(items) => {
            s.push('[');
            for (i, v) in items.iter().enumerate() {
                if i > 0 {
                    s.push(',');
                }
                print_compact(v, s);
            }
            s.push(']');
        }
        scalar => print_value(scalar, 0, s),
    }
}

/// fio escapes only `"` and `\`; control characters are escaped too here so that the output
/// stays valid JSON whatever a job name holds.
fn push_str_escaped(t: &str, s: &mut String) {
    s.push('"');
    for c in t.chars() {
        match c {
            '"' => s.push_str("\\\""),
            '\\' => s.push_str("\\\\"),
            c if (c as u32) < 0x20 => s.push_str(&format!("\\u{:04x}", c as u32)),
            c => s.push(c),
        }
    }
    s.push('"');
}
