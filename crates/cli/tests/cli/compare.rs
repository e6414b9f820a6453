//! `iolab compare` end to end: rows, JSON, the report's structure, the findings that matter
//! most (buffered libaio running synchronously; direct libaio not), and cleanup.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn dir(name: &str) -> PathBuf {
    iolab_testkit::scratch_dir!(&format!("compare/{name}"))
}

fn compare(cwd: &Path, args: &[&str]) -> Output {
    let out = Command::new(env!("CARGO_BIN_EXE_iolab"))
        .arg("compare")
        .args(args)
        .current_dir(cwd)
        .output()
        .expect("run iolab compare");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("panicked"), "{err}");
    out
}

fn json(out: &Output) -> serde_json::Value {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("stdout is JSON")
}

#[test]
fn null_engine_at_two_depths_gives_two_rows_and_fio_shaped_runs() {
    let d = dir("null");
    let out = compare(
        &d,
        &[
            "--engines=null",
            "--iodepth=1,8",
            "--runtime=300ms",
            "--size=16m",
            "--output-format=json",
        ],
    );
    let v = json(&out);
    let rows = v["iolab compare"]["rows"].as_array().expect("rows");
    assert_eq!(rows.len(), 2);
    assert_eq!(rows[0]["iodepth"], 1);
    assert_eq!(rows[1]["iodepth"], 8);
    for r in rows {
        assert!(r["iops"].as_f64().unwrap_or(0.0) > 0.0, "{r}");
        assert!(r["error"].is_null(), "{r}");
    }
    assert_eq!(v["runs"].as_array().map(Vec::len), Some(2));
    assert!(v["runs"][0]["jobs"][0]["read"]["clat_ns"]["percentile"]["99.000000"].is_u64());
}

#[test]
fn the_table_marks_a_synchronous_engine_as_jobs() {
    let d = dir("table");
    let out = compare(
        &d,
        &[
            "--engines=psync,io_uring",
            "--iodepth=4",
            "--runtime=300ms",
            "--size=8m",
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("psync (1 x 4 jobs)"), "{text}");
    assert!(text.contains("io_uring (4)"), "{text}");
    assert!(
        text.contains("synchronous engine reaches depth N with N threads"),
        "{text}"
    );
    // The file it created is gone.
    assert!(!std::fs::read_dir(&d)
        .expect("scratch dir")
        .any(|e| e.is_ok_and(|e| e.file_name().to_string_lossy().ends_with(".dat"))));
}

#[test]
fn the_html_report_has_the_plots_and_the_table() {
    let d = dir("html");
    let out = compare(
        &d,
        &[
            "--engines=null,psync",
            "--iodepth=2",
            "--runtime=1200ms",
            "--size=8m",
            "--report=r.html",
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let html = std::fs::read_to_string(d.join("r.html")).expect("report written");
    for id in [
        "plot-percentiles",
        "plot-iops-time",
        "plot-histogram",
        "plot-bars-iops",
        "plot-bars-cpu",
        "compare-table",
        "findings",
    ] {
        assert!(html.contains(&format!("id=\"{id}\"")), "missing {id}");
    }
    assert!(!html.contains("http"), "the report must work offline");
    assert!(!html.contains("no data"), "an empty chart was drawn");
}

/// Uncached buffered reads: libaio waits for the disk inside io_submit. The file is large
/// enough that one second of random reads mostly misses the page cache (invalidated first).
#[test]
fn buffered_libaio_is_found_synchronous_and_direct_libaio_is_not() {
    let d = dir("findings");
    let args = [
        "--engines=libaio",
        "--iodepth=16",
        "--runtime=1",
        "--size=512m",
        "--output-format=json",
    ];
    let buffered = json(&compare(&d, &[&args[..], &["--direct=0"]].concat()));
    let titles = |v: &serde_json::Value| -> Vec<String> {
        v["iolab compare"]["findings"]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|f| f["title"].as_str().map(String::from))
                    .collect()
            })
            .unwrap_or_default()
    };
    let b = titles(&buffered);
    assert!(
        b.iter().any(|t| t == "libaio ran synchronously"),
        "{b:?}\n{}",
        buffered["iolab compare"]["rows"]
    );
    let direct = json(&compare(&d, &[&args[..], &["--direct=1"]].concat()));
    let t = titles(&direct);
    assert!(!t.iter().any(|t| t.contains("synchronously")), "{t:?}");
}

