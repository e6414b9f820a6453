//! `iolab compare --qos` (issue 31): latency against offered load, open-loop with Poisson
//! arrivals, latency from each I/O's due time, the knee in words and drawn. The engine is the
//! null engine slowed by the test hook `IOLAB_TEST_NULL_DELAY_US`: at depth 1 each I/O takes
//! that long, so the engine cannot do more than 1e6 / delay IOPS whatever the machine.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// Each I/O of the null engine takes this long (µs): at most 200 IOPS.
const DELAY_US: u64 = 5000;

fn dir(name: &str) -> PathBuf {
    iolab_testkit::scratch_dir!(&format!("compare_qos/{name}"))
}

fn compare(cwd: &Path, args: &[&str]) -> Output {
    let out = Command::new(env!("CARGO_BIN_EXE_iolab"))
        .arg("compare")
        .args(args)
        .current_dir(cwd)
        .env("IOLAB_TEST_NULL_DELAY_US", DELAY_US.to_string())
        .output()
        .expect("run iolab compare");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("panicked"), "{err}");
    out
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// The sweep of the delayed null engine at depth 1, steps of 0.4 s.
const SWEEP: [&str; 5] = [
    "--engines=null",
    "--iodepth=1",
    "--size=1m",
    "--qos",
    "--qos-step-time=400ms",
];

