//! fio's remaining file, I/O and timing options, each shown acting (every test here fails if
//! its option is accepted and ignored), and the report's empty group headers.
#![allow(clippy::unwrap_used)]

use std::collections::HashMap;

use crate::run::{u64_at, TestDir};

/// `--debug=io` lines of a run: (queue or complete, io_u slot, offset, length).
fn io_lines(stderr_and_out: &str) -> Vec<(bool, String, u64, u64)> {
    let hex = |s: &str| u64::from_str_radix(s.trim_start_matches("0x"), 16).unwrap();
    stderr_and_out
        .lines()
        .filter_map(|l| {
            let (kind, rest) = if let Some(r) = l.split_once("queue: io_u ") {
                (true, r.1)
            } else {
                (false, l.split_once("complete: io_u ")?.1)
            };
            let (slot, rest) = rest.split_once(": off=")?;
            let (off, rest) = rest.split_once(",len=")?;
            let len = rest.split(',').next()?;
            Some((kind, slot.to_string(), hex(off), hex(len)))
        })
        .collect()
}

/// How many queued I/Os overlapped one already in flight.
fn overlapping_issues(lines: &[(bool, String, u64, u64)]) -> usize {
    let mut in_flight: HashMap<&str, (u64, u64)> = HashMap::new();
    let mut overlaps = 0;
    for (queued, slot, off, len) in lines {
        if *queued {
            let hit = in_flight
                .iter()
                .any(|(s, (o, l))| s != slot && *o < off + len && *off < o + l);
            overlaps += usize::from(hit);
            in_flight.insert(slot, (*off, *len));
        } else {
            in_flight.remove(slot.as_str());
        }
    }
    overlaps
}

#[test]
fn serialize_overlap_never_issues_over_io_in_flight() {
    let d = TestDir::new("serialize-overlap");
    let run = |on: &str| {
        let o = d
            .run(&[
                "--name=t",
                "--ioengine=io_uring",
                "--filename=f",
                "--size=16k",
                "--io_size=256k",
                "--rw=randwrite",
                "--norandommap",
                "--iodepth=8",
                "--debug=io",
                on,
            ])
            .ok();
        let lines = io_lines(&format!("{}{}", o.stdout, o.stderr));
        assert_eq!(lines.iter().filter(|l| l.0).count(), 64, "{}", o.stderr);
        overlapping_issues(&lines)
    };
    // Four blocks and eight in flight: without the option, overlaps are certain.
    assert!(run("--serialize_overlap=0") > 0);
    assert_eq!(run("--serialize_overlap=1"), 0);
}

#[test]
fn clocksource_gettimeofday_reads_whole_microseconds() {
    let d = TestDir::new("clocksource");
    let lat = |src: &str| {
        let v = d
            .run(&[
                "--name=t",
                "--ioengine=null",
                "--size=4m",
                "--rw=randread",
                src,
                "--output-format=json",
            ])
            .ok()
            .json();
        ["clat_ns", "lat_ns"]
            .iter()
            .flat_map(|k| ["min", "max"].map(|m| u64_at(&v, &format!("/jobs/0/read/{k}/{m}"))))
            .collect::<Vec<u64>>()
    };
    let tod = lat("--clocksource=gettimeofday");
    assert!(tod.iter().all(|n| n % 1000 == 0), "{tod:?}");
    // clock_gettime reads nanoseconds: among 1024 I/Os' extremes, some are not whole µs.
    let ns = lat("--clocksource=clock_gettime");
    assert!(ns.iter().any(|n| n % 1000 != 0), "{ns:?}");
}

#[test]
fn create_serialize_0_lays_out_each_jobs_files_in_its_own_thread() {
    let d = TestDir::new("create-serialize");
    let layout_tids = |serialize: &str| {
        for i in 0..2 {
            let _ = std::fs::remove_file(d.path.join(format!("t.{i}")));
        }
        let o = d
            .run(&[
                "--name=t",
                "--filename_format=t.$jobnum",
                "--size=64k",
                "--rw=write",
                "--numjobs=2",
                "--debug=file",
                serialize,
            ])
            .ok();
        let tids: Vec<String> = o
            .stdout
            .lines()
            .chain(o.stderr.lines())
            .filter(|l| l.contains(" layout "))
            .filter_map(|l| l.split_whitespace().nth(1).map(str::to_string))
            .collect();
        assert_eq!(tids.len(), 2, "{}{}", o.stdout, o.stderr);
        tids
    };
    let serial = layout_tids("--create_serialize=1");
    assert_eq!(serial[0], serial[1], "one thread lays out both, in turn");
    let parallel = layout_tids("--create_serialize=0");
    assert_ne!(parallel[0], parallel[1], "each job lays out its own");
}

