//! verify_async: the blocks read back are checked on that many threads (named
//! `iolab-verify<i>`, pinned to verify_async_cpus), with the verdicts and messages of an
//! inline check.

#![allow(clippy::unwrap_used)]

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use super::verify::{dir, err, iolab, BS};

/// The last CPU this process may run on (the verify threads are pinned there).
fn a_cpu() -> String {
    let s = std::fs::read_to_string("/proc/self/status").unwrap();
    let list = s
        .lines()
        .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
        .unwrap()
        .trim()
        .to_string();
    list.rsplit([',', '-']).next().unwrap().to_string()
}

/// (comm, Cpus_allowed_list) of each thread of `pid`.
fn threads(pid: u32) -> Vec<(String, String)> {
    let Ok(dir) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return Vec::new();
    };
    dir.filter_map(|t| {
        let t = t.ok()?.path();
        let comm = std::fs::read_to_string(t.join("comm")).ok()?;
        let status = std::fs::read_to_string(t.join("status")).ok()?;
        let cpus = status
            .lines()
            .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))?;
        Some((comm.trim().to_string(), cpus.trim().to_string()))
    })
    .collect()
}

#[test]
fn verify_async_checks_on_its_own_threads_pinned_to_verify_async_cpus() {
    let d = dir("async-threads");
    let cpu = a_cpu();
    let child = Command::new(env!("CARGO_BIN_EXE_iolab"))
        .args([
            "run",
            "--name=v",
            "--filename=v.data",
            "--size=1m",
            "--bs=4k",
        ])
        .args([
            "--rw=write",
            "--verify=crc32c",
            "--rate=512k",
            "--verify_async=2",
        ])
        .arg(format!("--verify_async_cpus={cpu}"))
        .current_dir(&d)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let until = Instant::now() + Duration::from_secs(10);
    let mut seen = Vec::new();
    while Instant::now() < until {
        seen = threads(child.id());
        seen.retain(|(comm, _)| comm.starts_with("iolab-verify"));
        if seen.len() >= 2 {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", err(&out));
    seen.sort();
    let want = |i: u32| (format!("iolab-verify{i}"), cpu.clone());
    assert_eq!(seen, [want(0), want(1)]);
}

#[test]
fn verify_async_cpus_that_cannot_be_used_fail_the_job_with_a_reason() {
    let d = dir("async-badcpu");
    let o = iolab(
        &d,
        &[
            "--rw=write",
            "--verify=crc32c",
            "--verify_async=1",
            "--verify_async_cpus=1000",
        ],
    );
    let e = err(&o);
    assert_ne!(o.status.code(), Some(0), "{e}");
    assert!(e.contains("verify_async_cpus"), "{e}");
    assert!(!e.contains("panicked"), "{e}");
}

/// The verify lines of a run's standard error (its pid and times left out).
fn verdicts(e: &str) -> Vec<String> {
    e.lines()
        .filter(|l| l.contains("verify") && !l.contains("pid="))
        .map(str::to_string)
        .collect()
}

fn flip(f: &Path, at: u64) {
    let mut d = std::fs::read(f).unwrap();
    d[at as usize] ^= 0xff;
    std::fs::write(f, d).unwrap();
}

#[test]
fn verify_async_reports_a_corrupt_block_as_the_inline_check_does() {
    for engine in ["psync", "io_uring"] {
        let d = dir(&format!("async-corrupt-{engine}"));
        let eng = format!("--ioengine={engine}");
        let job = ["--rw=write", "--verify=md5", "--iodepth=8", eng.as_str()];
        let o = iolab(&d, &job);
        assert_eq!(o.status.code(), Some(0), "{}", err(&o));
        flip(&d.join("v.data"), 3 * BS + 100);
        let check = |extra: &[&str]| iolab(&d, &[&job[..], &["--verify_only"], extra].concat());
        let inline = check(&[]);
        let threads = check(&["--verify_async=2"]);
        let (a, b) = (err(&inline), err(&threads));
        assert_eq!(threads.status.code(), inline.status.code(), "{engine}: {b}");
        assert_ne!(threads.status.code(), Some(0), "{engine}: {b}");
        assert!(
            b.contains("corrupt block") && b.contains("offset 12288"),
            "{engine}: {b}"
        );
        // fio 3.33 names its verify thread's function.
        // On standard output: the job's line and fio's pid line (as fio 3.33 prints them).
        let out = String::from_utf8_lossy(&threads.stdout);
        assert!(
            out.contains("err=84") && out.contains("func=async_verify"),
            "{engine}: {out}"
        );
        // The same lines, but for the flags fio shows: its verify thread's io_u holds its
        // file (0x84) where the inline check's counts in the depth (0x88).
        let inline_lines: Vec<String> = verdicts(&a)
            .iter()
            .map(|l| l.replace("flags=88)", "flags=84)"))
            .collect();
        assert_eq!(verdicts(&b), inline_lines, "{engine}");
    }
}

#[test]
fn verify_async_ends_cleanly_on_sigint() {
    let d = dir("async-sigint");
    let child = Command::new(env!("CARGO_BIN_EXE_iolab"))
        .args([
            "run",
            "--name=v",
            "--filename=v.data",
            "--size=1m",
            "--bs=4k",
        ])
        .args([
            "--rw=write",
            "--verify=crc32c",
            "--rate=256k",
            "--verify_async=2",
        ])
        .current_dir(&d)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(700));
    let sent = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(sent.success());
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130), "{}", err(&out));
    assert!(!err(&out).contains("panicked"), "{}", err(&out));
}