/// The knee lies between the lightest load and the engine's ceiling, every offered load past
/// the ceiling is achieved short, and the JSON and the HTML both carry the curve.
#[test]
fn the_qos_sweep_finds_the_knee_below_the_engines_capacity() {
    let d = dir("knee");
    let out = compare(
        &d,
        &[&SWEEP[..], &["--output-format=json", "--report=q.html"]].concat(),
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("stdout is JSON");
    let q = &v["iolab compare"]["qos"];
    let ceiling = 1e6 / DELAY_US as f64;
    let curve = &q["curves"][0];
    assert_eq!(curve["label"], "null", "{q}");
    let capacity = curve["capacity_iops"].as_f64().expect("capacity");
    assert!(capacity > 0.0 && capacity <= ceiling * 1.05, "{capacity}");
    let steps = curve["steps"].as_array().expect("steps");
    assert_eq!(steps.len(), 9, "10% to 125% of the capacity: {q}");
    for s in steps {
        let (offered, achieved) = (s["offered_iops"].as_f64(), s["achieved_iops"].as_f64());
        let (offered, achieved) = (offered.expect("offered"), achieved.expect("achieved"));
        assert!(achieved <= ceiling * 1.05, "{s}");
        // Latency from the due time includes the wait before issue, so it is never below
        // the I/O's own time.
        let p50 = s["lat_due_percentile_ns"]["50.000000"]
            .as_f64()
            .expect("p50");
        assert!(p50 >= (DELAY_US * 1000) as f64 * 0.9, "{s}");
        assert!(s["service_p99_ns"].as_u64().is_some(), "{s}");
        if offered > ceiling * 1.05 {
            assert!(achieved < offered, "past the ceiling yet achieved: {s}");
        }
    }
    // 125% of what the closed loop did is more than the engine does open-loop: reaching it
    // would take each I/O a quarter of the 5 ms delay less than in the closed-loop run.
    let last = steps.last().expect("a step");
    assert_eq!(last["share"].as_f64(), Some(1.25), "{last}");
    let (offered, achieved) = (
        last["offered_iops"].as_f64(),
        last["achieved_iops"].as_f64(),
    );
    assert!(
        achieved < offered,
        "the load past capacity was achieved: {last}"
    );
    let knee = curve["knee_iops"].as_f64().expect("a knee");
    let first = steps[0]["achieved_iops"].as_f64().unwrap_or(0.0);
    assert!(
        knee >= first && knee > 0.0,
        "knee {knee} below the lightest load {first}"
    );
    assert!(
        knee <= ceiling * 1.05,
        "knee {knee} past the ceiling {ceiling}"
    );
    let rule = q["target"]["rule"].as_str().unwrap_or("");
    assert!(rule.contains("5 x the lowest p99"), "{rule}");
    let sentence = q["knee"].as_str().unwrap_or("");
    assert!(sentence.starts_with("null holds p99 under "), "{sentence}");
    pages_draw_the_curves(&d, &out.stdout, sentence);
    // The progress names each step.
    let err = text(&out.stderr);
    assert!(err.contains("QoS: null at 125% of its capacity"), "{err}");
}

/// The page of a QoS sweep draws its curves and states the knee and its rule, and `iolab
/// report` draws them again from the saved JSON.
fn pages_draw_the_curves(d: &std::path::Path, json: &[u8], sentence: &str) {
    // The page draws the curves and states the knee and its rule.
    let html = std::fs::read_to_string(d.join("q.html")).expect("the report");
    for want in [
        "id=\"qos\"",
        "id=\"plot-qos-p99\"",
        "id=\"plot-qos-p50\"",
        "id=\"plot-qos-p99_9\"",
        "null p99 from due time",
        "null p99 service time",
        "target: p99 under",
        "the knee is the highest IOPS achieved",
    ] {
        assert!(html.contains(want), "{want} missing from the report");
    }
    // `iolab report` draws the curves again from the saved JSON.
    std::fs::write(d.join("q.json"), json).expect("save the JSON");
    let back = Command::new(env!("CARGO_BIN_EXE_iolab"))
        .args(["report", "q.json", "-o", "back.html"])
        .current_dir(d)
        .output()
        .expect("run iolab report");
    assert!(back.status.success(), "{}", text(&back.stderr));
    let again = std::fs::read_to_string(d.join("back.html")).expect("the page");
    assert!(
        again.contains("id=\"plot-qos-p99\""),
        "iolab report lost the curves"
    );
    assert!(
        again.contains(&format!("<strong>{}</strong>", sentence)),
        "the knee"
    );
}

/// `--qos-target` answers the question in words; the table gives each step's figures.
#[test]
fn a_qos_target_is_answered_in_words_under_the_table_of_steps() {
    let d = dir("target");
    let out = compare(
        &d,
        &[&SWEEP[..], &["--qos-target=p90=10s", "--report=t.html"]].concat(),
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let t = text(&out.stdout);
    let head = "engine  load  offered achieved  p50 due  p99 due  p99.9 due p99 service";
    assert!(t.contains(head), "{t}");
    for load in [
        "10%", "25%", "50%", "70%", "80%", "90%", "100%", "110%", "125%",
    ] {
        assert!(
            t.lines()
                .any(|l| l.starts_with("null") && l.split_whitespace().nth(1) == Some(load)),
            "no {load} step: {t}"
        );
    }
    // Ten seconds is never reached in 0.4 s steps: every step holds.
    assert!(
        t.contains("Knee: null holds p90 under 10.00s up to "),
        "{t}"
    );
    assert!(t.contains("every step held"), "{t}");
    assert!(
        t.contains("Target: p90 under 10.00s (--qos-target p90=10s)"),
        "{t}"
    );
    for line in t.lines() {
        assert!(line.chars().count() < 120, "too wide: {line}");
    }
}

/// Bad values are refused naming the option, before anything runs.
#[test]
fn bad_qos_values_are_refused_naming_the_option() {
    let d = dir("bad");
    for (arg, says) in [
        ("--qos-target=p97=1ms", "--qos-target: 'p97=1ms'"),
        (
            "--qos-target=p99=1",
            "--qos-target: 'p99=1': the latency needs a unit",
        ),
        ("--qos-target=p99", "--qos-target: 'p99'"),
        ("--qos-step-time=0", "--qos-step-time: '0'"),
        ("--qos=yes", "--qos takes no value"),
    ] {
        let out = compare(&d, &["--engines=null", arg]);
        assert_eq!(out.status.code(), Some(1), "{arg}");
        let err = text(&out.stderr);
        assert!(err.contains(says), "{arg}: {err}");
        assert!(!err.contains("at depth"), "{arg} ran: {err}");
    }
}

/// The figure of the page with this id, whole.
fn figure<'a>(html: &'a str, id: &str) -> &'a str {
    let at = html
        .find(&format!("<figure id=\"{id}\">"))
        .unwrap_or_else(|| panic!("no {id} in the report"));
    let end = html[at..].find("</figure>").map_or(html.len(), |e| at + e);
    &html[at..end]
}

/// The `<polyline ...>` whose title is `name` in `svg`.
fn polyline<'a>(svg: &'a str, name: &str) -> &'a str {
    let t = svg
        .find(&format!("<title>{name}</title></polyline>"))
        .unwrap_or_else(|| panic!("no line {name}"));
    let start = svg[..t].rfind("<polyline").unwrap_or(0);
    &svg[start..t]
}

fn stroke(line: &str) -> &str {
    line.split("stroke=\"")
        .nth(1)
        .and_then(|s| s.split('"').next())
        .unwrap_or("")
}