#[test]
fn bad_arguments_are_refused_with_exit_1() {
    let d = dir("bad");
    let out = compare(&d, &["--engines=windowsaio"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("windowsaio"));
    let out = compare(&d, &["--iodepth=0"]);
    assert_eq!(out.status.code(), Some(1));
}

/// `iolab report` makes the same page from saved results: compare's JSON (rows, runs with
/// bins, series) or fio's own json+.
#[test]
fn report_rebuilds_the_html_from_saved_json() {
    let d = dir("report");
    let out = compare(
        &d,
        &[
            "--engines=null,psync",
            "--iodepth=2",
            "--runtime=1200ms",
            "--size=8m",
            "--output-format=json",
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    std::fs::write(d.join("c.json"), &out.stdout).expect("save");
    let run = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_iolab"))
            .arg("report")
            .args(args)
            .current_dir(&d)
            .output()
            .expect("run")
    };
    let r = run(&["c.json", "-o", "c.html"]);
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let html = std::fs::read_to_string(d.join("c.html")).expect("html");
    for id in [
        "plot-percentiles",
        "plot-iops-time",
        "plot-lat-time",
        "plot-histogram",
        "compare-table",
    ] {
        assert!(html.contains(&format!("id=\"{id}\"")), "missing {id}");
    }
    assert!(
        !html.contains("no data"),
        "every plot has data when read back from compare's JSON"
    );
    let fio = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../report/tests/data/fio-3.33-libaio-randread.jsonplus");
    let r = run(&[fio.to_str().expect("path"), "-o", "fio.html"]);
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let html = std::fs::read_to_string(d.join("fio.html")).expect("html");
    assert!(
        html.contains("id=\"compare-table\"") && html.contains("libaio"),
        "fio's json+ becomes a row"
    );
    // Titled and labelled as fio's; what fio does not report (system calls, p99.999) is a
    // dash, never a 0 that wins "lowest".
    assert!(html.contains("<title>fio results (fio-3.33)"), "title");
    assert!(!html.contains("iolab compare"));
    assert!(html.contains("<td class=\"missing\">–</td>"));
    assert!(!html.contains("<strong>0"), "a zero was ranked best");
    assert!(!html.contains("no data"), "an empty chart was drawn");
    let bad = run(&["missing.json"]);
    assert_eq!(bad.status.code(), Some(1));
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[test]
fn help_is_on_standard_output_with_every_option() {
    let d = dir("help");
    for flag in ["--help", "-h"] {
        let out = compare(&d, &[flag]);
        assert_eq!(out.status.code(), Some(0));
        assert!(out.stderr.is_empty(), "{}", text(&out.stderr));
        let help = text(&out.stdout);
        for opt in [
            "--engines",
            "--iodepth",
            "--directory",
            "--report",
            "--output-format",
        ] {
            assert!(help.contains(opt), "{opt} missing from help");
        }
    }
    let out = Command::new(env!("CARGO_BIN_EXE_iolab"))
        .args(["report", "--help"])
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(0));
    assert!(text(&out.stdout).contains("--output"));
}

#[test]
fn misspelled_options_get_a_suggestion_and_are_named_once() {
    let d = dir("typo");
    for (args, want) in [
        (&["--engine=libaio"][..], "did you mean '--engines'?"),
        (&["--rww=read"][..], "did you mean '--rw'?"),
        (&["--engines=libaoi"][..], "did you mean 'libaio'?"),
    ] {
        let out = compare(&d, args);
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        let err = text(&out.stderr);
        assert!(err.contains(want), "{args:?}: {err}");
        let first = err.lines().next().unwrap_or("");
        assert_eq!(first.matches("iolab compare").count(), 1, "{first}");
    }
    // An option value error names the option, not an argument number of our own making.
    let err = text(&compare(&d, &["--bs=abc"]).stderr);
    assert!(err.contains("'bs'") && !err.contains("argument"), "{err}");
    let r = Command::new(env!("CARGO_BIN_EXE_iolab"))
        .args(["report", "--outptu=x.html"])
        .output()
        .expect("run");
    assert_eq!(r.status.code(), Some(1));
    assert!(text(&r.stderr).contains("did you mean '--output'?"));
}

#[test]
fn options_compare_sets_itself_are_refused_not_ignored() {
    let d = dir("own");
    let out = compare(&d, &["--ioengine=libaio"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("--engines"));
    // A --name would start a second job, which compare would never run.
    let out = compare(&d, &["--name=x", "--bs=8k"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("--name: compare runs one job"));
}

#[test]
fn the_report_names_the_whole_workload() {
    let d = dir("workload");
    let out = compare(
        &d,
        &[
            "--engines=null,psync",
            "--iodepth=1,2",
            "--runtime=200ms",
            // fio's `--name value` spelling too.
            "--size",
            "8m",
            "--bs",
            "8k",
            "--report=w.html",
        ],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let html = std::fs::read_to_string(d.join("w.html")).expect("report written");
    let at = html
        .find("<section id=\"workload\">")
        .expect("workload section");
    let w = &html[at..];
    for kv in [
        "<th>engines</th><td>null, psync</td>",
        "<th>iodepth</th><td>1, 2</td>",
        "<th>size</th><td>8m</td>",
        "<th>bs</th><td>8k</td>",
        "<th>numjobs</th>",
    ] {
        assert!(w.contains(kv), "{kv} missing");
    }
    assert!(!html.contains("no data"), "an empty chart was drawn");
}

/// The seed lesson: Linux AIO without O_DIRECT does the work inside io_submit, so on a cached
/// file "async" runs synchronously; the finding says so, beside the page-cache one when the
/// device saw next to none of the reads.
#[test]
fn buffered_libaio_on_a_cached_file_is_found_synchronous() {
    let d = dir("cached");
    // Written just now, so in the page cache.
    std::fs::write(d.join("iolab-compare.dat"), vec![7u8; 32 << 20]).expect("test file");
    let v = json(&compare(
        &d,
        &[
            "--engines=libaio",
            "--iodepth=16",
            "--runtime=1",
            "--size=32m",
            "--direct=0",
            "--output-format=json",
        ],
    ));
    let c = &v["iolab compare"];
    let titles: Vec<&str> = c["findings"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|f| f["title"].as_str())
        .collect();
    let row = &c["rows"][0];
    assert!(row["submit_share"].as_f64().unwrap_or(0.0) >= 0.5, "{row}");
    assert!(titles.contains(&"libaio ran synchronously"), "{titles:?}");
    let reads = row["iops"].as_f64().unwrap_or(0.0);
    if let Some(dev) = row["disk_ios"].as_f64() {
        if dev < reads * 0.1 {
            assert!(
                titles.contains(&"libaio was served from the page cache"),
                "{titles:?}"
            );
        }
    }
}
