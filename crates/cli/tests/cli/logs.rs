//! fio's log files (write_bw_log, write_iops_log, write_lat_log, write_hist_log and the log_*
//! options): names, columns and units as fio 3.33 writes them (HOWTO "Log File Formats"),
//! their agreement with the JSON report, and fio's own tools reading them.
#![allow(clippy::unwrap_used)]

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::run::{u64_at, TestDir};

/// A log's lines as numbers (fio's `0x%04x` priority read as hex).
fn rows(path: &Path) -> Vec<Vec<u64>> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.lines()
        .map(|l| {
            l.split(", ")
                .map(|f| match f.strip_prefix("0x") {
                    Some(h) => u64::from_str_radix(h, 16).unwrap(),
                    None => f.parse().unwrap_or_else(|e| panic!("{l:?}: {e}")),
                })
                .collect()
        })
        .collect()
}

fn json(d: &TestDir, args: &[&str]) -> Value {
    let mut all = args.to_vec();
    all.push("--output-format=json");
    d.run(&all).ok().json()
}

const NULL_RW: &[&str] = &[
    "--name=j",
    "--ioengine=null",
    "--size=1m",
    "--bs=4k",
    "--rw=randrw",
    "--iodepth=4",
];

fn with<'a>(base: &[&'a str], more: &[&'a str]) -> Vec<&'a str> {
    base.iter().chain(more).copied().collect()
}

/// A fresh directory `name` and the JSON report of the job `base` with the log options
/// `logs`, run in it.
fn logged(name: &str, base: &[&str], logs: &[&str]) -> (TestDir, Value) {
    let d = TestDir::new(name);
    let v = json(&d, &with(base, logs));
    (d, v)
}

#[test]
fn per_io_logs_have_a_line_per_io_with_fios_columns() {
    let (d, v) = logged(
        "logs-per-io",
        NULL_RW,
        &[
            "--write_bw_log=p",
            "--write_iops_log=p",
            "--write_lat_log=p",
            "--log_offset=1",
        ],
    );
    let per_dir = |k: &str| {
        [
            u64_at(&v, &format!("/jobs/0/read/{k}")),
            u64_at(&v, &format!("/jobs/0/write/{k}")),
        ]
    };
    let ios = per_dir("total_ios");
    assert_eq!(ios[0] + ios[1], 256);
    for kind in ["bw", "iops", "clat", "lat"] {
        let r = rows(&d.path.join(format!("p_{kind}.1.log")));
        assert_eq!(r.len() as u64, ios[0] + ios[1], "{kind}: a line per I/O");
        for (dir, n) in ios.iter().enumerate() {
            let of_dir = r.iter().filter(|l| l[2] == dir as u64).count() as u64;
            assert_eq!(of_dir, *n, "{kind}: lines of direction {dir}");
        }
        for l in &r {
            // time, value, direction, block size, offset, priority
            assert_eq!(l.len(), 6, "{kind}: {l:?}");
            assert_eq!(
                (l[3], l[4] % 4096, l[4] < 1 << 20, l[5]),
                (4096, 0, true, 0)
            );
        }
        let times: Vec<u64> = r.iter().map(|l| l[0]).collect();
        assert!(
            times.windows(2).all(|w| w[0] <= w[1]),
            "{kind}: time goes on"
        );
    }
    let (clat, bw) = (
        rows(&d.path.join("p_clat.1.log")),
        rows(&d.path.join("p_bw.1.log")),
    );
    // fio's per-I/O bandwidth: bytes * 10^6 / clat in ns (its "KiB/s").
    for (c, b) in clat.iter().zip(&bw) {
        assert_eq!(b[1], (4096 * 1_000_000u64).checked_div(c[1]).unwrap_or(0));
    }
    assert!(rows(&d.path.join("p_iops.1.log")).iter().all(|l| l[1] == 1));
    // As in fio, a log with a line per I/O makes every I/O a bandwidth and IOPS sample.
    assert_eq!(per_dir("bw_samples"), ios);
    assert_eq!(per_dir("iops_samples"), ios);
    assert_eq!(
        v.pointer("/jobs/0/read/iops_mean").unwrap().as_f64(),
        Some(1.0)
    );
    // The clat lines are the JSON's clat: same count and sum (the mean times N).
    for (dir, key) in ["read", "write"].iter().enumerate() {
        let of: Vec<u64> = clat
            .iter()
            .filter(|l| l[2] == dir as u64)
            .map(|l| l[1])
            .collect();
        let mean = v
            .pointer(&format!("/jobs/0/{key}/clat_ns/mean"))
            .unwrap()
            .as_f64()
            .unwrap();
        let sum: u64 = of.iter().sum();
        assert!(
            (sum as f64 - mean * of.len() as f64).abs() <= of.len() as f64,
            "{key}"
        );
    }
    // slat is measured for queued I/O only: the log holds as many lines as the JSON counts.
    let slat = rows(&d.path.join("p_slat.1.log"));
    assert_eq!(slat.len() as u64, per_dir("slat_ns/N").iter().sum::<u64>());
}

#[test]
fn the_priority_column_is_each_ios_own_priority() {
    // As fio 3.33: the job's prio/prioclass (class 2 level 5: 0x4005), or the one cmdprio
    // drew for the I/O (class 2 level 1: 0x4001).
    let prio =
        |d: &TestDir, f: &str| -> Vec<u64> { rows(&d.path.join(f)).iter().map(|r| r[4]).collect() };
    let (d, _) = logged(
        "logs-prio-own",
        NULL_RW,
        &[
            "--write_lat_log=q",
            "--log_prio=1",
            "--prioclass=2",
            "--prio=5",
        ],
    );
    let own = prio(&d, "q_clat.1.log");
    assert!(
        own.len() == 256 && own.iter().all(|p| *p == 0x4005),
        "{own:?}"
    );
    let (d, _) = logged(
        "logs-prio-cmdprio",
        &[
            "--name=j",
            "--ioengine=libaio",
            "--iodepth=2",
            "--size=1m",
            "--bs=4k",
            "--rw=randread",
        ],
        &[
            "--write_lat_log=q",
            "--log_prio=1",
            "--cmdprio_percentage=50",
            "--cmdprio_class=2",
            "--cmdprio=1",
        ],
    );
    let drawn = prio(&d, "q_clat.1.log");
    let high = drawn.iter().filter(|p| **p == 0x4001).count();
    assert!((64..=192).contains(&high), "{drawn:?}");
    assert_eq!(drawn.iter().filter(|p| **p == 0).count(), 256 - high);
}

#[test]
fn priority_and_issue_time_columns() {
    let (d, _) = logged(
        "logs-prio",
        NULL_RW,
        &[
            "--write_lat_log=q",
            "--log_offset=1",
            "--log_prio=1",
            "--log_issue_time=1",
        ],
    );
    let text = std::fs::read_to_string(d.path.join("q_clat.1.log")).unwrap();
    let first = text.lines().next().unwrap();
    assert_eq!(first.split(", ").nth(5), Some("0x0000"), "{first}");
    let clat = rows(&d.path.join("q_clat.1.log"));
    // The issue time (ns since the job started) comes last, before the completion.
    assert!(clat
        .iter()
        .all(|l| l.len() == 7 && l[6] / 1_000_000 <= l[0]));
    assert!(clat.iter().any(|l| l[6] > 0));
    // Only clat and slat lines carry it; the lat log has 0 there.
    assert!(rows(&d.path.join("q_lat.1.log")).iter().all(|l| l[6] == 0));

    let out = d
        .run(&with(NULL_RW, &["--write_lat_log=q", "--log_issue_time=1"]))
        .fails();
    assert!(
        out.stderr
            .contains("log_issue_time needs write_lat_log and log_offset"),
        "{}",
        out.stderr
    );
}

const PACED: &[&str] = &[
    "--name=w",
    "--ioengine=null",
    "--size=64m",
    "--bs=4k",
    "--rw=randrw",
    "--rate_iops=1000",
    "--runtime=1",
    "--time_based",
];

#[test]
fn windowed_logs_hold_one_line_per_direction_and_window() {
    let (d, v) = logged(
        "logs-window",
        PACED,
        &[
            "--write_iops_log=w",
            "--write_lat_log=w",
            "--log_avg_msec=200",
        ],
    );
    let iops = rows(&d.path.join("w_iops.1.log"));
    for dir in 0..2u64 {
        let of: Vec<&Vec<u64>> = iops.iter().filter(|l| l[2] == dir).collect();
        // Windows of 200 ms in 1 s; the last, partial one is dropped, as fio's is.
        assert!((3..=5).contains(&of.len()), "{iops:?}");
        for l in &of {
            assert_eq!(
                (l.len(), l[3], l[4]),
                (5, 0, 0),
                "windows have no size: {l:?}"
            );
            assert!((700..=1300).contains(&l[1]), "about 1000 IOPS: {l:?}");
        }
    }
    let clat = rows(&d.path.join("w_clat.1.log"));
    // Each closing time is at least a window after the last one's start, per direction.
    for dir in 0..2u64 {
        let t: Vec<u64> = clat.iter().filter(|l| l[2] == dir).map(|l| l[0]).collect();
        assert!((4..=6).contains(&t.len()), "{clat:?}");
        // (The last line is the partial window written at the job's end.)
        let closed = &t[..t.len() - 1];
        assert!(
            closed.windows(2).all(|w| w[1] >= w[0] - w[0] % 200 + 200),
            "{t:?}"
        );
    }
    // The window means average to the JSON's mean.
    let mean = v
        .pointer("/jobs/0/read/clat_ns/mean")
        .unwrap()
        .as_f64()
        .unwrap();
    let of_read: Vec<f64> = clat
        .iter()
        .filter(|l| l[2] == 0)
        .map(|l| l[1] as f64)
        .collect();
    let avg = of_read.iter().sum::<f64>() / of_read.len() as f64;
    assert!(avg > mean / 4.0 && avg < mean * 4.0, "{avg} vs {mean}");

    // log_max_value: the max of a window is at least its mean; both: mean then max.
    let (d, _) = logged(
        "logs-window-max",
        PACED,
        &[
            "--write_lat_log=m",
            "--log_avg_msec=250",
            "--log_window_value=both",
        ],
    );
    for l in rows(&d.path.join("m_clat.1.log")) {
        assert_eq!(l.len(), 6, "{l:?}");
        assert!(l[2] >= l[1], "max {} < mean {}", l[2], l[1]);
    }
}

#[test]
fn file_names_follow_fio() {
    let d = TestDir::new("logs-names");
    let job = "[global]\nioengine=null\nsize=64k\nrw=read\n\
               [first]\nwrite_iops_log\n\
               [pair]\nnumjobs=2\nwrite_bw_log=shared\nper_job_logs=0\n\
               [third]\nwrite_lat_log=t\nwrite_hist_log=t\nlog_hist_msec=10\n\
               [gz]\nwrite_iops_log=z\nlog_compression=1k\nlog_store_compressed=1\n\
               [sgz]\nnumjobs=2\nwrite_iops_log=sz\nper_job_logs=0\nlog_compression=1k\n\
               log_store_compressed=1\n";
    let f = d.write("names.fio", job);
    d.run(&[f.to_str().unwrap(), "--output-format=json"]).ok();
    let mut names: Vec<String> = std::fs::read_dir(&d.path)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.contains(".log"))
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            "first_iops.1.log",
            "shared_bw.log",
            "sz_iops.log.fz",
            "t_clat.4.log",
            "t_clat_hist.4.log",
            "t_lat.4.log",
            "t_slat.4.log",
            "z_iops.5.log.fz",
        ]
    );
    // Both clones of [pair] write to the one file: 16 I/Os each.
    assert_eq!(rows(&d.path.join("shared_bw.log")).len(), 32);
    // The compressed log reads back as its 16 lines.
    let out = d.run(&["--inflate-log=z_iops.5.log.fz"]).ok();
    assert_eq!(out.stdout.lines().count(), 16, "{}", out.stdout);
    assert!(out.stdout.lines().all(|l| l.split(", ").count() == 5));
    // A shared file stored compressed is named .log.fz as fio names it, and holds both
    // clones' lines.
    let out = d.run(&["--inflate-log=sz_iops.log.fz"]).ok();
    assert_eq!(out.stdout.lines().count(), 32, "{}", out.stdout);
    d.write("junk.fz", "not zlib");
    let out = d.run(&["--inflate-log=junk.fz"]).fails();
    assert!(out.stderr.contains("junk.fz"), "{}", out.stderr);
}