/// A depth sweep is drawn as curves against the depth, a line per engine and direction,
/// writes dashed; every legend names the full variant and an engine keeps its colour.
#[test]
fn a_depth_sweep_is_drawn_as_curves_one_line_per_engine() {
    let d = dir("sweep");
    let out = Command::new(env!("CARGO_BIN_EXE_iolab"))
        .args([
            "compare",
            "--engines=null,psync",
            "--iodepth=1,4",
            "--rw=randrw",
        ])
        .args([
            "--runtime=100ms",
            "--size=1m",
            "--trials=1",
            "--report=s.html",
        ])
        .current_dir(&d)
        .output()
        .expect("run iolab compare");
    assert!(out.status.success(), "{}", text(&out.stderr));
    let html = std::fs::read_to_string(d.join("s.html")).expect("the report");
    for id in [
        "plot-sweep-bw",
        "plot-sweep-p50",
        "plot-sweep-p99",
        "plot-sweep-p99_9",
    ] {
        figure(&html, id);
    }
    let sweep = figure(&html, "plot-sweep-iops");
    assert!(sweep.contains("I/O depth"), "{sweep}");
    let (nr, nw) = (polyline(sweep, "null read"), polyline(sweep, "null write"));
    let (pr, pw) = (
        polyline(sweep, "psync read"),
        polyline(sweep, "psync write"),
    );
    // Two points a line: one per depth.
    assert_eq!(
        nr.split("points=\"").nth(1).map(|p| p.split(' ').count()),
        Some(2),
        "{nr}"
    );
    assert!(
        !nr.contains("stroke-dasharray") && nw.contains("stroke-dasharray"),
        "{nr}\n{nw}"
    );
    assert!(!pr.contains("stroke-dasharray") && pw.contains("stroke-dasharray"));
    assert_eq!(stroke(nr), stroke(nw), "one engine, one colour");
    assert_ne!(stroke(nr), stroke(pr), "two engines, one colour");
    // Per-row charts name the depth, and an engine keeps its colour there.
    let pct = figure(&html, "plot-percentiles");
    for name in [
        "null (1) read",
        "null (4) write",
        "psync (1) read",
        "psync (1 x 4 jobs) write",
    ] {
        let line = polyline(pct, name);
        let engine = name.split(' ').next().unwrap_or("");
        assert_eq!(
            stroke(line),
            stroke(polyline(sweep, &format!("{engine} read"))),
            "{name}"
        );
        assert_eq!(
            line.contains("stroke-dasharray"),
            name.ends_with("write"),
            "{name}"
        );
    }
    assert!(!pct.contains(">null read<"), "a legend without its depth");
}

/// A test file on tmpfs measures memory: the finding names the file system and its statfs
/// magic.
#[test]
fn a_test_file_on_tmpfs_is_said_to_measure_memory() {
    let mounts = std::fs::read_to_string("/proc/mounts").unwrap_or_default();
    if !mounts
        .lines()
        .any(|l| l.split(' ').nth(1) == Some("/dev/shm") && l.split(' ').nth(2) == Some("tmpfs"))
    {
        iolab_testkit::skip("compare_tmpfs", &"/dev/shm is not a tmpfs here");
        return;
    }
    let shm = PathBuf::from(format!("/dev/shm/iolab-compare-qos-{}", std::process::id()));
    std::fs::create_dir_all(&shm).expect("a folder in /dev/shm");
    let d = dir("tmpfs");
    let at = format!("--directory={}", shm.display());
    let args = [
        "--engines=psync",
        "--direct=0",
        "--runtime=100ms",
        "--size=1m",
        "--trials=1",
    ];
    let out = Command::new(env!("CARGO_BIN_EXE_iolab"))
        .arg("compare")
        .args(args)
        .args([at.as_str(), "--report=m.html"])
        .current_dir(&d)
        .output()
        .expect("run iolab compare");
    let _ = std::fs::remove_dir_all(&shm);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let t = text(&out.stdout);
    assert!(
        t.contains("the test file is on tmpfs: this measures memory"),
        "{t}"
    );
    assert!(t.contains("f_type 0x01021994"), "{t}");
    // On the build's disk (not in memory) no such finding.
    let out = Command::new(env!("CARGO_BIN_EXE_iolab"))
        .arg("compare")
        .args(args)
        .arg("--report=n.html")
        .current_dir(&d)
        .output()
        .expect("run iolab compare");
    let t = text(&out.stdout);
    let on_disk = !mounts.lines().any(|l| {
        l.split(' ')
            .nth(2)
            .is_some_and(|fs| fs == "tmpfs" || fs == "ramfs")
            && d.starts_with(l.split(' ').nth(1).unwrap_or("/nowhere"))
            && l.split(' ').nth(1) != Some("/")
    });
    if on_disk {
        assert!(!t.contains("this measures memory"), "{t}");
    }
}
