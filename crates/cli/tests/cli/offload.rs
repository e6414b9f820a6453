//! io_submit_mode=offload seen from outside: iodepth submitter threads, not the job thread,
//! make the I/O system calls; a synchronous engine gets iodepth I/Os in flight; every I/O is
//! counted once, at fio's depth 1 per submitter; an error or Ctrl-C ends the job and the
//! process. Each test of behaviour fails if offload is accepted and the job submits inline
//! (checked by turning the mode off in the runner).
#![allow(clippy::unwrap_used)]

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::run::{u64_at, wait, Out, TestDir};

const BIN: &str = env!("CARGO_BIN_EXE_iolab");

fn spawn(d: &TestDir, env: &[(&str, &str)], args: &[&str]) -> std::process::Child {
    let mut c = Command::new(BIN);
    c.arg("run").args(args).current_dir(&d.path);
    c.envs(env.iter().copied());
    c.stdout(Stdio::piped()).stderr(Stdio::piped());
    c.spawn().unwrap()
}

fn run(d: &TestDir, env: &[(&str, &str)], args: &[&str]) -> Out {
    let mut all = args.to_vec();
    all.push("--output-format=json");
    let out = wait(spawn(d, env, &all), Duration::from_secs(120));
    assert!(!out.stderr.contains("panicked"), "{}", out.stderr);
    out
}

fn f64_at(v: &Value, ptr: &str) -> f64 {
    v.pointer(ptr)
        .and_then(Value::as_f64)
        .unwrap_or_else(|| panic!("no number at {ptr}"))
}

/// Each thread of `pid`: (name, read system calls so far, CPUs allowed), from /proc.
fn threads(pid: u32) -> Vec<(String, u64, String)> {
    let Ok(dir) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return Vec::new();
    };
    dir.flatten()
        .filter_map(|t| {
            let comm = std::fs::read_to_string(t.path().join("comm")).ok()?;
            let io = std::fs::read_to_string(t.path().join("io")).ok()?;
            let syscr = io
                .lines()
                .find_map(|l| l.strip_prefix("syscr: "))?
                .trim()
                .parse()
                .ok()?;
            let status = std::fs::read_to_string(t.path().join("status")).ok()?;
            let cpus = status
                .lines()
                .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))?
                .trim()
                .to_string();
            Some((comm.trim().to_string(), syscr, cpus))
        })
        .collect()
}

/// A job reading a 4 MiB file with psync for 3 s on `cpu`, watched after 1.5 s: its threads'
/// names, read calls and CPUs.
fn watch_reads(d: &TestDir, mode: &str, cpu: &str) -> Vec<(String, u64, String)> {
    let file = d.path.join("data");
    std::fs::write(&file, vec![7u8; 4 << 20]).unwrap();
    let name = format!("--filename={}", file.display());
    let submit = format!("--io_submit_mode={mode}");
    let cpus = format!("--cpus_allowed={cpu}");
    let args = [
        "--name=t",
        &name,
        "--ioengine=psync",
        "--rw=randread",
        "--size=4m",
        "--iodepth=4",
        "--time_based",
        "--runtime=3",
        &submit,
        &cpus,
    ];
    let child = spawn(d, &[], &args);
    std::thread::sleep(Duration::from_millis(1500));
    let seen = threads(child.id());
    let out = wait(child, Duration::from_secs(120));
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    seen
}