#[test]
fn histogram_lines_hold_the_interval_in_fios_bins() {
    let (d, v) = logged(
        "logs-hist",
        PACED,
        &[
            "--write_hist_log=h",
            "--log_hist_msec=100",
            "--log_hist_coarseness=2",
        ],
    );
    let h = rows(&d.path.join("h_clat_hist.1.log"));
    assert!(h.len() >= 10, "{}", h.len());
    for l in &h {
        // time, direction, block size, then 1856 / 2^2 bins.
        assert_eq!((l.len(), l[3 - 1]), (3 + 464, 4096));
    }
    // The bins count each completion once at most: never more than the JSON's count.
    for (dir, key) in ["read", "write"].iter().enumerate() {
        let n: u64 = h
            .iter()
            .filter(|l| l[1] == dir as u64)
            .map(|l| l[3..].iter().sum::<u64>())
            .sum();
        let total = u64_at(&v, &format!("/jobs/0/{key}/clat_ns/N"));
        assert!(n <= total && n * 10 >= total * 8, "{key}: {n} of {total}");
    }
}

#[test]
fn unix_epoch_times_are_wall_clock_ms() {
    let d = TestDir::new("logs-epoch");
    let before = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64;
    json(
        &d,
        &with(NULL_RW, &["--write_iops_log=e", "--log_unix_epoch=1"]),
    );
    let after = before + 60_000;
    assert!(rows(&d.path.join("e_iops.1.log"))
        .iter()
        .all(|l| (before..after).contains(&l[0])));
}