#[test]
fn lockfile_jobs_sharing_a_file_run_to_the_end() {
    let d = TestDir::new("lockfile");
    for mode in ["exclusive", "readwrite", "none"] {
        let lock = format!("--lockfile={mode}");
        let v = d
            .run(&[
                "--filename=shared",
                "--size=256k",
                "--bs=4k",
                "--ioengine=psync",
                &lock,
                "--name=w",
                "--rw=randwrite",
                "--name=r",
                "--rw=randread",
                "--output-format=json",
            ])
            .ok()
            .json();
        assert_eq!(u64_at(&v, "/jobs/0/write/total_ios"), 64, "{mode}");
        assert_eq!(u64_at(&v, "/jobs/1/read/total_ios"), 64, "{mode}");
    }
}

#[test]
fn atomic_is_refused_naming_the_device_and_the_reason() {
    // zonemode=zbd on a file is emulated as fio does (tests in zbd.rs).
    let d = TestDir::new("atomic-zbd");
    let base = ["--name=t", "--filename=f", "--size=64k", "--rw=write"];
    let refused = |opt: &str| {
        let mut a = base.to_vec();
        a.push(opt);
        d.run(&a).fails().stderr
    };
    // This check is of the machine: where the device has atomic writes, the refusal says
    // that iolab does not issue them; elsewhere it says the device has none.
    let atomic = refused("--atomic=1");
    assert!(atomic.contains("atomic=1"), "{atomic}");
    assert!(
        atomic.contains("atomic_write_unit_max_bytes") || atomic.contains("RWF_ATOMIC"),
        "{atomic}"
    );
}

#[test]
fn stats_0_and_create_only_keep_fios_empty_group_header() {
    let d = TestDir::new("empty-group");
    for extra in ["--stats=0", "--create_only=1"] {
        let o = d
            .run(&[
                "--name=t",
                "--filename=f",
                "--size=64k",
                "--rw=write",
                extra,
            ])
            .ok();
        assert!(
            o.stdout.contains("\nRun status group 0 (all jobs):\n"),
            "{extra}: {}",
            o.stdout
        );
        assert!(!o.stdout.contains("WRITE: bw="), "{extra}: {}", o.stdout);
    }
}

/// A tmpfs of `size` mounted on `dir` for the length of a test; None (with the reason
/// printed) where mounting is not allowed.
struct SmallFs(std::path::PathBuf);

impl SmallFs {
    fn mount(dir: &std::path::Path, size: &str) -> Option<SmallFs> {
        std::fs::create_dir_all(dir).unwrap();
        let o = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(dir)
            .output()
            .ok()?;
        if !o.status.success() {
            let why = String::from_utf8_lossy(&o.stderr);
            iolab_testkit::skip("fill_device", &format!("cannot mount a tmpfs: {why}"));
            return None;
        }
        Some(SmallFs(dir.to_path_buf()))
    }
}

impl Drop for SmallFs {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount").arg(&self.0).status();
    }
}

#[test]
fn fill_device_writes_until_enospc_and_reports_no_error() {
    let d = TestDir::new("fill-device");
    let Some(_fs) = SmallFs::mount(&d.path.join("small"), "1m") else {
        return;
    };
    let o = d
        .run(&[
            "--name=t",
            "--filename=small/f",
            "--fill_device=1",
            "--rw=write",
            "--bs=4k",
            "--output-format=json",
        ])
        .ok();
    let v = o.json();
    assert_eq!(u64_at(&v, "/jobs/0/error"), 0);
    assert_eq!(u64_at(&v, "/jobs/0/write/io_bytes"), 1 << 20, "{v}");
    assert!(
        o.stderr
            .contains("io_u error on file small/f: No space left on device"),
        "{}",
        o.stderr
    );
    // Without fill_device the same ENOSPC is the job's error, as in fio.
    let o = d.run(&[
        "--name=t",
        "--filename=small/g",
        "--size=2m",
        "--fallocate=none",
        "--rw=write",
        "--bs=4k",
    ]);
    assert!(o.stdout.contains("err=28"), "{}{}", o.stdout, o.stderr);
}

