//! Verify beyond one write pass, end to end: trim_percentage, trim_backlog,
//! trim_backlog_batch and trim_verify_zero as fio 3.33 runs them (the I/O sequences below are
//! fio 3.33's own `--debug=io`), each loop read back when it ends, and a block damaged in the
//! middle of a run caught by verify_backlog. On a block device (a loop device, when root can
//! make one and fio is installed) fio and iolab run the same jobs to the same verdicts.

#![allow(clippy::unwrap_used)]

use std::path::Path;
use std::process::{Command, Output};

use super::verify::{dir, err, fio, iolab, BS};

/// The I/O a run queued, from `--debug=io` on standard output: `offset:ddir` in hex, as
/// fio's lines give them (ddir 0 read, 1 write, 2 trim).
fn queued(o: &Output) -> Vec<String> {
    String::from_utf8_lossy(&o.stdout)
        .lines()
        .filter(|l| l.contains("queue: io_u"))
        .filter_map(|l| {
            let off = l.split("off=0x").nth(1)?.split(',').next()?;
            let ddir = l.split("ddir=").nth(1)?.chars().next()?;
            Some(format!("{off}:{ddir}"))
        })
        .collect()
}

fn ops(s: &str) -> Vec<String> {
    s.split_whitespace().map(str::to_string).collect()
}

const TRIMS: [&str; 5] = [
    "--rw=trimwrite",
    "--verify=crc32c",
    "--trim_percentage=50",
    "--trim_backlog=4",
    "--debug=io",
];

#[test]
fn trim_backlog_trims_the_chosen_blocks_which_then_read_back_as_zeroes() {
    let d = dir("trim-backlog");
    let o = iolab(&d, &[&TRIMS[..], &["--size=32k"]].concat());
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    // fio 3.33, the same job on a loop device with --size=32k: trim then write each block,
    // and when the 4th write completed the blocks chosen so far (0, 1, 3), then 4 and 7 as
    // the batch goes on.
    let fio = ops(
        "0:2 0:1 1000:2 1000:1 2000:2 2000:1 3000:2 3000:1 0:2 1000:2 3000:2 \
         4000:2 4000:1 4000:2 5000:2 5000:1 6000:2 6000:1 7000:2 7000:1 7000:2",
    );
    let got = queued(&o);
    assert_eq!(got[..fio.len()], fio[..], "{got:?}");
    // Every block is read back: the trimmed ones were checked as zeroes (they are holes
    // now), the others against their headers.
    let reads = got.iter().filter(|s| s.ends_with(":0")).count();
    assert_eq!(reads, 8, "{got:?}");
    let data = std::fs::read(d.join("v.data")).unwrap();
    let zero = |b: u64| {
        data[(b * BS) as usize..((b + 1) * BS) as usize]
            .iter()
            .all(|&x| x == 0)
    };
    let zeroed: Vec<u64> = (0..8).filter(|&b| zero(b)).collect();
    assert_eq!(zeroed, [0, 1, 3, 4, 7]);
}

