//! fio 3.33's steady-state detection (`steadystate`/`ss`, `ss_dur`, `ss_ramp`) seen from the
//! command line, as fio's own t/steadystate_tests.py looks at it: the `--debug=parse` line of
//! a criterion under `--parse-only` with no job, the job ended once steady (or not), its JSON
//! object with the criterion recomputable from the window's data, refusals, and the text line.
#![allow(clippy::unwrap_used)]

use serde_json::Value;

use crate::fidelity::fio;
use crate::run::{u64_at, Out, TestDir};

/// A null job at a steady 2000 IOPS (the rate holds each 1 s sample still on a loaded
/// machine), with a window of 2 samples of fio 3.33's 1 s.
const STEADY: &[&str] = &[
    "--name=ss",
    "--ioengine=null",
    "--size=1g",
    "--rw=read",
    "--bs=4k",
    "--rate_iops=2000",
    "--time_based",
    "--ss_dur=2",
];

fn args<'a>(more: &[&'a str]) -> Vec<&'a str> {
    STEADY.iter().chain(more).copied().collect()
}

fn json_run(d: &TestDir, more: &[&str]) -> Value {
    let mut a = args(more);
    a.push("--output-format=json");
    d.run(&a).ok().json()
}

/// The window's figures the criterion is judged on.
fn window(ss: &Value, key: &str) -> Vec<f64> {
    ss["data"][key]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap())
        .collect()
}

/// The criterion recomputed from the window's data as t/steadystate_tests.py does: the
/// largest deviation from the mean, or the least-squares slope's size, in percent of the mean.
fn recomputed(data: &[f64], slope: bool) -> f64 {
    let n = data.len() as f64;
    let mean = data.iter().sum::<f64>() / n;
    let value = if slope {
        let mx = (n - 1.0) / 2.0;
        let sxy: f64 = data
            .iter()
            .enumerate()
            .map(|(i, y)| (i as f64 - mx) * (y - mean))
            .sum();
        let sxx: f64 = (0..data.len()).map(|i| (i as f64 - mx).powi(2)).sum();
        (sxy / sxx).abs()
    } else {
        data.iter().map(|y| (y - mean).abs()).fold(0.0, f64::max)
    };
    100.0 * value / mean
}

fn criterion_pct(ss: &Value) -> f64 {
    let c = ss["criterion"].as_str().unwrap();
    c.strip_suffix('%').unwrap().parse().unwrap()
}

/// The keys of a JSON object, its nested objects' with a `/` path.
fn shape(v: &Value, at: &str, out: &mut Vec<String>) {
    if let Some(o) = v.as_object() {
        for (k, x) in o {
            let p = format!("{at}/{k}");
            out.push(p.clone());
            shape(x, &p, out);
        }
    }
}

#[test]
fn parse_only_with_global_options_alone_prints_the_criterion_line_and_exits_0() {
    // fio 3.33 parses a command line's options with no job under --parse-only and exits 0;
    // iolab said "no job(s) defined" and exited 1, so steadystate_tests.py failed at once.
    let d = TestDir::new("ss-parse-only");
    for (ss, line) in [
        ("iops:10", "set steady state IOPS threshold to 10.000000"),
        ("iops:10%", "set steady state threshold to 10.000000%"),
        ("bw:.1%", "set steady state threshold to 0.100000%"),
        ("bw:12", "set steady state BW threshold to 12"),
        ("bw:1k", "set steady state BW threshold to 1024"),
    ] {
        let opt = format!("--ss={ss}");
        let a = [
            "--parse-only",
            "--debug=parse",
            "--ss_dur=10s",
            &opt,
            "--ss_ramp=5",
        ];
        let out = d.run(&a).ok();
        assert!(out.stdout.contains(line), "{ss}: {}", out.stdout);
        if let Some(f) = fio("steadystate parse line", &d, &a) {
            assert_eq!(f.status.code(), Some(0));
            assert!(
                String::from_utf8_lossy(&f.stdout).contains(line),
                "fio, {ss}"
            );
        }
    }
    // Nothing at all to parse is no error either, as in fio.
    d.run(&["--parse-only"]).ok();
    // Without --parse-only there is still no job to run.
    d.run(&["--ss=iops:10%"]).fails();
}

#[test]
fn a_bad_steadystate_value_is_refused_naming_the_option() {
    let d = TestDir::new("ss-refused");
    for (bad, named) in [
        ("--ss=lat:5", "'ss'"),
        ("--steadystate=iops", "'steadystate'"),
        ("--ss=iops:abc", "'ss'"),
        ("--ss=bw_slope:x%", "'ss'"),
        ("--ss_dur=abc", "'ss_dur'"),
        ("--ss_ramp=xyz", "'ss_ramp'"),
    ] {
        let out = d.run(&args(&["--runtime=1", bad])).fails();
        assert!(out.stderr.contains(named), "{bad}: {}", out.stderr);
        // Under --parse-only with no job too, as fio refuses it there.
        let out = d.run(&["--parse-only", bad]).fails();
        assert!(out.stderr.contains(named), "{bad}: {}", out.stderr);
        if let Some(f) = fio("steadystate refusal", &d, &args(&["--runtime=1", bad])) {
            assert_ne!(f.status.code(), Some(0), "fio took {bad}");
        }
    }
}