#[test]
fn unlink_each_loop_removes_the_files_between_loops() {
    let d = TestDir::new("unlink-each-loop");
    let size_after = |unlink: &str| {
        // A larger file than the job writes: removed and made again, only the job's 64 KiB
        // are left; kept, its 256 KiB stay.
        std::fs::write(d.path.join("f"), vec![7u8; 256 << 10]).unwrap();
        let o = d
            .run(&[
                "--name=t",
                "--filename=f",
                "--size=64k",
                "--rw=write",
                "--loops=3",
                unlink,
                "--output-format=json",
            ])
            .ok();
        assert_eq!(u64_at(&o.json(), "/jobs/0/write/io_bytes"), 192 << 10);
        std::fs::metadata(d.path.join("f")).unwrap().len()
    };
    assert_eq!(size_after("--unlink_each_loop=1"), 64 << 10);
    assert_eq!(size_after("--unlink_each_loop=0"), 256 << 10);
    // A job that only reads finds its file gone at the second loop, as fio's does.
    let o = d.run(&[
        "--name=t",
        "--filename=r",
        "--size=64k",
        "--rw=read",
        "--loops=2",
        "--unlink_each_loop=1",
    ]);
    assert!(o.stdout.contains("err= 2"), "{}", o.stdout);
}

#[test]
fn mem_allocates_buffers_where_fio_would_and_they_carry_the_data() {
    let d = TestDir::new("mem");
    for (mem, line) in [
        ("malloc", "malloc 4096 "),
        ("shm", "shmat "),
        ("mmap", "mmap 4096/-1 "),
        ("mmapshared", "mmap 4096/-1 "),
    ] {
        let m = format!("--mem={mem}");
        let o = d
            .run(&[
                "--name=t",
                "--filename=f",
                "--size=64k",
                "--rw=write",
                "--ioengine=libaio",
                "--iodepth=4",
                "--buffer_pattern=0xab",
                "--debug=mem",
                &m,
            ])
            .ok();
        let text = format!("{}{}", o.stdout, o.stderr);
        let n = text.lines().filter(|l| l.contains(line)).count();
        assert_eq!(n, 4, "{mem}: one line per buffer:\n{text}");
        let data = std::fs::read(d.path.join("f")).unwrap();
        assert!(
            data.len() == 64 << 10 && data.iter().all(|&b| b == 0xab),
            "{mem}"
        );
    }
    // Huge pages: refused with the reason where none are reserved (fio crashes there).
    let reserved = std::fs::read_to_string("/proc/meminfo")
        .unwrap()
        .lines()
        .any(|l| l.starts_with("HugePages_Total:") && !l.ends_with(" 0"));
    if reserved {
        iolab_testkit::skip(
            "mem=mmaphuge refusal",
            &"this machine has huge pages reserved",
        );
        return;
    }
    let o = d
        .run(&[
            "--name=t",
            "--filename=f",
            "--size=64k",
            "--rw=write",
            "--mem=mmaphuge",
        ])
        .fails();
    assert!(o.stderr.contains("HugePages_Total: 0"), "{}", o.stderr);
}

#[test]
fn each_loop_closes_and_reopens_the_files_as_fio_does() {
    // fio drops a file's cache again at every loop (and every pass of a time_based job) by
    // opening it again; without that, a buffered job's later passes read from the cache.
    let d = TestDir::new("each-loop");
    let opens = |more: &[&str]| {
        let mut a = vec![
            "--name=t",
            "--filename=f",
            "--size=64k",
            "--bs=16k",
            "--rw=read",
            "--debug=file",
        ];
        a.extend_from_slice(more);
        let o = d.run(&a).ok();
        let text = format!("{}{}", o.stdout, o.stderr);
        text.lines().filter(|l| l.contains("fd open f")).count()
    };
    assert_eq!(opens(&["--loops=3"]), 3);
    assert_eq!(opens(&["--loops=3", "--invalidate=0"]), 1);
    assert_eq!(opens(&[]), 1);
}

#[test]
fn a_local_trigger_stops_the_run_runs_its_command_and_exits_0() {
    let d = TestDir::new("trigger");
    let job = [
        "--name=t",
        "--ioengine=null",
        "--size=1m",
        "--time_based",
        "--runtime=60",
        "--output-format=json",
    ];
    let run = |more: &[&str]| {
        let mut a = job.to_vec();
        a.extend_from_slice(more);
        d.run(&a).ok().json()
    };
    let v = run(&[
        "--trigger-timeout=200ms",
        "--trigger=echo fired > fired.txt",
    ]);
    let ms = u64_at(&v, "/jobs/0/read/runtime");
    assert!(ms < 60_000, "the 60 s job was stopped: {ms}");
    let said = std::fs::read_to_string(d.path.join("fired.txt")).unwrap();
    assert_eq!(said, "fired\n");
    // The file is there from the start: the trigger fires at once (the 60 s job does not
    // run out its time) and removes it.
    d.write("go", "");
    run(&["--trigger-file=go"]);
    assert!(!d.path.join("go").exists(), "fio removes the trigger file");
}

