//! The I/O sequence and its counts against fio 3.33's (issue 29): each test runs a small job
//! with `write_iolog` and JSON output, asserts the behaviour alone, then, where fio is
//! installed, runs fio on the same job in a directory of its own and compares the iologs
//! (timestamps stripped) and the counts.
#![allow(clippy::unwrap_used)]

use serde_json::Value;

use crate::fidelity::fio;
use crate::run::{u64_at, TestDir};

/// A job's iolog, without the version line and each line's timestamp, and its JSON.
struct Ran {
    log: Vec<String>,
    json: Value,
}

impl Ran {
    /// The `read`, `write`, `trim` and sync lines alone.
    fn ios(&self) -> Vec<&str> {
        let io = |l: &&String| {
            let what = l.split(' ').nth(1).unwrap_or("");
            !matches!(what, "add" | "open" | "close")
        };
        self.log.iter().filter(io).map(|l| l.as_str()).collect()
    }

    /// `/jobs/0` + `ptr` of the JSON.
    fn at(&self, ptr: &str) -> u64 {
        u64_at(&self.json, &format!("/jobs/0{ptr}"))
    }

    /// What the comparison with fio looks at: the log, and per direction io_bytes and
    /// total_ios, with sync's total_ios.
    fn counts(&self) -> Vec<u64> {
        let mut v = Vec::new();
        for d in ["read", "write", "trim"] {
            v.push(self.at(&format!("/{d}/io_bytes")));
            v.push(self.at(&format!("/{d}/total_ios")));
        }
        v.push(self.at("/sync/total_ios"));
        v
    }
}

fn read_back(dir: &TestDir) -> Ran {
    let text = std::fs::read_to_string(dir.path.join("io.log")).unwrap();
    let log = text
        .lines()
        .skip(1)
        .map(|l| l.split_once(' ').map_or(l, |(_, rest)| rest).to_string())
        .collect();
    let json = std::fs::read_to_string(dir.path.join("o.json")).unwrap();
    Ran {
        log,
        json: serde_json::from_str(&json).unwrap(),
    }
}

fn with_logs<'a>(args: &[&'a str]) -> Vec<&'a str> {
    let mut all = vec![
        "--name=x",
        "--write_iolog=io.log",
        "--output-format=json",
        "--output=o.json",
    ];
    all.extend_from_slice(args);
    all
}

/// `args` run by iolab in a directory of its own.
fn iolab(case: &str, args: &[&str]) -> Ran {
    let d = TestDir::new(&format!("seq-{case}"));
    d.run(&with_logs(args)).ok();
    read_back(&d)
}

/// `args` run by fio 3.33 in a directory of its own; `None` where fio is not installed.
fn fio_ran(case: &str, args: &[&str]) -> Option<Ran> {
    let d = TestDir::new(&format!("seq-{case}-fio"));
    let o = fio(case, &d, &with_logs(args))?;
    assert!(o.status.success(), "fio: {o:?}");
    Some(read_back(&d))
}

/// iolab's log and counts are fio's, where fio is installed.
#[track_caller]
fn same_as_fio(case: &str, args: &[&str], ours: &Ran) {
    let Some(theirs) = fio_ran(case, args) else {
        return;
    };
    assert_eq!(ours.log, theirs.log, "{args:?}");
    assert_eq!(ours.counts(), theirs.counts(), "{args:?}");
}

#[test]
fn a_short_last_block_is_not_written_like_fio() {
    // The etcd disk check: 2 MiB in blocks of 2300 bytes are 911 whole blocks, each with its
    // fdatasync; iolab wrote a 912th of 1852 bytes with no sync after it.
    let args = [
        "--rw=write",
        "--ioengine=sync",
        "--fdatasync=1",
        "--size=2m",
        "--bs=2300",
    ];
    let r = iolab("etcd", &args);
    assert_eq!(r.at("/write/total_ios"), 911);
    assert_eq!(r.at("/write/io_bytes"), 911 * 2300);
    let ios = r.ios();
    assert_eq!(ios.len(), 2 * 911);
    assert!(ios
        .iter()
        .all(|l| l.ends_with(" 2300") || l.contains("datasync")));
    assert!(ios.last().unwrap().contains("datasync"), "{:?}", ios.last());
    same_as_fio("etcd", &args, &r);
    // Nor is a block cut to the budget: io_size=1000k in 3 KiB blocks ends with a whole
    // block past it, where the file has room.
    let args = [
        "--rw=write",
        "--ioengine=psync",
        "--size=1m",
        "--io_size=1000k",
        "--bs=3k",
    ];
    let r = iolab("io-size", &args);
    assert_eq!(r.at("/write/total_ios"), 334);
    assert_eq!(r.at("/write/io_bytes"), 334 * 3072);
    same_as_fio("io-size", &args, &r);
}