#[test]
fn percentiles_from_a_per_io_clat_log_match_the_json_within_a_bucket() {
    let d = TestDir::new("logs-pctl");
    let v = json(
        &d,
        &with(
            &[
                "--name=p",
                "--ioengine=null",
                "--size=32m",
                "--bs=4k",
                "--rw=randread",
                "--iodepth=8",
            ],
            &["--write_lat_log=p"],
        ),
    );
    let mut clat: Vec<u64> = rows(&d.path.join("p_clat.1.log"))
        .iter()
        .map(|l| l[1])
        .collect();
    clat.sort_unstable();
    assert_eq!(clat.len(), 8192);
    let pct = v
        .pointer("/jobs/0/read/clat_ns/percentile")
        .unwrap()
        .as_object()
        .unwrap();
    assert!(pct.len() >= 10);
    for (p, json_val) in pct {
        let p: f64 = p.parse().unwrap();
        let rank = ((p / 100.0 * clat.len() as f64).ceil() as usize).clamp(1, clat.len());
        let exact = clat[rank - 1];
        let got = json_val.as_u64().unwrap();
        // fio's bucket: under 1/64 of the value wide, the JSON giving its midpoint.
        let err = exact / 64 + 1;
        assert!(got.abs_diff(exact) <= err, "p{p}: json {got}, log {exact}");
    }
}

