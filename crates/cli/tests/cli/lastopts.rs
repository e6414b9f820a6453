//! fio's last job options (openfiles, iomem_align, gtod_cpu, block_error_percentiles,
//! write_barrier, profile), each shown acting: every test fails if its option is accepted and
//! ignored.
#![allow(clippy::unwrap_used)]

use std::collections::{HashMap, HashSet};
use std::process::Command;

use crate::run::{u64_at, TestDir};

const BIN: &str = env!("CARGO_BIN_EXE_iolab");

/// Under `strace -f -e trace=openat,close`, the job's data files (`j.*` opened read-only):
/// the most open at once and how many different ones were opened. None without strace.
fn traced_opens(d: &TestDir, args: &[&str]) -> Option<(usize, usize)> {
    let mut cmd = Command::new("strace");
    cmd.args(["-f", "-e", "trace=openat,close", "-o", "tr.txt", BIN, "run"])
        .args(args)
        .current_dir(&d.path);
    let out = cmd.output().ok().filter(|o| o.status.success())?;
    assert!(out.status.success());
    let text = std::fs::read_to_string(d.path.join("tr.txt")).unwrap();
    // An open split by another thread's call ("<unfinished ...>" ... "resumed>") is joined
    // by its pid.
    let mut pending: HashMap<&str, &str> = HashMap::new();
    let (mut open, mut seen) = (HashSet::new(), HashSet::new());
    let mut most = 0;
    for line in text.lines() {
        let (pid, call) = line.split_once(' ').unwrap_or(("", line));
        let call = call.trim_start();
        let data = |c: &str| c.contains("openat(") && c.contains("\"j.") && c.contains("O_RDONLY");
        let (path_call, result) = if call.ends_with("<unfinished ...>") {
            if data(call) {
                pending.insert(pid, call);
            }
            continue;
        } else if call.starts_with("<... openat resumed>") {
            match pending.remove(pid) {
                Some(c) => (c, call),
                None => continue,
            }
        } else {
            (call, call)
        };
        let fd = result
            .rsplit("= ")
            .next()
            .and_then(|v| v.trim().parse::<i64>().ok());
        if data(path_call) {
            let name = path_call.split('"').nth(1).unwrap_or("").to_string();
            if let Some(fd) = fd.filter(|f| *f >= 0) {
                open.insert(fd);
                seen.insert(name);
                most = most.max(open.len());
            }
        } else if let Some(arg) = call.strip_prefix("close(") {
            if let Ok(fd) = arg.split(')').next().unwrap_or("").parse::<i64>() {
                open.remove(&fd);
            }
        }
    }
    Some((most, seen.len()))
}

#[test]
fn openfiles_keeps_at_most_that_many_files_open() {
    let d = TestDir::new("openfiles-strace");
    let base = [
        "--name=j",
        "--nrfiles=6",
        "--size=192k",
        "--bs=16k",
        "--output-format=json",
    ];
    for (mode, extra) in [("read", "--rw=read"), ("random", "--rw=randread")] {
        let fst = format!(
            "--file_service_type={}",
            if mode == "read" {
                "roundrobin"
            } else {
                "random"
            }
        );
        let mut limited = base.to_vec();
        limited.extend([extra, fst.as_str(), "--openfiles=2"]);
        let Some((most, files)) = traced_opens(&d, &limited) else {
            iolab_testkit::skip("openfiles under strace", &"no strace here");
            return;
        };
        assert_eq!((most, files), (2, 6), "{mode}: openfiles=2");
        // Without the option every file is open at once.
        let mut all = base.to_vec();
        all.extend([extra, fst.as_str()]);
        let (most, files) = traced_opens(&d, &all).unwrap();
        assert_eq!((most, files), (6, 6), "{mode}: no openfiles");
    }
}

#[test]
fn openfiles_reads_every_file_in_full_one_set_at_a_time() {
    let d = TestDir::new("openfiles-debug");
    let o = d.run(&[
        "--name=j",
        "--nrfiles=5",
        "--openfiles=2",
        "--size=160k",
        "--bs=16k",
        "--rw=read",
        "--debug=file",
        "--output-format=json",
    ]);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    // The job's lines: each open and close, in order.
    let (mut open, mut most, mut opened) = (HashSet::new(), 0, Vec::new());
    for l in o.stderr.lines().chain(o.stdout.lines()) {
        if let Some(p) = l.split_once("fd open ").map(|x| x.1.trim().to_string()) {
            open.insert(p.clone());
            opened.push(p);
            most = most.max(open.len());
        } else if let Some(p) = l.split_once("fd close ").map(|x| x.1.trim()) {
            open.remove(p);
        }
    }
    assert_eq!(most, 2, "{}", o.stderr);
    // As fio: the first two in turn until both are done, then the next two, then the last.
    let names: Vec<&str> = opened
        .iter()
        .map(|p| p.rsplit('/').next().unwrap())
        .collect();
    assert_eq!(names, ["j.0.0", "j.0.1", "j.0.2", "j.0.3", "j.0.4"]);
    let json: serde_json::Value = serde_json::from_str(&o.stdout).unwrap();
    assert_eq!(u64_at(&json, "/jobs/0/read/io_bytes"), 160 * 1024);
}
