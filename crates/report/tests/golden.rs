//! Golden tests against real fio 3.33 output (see tests/data/README.md for the commands).
//! Each golden case is ONE fio run printed as terse, json+ and normal together, so the text and
//! terse lines carry exactly the numbers of the JSON.

use std::path::{Path, PathBuf};

use iolab_report::{read_fio_json, write_json, write_normal, write_terse, Report};
use serde_json::Value;

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name)
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn golden_cases() -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(data("golden"))
        .expect("golden dir")
        .filter_map(|e| {
            let n = e.ok()?.file_name().into_string().ok()?;
            n.strip_suffix(".jsonplus").map(str::to_string)
        })
        .collect();
    names.sort();
    assert!(names.len() >= 10, "golden cases missing: {names:?}");
    names
}

/// Every path in the tree with its JSON type (int and float told apart, as fio does).
fn key_tree(v: &Value, path: &str, out: &mut Vec<String>) {
    let ty = match v {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(n) if n.is_f64() => "float",
        Value::Number(_) => "int",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    };
    out.push(format!("{path}: {ty}"));
    match v {
        Value::Object(m) => m
            .iter()
            .for_each(|(k, v)| key_tree(v, &format!("{path}/{k}"), out)),
        Value::Array(a) => a
            .iter()
            .enumerate()
            .for_each(|(i, v)| key_tree(v, &format!("{path}[{i}]"), out)),
        _ => {}
    }
}

fn tree_of(text: &str) -> Vec<String> {
    let v: Value = serde_json::from_str(text).expect("valid JSON");
    let mut out = Vec::new();
    key_tree(&v, "", &mut out);
    out
}

fn json_out(r: &Report, plus: bool) -> String {
    let mut buf = Vec::new();
    write_json(r, plus, &mut buf).expect("write");
    String::from_utf8(buf).expect("utf8")
}

fn assert_lines_eq(case: &str, got: &str, want: &str) {
    let (g, w): (Vec<&str>, Vec<&str>) = (got.lines().collect(), want.lines().collect());
    for (i, (a, b)) in g.iter().zip(&w).enumerate() {
        assert_eq!(a, b, "{case}: line {} differs\n got: {a}\nwant: {b}", i + 1);
    }
    assert_eq!(
        g.len(),
        w.len(),
        "{case}: line count differs\n--- got\n{got}\n--- want\n{want}"
    );
}

#[test]
fn json_key_tree_matches_fio_psync() {
    let fio = read(&data("fio-3.33-psync-randrw.json"));
    let r = read_fio_json(&fio).expect("read");
    let ours = json_out(&r, false);
    assert_eq!(tree_of(&ours), tree_of(&fio));
    // Beyond the tree: fio's layout and %f floats, byte for byte.
    assert_eq!(ours, fio);
}

#[test]
fn jsonplus_key_tree_matches_fio_libaio_with_bins() {
    let fio = read(&data("fio-3.33-libaio-randread.jsonplus"));
    let r = read_fio_json(&fio).expect("read");
    assert!(r.jobs[0]
        .read
        .clat_ns
        .bins
        .as_ref()
        .is_some_and(|b| !b.is_empty()));
    let ours = json_out(&r, true);
    assert_eq!(tree_of(&ours), tree_of(&fio));
    assert_eq!(ours, fio);
    // Plain JSON from the same model: the same tree without any "bins".
    let plain: Vec<String> = tree_of(&fio)
        .into_iter()
        .filter(|p| !p.contains("/bins"))
        .collect();
    assert_eq!(tree_of(&json_out(&r, false)), plain);
}

#[test]
fn jsonplus_round_trips_byte_for_byte_on_every_golden_case() {
    for case in golden_cases() {
        let fio = read(&data(&format!("golden/{case}.jsonplus")));
        let r = read_fio_json(&fio).expect("read");
        assert_lines_eq(&case, &json_out(&r, true), &fio);
    }
}

/// The job line's pid and date are not in fio's JSON: take them from fio's text. Nor is the
/// `thread` flag (fio leaves bare flags out of "job options"), so "Starting 1 thread" too.
fn inject_pid_and_date(r: &mut Report, txt: &str) {
    if let Some(line) = txt.lines().find(|l| l.starts_with("Starting ")) {
        let count = |what: &str| -> u32 {
            let words: Vec<&str> = line.split(' ').collect();
            words
                .windows(2)
                .find(|w| w[1].starts_with(what))
                .map_or(0, |w| w[0].parse().expect("count"))
        };
        r.nr_threads = count("thread");
        r.nr_processes = count("process");
    }
    let lines = txt
        .lines()
        .filter(|l| l.contains(": (groupid=") && l.contains(": pid="));
    for (job, line) in r.jobs.iter_mut().zip(lines) {
        let rest = &line[line.find(": pid=").expect("pid") + 6..];
        let (pid, date) = rest.split_once(": ").expect("date");
        job.pid = pid.parse().expect("pid number");
        job.date = Some(date.to_string());
    }
}

/// fio's text minus what the run prints beside the report ("Laying out IO file").
fn fio_text(case: &str) -> String {
    let txt = read(&data(&format!("golden/{case}.txt")));
    txt.lines()
        .filter(|l| !l.contains(": Laying out IO file"))
        .map(|l| format!("{l}\n"))
        .collect()
}

#[test]
fn normal_text_matches_fio_line_by_line() {
    for case in golden_cases() {
        let mut r = read_fio_json(&read(&data(&format!("golden/{case}.jsonplus")))).expect("read");
        let want = fio_text(&case);
        inject_pid_and_date(&mut r, &want);
        let mut buf = Vec::new();
        write_normal(&r, &mut buf).expect("write");
        assert_lines_eq(&case, &String::from_utf8(buf).expect("utf8"), &want);
    }
}

/// Terse v3's first us bucket (field 100 of a v3 line) includes the share of I/Os under 1 us
/// computed from exact counts. JSON's `latency_ns` gives the counts back except where fio raised
/// a share under 0.01% to 0.01%: such a bucket may hold 1 to total/10000 I/Os, and the writer
/// counts 1. Only then may this one field differ.
const LAT_U0_FIELD: usize = 100;

fn ns_bucket_clamped(r: &Report) -> bool {
    r.jobs.iter().any(|j| {
        let total: u64 = j.dirs().iter().map(|d| d.total_ios).sum();
        total >= 20_000 && j.latency_ns.contains(&0.01)
    })
}

#[test]
fn terse_matches_fio_field_by_field() {
    for case in golden_cases() {
        let r = read_fio_json(&read(&data(&format!("golden/{case}.jsonplus")))).expect("read");
        let want = read(&data(&format!("golden/{case}.terse")));
        let mut buf = Vec::new();
        write_terse(&r, &mut buf).expect("write");
        let got = String::from_utf8(buf).expect("utf8");
        for (g, w) in got.lines().zip(want.lines()) {
            let (gf, wf): (Vec<&str>, Vec<&str>) = (g.split(';').collect(), w.split(';').collect());
            for (i, (a, b)) in gf.iter().zip(&wf).enumerate() {
                if i + 1 == LAT_U0_FIELD && a != b && ns_bucket_clamped(&r) {
                    continue;
                }
                assert_eq!(a, b, "{case}: terse field {} differs", i + 1);
            }
            assert_eq!(gf.len(), wf.len(), "{case}: terse field count");
        }
        assert_eq!(
            got.lines().count(),
            want.lines().count(),
            "{case}: terse line count"
        );
    }
}
