//! `iolab compare` you can trust (issue 31): the traps closed (a missing directory, a shared
//! test file, an unwritable report path, an interrupted run that looked complete), the depth
//! label of synchronous engines, the default report; trials in rotation with intervals.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

fn dir(name: &str) -> PathBuf {
    iolab_testkit::scratch_dir!(&format!("compare_trials/{name}"))
}

fn iolab(cwd: &Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_iolab"));
    c.arg("compare").current_dir(cwd);
    c
}

fn compare(cwd: &Path, args: &[&str]) -> Output {
    let out = iolab(cwd).args(args).output().expect("run iolab compare");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("panicked"), "{err}");
    out
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// The folder's entries whose names start with `prefix`.
fn named(d: &Path, prefix: &str) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(d)
        .map(|r| {
            r.filter_map(|e| e.ok()?.file_name().into_string().ok())
                .filter(|n| n.starts_with(prefix))
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

/// Regression: `--directory=/nonexistent` was created and benchmarked (a mistyped mount point
/// measured the root file system). Refused as fio refuses it, before anything runs.
#[test]
fn a_directory_that_does_not_exist_is_refused_before_anything_runs() {
    let d = dir("nodir");
    let missing = d.join("not-here");
    let arg = format!("--directory={}", missing.display());
    let out = compare(
        &d,
        &["--engines=psync", "--runtime=100ms", "--size=1m", &arg],
    );
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    assert!(
        err.contains(&format!("{} is not a directory", missing.display())),
        "{err}"
    );
    assert!(!err.contains("at depth"), "a variant ran: {err}");
    assert!(!missing.exists(), "the directory was created");
    // fio says the same of its --directory.
    match Command::new("fio")
        .args(["--name=x", "--size=1m", &arg])
        .current_dir(&d)
        .output()
    {
        Ok(out) => {
            assert!(text(&out.stderr).contains("is not a directory"));
            assert!(!out.status.success());
        }
        Err(e) => {
            iolab_testkit::skip("compare_directory", &format!("fio not runnable: {e}"));
        }
    }
}

/// Regression: `--report=/nonexistent/r.html` failed only after every engine had run.
#[test]
fn an_unwritable_report_path_is_refused_before_the_first_variant() {
    let d = dir("noreport");
    let out = compare(
        &d,
        &[
            "--engines=null",
            "--runtime=100ms",
            "--size=1m",
            "--report=no/such/folder/r.html",
        ],
    );
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    assert!(err.contains("--report: no/such/folder/r.html"), "{err}");
    assert!(!err.contains("at depth"), "a variant ran: {err}");
    assert!(out.stdout.is_empty(), "{}", text(&out.stdout));
}

/// Regression: psync at depth 32 read `32 x32`; it is 32 jobs at depth 1.
#[test]
fn a_synchronous_engine_reads_as_jobs_at_depth_one() {
    let d = dir("label");
    let out = compare(
        &d,
        &[
            "--engines=psync,null",
            "--iodepth=4",
            "--runtime=100ms",
            "--size=1m",
            "--trials=1",
        ],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let t = text(&out.stdout);
    assert!(t.contains("psync (1 x 4 jobs)"), "{t}");
    assert!(t.contains("null (4)"), "{t}");
    assert!(!t.contains("x4)"), "{t}");
}

/// Regression: the default run wrote no HTML report, so its main job showed no picture.
#[test]
fn without_report_the_page_goes_to_the_current_directory_and_says_where() {
    let d = dir("defreport");
    let out = compare(&d, &["--engines=null", "--runtime=100ms", "--size=1m"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let pages = named(&d, "iolab-compare-");
    assert_eq!(pages.len(), 1, "{pages:?}");
    assert!(pages[0].ends_with(".html"), "{pages:?}");
    let err = text(&out.stderr);
    assert!(
        err.contains(&format!("report written to {}", pages[0])),
        "{err}"
    );
    // Scripts asking for JSON get JSON alone.
    let d = dir("defreport-json");
    let out = compare(
        &d,
        &["--engines=null", "--runtime=100ms", "--output-format=json"],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(named(&d, "iolab-compare-").is_empty());
}

/// Regression: two compares in one folder shared `iolab-compare.dat` and the first to finish
/// deleted it under the other; and an interrupted run's report looked complete. Here a long
/// run (A) is under way when a short one (B) runs in the same folder: B leaves A's file
/// alone; then A is stopped (SIGTERM), says what did not run and removes its own file.
#[test]
fn two_runs_in_one_folder_keep_their_files_and_an_interrupt_is_reported() {
    let d = dir("twofiles");
    let a = iolab(&d)
        .args([
            "--engines=psync,null",
            "--iodepth=2",
            "--runtime=60",
            "--size=4m",
            "--trials=2",
            "--report=a.html",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start compare A");
    let a_file = format!("iolab-compare.{}.dat", a.id());
    let t0 = Instant::now();
    while !d.join(&a_file).exists() && t0.elapsed() < Duration::from_secs(60) {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(d.join(&a_file).exists(), "A never laid out {a_file}");
    let b = compare(&d, &["--engines=psync", "--runtime=200ms", "--size=1m"]);
    assert!(b.status.success(), "{}", text(&b.stderr));
    assert!(d.join(&a_file).exists(), "B deleted A's file");
    assert_eq!(named(&d, "iolab-compare."), vec![a_file.clone()]);
    let st = Command::new("kill")
        .args(["-TERM", &a.id().to_string()])
        .status()
        .expect("kill");
    assert!(st.success());
    let out = a.wait_with_output().expect("A ends");
    assert_eq!(out.status.code(), Some(130), "{}", text(&out.stderr));
    let t = text(&out.stdout);
    assert!(t.contains("interrupted after 0 of 4 runs"), "{t}");
    assert!(
        t.contains("did not run: psync (1 x 2 jobs), null (2)"),
        "{t}"
    );
    assert!(!d.join(&a_file).exists(), "A left its file behind");
    let html = std::fs::read_to_string(d.join("a.html")).expect("A's report");
    assert!(html.contains("id=\"interrupted\""), "report looks complete");
}

fn json(out: &Output) -> serde_json::Value {
    assert!(out.status.success(), "{}", text(&out.stderr));
    serde_json::from_slice(&out.stdout).expect("stdout is JSON")
}

/// `--trials 3` runs the variants in rotation, A B C A B C A B C, not A A A B B B: the
/// trials' start times in the JSON put them in that order.
#[test]
fn trials_run_in_rotation_and_the_json_carries_each_with_the_interval() {
    let d = dir("rotation");
    let out = compare(
        &d,
        &[
            "--engines=null,psync,io_uring",
            "--iodepth=2",
            "--runtime=100ms",
            "--size=1m",
            "--trials=3",
            "--output-format=json",
        ],
    );
    let v = json(&out);
    let c = &v["iolab compare"];
    let rows = c["rows"].as_array().expect("rows");
    assert_eq!(rows.len(), 3);
    let mut runs: Vec<(u64, String)> = Vec::new();
    for r in rows {
        let label = r["label"].as_str().unwrap_or("?").to_string();
        let trials = r["trials"].as_array().expect("trials");
        assert_eq!(trials.len(), 3, "{label}");
        for t in trials {
            runs.push((t["start_ms"].as_u64().expect("start_ms"), label.clone()));
        }
        // The row's IOPS is the median of its trials', with the interval around it.
        let mut each: Vec<f64> = trials.iter().filter_map(|t| t["iops"].as_f64()).collect();
        each.sort_by(f64::total_cmp);
        assert_eq!(r["iops"].as_f64(), Some(each[1]), "{label}");
        let i = &r["intervals"]["IOPS"];
        assert_eq!(i["median"].as_f64(), Some(each[1]));
        assert_eq!(
            (i["low"].as_f64(), i["high"].as_f64()),
            (Some(each[0]), Some(each[2]))
        );
        assert_eq!(
            i["coverage"].as_f64(),
            Some(0.75),
            "3 trials: [min, max] covers 75%"
        );
        assert_eq!(i["trials"].as_array().map(Vec::len), Some(3));
    }
    runs.sort();
    let order: Vec<&str> = runs.iter().map(|r| r.1.as_str()).collect();
    let abc = ["null", "psync", "io_uring"];
    assert_eq!(order, [abc, abc, abc].concat(), "not in rotation");
    assert!(
        c["interval_method"]
            .as_str()
            .is_some_and(|m| m.contains("order statistics")),
        "{c}"
    );
    // The progress says the same order.
    let err = text(&out.stderr);
    let first = err
        .find("null at depth 2, trial 2 of 3")
        .expect("trial 2 of null");
    let second = err
        .find("psync at depth 2 (2 jobs), trial 1 of 3")
        .expect("psync");
    assert!(second < first, "{err}");
}

/// The table names the method and the coverage it has; with one trial it ranks nothing.
#[test]
fn the_table_names_the_interval_and_one_trial_ranks_nothing() {
    let d = dir("footnote");
    let args = ["--engines=null,psync", "--runtime=100ms", "--size=1m"];
    let out = compare(&d, &[&args[..], &["--trials=3"]].concat());
    assert!(out.status.success(), "{}", text(&out.stderr));
    let t = text(&out.stdout);
    assert!(t.contains("median of 3 trials run in rotation"), "{t}");
    assert!(t.contains("order statistics"), "{t}");
    assert!(t.contains("75.0% probability, not 95%"), "{t}");
    assert!(t.contains('±'), "{t}");
    let out = compare(&d, &[&args[..], &["--trials=1"]].concat());
    assert!(out.status.success(), "{}", text(&out.stderr));
    let t = text(&out.stdout);
    assert!(t.contains("no column is ranked"), "{t}");
    let table = t.split("\n\n").next().unwrap_or("");
    assert!(!table.contains('*'), "one trial ranked: {t}");
    assert!(!table.contains('±'), "{t}");
}

/// The table fits a 120-column terminal: columns that do not fit go to a second block.
#[test]
fn the_table_fits_120_columns() {
    let d = dir("width");
    let out = compare(
        &d,
        &[
            "--engines=null,io_uring-fixed,io_uring-sqpoll,psync",
            "--iodepth=1,16",
            "--runtime=100ms",
            "--size=1m",
            "--trials=2",
        ],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let t = text(&out.stdout);
    for line in t.lines() {
        assert!(
            line.chars().count() < 120,
            "{} wide: {line}",
            line.chars().count()
        );
    }
    for col in ["IOPS", "p99.999", "calls/IO", "disk%"] {
        assert!(t.contains(col), "{col} missing: {t}");
    }
    assert!(t.contains("psync (1 x 16 jobs)"), "{t}");
}
