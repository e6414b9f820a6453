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

/// The buffer addresses a job's reads go to, as `--debug=mem` prints them and, where strace
/// is here, as the kernel got them.
fn buffer_offsets(d: &TestDir, align: &str) -> (Vec<u64>, Option<Vec<u64>>) {
    let args = [
        "--name=j",
        "--filename=m.data",
        "--size=64k",
        "--bs=4k",
        "--rw=randread",
        "--ioengine=psync",
        "--iodepth=1",
    ];
    let align = format!("--iomem_align={align}");
    let mut with = args.to_vec();
    with.extend([align.as_str(), "--debug=mem"]);
    let o = d.run(&with);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    let hex = |s: &str| u64::from_str_radix(s.trim().trim_start_matches("0x"), 16).ok();
    let printed: Vec<u64> = o
        .stdout
        .lines()
        .chain(o.stderr.lines())
        .filter(|l| l.starts_with("mem") && l.contains("malloc"))
        .filter_map(|l| l.rsplit(' ').next().and_then(hex))
        .map(|a| a % 4096)
        .collect();
    let traced = Command::new("strace")
        .args([
            "-f",
            "-e",
            "trace=pread64",
            "-e",
            "raw=pread64",
            "-o",
            "tr.txt",
            BIN,
            "run",
        ])
        .args(&with)
        .current_dir(&d.path)
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|_| {
            let t = std::fs::read_to_string(d.path.join("tr.txt")).unwrap();
            // pread64(fd, buf, len, off) in hex; the job's reads are 4 KiB (0x1000) long.
            t.lines()
                .filter(|l| l.contains("pread64(") && l.contains(", 0x1000, "))
                .filter_map(|l| l.split(", ").nth(1).and_then(hex))
                .map(|a| a % 4096)
                .collect()
        });
    (printed, traced)
}

#[test]
fn iomem_align_starts_each_buffer_that_far_past_a_page() {
    let d = TestDir::new("iomem-align");
    for (align, want) in [("0", 0), ("100", 100), ("512", 512), ("4096", 0)] {
        let (printed, traced) = buffer_offsets(&d, align);
        assert!(!printed.is_empty(), "no --debug=mem line");
        assert!(printed.iter().all(|a| *a == want), "{align}: {printed:?}");
        match traced {
            Some(t) => {
                assert!(!t.is_empty(), "{align}: no traced read");
                assert!(t.iter().all(|a| *a == want), "{align}: {t:?}");
            }
            None => {
                iolab_testkit::skip("iomem_align under strace", &"no strace here");
            }
        }
    }
}

#[test]
fn gtod_cpu_runs_a_time_thread_on_that_cpu_and_jobs_read_its_whole_microseconds() {
    let d = TestDir::new("gtod-cpu");
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    let cpu = (cpus - 1).to_string();
    let gtod = format!("--gtod_cpu={cpu}");
    let child = Command::new(BIN)
        .args([
            "run",
            "--name=j",
            "--filename=g.data",
            "--size=64k",
            "--bs=4k",
        ])
        .args([
            "--rw=randread",
            "--time_based",
            "--runtime=2",
            "--output-format=json",
        ])
        .arg(&gtod)
        .current_dir(&d.path)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // While it runs: a thread named iolab-gtod, bound to that CPU alone.
    let tasks = format!("/proc/{}/task", child.id());
    let mut bound = None;
    for _ in 0..150 {
        std::thread::sleep(std::time::Duration::from_millis(10));
        let Ok(dir) = std::fs::read_dir(&tasks) else {
            continue;
        };
        for t in dir.flatten() {
            let comm = std::fs::read_to_string(t.path().join("comm")).unwrap_or_default();
            if comm.trim() == "iolab-gtod" {
                let status = std::fs::read_to_string(t.path().join("status")).unwrap_or_default();
                bound = status
                    .lines()
                    .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
                    .map(|v| v.trim().to_string());
            }
        }
        // The thread binds itself once it runs: until then it has the process's CPUs.
        if bound.as_deref() == Some(cpu.as_str()) {
            break;
        }
    }
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(bound.as_deref(), Some(cpu.as_str()));
    // The jobs' latencies are whole microseconds: the time the thread kept.
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let pct = json.pointer("/jobs/0/read/clat_ns/percentile").unwrap();
    let max = json
        .pointer("/jobs/0/read/lat_ns/max")
        .and_then(|v| v.as_u64())
        .unwrap();
    assert_eq!(max % 1000, 0, "lat max {max}");
    assert!(u64_at(&json, "/jobs/0/read/total_ios") > 0);
    assert!(pct.as_object().is_some_and(|p| !p.is_empty()));
    // A CPU the machine lacks is refused, naming it.
    let o = d.run(&[
        "--name=j",
        "--filename=g.data",
        "--size=64k",
        "--gtod_cpu=4096",
    ]);
    assert_eq!(o.code, Some(1));
    assert!(
        o.stderr.contains("gtod_cpu: CPU 4096 too large"),
        "{}",
        o.stderr
    );
}