/// Runs `iolab run args` in `dir`, sends SIGINT after `after`, and waits (at most a minute).
fn interrupted(dir: &Path, args: &[&str], after: Duration) -> std::process::Output {
    let child = Command::new(env!("CARGO_BIN_EXE_iolab"))
        .arg("run")
        .args(args)
        .current_dir(dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(after);
    let pid = child.id().to_string();
    assert!(Command::new("kill")
        .args(["-INT", &pid])
        .status()
        .unwrap()
        .success());
    let t = Instant::now();
    let out = child.wait_with_output().unwrap();
    assert!(t.elapsed() < Duration::from_secs(60));
    out
}

#[test]
fn an_interrupted_run_leaves_what_it_measured_in_the_logs() {
    let d = TestDir::new("logs-sigint");
    let args = with(
        &[
            "--name=i",
            "--ioengine=null",
            "--size=64m",
            "--bs=4k",
            "--rw=randread",
        ],
        &[
            "--rate_iops=2000",
            "--runtime=60",
            "--time_based",
            "--write_iops_log=i",
            "--write_lat_log=i",
            "--log_avg_msec=100",
            "--output-format=json",
        ],
    );
    let out = interrupted(&d.path, &args, Duration::from_millis(1500));
    assert_eq!(out.status.code(), Some(130));
    let last = |kind: &str| {
        let r = rows(&d.path.join(format!("i_{kind}.1.log")));
        r.last().map_or(0, |l| l[0])
    };
    // About 1.5 s were measured: the windows up to the stop are in the files.
    assert!(last("iops") >= 1000, "iops log ends at {} ms", last("iops"));
    assert!(last("clat") >= 1000, "clat log ends at {} ms", last("clat"));
}

#[test]
fn a_run_ended_by_an_error_keeps_its_logs() {
    let d = TestDir::new("logs-error");
    // Reads of /dev/full succeed, writes fail with ENOSPC: the job stops at its first write.
    let args = [
        "--name=e",
        "--filename=/dev/full",
        "--size=1m",
        "--bs=4k",
        "--rw=randrw",
        "--rwmixread=95",
        "--write_lat_log=e",
        "--output-format=json",
    ];
    let out = d.run(&args);
    assert_eq!(out.code, Some(1), "{}", out.stderr);
    let v = out.json();
    let reads = u64_at(&v, "/jobs/0/read/total_ios");
    assert!(reads > 0, "no read before the first write");
    assert_eq!(rows(&d.path.join("e_clat.1.log")).len() as u64, reads);
}

#[test]
fn store_compressed_refuses_what_fios_format_cannot_hold() {
    let d = TestDir::new("logs-gz-refused");
    let out = d
        .run(&with(
            NULL_RW,
            &[
                "--write_hist_log=h",
                "--log_compression=4k",
                "--log_store_compressed=1",
            ],
        ))
        .fails();
    assert!(
        out.stderr.contains("log_store_compressed"),
        "{}",
        out.stderr
    );
}

#[test]
fn bandwidth_log_lines_come_every_window_while_the_run_goes() {
    let d = TestDir::new("logs-agg");
    let child = Command::new(env!("CARGO_BIN_EXE_iolab"))
        .args(["run", "--bandwidth-log", "--output-format=json"])
        .args(&PACED[..6])
        .args(["--runtime=4", "--time_based"])
        .current_dir(&d.path)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // fio 3.33 writes these lines only at the end (and only with --eta); iolab as it goes.
    std::thread::sleep(Duration::from_millis(2600));
    let early = rows(&d.path.join("agg-read_bw.log")).len();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(early >= 2, "{early} lines in the file 2.6 s into a 4 s run");
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    for (dir, name) in ["read", "write", "trim"].iter().enumerate() {
        let r = rows(&d.path.join(format!("agg-{name}_bw.log")));
        // A line each time more than 500 ms (bwavgtime) have passed since the last (whole ms here).
        assert!((5..=12).contains(&r.len()), "{name}: {} lines", r.len());
        for (a, b) in r.iter().zip(&r[1..]) {
            assert!(
                b[0] >= a[0] + 500,
                "{name}: lines at {} and {} ms",
                a[0],
                b[0]
            );
        }
        assert!(r
            .iter()
            .all(|l| (l.len(), l[2], l[3], l[4]) == (5, dir as u64, 0, 0)));
        // The middle lines are the run's bandwidth (KiB/s) of that direction.
        let bw = v
            .pointer(&format!("/jobs/0/{name}/bw"))
            .and_then(Value::as_u64);
        let mut mid: Vec<u64> = r[1..r.len() - 1].iter().map(|l| l[1]).collect();
        mid.sort_unstable();
        let median = mid[mid.len() / 2];
        let bw = bw.unwrap();
        assert!(
            median * 10 >= bw * 7 && median * 10 <= bw * 13,
            "{name}: median {median} KiB/s against {bw} in the JSON"
        );
    }
}

#[test]
fn shared_logs_hold_each_jobs_block_in_job_order_as_fio_writes_them() {
    // Regression: per_job_logs=0 files mixed the jobs' lines in the order they were written.
    let d = TestDir::new("logs-shared-order");
    let f = d.write(
        "s.fio",
        "[global]\nioengine=null\nsize=64k\nrw=read\nper_job_logs=0\nwrite_lat_log=s\n\
         [slow]\nbs=4k\nrate_iops=50\n\
         [fast]\nbs=8k\n",
    );
    d.run(&[f.to_str().unwrap(), "--output-format=json"]).ok();
    // [fast] ends long before [slow] (8 I/Os at once against 16 at 50 a second); fio 3.33
    // writes [slow]'s 16 lines first all the same, then [fast]'s 8.
    let sizes: Vec<u64> = rows(&d.path.join("s_clat.log"))
        .iter()
        .map(|l| l[3])
        .collect();
    let want: Vec<u64> = [4096; 16].into_iter().chain([8192; 8]).collect();
    assert_eq!(sizes, want);
    let left: Vec<_> = std::fs::read_dir(&d.path)
        .unwrap()
        .filter_map(|e| e.unwrap().file_name().into_string().ok())
        .filter(|n| n.ends_with(".part"))
        .collect();
    assert!(left.is_empty(), "parts left behind: {left:?}");
}

/// A paced run's bw, IOPS, latency and histogram logs (prefix `t`), windowed at 200 ms,
/// for fio's own readers.
fn logs_for_tools(name: &str) -> TestDir {
    let d = TestDir::new(name);
    json(
        &d,
        &with(
            PACED,
            &[
                "--write_bw_log=t",
                "--write_iops_log=t",
                "--write_lat_log=t",
                "--write_hist_log=t",
                "--log_hist_msec=200",
                "--log_avg_msec=200",
            ],
        ),
    );
    d
}

#[test]
fn fio2gnuplot_reads_iolabs_logs() {
    if Command::new("fio2gnuplot")
        .arg("-h")
        .stdout(Stdio::null())
        .status()
        .is_err()
    {
        iolab_testkit::skip("fio2gnuplot", &"not installed (Debian package fio)");
        return;
    }
    let d = logs_for_tools("logs-fio2gnuplot");
    succeeds_in(&d, Command::new("fio2gnuplot").args(["-b", "-d", "gp"]));
    // It averages every *_bw.log it found into result.average.
    let avg = std::fs::read_to_string(d.path.join("gp/result.average"))
        .or_else(|_| std::fs::read_to_string(d.path.join("result.average")));
    assert!(avg.is_ok_and(|t| !t.trim().is_empty()), "no averaged trace");
}

#[test]
fn fio_generate_plots_draws_iolabs_logs() {
    let gnuplot = Command::new("gnuplot").arg("--version").output().is_ok();
    if !gnuplot || !Path::new("/usr/bin/fio_generate_plots").exists() {
        iolab_testkit::skip("fio_generate_plots", &"needs fio's script and gnuplot");
        return;
    }
    let d = logs_for_tools("logs-generate-plots");
    let out = Command::new("fio_generate_plots")
        .arg("iolab")
        .current_dir(&d.path)
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{said}");
    // An SVG per log kind. (No slat: the null engine at depth 1 completes each I/O in its
    // call, as fio's does.)
    for kind in ["bw", "iops", "lat", "clat"] {
        let svg =
            std::fs::read_to_string(d.path.join(format!("iolab-{kind}.svg"))).unwrap_or_default();
        assert!(svg.contains("<path"), "{kind}: no curve drawn");
    }
}

#[test]
fn fio_histo_log_pctiles_reads_iolabs_histogram_log() {
    let script = Path::new("/usr/share/doc/fio/fio-histo-log-pctiles.py.gz");
    if !script.exists() {
        iolab_testkit::skip("fio-histo-log-pctiles.py", &"not in /usr/share/doc/fio");
        return;
    }
    let d = logs_for_tools("logs-pctiles");
    let py = d.path.join("pctiles.py");
    let unz = Command::new("sh")
        .arg("-c")
        .arg(format!("gzip -dc {} > {}", script.display(), py.display()))
        .status()
        .unwrap();
    assert!(unz.success());
    let out = Command::new("python3")
        .args([
            py.to_str().unwrap(),
            "--log-hist-msec",
            "200",
            "t_clat_hist.1.log",
        ])
        .current_dir(&d.path)
        .output();
    let Ok(out) = out else {
        iolab_testkit::skip("fio-histo-log-pctiles.py", &"no python3");
        return;
    };
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // A row per second of the run: time, samples, min, median, 95, 99, max.
    let data: Vec<&str> = text
        .lines()
        .filter(|l| l.trim_start().starts_with(char::is_numeric))
        .collect();
    assert!(!data.is_empty(), "{text}");
    assert!(
        data.iter()
            .all(|l| l.split(',').filter(|f| !f.trim().is_empty()).count() == 7),
        "{text}"
    );
}

#[test]
fn status_interval_json_is_one_object_a_line_then_the_final_report() {
    let d = TestDir::new("logs-live-json");
    let out = d
        .run(&[
            "--name=x",
            "--ioengine=null",
            "--size=64m",
            "--rw=read",
            "--rate_iops=2000",
            "--runtime=2500ms",
            "--time_based",
            "--status-interval=1",
            "--output-format=json",
        ])
        .ok();
    // Each interval: one line holding one whole object, parseable alone.
    let (live, rest): (Vec<&str>, Vec<&str>) =
        out.stdout.lines().partition(|l| l.starts_with("{\""));
    assert!(live.len() >= 2, "{}", out.stdout);
    let mut last = 0;
    for l in &live {
        let v: Value = serde_json::from_str(l).unwrap();
        let ios = u64_at(&v, "/jobs/0/read/total_ios");
        assert!(ios > last, "cumulative: {ios} after {last}");
        last = ios;
    }
    // Then the final report, as without --status-interval.
    let fin: Value = serde_json::from_str(&rest.join("\n")).unwrap();
    assert!(u64_at(&fin, "/jobs/0/read/total_ios") >= last);
}

#[test]
fn report_draws_every_log_over_time() {
    let (d, _) = logged(
        "logs-report",
        PACED,
        &[
            "--write_bw_log=r",
            "--write_iops_log=r",
            "--write_lat_log=r",
            "--write_hist_log=r",
            "--log_hist_msec=250",
        ],
    );
    let logs: Vec<String> = ["bw", "iops", "lat", "clat", "slat", "clat_hist"]
        .iter()
        .map(|k| format!("r_{k}.1.log"))
        .collect();
    let html = report_of(&d, &logs.iter().map(String::as_str).collect::<Vec<_>>());
    for id in [
        "plot-log-bw",
        "plot-log-iops",
        "plot-log-lat",
        "plot-log-pctl-0",
        "plot-log-pctl-1",
    ] {
        assert!(html.contains(&format!("id=\"{id}\"")), "{id} missing");
    }
    assert!(html.contains("r read clat") && html.contains("p99.9"));
}

/// The page `iolab report LOGS... -o report.html` draws in `d`; the command must succeed.
fn report_of(d: &TestDir, logs: &[&str]) -> String {
    let mut report = Command::new(env!("CARGO_BIN_EXE_iolab"));
    succeeds_in(
        d,
        report.arg("report").args(logs).args(["-o", "report.html"]),
    );
    std::fs::read_to_string(d.path.join("report.html")).unwrap()
}

/// `c`, run in `d`'s directory, which must succeed.
fn succeeds_in(d: &TestDir, c: &mut Command) {
    let out = c.current_dir(&d.path).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Each log file of `dir`: name, line count, and the set of column counts.
fn shapes(dir: &Path) -> Vec<(String, usize, Vec<usize>)> {
    let mut out: Vec<(String, usize, Vec<usize>)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "log"))
        .map(|p| {
            let text = std::fs::read_to_string(&p).unwrap();
            let mut cols: Vec<usize> = text.lines().map(|l| l.split(", ").count()).collect();
            cols.sort_unstable();
            cols.dedup();
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            (name, text.lines().count(), cols)
        })
        .collect();
    out.sort();
    out
}