#[test]
fn sync_file_range_syncs_every_n_writes_timed_as_fios_syncs() {
    let d = TestDir::new("sync-file-range");
    let syncs = |engine: &str, opt: &str| {
        let e = format!("--ioengine={engine}");
        let o = d.run(&[
            "--name=t",
            "--filename=f",
            "--size=64k",
            "--rw=write",
            &e,
            opt,
            "--output-format=json",
        ]);
        (o.code, o.json(), o.stderr)
    };
    // 16 writes, a call after each 4 but the last: 3, as fio 3.33 reports (sync lat N=3,
    // total_ios 0).
    for engine in ["psync", "libaio", "io_uring"] {
        let (code, v, err) = syncs(engine, "--sync_file_range=wait_before,write:4");
        assert_eq!(code, Some(0), "{engine}: {err}");
        assert_eq!(u64_at(&v, "/jobs/0/sync/lat_ns/N"), 3, "{engine}");
        assert_eq!(u64_at(&v, "/jobs/0/sync/total_ios"), 0, "{engine}");
    }
    let (_, v, _) = syncs("psync", "--sync_file_range=write");
    assert_eq!(u64_at(&v, "/jobs/0/sync/lat_ns/N"), 15);
    // An engine without it says so.
    let (code, _, err) = syncs("mmap", "--sync_file_range=write");
    assert_eq!(code, Some(1));
    assert!(err.contains("sync_file_range"), "{err}");
}

#[test]
fn opendir_adds_every_file_below_each_at_its_own_size() {
    let d = TestDir::new("opendir");
    std::fs::create_dir_all(d.path.join("od/sub")).unwrap();
    std::fs::write(d.path.join("od/a"), vec![1u8; 64 << 10]).unwrap();
    std::fs::write(d.path.join("od/sub/b"), vec![2u8; 32 << 10]).unwrap();
    std::fs::write(d.path.join("big"), vec![3u8; 256 << 10]).unwrap();
    let run = |more: &[&str]| {
        let mut a = vec!["--name=t", "--opendir=od", "--rw=read", "--bs=4k"];
        a.extend_from_slice(more);
        d.run(&a).ok()
    };
    // What fio 3.33 reads for the same files: 96 KiB, and 352 KiB with the filename too.
    let o = run(&[]);
    assert!(
        o.stdout.contains("fio: opendir added 2 files"),
        "{}",
        o.stdout
    );
    assert!(o.stdout.contains("io=96.0KiB"), "{}", o.stdout);
    let o = run(&["--filename=big"]);
    assert!(o.stdout.contains("io=352KiB"), "{}", o.stdout);
    // With JSON on standard output, the line goes to standard error.
    let o = run(&["--output-format=json"]);
    assert_eq!(u64_at(&o.json(), "/jobs/0/read/io_bytes"), 96 << 10);
    assert!(o.stderr.contains("opendir added 2 files"));
    let o = d
        .run(&["--name=t", "--opendir=missing", "--rw=read"])
        .fails();
    assert!(o.stderr.contains("opendir(missing)"), "{}", o.stderr);
}

#[test]
fn regression_fsync_n_synced_after_the_last_writes_where_fio_does_not() {
    // fio 3.33: 16 writes with fsync=4 give 3 syncs (each is due when the next I/O is asked
    // for); iolab gave 4. Its sync total_ios counts the fsyncs alone, its latency both.
    let d = TestDir::new("fsync-count");
    for (opt, engine, total) in [("--fsync=4", "psync", 3), ("--fdatasync=4", "libaio", 0)] {
        let e = format!("--ioengine={engine}");
        let o = d
            .run(&[
                "--name=t",
                "--filename=f",
                "--size=64k",
                "--rw=write",
                &e,
                opt,
                "--output-format=json",
            ])
            .ok();
        let v = o.json();
        assert_eq!(u64_at(&v, "/jobs/0/sync/total_ios"), total, "{opt}");
        assert_eq!(u64_at(&v, "/jobs/0/sync/lat_ns/N"), 3, "{opt}");
        assert_eq!(u64_at(&v, "/jobs/0/write/total_ios"), 16, "{opt}");
    }
}