#[test]
fn end_syncs_and_fdatasyncs_are_not_counted_in_sync_total_ios_like_fio() {
    // fio's sync total_ios counts the fsyncs issued among the writes; fdatasyncs count in
    // the latency alone, end_fsync's and fsync_on_close's nowhere.
    for (case, opt, total, n) in [
        ("end-fsync", "--end_fsync=1", 0, 0),
        ("on-close", "--fsync_on_close=1", 0, 0),
        ("fdatasync", "--fdatasync=4", 0, 3),
        ("both", "--fsync=2 --fdatasync=3", 7, 10),
    ] {
        let mut args = vec!["--rw=write", "--ioengine=psync", "--size=64k", "--bs=4k"];
        args.extend(opt.split(' '));
        let r = iolab(case, &args);
        assert_eq!(r.at("/sync/total_ios"), total, "{opt}");
        assert_eq!(r.at("/sync/lat_ns/N"), n, "{opt}");
        assert_eq!(r.at("/write/total_ios"), 16, "{opt}");
        same_as_fio(case, &args, &r);
    }
    // A read after the writes that made an fsync due is followed by another, as in fio.
    let args = [
        "--rw=randrw",
        "--ioengine=psync",
        "--size=64k",
        "--bs=4k",
        "--fsync=2",
    ];
    let r = iolab("randrw-fsync", &args);
    same_as_fio("randrw-fsync", &args, &r);
}

#[test]
fn each_loop_ends_with_its_end_fsync_and_reopens_the_files_like_fio() {
    // fio syncs at the end of each loop, after closing the file it found done, then opens it
    // again; iolab synced once, at the end.
    let args = [
        "--rw=write",
        "--ioengine=psync",
        "--size=8k",
        "--bs=4k",
        "--loops=3",
        "--end_fsync=1",
    ];
    let r = iolab("loops", &args);
    let f = "x.0.0";
    let pass = [format!("{f} write 0 4096"), format!("{f} write 4096 4096")];
    let end = [
        format!("{f} close"),
        format!("{f} open"),
        format!("{f} sync 4096 0"),
        format!("{f} close"),
    ];
    let mut want = vec![format!("{f} add"), format!("{f} open")];
    for i in 0..3 {
        want.extend(pass.clone());
        match i {
            2 => want.extend([format!("{f} sync 4096 0"), format!("{f} close")]),
            _ => {
                want.extend(end.clone());
                want.push(format!("{f} open"));
            }
        }
    }
    assert_eq!(r.log, want);
    assert_eq!(r.at("/sync/total_ios"), 0);
    same_as_fio("loops", &args, &r);
    // A queueing engine's pass ends at its bytes, the file still open: synced, then closed.
    let mut args = args.to_vec();
    args[1] = "--ioengine=libaio";
    let r = iolab("loops-aio", &args);
    assert_eq!(
        &r.log[4..7],
        [
            format!("{f} sync 4096 0"),
            format!("{f} close"),
            format!("{f} open")
        ]
    );
    same_as_fio("loops-aio", &args, &r);
}

#[test]
fn rw_randread_n_takes_a_new_random_offset_every_n_ios_like_fio() {
    // fio starts with a random offset, then N-1 I/Os that follow it; iolab started with N
    // from the start of the file.
    let args = [
        "--rw=randread:2",
        "--ioengine=psync",
        "--size=256k",
        "--bs=4k",
    ];
    let r = iolab("randread2", &args);
    let offsets: Vec<u64> = r
        .ios()
        .iter()
        .map(|l| l.split(' ').nth(2).unwrap().parse().unwrap())
        .collect();
    assert_eq!(offsets.len(), 64);
    // (Past the end of the file, the one after a random I/O is random too.)
    for pair in offsets.chunks(2).filter(|p| p[0] + 2 * 4096 <= 256 << 10) {
        assert_eq!(pair[1], pair[0] + 4096, "{offsets:?}");
    }
    same_as_fio("randread2", &args, &r);
}

#[test]
fn io_size_beyond_the_loops_makes_more_passes_like_fio() {
    // loops=2 of 64 KiB with io_size=160k: fio makes the two loops, then a third pass while
    // less than io_size was done (48 reads); iolab read io_size × loops (80).
    let args = [
        "--rw=read",
        "--ioengine=psync",
        "--size=64k",
        "--bs=4k",
        "--io_size=160k",
        "--loops=2",
    ];
    let r = iolab("io-size-loops", &args);
    assert_eq!(r.at("/read/total_ios"), 48);
    assert_eq!(r.log.iter().filter(|l| l.ends_with(" close")).count(), 3);
    same_as_fio("io-size-loops", &args, &r);
    // Random: the first pass reads the whole file (the budget is io_size × loops), the
    // second the rest of the budget.
    let args = [
        "--rw=randread",
        "--ioengine=psync",
        "--size=256k",
        "--bs=4k",
        "--io_size=128k",
        "--loops=3",
    ];
    let r = iolab("io-size-rand", &args);
    assert_eq!(r.at("/read/total_ios"), 96);
    let first: Vec<&String> = r.log.iter().skip(2).take(64).collect();
    let mut blocks: Vec<&str> = first.iter().map(|l| l.split(' ').nth(2).unwrap()).collect();
    blocks.sort_unstable();
    blocks.dedup();
    assert_eq!(blocks.len(), 64, "the first pass reads each block once");
    same_as_fio("io-size-rand", &args, &r);
}