#[test]
fn the_same_job_gives_the_same_log_files_as_fio() {
    let Ok(v) = Command::new("fio").arg("--version").output() else {
        iolab_testkit::skip("logs vs fio", &"fio is not installed");
        return;
    };
    let version = String::from_utf8_lossy(&v.stdout);
    if !version.starts_with("fio-3.") {
        iolab_testkit::skip("logs vs fio", &format!("not fio 3: {version}"));
        return;
    }
    let d = TestDir::new("logs-vs-fio");
    let job = d.write(
        "c.fio",
        "[global]\nioengine=null\nsize=256k\nbs=4k\nrw=randrw\niodepth=4\n\
         [one]\nwrite_bw_log\nwrite_iops_log=one\nwrite_lat_log=one\nlog_offset=1\n\
         [two]\nnumjobs=2\nwrite_lat_log=two\nper_job_logs=0\nlog_prio=1\n\
         [three]\nwrite_lat_log=three\nlog_avg_msec=60000\nlog_max_value=1\n",
    );
    for who in ["fio", "iolab"] {
        std::fs::create_dir_all(d.path.join(who)).unwrap();
    }
    let fio = Command::new("fio")
        .args([job.to_str().unwrap(), "--output-format=json"])
        .current_dir(d.path.join("fio"))
        .output()
        .unwrap();
    assert!(
        fio.status.success(),
        "{}",
        String::from_utf8_lossy(&fio.stderr)
    );
    let ours = Command::new(env!("CARGO_BIN_EXE_iolab"))
        .args(["run", job.to_str().unwrap(), "--output-format=json"])
        .current_dir(d.path.join("iolab"))
        .output()
        .unwrap();
    assert!(
        ours.status.success(),
        "{}",
        String::from_utf8_lossy(&ours.stderr)
    );
    // Names, a line per I/O (64 per job, 128 in the file both clones share), the columns;
    // the windowed job: one line per direction at its end.
    assert_eq!(shapes(&d.path.join("iolab")), shapes(&d.path.join("fio")));
}