#[test]
fn offloaded_reads_are_made_by_iodepth_submitter_threads_not_the_job_thread() {
    if std::fs::read_to_string("/proc/self/io").is_err() {
        iolab_testkit::skip(
            "offload submitters",
            &"/proc/PID/io is not readable (no task I/O accounting)",
        );
        return;
    }
    // A CPU this process may use, for cpus_allowed: the submitters run where the job runs.
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let mine = status
        .lines()
        .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
        .unwrap();
    let cpu = mine.trim().split([',', '-']).next().unwrap().to_string();
    let d = TestDir::new("offload-threads");
    let seen = watch_reads(&d, "offload", &cpu);
    let subs: Vec<_> = seen
        .iter()
        .filter(|(n, ..)| n.starts_with("t.0.s"))
        .collect();
    assert_eq!(subs.len(), 4, "one submitter per iodepth: {seen:?}");
    let job = seen
        .iter()
        .find(|(n, ..)| n == "t.0")
        .expect("the job thread");
    for (n, calls, cpus) in &subs {
        assert!(
            *calls > 100,
            "submitter {n} read only {calls} times: {seen:?}"
        );
        assert!(
            *calls > 10 * job.1,
            "the job thread read as much as {n}: {seen:?}"
        );
        assert_eq!(*cpus, cpu, "{n} does not run on the job's CPUs: {seen:?}");
    }
    // Inline, the same job has no submitters and its own thread reads.
    let seen = watch_reads(&d, "inline", &cpu);
    assert!(
        !seen.iter().any(|(n, ..)| n.starts_with("t.0.s")),
        "{seen:?}"
    );
    let job = seen
        .iter()
        .find(|(n, ..)| n == "t.0")
        .expect("the job thread");
    assert!(job.1 > 100, "{seen:?}");
}

#[test]
fn offload_counts_every_io_once_at_depth_one_and_keeps_iodepth_sync_ios_in_flight() {
    let d = TestDir::new("offload-counts");
    let file = d.path.join("data");
    std::fs::write(&file, vec![1u8; 1 << 20]).unwrap();
    let name = format!("--filename={}", file.display());
    let base = [
        "--name=t",
        &name,
        "--ioengine=psync",
        "--rw=randwrite",
        "--size=1m",
    ];
    let args: Vec<&str> = base
        .iter()
        .copied()
        .chain(["--iodepth=4", "--io_submit_mode=offload"])
        .collect();
    let out = run(&d, &[], &args);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    let v = out.json();
    // Every block once, as inline: 1 MiB in 4 KiB writes.
    assert_eq!(u64_at(&v, "/jobs/0/write/total_ios"), 256);
    // fio: each submitter has one I/O at a time, so the depth distribution is all 1.
    assert_eq!(f64_at(&v, "/jobs/0/iodepth_level/1"), 100.0);
    // A synchronous engine has no submission latency in fio, offloaded or not.
    assert_eq!(u64_at(&v, "/jobs/0/write/slat_ns/N"), 0);

    // Concurrency: the null engine's test delay makes each synchronous I/O take 20 ms, so a
    // second is ~50 I/Os per submitter. Four submitters do ~4 times what one does.
    let delay = [("IOLAB_TEST_NULL_DELAY_US", "20000")];
    let ios = |depth: &str| {
        let dep = format!("--iodepth={depth}");
        let a = [
            "--name=t",
            "--ioengine=null",
            "--size=1g",
            "--rw=read",
            "--time_based",
            "--runtime=1",
            "--io_submit_mode=offload",
            &dep,
        ];
        let out = run(&d, &delay, &a);
        assert_eq!(out.code, Some(0), "{}", out.stderr);
        let v = out.json();
        // clat is the submitter's call alone: at least the 20 ms it sleeps.
        assert!(f64_at(&v, "/jobs/0/read/clat_ns/mean") >= 20e6, "{v}");
        u64_at(&v, "/jobs/0/read/total_ios")
    };
    let (one, four) = (ios("1"), ios("4"));
    assert!(one <= 51, "one submitter cannot beat its 20 ms I/Os: {one}");
    assert!(
        four * 2 >= one * 5,
        "iodepth=4 gave {four} I/Os, iodepth=1 {one}"
    );
}

