//! Deep queues and huge I/Os cost what fio's cost (issue 33): a job's buffers are one region
//! whose pages are memory only once touched, so a job that touches few of them (reads on the
//! null engine) holds far less than iodepth x bs, and a replay whose log only reads fills no
//! buffer. Peak memory is read from `/usr/bin/time -f %M`; the tests skip without it.
// In a test a failed unwrap is a failed test with its location; clippy's allow-unwrap-in-tests
// covers #[test] functions only, not the helpers they share.
#![allow(clippy::unwrap_used)]

use std::path::Path;
use std::process::Command;

use crate::run::TestDir;

const BIN: &str = env!("CARGO_BIN_EXE_iolab");
const TIME: &str = "/usr/bin/time";

/// What `iolab run ARGS` printed and its peak resident memory in bytes; `None` (skipped) when
/// /usr/bin/time cannot measure it.
fn peak(case: &str, dir: &Path, args: &[&str]) -> Option<(String, u64)> {
    let report = dir.join("peak.txt");
    let out = match Command::new(TIME)
        .arg("-f")
        .arg("%M")
        .arg("-o")
        .arg(&report)
        .arg(BIN)
        .arg("run")
        .args(args)
        .current_dir(dir)
        .output()
    {
        Ok(o) => o,
        Err(e) => {
            iolab_testkit::skip(case, &format!("{TIME} not runnable: {e}"));
            return None;
        }
    };
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{args:?}: {stderr}\n{stdout}");
    let text = std::fs::read_to_string(&report).unwrap_or_default();
    // GNU time's last line is the figure (a line before it may report a signal).
    let Some(kib) = text
        .lines()
        .last()
        .and_then(|l| l.trim().parse::<u64>().ok())
    else {
        iolab_testkit::skip(case, &format!("{TIME} -f %M gave {text:?}"));
        return None;
    };
    Some((stdout, kib * 1024))
}

/// The job's `io=` figure from the report's status line, in bytes as printed (KiB/MiB/GiB).
fn io_bytes(stdout: &str) -> u64 {
    let line = stdout.lines().find(|l| l.contains("io=")).unwrap();
    let v = line.split("io=").nth(1).unwrap().split(' ').next().unwrap();
    let digits: String = v.chars().take_while(|c| c.is_ascii_digit()).collect();
    let n: u64 = digits.parse().unwrap();
    match &v[digits.len()..] {
        "B" => n,
        "KiB" => n << 10,
        "MiB" => n << 20,
        "GiB" => n << 30,
        u => panic!("unit {u} in {line}"),
    }
}

/// Each 4 KiB heap buffer took 8 KiB resident (zeroed and padded to its page alignment), so
/// a read job at iodepth=100000 held 800 MB of buffers it never touched.
#[test]
fn a_deep_queue_of_reads_holds_far_less_than_its_buffers() {
    let d = TestDir::new("deep-queues-reads");
    let (depth, bs) = (100_000u64, 4096u64);
    let args = [
        "--name=j",
        "--ioengine=null",
        "--rw=randread",
        "--size=1m",
        &format!("--bs={bs}"),
        &format!("--iodepth={depth}"),
    ];
    let Some((out, rss)) = peak("deep queue of reads", &d.path, &args) else {
        return;
    };
    assert_eq!(io_bytes(&out), 1 << 20, "{out}");
    let buffers = depth * bs;
    assert!(
        rss < buffers / 4,
        "peak RSS {rss} bytes for {buffers} bytes of untouched buffers"
    );
}

/// A write job touches every buffer it fills, as fio's does: the region is all of it there.
#[test]
fn a_deep_queue_of_writes_still_fills_every_buffer() {
    let d = TestDir::new("deep-queues-writes");
    let (depth, bs) = (20_000u64, 4096u64);
    let args = [
        "--name=j",
        "--ioengine=null",
        "--rw=write",
        "--size=1m",
        &format!("--bs={bs}"),
        &format!("--iodepth={depth}"),
    ];
    let Some((out, rss)) = peak("deep queue of writes", &d.path, &args) else {
        return;
    };
    assert_eq!(io_bytes(&out), 1 << 20, "{out}");
    assert!(rss > depth * bs, "peak RSS {rss} bytes: buffers not filled");
}

/// A log of one read of 1 GiB had its buffer of 1 GiB filled as if for a write.
#[test]
fn a_replay_of_only_reads_fills_no_buffer() {
    let d = TestDir::new("deep-queues-replay");
    let len: u64 = 1 << 30;
    let file = d.path.join("g");
    let file = file.display();
    let log = format!(
        "fio version 2 iolog\n{file} add\n{file} open\n{file} read 0 {len}\n{file} close\n"
    );
    std::fs::write(d.path.join("log"), log).unwrap();
    let args = ["--name=j", "--ioengine=null", "--read_iolog=log"];
    let Some((out, rss)) = peak("replay of reads", &d.path, &args) else {
        return;
    };
    assert_eq!(io_bytes(&out), len, "{out}");
    assert!(rss < len / 4, "peak RSS {rss} bytes for one read of {len}");
}

/// posixaio wrote a zeroed control block (168 bytes) and an empty request for every slot up
/// front: each slot cost over 300 bytes whether or not it was ever used.
#[test]
fn a_request_slot_that_is_never_used_costs_less_than_a_quarter_block() {
    let bs = 512u64;
    let (low, high) = (50_000u64, 250_000u64);
    for engine in ["null", "posixaio"] {
        let d = TestDir::new(&format!("deep-queues-slots-{engine}"));
        let mut rss = Vec::new();
        for depth in [low, high] {
            let args = [
                "--name=j",
                &format!("--ioengine={engine}"),
                "--filename=f",
                "--rw=read",
                "--size=1m",
                &format!("--bs={bs}"),
                &format!("--iodepth={depth}"),
            ];
            let Some((out, peak)) = peak(engine, &d.path, &args) else {
                return;
            };
            assert_eq!(io_bytes(&out), 1 << 20, "{out}");
            rss.push(peak);
        }
        let per_slot = rss[1].saturating_sub(rss[0]) / (high - low);
        assert!(
            per_slot < bs / 4,
            "{engine}: {per_slot} bytes a slot (peak RSS {rss:?} at iodepth {low} and {high})"
        );
    }
}