#[test]
fn report_inflates_compressed_logs() {
    let (d, _) = logged(
        "logs-report-fz",
        PACED,
        &[
            "--write_iops_log=z",
            "--log_avg_msec=100",
            "--log_compression=4k",
            "--log_store_compressed=1",
        ],
    );
    let html = report_of(&d, &["z_iops.1.log.fz"]);
    assert!(html.contains("id=\"plot-log-iops\""));
}

#[test]
fn compressed_rate_logs_average_each_ios_value_in_their_windows_as_fio_3_33() {
    // fio 3.33's per_unit_log: with log_compression (stored compressed or not) each I/O is a
    // bandwidth and IOPS sample, averaged in the log's windows, and none is taken on time.
    let (d, v) = logged(
        "logs-compressed-windows",
        PACED,
        &[
            "--rw=read",
            "--write_iops_log=c",
            "--write_bw_log=c",
            "--log_avg_msec=200",
            "--log_compression=64k",
        ],
    );
    let ios = u64_at(&v, "/jobs/0/read/total_ios");
    assert_eq!(u64_at(&v, "/jobs/0/read/iops_samples"), ios);
    assert_eq!(u64_at(&v, "/jobs/0/read/bw_samples"), ios);
    let iops = rows(&d.path.join("c_iops.1.log"));
    // Each window's mean of 1s, size 0; a window may close a ms early and then again.
    assert!(iops.iter().all(|r| r[1] == 1 && r[3] == 0), "{iops:?}");
    assert!((5..=12).contains(&iops.len()), "{iops:?}");
    let bw = rows(&d.path.join("c_bw.1.log"));
    assert_eq!(bw.len(), iops.len());
    // An I/O's own rate, 4 KiB in its latency: far above the 4000 KiB/s of the run.
    assert!(bw.iter().all(|r| r[1] > 40_000), "{bw:?}");
}