#[test]
fn offload_under_a_rate_issues_on_time_within_iodepth_submitters() {
    // fio's point of offload: the job issues at the rate whatever the device does. 100 I/Os
    // a second with 50 ms I/Os needs 5 in flight; with 8 submitters all 100 are issued.
    let d = TestDir::new("offload-rate");
    let delay = [("IOLAB_TEST_NULL_DELAY_US", "50000")];
    let a = [
        "--name=t",
        "--ioengine=null",
        "--size=1g",
        "--rw=read",
        "--time_based",
        "--runtime=1",
        "--rate_iops=100",
        "--iodepth=8",
        "--io_submit_mode=offload",
    ];
    let out = run(&d, &delay, &a);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    let v = out.json();
    let issued = u64_at(&v, "/jobs/0/read/total_ios");
    assert!(
        (85..=101).contains(&issued),
        "{issued} I/Os at rate_iops=100 over 1 s"
    );
    // With 2 submitters only 40 a second can be done: iodepth bounds what is out, as fio's
    // pool of iodepth io_units does, so the rate is not kept.
    let out = run(
        &d,
        &delay,
        &[&a[..7], &["--iodepth=2", "--io_submit_mode=offload"]].concat(),
    );
    let issued = u64_at(&out.json(), "/jobs/0/read/total_ios");
    assert!(
        issued <= 42,
        "{issued} I/Os from 2 submitters of 50 ms I/Os in 1 s"
    );
}

#[test]
fn a_submitter_error_ends_the_job_with_it_and_ctrl_c_ends_an_offloaded_run() {
    if !std::path::Path::new("/dev/full").exists() {
        iolab_testkit::skip(
            "offload error",
            &"no /dev/full to make writes fail with ENOSPC",
        );
        return;
    }
    let d = TestDir::new("offload-error");
    let a = [
        "--name=full",
        "--filename=/dev/full",
        "--rw=write",
        "--size=1m",
        "--ioengine=psync",
        "--iodepth=4",
        "--io_submit_mode=offload",
    ];
    let out = run(&d, &[], &a);
    assert_eq!(out.code, Some(1), "{}", out.stderr);
    let v = out.json();
    assert_eq!(u64_at(&v, "/jobs/0/error"), 28);
    // The job stopped at the error: at most one write per submitter was out.
    assert!(u64_at(&v, "/jobs/0/write/total_ios") <= 4, "{v}");

    // Ctrl-C: the job and its submitters end, the results so far are printed.
    let args = [
        "--name=t",
        "--ioengine=null",
        "--size=1g",
        "--rw=read",
        "--time_based",
        "--runtime=60",
        "--iodepth=4",
        "--io_submit_mode=offload",
        "--output-format=json",
    ];
    let delay = [("IOLAB_TEST_NULL_DELAY_US", "1000")];
    let child = spawn(&d, &delay, &args);
    let pid = child.id().to_string();
    std::thread::sleep(Duration::from_millis(1000));
    let t = Instant::now();
    let _ = Command::new("kill").args(["-INT", &pid]).status();
    let out = wait(child, Duration::from_secs(30));
    assert!(
        t.elapsed() < Duration::from_secs(10),
        "took {:?}",
        t.elapsed()
    );
    assert_eq!(out.code, Some(130), "{}", out.stderr);
    assert!(u64_at(&out.json(), "/jobs/0/read/total_ios") > 0);
}

#[test]
fn offload_refuses_what_submitters_cannot_share_before_the_start() {
    let d = TestDir::new("offload-refused");
    let file = d.path.join("data");
    let name = format!("--filename={}", file.display());
    let a = [
        "--name=t",
        &name,
        "--ioengine=psync",
        "--rw=write",
        "--size=64k",
        "--unlink_each_loop=1",
        "--io_submit_mode=offload",
    ];
    let out = run(&d, &[], &a);
    assert_eq!(out.code, Some(1), "{}", out.stderr);
    assert!(
        out.stderr.contains("io_submit_mode=offload") && out.stderr.contains("unlink_each_loop"),
        "{}",
        out.stderr
    );
}

#[test]
fn offload_refuses_io_uring_as_fio_does() {
    let d = TestDir::new("offload-uring");
    let name = format!("--filename={}", d.path.join("data").display());
    let a = [
        "--name=t",
        &name,
        "--ioengine=io_uring",
        "--rw=write",
        "--size=64k",
        "--io_submit_mode=offload",
    ];
    let out = run(&d, &[], &a);
    assert_eq!(out.code, Some(1), "{}", out.stderr);
    assert!(
        out.stderr.contains("io_submit_mode=offload") && out.stderr.contains("io_uring"),
        "{}",
        out.stderr
    );
}