#[test]
fn fsync_n_over_several_files_syncs_the_file_whose_turn_it_is() {
    // fio 3.33 (strace, nrfiles=3 fsync=2): the sync goes to the file whose turn it is;
    // iolab synced file 0 every time, a file that had perhaps not been written since. The
    // sync takes that turn: the write after it goes to the file after (fio's write_iolog).
    let d = TestDir::new("fsync-files");
    d.run(&[
        "--name=t",
        "--nrfiles=3",
        "--size=36k",
        "--bs=4k",
        "--rw=write",
        "--fsync=2",
        "--write_iolog=log",
    ])
    .ok();
    let log = std::fs::read_to_string(d.path.join("log")).unwrap();
    // (file, action) of each I/O line: "time file action offset length".
    let ios: Vec<(&str, &str)> = log
        .lines()
        .filter_map(|l| match l.split(' ').collect::<Vec<_>>()[..] {
            [_, f, a @ ("write" | "sync"), _, _] => Some((f, a)),
            _ => None,
        })
        .collect();
    let syncs: Vec<usize> = (0..ios.len()).filter(|&i| ios[i].1 == "sync").collect();
    assert_eq!(syncs.len(), 4, "{log}");
    let next = |f: &str| match f {
        "t.0.0" => "t.0.1",
        "t.0.1" => "t.0.2",
        _ => "t.0.0",
    };
    // While all three files take turns (before the first is done and closed).
    let turns = log.lines().take_while(|l| !l.ends_with(" close"));
    let in_turns = turns
        .filter(|l| l.contains(" write ") || l.contains(" sync "))
        .count();
    for i in syncs.into_iter().filter(|&i| i + 1 < in_turns) {
        assert_eq!(ios[i].0, next(ios[i - 1].0), "sync {i}, its turn\n{log}");
        assert_eq!(
            ios[i + 1].0,
            next(ios[i].0),
            "the write after sync {i}\n{log}"
        );
    }
}

#[test]
fn rate_cycle_is_the_window_rate_iops_min_is_judged_over() {
    let d = TestDir::new("rate-cycle");
    let run = |cycle: &str| {
        d.run(&[
            "--name=t",
            "--ioengine=null",
            "--size=1m",
            "--time_based",
            "--runtime=1500ms",
            "--rate_iops_min=1000000000000",
            cycle,
        ])
    };
    // An impossible minimum: judged after 1 s (the default cycle) the job fails; with a
    // 5 s cycle no window ends within the 1.5 s run, so nothing is judged.
    let o = run("--rate_cycle=1000");
    assert_eq!(o.code, Some(1), "{}", o.stderr);
    assert!(o.stderr.contains("min rate"), "{}", o.stderr);
    run("--rate_cycle=5000").ok();
}

#[test]
fn rate_iops_min_is_not_judged_while_the_job_thinks() {
    // fio judges rate_min in its I/O loop, never during a think: 5000 I/Os then 1.2 s of
    // thinktime, twice, pass fio's rate_iops_min=100 over 500 ms cycles. (The samples taken
    // on time during a think must not judge it: a cycle without I/O would fail the job.)
    let d = TestDir::new("rate-min-think");
    d.run(&[
        "--name=t",
        "--ioengine=null",
        "--size=64m",
        "--time_based",
        "--runtime=1500ms",
        "--rate_iops_min=100",
        "--rate_cycle=500",
        "--thinktime=1200ms",
        "--thinktime_blocks=5000",
    ])
    .ok();
}

#[test]
fn regression_ramp_time_never_ended_on_synchronous_engines() {
    // psync's I/O completes inside queue(), and the ramp's end was only looked for outside
    // that path: the whole run was measured, ramp included (3 s for runtime=2 ramp_time=1).
    let d = TestDir::new("ramp-sync");
    let v = d
        .run(&[
            "--name=t",
            "--ioengine=null",
            "--size=20m",
            "--rate=10m",
            "--ramp_time=1",
            "--output-format=json",
        ])
        .ok()
        .json();
    // fio 3.33: the ramp's 10 MiB count against size; 10 MiB are measured, over 1 s.
    let (bytes, ms) = (
        u64_at(&v, "/jobs/0/read/io_bytes"),
        u64_at(&v, "/jobs/0/read/runtime"),
    );
    assert!(bytes <= 11 << 20, "{bytes}");
    assert!(ms < 1800, "{ms}");
}