#[test]
fn samples_are_taken_on_time_while_the_job_thinks() {
    // 100 I/Os at once, then 300 ms of thinktime, over and over: fio's helper thread samples
    // every 100 ms while the job sleeps, so each burst is a rate over one window (about
    // 1000 IOPS); sampled only when the think ended, it was a rate over three (333).
    let (d, v) = logged(
        "logs-think",
        &[
            "--name=t",
            "--ioengine=null",
            "--size=64m",
            "--bs=4k",
            "--rw=read",
            "--time_based",
            "--runtime=1",
        ],
        &[
            "--thinktime=300ms",
            "--thinktime_blocks=100",
            "--write_iops_log=t",
            "--log_avg_msec=100",
        ],
    );
    let r = rows(&d.path.join("t_iops.1.log"));
    // The median: a loaded machine may wake one sample late.
    let mut vals: Vec<u64> = r.iter().map(|l| l[1]).collect();
    vals.sort_unstable();
    assert!(r.len() >= 3 && vals[vals.len() / 2] > 600, "{r:?}");
    let mean = v.pointer("/jobs/0/read/iops_mean").and_then(Value::as_f64);
    assert!(mean.is_some_and(|m| m > 500.0), "{mean:?}");
}

#[test]
fn a_written_bwavgtime_keeps_its_samples_and_paces_the_bw_log() {
    // fio: log_avg_msec=200 with bwavgtime=500 written samples every 500 ms (JSON and log).
    let (d, v) = logged(
        "logs-bwavgtime",
        PACED,
        &[
            "--rw=read",
            "--runtime=2",
            "--write_bw_log=b",
            "--log_avg_msec=200",
            "--bwavgtime=500",
        ],
    );
    let r = rows(&d.path.join("b_bw.1.log"));
    assert_eq!(r.len() as u64, u64_at(&v, "/jobs/0/read/bw_samples"));
    assert!((3..=4).contains(&r.len()), "{r:?}");
    assert!(r.windows(2).all(|w| w[1][0] - w[0][0] >= 499), "{r:?}");
}