#[test]
fn an_easily_met_criterion_ends_the_null_job_before_its_runtime_with_attained_1() {
    let d = TestDir::new("ss-met");
    let v = json_run(&d, &["--runtime=60", "--ss=iops:50%"]);
    let job = &v["jobs"][0];
    let ss = &job["steadystate"];
    assert_eq!(ss["attained"], 1, "{ss}");
    assert_eq!(ss["ss"], "iops:50.000000%");
    assert_eq!(ss["duration"], 2);
    assert!(
        u64_at(job, "/read/runtime") < 60_000,
        "ran its whole runtime"
    );
    let iops = window(ss, "iops");
    assert_eq!(iops.len(), 2);
    assert_eq!(window(ss, "bw").len(), 2);
    assert_eq!(
        u64_at(ss, "/data/iops_mean"),
        (iops.iter().sum::<f64>() / 2.0) as u64
    );
    // The criterion is the window's largest deviation, in percent of its mean, and below
    // the limit; max_deviation is the same in IOPS.
    let c = criterion_pct(ss);
    assert!(c < 50.0, "{ss}");
    assert!(
        (c - recomputed(&iops, false)).abs() <= 0.005 * c.max(1e-3),
        "{ss}"
    );
    let mean = iops.iter().sum::<f64>() / 2.0;
    let dev = ss["max_deviation"].as_f64().unwrap();
    assert!((100.0 * dev / mean - c).abs() < 1e-3, "{ss}");
}

#[test]
fn an_impossible_criterion_runs_the_job_to_its_runtime_with_attained_0() {
    // No slope's size is below 0: fio runs the whole runtime, then reports the last window.
    let d = TestDir::new("ss-unmet");
    let v = json_run(&d, &["--runtime=4", "--ss=iops_slope:0%"]);
    let job = &v["jobs"][0];
    let ss = &job["steadystate"];
    assert_eq!(ss["attained"], 0, "{ss}");
    assert!(u64_at(job, "/read/runtime") >= 3_950, "ended early: {ss}");
    // The window filled well before the end, so its criterion is the last window's slope.
    let c = criterion_pct(ss).abs();
    let want = recomputed(&window(ss, "iops"), true);
    assert!((c - want).abs() <= 0.005 * want.max(1e-3), "{ss}: {want}");
}

#[test]
fn the_steadystate_json_object_has_fios_shape() {
    let d = TestDir::new("ss-shape");
    let more = ["--runtime=30", "--ss=bw_slope:20%", "--output-format=json"];
    let ours = d.run(&args(&more)).ok().json();
    let mut mine = Vec::new();
    shape(&ours["jobs"][0]["steadystate"], "", &mut mine);
    for k in [
        "/ss",
        "/duration",
        "/attained",
        "/criterion",
        "/max_deviation",
        "/slope",
        "/data/bw_mean",
        "/data/iops_mean",
        "/data/iops",
        "/data/bw",
    ] {
        assert!(mine.iter().any(|m| m == k), "{k} missing: {mine:?}");
    }
    if let Some(f) = fio("steadystate json shape", &d, &args(&more)) {
        let theirs: Value = serde_json::from_slice(&f.stdout).unwrap();
        let mut want = Vec::new();
        shape(&theirs["jobs"][0]["steadystate"], "", &mut want);
        assert_eq!(mine, want);
    }
}

/// `bw=A (B)` of the text line: the two figures without their units.
fn text_rates(out: &Out) -> (String, String) {
    let line = out
        .stdout
        .lines()
        .find(|l| l.starts_with("  steadystate  : "))
        .unwrap_or_else(|| panic!("no steadystate line:\n{}", out.stdout));
    let bw = line.split("bw=").nth(1).unwrap();
    let (a, rest) = bw.split_once(" (").unwrap();
    let b = rest.split_once(')').unwrap().0;
    let digits = |s: &str| {
        s.chars()
            .take_while(|c| c.is_ascii_digit() || *c == '.')
            .collect()
    };
    assert!(a.ends_with("KiB/s") && b.ends_with("kB/s"), "{line}");
    (digits(a), digits(b))
}

#[test]
fn the_steadystate_text_line_prints_the_same_kib_count_in_both_families() {
    // fio divides the mean by kb_base before num2str, so at 2000 IOPS of 4 KiB both figures
    // are the KiB count (fio: "bw=7988KiB/s (7988kB/s)"); iolab printed 8000KiB/s (8192kB/s).
    let d = TestDir::new("ss-text");
    let out = d.run(&args(&["--runtime=30", "--ss=iops:50%"])).ok();
    let (a, b) = text_rates(&out);
    assert_eq!(a, b, "{}", out.stdout);
    assert!(out.stdout.contains(", iops mean dev="), "{}", out.stdout);
    if let Some(f) = fio(
        "steadystate text line",
        &d,
        &args(&["--runtime=30", "--ss=iops:50%"]),
    ) {
        let f = Out {
            code: f.status.code(),
            stdout: String::from_utf8_lossy(&f.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&f.stderr).into_owned(),
        };
        let (a, b) = text_rates(&f);
        assert_eq!(a, b, "fio: {}", f.stdout);
    }
}