#[test]
fn trim_backlog_batch_bounds_each_round_as_fio_3_33_does() {
    let d = dir("trim-batch");
    let o = iolab(
        &d,
        &[
            "--rw=trimwrite",
            "--verify=crc32c",
            "--trim_percentage=100",
            "--trim_backlog=4",
            "--trim_backlog_batch=2",
            "--trim_verify_zero=0",
            "--debug=io",
            "--size=32k",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    // fio 3.33 (--size=32k): a batch of 2 is 3 trims there; without trim_verify_zero a
    // trimmed block leaves the history, so rounds come after writes 4 and 7, and only the
    // blocks not trimmed (6 and 7) are read back.
    let fio = ops(
        "0:2 0:1 1000:2 1000:1 2000:2 2000:1 3000:2 3000:1 0:2 1000:2 2000:2 \
         4000:2 4000:1 5000:2 5000:1 6000:2 6000:1 3000:2 4000:2 5000:2 7000:2 7000:1 \
         6000:0 7000:0",
    );
    assert_eq!(queued(&o), fio);
}

/// Writes the trim job, puts a byte into block 0 (which the job trimmed) and verifies it.
fn damaged_trimmed_block(name: &str, zero: &str) -> Output {
    let d = dir(name);
    let args = [&TRIMS[..4], &[zero]].concat();
    let o = iolab(&d, &args);
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    let f = d.join("v.data");
    let mut data = std::fs::read(&f).unwrap();
    assert!(
        data[..BS as usize].iter().all(|&x| x == 0),
        "block 0 trimmed"
    );
    data[100] = b'X';
    std::fs::write(&f, &data).unwrap();
    iolab(&d, &[&args[..], &["--verify_only"]].concat())
}

#[test]
fn trim_verify_zero_checks_that_trimmed_blocks_read_as_zeroes() {
    let o = damaged_trimmed_block("trim-zero", "--trim_verify_zero=1");
    let e = err(&o);
    assert_ne!(o.status.code(), Some(0), "{e}");
    // fio 3.33's line for the same damage on a loop device, word for word.
    assert!(
        e.contains("trim: verify failed at file v.data offset 0, length 4096, block offset 100"),
        "{e}"
    );
    assert!(
        e.contains(
            "iolab: verify: trimmed block: file v.data offset 0 length 4096: byte 100 reads 58"
        ),
        "{e}"
    );
    // The job's line and fio's pid line are on standard output, as fio 3.33 prints them.
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("err=84"), "{out}");
    // Without it a trimmed block is no longer verified: the same damage passes.
    let o = damaged_trimmed_block("trim-nozero", "--trim_verify_zero=0");
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
}

#[test]
fn trim_backlog_in_a_job_that_does_not_trim_is_refused_as_fio_aborts_on_it() {
    let d = dir("trim-refused");
    let o = iolab(&d, &[&["--rw=write"][..], &TRIMS[1..4]].concat());
    let e = err(&o);
    assert_eq!(o.status.code(), Some(1), "{e}");
    assert!(e.contains("trim_backlog") && e.contains("trimwrite"), "{e}");
    assert!(!e.contains("panicked"), "{e}");
    // Without verify nothing is remembered, so nothing is trimmed: fio runs it, and so does iolab.
    let o = iolab(
        &d,
        &["--rw=write", "--trim_percentage=50", "--trim_backlog=4"],
    );
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
}

#[test]
fn each_loop_is_read_back_when_it_ends_as_fio_does() {
    let d = dir("loops-each");
    let o = iolab(
        &d,
        &[
            "--rw=write",
            "--size=16k",
            "--verify=crc32c",
            "--loops=3",
            "--debug=io",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    let dirs: String = queued(&o).iter().map(|s| &s[s.len() - 1..]).collect();
    // fio 3.33's sequence for this job: 4 writes, their 4 reads back, three times.
    assert_eq!(dirs, "111100001111000011110000");
}

#[test]
fn a_block_damaged_in_the_first_loop_ends_the_job_at_that_loops_read_back() {
    let d = dir("loops-damage");
    let o = Command::new(env!("CARGO_BIN_EXE_iolab"))
        .args([
            "run",
            "--name=v",
            "--filename=v.data",
            "--bs=4k",
            "--size=16k",
        ])
        .args([
            "--rw=write",
            "--verify=md5",
            "--loops=3",
            "--output-format=json",
        ])
        .env("IOLAB_TEST_VERIFY_FLIP", (2 * BS + 100).to_string())
        .current_dir(&d)
        .output()
        .unwrap();
    let e = err(&o);
    assert_ne!(o.status.code(), Some(0), "{e}");
    assert!(e.contains("IOLAB_TEST_VERIFY_FLIP=8292: test hook"), "{e}");
    assert!(
        e.contains("iolab: verify: corrupt block: file v.data offset 8192 length 4096: md5"),
        "{e}"
    );
    // Found after the first loop: one loop's writes, not three.
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["jobs"][0]["write"]["io_bytes"], 16 * 1024, "{v}");
    assert_eq!(v["jobs"][0]["error"], 84, "{v}");
}

#[test]
fn verify_backlog_reports_a_block_damaged_while_the_job_runs() {
    let d = dir("backlog-damage");
    let o = Command::new(env!("CARGO_BIN_EXE_iolab"))
        .args([
            "run",
            "--name=v",
            "--filename=v.data",
            "--bs=4k",
            "--size=64k",
        ])
        .args(["--rw=write", "--verify=crc32c", "--verify_backlog=4"])
        .args(["--output-format=json"])
        .env("IOLAB_TEST_VERIFY_FLIP", (2 * BS + 100).to_string())
        .current_dir(&d)
        .output()
        .unwrap();
    let e = err(&o);
    assert_eq!(o.status.code(), Some(1), "{e}");
    assert!(
        e.contains("crc32c: verify failed at file v.data offset 8192, length 4096"),
        "{e}"
    );
    assert!(
        e.contains(
            "iolab: verify: corrupt block: file v.data offset 8192 length 4096: crc32c expected"
        ),
        "{e}"
    );
    // The backlog read blocks 0-2 back after the 4th write and stopped at block 2: the job
    // wrote 4 of its 16 blocks, as fio stops at the first failed verify.
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let j = &v["jobs"][0];
    assert_eq!(j["write"]["io_bytes"], 4 * BS, "{v}");
    assert_eq!(j["read"]["io_bytes"], 3 * BS, "{v}");
    assert_eq!(j["error"], 84, "{v}");
}

/// A loop device over a file in `d`, detached when dropped.
pub(super) struct Loop(pub(super) String);

impl Loop {
    pub(super) fn new(d: &Path) -> Option<Loop> {
        let img = d.join("loop.img");
        std::fs::File::create(&img).ok()?.set_len(8 << 20).ok()?;
        let o = Command::new("losetup")
            .args(["-f", "--show"])
            .arg(&img)
            .output()
            .ok()?;
        let dev = String::from_utf8_lossy(&o.stdout).trim().to_string();
        (o.status.success() && dev.starts_with("/dev/loop")).then_some(Loop(dev))
    }

    /// A loop device for a comparison with fio (which trims only block devices); None, with
    /// the skip said for `what`, where fio or a loop device is missing.
    pub(super) fn with_fio(d: &Path, what: &str) -> Option<Loop> {
        if fio(d, &["--version"]).is_none() {
            iolab_testkit::skip(what, &"fio is not installed");
            return None;
        }
        let dev = Loop::new(d);
        if dev.is_none() {
            iolab_testkit::skip(what, &"no loop device (needs root and losetup)");
        }
        dev
    }
}

impl Drop for Loop {
    fn drop(&mut self) {
        let _ = Command::new("losetup").args(["-d", &self.0]).status();
    }
}

#[test]
fn fio_and_iolab_reach_the_same_verdicts_on_trimmed_blocks_of_a_block_device() {
    let d = dir("trim-fio");
    // fio 3.33 trims with BLKDISCARD, which a regular file refuses: a block device it is.
    let Some(dev) = Loop::with_fio(&d, "trims against fio") else {
        return;
    };
    let file = format!("--filename={}", dev.0);
    let job = [&TRIMS[..4], &[file.as_str(), "--size=128k"]].concat();
    let run = |tool: &str, extra: &[&str]| {
        let mut c = Command::new(if tool == "fio" {
            "fio"
        } else {
            env!("CARGO_BIN_EXE_iolab")
        });
        if tool == "iolab" {
            c.arg("run");
        }
        c.args(["--name=v", "--bs=4k"]).args(&job).args(extra);
        c.current_dir(&d).output().unwrap()
    };
    for tool in ["fio", "iolab"] {
        let o = run(tool, &[]);
        assert!(
            String::from_utf8_lossy(&o.stdout).contains("err= 0"),
            "{tool}: {}",
            err(&o)
        );
        // Block 0 was trimmed: a byte put there is found by both.
        let f = std::fs::OpenOptions::new()
            .write(true)
            .open(&dev.0)
            .unwrap();
        std::os::unix::fs::FileExt::write_all_at(&f, b"X", 100).unwrap();
        f.sync_all().unwrap();
        drop(f);
        let o = run(tool, &["--verify_only"]);
        let e = format!("{}{}", err(&o), String::from_utf8_lossy(&o.stdout));
        let want = format!(
            "trim: verify failed at file {} offset 0, length 4096, block offset 100",
            dev.0
        );
        assert!(e.contains(&want), "{tool}: {e}");
        assert!(e.contains("err=84"), "{tool}: {e}");
    }
}

#[test]
fn fio_and_iolab_read_back_each_loop_alike() {
    let d = dir("loops-fio");
    if fio(&d, &["--version"]).is_none() {
        iolab_testkit::skip("loops against fio", &"fio is not installed");
        return;
    }
    let dirs = |o: &Output| -> String { queued(o).iter().map(|s| &s[s.len() - 1..]).collect() };
    for job in [
        &["--rw=write", "--loops=3"][..],
        &["--rw=randwrite", "--loops=2"],
        &["--rw=write", "--loops=2", "--verify_backlog=3"],
    ] {
        let args = [job, &["--size=32k", "--verify=crc32c", "--debug=io"]].concat();
        let _ = std::fs::remove_file(d.join("v.data"));
        let ours = iolab(&d, &args);
        let _ = std::fs::remove_file(d.join("v.data"));
        let theirs = fio(&d, &args).unwrap();
        assert_eq!(ours.status.code(), Some(0), "{}", err(&ours));
        assert!(dirs(&ours).contains("10"), "{job:?}: {}", dirs(&ours));
        assert_eq!(dirs(&ours), dirs(&theirs), "{job:?}");
    }
}

/// Regression: on a synchronous engine (psync) the read back ran to its last block after
/// Ctrl-C, as each read completed inside the loop that issued it, which never looked at the
/// stop. The signal is sent once the read back has visibly begun (its first read on
/// standard output, `--debug=io`); of 32768 blocks only a few may be read after it.
#[test]
fn sigint_ends_the_read_back_of_a_synchronous_engine() {
    use std::io::BufRead;
    let d = dir("stop-readback");
    let job = [
        "--size=128m",
        "--rw=write",
        "--verify=crc32c",
        "--ioengine=psync",
    ];
    let o = iolab(&d, &[&job[..], &["--do_verify=0"]].concat());
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    let mut child = Command::new(env!("CARGO_BIN_EXE_iolab"))
        .args(["run", "--name=v", "--filename=v.data", "--bs=4k"])
        .args(job)
        .args(["--verify_only", "--debug=io"])
        .current_dir(&d)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = std::io::BufReader::new(child.stdout.take().unwrap()).lines();
    let is_read = |l: &str| l.contains("queue: io_u") && l.contains("ddir=0");
    let mut reads = 0usize;
    for l in lines.by_ref() {
        if is_read(&l.unwrap()) {
            reads += 1;
            break;
        }
    }
    assert_eq!(reads, 1, "the read back never began");
    let sent = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(sent.success());
    reads += lines.map_while(Result::ok).filter(|l| is_read(l)).count();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130));
    assert!(
        reads < 32768 / 2,
        "{reads} of 32768 blocks read back after SIGINT"
    );
    let _ = std::fs::remove_file(d.join("v.data"));
}