/// The CPUs of the thread named `comm` in process `pid`, once it shows up (within 10 s).
fn thread_cpus(pid: u32, comm: &str) -> Option<String> {
    let t = Instant::now();
    while t.elapsed() < Duration::from_secs(10) {
        let tasks = std::fs::read_dir(format!("/proc/{pid}/task")).ok()?;
        for task in tasks.flatten() {
            let dir = task.path();
            let name = std::fs::read_to_string(dir.join("comm")).unwrap_or_default();
            if name.trim() == comm {
                let status = std::fs::read_to_string(dir.join("status")).ok()?;
                let line = status
                    .lines()
                    .find(|l| l.starts_with("Cpus_allowed_list:"))?;
                return Some(line.split(':').nth(1)?.trim().to_string());
            }
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    None
}

#[test]
fn log_compression_cpus_pins_the_thread_that_compresses_the_logs() {
    let d = TestDir::new("logs-gz-cpus");
    let cpus = std::fs::read_to_string("/proc/self/status").unwrap();
    let mine = cpus
        .lines()
        .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
        .unwrap()
        .trim()
        .to_string();
    // The last CPU this test may use: the thread is to be there and nowhere else.
    let last = mine.rsplit([',', '-']).next().unwrap().to_string();
    let pin = format!("--log_compression_cpus={last}");
    let args = with(
        PACED,
        &[
            "--runtime=3",
            "--write_lat_log=z",
            "--log_compression=1k",
            "--log_store_compressed=1",
            &pin,
            "--output-format=json",
        ],
    );
    let child = Command::new(env!("CARGO_BIN_EXE_iolab"))
        .arg("run")
        .args(&args)
        .current_dir(&d.path)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let seen = thread_cpus(child.id(), "log-compress");
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(seen.as_deref(), Some(last.as_str()), "runs on {mine}");
    // What it compressed reads back: a line per I/O of 3 s at 1000 IOPS.
    let text = d.run(&["--inflate-log=z_clat.1.log.fz"]).ok().stdout;
    assert!(
        text.lines().count() > 1000,
        "{} lines",
        text.lines().count()
    );
    // A CPU the machine does not have: the job does not start, and says why.
    let out = d
        .run(&with(
            NULL_RW,
            &[
                "--write_lat_log=y",
                "--log_store_compressed=1",
                "--log_compression_cpus=1000",
            ],
        ))
        .fails();
    assert!(
        out.stderr.contains("log_compression_cpus"),
        "{}",
        out.stderr
    );
}