/// What a write job did, as strace counts it (None without strace).
fn write_calls(d: &TestDir, engine: &str, barrier: &str) -> Option<String> {
    let o = Command::new("strace")
        .args([
            "-f",
            "-c",
            "-o",
            "calls.txt",
            BIN,
            "run",
            "--name=j",
            "--filename=w.data",
        ])
        .args([
            "--size=256k",
            "--bs=4k",
            "--rw=write",
            "--output-format=json",
        ])
        .arg(format!("--ioengine={engine}"))
        .arg(format!("--write_barrier={barrier}"))
        .current_dir(&d.path)
        .output()
        .ok()
        .filter(|o| o.status.success())?;
    assert!(o.status.success());
    let t = std::fs::read_to_string(d.path.join("calls.txt")).unwrap();
    let mut calls: Vec<String> = t
        .lines()
        .filter(|l| {
            [
                "pwrite64",
                "io_submit",
                "io_uring_enter",
                "fsync",
                "fdatasync",
                "sync_file_range",
            ]
            .iter()
            .any(|c| l.ends_with(&format!(" {c}")))
        })
        .map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            match f[f.len() - 1] {
                "io_uring_enter" => "io_uring_enter".to_string(),
                c => format!("{c}={}", f[3]),
            }
        })
        .collect();
    calls.sort();
    Some(calls.join(" "))
}

#[test]
fn write_barrier_issues_what_fio_3_33_issues_the_same_writes_as_without() {
    // fio 3.33 marks every Nth write a barrier only for engines with barriers (libpmem and
    // dev-dax, absent here; binject is gone): with psync, libaio and io_uring it issues the
    // same system calls with write_barrier=2 as without (strace -c: pwrite64=64,
    // io_submit=64, io_uring_enter=128 for 64 writes of 4k). So does iolab. io_uring_enter's
    // count is not compared: a submit also reaps what has completed by then (as fio's commit does), so
    // whether a wait follows depends on timing, not on the option.
    let d = TestDir::new("write-barrier");
    // The first run lays the file out (and syncs it); the compared runs overwrite it.
    let _ = write_calls(&d, "psync", "0");
    for engine in ["psync", "libaio", "io_uring"] {
        let Some(without) = write_calls(&d, engine, "0") else {
            iolab_testkit::skip("write_barrier under strace", &"no strace here");
            return;
        };
        assert!(!without.is_empty(), "{engine}");
        assert_eq!(write_calls(&d, engine, "2").unwrap(), without, "{engine}");
    }
}

#[test]
fn block_error_percentiles_counts_each_blocks_trims() {
    let d = TestDir::new("block-error-pct");
    let args = [
        "--name=j",
        "--filename=t.data",
        "--size=256k",
        "--bs=4k",
        "--rw=randtrim",
    ];
    let mut on = args.to_vec();
    on.extend([
        "--loops=3",
        "--block_error_percentiles=1",
        "--percentile_list=10:50:99.5",
    ]);
    let o = d.run(&on);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    // 64 blocks of 4k, each trimmed once per loop.
    assert!(
        o.stdout.contains(
            "  block lifetime percentiles :\n   | 10.00th=3, 50.00th=3, 99.50th=3\n        \
             states               : unwritten=0, trimmed=64, written=0, trim failure=0, write failure=0\n"
        ),
        "{}",
        o.stdout
    );
    // Half the span trimmed once: the other half stays unwritten and out of the percentiles.
    let mut half = args.to_vec();
    half.extend(["--io_size=128k", "--rw=trim", "--block_error_percentiles=1"]);
    let o = d.run(&half);
    assert!(
        o.stdout.contains("unwritten=32, trimmed=32,"),
        "{}",
        o.stdout
    );
    assert!(o.stdout.contains(" 1.00th=1,"), "{}", o.stdout);
    // Without the option there is no such part.
    let o = d.run(&args);
    assert_eq!(o.code, Some(0));
    assert!(!o.stdout.contains("block lifetime"), "{}", o.stdout);
    // As fio: one file only.
    let o = d.run(&[
        "--name=j",
        "--nrfiles=2",
        "--size=64k",
        "--rw=trim",
        "--block_error_percentiles=1",
    ]);
    assert_eq!(o.code, Some(1));
    assert!(
        o.stderr
            .contains("only available with a single file per job, but 2 files"),
        "{}",
        o.stderr
    );
}