#[test]
fn sequential_file_service_stays_on_a_file_until_it_is_done_like_fio() {
    // file_service_type=sequential with a random mix: fio moves to the next file when the
    // file's random map is full, not after its size in bytes.
    let args = [
        "--rw=randrw",
        "--ioengine=psync",
        "--size=256k",
        "--bs=4k",
        "--nrfiles=3",
        "--file_service_type=sequential",
    ];
    let r = iolab("fst-seq", &args);
    let files: Vec<&str> = r
        .ios()
        .iter()
        .map(|l| l.split(' ').next().unwrap())
        .collect();
    assert!(files.windows(2).all(|w| w[0] <= w[1]), "{files:?}");
    if let Some(theirs) = fio_ran("fst-seq", &args) {
        assert_eq!(r.ios(), theirs.ios());
        assert_eq!(r.counts(), theirs.counts());
    }
}

#[test]
fn a_range_or_split_of_sizes_aligns_to_the_smallest_like_fio() {
    // fio aligns a drawn size down to the smallest (a remainder when it is no power of two):
    // bsrange=3k-5k gives 3k or 5k blocks, bssplit=3k/50:5k/50 3k blocks alone.
    for (case, opt, sizes) in [
        ("bsrange", "--bsrange=3k-5k", &[3072u64, 5120][..]),
        ("bssplit", "--bssplit=3k/50:5k/50", &[3072][..]),
    ] {
        let args = ["--rw=write", "--ioengine=psync", "--size=64k", opt];
        let r = iolab(case, &args);
        for l in r.ios() {
            let len: u64 = l.rsplit(' ').next().unwrap().parse().unwrap();
            assert!(sizes.contains(&len), "{opt}: {l}");
        }
        same_as_fio(case, &args, &r);
    }
}

#[test]
fn number_ios_counts_for_each_loop_like_fio() {
    // fio stops at number_ios × loops, in one pass if it holds them; iolab stopped at
    // number_ios.
    let args = [
        "--rw=read",
        "--ioengine=psync",
        "--size=1m",
        "--bs=4k",
        "--loops=2",
        "--number_ios=20",
    ];
    let r = iolab("number-ios", &args);
    assert_eq!(r.at("/read/total_ios"), 40);
    same_as_fio("number-ios", &args, &r);
}

#[test]
fn a_random_jobs_sequential_io_past_the_end_ends_the_pass_like_fio() {
    // rw=randread:3 in 3 KiB blocks: a run that reaches the last 1 KiB of the file cannot
    // take its next block there, and fio ends the pass (89 reads a loop), where iolab drew a
    // random block instead and read the whole budget.
    let args = [
        "--rw=randread:3",
        "--ioengine=psync",
        "--size=1m",
        "--bs=3k",
        "--loops=2",
    ];
    let r = iolab("rand3-end", &args);
    assert!(r.at("/read/io_bytes") < 2 << 20);
    assert_eq!(r.log.iter().filter(|l| l.ends_with(" close")).count(), 2);
    same_as_fio("rand3-end", &args, &r);
    // And with per-direction sizes, a read of 16 KiB is drawn among the 16 KiB blocks and
    // looked up in the map of 4 KiB ones (fio's rw_min_bs), whatever the job's direction.
    let args = [
        "--rw=randread",
        "--ioengine=psync",
        "--size=128k",
        "--bs=16k,4k",
    ];
    let r = iolab("rand-16k4k", &args);
    same_as_fio("rand-16k4k", &args, &r);
}

/// Regression (the merge of fio's passes with the other fixes): a job of several files whose
/// pass ended with I/O still asked for (an fsync due, a deeper queue) spun for ever picking
/// a file that was not done. Each job must finish, and its I/O be fio's.
#[test]
fn several_files_with_syncs_or_depth_finish_at_the_pass_end() {
    use std::time::{Duration, Instant};
    let jobs: [&[&str]; 3] = [
        &[
            "--rw=write",
            "--ioengine=psync",
            "--size=32k",
            "--bs=1k",
            "--fsync=2",
        ],
        &[
            "--rw=write",
            "--ioengine=psync",
            "--size=32k",
            "--bs=1k",
            "--fdatasync=2",
        ],
        &[
            "--rw=read",
            "--ioengine=io_uring",
            "--iodepth=4",
            "--size=32k",
            "--bs=4k",
        ],
    ];
    for job in jobs {
        let d = TestDir::new("seq-files-end");
        let mut c = std::process::Command::new(env!("CARGO_BIN_EXE_iolab"));
        c.args(["run", "--name=x", "--nrfiles=3", "--output=/dev/null"])
            .args(job)
            .current_dir(&d.path)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null());
        let mut child = c.spawn().unwrap();
        let t0 = Instant::now();
        let status = loop {
            if let Some(s) = child.try_wait().unwrap() {
                break Some(s);
            }
            if t0.elapsed() > Duration::from_secs(30) {
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        let status = status.unwrap_or_else(|| panic!("{job:?} did not end within 30 s"));
        assert!(status.success(), "{job:?}: {status}");
    }
}