#[test]
fn idle_prof_reports_how_idle_each_cpu_was_as_fio_does() {
    let d = TestDir::new("idle-prof");
    let job = ["--name=t", "--ioengine=null", "--size=16m"];
    let run = |mode: &str, more: &[&str]| {
        let m = format!("--idle-prof={mode}");
        let mut a = vec![m.as_str()];
        a.extend_from_slice(&job);
        a.extend_from_slice(more);
        d.run(&a).ok()
    };
    let o = run("percpu", &[]);
    let cpus = std::thread::available_parallelism().unwrap().get();
    let at = o.stdout.find("\nCPU idleness:\n").expect(&o.stdout);
    let tail = &o.stdout[at..];
    assert!(tail.contains("\n  system: "), "{tail}");
    let percpu = tail.lines().find(|l| l.starts_with("  percpu: ")).unwrap();
    assert_eq!(percpu.matches('%').count(), cpus, "{percpu}");
    assert!(tail.contains("\n  unit work: mean="), "{tail}");
    let v = run("system", &["--output-format=json"]).json();
    let idle = &v["cpu_idleness"];
    let system = idle["system"].as_f64().unwrap();
    assert!((0.0..=100.0).contains(&system), "{idle}");
    assert!(idle["unit_mean"].as_f64().unwrap() > 0.0, "{idle}");
    assert!(
        idle.get("cpu-0").is_none(),
        "percpu figures only with percpu: {idle}"
    );
    let o = d.run(&["--idle-prof=calibrate"]).ok();
    assert!(
        o.stdout.starts_with("CPU idleness:\n  unit work: mean="),
        "{}",
        o.stdout
    );
    let o = d.run(&[
        "--idle-prof=cpu",
        "--name=t",
        "--ioengine=null",
        "--size=1m",
    ]);
    assert!(o.fails().stderr.contains("idle-prof"));
}

#[test]
fn a_window_closing_at_the_runtimes_end_is_sampled_while_the_job_thinks_on() {
    // fio samples bandwidth and IOPS from a helper thread while the job runs: a job that
    // thinks past its runtime still runs when its last window closes, and stops when the
    // think ends, issuing nothing more (fio 3.33: 4 samples of 4 I/Os, 1.2 s; iolab sampled
    // only at completions and issued a 5th I/O after the last think).
    // The other side, the job that stops at once, is the unit test of job/think.rs.
    let d = TestDir::new("bw-samples");
    let samples = |more: &[&str]| {
        let mut a = vec![
            "--name=t",
            "--ioengine=psync",
            "--filename=f",
            "--size=1m",
            "--rw=randread",
            "--time_based",
            "--runtime=1",
            "--bwavgtime=250",
            "--iopsavgtime=250",
            "--output-format=json",
        ];
        a.extend_from_slice(more);
        let v = d.run(&a).ok().json();
        let n = u64_at(&v, "/jobs/0/read/bw_samples");
        assert_eq!(n, u64_at(&v, "/jobs/0/read/iops_samples"));
        (n, u64_at(&v, "/jobs/0/read/total_ios"))
    };
    assert_eq!(
        samples(&["--thinktime=300ms", "--thinktime_blocks=1"]),
        (4, 4)
    );
}

#[test]
fn rate_ignore_thinktime_does_not_catch_up_after_a_think() {
    let d = TestDir::new("rate-think");
    let ios = |ignore: &str| {
        let v = d
            .run(&[
                "--name=t",
                "--ioengine=null",
                "--size=1m",
                "--rw=randread",
                "--time_based",
                "--runtime=1",
                "--rate_iops=1000",
                "--thinktime=100ms",
                "--thinktime_blocks=50",
                ignore,
                "--output-format=json",
            ])
            .ok()
            .json();
        u64_at(&v, "/jobs/0/read/total_ios")
    };
    // 50 I/Os at 1000/s take 50 ms, then 100 ms of thought. Catching up (fio's default), the
    // next 50 are overdue and go at once: 50 per 100 ms. Going on from now: 50 per 150 ms.
    // fio 3.33 gives 500 and 350, iolab 501 and 351. A late wake-up from each think (a
    // loaded machine) lowers both, the first more, but it stays ahead: 50 per (100 ms + late)
    // against 50 per (150 ms + late).
    let (caught_up, went_on) = (
        ios("--rate_ignore_thinktime=0"),
        ios("--rate_ignore_thinktime=1"),
    );
    assert!(went_on > 0 && went_on < caught_up, "{caught_up} {went_on}");
}