#[test]
fn profile_tiobench_runs_fios_four_jobs_over_four_files() {
    let d = TestDir::new("profile-tiobench");
    let o = d.run(&[
        "--io_size=16k",
        "--profile=tiobench",
        "--block=8192",
        "--output-format=json",
    ]);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    assert!(o.stderr.contains("--block is ignored"), "{}", o.stderr);
    let json: serde_json::Value = serde_json::from_str(&o.stdout).unwrap();
    let jobs = json["jobs"].as_array().unwrap();
    let seen: Vec<(String, u64, u64, u64)> = jobs
        .iter()
        .map(|j| {
            let name = j["jobname"].as_str().unwrap().to_string();
            (
                name,
                u64_at(j, "/groupid"),
                u64_at(j, "/write/io_bytes"),
                u64_at(j, "/read/io_bytes"),
            )
        })
        .collect();
    let want = [
        ("seqwrite", 0, 16384, 0),
        ("randwrite", 1, 16384, 0),
        ("seqread", 2, 0, 16384),
        ("randread", 3, 0, 16384),
    ];
    let want: Vec<(String, u64, u64, u64)> = want
        .iter()
        .map(|(n, g, w, r)| (n.to_string(), *g, *w, *r))
        .collect();
    assert_eq!(seen, want);
    // Four files of a quarter of 4*1024*$mb_memory bytes each, in the current directory.
    let mib = std::fs::read_to_string("/proc/meminfo")
        .unwrap()
        .lines()
        .find_map(|l| l.strip_prefix("MemTotal:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .unwrap()
        / 1024;
    for i in 1..=4 {
        let len = std::fs::metadata(d.path.join(format!(".fio.tio.{i}")))
            .unwrap()
            .len();
        assert_eq!(len, 4 * 1024 * mib / 4, "file {i}");
    }
    // In a job file `profile=` only names it: the job runs as written, alone.
    d.write(
        "p.fio",
        "[j]\nprofile=tiobench\nfilename=p.data\nsize=16k\n",
    );
    let o = d.run(&["p.fio", "--output-format=json"]);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    let json: serde_json::Value = serde_json::from_str(&o.stdout).unwrap();
    assert_eq!(json["jobs"].as_array().unwrap().len(), 1);
    let o = d.run(&["--profile=bogus"]);
    assert_eq!(o.code, Some(1));
    assert!(
        o.stderr.contains("profile 'bogus' not found"),
        "{}",
        o.stderr
    );
}

#[test]
fn profile_act_runs_its_jobs_and_prints_fios_slice_table() {
    let d = TestDir::new("profile-act");
    let dev = d.path.join("act.img");
    std::fs::File::create(&dev)
        .unwrap()
        .set_len(16 << 20)
        .unwrap();
    let names = format!("--device-names={}", dev.display());
    let o = d.run(&[
        "--profile=act",
        &names,
        "--test-duration=1",
        "--threads-per-queue=2",
    ]);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    // One hour-long slice (the test is shorter), the same shares under trans and device.
    let table = "        trans                   device\n        %>(ms)                  %>(ms)\n \
                 slice\t  1\t  8\t 64\t  1\t  8\t 64\n -----  -----   -----  ------   -----   -----  ------\n    1\t";
    assert!(o.stdout.contains(table), "{}", o.stdout);
    assert!(
        o.stdout.contains("\nact: test complete, device(s): "),
        "{}",
        o.stdout
    );
    // act's jobs: 2 readers of 1536 bytes and a writer of 128 KiB, reported as one group.
    assert!(
        o.stdout.contains("rw=randread, bs=(R) 1536B-1536B"),
        "{}",
        o.stdout
    );
    assert!(
        o.stdout.contains("rw=randwrite, bs=(R) 128KiB-128KiB"),
        "{}",
        o.stdout
    );
    assert!(o.stdout.contains("(groupid=0, jobs=3)"), "{}", o.stdout);
    // With JSON on standard output the table goes to standard error.
    let o = d.run(&[
        "--profile=act",
        &names,
        "--test-duration=1",
        "--output-format=json",
    ]);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    assert!(o.stderr.contains("act: test complete"), "{}", o.stderr);
    let json: serde_json::Value = serde_json::from_str(&o.stdout).unwrap();
    assert!(u64_at(&json, "/jobs/0/read/total_ios") > 0);
    // As fio: act needs its devices.
    let o = d.run(&["--profile=act"]);
    assert_eq!(o.code, Some(1));
    assert!(o.stderr.contains("device-names option"), "{}", o.stderr);
}

#[test]
fn openfiles_logs_each_files_open_and_close_in_write_iolog_as_fio() {
    let d = TestDir::new("openfiles-iolog");
    let o = d.run(&[
        "--name=j",
        "--nrfiles=3",
        "--openfiles=1",
        "--size=48k",
        "--bs=16k",
        "--rw=read",
        "--write_iolog=io.log",
    ]);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    let log = std::fs::read_to_string(d.path.join("io.log")).unwrap();
    // fio 3.33's log of the same job, times left out.
    let got: Vec<String> = log
        .lines()
        .skip(1)
        .map(|l| l.split_once(' ').map_or(l, |x| x.1).to_string())
        .collect();
    let mut want: Vec<String> = ["j.0.0 add", "j.0.1 add", "j.0.2 add"]
        .map(String::from)
        .to_vec();
    for f in ["j.0.0", "j.0.1", "j.0.2"] {
        want.extend([
            format!("{f} open"),
            format!("{f} read 0 16384"),
            format!("{f} close"),
        ]);
    }
    assert_eq!(got, want, "{log}");
}
